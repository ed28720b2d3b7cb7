// The PyPI registry with the real clients: a wheel and an sdist made in the test (python3's
// zipfile and tarfile, no network), uploaded with Debian's twine, installed with pip from the
// simple index (PEP 691 JSON, and PEP 503 HTML checked over HTTP), with name normalization,
// Requires-Python, hashes and downloads; and the refusals: a wrong sha256_digest (nothing kept),
// a duplicate file (409, which twine --skip-existing passes), bad names and versions, missing
// credentials (401 with a Basic challenge), no write access, over quota, a cut-off upload, a
// private owner's index.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz, zip } from '../helpers/archives.js';

interface Run {
  code: number;
  out: string;
}
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

/** A wheel and an sdist of `name` `version` (a module `<mod>.py` saying VALUE). */
async function buildDists(dir: string, name: string, version: string, value: string, requires = '>=3.7') {
  const script = `
import sys, zipfile, tarfile, io, hashlib, base64
name, version, value, requires, out = sys.argv[1:6]
mod = name.replace('-', '_').replace('.', '_').lower()
dist = name.replace('-', '_')
metadata = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\nSummary: A test package <b>bold</b>\\nRequires-Python: {requires}\\n\\n"
files = {f"{mod}.py": f"VALUE = {value!r}\\n", f"{dist}-{version}.dist-info/METADATA": metadata,
         f"{dist}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: anvil-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
record = []
for p, c in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()
    record.append(f"{p},sha256={d},{len(c.encode())}")
record.append(f"{dist}-{version}.dist-info/RECORD,,")
files[f"{dist}-{version}.dist-info/RECORD"] = "\\n".join(record) + "\\n"
with zipfile.ZipFile(f"{out}/{dist}-{version}-py3-none-any.whl", "w") as z:
    for p, c in files.items(): z.writestr(p, c)
with tarfile.open(f"{out}/{dist}-{version}.tar.gz", "w:gz") as t:
    for p, c in {f"{dist}-{version}/PKG-INFO": metadata, f"{dist}-{version}/{mod}.py": f"VALUE = {value!r}\\n"}.items():
        b = c.encode(); info = tarfile.TarInfo(p); info.size = len(b); t.addfile(info, io.BytesIO(b))
`;
  const r = await run('python3', ['-c', script, name, version, value, requires, dir], dir);
  assert.equal(r.code, 0, r.out);
  const dist = name.replace(/-/g, '_');
  return {
    wheel: path.join(dir, `${dist}-${version}-py3-none-any.whl`),
    sdist: path.join(dir, `${dist}-${version}.tar.gz`),
  };
}

