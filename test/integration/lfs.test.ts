// Git LFS over HTTP: the real `git lfs` client pushing and pulling through Anvil, the batch API,
// basic transfers (uploads checked against oid and size, downloads with Range), verification,
// the locking API, quota accounting for the repository's owner, and what repository deletion and
// transfer do to LFS objects and their usage.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server.js';
import { blobKey } from '../../src/lfs/service.js';

const run = promisify(execFile);
const LFS = 'application/vnd.git-lfs+json';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Action {
  href: string;
  header?: Record<string, string>;
  expires_in?: number;
}

interface BatchObject {
  oid: string;
  size: number;
  authenticated?: boolean;
  actions?: { upload?: Action; verify?: Action; download?: Action };
  error?: { code: number; message: string };
}

interface BatchJson {
  transfer: string;
  objects: BatchObject[];
  hash_algo: string;
  message?: string;
}

interface LockJson {
  id: string;
  path: string;
  locked_at: string;
  owner: { name: string };
}

interface QuotaJson {
  used: { size: { repos: { public: number; private: number }; git: { LFS: number } } };
}

interface Res<T> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

type Cred = { basic: [string, string] } | { token: string } | { header: string } | undefined;

function authHeader(c: Cred): string | undefined {
  if (!c) return undefined;
  if ('header' in c) return c.header;
  if ('token' in c) return `token ${c.token}`;
  return `Basic ${Buffer.from(c.basic.join(':')).toString('base64')}`;
}

