import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isoTime } from '../../src/http/format.js';

describe('isoTime', () => {
  it('matches Date for the epoch, leap days, centuries and random times', () => {
    const samples = [0, 59, 86399, 86400, 951782400, 951868800, 1709164800, 4102444800, 253402300799];
    for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.random() * 253402300799));
    for (const unix of samples) {
      assert.equal(isoTime(unix), new Date(unix * 1000).toISOString().slice(0, 19) + 'Z', String(unix));
    }
  });
});
