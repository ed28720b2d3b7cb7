// The Debian registry driven by the real apt-get (Debian's apt), run against Anvil as its only
// source with a configuration of its own (APT_CONFIG: state, cache, sources, keyrings and
// auth.conf under a temporary directory, no system configuration, no lock), the repository key
// checked (`signed-by=` the downloaded repository.key; never `trusted=yes`). Packages are built in
// the test with `dpkg-deb --build` (xz, gzip, zstd and uncompressed control members), uploaded
// with PUT, then `apt-get update` and `apt-get download`. Also: a tampered InRelease and a wrong
// key fail the update, a private owner's repository needs auth.conf credentials, deletion removes a
// package from Packages (also through the package API), concurrent uploads all end up indexed,
// bad packages (400, nothing kept), duplicates (409), credentials (401 + challenge), the
// webhook, quota (413) and LIMIT_SIZE_DEBIAN (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import * as openpgp from 'openpgp';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed } from '../helpers/archives.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe('Debian registry (apt-get)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let n = 0;

  /** A .deb built by dpkg-deb (`compression` of its members: xz by default). */
  function deb(
    name: string,
    version: string,
    arch: string,
    opts: {
      compression?: 'xz' | 'gzip' | 'zstd' | 'none';
      extra?: string;
      payload?: string;
      nocheck?: boolean;
    } = {},
  ): Buffer {
    const dir = path.join(work, `build-${n++}`);
    fs.mkdirSync(path.join(dir, 'DEBIAN'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'usr', 'share', name), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'usr', 'share', name, 'hello.txt'),
      opts.payload ?? `${name} ${version}\n`,
    );
    fs.writeFileSync(
      path.join(dir, 'DEBIAN', 'control'),
      `Package: ${name}\nVersion: ${version}\nArchitecture: ${arch}\n` +
        'Maintainer: Anvil Tester <tester@example.com>\nHomepage: https://example.com/hello\n' +
        'Depends: libc6 (>= 2.17), base-files\n' +
        `${opts.extra ?? ''}Description: a greeting\n a longer description\n .\n of the greeting\n`,
    );
    const out = path.join(work, `${name}_${version}_${arch}-${n}.deb`);
    const check = opts.nocheck ? ['--nocheck'] : [];
    execFileSync(
      'dpkg-deb',
      [`-Z${opts.compression ?? 'xz'}`, ...check, '--root-owner-group', '--build', dir, out],
      {
        stdio: 'ignore',
      },
    );
    return fs.readFileSync(out);
  }

  const basic = (user: { name: string; token: string }) =>
    `Basic ${Buffer.from(`${user.name}:${user.token}`).toString('base64')}`;
  const upload = (owner: string, dist: string, comp: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${owner}/debian/pool/${dist}/${comp}/upload`, {
      method: 'PUT',
      headers: auth ? { authorization: auth } : {},
      body: new Uint8Array(body),
    });
  const get = (p: string, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, { headers: auth ? { authorization: auth } : {} });
  const text = async (p: string, auth?: string) => {
    const r = await get(p, auth);
    assert.equal(r.status, 200, `${p}: ${r.status}`);
    return r.text();
  };
  const bytes = async (p: string) => Buffer.from(await (await get(p)).arrayBuffer());

  /**
   * Runs apt-get with a configuration of its own under `root` (no system configuration: APT_CONFIG
   * names the only file read), sources `sources`, and auth.conf `auth`.
   */
  function apt(root: string, args: string[], sources: string, auth = ''): Promise<Run> {
    for (const d of ['state/lists/partial', 'cache/archives/partial', 'etc/parts', 'etc/trusted.d', 'out']) {
      fs.mkdirSync(path.join(root, d), { recursive: true });
    }
    fs.writeFileSync(path.join(root, 'sources.list'), sources);
    fs.writeFileSync(path.join(root, 'auth.conf'), auth, { mode: 0o600 });
    fs.writeFileSync(path.join(root, 'status'), '');
    const conf = {
      'Dir::State': path.join(root, 'state'),
      'Dir::State::status': path.join(root, 'status'),
      'Dir::Cache': path.join(root, 'cache'),
      'Dir::Etc::main': '/dev/null',
      'Dir::Etc::parts': path.join(root, 'etc', 'parts'),
      'Dir::Etc::sourcelist': path.join(root, 'sources.list'),
      'Dir::Etc::sourceparts': path.join(root, 'etc', 'parts'),
      'Dir::Etc::preferencesparts': path.join(root, 'etc', 'parts'),
      'Dir::Etc::trusted': path.join(root, 'etc', 'trusted.gpg'),
      'Dir::Etc::trustedparts': path.join(root, 'etc', 'trusted.d'),
      'Dir::Etc::netrc': path.join(root, 'auth.conf'),
      'Dir::Etc::netrcparts': path.join(root, 'etc', 'parts'),
      'Debug::NoLocking': 'true',
      'APT::Architecture': 'amd64',
      'APT::Architectures': 'amd64',
      'APT::Sandbox::User': os.userInfo().username,
      'Acquire::Languages': 'none',
      'Acquire::http::Proxy': 'DIRECT',
      'Acquire::Retries': '0',
      'Acquire::IndexTargets::deb::DEP-11::DefaultEnabled': 'false',
      'Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled': 'false',
    };
    fs.writeFileSync(
      path.join(root, 'apt.conf'),
      Object.entries(conf)
        .map(([k, v]) => `${k} "${v}";\n`)
        .join(''),
    );
    return new Promise((resolve, reject) => {
      const child = spawn('apt-get', ['-q', ...args], {
        cwd: path.join(root, 'out'),
        env: { PATH: process.env['PATH'], APT_CONFIG: path.join(root, 'apt.conf'), LC_ALL: 'C' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** A fresh apt root whose source is `url` (dist stable, main), the key `keyFile` checked. */
  function aptRoot(url: string, keyFile: string): { root: string; sources: string } {
    const root = fs.mkdtempSync(path.join(work, 'apt-'));
    return { root, sources: `deb [signed-by=${keyFile}] ${url} stable main\n` };
  }

  /** The owner's repository.key, saved where signed-by can name it (.asc: armored). */
  async function keyFile(owner: string, auth?: string): Promise<string> {
    const key = await text(`${owner}/debian/repository.key`, auth);
    const file = path.join(work, `${owner}-${n++}.asc`);
    fs.writeFileSync(file, key);
    return file;
  }

  let hello10: Buffer;
  let hello11: Buffer;
  let docAll: Buffer;

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-debian-'));
    hello10 = deb('hello-anvil', '1.0-1', 'amd64');
    hello11 = deb('hello-anvil', '1.1', 'amd64', { compression: 'gzip' });
    docAll = deb('anvil-doc', '1:0.1~rc1', 'all', { compression: 'zstd' });
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('takes .debs and writes Packages, Release, InRelease and Release.gpg signed with the owner key', async () => {
    const hook = await s.api<{ id: number }>('POST', '/user/hooks', {
      token: u.token,
      body: {
        type: 'forgejo',
        config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
        events: ['package'],
        active: true,
      },
    });
    assert.equal(hook.status, 201, hook.text);
    for (const body of [hello10, hello11, docAll]) {
      const r = await upload('u', 'stable', 'main', body, basic(u));
      assert.equal(r.status, 201, await r.text());
    }
    // The same file in another distribution is another file of the version.
    assert.equal((await upload('u', 'testing', 'contrib', hello10, basic(u))).status, 201);

    const packages = await text('u/debian/dists/stable/main/binary-amd64/Packages');
    const entries = packages.split('\n\n');
    assert.equal(entries.length, 3, packages);
    const hello = entries.find((e) => e.includes('Version: 1.0-1'))!;
    assert.match(
      hello,
      /^Package: hello-anvil\nVersion: 1\.0-1\nArchitecture: amd64\nMaintainer: Anvil Tester/,
    );
    assert.match(hello, /\nDescription: a greeting\n a longer description\n \.\n of the greeting\n/);
    assert.match(hello, /\nFilename: pool\/stable\/main\/hello-anvil_1\.0-1_amd64\.deb\n/);
    assert.match(hello, new RegExp(`\\nSize: ${hello10.length}\\n`));
    assert.match(hello, new RegExp(`\\nSHA256: ${sha256(hello10)}\\n`));
    assert.match(
      hello,
      /\nMD5sum: [0-9a-f]{32}\nSHA1: [0-9a-f]{40}\nSHA256: [0-9a-f]{64}\nSHA512: [0-9a-f]{128}\n?$/,
    );
    // Architecture all is in every architecture's index, and in its own.
    assert.ok(entries.some((e) => e.startsWith('Package: anvil-doc\nVersion: 1:0.1~rc1\nArchitecture: all')));
    assert.match(await text('u/debian/dists/stable/main/binary-all/Packages'), /^Package: anvil-doc\n/);
    const gz = await bytes('u/debian/dists/stable/main/binary-amd64/Packages.gz');
    assert.equal(zlib.gunzipSync(gz).toString(), packages);
    const xzBytes = await bytes('u/debian/dists/stable/main/binary-amd64/Packages.xz');
    assert.equal(execFileSync('xz', ['-dc'], { input: xzBytes }).toString(), packages);

    const release = await text('u/debian/dists/stable/Release');
    assert.match(
      release,
      /^Origin: Anvil\nLabel: Anvil\nSuite: stable\nCodename: stable\nComponents: main\n/,
    );
    assert.match(release, /\nArchitectures: all amd64\n/);
    assert.match(release, /\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d UTC\n/);
    for (const [file, body] of [
      ['main/binary-amd64/Packages', Buffer.from(packages)],
      ['main/binary-amd64/Packages.gz', gz],
      ['main/binary-amd64/Packages.xz', xzBytes],
    ] as const) {
      assert.ok(release.includes(` ${sha256(body)} ${body.length} ${file}\n`), file);
    }
    // Acquire-By-Hash: the same file by its digest.
    assert.ok(
      (await bytes(`u/debian/dists/stable/main/binary-amd64/by-hash/SHA256/${sha256(gz)}`)).equals(gz),
    );
    assert.equal(
      (await get(`u/debian/dists/stable/main/binary-i386/by-hash/SHA256/${sha256(gz)}`)).status,
      404,
    );

    // Both signatures verify with repository.key, and not with another owner's key.
    const key = await openpgp.readKey({ armoredKey: await text('u/debian/repository.key') });
    const inRelease = await text('u/debian/dists/stable/InRelease');
    const clear = await openpgp.readCleartextMessage({ cleartextMessage: inRelease });
    const checked = await openpgp.verify({ message: clear, verificationKeys: key, expectSigned: true });
    assert.equal(checked.data, release);
    const detached = await openpgp.readSignature({
      armoredSignature: await text('u/debian/dists/stable/Release.gpg'),
    });
    await openpgp.verify({
      message: await openpgp.createMessage({ binary: Buffer.from(release) }),
      signature: detached,
      verificationKeys: key,
      expectSigned: true,
    });
    const otherKey = await openpgp.readKey({ armoredKey: await text('other/debian/repository.key') });
    await assert.rejects(openpgp.verify({ message: clear, verificationKeys: otherKey, expectSigned: true }));

    const testing = await text('u/debian/dists/testing/contrib/binary-amd64/Packages');
    assert.match(testing, /Filename: pool\/testing\/contrib\/hello-anvil_1\.0-1_amd64\.deb/);
    assert.ok((await bytes('u/debian/pool/testing/contrib/hello-anvil_1.0-1_amd64.deb')).equals(hello10));
    const dl = await get('u/debian/pool/stable/main/hello-anvil_1.1_amd64.deb');
    assert.equal(dl.status, 200);
    assert.equal(dl.headers.get('content-type'), 'application/vnd.debian.binary-package');
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(hello11));
    for (const p of [
      'u/debian/pool/stable/main/hello-anvil_9.9_amd64.deb',
      'u/debian/pool/stable/contrib/hello-anvil_1.1_amd64.deb',
      'u/debian/pool/stable/main/nonsense.deb',
      'u/debian/dists/unknown/Release',
      'u/debian/dists/stable/Packages',
      'u/debian/dists/stable/main/binary-i386/Packages',
      'nobody/debian/dists/stable/Release',
    ]) {
      assert.equal((await get(p)).status, 404, p);
    }

    // The package API: one entry per version, the files, the metadata; and the webhook.
    const listed = await s.api<Array<{ name: string; version: string }>>('GET', '/packages/u?type=debian', {
      token: u.token,
    });
    assert.deepEqual(listed.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'anvil-doc@1:0.1~rc1',
      'hello-anvil@1.0-1',
      'hello-anvil@1.1',
    ]);
    const files = await s.api<Array<{ name: string; Size: number; sha256: string }>>(
      'GET',
      '/packages/u/debian/hello-anvil/1.0-1/files',
      { token: u.token },
    );
    assert.deepEqual(
      files.body.map((f) => [f.name, f.Size, f.sha256]),
      [
        ['hello-anvil_1.0-1_amd64.deb', hello10.length, sha256(hello10)],
        ['hello-anvil_1.0-1_amd64.deb', hello10.length, sha256(hello10)],
      ],
    );
    // One blob for the file uploaded twice.
    const blobs = await s.ctx.db
      .selectFrom('package_blob')
      .select('id')
      .where('hash_sha256', '=', sha256(hello10))
      .execute();
    assert.equal(blobs.length, 1);
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['payload'])
      .where('hook_id', '=', hook.body.id)
      .execute();
    assert.equal(tasks.length, 3);
    const payload = JSON.parse(tasks[0]!.payload) as {
      action: string;
      package: { type: string; name: string };
    };
    assert.deepEqual(
      [payload.action, payload.package.type, payload.package.name],
      ['created', 'debian', 'hello-anvil'],
    );
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: u.token });
  });

  it('apt-get update and download from Anvil as the only source, the key checked', async () => {
    const { root, sources } = aptRoot(`${s.url}/api/packages/u/debian`, await keyFile('u'));
    let r = await apt(root, ['update'], sources);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /^(W|E):/m);
    r = await apt(root, ['download', 'hello-anvil'], sources);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(fs.readFileSync(path.join(root, 'out', 'hello-anvil_1.1_amd64.deb')).equals(hello11));
    r = await apt(root, ['download', 'hello-anvil=1.0-1', 'anvil-doc'], sources);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(fs.readFileSync(path.join(root, 'out', 'hello-anvil_1.0-1_amd64.deb')).equals(hello10));
    // apt names the file with the epoch escaped.
    const doc = fs.readdirSync(path.join(root, 'out')).find((f) => f.startsWith('anvil-doc_'));
    assert.ok(doc && fs.readFileSync(path.join(root, 'out', doc)).equals(docAll), doc);
  });

  it('fails the update for a tampered InRelease and for a wrong key', async () => {
    // Another owner's key: the signature is not trusted.
    const wrong = aptRoot(`${s.url}/api/packages/u/debian`, await keyFile('other'));
    let r = await apt(wrong.root, ['update'], wrong.sources);
    assert.match(r.stdout + r.stderr, /NO_PUBKEY|not signed|signatures couldn't be verified/);
    r = await apt(wrong.root, ['download', 'hello-anvil'], wrong.sources);
    assert.notEqual(r.code, 0);

    // A proxy that changes one byte of InRelease's signed text.
    const target = new URL(s.url);
    const proxy = http.createServer((req, res) => {
      const out = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (back) => {
          const chunks: Buffer[] = [];
          back.on('data', (c: Buffer) => chunks.push(c));
          back.on('end', () => {
            let body = Buffer.concat(chunks);
            if (req.url?.endsWith('/InRelease'))
              body = Buffer.from(body.toString().replace('Suite: stable', 'Suite: stablE'));
            const headers = { ...back.headers, 'content-length': String(body.length) };
            res.writeHead(back.statusCode ?? 502, headers);
            res.end(body);
          });
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      const tampered = aptRoot(`http://127.0.0.1:${port}/api/packages/u/debian`, await keyFile('u'));
      r = await apt(tampered.root, ['update'], tampered.sources);
      assert.match(r.stdout + r.stderr, /BADSIG|signatures were invalid|not signed/);
      r = await apt(tampered.root, ['download', 'hello-anvil'], tampered.sources);
      assert.notEqual(r.code, 0);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      proxy.closeAllConnections();
    }
  });

  it("needs credentials for a private owner's repository (auth.conf)", async () => {
    const p = await s.createUser('p');
    assert.equal((await upload('p', 'stable', 'main', hello10, basic(p))).status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const path of ['p/debian/dists/stable/InRelease', 'p/debian/repository.key']) {
      const anon = await get(path);
      assert.equal(anon.status, 401, path);
      assert.equal(anon.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
      assert.equal((await get(path, basic(other))).status, 401, path);
    }
    const key = await keyFile('p', basic(p));
    const url = `${s.url}/api/packages/p/debian`;
    const { root, sources } = aptRoot(url, key);
    let r = await apt(root, ['update'], sources);
    assert.match(r.stdout + r.stderr, /401/);
    const auth = `machine ${url.replace(/^http:\/\//, 'http://')} login p password ${p.token}\n`;
    r = await apt(root, ['update'], sources, auth);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /^(W|E):/m);
    r = await apt(root, ['download', 'hello-anvil'], sources, auth);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(fs.readFileSync(path.join(root, 'out', 'hello-anvil_1.0-1_amd64.deb')).equals(hello10));
  });

  it('refuses what is no Debian package with 400 and keeps nothing; a duplicate with 409; credentials with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = deb('bad-case', '1.0', 'amd64');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(300), /no ar archive/],
      ['an empty body', Buffer.alloc(0), /no ar archive/],
      ['a .deb cut short', good.subarray(0, good.length - 40), /ends inside/],
      ['a bad package name', deb('Bad_Name', '1.0', 'amd64', { nocheck: true }), /package name is invalid/],
      [
        'a bad version',
        deb('bad-version', '1.0 beta', 'amd64', { nocheck: true }),
        /package version is invalid/,
      ],
      ['a bad architecture', deb('bad-arch', '1.0', 'AMD64', { nocheck: true }), /architecture is invalid/],
    ];
    for (const [what, body, problem] of cases) {
      const r = await upload('u', 'stable', 'main', body, basic(u));
      const t = await r.text();
      assert.equal(r.status, 400, `${what}: ${t}`);
      assert.match(t, problem, what);
    }
    const badName = await upload('u', 'st/able', 'main', good, basic(u));
    assert.equal(badName.status, 404);
    const badDist = await upload('u', '.hidden', 'main', good, basic(u));
    assert.equal(badDist.status, 400);
    assert.match(await badDist.text(), /invalid distribution/);
    await assertNothingKept(
      s,
      cases.map((c) => c[1]).filter((b) => b.length > 0),
      u.token,
      used,
    );
    const dup = await upload('u', 'stable', 'main', hello10, basic(u));
    assert.equal(dup.status, 409);
    assert.match(await dup.text(), /already exists/);

    for (const auth of [undefined, 'Basic bm9ib2R5Om5vdGhpbmc=', basic(other)]) {
      const r = await upload('u', 'stable', 'main', good, auth);
      assert.equal(r.status, 401, auth);
      assert.equal(r.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
    const del = await fetch(`${s.url}/api/packages/u/debian/pool/stable/main/hello-anvil/1.1/amd64`, {
      method: 'DELETE',
      headers: { authorization: basic(other) },
    });
    assert.equal(del.status, 401);
  });

  it('keeps the index whole under concurrent uploads, and removes deleted packages from it', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) => deb(`many-${i}`, '1.0', 'amd64'));
    const results = await Promise.all(bodies.map((b) => upload('u', 'many', 'main', b, basic(u))));
    assert.deepEqual(
      results.map((r) => r.status),
      bodies.map(() => 201),
    );
    const listed = () =>
      text('u/debian/dists/many/main/binary-amd64/Packages').then((t) =>
        [...t.matchAll(/^Package: (.+)$/gm)].map((m) => m[1]).sort(),
      );
    assert.deepEqual(await listed(), ['many-0', 'many-1', 'many-2', 'many-3', 'many-4', 'many-5']);

    // The format's own deletion.
    const del = await fetch(`${s.url}/api/packages/u/debian/pool/many/main/many-0/1.0/amd64`, {
      method: 'DELETE',
      headers: { authorization: basic(u) },
    });
    assert.equal(del.status, 204, await del.text());
    assert.deepEqual(await listed(), ['many-1', 'many-2', 'many-3', 'many-4', 'many-5']);
    const again = await fetch(`${s.url}/api/packages/u/debian/pool/many/main/many-0/1.0/amd64`, {
      method: 'DELETE',
      headers: { authorization: basic(u) },
    });
    assert.equal(again.status, 404);
    // The package API's deletion reaches the index too.
    const api = await s.api('DELETE', '/packages/u/debian/many-1/1.0', { token: u.token });
    assert.equal(api.status, 204, api.text);
    assert.deepEqual(await listed(), ['many-2', 'many-3', 'many-4', 'many-5']);
    // A file of a version that has others: the version stays, the distribution loses it.
    const keep = await fetch(`${s.url}/api/packages/u/debian/pool/testing/contrib/hello-anvil/1.0-1/amd64`, {
      method: 'DELETE',
      headers: { authorization: basic(u) },
    });
    assert.equal(keep.status, 204);
    assert.equal((await get('u/debian/dists/testing/Release')).status, 404);
    assert.equal((await get('u/debian/dists/testing/contrib/binary-amd64/Packages')).status, 404);
    assert.match(await text('u/debian/dists/stable/main/binary-amd64/Packages'), /Version: 1\.0-1/);
    // The last packages of a distribution: its files go with them.
    for (const i of [2, 3, 4, 5]) {
      assert.equal(
        (await s.api('DELETE', `/packages/u/debian/many-${i}/1.0`, { token: u.token })).status,
        204,
      );
    }
    assert.equal((await get('u/debian/dists/many/Release')).status, 404);
    assert.equal((await get('u/debian/dists/many/main/binary-amd64/Packages')).status, 404);
  });

  it('answers 403 over LIMIT_SIZE_DEBIAN (administrators exempt) and 413 over quota', async () => {
    const big = deb('big-one', '1.0', 'amd64', {
      compression: 'none',
      payload: crypto.randomBytes(4000).toString('hex'),
    });
    s.config.packages.limitSizeDebian = 1000;
    try {
      const r = await upload('u', 'stable', 'main', big, basic(u));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await upload('u', 'stable', 'main', big, basic(s.admin))).status, 201);
    } finally {
      s.config.packages.limitSizeDebian = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'deb-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'deb-tiny', rules: [{ name: 'deb-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/deb-tiny/users/q', { token: s.admin.token });
    assert.equal((await upload('q', 'stable', 'main', hello10, basic(q))).status, 201);
    assert.equal((await upload('q', 'stable', 'main', hello11, basic(q))).status, 413);
  });
});
