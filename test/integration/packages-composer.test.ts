// The Composer repository driven by the real `composer` (Debian's), with a COMPOSER_HOME, cache
// and HOME of its own and Anvil as the only repository (packagist.org off): package zips uploaded
// with PUT, then `composer install` of a project requiring a package that requires another,
// and the installed classes loaded through Composer's autoloader. Also the documents over HTTP
// (packages.json, p2, list.json, search.json, files), bad zips (400, nothing kept), duplicates,
// credentials (401 + challenge), a private owner through COMPOSER_AUTH, LIMIT_SIZE_COMPOSER (403)
// and a linked repository as the source.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, zip } from '../helpers/archives.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface VersionMeta {
  name: string;
  version: string;
  type: string;
  description?: string;
  require?: Record<string, string>;
  readme?: string;
  dist: { type: string; url: string; shasum: string };
  source?: { url: string; type: string; reference: string };
}

const sha1 = (b: Buffer) => crypto.createHash('sha1').update(b).digest('hex');

/** A package zip: composer.json (`manifest`) and a class greeting with `greeting`, under `folder`. */
function packageZip(manifest: Record<string, unknown>, greeting: string, folder = ''): Buffer {
  const ns = 'Acme\\Hello';
  return zip({
    [`${folder}composer.json`]: JSON.stringify({
      description: 'says hello',
      license: 'MIT',
      autoload: { 'psr-4': { [`${ns}\\`]: 'src/' } },
      ...manifest,
    }),
    [`${folder}README.md`]: `# ${String(manifest['name'])}\n`,
    [`${folder}src/Greeter.php`]: `<?php\nnamespace ${ns};\n\nclass Greeter\n{\n    public static function greet(): string\n    {\n        return ${JSON.stringify(greeting)};\n    }\n}\n`,
  });
}

