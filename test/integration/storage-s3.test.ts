// The S3 backend (src/storage/s3.ts) against a real S3 server (s3rver in a child process): the
// BlobStore contract, the fallbacks for what s3rver lacks (UploadPartCopy, ListMultipartUploads,
// AbortMultipartUpload), per-kind configuration as Forgejo resolves it, SERVE_DIRECT redirects to
// presigned URLs, and `anvil admin storage migrate` between the local disk and S3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { MIN_PART, S3BlobStore, planCompose } from '../../src/storage/s3.js';
import { PRESIGN_SECONDS } from '../../src/storage/storage.js';
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

  it('put with a known size: one streamed PutObject; a body of another size or cut off leaves nothing', async () => {
    const big = crypto.randomBytes(9 * 1024 * 1024 + 5);
    async function* gen(upTo = big.length) {
      for (let i = 0; i < upTo; i += 1 << 20) yield big.subarray(i, Math.min(i + (1 << 20), upTo));
    }
    const r = await store.put('sized', Readable.from(gen()), { size: big.length });
    assert.equal(r.size, big.length);
    assert.ok((await bytes(await store.open('sized'))).equals(big));
    await assert.rejects(
      store.put('short', Readable.from(gen(big.length - 1)), { size: big.length }),
      /not the \d+ announced/,
    );
    assert.equal(await store.stat('short'), undefined);
    await assert.rejects(store.put('long', Readable.from(gen()), { size: 100 }), /more than the 100 bytes/);
    assert.equal(await store.stat('long'), undefined);
    async function* failing() {
      yield big.subarray(0, 4 << 20);
      throw new Error('client went away');
    }
    await assert.rejects(
      store.put('cut-sized', Readable.from(failing()), { size: big.length }),
      /client went away/,
    );
    assert.equal(await store.stat('cut-sized'), undefined);
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
    // More than one page of 1,000; put 16 at a time (one by one, s3rver takes 18 s for them).
    const names = Array.from({ length: 1005 }, (_, i) => `many/k${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 16)
      await Promise.all(names.slice(i, i + 16).map((k) => store.put(k, Readable.from(['z']))));
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

describe('SERVE_DIRECT: downloads redirect to presigned S3 URLs after the access checks', () => {
  let s3: S3Server;
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  const data = crypto.randomBytes(100_000);
  const oid = crypto.createHash('sha256').update(data).digest('hex');
  const LFS = 'application/vnd.git-lfs+json';
  const basic = (u: { name: string; password: string }) =>
    `Basic ${Buffer.from(`${u.name}:${u.password}`).toString('base64')}`;

  before(async () => {
    s3 = await startS3rver();
    s = await startServer({ ...s3.settings('direct'), ANVIL__STORAGE__SERVE_DIRECT: 'true' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const r = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', private: true, auto_init: true },
    });
    assert.equal(r.status, 201);
    const put = await fetch(`${s.url}/alice/secret.git/info/lfs/objects/${oid}`, {
      method: 'PUT',
      headers: { authorization: basic(alice), accept: LFS, 'content-type': 'application/octet-stream' },
      body: data,
    });
    assert.equal(put.status, 200, await put.text());
  });
  after(async () => {
    await s.close();
    await s3.stop();
  });

  it('LFS: the object download redirects; following it gives the bytes', async () => {
    const url = `${s.url}/alice/secret.git/info/lfs/objects/${oid}`;
    const r = await fetch(url, { headers: { authorization: basic(alice) }, redirect: 'manual' });
    assert.equal(r.status, 303);
    const location = r.headers.get('location')!;
    assert.ok(location.startsWith(`http://${s3.endpoint}/direct/lfs/`), location);
    assert.match(location, /X-Amz-Expires=300/);
    const got = Buffer.from(await (await fetch(location)).arrayBuffer());
    assert.ok(got.equals(data));
    // A range on the presigned URL works too (clients resend Range after the redirect).
    const part = await fetch(location, { headers: { range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(data.subarray(10, 20)));
  });

  it('LFS batch: download hrefs are presigned URLs without Anvil credentials', async () => {
    const r = await fetch(`${s.url}/alice/secret.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: basic(alice), accept: LFS, 'content-type': LFS },
      body: JSON.stringify({ operation: 'download', objects: [{ oid, size: data.length }] }),
    });
    assert.equal(r.status, 200);
    const body = (await r.json()) as {
      objects: Array<{ actions: { download: { href: string; header: Record<string, string> } } }>;
    };
    const d = body.objects[0]!.actions.download;
    assert.ok(d.href.startsWith(`http://${s3.endpoint}/direct/lfs/`), d.href);
    assert.deepEqual(d.header, {});
    assert.ok(Buffer.from(await (await fetch(d.href)).arrayBuffer()).equals(data));
  });

  it('no redirect for someone who may not read the repository', async () => {
    const url = `${s.url}/alice/secret.git/info/lfs/objects/${oid}`;
    for (const headers of [{ authorization: basic(bob) }, {}] as Array<Record<string, string>>) {
      const r = await fetch(url, { headers, redirect: 'manual' });
      assert.ok([401, 403, 404].includes(r.status), String(r.status));
      assert.equal(r.headers.get('location'), null);
    }
    const b = await fetch(`${s.url}/alice/secret.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: basic(bob), accept: LFS, 'content-type': LFS },
      body: JSON.stringify({ operation: 'download', objects: [{ oid, size: data.length }] }),
    });
    assert.ok([401, 403, 404].includes(b.status), String(b.status));
    assert.doesNotMatch(await b.text(), /X-Amz/);
  });

  it('attachments: the download redirects for a reader, not for others', async () => {
    const rel = await s.api<{ id: number }>('POST', '/repos/alice/secret/releases', {
      token: alice.token,
      body: { tag_name: 'v1', name: 'v1' },
    });
    assert.equal(rel.status, 201, rel.text);
    const form = new FormData();
    form.append('attachment', new Blob([data as Buffer<ArrayBuffer>]), 'build.bin');
    const up = await fetch(`${s.url}/api/v1/repos/alice/secret/releases/${rel.body.id}/assets`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}` },
      body: form,
    });
    assert.equal(up.status, 201);
    const asset = (await up.json()) as { uuid: string };
    const url = `${s.url}/attachments/${asset.uuid}`;
    const r = await fetch(url, { headers: { authorization: `token ${alice.token}` }, redirect: 'manual' });
    assert.equal(r.status, 303);
    const location = r.headers.get('location')!;
    assert.ok(location.startsWith(`http://${s3.endpoint}/direct/attachments/`), location);
    const got = await fetch(location);
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(data));
    assert.match(got.headers.get('content-disposition') ?? '', /build\.bin/);
    const denied = await fetch(url, { headers: { authorization: `token ${bob.token}` }, redirect: 'manual' });
    assert.equal(denied.status, 404);
    assert.equal(denied.headers.get('location'), null);
  });

  it('generic packages: the file download redirects', async () => {
    const url = `${s.url}/api/packages/alice/generic/tool/1.0.0/tool.bin`;
    const put = await fetch(url, {
      method: 'PUT',
      headers: { authorization: `token ${alice.token}` },
      body: data,
    });
    assert.equal(put.status, 201);
    const r = await fetch(url, { headers: { authorization: `token ${alice.token}` }, redirect: 'manual' });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('content-length') ?? '0', '0');
    const got = await fetch(r.headers.get('location')!);
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(data));
    const missing = await fetch(`${s.url}/api/packages/alice/generic/tool/1.0.0/none.bin`, {
      headers: { authorization: `token ${alice.token}` },
      redirect: 'manual',
    });
    assert.equal(missing.status, 404);
  });

  it('a presigned URL stops working when it expires', async () => {
    const store = s.ctx.storage.lfs as S3BlobStore;
    const key = (await keys(store))[0]!;
    // The same key presigned for an hour serves the bytes; for a second, it is refused once that
    // has passed (fetching it first too would depend on how soon a loaded machine gets there).
    assert.equal((await fetch(await store.presign(key, { expiresIn: 3600 }))).status, 200);
    const url = await store.presign(key, { expiresIn: 1 });
    assert.equal(new URL(url).searchParams.get('X-Amz-Expires'), '1');
    await new Promise((r) => setTimeout(r, 2100));
    const late = await fetch(url);
    assert.equal(late.status, 403);
    assert.match(await late.text(), /expired/);
  });
});

