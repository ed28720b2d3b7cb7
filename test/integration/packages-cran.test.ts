// The CRAN registry driven by the real R (Debian's r-base-core): source packages built here
// (DESCRIPTION, NAMESPACE and an R file; nothing to compile) uploaded with PUT .../cran/src, then
// installed by `install.packages(repos = Anvil)` and loaded; binary zips by platform and R
// version; the PACKAGES indexes over HTTP. Also bad archives and metadata (400, nothing kept),
// duplicates (409), credentials and a private owner (401 + challenge), LIMIT_SIZE_CRAN (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz, zip } from '../helpers/archives.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

describe('CRAN registry (R)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;

  const description = (name: string, version: string, extra = '') =>
    `Package: ${name}\nType: Package\nTitle: Says Hello\nVersion: ${version}\n` +
    `Author: Anvil Tester [aut, cre]\nMaintainer: Anvil Tester <t@example.com>\n` +
    `Description: Says hello,\n  from Anvil.\nLicense: MIT\nDepends: R (>= 3.5)\nNeedsCompilation: no\n${extra}`;
  /** A source package as R CMD build lays it out: {name}/DESCRIPTION, NAMESPACE, R/hello.R. */
  const source = (name: string, version: string, greeting: string) =>
    tgz({
      [`${name}/DESCRIPTION`]: description(name, version),
      [`${name}/NAMESPACE`]: 'export(hello)\n',
      [`${name}/R/hello.R`]: `hello <- function() ${JSON.stringify(greeting)}\n`,
    });
  const put = (p: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, {
      method: 'PUT',
      headers: auth ? { authorization: auth } : {},
      body: new Uint8Array(body),
    });
  const bearer = (token: string) => `Bearer ${token}`;
  const get = (p: string, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, { headers: auth ? { authorization: auth } : {} });
  const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

  function rscript(code: string): Promise<{ code: number; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('Rscript', ['--vanilla', '-e', code], {
        cwd: work,
        env: {
          PATH: process.env['PATH'],
          HOME: work,
          LC_ALL: 'C.UTF-8',
          R_LIBS_USER: path.join(work, 'lib'),
        },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c ?? 1, out }));
    });
  }

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cran-'));
    fs.mkdirSync(path.join(work, 'lib'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('install.packages from Anvil as the only repository installs the newest source version', async () => {
    const v1 = await source('anvilhello', '1.0.0', 'hello one');
    const v2 = await source('anvilhello', '1.2-1', 'hello one point two');
    for (const body of [v1, v2]) assert.equal((await put('u/cran/src', body, bearer(u.token))).status, 201);

    const index = await get('u/cran/src/contrib/PACKAGES');
    assert.equal(index.status, 200);
    assert.equal(
      await index.text(),
      'Package: anvilhello\nVersion: 1.2-1\nLicense: MIT\nDepends: R (>= 3.5)\n' +
        `NeedsCompilation: no\nMD5sum: ${md5(v2)}\n`,
    );
    const gz = await get('u/cran/src/contrib/PACKAGES.gz');
    assert.match(zlib.gunzipSync(Buffer.from(await gz.arrayBuffer())).toString(), /^Version: 1\.2-1$/m);
    const file = await get('u/cran/src/contrib/anvilhello_1.0.0.tar.gz');
    assert.equal(md5(Buffer.from(await file.arrayBuffer())), md5(v1));
    for (const p of ['u/cran/src/contrib/anvilhello_9.9.tar.gz', 'other/cran/src/contrib/PACKAGES']) {
      assert.equal((await get(p)).status, 404, p);
    }

    const lib = path.join(work, 'lib');
    const r = await rscript(
      `install.packages("anvilhello", repos = "${s.url}/api/packages/u/cran", lib = "${lib}", type = "source"); ` +
        `library(anvilhello, lib.loc = "${lib}"); cat("SAYS:", hello(), "\\n")`,
    );
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /SAYS: hello one point two/);

    const listed = await s.api<Array<{ name: string; version: string }>>('GET', '/packages/u?type=cran', {
      token: u.token,
    });
    assert.deepEqual(listed.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'anvilhello@1.0.0',
      'anvilhello@1.2-1',
    ]);
  });

  it('binary zips by platform and R version, each tree with its own PACKAGES', async () => {
    const bin = zip({ 'anvilhello/DESCRIPTION': description('anvilhello', '1.2-1', 'Built: R 4.2.2\n') });
    const ok = await put('u/cran/bin?platform=windows&rversion=4.2', bin, bearer(u.token));
    assert.equal(ok.status, 201, await ok.text());
    const index = await (await get('u/cran/bin/windows/contrib/4.2/PACKAGES')).text();
    assert.match(index, /^Package: anvilhello\nVersion: 1\.2-1\n/);
    assert.match(index, new RegExp(`MD5sum: ${md5(bin)}`));
    const file = await get('u/cran/bin/windows/contrib/4.2/anvilhello_1.2-1.zip');
    assert.equal(file.status, 200);
    assert.equal(md5(Buffer.from(await file.arrayBuffer())), md5(bin));
    assert.equal((await get('u/cran/bin/windows/contrib/4.3/PACKAGES')).status, 404);
    assert.equal((await get('u/cran/bin/macosx/contrib/4.2/anvilhello_1.2-1.zip')).status, 404);
    assert.equal((await get('u/cran/src/contrib/anvilhello_1.2-1.zip')).status, 404);
    // The same zip for another R version is another file; for the same one, a duplicate.
    assert.equal((await put('u/cran/bin?platform=windows&rversion=4.3', bin, bearer(u.token))).status, 201);
    assert.equal((await put('u/cran/bin?platform=windows&rversion=4.2', bin, bearer(u.token))).status, 409);
  });

  it('refuses bad archives and metadata with 400 keeping nothing, duplicates with 409, strangers with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await source('badcase', '1.0', 'x');
    const cases: Array<[string, string, Buffer, RegExp]> = [
      ['random bytes', 'src', crypto.randomBytes(700), /neither/],
      ['a tarball cut short', 'src', good.subarray(0, good.length - 30), /gzip|tar|unexpected/i],
      ['no DESCRIPTION', 'src', await tgz({ 'x/R/a.R': 'a <- 1\n' }), /DESCRIPTION file is missing/],
      ['a bad name', 'src', await tgz({ 'x/DESCRIPTION': description('9bad', '1.0') }), /name is invalid/],
      [
        'a bad version',
        'src',
        await tgz({ 'x/DESCRIPTION': description('okname', '1') }),
        /version is invalid/,
      ],
      ['no Package field', 'src', await tgz({ 'x/DESCRIPTION': 'Version: 1.0\n' }), /no package/],
      ['a zip as source', 'src', zip({ 'z/DESCRIPTION': description('zipsrc', '1.0') }), /gzipped tarball/],
      ['a tarball as binary', 'bin?platform=linux&rversion=4.2', good, /must be a zip/],
      ['no platform', 'bin?rversion=4.2', zip({ 'z/DESCRIPTION': description('noplat', '1.0') }), /platform/],
      [
        'a bad platform',
        'bin?platform=..&rversion=4.2',
        zip({ 'z/DESCRIPTION': description('dots', '1.0') }),
        /platform/,
      ],
    ];
    for (const [what, where, body, problem] of cases) {
      const res = await put(`u/cran/${where}`, body, bearer(u.token));
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match(t, problem, what);
    }
    await assertNothingKept(
      s,
      cases.map((c) => c[2]),
      u.token,
      used,
    );
    const again = await source('anvilhello', '1.0.0', 'again');
    const dup = await put('u/cran/src', again, bearer(u.token));
    assert.equal(dup.status, 409, await dup.text());
    for (const auth of [undefined, 'Bearer nothing', bearer(other.token)]) {
      const res = await put('u/cran/src', good, auth);
      assert.equal(res.status, 401, auth);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    }
  });

  it("a private owner's repository answers 401 to anyone but its readers", async () => {
    const p = await s.createUser('p');
    assert.equal(
      (await put('p/cran/src', await source('secretpkg', '1.0', 's'), bearer(p.token))).status,
      201,
    );
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const auth of [undefined, bearer(other.token)]) {
      for (const url of ['p/cran/src/contrib/PACKAGES', 'p/cran/src/contrib/secretpkg_1.0.tar.gz']) {
        const res = await get(url, auth);
        assert.equal(res.status, 401, `${url} ${auth}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
    assert.match(await (await get('p/cran/src/contrib/PACKAGES', bearer(p.token))).text(), /secretpkg/);
    // R sends the credentials of the repository's URL.
    const lib = path.join(work, 'lib');
    const repo = `http://p:${p.token}@${s.url.replace(/^http:\/\//, '')}/api/packages/p/cran`;
    const r = await rscript(
      `install.packages("secretpkg", repos = "${repo}", lib = "${lib}", type = "source"); ` +
        `library(secretpkg, lib.loc = "${lib}"); cat("SAYS:", hello(), "\\n")`,
    );
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /SAYS: s/);
  });

  it('answers 403 over LIMIT_SIZE_CRAN (administrators exempt)', async () => {
    const big = await tgz({
      'sized/DESCRIPTION': description('sized', '1.0'),
      'sized/R/data.R': crypto.randomBytes(6000).toString('hex'),
    });
    s.config.packages.limitSizeCran = 1000;
    try {
      const r = await put('u/cran/src', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await put('u/cran/src', big, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeCran = -1;
    }
  });
});
