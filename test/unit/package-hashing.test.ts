// The digests of package uploads (src/packages/hashing.ts): computed in one pass, on the main
// thread for small files and by worker threads for large ones, equal to Node's own; each digest
// computed by exactly one worker whatever the number of cores; the size limit enforced as the
// bytes pass.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hashGroups, hashingStream, stopHashWorkers } from '../../src/packages/hashing.js';

const expected = (b: Buffer) =>
  Object.fromEntries(
    ['md5', 'sha1', 'sha256', 'sha512'].map((a) => [a, crypto.createHash(a).update(b).digest('hex')]),
  );

/** Streams `data` in chunks of odd sizes through a hashing stream; its digests and size. */
async function hash(data: Buffer, limit = -1, announced: number | undefined = data.length) {
  const hasher = hashingStream(limit, announced);
  const chunks = function* () {
    for (let i = 0; i < data.length; i += 65_537) yield data.subarray(i, i + 65_537);
  };
  await pipeline(Readable.from(chunks()), hasher, new Writable({ write: (_c, _e, done) => done() }));
  return { digests: { ...hasher.digests() }, size: hasher.size };
}

describe('package upload hashing', () => {
  after(() => stopHashWorkers());

  it('computes each digest in exactly one worker, whatever the cores', () => {
    for (const cores of [1, 2, 3, 4, 16]) {
      assert.deepEqual(hashGroups(cores).flat().sort(), ['md5', 'sha1', 'sha256', 'sha512'], String(cores));
    }
    assert.equal(hashGroups(2).length, 2);
    assert.equal(hashGroups(8).length, 4);
  });

  it("gives Node's digests for small files (main thread), large ones (workers) and unannounced ones", async () => {
    for (const [size, announced] of [
      [1000, 1000],
      [9 << 20, 9 << 20],
      [(3 << 20) + 7, undefined],
      [0, 0],
    ] as const) {
      const data = crypto.randomBytes(size);
      const r = await hash(data, -1, announced);
      assert.equal(r.size, size);
      assert.deepEqual(r.digests, expected(data), `${size} bytes`);
    }
  });

  it('refuses more bytes than the limit, also from workers, and hashes on afterwards', async () => {
    await assert.rejects(hash(crypto.randomBytes(6 << 20), 5 << 20, undefined), /larger than the limit/);
    await assert.rejects(hash(crypto.randomBytes(2000), 1000), /larger than the limit/);
    const data = crypto.randomBytes(5 << 20);
    assert.deepEqual((await hash(data)).digests, expected(data));
  });
});
