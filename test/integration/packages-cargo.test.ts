// The Cargo registry (sparse protocol) driven by the real `cargo` client, with a CARGO_HOME of its
// own (the machine's cargo configuration is never read or written) and crates with no crates.io
// dependency, so cargo only talks to this server: publish, a second crate depending on the first
// (renamed) that is fetched and built, yank and unyank seen in the index, search, owners, a private
// owner's registry (cargo retries config.json with its token); and bad input sent as cargo would
// send it: truncated and malformed bodies, bad names and versions, duplicates, credentials,
// write access, quota and size limits.
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

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface IndexLine {
  name: string;
  vers: string;
  deps: Array<{
    name: string;
    req: string;
    features: string[];
    optional: boolean;
    default_features: boolean;
    target: string | null;
    kind: string;
    registry: string | null;
    package: string | null;
  }>;
  cksum: string;
  features: Record<string, string[]>;
  yanked: boolean;
  links?: string;
}

type Errors = { errors: Array<{ detail: string }> };

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A publish body as cargo sends it: u32 LE length, JSON, u32 LE length, crate. */
function publishBody(meta: unknown, crate: Buffer): Buffer {
  const json = Buffer.from(typeof meta === 'string' ? meta : JSON.stringify(meta));
  const a = Buffer.alloc(4);
  a.writeUInt32LE(json.length);
  const b = Buffer.alloc(4);
  b.writeUInt32LE(crate.length);
  return Buffer.concat([a, json, b, crate]);
}

/** A .crate as `cargo package` makes it: `{name}-{vers}/` with Cargo.toml, gzip'd tar. */
const crateOf = (name: string, vers: string, more: Record<string, string | Buffer> = {}) =>
  tgz({
    [`${name}-${vers}/Cargo.toml`]: `[package]\nname = "${name}"\nversion = "${vers}"\n`,
    [`${name}-${vers}/src/lib.rs`]: 'pub fn f() {}\n',
    ...Object.fromEntries(Object.entries(more).map(([k, v]) => [`${name}-${vers}/${k}`, v])),
  });

const meta = (name: string, vers: string, extra: Record<string, unknown> = {}) => ({
  name,
  vers,
  deps: [],
  features: {},
  authors: [],
  description: `the ${name} crate`,
  ...extra,
});