describe('Git LFS', () => {
  let s: TestServer;
  let home: string;
  let work: string;
  let alice: User;
  let bob: User;
  let carol: User;
  let erin: User;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env['PATH'],
    HOME: home,
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Tester',
    GIT_AUTHOR_EMAIL: 'tester@example.com',
    GIT_COMMITTER_NAME: 'Tester',
    GIT_COMMITTER_EMAIL: 'tester@example.com',
  });

  /** Runs git in `cwd`; stdout, or a failure carrying git's stderr. */
  async function git(cwd: string, ...args: string[]): Promise<string> {
    try {
      const r = await run('git', args, { cwd, env: env(), maxBuffer: 64 * 1024 * 1024 });
      return r.stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`git ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
    }
  }

  /** git's failure output, asserting that it does fail. */
  async function gitFails(cwd: string, ...args: string[]): Promise<string> {
    try {
      await run('git', args, { cwd, env: env() });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string };
      return `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    assert.fail(`git ${args.join(' ')} succeeded`);
  }

  const remote = (u: User | null, owner: string, repo: string) => {
    const url = new URL(`${s.url}/${owner}/${repo}.git`);
    if (u) {
      url.username = u.name;
      url.password = u.password;
    }
    return url.toString();
  };

  /** A request to the LFS API (outside /api/v1). */
  async function lfs<T = unknown>(
    method: string,
    p: string,
    opts: { auth?: Cred; body?: unknown; raw?: Buffer; headers?: Record<string, string> } = {},
  ): Promise<Res<T>> {
    const headers: Record<string, string> = {};
    const a = authHeader(opts.auth);
    if (a) headers['authorization'] = a;
    let body: string | Buffer | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = LFS;
      headers['accept'] = LFS;
    } else if (opts.raw !== undefined) {
      body = opts.raw;
      headers['content-type'] = 'application/octet-stream';
    } else if (method === 'GET' && p.includes('/locks')) {
      headers['accept'] = LFS;
    }
    Object.assign(headers, opts.headers ?? {});
    const res = await fetch(p.startsWith('http') ? p : s.url + p, {
      method,
      headers,
      body: body as string | Buffer<ArrayBuffer> | undefined,
    });
    const buf = Buffer.from(await res.arrayBuffer());
    const text = buf.toString('utf8');
    let parsed: unknown = buf;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  }

  const batch = (
    repo: string,
    operation: string,
    objects: Array<{ oid: string; size: number }>,
    auth?: Cred,
    extra: Record<string, unknown> = {},
  ) =>
    lfs<BatchJson>('POST', `/${repo}.git/info/lfs/objects/batch`, {
      auth,
      body: { operation, objects, ...extra },
    });

  const put = (repo: string, oid: string, data: Buffer, auth?: Cred, headers?: Record<string, string>) =>
    lfs<{ message: string }>('PUT', `/${repo}.git/info/lfs/objects/${oid}`, { auth, raw: data, headers });

  const basicOf = (u: User): Cred => ({ basic: [u.name, u.password] });

  async function createRepo(owner: User, name: string, opts: { org?: string; private?: boolean } = {}) {
    const r = await s.api<{ id: number }>('POST', opts.org ? `/orgs/${opts.org}/repos` : '/user/repos', {
      token: owner.token,
      body: { name, private: opts.private ?? false },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
  }

  async function lfsUsage(p: string, u: User): Promise<number> {
    const r = await s.api<QuotaJson>('GET', p, { token: u.token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.git.LFS;
  }

  async function stored(oid: string): Promise<boolean> {
    return (await s.ctx.storage.lfs.stat(blobKey(oid))) !== undefined;
  }

  /** A fresh working copy tracking *.bin with LFS and holding `files`, committed on main. */
  async function workingCopy(name: string, files: Record<string, Buffer>): Promise<string> {
    const dir = path.join(work, name);
    fs.mkdirSync(dir, { recursive: true });
    await git(dir, 'init', '-q', '-b', 'main');
    await git(dir, 'lfs', 'track', '*.bin');
    for (const [f, data] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), data);
    }
    fs.writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'add binaries');
    return dir;
  }

  // The public repository alice/media and its files, shared by the tests below.
  const files: Record<string, Buffer> = {
    'big.bin': crypto.randomBytes(6 * 1024 * 1024 + 123),
    'small.bin': crypto.randomBytes(1500),
    'assets/mid.bin': crypto.randomBytes(70_000),
  };
  const total = Object.values(files).reduce((n, b) => n + b.length, 0);
  const bigOid = sha256(files['big.bin']!);
  const smallOid = sha256(files['small.bin']!);
  // The private repository alice/secret's only object.
  const secret = crypto.randomBytes(300_000);
  const secretOid = sha256(secret);

  before(async () => {
    s = await startServer();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lfs-home-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lfs-work-'));
    await git(home, 'lfs', 'install');
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    erin = await s.createUser('erin');
    await createRepo(alice, 'media');
  });
  after(async () => {
    await s.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  describe('push and pull with the git lfs client', () => {
    it('pushes LFS objects over HTTP with basic auth and pulls them byte for byte into a fresh clone', async () => {
      const dir = await workingCopy('media', files);
      const pointers = await git(dir, 'lfs', 'ls-files', '--long');
      assert.equal(pointers.trim().split('\n').length, 3, pointers);
      await git(dir, 'push', '-q', remote(alice, 'alice', 'media'), 'main');

      for (const [f, data] of Object.entries(files)) assert.ok(await stored(sha256(data)), `${f} is stored`);

      // Anonymous: the repository is public.
      const clone = path.join(work, 'media-clone');
      await run('git', ['clone', '-q', remote(null, 'alice', 'media'), clone], {
        env: { ...env(), GIT_LFS_SKIP_SMUDGE: '1' },
      });
      // Without smudging, the clone holds pointers only.
      assert.match(fs.readFileSync(path.join(clone, 'big.bin'), 'utf8'), /^version https:\/\/git-lfs/);
      await git(clone, 'lfs', 'pull');
      for (const [f, data] of Object.entries(files)) {
        assert.ok(fs.readFileSync(path.join(clone, f)).equals(data), `${f} is identical`);
      }
    });

    it('counts the objects in the owner quota as LFS, not as repository size', async () => {
      const r = await s.api<QuotaJson>('GET', '/user/quota', { token: alice.token });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.used.size.git.LFS, total);
      const repo = await s.api<{ size: number; id: number }>('GET', '/repos/alice/media', {
        token: alice.token,
      });
      const row = await s.ctx.repos.getById(repo.body.id);
      assert.equal(r.body.used.size.repos.public, row!.size);
      // The git objects are pointers: far smaller than the smallest LFS object counted above.
      assert.ok(row!.size > 0 && row!.size < total / 10, `repository size ${row!.size}`);
      assert.equal(r.body.used.size.repos.private, 0);
    });

    it('keeps the stored usage equal to what recalculation finds', async () => {
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:git:lfs'),
        [],
      );
      assert.equal(await lfsUsage('/user/quota', alice), total);
    });

    it('asks for no upload of objects the repository already holds', async () => {
      const r = await batch(
        'alice/media',
        'upload',
        [{ oid: bigOid, size: files['big.bin']!.length }],
        basicOf(alice),
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.objects, [{ oid: bigOid, size: files['big.bin']!.length }]);
    });

    it('locks, lists and unlocks with the git lfs client', async () => {
      const dir = path.join(work, 'media');
      await git(dir, 'config', 'remote.origin.url', remote(alice, 'alice', 'media'));
      await git(dir, 'lfs', 'lock', 'small.bin');
      const listed = await git(dir, 'lfs', 'locks');
      assert.match(listed, /small\.bin\s+alice\s+ID:\d+/);
      const api = await lfs<{ locks: LockJson[] }>('GET', '/alice/media.git/info/lfs/locks', {
        auth: basicOf(alice),
      });
      assert.deepEqual(
        api.body.locks.map((l) => [l.path, l.owner.name]),
        [['small.bin', 'alice']],
      );
      await git(dir, 'lfs', 'unlock', 'small.bin');
      assert.equal((await git(dir, 'lfs', 'locks')).trim(), '');
    });
  });

  describe('batch API', () => {
    it('answers downloads with links that carry the caller credentials', async () => {
      const r = await batch('alice/media', 'download', [{ oid: smallOid, size: 1500 }], { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/vnd\.git-lfs\+json/);
      assert.equal(r.body.transfer, 'basic');
      assert.equal(r.body.hash_algo, 'sha256');
      const [o] = r.body.objects;
      assert.equal(o!.oid, smallOid);
      assert.equal(o!.size, 1500);
      assert.equal(o!.authenticated, true);
      const d = o!.actions!.download!;
      assert.equal(d.href, `${s.url}/alice/media.git/info/lfs/objects/${smallOid}`);
      assert.deepEqual(d.header, { Authorization: `token ${bob.token}` });
      assert.ok(d.expires_in! > 0);
      const got = await lfs<Buffer>('GET', d.href, { headers: d.header! });
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-type'), 'application/octet-stream');
      assert.ok(got.body.equals(files['small.bin']!));
    });

    it('works without .git in the path and anonymously on a public repository', async () => {
      const r = await lfs<BatchJson>('POST', '/alice/media/info/lfs/objects/batch', {
        body: { operation: 'download', objects: [{ oid: smallOid, size: 1500 }] },
      });
      assert.equal(r.status, 200, r.text);
      const o = r.body.objects[0]!;
      assert.equal(o.authenticated, undefined);
      assert.deepEqual(o.actions!.download!.header, {});
      const got = await lfs<Buffer>('GET', o.actions!.download!.href);
      assert.equal(got.status, 200);
      assert.ok(got.body.equals(files['small.bin']!));
    });

    it('answers upload with upload and verify actions for new objects', async () => {
      const data = Buffer.from('a new object');
      const oid = sha256(data);
      const r = await batch('alice/media', 'upload', [{ oid, size: data.length }], basicOf(alice), {
        transfers: ['lfs-standalone-file', 'basic'],
        ref: { name: 'refs/heads/main' },
        hash_algo: 'sha256',
      });
      assert.equal(r.status, 200, r.text);
      const a = r.body.objects[0]!.actions!;
      assert.equal(a.upload!.href, `${s.url}/alice/media.git/info/lfs/objects/${oid}`);
      assert.equal(a.upload!.header!['Authorization'], authHeader(basicOf(alice)));
      assert.equal(a.verify!.href, `${s.url}/alice/media.git/info/lfs/verify`);
      assert.equal(a.download, undefined);
    });

    it('gives per-object errors: 404 for unknown objects, 422 for bad oids and sizes', async () => {
      const unknown = sha256(Buffer.from('never uploaded'));
      const r = await batch(
        'alice/media',
        'download',
        [
          { oid: smallOid, size: 1500 },
          { oid: unknown, size: 14 },
          { oid: 'not-a-sha256', size: 3 },
          { oid: smallOid.toUpperCase(), size: 1500 },
          { oid: unknown, size: -1 },
          { oid: smallOid, size: 1501 },
        ],
        basicOf(alice),
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.objects.map((o) => [o.error?.code ?? 0, o.actions ? Object.keys(o.actions) : []]),
        [
          [0, ['download']],
          [404, []],
          [422, []],
          [422, []],
          [422, []],
          [422, []],
        ],
      );
      const up = await batch(
        'alice/media',
        'upload',
        [
          { oid: 'xyz', size: 1 },
          { oid: unknown, size: -5 },
        ],
        basicOf(alice),
      );
      assert.equal(up.status, 200, up.text);
      assert.deepEqual(
        up.body.objects.map((o) => o.error?.code),
        [422, 422],
      );
    });

    it('refuses malformed requests as a whole', async () => {
      const cases: Array<[unknown, number]> = [
        [{ operation: 'delete', objects: [] }, 422],
        [{ operation: 'download' }, 422],
        [{ operation: 'download', objects: [{ oid: smallOid, size: '1500' }] }, 422],
        [{ operation: 'download', objects: [], transfers: ['tus'] }, 422],
        [{ operation: 'download', objects: [], hash_algo: 'sha512' }, 409],
      ];
      for (const [body, status] of cases) {
        const r = await lfs<{ message: string }>('POST', '/alice/media.git/info/lfs/objects/batch', {
          auth: basicOf(alice),
          body,
        });
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.headers.get('content-type') ?? '', /^application\/vnd\.git-lfs\+json/);
        assert.equal(typeof r.body.message, 'string');
      }
      const badJson = await lfs('POST', '/alice/media.git/info/lfs/objects/batch', {
        auth: basicOf(alice),
        headers: { 'content-type': LFS, accept: LFS },
        raw: Buffer.from('{"operation":'),
      });
      assert.equal(badJson.status, 400);
      const notAccepted = await lfs('POST', '/alice/media.git/info/lfs/objects/batch', {
        auth: basicOf(alice),
        body: { operation: 'download', objects: [] },
        headers: { accept: 'text/html' },
      });
      assert.equal(notAccepted.status, 406);
      const wrongType = await lfs('POST', '/alice/media.git/info/lfs/objects/batch', {
        auth: basicOf(alice),
        headers: { 'content-type': 'text/plain', accept: LFS },
        raw: Buffer.from('{}'),
      });
      assert.equal(wrongType.status, 415);
    });

    it('answers 404 for a repository that does not exist, 401 to anonymous callers', async () => {
      const r = await batch('alice/nothing', 'download', [], basicOf(alice));
      assert.equal(r.status, 404, r.text);
      const anon = await batch('alice/nothing', 'download', []);
      assert.equal(anon.status, 401, anon.text);
    });

    it('needs credentials to upload to a public repository and write access to it', async () => {
      const data = Buffer.from('anonymous upload');
      const anon = await batch('alice/media', 'upload', [{ oid: sha256(data), size: data.length }]);
      assert.equal(anon.status, 401, anon.text);
      assert.match(anon.headers.get('lfs-authenticate') ?? '', /^Basic/);
      const stranger = await batch(
        'alice/media',
        'upload',
        [{ oid: sha256(data), size: data.length }],
        basicOf(bob),
      );
      assert.equal(stranger.status, 403, stranger.text);
      const put1 = await put('alice/media', sha256(data), data, basicOf(bob));
      assert.equal(put1.status, 403, put1.text);
      const put2 = await put('alice/media', sha256(data), data);
      assert.equal(put2.status, 401, put2.text);
      assert.equal(await stored(sha256(data)), false);
    });
  });

  describe('basic transfers', () => {
    it('stores an upload, counts it once, and verifies it', async () => {
      const before = await lfsUsage('/user/quota', alice);
      const data = crypto.randomBytes(4096);
      const oid = sha256(data);
      const r = await put('alice/media', oid, data, basicOf(alice));
      assert.equal(r.status, 200, r.text);
      assert.equal(await lfsUsage('/user/quota', alice), before + 4096);
      // Uploading it again changes nothing.
      const again = await put('alice/media', oid, data, { token: alice.token });
      assert.equal(again.status, 200, again.text);
      assert.equal(await lfsUsage('/user/quota', alice), before + 4096);

      const ok = await lfs('POST', '/alice/media.git/info/lfs/verify', {
        auth: basicOf(alice),
        body: { oid, size: 4096 },
      });
      assert.equal(ok.status, 200, ok.text);
      const wrongSize = await lfs('POST', '/alice/media.git/info/lfs/verify', {
        auth: basicOf(alice),
        body: { oid, size: 4095 },
      });
      assert.equal(wrongSize.status, 422, wrongSize.text);
      const missing = await lfs('POST', '/alice/media.git/info/lfs/verify', {
        auth: basicOf(alice),
        body: { oid: sha256(Buffer.from('missing')), size: 7 },
      });
      assert.equal(missing.status, 404, missing.text);
      const reader = await lfs('POST', '/alice/media.git/info/lfs/verify', {
        auth: basicOf(bob),
        body: { oid, size: 4096 },
      });
      assert.equal(reader.status, 403, reader.text);
    });

    it('accepts an empty object and the /{oid}/{size} form', async () => {
      const empty = Buffer.alloc(0);
      const r = await put('alice/media', sha256(empty), empty, basicOf(alice));
      assert.equal(r.status, 200, r.text);
      const data = Buffer.from('sized form');
      const sized = await lfs('PUT', `/alice/media.git/info/lfs/objects/${sha256(data)}/${data.length}`, {
        auth: basicOf(alice),
        raw: data,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      });
      assert.equal(sized.status, 200, sized.text);
      const got = await lfs<Buffer>('GET', `/alice/media.git/info/lfs/objects/${sha256(data)}`);
      assert.ok(got.body.equals(data));
      const e = await lfs<Buffer>('GET', `/alice/media.git/info/lfs/objects/${sha256(empty)}`);
      assert.equal(e.status, 200);
      assert.equal(e.body.length, 0);
    });

    it('refuses an upload whose content does not match its oid or size, keeping nothing', async () => {
      const before = await lfsUsage('/user/quota', alice);
      const data = crypto.randomBytes(10_000);
      const claimed = sha256(Buffer.from('something else entirely'));
      const r = await put('alice/media', claimed, data, basicOf(alice));
      assert.equal(r.status, 422, r.text);
      assert.match(r.body.message, /does not match/);
      assert.equal(await stored(claimed), false);
      const b = await batch('alice/media', 'download', [{ oid: claimed, size: data.length }], basicOf(alice));
      assert.equal(b.body.objects[0]!.error?.code, 404);

      // Announced 9999 bytes in the path, sent 10000.
      const oid = sha256(data);
      const sized = await lfs<{ message: string }>('PUT', `/alice/media.git/info/lfs/objects/${oid}/9999`, {
        auth: basicOf(alice),
        raw: data,
      });
      assert.equal(sized.status, 422, sized.text);
      assert.equal(await stored(oid), false);

      const badOid = await put('alice/media', 'abc', data, basicOf(alice));
      assert.equal(badOid.status, 422, badOid.text);
      assert.equal(await lfsUsage('/user/quota', alice), before);
    });

    it('does not overwrite a stored blob with wrong content claiming its oid', async () => {
      const r = await put('alice/media', smallOid, Buffer.from('forged'), basicOf(alice));
      assert.equal(r.status, 422, r.text);
      const got = await lfs<Buffer>('GET', `/alice/media.git/info/lfs/objects/${smallOid}`);
      assert.ok(got.body.equals(files['small.bin']!));
    });

    it('serves byte ranges', async () => {
      const href = `/alice/media.git/info/lfs/objects/${bigOid}`;
      const big = files['big.bin']!;
      const r = await lfs<Buffer>('GET', href, { headers: { range: 'bytes=100-199' } });
      assert.equal(r.status, 206);
      assert.equal(r.headers.get('content-range'), `bytes 100-199/${big.length}`);
      assert.ok(r.body.equals(big.subarray(100, 200)));
      const tail = await lfs<Buffer>('GET', href, { headers: { range: `bytes=${big.length - 10}-` } });
      assert.equal(tail.status, 206);
      assert.ok(tail.body.equals(big.subarray(big.length - 10)));
      const bad = await lfs('GET', href, { headers: { range: `bytes=${big.length + 5}-` } });
      assert.equal(bad.status, 416);
      assert.equal(bad.headers.get('content-range'), `bytes */${big.length}`);
      const whole = await lfs<Buffer>('GET', href);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.ok(whole.body.equals(big));
    });

    it('downloads only objects the repository holds', async () => {
      const other = await createRepo(bob, 'elsewhere');
      assert.ok(other > 0);
      const r = await lfs('GET', `/bob/elsewhere.git/info/lfs/objects/${bigOid}`);
      assert.equal(r.status, 404, r.text);
      const bad = await lfs('GET', '/bob/elsewhere.git/info/lfs/objects/..%2F..%2Fetc%2Fpasswd');
      assert.equal(bad.status, 404, bad.text);
    });
  });

  describe('private repositories', () => {
    before(async () => {
      await createRepo(alice, 'secret', { private: true });
      const dir = await workingCopy('secret', { 'secret.bin': secret });
      await git(dir, 'push', '-q', remote(alice, 'alice', 'secret'), 'main');
      const r = await s.api('PUT', '/repos/alice/secret/collaborators/bob', {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal(r.status, 204, r.text);
    });

    it('asks anonymous callers for credentials', async () => {
      const r = await batch('alice/secret', 'download', [{ oid: secretOid, size: secret.length }]);
      assert.equal(r.status, 401, r.text);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Basic/);
      assert.match(r.headers.get('lfs-authenticate') ?? '', /^Basic/);
      const get = await lfs('GET', `/alice/secret.git/info/lfs/objects/${secretOid}`);
      assert.equal(get.status, 401);
      const locks = await lfs('GET', '/alice/secret.git/info/lfs/locks');
      assert.equal(locks.status, 401);
    });

    it('refuses a wrong password', async () => {
      const r = await batch('alice/secret', 'download', [{ oid: secretOid, size: secret.length }], {
        basic: ['alice', 'wrong-password'],
      });
      assert.equal(r.status, 401, r.text);
      const get = await lfs('GET', `/alice/secret.git/info/lfs/objects/${secretOid}`, {
        auth: { basic: ['alice', 'wrong-password'] },
      });
      assert.equal(get.status, 401);
    });

    it('hides the repository from users without access', async () => {
      const r = await batch(
        'alice/secret',
        'download',
        [{ oid: secretOid, size: secret.length }],
        basicOf(carol),
      );
      assert.equal(r.status, 404, r.text);
    });

    it('lets a reader download but not upload', async () => {
      const r = await batch(
        'alice/secret',
        'download',
        [{ oid: secretOid, size: secret.length }],
        basicOf(bob),
      );
      assert.equal(r.status, 200, r.text);
      const d = r.body.objects[0]!.actions!.download!;
      const got = await lfs<Buffer>('GET', d.href, { headers: d.header! });
      assert.equal(got.status, 200);
      assert.ok(got.body.equals(secret));

      const data = Buffer.from('reader upload');
      const up = await batch(
        'alice/secret',
        'upload',
        [{ oid: sha256(data), size: data.length }],
        basicOf(bob),
      );
      assert.equal(up.status, 403, up.text);
      const p = await put('alice/secret', sha256(data), data, basicOf(bob));
      assert.equal(p.status, 403, p.text);
      assert.equal(await stored(sha256(data)), false);
    });

    it('lets a reader pull with the git lfs client', async () => {
      const clone = path.join(work, 'secret-clone');
      await run('git', ['clone', '-q', remote(bob, 'alice', 'secret'), clone], {
        env: { ...env(), GIT_LFS_SKIP_SMUDGE: '1' },
      });
      await git(clone, 'lfs', 'pull');
      assert.ok(fs.readFileSync(path.join(clone, 'secret.bin')).equals(secret));
      // Pushing a new LFS object is refused.
      fs.writeFileSync(path.join(clone, 'more.bin'), crypto.randomBytes(1000));
      await git(clone, 'add', 'more.bin');
      await git(clone, 'commit', '-q', '-m', 'more');
      const out = await gitFails(clone, 'push', remote(bob, 'alice', 'secret'), 'main');
      assert.match(out, /403|denied|forbidden|no write access/i);
    });

    it('applies token scopes: read:repository downloads, write:repository uploads', async () => {
      const reader = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'lfs-read', scopes: ['read:repository'] },
      });
      assert.equal(reader.status, 201, reader.text);
      const unrelated = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'lfs-none', scopes: ['read:user'] },
      });
      assert.equal(unrelated.status, 201, unrelated.text);
      const obj = [{ oid: secretOid, size: secret.length }];
      const down = await batch('alice/secret', 'download', obj, { token: reader.body.sha1 });
      assert.equal(down.status, 200, down.text);
      // As basic auth password too.
      const asPassword = await batch('alice/secret', 'download', obj, { basic: ['alice', reader.body.sha1] });
      assert.equal(asPassword.status, 200, asPassword.text);
      const bearer = await batch('alice/secret', 'download', obj, { header: `Bearer ${reader.body.sha1}` });
      assert.equal(bearer.status, 200, bearer.text);
      const up = await batch('alice/secret', 'upload', obj, { token: reader.body.sha1 });
      assert.equal(up.status, 403, up.text);
      const none = await batch('alice/secret', 'download', obj, { token: unrelated.body.sha1 });
      assert.equal(none.status, 403, none.text);
      const upOk = await batch('alice/secret', 'upload', obj, { token: alice.token });
      assert.equal(upOk.status, 200, upOk.text);
    });
  });

  describe('locks', () => {
    const base = '/alice/media.git/info/lfs/locks';
    let lockId = '';

    before(async () => {
      const r = await s.api('PUT', '/repos/alice/media/collaborators/carol', {
        token: alice.token,
        body: { permission: 'write' },
      });
      assert.equal(r.status, 204, r.text);
    });

    it('creates a lock and refuses a second one on the same path', async () => {
      const r = await lfs<{ lock: LockJson }>('POST', base, {
        auth: basicOf(alice),
        body: { path: 'assets/mid.bin' },
      });
      assert.equal(r.status, 201, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/vnd\.git-lfs\+json/);
      assert.deepEqual(Object.keys(r.body.lock).sort(), ['id', 'locked_at', 'owner', 'path']);
      assert.equal(r.body.lock.path, 'assets/mid.bin');
      assert.deepEqual(r.body.lock.owner, { name: 'alice' });
      assert.match(r.body.lock.locked_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      assert.match(r.body.lock.id, /^\d+$/);
      lockId = r.body.lock.id;

      // The same path, however it is spelled.
      for (const p of ['assets/mid.bin', '/assets/mid.bin', './assets//mid.bin']) {
        const again = await lfs<{ lock: LockJson; message: string }>('POST', base, {
          auth: basicOf(carol),
          body: { path: p },
        });
        assert.equal(again.status, 409, again.text);
        assert.deepEqual(again.body.lock, r.body.lock);
        assert.equal(typeof again.body.message, 'string');
      }
    });

    it('refuses locks without write access and bad paths', async () => {
      const reader = await lfs('POST', base, { auth: basicOf(bob), body: { path: 'other.bin' } });
      assert.equal(reader.status, 403, reader.text);
      const anon = await lfs('POST', base, { body: { path: 'other.bin' } });
      assert.equal(anon.status, 401, anon.text);
      for (const p of ['', '/', '../outside.bin', 'a/../../b']) {
        const bad = await lfs('POST', base, { auth: basicOf(alice), body: { path: p } });
        assert.equal(bad.status, 422, `${p}: ${bad.text}`);
      }
      const missing = await lfs('POST', base, { auth: basicOf(alice), body: {} });
      assert.equal(missing.status, 422, missing.text);
    });

    it('lists locks with filters and cursors', async () => {
      const more: string[] = [];
      for (const p of ['a.bin', 'b.bin', 'c.bin']) {
        const r = await lfs<{ lock: LockJson }>('POST', base, { auth: basicOf(carol), body: { path: p } });
        assert.equal(r.status, 201, r.text);
        more.push(r.body.lock.id);
      }
      const all = await lfs<{ locks: LockJson[]; next_cursor?: string }>('GET', base, { auth: basicOf(bob) });
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(
        all.body.locks.map((l) => l.path),
        ['assets/mid.bin', 'a.bin', 'b.bin', 'c.bin'],
      );
      assert.equal(all.body.next_cursor, undefined);
      // Anyone who may read a public repository may list its locks.
      const anon = await lfs<{ locks: LockJson[] }>('GET', base);
      assert.equal(anon.status, 200, anon.text);
      assert.equal(anon.body.locks.length, 4);

      const byPath = await lfs<{ locks: LockJson[] }>('GET', `${base}?path=b.bin`, { auth: basicOf(alice) });
      assert.deepEqual(
        byPath.body.locks.map((l) => l.id),
        [more[1]],
      );
      const byId = await lfs<{ locks: LockJson[] }>('GET', `${base}?id=${lockId}`, { auth: basicOf(alice) });
      assert.deepEqual(
        byId.body.locks.map((l) => l.path),
        ['assets/mid.bin'],
      );
      const noSuchId = await lfs<{ locks: LockJson[] }>('GET', `${base}?id=nope`, { auth: basicOf(alice) });
      assert.equal(noSuchId.status, 200);
      assert.deepEqual(noSuchId.body.locks, []);

      const p1 = await lfs<{ locks: LockJson[]; next_cursor?: string }>('GET', `${base}?limit=3`, {
        auth: basicOf(alice),
      });
      assert.equal(p1.body.locks.length, 3);
      assert.ok(p1.body.next_cursor);
      const p2 = await lfs<{ locks: LockJson[]; next_cursor?: string }>(
        'GET',
        `${base}?limit=3&cursor=${p1.body.next_cursor}`,
        { auth: basicOf(alice) },
      );
      assert.deepEqual(
        p2.body.locks.map((l) => l.path),
        ['c.bin'],
      );
      assert.equal(p2.body.next_cursor, undefined);
      const badCursor = await lfs('GET', `${base}?cursor=abc`, { auth: basicOf(alice) });
      assert.equal(badCursor.status, 422, badCursor.text);
    });

    it('splits locks into ours and theirs for verification', async () => {
      const r = await lfs<{ ours: LockJson[]; theirs: LockJson[] }>('POST', `${base}/verify`, {
        auth: basicOf(carol),
        body: { ref: { name: 'refs/heads/main' } },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.ours.map((l) => l.path),
        ['a.bin', 'b.bin', 'c.bin'],
      );
      assert.deepEqual(
        r.body.theirs.map((l) => l.path),
        ['assets/mid.bin'],
      );
      const reader = await lfs('POST', `${base}/verify`, { auth: basicOf(bob), body: {} });
      assert.equal(reader.status, 403, reader.text);
    });

    it("refuses to unlock someone else's lock without force, or with force but without admin", async () => {
      const r = await lfs('POST', `${base}/${lockId}/unlock`, { auth: basicOf(carol), body: {} });
      assert.equal(r.status, 403, r.text);
      const forced = await lfs('POST', `${base}/${lockId}/unlock`, {
        auth: basicOf(carol),
        body: { force: true },
      });
      assert.equal(forced.status, 403, forced.text);
      const reader = await lfs('POST', `${base}/${lockId}/unlock`, {
        auth: basicOf(bob),
        body: { force: true },
      });
      assert.equal(reader.status, 403, reader.text);
      // No body at all: no force either.
      const bare = await lfs('POST', `${base}/${lockId}/unlock`, {
        auth: basicOf(carol),
        headers: { accept: LFS },
      });
      assert.equal(bare.status, 403, bare.text);
      const unknown = await lfs('POST', `${base}/999999/unlock`, { auth: basicOf(alice), body: {} });
      assert.equal(unknown.status, 404, unknown.text);
      const list = await lfs<{ locks: LockJson[] }>('GET', `${base}?id=${lockId}`, { auth: basicOf(alice) });
      assert.equal(list.body.locks.length, 1);
    });

    it('unlocks for the owner of the lock, and by force for a repository admin', async () => {
      const r = await lfs<{ lock: LockJson }>('POST', `${base}/${lockId}/unlock`, {
        auth: basicOf(alice),
        body: {},
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.lock.id, lockId);
      assert.equal(r.body.lock.path, 'assets/mid.bin');
      const gone = await lfs<{ locks: LockJson[] }>('GET', `${base}?id=${lockId}`, { auth: basicOf(alice) });
      assert.deepEqual(gone.body.locks, []);

      const carolsLocks = await lfs<{ locks: LockJson[] }>('GET', base, { auth: basicOf(alice) });
      for (const l of carolsLocks.body.locks) {
        assert.equal(l.owner.name, 'carol');
        const notForced = await lfs('POST', `${base}/${l.id}/unlock`, { auth: basicOf(alice), body: {} });
        assert.equal(notForced.status, 403, notForced.text);
        const forced = await lfs('POST', `${base}/${l.id}/unlock`, {
          auth: basicOf(alice),
          body: { force: true },
        });
        assert.equal(forced.status, 200, forced.text);
      }
      const none = await lfs<{ locks: LockJson[] }>('GET', base, { auth: basicOf(alice) });
      assert.deepEqual(none.body.locks, []);
    });
  });

  describe('owners, quota, transfer and deletion', () => {
    const shared = crypto.randomBytes(50_000);
    const orgOnly = crypto.randomBytes(20_000);
    let aliceBefore = 0;

    it("counts an organization repository's objects to the organization, not the pusher", async () => {
      const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'studio' } });
      assert.equal(org.status, 201, org.text);
      await createRepo(alice, 'assets', { org: 'studio' });
      aliceBefore = await lfsUsage('/user/quota', alice);
      // `shared` is in alice/media too (pushed below through the API), `orgOnly` only here.
      const dir = await workingCopy('studio-assets', { 'shared.bin': shared, 'org.bin': orgOnly });
      await git(dir, 'push', '-q', remote(alice, 'studio', 'assets'), 'main');
      assert.equal(await lfsUsage('/orgs/studio/quota', alice), shared.length + orgOnly.length);
      assert.equal(await lfsUsage('/user/quota', alice), aliceBefore);

      const r = await put('alice/media', sha256(shared), shared, basicOf(alice));
      assert.equal(r.status, 200, r.text);
      aliceBefore += shared.length;
      assert.equal(await lfsUsage('/user/quota', alice), aliceBefore);
    });

    it('refuses uploads once the owner is over its LFS quota', async () => {
      for (const [m, p, body] of [
        ['POST', '/admin/quota/rules', { name: 'lfs-none', limit: 0, subjects: ['size:git:lfs'] }],
        ['POST', '/admin/quota/groups', { name: 'lfs-limited' }],
        ['PUT', '/admin/quota/groups/lfs-limited/rules/lfs-none', undefined],
        ['PUT', '/admin/quota/groups/lfs-limited/users/erin', undefined],
      ] as const) {
        const r = await s.api(m, p, { token: s.admin.token, ...(body ? { body } : {}) });
        assert.ok(r.status === 201 || r.status === 204, `${m} ${p}: ${r.status} ${r.text}`);
      }
      await createRepo(erin, 'capped');
      const first = Buffer.from('within quota while nothing is used');
      const ok = await put('erin/capped', sha256(first), first, basicOf(erin));
      assert.equal(ok.status, 200, ok.text);
      const next = Buffer.from('over quota now');
      const r = await batch(
        'erin/capped',
        'upload',
        [{ oid: sha256(next), size: next.length }],
        basicOf(erin),
      );
      assert.equal(r.status, 413, r.text);
      assert.equal((r.body as unknown as { message: string }).message, 'quota exceeded');
      const p = await put('erin/capped', sha256(next), next, basicOf(erin));
      assert.equal(p.status, 413, p.text);
      // Downloads go on.
      const d = await batch(
        'erin/capped',
        'download',
        [{ oid: sha256(first), size: first.length }],
        basicOf(erin),
      );
      assert.equal(d.status, 200, d.text);
      assert.ok(d.body.objects[0]!.actions?.download);
    });

    it('moves the usage with a transferred repository', async () => {
      // What the quota's usage source finds is what was recorded.
      const fromSource = (await s.ctx.lfs.usageSource().totals(s.ctx.db, alice.id)).get(alice.id);
      assert.deepEqual(fromSource, { 'size:git:lfs': aliceBefore });
      const orgBefore = await lfsUsage('/orgs/studio/quota', alice);
      const r = await s.api('POST', '/repos/alice/secret/transfer', {
        token: alice.token,
        body: { new_owner: 'studio' },
      });
      assert.equal(r.status, 202, r.text);
      assert.equal(await lfsUsage('/orgs/studio/quota', alice), orgBefore + secret.length);
      assert.equal(await lfsUsage('/user/quota', alice), aliceBefore - secret.length);
      // Still downloadable at its new place.
      const b = await batch(
        'studio/secret',
        'download',
        [{ oid: secretOid, size: secret.length }],
        basicOf(alice),
      );
      assert.equal(b.status, 200, b.text);
      const got = await lfs<Buffer>('GET', b.body.objects[0]!.actions!.download!.href, {
        auth: basicOf(alice),
      });
      assert.ok(got.body.equals(secret));
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:git:lfs'),
        [],
      );
    });

    it("gives a fork its parent's objects, charged to the fork's owner", async () => {
      const f = await s.api('POST', '/repos/alice/media/forks', {
        token: carol.token,
        body: { name: 'media-fork' },
      });
      assert.equal(f.status, 202, f.text);
      const aliceNow = await lfsUsage('/user/quota', alice);
      assert.equal(await lfsUsage('/user/quota', carol), aliceNow);
      const b = await batch('carol/media-fork', 'download', [
        { oid: bigOid, size: files['big.bin']!.length },
      ]);
      const got = await lfs<Buffer>('GET', b.body.objects[0]!.actions!.download!.href);
      assert.ok(got.body.equals(files['big.bin']!));

      const d = await s.api('DELETE', '/repos/carol/media-fork', { token: carol.token });
      assert.equal(d.status, 204, d.text);
      assert.equal(await lfsUsage('/user/quota', carol), 0);
      // alice/media still holds them.
      assert.equal(await stored(bigOid), true);
      assert.equal(await lfsUsage('/user/quota', alice), aliceNow);
    });

    it('drops objects and usage with the repository, keeping blobs other repositories hold', async () => {
      const r = await s.api('DELETE', '/repos/alice/media', { token: alice.token });
      assert.equal(r.status, 204, r.text);
      assert.equal(await lfsUsage('/user/quota', alice), 0);
      // Only alice/media held these.
      assert.equal(await stored(bigOid), false);
      assert.equal(await stored(smallOid), false);
      // studio/assets holds `shared` too.
      assert.equal(await stored(sha256(shared)), true);
      const b = await batch(
        'studio/assets',
        'download',
        [{ oid: sha256(shared), size: shared.length }],
        basicOf(alice),
      );
      assert.ok(b.body.objects[0]!.actions?.download);

      const d = await s.api('DELETE', '/repos/studio/assets', { token: alice.token });
      assert.equal(d.status, 204, d.text);
      assert.equal(await stored(sha256(shared)), false);
      assert.equal(await stored(sha256(orgOnly)), false);
      assert.equal(await lfsUsage('/orgs/studio/quota', alice), secret.length);
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((x) => x.subject === 'size:git:lfs'),
        [],
      );
    });
  });
});
