// The generic package registry and the package core through HTTP, as curl would drive them:
// uploads, downloads, HEAD, deletes, conflicts, bad names, credentials, write access, quota
// (413 and the numbers, on an organization owner with a member uploading), an upload cut off
// half-way, the /api/v1/packages view, linking, and blobs stored once however often uploaded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed } from '../helpers/archives.js';

interface PackageJson {
  id: number;
  owner: { login: string };
  repository: { name: string } | null;
  creator: { login: string };
  type: string;
  name: string;
  version: string;
  html_url: string;
  created_at: string;
}
interface FileJson {
  id: number;
  Size: number;
  name: string;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}

const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;

/** Every file under the packages storage directory (temporary files included). */
function storedFiles(dir: string): string[] {
  const root = path.join(dir, 'packages');
  if (!fs.existsSync(root)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(root, p));
    }
  };
  walk(root);
  return out;
}

describe('generic package registry', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  const gen = (owner: string, rest: string) => `${s.url}/api/packages/${owner}/generic/${rest}`;

  async function put(url: string, body: Buffer | string, auth?: string) {
    return fetch(url, {
      method: 'PUT',
      body: body as string | Buffer<ArrayBuffer>,
      headers: auth ? { authorization: auth } : {},
    });
  }

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
  });
  after(async () => s.close());

  it('uploads, downloads, HEADs and deletes a file', async () => {
    const content = crypto.randomBytes(100_000);
    let r = await put(gen('alice', 'tool/1.0.0/tool.bin'), content, `token ${alice.token}`);
    assert.equal(r.status, 201, await r.text());
    r = await fetch(gen('alice', 'tool/1.0.0/tool.bin'));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String(content.length));
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(content));
    r = await fetch(gen('alice', 'tool/1.0.0/tool.bin'), { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String(content.length));
    r = await fetch(gen('alice', 'tool/1.0.0/tool.bin'), { headers: { range: 'bytes=10-19' } });
    assert.equal(r.status, 206);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(content.subarray(10, 20)));

    // The files view: sizes and digests as computed on the way in.
    const files = await s.api<FileJson[]>('GET', '/packages/alice/generic/tool/1.0.0/files', {
      token: alice.token,
    });
    assert.equal(files.status, 200);
    assert.equal(files.body.length, 1);
    const f = files.body[0]!;
    assert.equal(f.Size, content.length);
    assert.equal(f.name, 'tool.bin');
    assert.equal(f.sha256, crypto.createHash('sha256').update(content).digest('hex'));
    assert.equal(f.sha512, crypto.createHash('sha512').update(content).digest('hex'));
    assert.equal(f.md5, crypto.createHash('md5').update(content).digest('hex'));
    assert.equal(f.sha1, crypto.createHash('sha1').update(content).digest('hex'));

    // Downloads are counted (the full GET; HEAD and later range parts do not count).
    const row = await s.ctx.db
      .selectFrom('package_version')
      .select('download_count')
      .where('lower_version', '=', '1.0.0')
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.download_count), 1);

    r = await fetch(gen('alice', 'tool/1.0.0/tool.bin'), {
      method: 'DELETE',
      headers: { authorization: basic('alice', alice.password) },
    });
    assert.equal(r.status, 204);
    r = await fetch(gen('alice', 'tool/1.0.0/tool.bin'));
    assert.equal(r.status, 404);
    // The last file took its version (and package) with it, and the blob is gone.
    const v = await s.api('GET', '/packages/alice/generic/tool/1.0.0', { token: alice.token });
    assert.equal(v.status, 404);
    assert.deepEqual(
      storedFiles(s.dataDir).filter((p) => !p.startsWith('.tmp')),
      [],
    );
  });

  it('computes the same digests for large uploads (hashed off the main thread), with and without a length', async () => {
    const content = crypto.randomBytes(9 * 1024 * 1024 + 123);
    const auth = `token ${alice.token}`;
    let r = await put(gen('alice', 'large/1/sized.bin'), content, auth);
    assert.equal(r.status, 201, await r.text());
    // Without Content-Length (chunked): the length is unknown until the end.
    r = await fetch(gen('alice', 'large/1/chunked.bin'), {
      method: 'PUT',
      headers: { authorization: auth },
      body: new Blob([content]).stream(),
      duplex: 'half',
    } as RequestInit);
    assert.equal(r.status, 201, await r.text());
    const files = await s.api<FileJson[]>('GET', '/packages/alice/generic/large/1/files', {
      token: alice.token,
    });
    const digest = (a: string) => crypto.createHash(a).update(content).digest('hex');
    for (const f of files.body) {
      assert.equal(f.Size, content.length);
      assert.deepEqual(
        [f.md5, f.sha1, f.sha256, f.sha512],
        [digest('md5'), digest('sha1'), digest('sha256'), digest('sha512')],
      );
    }
    assert.equal(files.body.length, 2);
    const dl = await fetch(gen('alice', 'large/1/chunked.bin'));
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(content));
    await fetch(gen('alice', 'large/1'), { method: 'DELETE', headers: { authorization: auth } });
  });

  it('refuses a duplicate file with 409 and adds other files to the version', async () => {
    const auth = `token ${alice.token}`;
    assert.equal((await put(gen('alice', 'dup/1/a.txt'), 'a', auth)).status, 201);
    const again = await put(gen('alice', 'dup/1/a.txt'), 'other', auth);
    assert.equal(again.status, 409);
    assert.equal((await put(gen('alice', 'dup/1/b.txt'), 'b', auth)).status, 201);
    const files = await s.api<FileJson[]>('GET', '/packages/alice/generic/dup/1/files', {
      token: alice.token,
    });
    assert.deepEqual(
      files.body.map((f) => f.name),
      ['a.txt', 'b.txt'],
    );
    // Deleting the version removes both files.
    const del = await fetch(gen('alice', 'dup/1'), { method: 'DELETE', headers: { authorization: auth } });
    assert.equal(del.status, 204);
    assert.equal((await fetch(gen('alice', 'dup/1/a.txt'))).status, 404);
  });

  it('answers 400 for invalid names, versions and file names, as Forgejo', async () => {
    const auth = `token ${alice.token}`;
    for (const p of [
      'bad%20name/1/f.txt',
      'ok/1/bad%3Cfile',
      'ok/%20v1/f.txt',
      'ok/1/..',
      '-/1/f.txt',
      'ok/1/%20f',
    ]) {
      const r = await put(gen('alice', p), 'x', auth);
      // `ok/1/..` reaches the server as `ok/`, a path with other methods only: 405.
      assert.ok([400, 404, 405].includes(r.status), `${p}: ${r.status}`);
      if (!p.endsWith('..')) assert.equal(r.status, 400, p);
      const body = (await r.json()) as { message: string };
      assert.ok(body.message);
    }
    // `.` and `..` as a name, a version or a file name, sent as they are (a client would remove them).
    const used = await packagesUsed(s, alice.token);
    for (const p of ['../1/f.txt', './1/f.txt', 'ok/../f.txt', 'ok/./f.txt', 'ok/1/..', 'ok/1/.']) {
      const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        // A path given apart from the URL is sent as it is (a URL would lose its dot segments).
        const req = http.request(
          {
            host: '127.0.0.1',
            port: new URL(s.url).port,
            path: `/api/packages/alice/generic/${p}`,
            method: 'PUT',
            headers: { authorization: auth, 'content-length': '1' },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (d: string) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end('x');
      });
      assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
      assert.match(r.body, /invalid/, p);
    }
    await assertNothingKept(s, [], alice.token, used);
    const dotted = await s.ctx.db
      .selectFrom('package')
      .select('name')
      .where('name', 'in', ['.', '..'])
      .execute();
    assert.deepEqual(dotted, []);
    // What Forgejo allows in a file name: spaces and punctuation inside.
    const r = await put(
      gen('alice', 'ok/1/my%20file%20(1)%20%5Bv%5D%2B%3D~!%40%23%24%25%5E%26.txt'),
      'x',
      auth,
    );
    assert.equal(r.status, 201, await r.text());
  });

  it('asks for credentials with 401 and WWW-Authenticate', async () => {
    const r = await put(gen('alice', 'anon/1/f.txt'), 'x');
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    const wrong = await put(gen('alice', 'anon/1/f.txt'), 'x', basic('alice', 'wrong-password'));
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /^Basic realm=/);
  });

  it("asks again (401) for writes to another user's packages and tokens without write:package", async () => {
    // Forgejo's answer: 401 with the challenge, as to no credentials at all.
    let r = await put(gen('alice', 'theirs/1/f.txt'), 'x', `token ${bob.token}`);
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    assert.match(((await r.json()) as { message: string }).message, /bob may not write packages of alice/);
    const readOnly = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: ['alice', alice.password],
      body: { name: 'ro', scopes: ['read:package'] },
    });
    r = await put(gen('alice', 'theirs/1/f.txt'), 'x', `Bearer ${readOnly.body.sha1}`);
    assert.equal(r.status, 401);
    assert.match(((await r.json()) as { message: string }).message, /write:package/);
    // The REST API answers 403 to the same account.
    const rest = await s.api('DELETE', '/packages/alice/generic/theirs/1', { token: bob.token });
    assert.equal(rest.status, 403);
    // The password as basic auth, and a token as the basic password, both write.
    r = await put(gen('alice', 'mine/1/f.txt'), 'x', basic('alice', alice.password));
    assert.equal(r.status, 201);
    r = await put(gen('alice', 'mine/1/g.txt'), 'x', basic('alice', alice.token));
    assert.equal(r.status, 201);
    // The site administrator may write anyone's packages.
    r = await put(gen('alice', 'mine/1/h.txt'), 'x', `token ${s.admin.token}`);
    assert.equal(r.status, 201);
  });

  it('stores the same content once (dedup) and keeps it until its last file goes', async () => {
    const content = crypto.randomBytes(4096);
    const sha = crypto.createHash('sha256').update(content).digest('hex');
    const auth = `token ${alice.token}`;
    assert.equal((await put(gen('alice', 'dd/1/one.bin'), content, auth)).status, 201);
    assert.equal((await put(gen('alice', 'dd/2/two.bin'), content, auth)).status, 201);
    const blobs = storedFiles(s.dataDir).filter((p) => p.endsWith(sha));
    assert.deepEqual(blobs, [`${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`]);
    const rows = await s.ctx.db
      .selectFrom('package_blob')
      .selectAll()
      .where('hash_sha256', '=', sha)
      .execute();
    assert.equal(rows.length, 1);
    await fetch(gen('alice', 'dd/1'), { method: 'DELETE', headers: { authorization: auth } });
    assert.equal(storedFiles(s.dataDir).filter((p) => p.endsWith(sha)).length, 1);
    const r = await fetch(gen('alice', 'dd/2/two.bin'));
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(content));
    await fetch(gen('alice', 'dd/2'), { method: 'DELETE', headers: { authorization: auth } });
    assert.equal(storedFiles(s.dataDir).filter((p) => p.endsWith(sha)).length, 0);
  });

  it('leaves no row and no blob behind when an upload is cut off half-way', async () => {
    const before = storedFiles(s.dataDir);
    const url = new URL(gen('alice', 'cut/1/big.bin'));
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'PUT',
        headers: { authorization: `token ${alice.token}`, 'content-length': String(10 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(crypto.randomBytes(1024 * 1024));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    // The server notices the closed connection; give it a moment to clean up.
    for (let i = 0; i < 50; i++) {
      if (storedFiles(s.dataDir).length === before.length) break;
      await sleep(50);
    }
    assert.deepEqual(storedFiles(s.dataDir), before);
    const v = await s.api('GET', '/packages/alice/generic/cut/1', { token: alice.token });
    assert.equal(v.status, 404);
  });

  describe('organization owner', () => {
    let carol: { name: string; password: string; token: string };
    before(async () => {
      carol = await s.createUser('carol');
      let r = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'pkg-org' } });
      assert.equal(r.status, 201, r.text);
      r = await s.api<{ id: number }>('POST', '/orgs/pkg-org/teams', {
        token: alice.token,
        body: { name: 'publishers', permission: 'write', units_map: { 'repo.packages': 'write' } },
      });
      assert.equal(r.status, 201, r.text);
      const teamId = (r.body as { id: number }).id;
      r = await s.api('PUT', `/teams/${teamId}/members/carol`, { token: alice.token });
      assert.equal(r.status, 204, r.text);
    });

    it('counts a member’s uploads to the organization and lists them', async () => {
      const auth = `token ${carol.token}`;
      assert.equal((await put(gen('pkg-org', 'lib/1.0/a.bin'), Buffer.alloc(1000, 1), auth)).status, 201);
      assert.equal((await put(gen('pkg-org', 'lib/1.0/b.bin'), Buffer.alloc(500, 2), auth)).status, 201);
      assert.equal((await put(gen('pkg-org', 'lib/2.0/a.bin'), Buffer.alloc(1000, 1), auth)).status, 201);
      // bob is no member: 401, as Forgejo answers.
      assert.equal((await put(gen('pkg-org', 'lib/3.0/a.bin'), 'x', `token ${bob.token}`)).status, 401);

      const q = await s.api<{ used: { size: { assets: { packages: { all: number } } } } }>(
        'GET',
        '/orgs/pkg-org/quota',
        { token: alice.token },
      );
      assert.equal(q.status, 200, q.text);
      assert.equal(q.body.used.size.assets.packages.all, 2500);
      const items = await s.api<Array<{ name: string; version: string; size: number; type: string }>>(
        'GET',
        '/orgs/pkg-org/quota/packages',
        { token: alice.token },
      );
      assert.equal(items.status, 200, items.text);
      assert.deepEqual(
        items.body.map((i) => [i.name, i.version, i.size, i.type]),
        [
          ['lib', '1.0', 1500, 'generic'],
          ['lib', '2.0', 1000, 'generic'],
        ],
      );
      assert.equal(items.headers.get('x-total-count'), '2');

      // Deleting a file and a version subtracts their sizes; recalculation agrees.
      let r = await fetch(gen('pkg-org', 'lib/1.0/b.bin'), {
        method: 'DELETE',
        headers: { authorization: auth },
      });
      assert.equal(r.status, 204);
      r = await fetch(gen('pkg-org', 'lib/2.0'), { method: 'DELETE', headers: { authorization: auth } });
      assert.equal(r.status, 204);
      const after = await s.api<{ used: { size: { assets: { packages: { all: number } } } } }>(
        'GET',
        '/orgs/pkg-org/quota',
        { token: alice.token },
      );
      assert.equal(after.body.used.size.assets.packages.all, 1000);
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:assets:packages:all'),
        [],
      );
    });

    it('lists versions in /api/v1/packages/{owner}, with type and q filters and paging', async () => {
      const auth = `token ${carol.token}`;
      await put(gen('pkg-org', 'other/0.1/x.bin'), 'x', auth);
      let r = await s.api<PackageJson[]>('GET', '/packages/pkg-org', { token: carol.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.map((p) => `${p.name}@${p.version}`),
        ['other@0.1', 'lib@1.0'],
      );
      const p = r.body[1]!;
      assert.equal(p.owner.login, 'pkg-org');
      assert.equal(p.creator.login, 'carol');
      assert.equal(p.type, 'generic');
      assert.equal(p.repository, null);
      assert.match(p.created_at, /^\d{4}-\d\d-\d\dT/);
      r = await s.api<PackageJson[]>('GET', '/packages/pkg-org?q=oth&type=generic', { token: carol.token });
      assert.deepEqual(
        r.body.map((x) => x.name),
        ['other'],
      );
      r = await s.api<PackageJson[]>('GET', '/packages/pkg-org?type=npm', { token: carol.token });
      assert.deepEqual(r.body, []);
      r = await s.api<PackageJson[]>('GET', '/packages/pkg-org?limit=1&page=2', { token: carol.token });
      assert.equal(r.headers.get('x-total-count'), '2');
      assert.equal(r.body[0]!.name, 'lib');
      assert.match(r.headers.get('link') ?? '', /rel="first"/);
      const one = await s.api<PackageJson>('GET', '/packages/pkg-org/generic/lib/1.0', {
        token: carol.token,
      });
      assert.equal(one.status, 200);
      assert.equal(one.body.version, '1.0');
      // Deleting through the API.
      const del = await s.api('DELETE', '/packages/pkg-org/generic/other/0.1', { token: carol.token });
      assert.equal(del.status, 204);
      const del2 = await s.api('DELETE', '/packages/pkg-org/generic/lib/1.0', { token: bob.token });
      assert.equal(del2.status, 403);
    });

    it('links a package to a repository and unlinks it; a linked package reads as its repository', async () => {
      let r = await s.api('POST', '/orgs/pkg-org/repos', {
        token: alice.token,
        body: { name: 'secret', private: true },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', '/packages/pkg-org/generic/lib/-/link/nope', { token: carol.token });
      assert.equal(r.status, 404);
      r = await s.api('POST', '/packages/pkg-org/generic/lib/-/link/secret', { token: carol.token });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', '/packages/pkg-org/generic/lib/-/link/secret', { token: alice.token });
      assert.equal(r.status, 400);
      const one = await s.api<PackageJson>('GET', '/packages/pkg-org/generic/lib/1.0', {
        token: alice.token,
      });
      assert.equal(one.body.repository?.name, 'secret');
      // bob cannot read the private repository, so not the package either.
      const dl = await fetch(gen('pkg-org', 'lib/1.0/a.bin'), {
        headers: { authorization: `token ${bob.token}` },
      });
      assert.equal(dl.status, 404);
      const anon = await fetch(gen('pkg-org', 'lib/1.0/a.bin'));
      assert.equal(anon.status, 401);
      r = await s.api('POST', '/packages/pkg-org/generic/lib/-/unlink', { token: alice.token });
      assert.equal(r.status, 204);
      const open = await fetch(gen('pkg-org', 'lib/1.0/a.bin'), {
        headers: { authorization: `token ${bob.token}` },
      });
      assert.equal(open.status, 200);
    });

    it('answers 413 once the owner is over quota for packages', async () => {
      let r = await s.api('POST', '/admin/quota/groups', {
        token: s.admin.token,
        body: {
          name: 'tiny',
          rules: [{ name: 'pkg-2k', limit: 2000, subjects: ['size:assets:packages:all'] }],
        },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', '/admin/users/pkg-org/quota/groups', {
        token: s.admin.token,
        body: { groups: ['tiny'] },
      });
      assert.equal(r.status, 204, r.text);
      const auth = `token ${carol.token}`;
      // 1000 used: this upload crosses the limit and passes (as in Forgejo); the next is refused.
      assert.equal((await put(gen('pkg-org', 'q/1/a.bin'), Buffer.alloc(1500, 3), auth)).status, 201);
      const over = await put(gen('pkg-org', 'q/1/b.bin'), 'x', auth);
      assert.equal(over.status, 413);
    });
  });
});
