// The artifact hash computed while blocks arrive: used only when the block list is exactly the
// blocks seen, in the order their uploads began, each once; otherwise the commit must read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { UploadHashes } from '../../src/artifacts/upload-hash.js';

const blocks = new Map<string, Buffer>();
const hashes = () => new UploadHashes(async (key) => Readable.from([blocks.get(key)!]));
const sha = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest('hex');
const data = ['a', 'b', 'c', 'd'].map((id) => {
  const b = crypto.randomBytes(1000);
  blocks.set(`k-${id}`, b);
  return { id, b };
});

describe('UploadHashes', () => {
  it('hashes the blocks in the order their uploads began, whatever order they finish in', async () => {
    const h = hashes();
    for (const d of data) h.begin(1, d.id);
    for (const i of [2, 0, 3, 1]) h.stored(1, data[i]!.id, `k-${data[i]!.id}`);
    assert.equal(await h.digest(1, ['a', 'b', 'c', 'd']), sha(...data.map((d) => d.b)));
  });

  it('gives nothing for another list: other order, fewer or more blocks', async () => {
    for (const list of [
      ['b', 'a', 'c', 'd'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c', 'd', 'd'],
    ]) {
      const h = hashes();
      for (const d of data) {
        h.begin(2, d.id);
        h.stored(2, d.id, `k-${d.id}`);
      }
      assert.equal(await h.digest(2, list), undefined, list.join());
    }
  });

  it('gives nothing when a block came twice, failed, or was never stored', async () => {
    const twice = hashes();
    for (const id of ['a', 'b', 'a']) {
      twice.begin(3, id);
      twice.stored(3, id, `k-${id}`);
    }
    assert.equal(await twice.digest(3, ['a', 'b']), undefined);
    const failed = hashes();
    failed.begin(4, 'a');
    failed.stored(4, 'a');
    assert.equal(await failed.digest(4, ['a']), undefined);
    const missing = hashes();
    missing.begin(5, 'a');
    missing.begin(5, 'b');
    missing.stored(5, 'a', 'k-a');
    assert.equal(await missing.digest(5, ['a', 'b']), undefined);
  });

  it('forgets an upload once asked, and after forget()', async () => {
    const h = hashes();
    h.begin(6, 'a');
    h.stored(6, 'a', 'k-a');
    assert.equal(await h.digest(6, ['a']), sha(data[0]!.b));
    assert.equal(await h.digest(6, ['a']), undefined);
    h.begin(7, 'a');
    h.stored(7, 'a', 'k-a');
    h.forget(7);
    assert.equal(await h.digest(7, ['a']), undefined);
  });
});
