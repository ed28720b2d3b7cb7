// Archives for the package registry tests, made in the test (no client needed): gzip'd tars and
// zips of given members, and the check that a refused upload kept nothing.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { TestServer } from './server.js';

type Members = Record<string, string | Buffer>;

/** A tar of `members` (name → contents), gzip'd. */
export async function tgz(members: Members): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(members)) pack.entry({ name }, Buffer.from(content));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack.pipe(zlib.createGzip())) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A zip of `members` (name → contents), stored uncompressed. */
export function zip(members: Members): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(members)) {
    const data = Buffer.from(content);
    const nameBytes = Buffer.from(name);
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(nameBytes.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    central.push(entry, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(members).length, 8);
  end.writeUInt16LE(Object.keys(members).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/** The packages quota usage of the user whose token this is. */
export async function packagesUsed(s: TestServer, token: string): Promise<number> {
  const r = await s.api<{ used: { size: { assets: { packages: { all: number } } } } }>('GET', '/user/quota', {
    token,
  });
  assert.equal(r.status, 200, r.text);
  return r.body.used.size.assets.packages.all;
}

/**
 * A refused upload kept nothing: no blob row or stored blob of any of `bodies`, no temporary file
 * or folder of the packages store, and the quota usage as it was.
 */
export async function assertNothingKept(
  s: TestServer,
  bodies: Buffer[],
  token: string,
  usedBefore: number,
): Promise<void> {
  for (const body of bodies) {
    const sha = crypto.createHash('sha256').update(body).digest('hex');
    const rows = await s.ctx.db
      .selectFrom('package_blob')
      .select('id')
      .where('hash_sha256', '=', sha)
      .execute();
    assert.deepEqual(rows, [], 'no blob row');
    const key = `${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`;
    assert.equal(await s.ctx.storage.packages.stat(key), undefined, 'no stored blob');
  }
  // Local or S3: no temporary blob; on local disk, no temporary file or folder either.
  const temporary: string[] = [];
  for await (const blob of s.ctx.storage.packages.list('tmp/')) temporary.push(blob.key);
  assert.deepEqual(temporary, [], 'no temporary blob');
  for (const dir of ['tmp', '.tmp']) {
    const p = path.join(s.dataDir, 'packages', dir);
    assert.deepEqual(fs.existsSync(p) ? fs.readdirSync(p) : [], [], `nothing left in packages/${dir}`);
  }
  assert.equal(await packagesUsed(s, token), usedBefore, 'quota usage unchanged');
}
