// The S3 backend (src/storage/s3.ts) against a real S3 server (s3rver in a child process): the
// BlobStore contract, the fallbacks for what s3rver lacks (UploadPartCopy, ListMultipartUploads,
// AbortMultipartUpload), per-kind configuration as Forgejo resolves it, SERVE_DIRECT redirects to
// presigned URLs, and `anvil admin storage migrate` between the local disk and S3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { MIN_PART, PRESIGN_SECONDS, S3BlobStore, planCompose } from '../../src/storage/s3.js';
import { loadConfig } from '../../src/config/config.js';
import type { S3Settings } from '../../src/config/storage.js';
import { LocalBlobStore } from '../../src/storage/storage.js';
import { migrateStore } from '../../src/storage/migrate.js';
import { runCli, startS3rver, startServer, type S3Server, type TestServer } from '../helpers/server.js';

async function text(r: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

async function bytes(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function keys(store: { list(p?: string): AsyncIterable<{ key: string }> }, prefix = '') {
  const out: string[] = [];
  for await (const b of store.list(prefix)) out.push(b.key);
  return out.sort();
}

function settings(s3: S3Server, over: Partial<S3Settings> = {}): S3Settings {
  return {
    endpoint: s3.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    bucket: 'contract',
    location: 'us-east-1',
    useSsl: false,
    basePath: 'base/',
    bucketLookup: 'auto',
    serveDirect: false,
    ...over,
  };
}

describe('compose plan (S3 part rules)', () => {
  const MiB = 1024 * 1024;
  it('copies parts of 5 MiB and more server-side, groups small ones into streamed parts', () => {
    assert.deepEqual(planCompose([6 * MiB, 6 * MiB, 1 * MiB], true), [
      { kind: 'copy', part: 0 },
      { kind: 'copy', part: 1 },
      { kind: 'copy', part: 2 },
    ]);
    // Small parts first: streamed together until the group reaches 5 MiB, then copying resumes.
    assert.deepEqual(planCompose([2 * MiB, 2 * MiB, 2 * MiB, 8 * MiB, 1], true), [
      { kind: 'stream', parts: [0, 1, 2], size: 6 * MiB },
      { kind: 'copy', part: 3 },
      { kind: 'copy', part: 4 },
    ]);
    // A big part after a group still under 5 MiB joins the group (it could not end a part).
    assert.deepEqual(planCompose([1 * MiB, 8 * MiB, 8 * MiB], true), [
      { kind: 'stream', parts: [0, 1], size: 9 * MiB },
      { kind: 'copy', part: 2 },
    ]);
    // Empty parts are skipped.
    assert.deepEqual(planCompose([0, 6 * MiB, 0], true), [{ kind: 'copy', part: 1 }]);
  });
  it('streams everything when the server has no UploadPartCopy', () => {
    assert.deepEqual(planCompose([6 * MiB, 1, 7 * MiB], false), [
      { kind: 'stream', parts: [0, 1, 2], size: 13 * MiB + 1 },
    ]);
    assert.equal(MIN_PART, 5 * MiB);
  });
  it('streams everything when a part is over 5 GiB (UploadPartCopy limit)', () => {
    const steps = planCompose([6 * 1024 * MiB, 1], true);
    assert.ok(steps.every((s) => s.kind === 'stream'));
  });
});

describe('S3 blob store contract (s3rver)', () => {
  let s3: S3Server;
  let store: S3BlobStore;
  before(async () => {
    s3 = await startS3rver();
    store = new S3BlobStore(settings(s3));
    await store.init(); // creates the missing bucket
    await store.init(); // and is a no-op the second time
  });
  after(async () => {
    store.close();
    await s3.stop();
  });

  it('ping checks the bucket; a missing bucket fails', async () => {
    await store.ping();
    const other = new S3BlobStore(settings(s3, { bucket: 'missing-bucket' }));
    await assert.rejects(other.ping());
    other.close();
  });

  it('put, stat, open with ranges, 404 for an absent blob', async () => {
    const r = await store.put('a/b/one', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    assert.equal(r.size, 11);
    assert.deepEqual(await store.stat('a/b/one'), { size: 11 });
    assert.equal(await store.stat('a/b/none'), undefined);
    assert.equal(await text(await store.open('a/b/one')), 'hello world');
    assert.equal(await text(await store.open('a/b/one', { start: 6 })), 'world');
    assert.equal(await text(await store.open('a/b/one', { start: 2, end: 4 })), 'llo');
    await assert.rejects(store.open('a/b/none'), (e: { kind?: string }) => e.kind === 'not_found');
    await assert.rejects(store.put('../escape', Readable.from(['x'])), /invalid storage key/);
  });

  it('put streams a body larger than one part (multipart) and the object appears whole', async () => {
    const big = crypto.randomBytes(9 * 1024 * 1024 + 17);
    async function* gen() {
      for (let i = 0; i < big.length; i += 1 << 20) yield big.subarray(i, i + (1 << 20));
    }
    const r = await store.put('big', Readable.from(gen()));
    assert.equal(r.size, big.length);
    assert.ok((await bytes(await store.open('big'))).equals(big));
  });

  it('a put cut off half-way leaves nothing', async () => {
    async function* failing() {
      yield crypto.randomBytes(6 * 1024 * 1024); // more than one part: a multipart upload starts
      yield crypto.randomBytes(3 * 1024 * 1024);
      throw new Error('client went away');
    }
    await assert.rejects(store.put('cut', Readable.from(failing())), /client went away/);
    assert.equal(await store.stat('cut'), undefined);
    async function* failingSmall() {
      yield Buffer.from('abc');
      throw new Error('gone early');
    }
    await assert.rejects(store.put('cut-small', Readable.from(failingSmall())), /gone early/);
    assert.equal(await store.stat('cut-small'), undefined);
  });

  it('delete: absent is no error; ifUnmodifiedSince keeps a blob written since', async () => {
    await store.put('del/x', Readable.from(['x']));
    assert.equal(await store.delete('del/x', { ifUnmodifiedSince: new Date(Date.now() - 60_000) }), false);
    assert.ok(await store.stat('del/x'));
    assert.equal(await store.delete('del/x', { ifUnmodifiedSince: new Date(Date.now() + 5_000) }), true);
    assert.equal(await store.stat('del/x'), undefined);
    assert.equal(await store.delete('del/x'), false);
  });

  it('move renames (replacing the target)', async () => {
    await store.put('mv/from', Readable.from(['moved']));
    await store.put('mv/to', Readable.from(['old']));
    await store.move('mv/from', 'mv/to');
    assert.equal(await text(await store.open('mv/to')), 'moved');
    assert.equal(await store.stat('mv/from'), undefined);
    await assert.rejects(store.move('mv/absent', 'mv/x'), (e: { kind?: string }) => e.kind === 'not_found');
  });

  it('compose concatenates parts (a part may repeat), consuming them; s3rver falls back to streaming', async () => {
    const big = crypto.randomBytes(MIN_PART + 3);
    await store.put('c/p1', Readable.from([big]));
    await store.put('c/p2', Readable.from(['-small-']));
    await store.put('c/p3', Readable.from(['end']));
    const r = await store.compose('c/whole', ['c/p1', 'c/p2', 'c/p2', 'c/p3']);
    assert.equal(r.size, big.length + 7 + 7 + 3);
    const got = await bytes(await store.open('c/whole'));
    assert.ok(got.equals(Buffer.concat([big, Buffer.from('-small--small-end')])));
    assert.equal(
      await text(await store.open('c/whole', { start: big.length, end: big.length + 6 })),
      '-small-',
    );
    for (const p of ['c/p1', 'c/p2', 'c/p3']) assert.equal(await store.stat(p), undefined);
    // s3rver answers UploadPartCopy with NotImplemented: the store learnt to stream instead.
    assert.equal(store.partCopy, false);
    // Small parts only, and no parts at all.
    await store.put('c/q1', Readable.from(['ab']));
    await store.put('c/q2', Readable.from(['cd']));
    assert.equal((await store.compose('c/small', ['c/q1', 'c/q2'])).size, 4);
    assert.equal(await text(await store.open('c/small')), 'abcd');
    assert.equal((await store.compose('c/empty', [])).size, 0);
    assert.deepEqual(await store.stat('c/empty'), { size: 0 });
    await assert.rejects(
      store.compose('c/none', ['c/absent']),
      (e: { kind?: string }) => e.kind === 'not_found',
    );
  });

  it('list paginates (ListObjectsV2 continuation) and strips the base path', async () => {
    for (let i = 0; i < 1005; i++)
      await store.put(`many/k${String(i).padStart(4, '0')}`, Readable.from(['z']));
    const listed = await keys(store, 'many/');
    assert.equal(listed.length, 1005);
    assert.equal(listed[0], 'many/k0000');
    const one = (await (async () => {
      for await (const b of store.list('a/')) return b;
    })())!;
    assert.equal(one.key, 'a/b/one');
    assert.equal(one.size, 11);
    assert.ok(one.mtime instanceof Date);
    // Another base path in the same bucket is another store.
    const other = new S3BlobStore(settings(s3, { basePath: 'other/' }));
    assert.deepEqual(await keys(other), []);
    other.close();
  });

  it('sweepTemporary: s3rver cannot list multipart uploads, so there is nothing to sweep', async () => {
    assert.deepEqual(await store.sweepTemporary(new Date()), []);
    assert.equal(store.listsUploads, false);
  });

  it('directUrl is only given with SERVE_DIRECT, and the URL serves the bytes', async () => {
    assert.equal(await store.directUrl('a/b/one'), undefined);
    const direct = new S3BlobStore(settings(s3, { serveDirect: true }));
    const url = await direct.directUrl('a/b/one', { filename: 'one.txt' });
    assert.ok(url && url.includes('X-Amz-Expires=' + PRESIGN_SECONDS), url);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'hello world');
    assert.match(res.headers.get('content-disposition') ?? '', /one\.txt/);
    direct.close();
  });
});

describe('storage configuration per kind (Forgejo keys)', () => {
  const env = (over: Record<string, string>) =>
    loadConfig({ env: { ANVIL__SECURITY__SECRET_KEY: 'x', ...over }, cwd: '/srv' });
  it('local by default, each kind in its own directory', () => {
    const c = env({ ANVIL__SERVER__APP_DATA_PATH: '/data' });
    assert.deepEqual(c.storage.lfs, { type: 'local', path: '/data/lfs' });
    assert.deepEqual(c.storage.artifacts, { type: 'local', path: '/data/artifacts' });
    assert.deepEqual(c.warnings, []);
  });
  it('[storage] minio: one bucket, a base path per kind; a kind section overrides bucket, base path, SERVE_DIRECT', () => {
    const c = env({
      ANVIL__STORAGE__STORAGE_TYPE: 'minio',
      ANVIL__STORAGE__MINIO_ENDPOINT: 's3.example:9000',
      ANVIL__STORAGE__MINIO_BUCKET: 'forge',
      ANVIL__STORAGE__MINIO_USE_SSL: 'true',
      ANVIL__LFS__MINIO_BUCKET: 'lfs-bucket',
      ANVIL__LFS__SERVE_DIRECT: 'true',
      ANVIL__ATTACHMENT__MINIO_BASE_PATH: 'att/',
    });
    const lfs = c.storage.lfs.type === 'minio' ? c.storage.lfs.minio : assert.fail('lfs not minio');
    assert.equal(lfs.bucket, 'lfs-bucket');
    assert.equal(lfs.basePath, 'lfs/');
    assert.equal(lfs.serveDirect, true);
    assert.equal(lfs.useSsl, true);
    assert.equal(lfs.endpoint, 's3.example:9000');
    const att = c.storage.attachments.type === 'minio' ? c.storage.attachments.minio : assert.fail();
    assert.equal(att.bucket, 'forge');
    assert.equal(att.basePath, 'att/');
    assert.equal(att.serveDirect, false);
    const art = c.storage.artifacts.type === 'minio' ? c.storage.artifacts.minio : assert.fail();
    assert.equal(art.basePath, 'actions_artifacts/');
    assert.deepEqual(c.warnings, []);
  });
  it('[storage] MINIO_BASE_PATH prefixes every kind; a kind section with STORAGE_TYPE is that kind whole', () => {
    const c = env({
      ANVIL__STORAGE__STORAGE_TYPE: 'minio',
      ANVIL__STORAGE__MINIO_BASE_PATH: 'forge/',
      ANVIL__PACKAGES__STORAGE_TYPE: 'local',
      ANVIL__PACKAGES__PATH: '/pkgs',
      ANVIL__AVATAR__STORAGE_TYPE: 'minio',
      ANVIL__AVATAR__MINIO_ENDPOINT: 'other:9000',
      ANVIL__AVATAR__MINIO_BASE_PATH: 'av',
    });
    assert.equal(c.storage.lfs.type === 'minio' && c.storage.lfs.minio.basePath, 'forge/lfs/');
    assert.deepEqual(c.storage.packages, { type: 'local', path: '/pkgs' });
    assert.equal(c.storage.avatars.type === 'minio' && c.storage.avatars.minio.endpoint, 'other:9000');
    assert.equal(c.storage.avatars.type === 'minio' && c.storage.avatars.minio.basePath, 'av/');
  });
  it('a kind pointing at [storage.NAME]; [storage.lfs] when the kind names none; bad values name the key', () => {
    const c = env({
      ANVIL__STORAGE_0X2E_MY_S3__STORAGE_TYPE: 'minio',
      ANVIL__STORAGE_0X2E_MY_S3__MINIO_ENDPOINT: 'named:9000',
      ANVIL__STORAGE_0X2E_MY_S3__MINIO_BUCKET_LOOKUP: 'path',
      ANVIL__ACTIONS_0X2E_ARTIFACTS__STORAGE_TYPE: 'my_s3',
      ANVIL__STORAGE_0X2E_LFS__STORAGE_TYPE: 'minio',
      ANVIL__STORAGE_0X2E_LFS__MINIO_BUCKET: 'lfs-only',
    });
    const art = c.storage.artifacts.type === 'minio' ? c.storage.artifacts.minio : assert.fail();
    assert.equal(art.endpoint, 'named:9000');
    assert.equal(art.bucketLookup, 'path');
    assert.equal(art.basePath, 'actions_artifacts/');
    const lfs = c.storage.lfs.type === 'minio' ? c.storage.lfs.minio : assert.fail();
    assert.equal(lfs.bucket, 'lfs-only');
    assert.equal(c.storage.attachments.type, 'local');
    assert.throws(() => env({ ANVIL__STORAGE__STORAGE_TYPE: 'ftp' }), /\[storage\] STORAGE_TYPE/);
    assert.throws(() => env({ ANVIL__LFS__STORAGE_TYPE: 'nowhere' }), /\[storage\.nowhere\]/);
    assert.throws(
      () => env({ ANVIL__STORAGE__STORAGE_TYPE: 'minio', ANVIL__STORAGE__MINIO_BUCKET_LOOKUP: 'x' }),
      /MINIO_BUCKET_LOOKUP/,
    );
    assert.throws(
      () => env({ ANVIL__STORAGE__STORAGE_TYPE: 'minio', ANVIL__STORAGE__MINIO_USE_SSL: 'maybe' }),
      /MINIO_USE_SSL/,
    );
  });
});

void fs;
void os;
void path;
void LocalBlobStore;
void migrateStore;
void runCli;
void startServer;
export type { TestServer };
