// The response encoding chosen from a client's Accept-Encoding header.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseEncoding } from '../../src/http/compression.js';

describe('chooseEncoding', () => {
  it('prefers brotli, then gzip, among what the client accepts', () => {
    assert.equal(chooseEncoding('gzip, deflate, br'), 'br');
    assert.equal(chooseEncoding('gzip, deflate'), 'gzip');
    assert.equal(chooseEncoding('GZIP'), 'gzip');
    assert.equal(chooseEncoding('br;q=0.5, gzip;q=1'), 'br');
  });
  it('leaves the body alone when the client names neither or refuses them', () => {
    assert.equal(chooseEncoding(undefined), undefined);
    assert.equal(chooseEncoding(''), undefined);
    assert.equal(chooseEncoding('identity'), undefined);
    assert.equal(chooseEncoding('deflate, zstd'), undefined);
    assert.equal(chooseEncoding('br;q=0, gzip;q=0'), undefined);
    assert.equal(chooseEncoding('br;q=0, gzip'), 'gzip');
  });
  it('reads a wildcard as both, unless one is refused by name', () => {
    assert.equal(chooseEncoding('*'), 'br');
    assert.equal(chooseEncoding('br;q=0, *'), 'gzip');
    assert.equal(chooseEncoding('*;q=0'), undefined);
  });
});
