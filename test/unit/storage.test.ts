// The local-disk blob store: whole writes, composed blobs (parts moved, not copied) read whole
// and by byte range, and keys that could step outside its root.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { LocalBlobStore, checkKey } from '../../src/storage/storage.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-storage-'));
const store = new LocalBlobStore(root);
after(() => fs.rmSync(root, { recursive: true, force: true }));

const put = (key: string, content: string) => store.put(key, Readable.from([Buffer.from(content)]));

describe('LocalBlobStore', () => {
  it('stores a blob whole and reads it back, whole and by range', async () => {
    assert.deepEqual(await put('a/one', 'hello world'), { size: 11 });
    assert.equal(await text(await store.open('a/one')), 'hello world');
    assert.equal(await text(await store.open('a/one', { start: 6, end: 9 })), 'worl');
    assert.deepEqual(await store.stat('a/one'), { size: 11 });
  });

  it('composes a blob from parts without copying them, a part repeated, and reads any range', async () => {
    await put('blocks/p1', 'abc');
    await put('blocks/p2', '');
    await put('blocks/p3', 'defg');
    const before = fs.statSync(path.join(root, 'blocks/p3')).ino;
    assert.deepEqual(await store.compose('blobs/c', ['blocks/p1', 'blocks/p2', 'blocks/p3', 'blocks/p1']), {
      size: 10,
    });
    for (const p of ['p1', 'p2', 'p3'])
      assert.equal(await store.stat(`blocks/${p}`), undefined, `${p} moved`);
    const inodes = fs
      .readdirSync(path.join(root, '.parts/blobs/c'))
      .map((n) => fs.statSync(path.join(root, '.parts/blobs/c', n)).ino);
    assert.ok(inodes.includes(before), 'the part file itself was moved');
    assert.equal(await text(await store.open('blobs/c')), 'abcdefgabc');
    assert.deepEqual(await store.stat('blobs/c'), { size: 10 });
    const whole = 'abcdefgabc';
    for (let start = 0; start < 10; start++) {
      for (let end = start; end < 10; end++) {
        assert.equal(
          await text(await store.open('blobs/c', { start, end })),
          whole.slice(start, end + 1),
          `${start}-${end}`,
        );
      }
    }
    assert.equal(await text(await store.open('blobs/c', { start: 4 })), 'efgabc');
    await store.delete('blobs/c');
    assert.equal(await store.stat('blobs/c'), undefined);
    await assert.rejects(store.open('blobs/c'), /does not exist/);
  });

  it('fails a composition naming a missing part and leaves nothing behind', async () => {
    await put('blocks/q1', 'x');
    await assert.rejects(store.compose('blobs/d', ['blocks/q1', 'blocks/missing']));
    assert.equal(await store.stat('blobs/d'), undefined);
    assert.deepEqual(fs.readdirSync(path.join(root, '.tmp')), []);
  });

  it('refuses keys that leave the root or name its own files', () => {
    for (const bad of ['../x', 'a/../../x', '/abs', 'a//b', '.parts/x', 'a/.tmp', '', 'a\\b']) {
      assert.throws(() => checkKey(bad), /invalid storage key/, bad);
    }
    assert.doesNotThrow(() => checkKey('blobs/12-abc.zip'));
  });
});
