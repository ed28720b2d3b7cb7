// The npm registry driven by the real `npm` client (with a HOME and userconfig of its own, so the
// machine's npmrc is never read or written): publish (scoped and unscoped), install into a fresh
// project, dist-tags, deprecate and unpublish; and bad input sent as npm would send it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz } from '../helpers/archives.js';

interface Packument {
  name: string;
  description: string;
  'dist-tags': Record<string, string>;
  versions: Record<
    string,
    { version: string; deprecated?: string; dist: { integrity: string; shasum: string; tarball: string } }
  >;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('npm package registry (npm client)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let home: string;
  let registry: string;

  /** Runs npm in `cwd` with the test's own configuration only. */
  function npm(args: string[], cwd: string, userconfig = path.join(home, '.npmrc')): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env['PATH'],
        HOME: home,
        npm_config_userconfig: userconfig,
        npm_config_globalconfig: path.join(home, 'global-npmrc'),
        npm_config_cache: path.join(home, 'cache'),
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_loglevel: 'warn',
      };
      const child = spawn('npm', [...args, '--userconfig', userconfig], { cwd, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  function project(name: string, version: string, extra: Record<string, unknown> = {}): string {
    const dir = fs.mkdtempSync(path.join(home, 'pkg-'));
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name, version, description: `the ${name} package`, main: 'index.js', ...extra }),
    );
    fs.writeFileSync(
      path.join(dir, 'index.js'),
      `module.exports = ${JSON.stringify(`${name}@${version}`)};\n`,
    );
    return dir;
  }

  const packument = async (name: string) => {
    const r = await fetch(`${registry}${name.replace('/', '%2f')}`, {
      headers: { authorization: `Bearer ${u.token}` },
    });
    return { status: r.status, body: (r.status === 200 ? await r.json() : undefined) as Packument };
  };

  /** A publish document as npm builds it, for the bad-input cases. */
  function publishBody(name: string, version: string, tarball: Buffer, integrity?: string) {
    const file = `${name.replace(/^@[^/]+\//, '')}-${version}.tgz`;
    return {
      _id: name,
      name,
      'dist-tags': { latest: version },
      versions: {
        [version]: {
          name,
          version,
          dist: {
            integrity: integrity ?? `sha512-${crypto.createHash('sha512').update(tarball).digest('base64')}`,
            shasum: crypto.createHash('sha1').update(tarball).digest('hex'),
            tarball: `${registry}${name}/-/${file}`,
          },
        },
      },
      _attachments: {
        [file]: {
          content_type: 'application/octet-stream',
          data: tarball.toString('base64'),
          length: tarball.length,
        },
      },
    };
  }

  const rawPublish = (name: string, body: unknown, token?: string) =>
    fetch(`${registry}${name.replace('/', '%2f')}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-npm-'));
    registry = `${s.url}/api/packages/u/npm/`;
    const host = registry.replace(/^http:/, '');
    fs.writeFileSync(
      path.join(home, '.npmrc'),
      [`registry=${registry}`, `@s:registry=${registry}`, `${host}:_authToken=${u.token}`, ''].join('\n'),
    );
  });
  after(async () => {
    await s.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('publishes a scoped and an unscoped package', async () => {
    let r = await npm(['publish'], project('@s/hello', '1.0.0'));
    assert.equal(r.code, 0, r.stderr);
    r = await npm(['publish'], project('plainpkg', '0.1.0'));
    assert.equal(r.code, 0, r.stderr);

    const p = await packument('@s/hello');
    assert.equal(p.status, 200);
    assert.equal(p.body.name, '@s/hello');
    assert.equal(p.body.description, 'the @s/hello package');
    assert.deepEqual(p.body['dist-tags'], { latest: '1.0.0' });
    const dist = p.body.versions['1.0.0']!.dist;
    assert.match(dist.integrity, /^sha512-/);
    assert.match(dist.shasum, /^[0-9a-f]{40}$/);
    // The tarball URL serves the very bytes the integrity names.
    const t = await fetch(dist.tarball, { headers: { authorization: `Bearer ${u.token}` } });
    assert.equal(t.status, 200);
    const bytes = Buffer.from(await t.arrayBuffer());
    assert.equal(`sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`, dist.integrity);
    const listed = await s.api<Array<{ name: string; type: string }>>('GET', '/packages/u?type=npm', {
      token: u.token,
    });
    assert.deepEqual(listed.body.map((x) => x.name).sort(), ['@s/hello', 'plainpkg']);
  });

  it('installs the published packages into a fresh project', async () => {
    const dir = fs.mkdtempSync(path.join(home, 'consumer-'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0' }));
    const r = await npm(['install', '@s/hello', 'plainpkg'], dir);
    assert.equal(r.code, 0, r.stderr);
    const index = fs.readFileSync(path.join(dir, 'node_modules', '@s', 'hello', 'index.js'), 'utf8');
    assert.match(index, /@s\/hello@1\.0\.0/);
    assert.ok(fs.existsSync(path.join(dir, 'node_modules', 'plainpkg', 'package.json')));
  });

  it('serves the abbreviated packument npm install asks for, gzipped and revalidated by ETag', async () => {
    const url = `${registry}@s%2fhello`;
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(url, { headers: { authorization: `Bearer ${u.token}`, ...headers } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          })
          .on('error', reject);
      });
    const corgi = 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*';
    const short = await get({ accept: corgi, 'accept-encoding': 'gzip,deflate' });
    assert.equal(short.status, 200);
    assert.equal(short.headers['content-type'], 'application/vnd.npm.install-v1+json');
    assert.equal(short.headers['content-encoding'], 'gzip');
    assert.match(short.headers['vary'] ?? '', /Accept-Encoding/);
    const doc = JSON.parse(zlib.gunzipSync(short.body).toString('utf8')) as {
      name: string;
      modified: string;
      'dist-tags': Record<string, string>;
      versions: Record<string, Record<string, unknown>>;
    };
    assert.equal(doc.name, '@s/hello');
    assert.deepEqual(doc['dist-tags'], { latest: '1.0.0' });
    assert.ok(!Number.isNaN(Date.parse(doc.modified)));
    const v = doc.versions['1.0.0']!;
    assert.equal(v['version'], '1.0.0');
    assert.match((v['dist'] as { integrity: string }).integrity, /^sha512-/);
    // Only what installing needs: no description, readme or main.
    assert.equal(v['description'], undefined);
    assert.equal(v['main'], undefined);

    // The full document, uncompressed, for a client asking for JSON only.
    const full = await get({ accept: 'application/json' });
    assert.equal(full.status, 200);
    assert.equal(full.headers['content-encoding'], undefined);
    assert.equal((JSON.parse(full.body.toString('utf8')) as Packument).description, 'the @s/hello package');
    assert.notEqual(full.headers['etag'], short.headers['etag']);

    // Revalidation: the same ETag answers 304 with no body, whatever the encoding asked for.
    const again = await get({ accept: corgi, 'if-none-match': short.headers['etag']! });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    // A new version changes the ETag.
    const r = await npm(['publish'], project('@s/hello', '1.0.1'));
    assert.equal(r.code, 0, r.stderr);
    const after = await get({ accept: corgi, 'if-none-match': short.headers['etag']! });
    assert.equal(after.status, 200);
    assert.notEqual(after.headers['etag'], short.headers['etag']);
    assert.deepEqual(Object.keys((JSON.parse(after.body.toString('utf8')) as typeof doc).versions).sort(), [
      '1.0.0',
      '1.0.1',
    ]);
    // Removed again: the later tests expect one version.
    // npm re-points `latest` at the highest version left when it unpublishes the latest one.
    const del = await npm(['unpublish', '@s/hello@1.0.1'], home);
    assert.equal(del.code, 0, del.stderr);
    assert.deepEqual((await packument('@s/hello')).body['dist-tags'], { latest: '1.0.0' });
  });

  it('adds, lists and removes dist-tags', async () => {
    const cwd = home;
    let r = await npm(['dist-tag', 'add', '@s/hello@1.0.0', 'beta'], cwd);
    assert.equal(r.code, 0, r.stderr);
    r = await npm(['dist-tag', 'ls', '@s/hello'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /beta: 1\.0\.0/);
    assert.match(r.stdout, /latest: 1\.0\.0/);
    r = await npm(['dist-tag', 'rm', '@s/hello', 'beta'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await packument('@s/hello')).body['dist-tags'], { latest: '1.0.0' });
    // A tag that is a version is refused.
    const bad = await fetch(`${s.url}/api/packages/u/npm/-/package/@s%2fhello/dist-tags/1.2.3`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
      body: JSON.stringify('1.0.0'),
    });
    assert.equal(bad.status, 400);
  });

  it('deprecates a version and unpublishes versions and packages', async () => {
    let r = await npm(['publish'], project('@s/hello', '1.1.0'));
    assert.equal(r.code, 0, r.stderr);
    r = await npm(['deprecate', '@s/hello@1.0.0', 'use 1.1.0'], home);
    assert.equal(r.code, 0, r.stderr);
    let p = await packument('@s/hello');
    assert.equal(p.body.versions['1.0.0']!.deprecated, 'use 1.1.0');
    assert.equal(p.body.versions['1.1.0']!.deprecated, undefined);
    assert.equal(p.body['dist-tags']['latest'], '1.1.0');

    r = await npm(['unpublish', '@s/hello@1.1.0', '--force'], home);
    assert.equal(r.code, 0, r.stderr);
    p = await packument('@s/hello');
    assert.deepEqual(Object.keys(p.body.versions), ['1.0.0']);

    r = await npm(['unpublish', 'plainpkg', '--force'], home);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await packument('plainpkg')).status, 404);
  });

  it('finds packages with npm search', async () => {
    const r = await fetch(`${registry}-/v1/search?text=hel&size=5`, {
      headers: { authorization: `Bearer ${u.token}` },
    });
    assert.equal(r.status, 200);
    const body = (await r.json()) as {
      objects: Array<{ package: { name: string; version: string } }>;
      total: number;
    };
    assert.equal(body.total, 1);
    assert.equal(body.objects[0]!.package.name, '@s/hello');
    assert.equal(body.objects[0]!.package.version, '1.0.0');
    // The npm client itself (it reads every result's `maintainers`).
    const cli = await npm(['search', '--registry', registry, 'hel'], home);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /@s\/hello/);
    assert.match(cli.stdout, /the @s\/hello package/);
    const json = await npm(['search', '--json', '--registry', registry, 'hel'], home);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(
      (JSON.parse(json.stdout) as Array<{ name: string }>).map((p) => p.name),
      ['@s/hello'],
    );
  });

  it('refuses a duplicate version with 409 (npm publish fails)', async () => {
    const r = await npm(['publish'], project('@s/hello', '1.0.0'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /409|already exists/);
    const raw = await rawPublish(
      '@s/hello',
      publishBody('@s/hello', '1.0.0', Buffer.from('tarball')),
      u.token,
    );
    assert.equal(raw.status, 409);
  });

  it('refuses a tarball whose integrity does not match with 400', async () => {
    const body = publishBody(
      '@s/broken',
      '1.0.0',
      Buffer.from('tarball'),
      `sha512-${Buffer.alloc(64).toString('base64')}`,
    );
    const r = await rawPublish('@s/broken', body, u.token);
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: string }).error, /integrity/);
    assert.equal((await packument('@s/broken')).status, 404);
  });

  it('refuses a tarball that is no sound gzip tar of a package with 400, keeping nothing', async () => {
    const good = await tgz({
      'package/package.json': '{"name":"@s/bad","version":"1.0.0"}',
      'package/a.js': '1',
    });
    const text = zlib.gzipSync(Buffer.from('just some text, no tar at all\n'.repeat(100)));
    const cases: Array<[string, Buffer, RegExp]> = [
      ['a 6-byte truncated gzip', good.subarray(0, 6), /not a valid gzip file/],
      ['a gzip cut half-way', good.subarray(0, good.length >> 1), /not a valid gzip file/],
      ['bytes that are no gzip', crypto.randomBytes(300), /not a valid gzip file/],
      ['a gzip of no tar', text, /not a valid tar archive/],
      ['no package.json', await tgz({ 'package/index.js': 'x' }), /no package\.json/],
      ['a package.json that is no JSON', await tgz({ 'package/package.json': '{nope' }), /not JSON/],
    ];
    const used = await packagesUsed(s, u.token);
    for (const [what, tarball, problem] of cases) {
      const r = await rawPublish('@s/bad', publishBody('@s/bad', '1.0.0', tarball), u.token);
      const body = (await r.json()) as { error: string };
      assert.equal(r.status, 400, `${what}: ${body.error}`);
      assert.match(body.error, /tarball/, what);
      assert.match(body.error, problem, what);
    }
    assert.equal((await packument('@s/bad')).status, 404);
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    // A publish with no tarball at all: 400, not the 404 of an unknown package.
    const none = publishBody('@s/bad', '1.0.0', good) as Record<string, unknown>;
    delete none['_attachments'];
    const r = await rawPublish('@s/bad', none, u.token);
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: string }).error, /_attachments/);
    // The sound tarball is taken.
    const ok = await rawPublish('@s/bad', publishBody('@s/bad', '1.0.0', good), u.token);
    assert.equal(ok.status, 201, await ok.text());
  });

  it('refuses invalid names with 400', async () => {
    for (const name of ['Bad Name', '.hidden', '@s/UPPER']) {
      const r = await rawPublish(name, publishBody(name, '1.0.0', Buffer.from('x')), u.token);
      assert.equal(r.status, 400, name);
    }
    const r = await rawPublish('okname', publishBody('okname', 'not-a-version', Buffer.from('x')), u.token);
    assert.equal(r.status, 400);
  });

  it('asks for credentials with 401, also of accounts without write access', async () => {
    const anonymousConfig = path.join(home, 'anon-npmrc');
    fs.writeFileSync(anonymousConfig, `registry=${registry}\n@s:registry=${registry}\n`);
    const r = await npm(['publish'], project('@s/anon', '1.0.0'), anonymousConfig);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /401|E401|auth/i);
    const raw = await rawPublish('@s/anon', publishBody('@s/anon', '1.0.0', Buffer.from('x')));
    assert.equal(raw.status, 401);
    assert.match(raw.headers.get('www-authenticate') ?? '', /^Basic realm=/);

    const otherConfig = path.join(home, 'other-npmrc');
    fs.writeFileSync(
      otherConfig,
      `registry=${registry}\n@s:registry=${registry}\n${registry.replace(/^http:/, '')}:_authToken=${other.token}\n`,
    );
    const o = await npm(['publish'], project('@s/theirs', '1.0.0'), otherConfig);
    assert.notEqual(o.code, 0);
    assert.match(o.stderr, /401|E401/);
    assert.equal((await packument('@s/theirs')).status, 404);
    const asOther = await rawPublish(
      '@s/theirs',
      publishBody('@s/theirs', '1.0.0', Buffer.from('x')),
      other.token,
    );
    assert.equal(asOther.status, 401);
    assert.equal(asOther.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
  });

  it("asks a signed-in account for other credentials (401) on a private owner's packages", async () => {
    const hidden = await s.createUser('hidden');
    await s.api('PATCH', '/admin/users/hidden', { token: s.admin.token, body: { visibility: 'private' } });
    const base = `${s.url}/api/packages/hidden/npm/`;
    for (const url of [`${base}anything`, `${base}-/v1/search?text=a`]) {
      const anon = await fetch(url);
      assert.equal(anon.status, 401, url);
      const r = await fetch(url, { headers: { authorization: `Bearer ${other.token}` } });
      assert.equal(r.status, 401, url);
      assert.equal(r.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
      assert.match(((await r.json()) as { error: string }).error, /may not read/);
    }
    // Their own account reads (404: nothing published); the REST API keeps its 403.
    const own = await fetch(`${base}anything`, { headers: { authorization: `Bearer ${hidden.token}` } });
    assert.equal(own.status, 404);
    assert.equal((await s.api('GET', '/packages/hidden', { token: other.token })).status, 403);
  });
});