/** A twine-like multipart upload made by hand (for the refusals twine would not send). */
async function upload(
  url: string,
  fields: Record<string, string>,
  file: { name: string; data: Buffer } | null,
  auth?: string,
) {
  const form = new FormData();
  form.set(':action', 'file_upload');
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  if (file) form.set('content', new Blob([file.data as Buffer<ArrayBuffer>]), file.name);
  return fetch(url, { method: 'POST', body: form, headers: auth ? { authorization: auth } : {} });
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

const pkgInfo = (name: string, version: string) =>
  `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`;

/** An sdist made in the test: `{name}-{version}/PKG-INFO` (and `more`), gzip'd tar. */
const sdist = (name: string, version: string, more: Record<string, string | Buffer> = {}) =>
  tgz({
    [`${name}-${version}/PKG-INFO`]: pkgInfo(name, version),
    ...Object.fromEntries(Object.entries(more).map(([k, v]) => [`${name}-${version}/${k}`, v])),
  });
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describe('PyPI registry', () => {
  let s: TestServer;
  let work: string;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  const repoUrl = (owner: string) => `${s.url}/api/packages/${owner}/pypi`;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-pypi-'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const twine = (owner: string, user: string, secret: string, files: string[], extra: string[] = []) =>
    run(
      'twine',
      [
        'upload',
        '--non-interactive',
        '--disable-progress-bar',
        '--repository-url',
        repoUrl(owner),
        '-u',
        user,
        '-p',
        secret,
        ...extra,
        ...files,
      ],
      work,
      { TWINE_CERT: '' },
    );

  const pip = (owner: string, auth: string, spec: string, target: string) =>
    run(
      'pip',
      [
        'install',
        '--isolated',
        '--no-deps',
        '--no-cache-dir',
        '--disable-pip-version-check',
        '--target',
        target,
        '--index-url',
        `http://${auth}@127.0.0.1:${new URL(s.url).port}/api/packages/${owner}/pypi/simple/`,
        spec,
      ],
      work,
      { PIP_CONFIG_FILE: '/dev/null' },
    );

  it('uploads with twine and installs with pip', async () => {
    const d1 = fs.mkdtempSync(path.join(work, 'v1-'));
    const v1 = await buildDists(d1, 'Anvil_Demo.pkg', '1.0.0', 'one');
    const up = await twine('alice', 'alice', alice.token, [v1.wheel, v1.sdist]);
    assert.equal(up.code, 0, up.out);
    const d2 = fs.mkdtempSync(path.join(work, 'v2-'));
    const v2 = await buildDists(d2, 'Anvil_Demo.pkg', '1.1.0', 'two', '>=3.8');
    assert.equal((await twine('alice', 'alice', alice.password, [v2.wheel])).code, 0);

    // pip takes the newest version, through the normalized name.
    const target = fs.mkdtempSync(path.join(work, 'site-'));
    const inst = await pip('alice', `alice:${alice.token}`, 'anvil-demo-pkg', target);
    assert.equal(inst.code, 0, inst.out);
    assert.equal(fs.readFileSync(path.join(target, 'anvil_demo_pkg.py'), 'utf8'), "VALUE = 'two'\n");
    const pinned = fs.mkdtempSync(path.join(work, 'site-'));
    const old = await pip('alice', `alice:${alice.token}`, 'Anvil.Demo_Pkg==1.0.0', pinned);
    assert.equal(old.code, 0, old.out);
    assert.equal(fs.readFileSync(path.join(pinned, 'anvil_demo_pkg.py'), 'utf8'), "VALUE = 'one'\n");

    // One package, two versions, three files, in the API.
    const list = await s.api<Array<{ name: string; version: string; type: string }>>(
      'GET',
      '/packages/alice?type=pypi',
      {
        token: alice.token,
      },
    );
    assert.deepEqual(list.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'Anvil-Demo-pkg@1.0.0',
      'Anvil-Demo-pkg@1.1.0',
    ]);
    const files = await s.api<Array<{ name: string; sha256: string }>>(
      'GET',
      '/packages/alice/pypi/Anvil-Demo-pkg/1.0.0/files',
      {
        token: alice.token,
      },
    );
    assert.deepEqual(
      files.body.map((f) => f.name).sort(),
      [path.basename(v1.sdist), path.basename(v1.wheel)].sort(),
    );
    assert.equal(files.body.find((f) => f.name.endsWith('.whl'))!.sha256, sha256(fs.readFileSync(v1.wheel)));
  });

  it('serves the simple index as PEP 503 HTML and PEP 691 JSON', async () => {
    const auth = { authorization: basic('alice', alice.token) };
    const html = await fetch(`${repoUrl('alice')}/simple/anvil-demo-pkg/`, {
      headers: { ...auth, accept: 'text/html' },
    });
    assert.equal(html.status, 200);
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    const text = await html.text();
    assert.match(text, /<h1>Links for anvil-demo-pkg<\/h1>/);
    assert.match(
      text,
      /href="http:\/\/127\.0\.0\.1:\d+\/api\/packages\/alice\/pypi\/files\/Anvil-Demo-pkg\/1\.1\.0\/Anvil_Demo\.pkg-1\.1\.0-py3-none-any\.whl#sha256=[0-9a-f]{64}" data-requires-python="&gt;=3\.8">/,
    );
    assert.equal((text.match(/<a /g) ?? []).length, 3);

    const json = await fetch(`${repoUrl('alice')}/simple/ANVIL_demo.PKG`, {
      headers: { ...auth, accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.01' },
    });
    assert.match(json.headers.get('content-type') ?? '', /^application\/vnd\.pypi\.simple\.v1\+json/);
    const body = (await json.json()) as {
      meta: Record<string, string>;
      name: string;
      files: Array<Record<string, unknown>>;
    };
    assert.equal(body.meta['api-version'], '1.0');
    assert.equal(body.name, 'anvil-demo-pkg');
    assert.equal(body.files.length, 3);
    const wheel = body.files.find((f) => String(f['filename']).includes('1.1.0'))!;
    assert.equal(wheel['requires-python'], '>=3.8');
    assert.match(String((wheel['hashes'] as Record<string, string>)['sha256']), /^[0-9a-f]{64}$/);

    // The file the index points at is the file, and downloads are counted.
    const dl = await fetch(String(wheel['url']), { headers: auth });
    assert.equal(dl.status, 200);
    const bytes = Buffer.from(await dl.arrayBuffer());
    assert.equal(sha256(bytes), (wheel['hashes'] as Record<string, string>)['sha256']);
    assert.equal(dl.headers.get('content-length'), String(bytes.length));
    assert.equal((await fetch(`${repoUrl('alice')}/simple/nothing-here/`, { headers: auth })).status, 404);
  });

  it('answers HTML unless the PEP 691 JSON type is asked for by name (q-values honoured)', async () => {
    const url = new URL(`${repoUrl('alice')}/simple/anvil-demo-pkg/`);
    /** A GET with exactly these headers (fetch would add an Accept of any type); the Content-Type. */
    const typeFor = (accept?: string) =>
      new Promise<string>((resolve, reject) => {
        const headers: Record<string, string> = { authorization: basic('alice', alice.token) };
        if (accept !== undefined) headers['accept'] = accept;
        http
          .get(url, { headers }, (res) => {
            res.resume();
            res.on('end', () =>
              res.statusCode === 200
                ? resolve((res.headers['content-type'] ?? '').split(';')[0]!)
                : reject(new Error(`${accept}: ${res.statusCode}`)),
            );
          })
          .on('error', reject);
      });
    const JSON_TYPE = 'application/vnd.pypi.simple.v1+json';
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'text/html'],
      ['*/*', 'text/html'],
      ['application/*', 'application/vnd.pypi.simple.v1+html'],
      ['application/json', 'text/html'],
      ['text/html', 'text/html'],
      ['application/vnd.pypi.simple.v1+html', 'application/vnd.pypi.simple.v1+html'],
      [JSON_TYPE, JSON_TYPE],
      ['application/vnd.pypi.simple.latest+json', JSON_TYPE],
      // pip's header.
      [`${JSON_TYPE}, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01`, JSON_TYPE],
      [`text/html, ${JSON_TYPE};q=0.5`, 'text/html'],
      [`*/*;q=0.2, ${JSON_TYPE};q=0.9`, JSON_TYPE],
      [`${JSON_TYPE};q=0, */*`, 'text/html'],
      [`${JSON_TYPE};q=0`, 'text/html'],
    ];
    for (const [accept, expected] of cases)
      assert.equal(await typeFor(accept), expected, `Accept: ${accept}`);
  });

  it('refuses a wrong sha256_digest and keeps nothing', async () => {
    const data = fs.readFileSync(
      (await buildDists(fs.mkdtempSync(path.join(work, 'bad-')), 'checked', '1.0', 'x')).wheel,
    );
    const r = await upload(
      repoUrl('alice'),
      { name: 'checked', version: '1.0', sha256_digest: sha256(Buffer.from('other')) },
      { name: 'checked-1.0-py3-none-any.whl', data },
      basic('alice', alice.token),
    );
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { message: string }).message, /sha256/);
    const list = await s.api<unknown[]>('GET', '/packages/alice?q=checked', { token: alice.token });
    assert.deepEqual(list.body, []);
    const rows = await s.ctx.db
      .selectFrom('package_blob')
      .select('hash_sha256')
      .where('hash_sha256', '=', sha256(data))
      .execute();
    assert.equal(rows.length, 0, 'no blob row for the refused file');
    assert.ok(
      !fs.existsSync(
        path.join(s.dataDir, 'packages', sha256(data).slice(0, 2), sha256(data).slice(2, 4), sha256(data)),
      ),
    );
  });

  it('refuses distributions that are not what their names say with 400, keeping nothing', async () => {
    const wheel = zip({
      'broken.py': 'x = 1\n',
      'broken-1.0.dist-info/METADATA': pkgInfo('broken', '1.0'),
      'broken-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\n',
    });
    const tarGz = await sdist('broken', '1.0');
    const random = crypto.randomBytes(500);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['broken-1.0-py3-none-any.whl', random, /not a valid zip archive/],
      ['broken-1.0-py3-none-any.whl', wheel.subarray(0, wheel.length - 10), /not a valid zip archive/],
      ['broken-1.0-py3-none-any.whl', zip({ 'broken.py': 'x = 1\n' }), /no wheel/],
      ['broken-1.0.tar.gz', random, /not a valid gzip file/],
      ['broken-1.0.tar.gz', tarGz.subarray(0, tarGz.length - 10), /not a valid gzip file/],
      ['broken-1.0.tar.gz', await tgz({ 'broken-1.0/setup.py': '' }), /PKG-INFO/],
      ['broken-1.0.zip', random, /not a valid zip archive/],
      ['broken-1.0.tar.bz2', random, /not valid bzip2 data/],
      ['broken-1.0.tar.xz', random, /not xz data/],
    ];
    const used = await packagesUsed(s, alice.token);
    for (const [name, data, problem] of cases) {
      const r = await upload(
        repoUrl('alice'),
        { name: 'broken', version: '1.0', sha256_digest: sha256(data) },
        { name, data },
        basic('alice', alice.token),
      );
      const body = (await r.json()) as { message: string };
      assert.equal(r.status, 400, `${name}: ${body.message}`);
      assert.match(body.message, problem, name);
      assert.match(body.message, new RegExp(name.replace(/\./g, '\\.')), name);
    }
    const list = await s.api<unknown[]>('GET', '/packages/alice?q=broken', { token: alice.token });
    assert.deepEqual(list.body, []);
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      alice.token,
      used,
    );
    for (const [name, data] of [
      ['broken-1.0-py3-none-any.whl', wheel],
      ['broken-1.0.tar.gz', tarGz],
    ] as const) {
      const r = await upload(
        repoUrl('alice'),
        { name: 'broken', version: '1.0', sha256_digest: sha256(data) },
        { name, data },
        basic('alice', alice.token),
      );
      assert.equal(r.status, 201, await r.text());
    }
  });

  it('answers 409 for a file that exists, which twine --skip-existing passes', async () => {
    const d = fs.mkdtempSync(path.join(work, 'dup-'));
    const v = await buildDists(d, 'dupe', '2.0', 'x');
    assert.equal((await twine('alice', 'alice', alice.token, [v.wheel])).code, 0);
    const again = await upload(
      repoUrl('alice'),
      { name: 'dupe', version: '2.0', sha256_digest: sha256(fs.readFileSync(v.wheel)) },
      { name: path.basename(v.wheel), data: fs.readFileSync(v.wheel) },
      basic('alice', alice.token),
    );
    assert.equal(again.status, 409);
    const skip = await twine('alice', 'alice', alice.token, [v.wheel, v.sdist], ['--skip-existing']);
    assert.equal(skip.code, 0, skip.out);
  });

  it('refuses bad names, versions and file names with 400', async () => {
    const data = Buffer.from('not really a wheel');
    const cases: Array<[Record<string, string>, string]> = [
      [{ name: '-bad-', version: '1.0' }, 'good-1.0-py3-none-any.whl'],
      [{ name: 'bad name', version: '1.0' }, 'good-1.0-py3-none-any.whl'],
      [{ name: 'good', version: 'one.two' }, 'good-1.0-py3-none-any.whl'],
      [{ name: 'good', version: '' }, 'good-1.0-py3-none-any.whl'],
      [{ name: 'good', version: '1.0' }, 'good.exe'],
      [{ name: 'good', version: '1.0' }, '..whl'],
    ];
    for (const [fields, file] of cases) {
      const r = await upload(
        repoUrl('alice'),
        { ...fields, sha256_digest: sha256(data) },
        { name: file, data },
        basic('alice', alice.token),
      );
      assert.equal(r.status, 400, `${JSON.stringify(fields)} ${file}`);
    }
    const noFile = await upload(
      repoUrl('alice'),
      { name: 'good', version: '1.0' },
      null,
      basic('alice', alice.token),
    );
    assert.equal(noFile.status, 400);
  });

  it('asks for credentials, also of accounts without write access (401)', async () => {
    const data = Buffer.from('x');
    const fields = { name: 'creds', version: '1.0', sha256_digest: sha256(data) };
    const file = { name: 'creds-1.0.tar.gz', data };
    const anon = await upload(repoUrl('alice'), fields, file);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.equal((await upload(repoUrl('alice'), fields, file, basic('alice', 'wrong'))).status, 401);
    const asBob = await upload(repoUrl('alice'), fields, file, basic('bob', bob.token));
    assert.equal(asBob.status, 401);
    assert.equal(asBob.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    const twineBob = await twine('alice', 'bob', bob.token, [
      (await buildDists(fs.mkdtempSync(path.join(work, 'bob-')), 'creds', '1.0', 'x')).wheel,
    ]);
    assert.notEqual(twineBob.code, 0);
    assert.match(twineBob.out, /401/);
  });

  it('keeps a private owner’s index from others (401 with a challenge)', async () => {
    const carol = await s.createUser('carol');
    const d = fs.mkdtempSync(path.join(work, 'priv-'));
    const v = await buildDists(d, 'secretpkg', '1.0', 'x');
    assert.equal((await twine('carol', 'carol', carol.token, [v.wheel])).code, 0);
    await s.api('PATCH', '/admin/users/carol', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await fetch(`${repoUrl('carol')}/simple/secretpkg/`)).status, 401);
    const asBob = await fetch(`${repoUrl('carol')}/simple/secretpkg/`, {
      headers: { authorization: basic('bob', bob.token) },
    });
    // Forgejo's answer to an account without access: 401 and the challenge (pip asks again).
    assert.equal(asBob.status, 401);
    assert.equal(asBob.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    const file = await fetch(`${repoUrl('carol')}/files/secretpkg/1.0/${path.basename(v.wheel)}`, {
      headers: { authorization: basic('bob', bob.token) },
    });
    assert.equal(file.status, 401);
    const own = await fetch(`${repoUrl('carol')}/simple/secretpkg/`, {
      headers: { authorization: basic('carol', carol.token) },
    });
    assert.equal(own.status, 200);
  });

  it('answers 413 over quota and 403 over LIMIT_SIZE_PYPI', async () => {
    const q = await startServer({ ANVIL__PACKAGES__LIMIT_SIZE_PYPI: '1000' });
    try {
      const u = await q.createUser('limited');
      const big = await sdist('big', '1.0', { 'data.bin': crypto.randomBytes(5000) });
      const r = await upload(
        `${q.url}/api/packages/limited/pypi`,
        { name: 'big', version: '1.0', sha256_digest: sha256(big) },
        { name: 'big-1.0.tar.gz', data: big },
        basic('limited', u.token),
      );
      assert.equal(r.status, 403);
      const asAdmin = await upload(
        `${q.url}/api/packages/limited/pypi`,
        { name: 'big', version: '1.0', sha256_digest: sha256(big) },
        { name: 'big-1.0.tar.gz', data: big },
        basic('root', q.admin.token),
      );
      assert.equal(asAdmin.status, 201, `administrators are exempt: ${await asAdmin.text()}`);
    } finally {
      await q.close();
    }
    // Over quota: a rule limiting the packages subject, then an upload.
    const dave = await s.createUser('dave');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'pkg-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'tiny', rules: [{ name: 'pkg-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/tiny/users/dave', { token: s.admin.token });
    const first = await sdist('q', '1.0');
    const r1 = await upload(
      repoUrl('dave'),
      { name: 'q', version: '1.0', sha256_digest: sha256(first) },
      { name: 'q-1.0.tar.gz', data: first },
      basic('dave', dave.token),
    );
    assert.equal(r1.status, 201, 'the upload that crosses the limit goes through, as in Forgejo');
    const second = Buffer.alloc(100, 2);
    const r2 = await upload(
      repoUrl('dave'),
      { name: 'q', version: '1.1', sha256_digest: sha256(second) },
      { name: 'q-1.1.tar.gz', data: second },
      basic('dave', dave.token),
    );
    assert.equal(r2.status, 413);
  });

  it('keeps nothing of an upload cut off half-way', async () => {
    const boundary = 'anvilboundary';
    const head = Buffer.from(
      [
        `--${boundary}`,
        'Content-Disposition: form-data; name="name"',
        '',
        'cutoff',
        `--${boundary}`,
        'Content-Disposition: form-data; name="version"',
        '',
        '1.0',
        `--${boundary}`,
        'Content-Disposition: form-data; name="sha256_digest"',
        '',
        '0'.repeat(64),
        `--${boundary}`,
        'Content-Disposition: form-data; name="content"; filename="cutoff-1.0.tar.gz"',
        'Content-Type: application/octet-stream',
        '',
        '',
      ].join('\r\n'),
    );
    await new Promise<void>((resolve) => {
      const req = http.request(`${repoUrl('alice')}`, {
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + 1_000_000),
          authorization: basic('alice', alice.token),
        },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(head);
      req.write(crypto.randomBytes(200_000));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    await new Promise((r) => setTimeout(r, 500));
    const list = await s.api<unknown[]>('GET', '/packages/alice?q=cutoff', { token: alice.token });
    assert.deepEqual(list.body, []);
    const tmp = path.join(s.dataDir, 'packages', 'tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no temporary file left');
  });
});
