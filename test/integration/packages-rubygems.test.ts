// The RubyGems registry driven by the real gem command (Debian's ruby), with a HOME, GEM_HOME
// and spec cache of its own and Anvil as its only source: gems built with `gem build`, pushed
// with `gem push`, listed with `gem list --remote` (specs.4.8.gz), installed with their
// dependencies by `gem install` (the compact index and the quick Marshal gemspecs), yanked with
// `gem yank`. Also the index files over HTTP, bad gems (400, nothing kept), duplicates (409),
// credentials (401 + challenge), a private owner (credentials in the source's URL), the package
// API, quota (413) and LIMIT_SIZE_RUBYGEMS (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed } from '../helpers/archives.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('RubyGems registry (gem)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let source: string;

  function gem(args: string[], env: Record<string, string> = {}, cwd = work): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn('gem', args, {
        cwd,
        env: {
          PATH: process.env['PATH'],
          HOME: path.join(work, 'home'),
          GEM_HOME: path.join(work, 'gems'),
          GEM_PATH: path.join(work, 'gems'),
          GEM_SPEC_CACHE: path.join(work, 'spec-cache'),
          LC_ALL: 'C.UTF-8',
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

  /** A gem built by `gem build`: lib/{name}.rb saying `greeting`, with `deps` (name, requirement). */
  async function build(name: string, version: string, greeting: string, deps: Array<[string, string]> = []) {
    const dir = fs.mkdtempSync(path.join(work, `build-${name}-`));
    fs.mkdirSync(path.join(dir, 'lib'));
    const mod = name.replace(/[^a-z]/g, '_');
    fs.writeFileSync(
      path.join(dir, 'lib', `${name}.rb`),
      `module M_${mod}; GREETING = ${JSON.stringify(greeting)}; end\n`,
    );
    fs.writeFileSync(
      path.join(dir, `${name}.gemspec`),
      `Gem::Specification.new do |s|\n  s.name = ${JSON.stringify(name)}\n  s.version = ${JSON.stringify(version)}\n` +
        `  s.summary = "says hello"\n  s.authors = ["Anvil Tester"]\n  s.files = ["lib/${name}.rb"]\n` +
        `  s.license = "MIT"\n  s.homepage = "https://example.com/${name}"\n  s.required_ruby_version = ">= 2.5"\n` +
        deps.map(([d, r]) => `  s.add_dependency ${JSON.stringify(d)}, ${JSON.stringify(r)}\n`).join('') +
        `  s.add_development_dependency "rake", "~> 13.0"\nend\n`,
    );
    const r = await gem(['build', `${name}.gemspec`], {}, dir);
    assert.equal(r.code, 0, r.stderr);
    const file = path.join(dir, `${name}-${version}.gem`);
    return { file, bytes: fs.readFileSync(file) };
  }

  const bearer = (token: string) => `Bearer ${token}`;
  const push = (file: string, token: string) =>
    gem(['push', file, '--host', source], { GEM_HOST_API_KEY: bearer(token) });
  const post = (owner: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${owner}/rubygems/api/v1/gems`, {
      method: 'POST',
      headers: auth ? { authorization: auth } : {},
      body: new Uint8Array(body),
    });
  const get = (p: string) => fetch(`${s.url}/api/packages/${p}`);

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-gem-'));
    fs.mkdirSync(path.join(work, 'home'));
    source = `${s.url}/api/packages/u/rubygems`;
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('gem push, gem list --remote and gem install with a dependency, Anvil as the only source', async () => {
    const v1 = await build('hello-anvil', '1.0.0', 'hello one');
    const v2 = await build('hello-anvil', '1.1.0', 'hello one point one');
    const pre = await build('hello-anvil', '2.0.0.rc1', 'release candidate');
    const app = await build('anvil-app', '0.1.0', 'app', [['hello-anvil', '~> 1.0']]);
    for (const g of [v1, v2, pre, app]) {
      const r = await push(g.file, u.token);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Successfully registered gem/);
    }

    let r = await gem(['list', '--remote', '--all', '--clear-sources', '--source', `${source}/`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^anvil-app \(0\.1\.0\)$/m);
    assert.match(r.stdout, /^hello-anvil \(1\.1\.0, 1\.0\.0\)$/m);
    r = await gem(['list', '--remote', '--prerelease', '--clear-sources', '--source', `${source}/`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^hello-anvil \(2\.0\.0\.rc1\)$/m);

    r = await gem(['install', '--no-document', '--clear-sources', '--source', `${source}/`, 'anvil-app']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Successfully installed hello-anvil-1\.1\.0/);
    assert.match(r.stdout, /Successfully installed anvil-app-0\.1\.0/);
    const installed = path.join(work, 'gems', 'gems', 'hello-anvil-1.1.0', 'lib', 'hello-anvil.rb');
    assert.match(fs.readFileSync(installed, 'utf8'), /hello one point one/);
    r = await gem([
      'install',
      '--no-document',
      '--clear-sources',
      '--source',
      `${source}/`,
      'hello-anvil',
      '-v',
      '1.0.0',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(fs.existsSync(path.join(work, 'gems', 'gems', 'hello-anvil-1.0.0')));

    // The index files over HTTP.
    const info = await (await get('u/rubygems/info/hello-anvil')).text();
    const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
    assert.ok(info.startsWith('---\n'), info);
    assert.ok(info.includes(`1.0.0 |checksum:${sha(v1.bytes)},ruby:>= 2.5,rubygems:>= 0\n`), info);
    const appInfo = await (await get('u/rubygems/info/anvil-app')).text();
    assert.match(appInfo, /^0\.1\.0 hello-anvil:~> 1\.0\|checksum:/m);
    assert.doesNotMatch(appInfo, /rake/);
    const versions = await (await get('u/rubygems/versions')).text();
    assert.match(versions, /^hello-anvil 1\.0\.0,1\.1\.0,2\.0\.0\.rc1 [0-9a-f]{32}$/m);
    const latest = await get('u/rubygems/latest_specs.4.8.gz');
    assert.equal(latest.status, 200);
    const marshalled = zlib.gunzipSync(Buffer.from(await latest.arrayBuffer()));
    assert.equal(marshalled.subarray(0, 2).toString('hex'), '0408');
    assert.ok(
      (await (await get('u/rubygems/gems/hello-anvil-1.0.0.gem')).arrayBuffer()).byteLength ===
        v1.bytes.length,
    );
    for (const p of [
      'u/rubygems/gems/hello-anvil-9.9.9.gem',
      'u/rubygems/info/nothing',
      'u/rubygems/quick/Marshal.4.8/nothing-1.0.gemspec.rz',
    ]) {
      assert.equal((await get(p)).status, 404, p);
    }

    const listed = await s.api<Array<{ name: string; version: string }>>('GET', '/packages/u?type=rubygems', {
      token: u.token,
    });
    assert.deepEqual(listed.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'anvil-app@0.1.0',
      'hello-anvil@1.0.0',
      'hello-anvil@1.1.0',
      'hello-anvil@2.0.0.rc1',
    ]);
  });

  it('gem yank deletes the version', async () => {
    const r = await gem(['yank', 'hello-anvil', '-v', '1.0.0', '--host', source], {
      GEM_HOST_API_KEY: bearer(u.token),
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const versions = await (await get('u/rubygems/versions')).text();
    assert.match(versions, /^hello-anvil 1\.1\.0,2\.0\.0\.rc1 /m);
    assert.equal((await get('u/rubygems/gems/hello-anvil-1.0.0.gem')).status, 404);
  });

  it('refuses what is no gem with 400 and keeps nothing; a duplicate with 409; credentials with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await build('bad-case', '1.0.0', 'x');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(700), /tar/],
      ['a gem cut short', good.bytes.subarray(0, 1000), /tar|gzip/],
      ['a tar without metadata.gz', execFileSync('tar', ['-cf', '-', '-C', work, 'home']), /no metadata\.gz/],
    ];
    for (const [what, body, problem] of cases) {
      const res = await post('u', body, bearer(u.token));
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match(t, problem, what);
    }
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    const again = await build('hello-anvil', '1.1.0', 'again');
    const dup = await post('u', again.bytes, bearer(u.token));
    assert.equal(dup.status, 409);
    for (const auth of [undefined, 'Bearer nothing', bearer(other.token)]) {
      const res = await post('u', good.bytes, auth);
      assert.equal(res.status, 401, auth);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
  });

  it("installs from a private owner with the credentials in the source's URL", async () => {
    const p = await s.createUser('p');
    const g = await build('secret-gem', '1.0.0', 'private hello');
    const pushed = await gem(['push', g.file, '--host', `${s.url}/api/packages/p/rubygems`], {
      GEM_HOST_API_KEY: bearer(p.token),
    });
    assert.equal(pushed.code, 0, pushed.stdout + pushed.stderr);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    const anon = await get('p/rubygems/info/secret-gem');
    assert.equal(anon.status, 401);
    assert.equal(anon.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    const host = s.url.replace(/^http:\/\//, '');
    let r = await gem([
      'install',
      '--no-document',
      '--clear-sources',
      '--source',
      `${s.url}/api/packages/p/rubygems/`,
      'secret-gem',
    ]);
    assert.notEqual(r.code, 0);
    r = await gem([
      'install',
      '--no-document',
      '--clear-sources',
      '--source',
      `http://p:${p.token}@${host}/api/packages/p/rubygems/`,
      'secret-gem',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Successfully installed secret-gem-1\.0\.0/);
  });

  it('answers 403 over LIMIT_SIZE_RUBYGEMS (administrators exempt) and 413 over quota', async () => {
    const g = await build('sized-gem', '1.0.0', 'x'.repeat(20000));
    s.config.packages.limitSizeRubygems = 1000;
    try {
      const r = await post('u', g.bytes, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await post('u', g.bytes, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeRubygems = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'gem-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'gem-tiny', rules: [{ name: 'gem-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/gem-tiny/users/q', { token: s.admin.token });
    assert.equal((await post('q', g.bytes, bearer(q.token))).status, 201);
    const second = await build('sized-gem', '1.0.1', 'y');
    assert.equal((await post('q', second.bytes, bearer(q.token))).status, 413);
  });
});
