// The Go module proxy driven by the real `go` command (Debian's golang-go), with a GOPATH,
// module cache, build cache and HOME of its own and GOPROXY pointing at Anvil alone (no sum
// database, no other proxy, no network beyond this machine): module zips uploaded with PUT, then
// `go get` and `go mod download` in a consumer module. A private owner is reached the way the go
// command allows credentials: over HTTPS (a TLS proxy in front of Anvil, its certificate made with
// openssl) with a .netrc. Also the protocol over HTTP (list, info, mod, zip, latest, escaped
// paths), bad zips (400, nothing kept), duplicates (409), credentials (401 + challenge), quota
// (413), LIMIT_SIZE_GO (403), the package API, linking, cleanup rules and the webhook.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, zip } from '../helpers/archives.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A module zip as the go command makes it: every file under `{module}@{version}/`. */
function moduleZip(module: string, version: string, files: Record<string, string>): Buffer {
  return zip(Object.fromEntries(Object.entries(files).map(([n, c]) => [`${module}@${version}/${n}`, c])));
}

const helloZip = (version: string, greeting: string) =>
  moduleZip('example.com/hello', version, {
    'go.mod': 'module example.com/hello\n\ngo 1.19\n',
    'hello.go': `package hello\n\n// Greeting says hello.\nfunc Greeting() string { return ${JSON.stringify(greeting)} }\n`,
    LICENSE: 'MIT\n',
  });

