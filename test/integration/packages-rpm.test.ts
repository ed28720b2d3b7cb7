// The RPM registry driven by the real dnf (Debian's dnf) into a temporary --installroot, from the
// `.repo` file Anvil serves (gpgcheck=1 and repo_gpgcheck=1: repomd.xml checked against the
// owner's repository.key; the package signed by rpmsign with a test packager key imported into the
// installroot's rpm database). Packages are built in the test with rpmbuild, uploaded with PUT
// under a group. Also: the repodata (primary, filelists, other), download and deletion, a private
// owner's repository (401 with the challenge, also to other users), bad packages (400, nothing
// kept), duplicates (409) and LIMIT_SIZE_RPM (403).
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

describe('RPM registry (dnf)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let gnupg: string;
  let n = 0;

  /** A noarch .rpm built by rpmbuild, signed by the test packager key unless `unsigned`. */
  function rpm(
    name: string,
    version: string,
    opts: { payload?: string; unsigned?: boolean; requires?: string } = {},
  ): Buffer {
    const top = path.join(work, `build-${n++}`);
    fs.mkdirSync(path.join(top, 'SPECS'), { recursive: true });
    const spec = path.join(top, 'SPECS', `${name}.spec`);
    fs.writeFileSync(
      spec,
      `Name: ${name}\nVersion: ${version}\nRelease: 1\nSummary: a greeting\nLicense: MIT\n` +
        'URL: https://example.com/hello\nBuildArch: noarch\nAutoReqProv: no\n' +
        (opts.requires ? `Requires: ${opts.requires}\n` : '') +
        `%description\nA longer description of the greeting.\n%install\nmkdir -p %{buildroot}/usr/share/${name}\n` +
        `echo '${opts.payload ?? `${name} ${version}`}' > %{buildroot}/usr/share/${name}/hello.txt\n` +
        `%files\n/usr/share/${name}\n%changelog\n* Sat Nov 28 2026 Anvil Tester <t@example.com> - ${version}-1\n- first\n`,
    );
    execFileSync('rpmbuild', ['-bb', '--quiet', '--define', `_topdir ${top}`, spec], { stdio: 'ignore' });
    const file = path.join(top, 'RPMS', 'noarch', `${name}-${version}-1.noarch.rpm`);
    if (!opts.unsigned) {
      execFileSync(
        'rpmsign',
        [
          '--define',
          '__gpg /usr/bin/gpg',
          '--define',
          `_gpg_path ${gnupg}`,
          '--define',
          '_gpg_name Anvil Packager',
          '--addsign',
          file,
        ],
        { stdio: 'ignore' },
      );
    }
    return fs.readFileSync(file);
  }

  const basic = (user: { name: string; token: string }) =>
    `Basic ${Buffer.from(`${user.name}:${user.token}`).toString('base64')}`;
  const upload = (owner: string, group: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${owner}/rpm/${group ? `${group}/` : ''}upload`, {
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
  const gunzip = async (p: string) => {
    const r = await get(p);
    assert.equal(r.status, 200, p);
    return zlib.gunzipSync(Buffer.from(await r.arrayBuffer())).toString();
  };

  function dnf(root: string, args: string[]): Promise<{ code: number; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        'dnf',
        [
          '-y',
          '-q',
          `--installroot=${root}`,
          '--releasever=1',
          `--setopt=reposdir=${path.join(root, 'repos')}`,
          `--setopt=cachedir=${path.join(root, 'cache')}`,
          '--setopt=install_weak_deps=0',
          ...args,
        ],
        { env: { PATH: process.env['PATH'], LC_ALL: 'C.UTF-8', HOME: root } },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, out }));
    });
  }

  let hello: Buffer;

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-rpm-'));
    gnupg = path.join(work, 'gnupg');
    fs.mkdirSync(gnupg, { mode: 0o700 });
    execFileSync(
      'gpg',
      [
        '--homedir',
        gnupg,
        '--batch',
        '--passphrase',
        '',
        '--quick-gen-key',
        'Anvil Packager',
        'rsa2048',
        'sign',
        'never',
      ],
      { stdio: 'ignore' },
    );
    hello = rpm('hello-anvil', '1.0', { requires: 'other-anvil >= 2.0' });
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('takes .rpms into a group, writes signed repodata, and dnf installs from the .repo file', async () => {
    const r = await upload('u', 'el9/stable', hello, basic(u));
    assert.equal(r.status, 201, await r.text());
    assert.equal((await upload('u', 'el9/stable', rpm('other-anvil', '2.0'), basic(u))).status, 201);

    const repomd = await text('u/rpm/el9/stable/repodata/repomd.xml');
    assert.match(repomd, /<data type="primary">[\s\S]*repodata\/primary\.xml\.gz/);
    const primary = await gunzip('u/rpm/el9/stable/repodata/primary.xml.gz');
    assert.match(primary, /packages="2"/);
    assert.match(primary, /<name>hello-anvil<\/name>/);
    assert.match(primary, /<version epoch="0" ver="1.0" rel="1"\/>/);
    assert.match(primary, /<rpm:license>MIT<\/rpm:license>/);
    assert.match(primary, /<rpm:entry name="other-anvil" flags="GE" epoch="0" ver="2.0"\/>/);
    const sum = crypto.createHash('sha256').update(hello).digest('hex');
    assert.match(primary, new RegExp(`<checksum type="sha256" pkgid="YES">${sum}</checksum>`));
    const filelists = await gunzip('u/rpm/el9/stable/repodata/filelists.xml.gz');
    assert.match(filelists, /<file>\/usr\/share\/hello-anvil\/hello.txt<\/file>/);
    assert.match(await gunzip('u/rpm/el9/stable/repodata/other.xml.gz'), /author="Anvil Tester/);
    assert.match(await text('u/rpm/el9/stable/repodata/repomd.xml.asc'), /BEGIN PGP SIGNATURE/);
    // Another group is another repository.
    assert.equal((await get('u/rpm/repodata/repomd.xml')).status, 404);

    const dl = await get('u/rpm/el9/stable/package/hello-anvil/1.0-1/noarch');
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(hello));

    const root = fs.mkdtempSync(path.join(work, 'root-'));
    fs.mkdirSync(path.join(root, 'repos'));
    const config = await text('u/rpm/el9/stable.repo');
    assert.match(config, /gpgcheck=1\n/);
    assert.match(config, /repo_gpgcheck=1\n/);

    const pub = path.join(work, 'packager.asc');
    execFileSync('gpg', ['--homedir', gnupg, '--armor', '--export', '--output', pub, 'Anvil Packager']);
    // The packager's key beside the repository's: both are imported (-y) and checked.
    fs.writeFileSync(
      path.join(root, 'repos', 'anvil.repo'),
      config.replace(/^gpgkey=.*$/m, (l) => `${l} file://${pub}`),
    );

    const res = await dnf(root, ['install', 'hello-anvil']);
    assert.equal(res.code, 0, res.out);
    assert.equal(
      fs.readFileSync(path.join(root, 'usr', 'share', 'hello-anvil', 'hello.txt'), 'utf8'),
      'hello-anvil 1.0\n',
    );
    assert.ok(fs.existsSync(path.join(root, 'usr', 'share', 'other-anvil', 'hello.txt')), 'the dependency');

    // A tampered signature fails repo_gpgcheck: repomd.xml of another group, signed by nobody.
    const root2 = fs.mkdtempSync(path.join(work, 'root-'));
    fs.mkdirSync(path.join(root2, 'repos'));
    fs.writeFileSync(
      path.join(root2, 'repos', 'anvil.repo'),
      config.replace(/gpgkey=.*/, `gpgkey=${s.url}/api/packages/other/rpm/repository.key`),
    );
    const bad = await dnf(root2, ['install', 'hello-anvil']);
    assert.notEqual(bad.code, 0, bad.out);
    assert.equal(fs.existsSync(path.join(root2, 'usr', 'share', 'hello-anvil')), false);

    // Deletion removes it from the repodata.
    assert.equal(
      (
        await fetch(`${s.url}/api/packages/u/rpm/el9/stable/package/other-anvil/2.0-1/noarch`, {
          method: 'DELETE',
        })
      ).status,
      401,
    );
    const del = await fetch(`${s.url}/api/packages/u/rpm/el9/stable/package/other-anvil/2.0-1/noarch`, {
      method: 'DELETE',
      headers: { authorization: basic(u) },
    });
    assert.equal(del.status, 204);
    const after1 = await gunzip('u/rpm/el9/stable/repodata/primary.xml.gz');
    assert.match(after1, /packages="1"/);
    assert.doesNotMatch(after1, /<name>other-anvil</);
  });

  it('keeps the repodata after uploads and deletions equal to a build from scratch', async () => {
    // Each file's entries are rendered once and stored (rpm.repodata); rebuilds assemble them.
    const owner = (await s.ctx.users.getByName('u'))!;
    const kinds = ['primary', 'filelists', 'other'];
    const docs = async () => Promise.all(kinds.map((k) => gunzip(`u/rpm/inc/repodata/${k}.xml.gz`)));
    const fromScratch = async () => {
      await s.ctx.db.deleteFrom('package_property').where('name', '=', 'rpm.repodata').execute();
      await s.ctx.rpmPackages.rebuild(owner, 'inc');
      return docs();
    };
    const same = async (packages: number) => {
      const kept = await docs();
      assert.match(kept[0]!, new RegExp(`packages="${packages}"`));
      assert.deepEqual(await fromScratch(), kept);
      // And once more from the entries the scratch build stored.
      await s.ctx.rpmPackages.rebuild(owner, 'inc');
      assert.deepEqual(await docs(), kept);
    };
    for (const [name, version] of [
      ['inc-b', '1.0'],
      ['inc-a', '1.0'],
      ['inc-b', '2.0'],
    ] as const)
      assert.equal((await upload('u', 'inc', rpm(name, version, { unsigned: true }), basic(u))).status, 201);
    await same(3);
    const remove = (p: string) =>
      fetch(`${s.url}/api/packages/u/rpm/inc/package/${p}`, {
        method: 'DELETE',
        headers: { authorization: basic(u) },
      });
    assert.equal((await remove('inc-b/1.0-1/noarch')).status, 204);
    await same(2);
    assert.equal((await upload('u', 'inc', rpm('inc-c', '1.0', { unsigned: true }), basic(u))).status, 201);
    await same(3);
  });

  it('refuses bad packages with 400 keeping nothing, duplicates with 409, missing credentials with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = rpm('bad-case', '1.0', { unsigned: true });
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(300), /not an RPM package/],
      ['an rpm cut short', good.subarray(0, 400), /truncated|no header/],
    ];
    for (const [what, body, problem] of cases) {
      const r = await upload('u', '', body, basic(u));
      const t = await r.text();
      assert.equal(r.status, 400, `${what}: ${t}`);
      assert.match(t, problem, what);
    }
    const badGroup = await upload('u', '.hidden', good, basic(u));
    assert.equal(badGroup.status, 400);
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    const dup = await upload('u', 'el9/stable', hello, basic(u));
    assert.equal(dup.status, 409);
    const anon = await upload('u', '', good);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic /);
    assert.equal((await upload('u', '', good, basic(other))).status, 401);
    // The root group: `rpm.repo`.
    assert.equal((await upload('u', '', good, basic(u))).status, 201);
    assert.match(await text('u/rpm.repo'), /baseurl=.*\/api\/packages\/u\/rpm\n/);
    assert.match(await gunzip('u/rpm/repodata/primary.xml.gz'), /bad-case/);
  });

  it("refuses a private owner's repository to anonymous callers and others", async () => {
    await s.createUser('p');
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    const p = await s.createUser('p2');
    await s.api('PATCH', '/admin/users/p2', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await upload('p2', '', rpm('secret', '1.0', { unsigned: true }), basic(p))).status, 201);
    for (const auth of [undefined, basic(other)]) {
      for (const url of ['p2/rpm/repodata/repomd.xml', 'p2/rpm/package/secret/1.0-1/noarch', 'p2/rpm.repo']) {
        const r = await get(url, auth);
        assert.equal(r.status, 401, url);
        assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      }
    }
    assert.equal((await get('p2/rpm/repodata/repomd.xml', basic(p))).status, 200);
  });

  it('answers 403 over LIMIT_SIZE_RPM (administrators exempt)', async () => {
    const big = rpm('big-one', '1.0', { unsigned: true, payload: crypto.randomBytes(3000).toString('hex') });
    s.config.packages.limitSizeRpm = 1000;
    try {
      const r = await upload('u', 'big', big, basic(u));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await upload('u', 'big', big, basic(s.admin))).status, 201);
    } finally {
      s.config.packages.limitSizeRpm = -1;
    }
  });
});
