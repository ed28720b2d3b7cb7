// Times in words, as the web pages show them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ago } from '../../src/web/components.js';

describe('ago', () => {
  const now = Date.UTC(2026, 10, 28, 12, 0, 0) / 1000;
  it('says how long ago, in the largest whole unit', () => {
    assert.equal(ago(now - 10, now), 'just now');
    assert.equal(ago(now + 30, now), 'just now', 'a clock a little ahead is not the future');
    assert.equal(ago(now - 60, now), '1 minute ago');
    assert.equal(ago(now - 5 * 60, now), '5 minutes ago');
    assert.equal(ago(now - 3600, now), '1 hour ago');
    assert.equal(ago(now - 5 * 3600, now), '5 hours ago');
    assert.equal(ago(now - 30 * 3600, now), 'yesterday');
    assert.equal(ago(now - 3 * 86400, now), '3 days ago');
  });
  it('gives the date once it is a month old', () => {
    assert.equal(ago(now - 40 * 86400, now), 'on 2026-10-19');
  });
});