describe('Composer repository (composer client)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  const hello100 = packageZip({ name: 'acme/hello', version: '1.0.0' }, 'hello, one');
  const hello110 = packageZip(
    { name: 'acme/hello', version: '1.1.0', type: 'library' },
    'hello, one point one',
  );

  /** Runs composer in `cwd` with the test's own home, cache and `auth` (COMPOSER_AUTH). */
  function composer(args: string[], cwd: string, auth?: unknown): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env['PATH'],
        HOME: work,
        COMPOSER_HOME: path.join(work, 'composer-home'),
        COMPOSER_CACHE_DIR: path.join(work, 'composer-cache', String(Math.random())),
        COMPOSER_NO_INTERACTION: '1',
        COMPOSER_ALLOW_SUPERUSER: '1',
        COMPOSER_DISABLE_XDEBUG_WARN: '1',
        COMPOSER_NO_AUDIT: '1',
      };
      if (auth) env['COMPOSER_AUTH'] = JSON.stringify(auth);
      const child = spawn('composer', [...args, '--no-interaction', '--no-progress', '--no-ansi'], {
        cwd,
        env,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** A project in a fresh directory requiring `require`, with the owner's repository as the only one. */
  function project(owner: string, require: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(work, 'project-'));
    fs.writeFileSync(
      path.join(dir, 'composer.json'),
      JSON.stringify({
        name: 'acme/project',
        require,
        repositories: [
          { type: 'composer', url: `${s.url}/api/packages/${owner}/composer` },
          { 'packagist.org': false },
        ],
        config: { 'secure-http': false },
      }),
    );
    return dir;
  }

  const php = (dir: string, code: string) =>
    promisify(execFile)('php', ['-r', `require 'vendor/autoload.php'; ${code}`], { cwd: dir });

  const upload = (owner: string, body: Buffer, auth?: string, query = '') =>
    fetch(`${s.url}/api/packages/${owner}/composer${query}`, {
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
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-composer-'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('takes package zips and serves packages.json, p2 metadata, list, search and files', async () => {
    for (const body of [hello100, hello110]) {
      const r = await upload('u', body, bearer(u.token));
      assert.equal(r.status, 201, await r.text());
    }
    // composer.json in the zip's one folder (as in GitHub archives) and no version in it: ?version=.
    const app = packageZip(
      {
        name: 'acme/app',
        require: { 'acme/hello': '^1.0' },
        autoload: { 'psr-4': { 'Acme\\App\\': 'src/' } },
      },
      'unused',
      'acme-app-abc123/',
    );
    let r = await upload('u', app, bearer(u.token), '?version=2.0.0-beta1');
    assert.equal(r.status, 201, await r.text());

    const index = (await (await get('u/composer/packages.json')).json()) as Record<string, string>;
    const base = `${s.url}/api/packages/u/composer`;
    assert.deepEqual(index, {
      search: `${base}/search.json?q=%query%&type=%type%`,
      'metadata-url': `${base}/p2/%package%.json`,
      list: `${base}/list.json`,
    });
    r = await get('u/composer/p2/acme/hello.json');
    assert.equal(r.status, 200);
    const meta = (await r.json()) as { packages: Record<string, VersionMeta[]> };
    const versions = meta.packages['acme/hello']!;
    assert.deepEqual(
      versions.map((v) => [v.name, v.version, v.type]),
      [
        ['acme/hello', '1.0.0', 'library'],
        ['acme/hello', '1.1.0', 'library'],
      ],
    );
    assert.equal(versions[0]!.description, 'says hello');
    assert.equal(versions[0]!.readme, '# acme/hello\n');
    assert.equal(versions[0]!.dist.type, 'zip');
    assert.equal(versions[0]!.dist.shasum, sha1(hello100));
    const dl = await fetch(versions[0]!.dist.url);
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(hello100));
    const appMeta = (await (await get('u/composer/p2/acme/app~dev.json')).json()) as {
      packages: Record<string, VersionMeta[]>;
    };
    assert.deepEqual(
      appMeta.packages['acme/app']!.map((v) => [v.version, v.require]),
      [['2.0.0-beta1', { 'acme/hello': '^1.0' }]],
    );
    assert.deepEqual(await (await get('u/composer/list.json')).json(), {
      packageNames: ['acme/app', 'acme/hello'],
    });
    const found = (await (await get('u/composer/search.json?q=hel')).json()) as {
      total: number;
      results: Array<{ name: string; description: string }>;
    };
    assert.deepEqual(found, {
      total: 1,
      results: [{ name: 'acme/hello', description: 'says hello', downloads: 0 }],
    });
    for (const p of [
      'p2/acme/nothing.json',
      'p2/acme/hello.txt',
      'p2/Bad/Name.json',
      'files/acme%2Fhello/9.9.9/x.zip',
    ]) {
      const missing = await get(`u/composer/${p}`);
      assert.equal(missing.status, 404, p);
      assert.ok(
        ((await missing.json()) as { errors: Array<{ status: number }> }).errors[0]!.status === 404,
        p,
      );
    }
    const listed = await s.api<Array<{ name: string; version: string }>>('GET', '/packages/u?type=composer', {
      token: u.token,
    });
    assert.deepEqual(listed.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'acme/app@2.0.0-beta1',
      'acme/hello@1.0.0',
      'acme/hello@1.1.0',
    ]);
  });

  it('composer install resolves, downloads and autoloads from Anvil as the only repository', async () => {
    const dir = project('u', { 'acme/app': '2.0.0-beta1', 'acme/hello': '1.0.*' });
    let r = await composer(['install'], dir);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /Installing acme\/hello \(1\.0\.0\)/);
    assert.match(r.stderr, /Installing acme\/app \(2\.0\.0-beta1\)/);
    assert.equal((await php(dir, 'echo \\Acme\\Hello\\Greeter::greet();')).stdout, 'hello, one');
    // An update takes the newest version its constraint allows.
    fs.writeFileSync(
      path.join(dir, 'composer.json'),
      fs.readFileSync(path.join(dir, 'composer.json'), 'utf8').replace('"1.0.*"', '"^1.0"'),
    );
    r = await composer(['update', '--no-audit'], dir);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal((await php(dir, 'echo \\Acme\\Hello\\Greeter::greet();')).stdout, 'hello, one point one');
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'composer.lock'), 'utf8')) as {
      packages: Array<{ name: string; version: string; dist: { shasum: string } }>;
    };
    assert.deepEqual(lock.packages.map((p) => [p.name, p.version, p.dist.shasum]).sort(), [
      ['acme/app', '2.0.0-beta1', lock.packages.find((p) => p.name === 'acme/app')!.dist.shasum],
      ['acme/hello', '1.1.0', sha1(hello110)],
    ]);
    // Nothing that matches: composer says so.
    r = await composer(['install'], project('u', { 'acme/hello': '^3.0' }));
    assert.notEqual(r.code, 0);
    assert.match(
      `${r.stdout}${r.stderr}`,
      /acme\/hello\[1\.0\.0, 1\.1\.0\] but it does not match the constraint|could not be found/,
    );
  });

  it('refuses zips that are no Composer packages with 400 and keeps nothing; also a version that exists', async () => {
    const used = await packagesUsed(s, u.token);
    const cases: Array<[string, Buffer, string, RegExp]> = [
      ['bytes that are no zip', crypto.randomBytes(400), '', /not a valid zip archive/],
      ['no composer.json', zip({ 'src/a.php': '<?php' }), '', /no composer\.json/],
      [
        'composer.json two folders down',
        zip({ 'a/b/composer.json': '{"name":"acme/x","version":"1.0.0"}' }),
        '',
        /no composer\.json/,
      ],
      ['composer.json that is no JSON', zip({ 'composer.json': '{nope' }), '', /not a JSON object/],
      [
        'a bad name',
        zip({ 'composer.json': '{"name":"Acme/X","version":"1.0.0"}' }),
        '',
        /invalid package name/,
      ],
      ['no name', zip({ 'composer.json': '{"version":"1.0.0"}' }), '', /invalid package name/],
      ['no version anywhere', zip({ 'composer.json': '{"name":"acme/x"}' }), '', /no version/],
      [
        'a bad version',
        zip({ 'composer.json': '{"name":"acme/x"}' }),
        '?version=one',
        /invalid package version/,
      ],
      [
        'a bad require',
        zip({ 'composer.json': '{"name":"acme/x","version":"1.0.0","require":["a"]}' }),
        '',
        /require/,
      ],
    ];
    for (const [what, body, query, problem] of cases) {
      const r = await upload('u', body, bearer(u.token), query);
      const out = (await r.json()) as { errors: Array<{ status: number; message: string }> };
      assert.equal(r.status, 400, `${what}: ${JSON.stringify(out)}`);
      assert.equal(out.errors[0]!.status, 400);
      assert.match(out.errors[0]!.message, problem, what);
    }
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    // As Forgejo: 400 for a version that exists.
    const dup = await upload(
      'u',
      packageZip({ name: 'acme/hello', version: '1.0.0' }, 'again'),
      bearer(u.token),
    );
    assert.equal(dup.status, 400);
    assert.match(JSON.stringify(await dup.json()), /already exists/);
  });

  it('asks for credentials with 401; a private owner installs with COMPOSER_AUTH', async () => {
    const body = packageZip({ name: 'acme/creds', version: '1.0.0' }, 'x');
    for (const auth of [undefined, bearer(other.token)]) {
      const r = await upload('u', body, auth);
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
    const p = await s.createUser('p');
    assert.equal(
      (await upload('p', packageZip({ name: 'acme/hello', version: '1.0.0' }, 'private'), bearer(p.token)))
        .status,
      201,
    );
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await get('p/composer/packages.json')).status, 401);
    assert.equal((await get('p/composer/p2/acme/hello.json', bearer(other.token))).status, 401);

    const dir = project('p', { 'acme/hello': '^1.0' });
    let r = await composer(['install'], dir);
    assert.notEqual(r.code, 0);
    assert.match(`${r.stdout}${r.stderr}`, /401|credentials|Authentication required/i);
    const host = new URL(s.url).host;
    r = await composer(['install'], dir, {
      'http-basic': { [host]: { username: 'p', password: p.token } },
    });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal((await php(dir, 'echo \\Acme\\Hello\\Greeter::greet();')).stdout, 'private');
  });

  it('names a linked repository as the source; answers 403 over LIMIT_SIZE_COMPOSER', async () => {
    const repo = await s.api('POST', '/user/repos', { token: u.token, body: { name: 'hello-php' } });
    assert.equal(repo.status, 201, repo.text);
    const link = await s.api(
      'POST',
      `/packages/u/composer/${encodeURIComponent('acme/hello')}/-/link/hello-php`,
      {
        token: u.token,
      },
    );
    assert.equal(link.status, 201, link.text);
    const meta = (await (await get('u/composer/p2/acme/hello.json')).json()) as {
      packages: Record<string, VersionMeta[]>;
    };
    assert.deepEqual(meta.packages['acme/hello']![0]!.source, {
      url: `${s.url}/u/hello-php`,
      type: 'git',
      reference: '1.0.0',
    });

    const big = packageZip({ name: 'acme/big', version: '1.0.0', description: 'x'.repeat(3000) }, 'big');
    s.config.packages.limitSizeComposer = 1000;
    try {
      const r = await upload('u', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.equal((await upload('u', big, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeComposer = -1;
    }
  });
});