describe('Cargo package registry (cargo client)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let cargoHome: string;
  let targetDir: string;
  let root: string;

  /** Runs cargo in `cwd` with the test's CARGO_HOME, the token of `token` for registry `r`. */
  function cargo(args: string[], cwd: string, tokens: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env['PATH'],
        HOME: work,
        // cargo is a rustup proxy here: its toolchains stay where they are.
        RUSTUP_HOME: process.env['RUSTUP_HOME'] ?? path.join(os.homedir(), '.rustup'),
        CARGO_HOME: cargoHome,
        CARGO_TARGET_DIR: targetDir,
        CARGO_TERM_COLOR: 'never',
        CARGO_TERM_PROGRESS_WHEN: 'never',
        CARGO_REGISTRIES_R_TOKEN: `Bearer ${u.token}`,
      };
      for (const [k, v] of Object.entries(tokens)) env[k] = v;
      const child = spawn('cargo', args, { cwd, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** A crate in a fresh directory: Cargo.toml (plus `toml`) and src/lib.rs or src/main.rs. */
  function crate(name: string, version: string, code: string, toml = '', bin = false): string {
    const dir = fs.mkdtempSync(path.join(work, `${name}-`));
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(
      path.join(dir, 'Cargo.toml'),
      `[package]\nname = "${name}"\nversion = "${version}"\nedition = "2021"\n` +
        `description = "the ${name} crate"\nlicense = "MIT"\n${toml}`,
    );
    fs.writeFileSync(path.join(dir, 'src', bin ? 'main.rs' : 'lib.rs'), code);
    return dir;
  }

  const index = async (owner: string, p: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${s.url}/api/packages/${owner}/cargo/${p}`, { headers });
    const text = await r.text();
    return {
      status: r.status,
      headers: r.headers,
      text,
      lines:
        r.status === 200
          ? text
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as IndexLine)
          : [],
    };
  };

  const rawPublish = (owner: string, body: Buffer, authorization?: string) =>
    fetch(`${s.url}/api/packages/${owner}/cargo/api/v1/crates/new`, {
      method: 'PUT',
      headers: authorization ? { authorization } : {},
      body: new Uint8Array(body),
    });

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cargo-'));
    cargoHome = path.join(work, 'cargo-home');
    targetDir = path.join(work, 'target');
    fs.mkdirSync(cargoHome);
    root = `${s.url}/api/packages`;
    fs.writeFileSync(
      path.join(cargoHome, 'config.toml'),
      [
        '[registry]',
        'global-credential-providers = ["cargo:token"]',
        '[registries.r]',
        `index = "sparse+${root}/u/cargo/"`,
        '[registries.rp]',
        `index = "sparse+${root}/p/cargo/"`,
        '[net]',
        'retry = 0',
        '',
      ].join('\n'),
    );
  });
  before(async () => {
    const v = await cargo(['--version'], work);
    const m = /^cargo (\d+)\.(\d+)/.exec(v.stdout);
    assert.ok(
      m && (Number(m[1]) > 1 || Number(m[2]) >= 68),
      `these tests need cargo 1.68 or later (sparse registries) on PATH: ${v.stdout}${v.stderr}`,
    );
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('serves config.json with dl, api and auth-required', async () => {
    const r = await fetch(`${root}/u/cargo/config.json`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      dl: `${root}/u/cargo/api/v1/crates`,
      api: `${root}/u/cargo`,
      'auth-required': false,
    });
    assert.equal((await fetch(`${root}/nobody/cargo/config.json`)).status, 404);
  });

  it('publishes a crate with cargo publish: index line, download, listing and webhook', async () => {
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

    const dir = crate(
      'anvil_base',
      '0.1.0',
      'pub fn hello() -> &\'static str { "hello from anvil_base" }\n',
      '[features]\ndefault = ["std"]\nstd = []\n',
    );
    const r = await cargo(['publish', '--registry', 'r', '--no-verify', '--allow-dirty'], dir);
    assert.equal(r.code, 0, r.stderr);

    const idx = await index('u', 'an/vi/anvil_base');
    assert.equal(idx.status, 200, idx.text);
    assert.equal(idx.lines.length, 1);
    const line = idx.lines[0]!;
    assert.equal(line.name, 'anvil_base');
    assert.equal(line.vers, '0.1.0');
    assert.deepEqual(line.deps, []);
    assert.deepEqual(line.features, { default: ['std'], std: [] });
    assert.equal(line.yanked, false);
    assert.match(line.cksum, /^[0-9a-f]{64}$/);
    // The index path is lowercase and checked against the name.
    assert.equal((await index('u', 'AN/VI/anvil_base')).status, 200);
    assert.equal((await index('u', 'xx/yy/anvil_base')).status, 404);
    assert.equal((await index('u', 'an/vi/anvil_nope')).status, 404);
    // Names and versions no crate can have find nothing (and reach no query); a NUL byte anywhere
    // in a path is refused server-wide with 422 before any route.
    for (const p of ['3/a/a.b', 'an/vi/anvil.base', 'an/vi/anvil_base/x']) {
      assert.equal((await index('u', p)).status, 404, p);
    }
    for (const p of [
      'anvil_base/1.0/download',
      'anvil_base/..%2f/download',
      'a.b/owners',
      'a.b/1.0.0/download',
    ]) {
      const r = await fetch(`${root}/u/cargo/api/v1/crates/${p}`);
      assert.equal(r.status, 404, p);
    }
    for (const p of ['1/%00', '2/a%00', 'an/vi/anvil%00base', 'api/v1/crates/anvil_base/1.0.0%00/download']) {
      const r = await index('u', p);
      assert.ok(r.status === 404 || r.status === 422, `${p}: ${r.status}`);
    }
    const huge = await fetch(`${root}/u/cargo/api/v1/crates?q=%01&page=1e300&per_page=1e300`);
    assert.equal(huge.status, 200);
    assert.deepEqual(await huge.json(), { crates: [], meta: { total: 0 } });

    const dl = await fetch(`${root}/u/cargo/api/v1/crates/anvil_base/0.1.0/download`);
    assert.equal(dl.status, 200);
    const bytes = Buffer.from(await dl.arrayBuffer());
    assert.equal(sha256(bytes), line.cksum, 'the checksum names the downloaded bytes');
    assert.equal(bytes.subarray(0, 2).toString('hex'), '1f8b', 'a gzipped .crate');
    assert.equal((await fetch(`${root}/u/cargo/api/v1/crates/anvil_base/9.9.9/download`)).status, 404);

    const listed = await s.api<Array<{ name: string; type: string; version: string }>>(
      'GET',
      '/packages/u?type=cargo',
      { token: u.token },
    );
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.map((p) => [p.type, p.name, p.version]),
      [['cargo', 'anvil_base', '0.1.0']],
    );

    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['event_type', 'payload'])
      .where('hook_id', '=', hook.body.id)
      .execute();
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0]!.event_type, 'package');
    const payload = JSON.parse(tasks[0]!.payload) as {
      action: string;
      package: { type: string; name: string; version: string };
    };
    assert.equal(payload.action, 'created');
    assert.deepEqual(
      [payload.package.type, payload.package.name, payload.package.version],
      ['cargo', 'anvil_base', '0.1.0'],
    );
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: u.token });
  });

  it('publishes a crate depending on it (renamed), which cargo fetches and builds', async () => {
    const deps = '[dependencies]\nbase = { package = "anvil_base", version = "0.1", registry = "r" }\n';
    const main = 'fn main() { println!("{}", base::hello()); }\n';
    const app = crate('anvil_app', '0.2.0', main, deps, true);
    let r = await cargo(['publish', '--registry', 'r', '--no-verify', '--allow-dirty'], app);
    assert.equal(r.code, 0, r.stderr);
    const idx = await index('u', 'an/vi/anvil_app');
    assert.equal(idx.status, 200);
    assert.deepEqual(idx.lines[0]!.deps, [
      {
        name: 'base',
        req: '^0.1',
        features: [],
        optional: false,
        default_features: true,
        target: null,
        kind: 'normal',
        registry: null,
        package: 'anvil_base',
      },
    ]);

    const before = await s.ctx.db
      .selectFrom('package_version')
      .select('download_count')
      .where('version', '=', '0.1.0')
      .executeTakeFirstOrThrow();
    const consumer = crate('consumer', '0.0.1', main, deps, true);
    r = await cargo(['fetch'], consumer);
    assert.equal(r.code, 0, r.stderr);
    r = await cargo(['run', '--offline', '-q'], consumer);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'hello from anvil_base');
    const afterFetch = await s.ctx.db
      .selectFrom('package_version')
      .select('download_count')
      .where('version', '=', '0.1.0')
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterFetch.download_count), Number(before.download_count) + 1);
  });

  it('revalidates index files by ETag; yank and unyank change them', async () => {
    const first = await index('u', 'an/vi/anvil_base');
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await index('u', 'an/vi/anvil_base', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    // gzip when asked for (cargo asks), the same bytes otherwise.
    const raw = (encoding: string) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(`${root}/u/cargo/an/vi/anvil_base`, { headers: { 'accept-encoding': encoding } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    const zipped = await raw('deflate, gzip');
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers['etag'], etag);
    const plain = await raw('identity');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(zlib.gunzipSync(zipped.body).toString('utf8'), plain.body.toString('utf8'));
    assert.equal(plain.body.toString('utf8'), first.text);

    let r = await cargo(['yank', 'anvil_base@0.1.0', '--registry', 'r'], work);
    assert.equal(r.code, 0, r.stderr);
    const yanked = await index('u', 'an/vi/anvil_base', { 'if-none-match': etag });
    assert.equal(yanked.status, 200);
    assert.equal(yanked.lines[0]!.yanked, true);
    assert.notEqual(yanked.headers.get('etag'), etag);
    // A yanked version is still downloadable (lock files name it).
    assert.equal((await fetch(`${root}/u/cargo/api/v1/crates/anvil_base/0.1.0/download`)).status, 200);

    r = await cargo(['yank', 'anvil_base@0.1.0', '--undo', '--registry', 'r'], work);
    assert.equal(r.code, 0, r.stderr);
    const back = await index('u', 'an/vi/anvil_base');
    assert.equal(back.lines[0]!.yanked, false);

    // Yanking needs write access; an unknown version is 404.
    const url = `${root}/u/cargo/api/v1/crates/anvil_base/0.1.0/yank`;
    let y = await fetch(url, { method: 'DELETE' });
    assert.equal(y.status, 401);
    y = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${other.token}` } });
    assert.equal(y.status, 401);
    y = await fetch(`${root}/u/cargo/api/v1/crates/anvil_base/3.0.0/yank`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${u.token}` },
    });
    assert.equal(y.status, 404);
    assert.match(((await y.json()) as Errors).errors[0]!.detail, /does not exist/);
  });

  it('finds crates with cargo search and lists owners', async () => {
    let r = await cargo(['search', '--registry', 'r', 'anvil'], work);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^anvil_app = "0\.2\.0"\s+# the anvil_app crate$/m);
    assert.match(r.stdout, /^anvil_base = "0\.1\.0"\s+# the anvil_base crate$/m);

    const page = await fetch(`${root}/u/cargo/api/v1/crates?q=base&per_page=5`);
    assert.deepEqual(await page.json(), {
      crates: [{ name: 'anvil_base', max_version: '0.1.0', description: 'the anvil_base crate' }],
      meta: { total: 1 },
    });

    r = await cargo(['owner', '--list', 'anvil_base', '--registry', 'r'], work);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^u\b/m);
    assert.equal((await fetch(`${root}/u/cargo/api/v1/crates/nope/owners`)).status, 404);
  });

  it('refuses a duplicate version: cargo stops, the API answers 409', async () => {
    const dir = crate('anvil_base', '0.1.0', 'pub fn hello() {}\n');
    const r = await cargo(['publish', '--registry', 'r', '--no-verify', '--allow-dirty'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /already exists/);
    const raw = await rawPublish(
      'u',
      publishBody(meta('anvil_base', '0.1.0'), Buffer.from('crate')),
      `Bearer ${u.token}`,
    );
    assert.equal(raw.status, 409);
    assert.match(((await raw.json()) as Errors).errors[0]!.detail, /already exists/);
    // Build metadata does not make another version.
    const build = await rawPublish(
      'u',
      publishBody(meta('anvil_base', '0.1.0+build.5'), Buffer.from('crate')),
      `Bearer ${u.token}`,
    );
    assert.equal(build.status, 409);
    assert.match(((await build.json()) as Errors).errors[0]!.detail, /already exists \[version: 0\.1\.0\]/);
    // The index is unchanged.
    assert.equal((await index('u', 'an/vi/anvil_base')).lines.length, 1);
  });

  it('refuses malformed publish bodies, names and versions with 400 in the errors shape', async () => {
    const auth = `Bearer ${u.token}`;
    const crateOk = await crateOf('shape_ok', '1.0.0');
    const good = publishBody(meta('shape_ok', '1.0.0'), crateOk);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['empty', Buffer.alloc(0), /empty|ends inside/],
      ['two bytes of length', Buffer.from([1, 0]), /length of the metadata/],
      ['JSON shorter than its length', good.subarray(0, 20), /ends inside the metadata/],
      ['no crate length', good.subarray(0, good.length - crateOk.length - 2), /length of the crate/],
      ['crate shorter than its length', good.subarray(0, good.length - 3), /before the end of the crate/],
      ['bad JSON', publishBody('{"name": "x", ', Buffer.from('c')), /no JSON/],
      ['JSON not an object', publishBody('[1,2]', Buffer.from('c')), /JSON object/],
      ['huge JSON length', Buffer.from([0xff, 0xff, 0xff, 0xff]), /larger than/],
      ['invalid name', publishBody(meta('9lives', '1.0.0'), Buffer.from('c')), /invalid crate name/],
      ['name with a slash', publishBody(meta('../etc', '1.0.0'), Buffer.from('c')), /invalid crate name/],
      ['no name', publishBody({ vers: '1.0.0' }, Buffer.from('c')), /no crate name/],
      ['invalid semver', publishBody(meta('semver_bad', '1.0'), Buffer.from('c')), /semantic version/],
      ['semver with junk', publishBody(meta('semver_bad', '1.0.0.0'), Buffer.from('c')), /semantic/],
      [
        'bad dependency',
        publishBody(meta('dep_bad', '1.0.0', { deps: [{ name: 'x', version_req: 7 }] }), Buffer.from('c')),
        /version_req/,
      ],
      [
        'bad dependency kind',
        publishBody(
          meta('dep_bad', '1.0.0', { deps: [{ name: 'x', version_req: '^1', kind: 'weird' }] }),
          Buffer.from('c'),
        ),
        /kind/,
      ],
      [
        'bad features',
        publishBody(meta('feat_bad', '1.0.0', { features: { a: 'b' } }), Buffer.from('c')),
        /features/,
      ],
    ];
    // Crates that are no sound gzip'd tar of the package.
    const crateOkBad = await crateOf('crate_bad', '1.0.0');
    const crates: Array<[string, Buffer, RegExp]> = [
      ['a crate of random bytes', crypto.randomBytes(200), /not a valid gzip file/],
      ['a crate cut short', crateOkBad.subarray(0, crateOkBad.length - 10), /not a valid gzip file/],
      ['a gzip of no tar', zlib.gzipSync(Buffer.alloc(2000, 'x')), /not a valid tar archive/],
      [
        'a crate of another version',
        await crateOf('crate_bad', '1.0.1'),
        /no crate_bad-1\.0\.0\/Cargo\.toml/,
      ],
    ];
    for (const [what, crate, detail] of crates)
      cases.push([what, publishBody(meta('crate_bad', '1.0.0'), crate), detail]);
    const used = await packagesUsed(s, u.token);
    for (const [what, body, detail] of cases) {
      const r = await rawPublish('u', body, auth);
      assert.equal(r.status, 400, what);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/, what);
      const json = (await r.json()) as Errors;
      assert.equal(json.errors.length, 1, what);
      assert.match(json.errors[0]!.detail, detail, what);
    }
    // Nothing of any of them was kept.
    const listed = await s.api<Array<{ name: string }>>('GET', '/packages/u?type=cargo', { token: u.token });
    assert.deepEqual(listed.body.map((p) => p.name).sort(), ['anvil_app', 'anvil_base']);
    await assertNothingKept(
      s,
      crates.map((c) => c[1]),
      u.token,
      used,
    );
    // The well-formed body is accepted.
    const ok = await rawPublish('u', good, auth);
    assert.equal(ok.status, 200, await ok.text());
  });

  it('keeps nothing of a publish cut off half-way', async () => {
    const full = publishBody(meta('cutoff', '1.0.0'), crypto.randomBytes(1_000_000));
    await new Promise<void>((resolve) => {
      const req = http.request(`${root}/u/cargo/api/v1/crates/new`, {
        method: 'PUT',
        headers: { 'content-length': String(full.length), authorization: `Bearer ${u.token}` },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(full.subarray(0, 200_000));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await index('u', 'cu/to/cutoff')).status, 404);
    const listed = await s.api<unknown[]>('GET', '/packages/u?q=cutoff', { token: u.token });
    assert.deepEqual(listed.body, []);
    const tmp = path.join(s.dataDir, 'packages', 'tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no temporary file left');
  });

  it('asks for credentials with 401, also of accounts without write access (as Forgejo)', async () => {
    const body = publishBody(meta('creds', '1.0.0'), Buffer.from('c'));
    const anon = await rawPublish('u', body);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.ok(((await anon.json()) as Errors).errors[0]!.detail);
    assert.equal((await rawPublish('u', body, 'Bearer not-a-token')).status, 401);
    const asOther = await rawPublish('u', body, `Bearer ${other.token}`);
    assert.equal(asOther.status, 401);
    assert.equal(asOther.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    const readOnly = await s.createUser('reader', { scopes: ['read:package', 'read:user'] });
    const ro = await rawPublish('reader', body, `Bearer ${readOnly.token}`);
    assert.equal(ro.status, 401);
    assert.match(((await ro.json()) as Errors).errors[0]!.detail, /write:package/);

    // cargo shows the server's refusal.
    const dir = crate('theirs', '1.0.0', 'pub fn f() {}\n');
    const r = await cargo(['publish', '--registry', 'r', '--no-verify', '--allow-dirty'], dir, {
      CARGO_REGISTRIES_R_TOKEN: `Bearer ${other.token}`,
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /401/);
    assert.match(r.stderr, /may not write packages of u/);
    assert.equal((await index('u', 'th/ei/theirs')).status, 404);
  });

  it('serves a private owner’s registry only with credentials (cargo sends its token)', async () => {
    const p = await s.createUser('p');
    const r0 = await s.api('PATCH', '/admin/users/p', {
      token: s.admin.token,
      body: { visibility: 'private' },
    });
    assert.equal(r0.status, 200, r0.text);
    const anon = await fetch(`${root}/p/cargo/config.json`);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    const own = await fetch(`${root}/p/cargo/config.json`, {
      headers: { authorization: `Bearer ${p.token}` },
    });
    assert.equal(own.status, 200);
    assert.equal(((await own.json()) as Record<string, unknown>)['auth-required'], true);
    const asOther = await fetch(`${root}/p/cargo/config.json`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    assert.equal(asOther.status, 401);
    assert.equal(asOther.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');

    const tokens = { CARGO_REGISTRIES_RP_TOKEN: `Bearer ${p.token}` };
    const dep = crate('secret_dep', '1.0.0', 'pub fn n() -> u32 { 42 }\n');
    let r = await cargo(['publish', '--registry', 'rp', '--no-verify', '--allow-dirty'], dep, tokens);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await index('p', 'se/cr/secret_dep')).status, 401);
    assert.equal((await fetch(`${root}/p/cargo/api/v1/crates/secret_dep/1.0.0/download`)).status, 401);
    const user = crate(
      'secret_user',
      '0.1.0',
      'fn main() { println!("{}", secret_dep::n()); }\n',
      '[dependencies]\nsecret_dep = { version = "1", registry = "rp" }\n',
      true,
    );
    r = await cargo(['fetch'], user, tokens);
    assert.equal(r.code, 0, r.stderr);
  });

  it('lets members of an organization team with packages write publish to it, not readers', async () => {
    const writer = await s.createUser('writer');
    const reader = await s.createUser('reader2');
    let r = await s.api('POST', '/orgs', { token: u.token, body: { username: 'crates-org' } });
    assert.equal(r.status, 201, r.text);
    for (const [team, mode, member] of [
      ['publishers', 'write', 'writer'],
      ['readers', 'read', 'reader2'],
    ] as const) {
      r = await s.api<{ id: number }>('POST', '/orgs/crates-org/teams', {
        token: u.token,
        body: { name: team, permission: mode, units_map: { 'repo.packages': mode } },
      });
      assert.equal(r.status, 201, r.text);
      const id = (r.body as { id: number }).id;
      r = await s.api('PUT', `/teams/${id}/members/${member}`, { token: u.token });
      assert.equal(r.status, 204, r.text);
    }
    const body = publishBody(meta('org_crate', '1.0.0'), await crateOf('org_crate', '1.0.0'));
    const denied = await rawPublish('crates-org', body, `Bearer ${reader.token}`);
    assert.equal(denied.status, 401);
    const ok = await rawPublish('crates-org', body, `Bearer ${writer.token}`);
    assert.equal(ok.status, 200, await ok.text());
    assert.equal((await index('crates-org', 'or/g_/org_crate')).lines[0]!.vers, '1.0.0');
    const owners = await fetch(`${root}/crates-org/cargo/api/v1/crates/org_crate/owners`);
    assert.deepEqual(
      ((await owners.json()) as { users: Array<{ login: string }> }).users.map((x) => x.login),
      ['crates-org'],
    );
    const y = await fetch(`${root}/crates-org/cargo/api/v1/crates/org_crate/1.0.0/yank`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${reader.token}` },
    });
    assert.equal(y.status, 401);
  });

  it('answers 413 over quota and 403 over LIMIT_SIZE_CARGO (administrators exempt)', async () => {
    const q = await startServer({ ANVIL__PACKAGES__LIMIT_SIZE_CARGO: '1000' });
    try {
      const l = await q.createUser('limited');
      const big = publishBody(
        meta('big', '1.0.0'),
        await crateOf('big', '1.0.0', { 'data.bin': crypto.randomBytes(5000) }),
      );
      const put = (authorization: string) =>
        fetch(`${q.url}/api/packages/limited/cargo/api/v1/crates/new`, {
          method: 'PUT',
          headers: { authorization },
          body: new Uint8Array(big),
        });
      const r = await put(`Bearer ${l.token}`);
      assert.equal(r.status, 403);
      assert.match(((await r.json()) as Errors).errors[0]!.detail, /limit of 1000 bytes/);
      const asAdmin = await put(`Bearer ${q.admin.token}`);
      assert.equal(asAdmin.status, 200, await asAdmin.text());
    } finally {
      await q.close();
    }

    const dave = await s.createUser('dave');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'cargo-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'cargo-tiny', rules: [{ name: 'cargo-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/cargo-tiny/users/dave', { token: s.admin.token });
    const auth = `Bearer ${dave.token}`;
    const r1 = await rawPublish('dave', publishBody(meta('q', '1.0.0'), await crateOf('q', '1.0.0')), auth);
    assert.equal(r1.status, 200, 'the upload that crosses the limit goes through, as in Forgejo');
    const r2 = await rawPublish('dave', publishBody(meta('q', '1.0.1'), Buffer.alloc(100, 2)), auth);
    assert.equal(r2.status, 413);
    assert.match(((await r2.json()) as Errors).errors[0]!.detail, /quota/);
    assert.equal((await index('dave', '1/q')).lines.length, 1);
  });

  it('deletes a version through the REST API: index updated, package webhook sent', async () => {
    const hook = await s.api<{ id: number }>('POST', '/user/hooks', {
      token: u.token,
      body: {
        type: 'forgejo',
        config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
        events: ['package'],
        active: true,
      },
    });
    const auth = `Bearer ${u.token}`;
    for (const v of ['1.0.0', '1.1.0']) {
      const r = await rawPublish('u', publishBody(meta('gone', v), await crateOf('gone', v)), auth);
      assert.equal(r.status, 200);
    }
    assert.equal((await index('u', 'go/ne/gone')).lines.length, 2);
    let d = await s.api('DELETE', '/packages/u/cargo/gone/1.0.0', { token: u.token });
    assert.equal(d.status, 204, d.text);
    assert.deepEqual(
      (await index('u', 'go/ne/gone')).lines.map((l) => l.vers),
      ['1.1.0'],
    );
    d = await s.api('DELETE', '/packages/u/cargo/gone/1.1.0', { token: u.token });
    assert.equal(d.status, 204, d.text);
    assert.equal((await index('u', 'go/ne/gone')).status, 404);
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['payload'])
      .where('hook_id', '=', hook.body.id)
      .orderBy('id')
      .execute();
    const actions = tasks.map((t) => {
      const p = JSON.parse(t.payload) as { action: string; package: { version: string } };
      return `${p.action} ${p.package.version}`;
    });
    assert.deepEqual(actions, ['created 1.0.0', 'created 1.1.0', 'deleted 1.0.0', 'deleted 1.1.0']);
  });
});