describe('anvil admin storage migrate (local to S3)', () => {
  let s3: S3Server;
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  const blobs = Array.from({ length: 6 }, (_, i) => crypto.randomBytes(50_000 + i));
  const oids = blobs.map((b) => crypto.createHash('sha256').update(b).digest('hex'));
  const auth = () => `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;

  before(async () => {
    s3 = await startS3rver();
    s = await startServer({ ANVIL__STORAGE__STORAGE_TYPE: 'local' });
    alice = await s.createUser('alice');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'media' } });
    for (const [i, b] of blobs.entries()) {
      const put = await fetch(`${s.url}/alice/media.git/info/lfs/objects/${oids[i]}`, {
        method: 'PUT',
        headers: {
          authorization: auth(),
          accept: 'application/vnd.git-lfs+json',
          'content-type': 'application/octet-stream',
        },
        body: b,
      });
      assert.equal(put.status, 200);
    }
  });
  after(async () => {
    await s.close();
    await s3.stop();
  });

  it('copies every blob, reads keep working from the old backend meanwhile, a rerun copies nothing', async () => {
    const { ANVIL__STORAGE__STORAGE_TYPE: _type, ...minio } = s3.settings('migrated');
    const env = { ...s.env, ...minio };
    const cli = runCli({ dataDir: s.dataDir, env }, [
      'admin',
      'storage',
      'migrate',
      '--from',
      'local',
      '--to',
      'minio',
    ]);
    let reads = 0;
    let done = false;
    void cli.finally(() => (done = true));
    while (!done || reads < 6) {
      const i = reads % blobs.length;
      const r = await fetch(`${s.url}/alice/media.git/info/lfs/objects/${oids[i]}`, {
        headers: { authorization: auth() },
      });
      assert.equal(r.status, 200);
      assert.ok(Buffer.from(await r.arrayBuffer()).equals(blobs[i]!));
      reads++;
    }
    const first = await cli;
    assert.equal(first.code, 0, first.stderr + first.stdout);
    assert.match(first.stdout, /lfs: 6 copied/);
    const target = new S3BlobStore(settings(s3, { bucket: 'migrated', basePath: 'lfs/' }));
    const local = new LocalBlobStore(path.join(s.dataDir, 'lfs'));
    const want = await keys(local);
    assert.equal(want.length, 6);
    assert.deepEqual(await keys(target), want);
    for (const k of want) assert.deepEqual(await target.stat(k), await local.stat(k));
    // Idempotent: nothing left to copy.
    const again = await runCli({ dataDir: s.dataDir, env }, [
      'admin',
      'storage',
      'migrate',
      '--from',
      'local',
      '--to',
      'minio',
      '--type',
      'lfs',
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /lfs: 0 copied \(0 bytes\), 6 already there/);
    // A blob whose copy is short (an earlier interrupted copy) is copied again.
    await target.put(want[0]!, Readable.from([Buffer.from('short')]));
    const repair = await migrateStore(local, target, 'lfs');
    assert.equal(repair.copied, 1);
    assert.deepEqual(await target.stat(want[0]!), await local.stat(want[0]!));
    target.close();
  });

  it('bad arguments are refused', async () => {
    const bad = await runCli(s, ['admin', 'storage', 'migrate', '--from', 'local', '--to', 'ftp']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /"ftp" must be local or minio/);
    const same = await runCli(s, ['admin', 'storage', 'migrate', '--from', 'local', '--to', 'local']);
    assert.notEqual(same.code, 0);
    assert.match(same.stderr, /same store/);
    const kind = await runCli(s, [
      'admin',
      'storage',
      'migrate',
      '--from',
      'local',
      '--to',
      'minio',
      '--type',
      'wiki',
    ]);
    assert.notEqual(kind.code, 0);
    assert.match(kind.stderr, /--type/);
  });
});