describe('Go module proxy (go client)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let proxy: string;

  /** Runs the go command in `cwd` with the test's own GOPATH, caches and HOME. */
  function go(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn('go', args, {
        cwd,
        env: {
          PATH: process.env['PATH'],
          HOME: work,
          GOENV: 'off',
          GOPATH: path.join(work, 'gopath'),
          GOMODCACHE: path.join(work, 'gopath', 'pkg', 'mod'),
          GOCACHE: path.join(work, 'gocache'),
          GOPROXY: proxy,
          GOSUMDB: 'off',
          GONOSUMDB: '*',
          GONOSUMCHECK: '1',
          GOINSECURE: '127.0.0.1',
          GOFLAGS: '-mod=mod -modcacherw',
          GOTOOLCHAIN: 'local',
          GO111MODULE: 'on',
          GOTELEMETRY: 'off',
          CGO_ENABLED: '0',
          ...env,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** A consumer module in a fresh directory, importing example.com/hello. */
  function consumer(): string {
    const dir = fs.mkdtempSync(path.join(work, 'consumer-'));
    fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/consumer\n\ngo 1.19\n');
    fs.writeFileSync(
      path.join(dir, 'main.go'),
      'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/hello"\n)\n\nfunc main() { fmt.Println(hello.Greeting()) }\n',
    );
    return dir;
  }

  const upload = (owner: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${owner}/go/upload`, {
      method: 'PUT',
      headers: auth ? { authorization: auth } : {},
      body: new Uint8Array(body),
    });
  const bearer = (token: string) => `Bearer ${token}`;
  const get = (p: string, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, { headers: auth ? { authorization: auth } : {} });

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-go-'));
    proxy = `${s.url}/api/packages/u/go`;
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('takes module zips and serves the GOPROXY protocol; the package API, webhook and files', async () => {
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
    const v100 = helloZip('v1.0.0', 'hello, one');
    for (const body of [v100, helloZip('v1.1.0', 'hello, one point one'), helloZip('v1.2.0-rc.1', 'rc')]) {
      const r = await upload('u', body, bearer(u.token));
      assert.equal(r.status, 201, await r.text());
    }
    // A module with no go.mod, and one with upper-case letters (escaped in GOPROXY paths).
    const bare = moduleZip('example.com/bare', 'v0.1.0', { 'bare.go': 'package bare\n' });
    assert.equal((await upload('u', bare, bearer(u.token))).status, 201);
    const upper = moduleZip('example.com/Upper/Lib', 'v2.0.0-Beta', {
      'go.mod': 'module example.com/Upper/Lib\n',
    });
    assert.equal((await upload('u', upper, bearer(u.token))).status, 201);

    const list = await get('u/go/example.com/hello/@v/list');
    assert.equal(list.status, 200);
    assert.match(list.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await list.text(), 'v1.0.0\nv1.1.0\nv1.2.0-rc.1\n');
    const info = await get('u/go/example.com/hello/@v/v1.0.0.info');
    assert.equal(info.status, 200);
    const infoBody = (await info.json()) as { Version: string; Time: string };
    assert.equal(infoBody.Version, 'v1.0.0');
    assert.match(infoBody.Time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // @latest is the highest release, not the pre-release uploaded last.
    assert.equal(
      ((await (await get('u/go/example.com/hello/@latest')).json()) as { Version: string }).Version,
      'v1.1.0',
    );
    assert.equal(
      await (await get('u/go/example.com/hello/@v/v1.0.0.mod')).text(),
      'module example.com/hello\n\ngo 1.19\n',
    );
    assert.equal(
      await (await get('u/go/example.com/bare/@v/v0.1.0.mod')).text(),
      'module example.com/bare\n',
    );
    const z = await get('u/go/example.com/hello/@v/v1.0.0.zip');
    assert.equal(z.status, 200);
    assert.equal(z.headers.get('content-type'), 'application/zip');
    assert.ok(Buffer.from(await z.arrayBuffer()).equals(v100));
    assert.equal(await (await get('u/go/example.com/!upper/!lib/@v/list')).text(), 'v2.0.0-Beta\n');
    assert.equal(
      ((await (await get('u/go/example.com/!upper/!lib/@v/v2.0.0-!beta.info')).json()) as { Version: string })
        .Version,
      'v2.0.0-Beta',
    );
    // What is not there, or not the protocol: 404 in plain text (the go command prints it).
    for (const p of [
      'example.com/nothing/@v/list',
      'example.com/hello/@v/v9.9.9.info',
      'example.com/hello/@v/v1.0.0.tar',
      'example.com/hello',
      'example.com/Hello/@v/list',
      'sumdb/sum.golang.org/supported',
    ]) {
      const r = await get(`u/go/${p}`);
      assert.equal(r.status, 404, p);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/, p);
    }
    assert.equal((await get('nobody/go/example.com/hello/@v/list')).status, 404);

    // The package API: one entry per version, the zip's digests, and the webhook.
    const listed = await s.api<Array<{ type: string; name: string; version: string }>>(
      'GET',
      '/packages/u?type=go',
      {
        token: u.token,
      },
    );
    assert.deepEqual(listed.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'example.com/Upper/Lib@v2.0.0-Beta',
      'example.com/bare@v0.1.0',
      'example.com/hello@v1.0.0',
      'example.com/hello@v1.1.0',
      'example.com/hello@v1.2.0-rc.1',
    ]);
    const files = await s.api<Array<{ name: string; Size: number; sha256: string; md5: string }>>(
      'GET',
      `/packages/u/go/${encodeURIComponent('example.com/hello')}/v1.0.0/files`,
      { token: u.token },
    );
    assert.equal(files.status, 200, files.text);
    assert.deepEqual(
      files.body.map((f) => [f.name, f.Size, f.sha256]),
      [['v1.0.0.zip', v100.length, sha256(v100)]],
    );
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['event_type', 'payload'])
      .where('hook_id', '=', hook.body.id)
      .execute();
    assert.equal(tasks.length, 5);
    const payload = JSON.parse(tasks[0]!.payload) as {
      action: string;
      package: { type: string; name: string; version: string };
    };
    assert.deepEqual(
      [payload.action, payload.package.type, payload.package.name, payload.package.version],
      ['created', 'go', 'example.com/hello', 'v1.0.0'],
    );
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: u.token });
  });

  it('go get and go mod download fetch modules from Anvil as the only proxy', async () => {
    const dir = consumer();
    let r = await go(['get', 'example.com/hello@latest'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(fs.readFileSync(path.join(dir, 'go.mod'), 'utf8'), /require example\.com\/hello v1\.1\.0/);
    r = await go(['list', '-m', '-versions', 'example.com/hello'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'example.com/hello v1.0.0 v1.1.0 v1.2.0-rc.1');
    // The package's sources as the go command sees them (listed, not compiled: no build cache to fill).
    r = await go(['list', '-f', '{{.Dir}} {{.GoFiles}}', 'example.com/hello'], dir);
    assert.equal(r.code, 0, r.stderr);
    const [pkgDir, goFiles] = r.stdout.trim().split(' ');
    assert.equal(goFiles, '[hello.go]');
    assert.match(fs.readFileSync(path.join(pkgDir!, 'hello.go'), 'utf8'), /hello, one point one/);

    r = await go(['get', 'example.com/hello@v1.0.0'], dir);
    assert.equal(r.code, 0, r.stderr);
    r = await go(['mod', 'download', '-json', 'example.com/hello@v1.0.0', 'example.com/bare@v0.1.0'], dir);
    assert.equal(r.code, 0, r.stderr);
    const downloaded = r.stdout
      .split(/\n(?=\{)/)
      .map((j) => JSON.parse(j) as { Path: string; Version: string; Zip: string; Error?: string });
    assert.deepEqual(
      downloaded.map((d) => [d.Path, d.Version, d.Error]),
      [
        ['example.com/hello', 'v1.0.0', undefined],
        ['example.com/bare', 'v0.1.0', undefined],
      ],
    );
    assert.ok(fs.readFileSync(downloaded[0]!.Zip).equals(helloZip('v1.0.0', 'hello, one')));
    // A module this proxy does not have: the go command fails with the server's answer.
    r = await go(['get', 'example.com/missing@v1.0.0'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /404 Not Found/);
  });

  it('refuses zips that are no module zips with 400 and keeps nothing; a version that exists with 409', async () => {
    const used = await packagesUsed(s, u.token);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['bytes that are no zip', crypto.randomBytes(500), /not a valid zip archive/],
      ['an empty body', Buffer.alloc(0), /not a valid zip archive/],
      ['a zip cut short', helloZip('v3.0.0', 'x').subarray(0, 100), /not a valid zip archive/],
      ['files outside {module}@{version}/', zip({ 'hello.go': 'package hello\n' }), /no files under/],
      [
        'two prefixes',
        zip({ 'example.com/a@v1.0.0/a.go': 'package a\n', 'example.com/b@v1.0.0/b.go': 'package b\n' }),
        /outside example\.com\/a@v1\.0\.0\//,
      ],
      ['a version without v', moduleZip('example.com/a', '1.0.0', { 'a.go': 'x' }), /invalid module version/],
      [
        'a version that is no semver',
        moduleZip('example.com/a', 'v1.0', { 'a.go': 'x' }),
        /invalid module version/,
      ],
      ['a path without a dot first', moduleZip('hello', 'v1.0.0', { 'a.go': 'x' }), /invalid module path/],
      ['a path with ..', moduleZip('example.com/../x', 'v1.0.0', { 'a.go': 'x' }), /invalid module path/],
    ];
    for (const [what, body, problem] of cases) {
      const r = await upload('u', body, bearer(u.token));
      const text = await r.text();
      assert.equal(r.status, 400, `${what}: ${text}`);
      assert.match(text, problem, what);
    }
    await assertNothingKept(
      s,
      cases.map((c) => c[1]).filter((b) => b.length > 0),
      u.token,
      used,
    );
    const dup = await upload('u', helloZip('v1.0.0', 'again'), bearer(u.token));
    assert.equal(dup.status, 409);
    assert.match(await dup.text(), /already exists/);
  });

  it('asks for credentials with 401 (Basic challenge), also of accounts that may not write', async () => {
    const body = moduleZip('example.com/creds', 'v1.0.0', { 'a.go': 'package a\n' });
    for (const auth of [undefined, 'Bearer not-a-token', bearer(other.token)]) {
      const r = await upload('u', body, auth);
      assert.equal(r.status, 401, auth);
      assert.equal(r.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
    const ro = await s.api<{ sha1: string }>('POST', '/users/u/tokens', {
      basic: ['u', u.password],
      body: { name: 'go-read', scopes: ['read:package'] },
    });
    const scoped = await upload('u', body, bearer(ro.body.sha1));
    assert.equal(scoped.status, 401);
    assert.match(await scoped.text(), /write:package/);
    assert.equal((await get('u/go/example.com/creds/@v/list')).status, 404);
  });

  it("serves a private owner's modules over HTTPS with the credentials of a .netrc", async () => {
    const p = await s.createUser('p');
    assert.equal((await upload('p', helloZip('v1.0.0', 'private hello'), bearer(p.token))).status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await get('p/go/example.com/hello/@v/list')).status, 401);
    const asOther = await get('p/go/example.com/hello/@v/list', bearer(other.token));
    assert.equal(asOther.status, 401);
    assert.equal(asOther.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    assert.equal(await (await get('p/go/example.com/hello/@v/list', bearer(p.token))).text(), 'v1.0.0\n');

    // The go command sends credentials only over HTTPS: a TLS proxy in front of Anvil.
    const tls = fs.mkdtempSync(path.join(work, 'tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1']
        .concat(['-addext', 'subjectAltName=IP:127.0.0.1'])
        .concat(['-keyout', path.join(tls, 'key.pem'), '-out', path.join(tls, 'cert.pem')]),
      { stdio: 'ignore' },
    );
    const target = new URL(s.url);
    const front = https.createServer(
      { key: fs.readFileSync(path.join(tls, 'key.pem')), cert: fs.readFileSync(path.join(tls, 'cert.pem')) },
      (req, res) => {
        const out = http.request(
          {
            host: target.hostname,
            port: target.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (back) => {
            res.writeHead(back.statusCode ?? 502, back.headers);
            back.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        req.pipe(out);
      },
    );
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const port = (front.address() as { port: number }).port;
      const env = {
        GOPROXY: `https://127.0.0.1:${port}/api/packages/p/go`,
        SSL_CERT_FILE: path.join(tls, 'cert.pem'),
        NETRC: path.join(work, 'netrc-p'),
        GOMODCACHE: path.join(work, 'private-modcache'),
      };
      const dir = consumer();
      // Without credentials: the 401.
      fs.writeFileSync(env.NETRC, '');
      let r = await go(['get', 'example.com/hello@v1.0.0'], dir, env);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /401 Unauthorized/);
      fs.writeFileSync(env.NETRC, `machine 127.0.0.1 login p password ${p.token}\n`);
      r = await go(['get', 'example.com/hello@v1.0.0'], dir, env);
      assert.equal(r.code, 0, r.stderr);
      r = await go(['list', '-f', '{{.Dir}}', 'example.com/hello'], dir, env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(fs.readFileSync(path.join(r.stdout.trim(), 'hello.go'), 'utf8'), /private hello/);
    } finally {
      await new Promise<void>((resolve) => front.close(() => resolve()));
      front.closeAllConnections();
    }
  });

  it('links a module to a repository, applies cleanup rules, and deletes versions', async () => {
    const repo = await s.api('POST', '/user/repos', { token: u.token, body: { name: 'hello' } });
    assert.equal(repo.status, 201, repo.text);
    const name = encodeURIComponent('example.com/hello');
    const link = await s.api('POST', `/packages/u/go/${name}/-/link/hello`, { token: u.token });
    assert.equal(link.status, 201, link.text);
    const one = await s.api<{ repository: { full_name: string } | null }>(
      'GET',
      `/packages/u/go/${name}/v1.0.0`,
      {
        token: u.token,
      },
    );
    assert.equal(one.body.repository?.full_name, 'u/hello');

    const rule = await s.api<{ id: number }>('POST', '/packages/u/-/rules', {
      token: u.token,
      body: { type: 'go', keep_count: 1, remove_pattern: 'v1\\..*', match_full_name: false },
    });
    assert.equal(rule.status, 201, rule.text);
    const preview = await s.api<Array<{ name: string; version: string }>>(
      'GET',
      `/packages/u/-/rules/${rule.body.id}/preview`,
      { token: u.token },
    );
    assert.deepEqual(preview.body.map((v) => `${v.name}@${v.version}`).sort(), [
      'example.com/hello@v1.0.0',
      'example.com/hello@v1.1.0',
    ]);
    await s.api('DELETE', `/packages/u/-/rules/${rule.body.id}`, { token: u.token });

    const del = await s.api('DELETE', `/packages/u/go/${name}/v1.2.0-rc.1`, { token: u.token });
    assert.equal(del.status, 204, del.text);
    assert.equal(await (await get('u/go/example.com/hello/@v/list')).text(), 'v1.0.0\nv1.1.0\n');
  });

  it('answers 403 over LIMIT_SIZE_GO (administrators exempt) and 413 over quota', async () => {
    const big = moduleZip('example.com/big', 'v1.0.0', {
      'data.go': `package big\n// ${'x'.repeat(3000)}\n`,
    });
    s.config.packages.limitSizeGo = 1000;
    try {
      const r = await upload('u', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await upload('u', big, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeGo = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'go-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'go-tiny', rules: [{ name: 'go-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/go-tiny/users/q', { token: s.admin.token });
    // The upload that crosses the limit passes (as in Forgejo); the next one is refused.
    assert.equal((await upload('q', helloZip('v1.0.0', 'q'), bearer(q.token))).status, 201);
    assert.equal((await upload('q', helloZip('v1.1.0', 'q'), bearer(q.token))).status, 413);
  });
});
