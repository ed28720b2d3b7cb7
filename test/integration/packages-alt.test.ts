// The ALT Linux (apt-rpm) registry, request by request as Forgejo's integration test drives it (no
// ALT client exists on Debian): .rpm files built with rpmbuild, uploaded with PUT to the root group
// and to `el9/stable`, the `.repo` configuration, the download under `RPMS.classic`, the
// repository files `base/release.classic`, `base/release` (its MD5Sum and BLAKE2b checked against
// the files served), `base/pkglist.classic` read here with a reader of RPM headers of its own
// (every field checked against the package) and by librpm, and `pkglist.classic.xz` (the same once unpacked by
// xz), then deletion. Also: a private owner (401 with the challenge, to others too), bad packages
// (400, nothing kept), duplicates (409), the package API, the package webhook, a cleanup rule, the
// package's web page, quota (413) and LIMIT_SIZE_ALT (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed } from '../helpers/archives.js';

type Value = string | string[] | number[];

/** The headers of a pkglist, one map (tag → value) for each package, checking their framing. */
function readPkglist(buf: Buffer): Array<Map<number, Value>> {
  const out: Array<Map<number, Value>> = [];
  let at = 0;
  while (at < buf.length) {
    assert.equal(buf.toString('hex', at, at + 8), '8eade80100000000', 'header magic');
    const count = buf.readUInt32BE(at + 8);
    const size = buf.readUInt32BE(at + 12);
    const data = buf.subarray(at + 16 + count * 16, at + 16 + count * 16 + size);
    assert.equal(data.length, size, 'header data complete');
    const h = new Map<number, Value>();
    let previous = -1;
    for (let i = 0; i < count; i++) {
      const e = at + 16 + i * 16;
      const [tag, type, offset, n] = [0, 4, 8, 12].map((k) => buf.readUInt32BE(e + k)) as [
        number,
        number,
        number,
        number,
      ];
      assert.ok(tag > previous, 'tags in order');
      previous = tag;
      if (type === 4) {
        assert.equal(offset % 4, 0, `INT32 tag ${tag} aligned`);
        h.set(
          tag,
          Array.from({ length: n }, (_, j) => data.readUInt32BE(offset + j * 4)),
        );
      } else if (type === 6 || type === 8 || type === 9) {
        const strings: string[] = [];
        let p = offset;
        for (let j = 0; j < n; j++) {
          const end = data.indexOf(0, p);
          assert.ok(end >= 0, 'terminated string');
          strings.push(data.toString('utf8', p, end));
          p = end + 1;
        }
        h.set(tag, type === 8 ? strings : strings[0]!);
      } else assert.fail(`unexpected type ${type} of tag ${tag}`);
    }
    out.push(h);
    at += 16 + count * 16 + size;
  }
  return out;
}

/** Reads a pkglist with librpm (Debian's python3-rpm), as apt-rpm does: what each header says. */
const LIBRPM = `
import json, sys, rpm
def s(v):
    return v.decode() if isinstance(v, bytes) else v
out = []
for h in rpm.readHeaderListFromFile(sys.argv[1], False):
    out.append({
        'nevra': s(h.format('%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}')),
        'summary': s(h[rpm.RPMTAG_SUMMARY]),
        'requires': [s(x) for x in h[rpm.RPMTAG_REQUIRENAME]],
        'provides': [s(x) for x in h[rpm.RPMTAG_PROVIDENAME]],
        'files': sorted(s(x) for x in h[rpm.RPMTAG_FILENAMES]),
        'changelog': [s(x) for x in h[rpm.RPMTAG_CHANGELOGTEXT]],
    })
print(json.dumps(out))
`;

describe('ALT Linux registry (apt-rpm protocol)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let n = 0;

  /** An x86_64 .rpm built by rpmbuild (a script in /usr/bin, a dependency, a changelog). */
  function rpm(name: string, version: string, opts: { payload?: string; epoch?: number } = {}): Buffer {
    const top = path.join(work, `build-${n++}`);
    fs.mkdirSync(path.join(top, 'SPECS'), { recursive: true });
    const spec = path.join(top, 'SPECS', `${name}.spec`);
    fs.writeFileSync(
      spec,
      `Name: ${name}\nVersion: ${version}\nRelease: alt1\nSummary: a greeting\nLicense: MIT\n` +
        'Group: System/Base\nPackager: Anvil Tester <t@example.com>\nURL: https://example.com/hello\n' +
        'AutoReqProv: no\nRequires: other-anvil >= 2.0\n' +
        (opts.epoch ? `Epoch: ${opts.epoch}\n` : '') +
        `%description\nA longer description.\n%install\nmkdir -p %{buildroot}/usr/bin %{buildroot}/usr/share/${name}\n` +
        `printf '#!/bin/sh\\necho hi\\n' > %{buildroot}/usr/bin/${name}\n` +
        `echo '${opts.payload ?? name}' > %{buildroot}/usr/share/${name}/hello.txt\n` +
        `%files\n%attr(0755,root,root) /usr/bin/${name}\n/usr/share/${name}/hello.txt\n` +
        `%changelog\n* Sat Nov 28 2026 Anvil Tester <t@example.com> - ${version}-alt1\n- first\n`,
    );
    execFileSync('rpmbuild', ['-bb', '--quiet', '--target', 'x86_64', '--define', `_topdir ${top}`, spec], {
      stdio: 'ignore',
    });
    return fs.readFileSync(path.join(top, 'RPMS', 'x86_64', `${name}-${version}-alt1.x86_64.rpm`));
  }
  /** A field of the .rpm, as rpm reads it. */
  const query = (file: Buffer, format: string) => {
    const p = path.join(work, `q-${n++}.rpm`);
    fs.writeFileSync(p, file);
    return execFileSync('rpm', ['-qp', '--nosignature', '--qf', format, p]).toString();
  };

  const basic = (user: { name: string; token: string }) =>
    `Basic ${Buffer.from(`${user.name}:${user.token}`).toString('base64')}`;
  const req = (method: string, p: string, auth?: string, body?: Buffer) =>
    fetch(`${s.url}/api/packages/${p}`, {
      method,
      headers: auth ? { authorization: auth } : {},
      ...(body ? { body: new Uint8Array(body) } : {}),
    });
  const upload = (owner: string, group: string, body: Buffer, auth?: string) =>
    req('PUT', `${owner}/alt/${group ? `${group}/` : ''}upload`, auth, body);
  const bytes = async (p: string, auth?: string) => {
    const r = await req('GET', p, auth);
    assert.equal(r.status, 200, `${p}: ${r.status}`);
    return Buffer.from(await r.arrayBuffer());
  };

  let hello: Buffer;

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-alt-'));
    hello = rpm('hello-anvil', '1.0.2');
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  for (const group of ['', 'el9/stable']) {
    const parts = group ? group.split('/') : ['alt'];
    const groupUrl = `u/alt/${parts.join('/')}`;
    const file = 'hello-anvil-1.0.2-alt1.x86_64.rpm';

    it(`serves the group ${group || '(root)'}: config, upload, download, repository files, deletion`, async () => {
      // RepositoryConfig
      const config = await bytes(`${groupUrl}.repo`);
      assert.equal(
        config.toString(),
        `[anvil-${['u', ...parts].join('-')}]\nname=${['u', 'Anvil', ...parts].join(' - ')}\n` +
          `baseurl=${[`${s.url}/api/packages/u/alt`, ...parts].join('/')}\nenabled=1`,
      );

      // Upload
      const anon = await upload('u', group, hello);
      assert.equal(anon.status, 401);
      assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      const up = await upload('u', group, hello, basic(u));
      assert.equal(up.status, 201, await up.text());
      const list = await s.api<Array<{ name: string; version: string; type: string }>>(
        'GET',
        '/packages/u?type=alt',
        { token: u.token },
      );
      assert.deepEqual(
        list.body.map((p) => [p.type, p.name, p.version]),
        [['alt', 'hello-anvil', '1.0.2-alt1']],
      );
      const files = await s.api<Array<{ name: string; Size: number }>>(
        'GET',
        '/packages/u/alt/hello-anvil/1.0.2-alt1/files',
        { token: u.token },
      );
      assert.deepEqual(
        files.body.map((f) => [f.name, f.Size]),
        [[file, hello.length]],
      );
      assert.equal((await upload('u', group, hello, basic(u))).status, 409);

      // Download
      assert.ok((await bytes(`${groupUrl}.repo/x86_64/RPMS.classic/${file}`)).equals(hello));

      // Repository
      const base = `${groupUrl}.repo/x86_64/base`;
      assert.equal((await req('HEAD', `${base}/dummy.xml`)).status, 404);
      assert.equal((await req('GET', `${base}/dummy.xml`)).status, 404);
      assert.equal((await req('HEAD', `${base}/release.classic`)).status, 200);
      const fields = (text: string) =>
        Object.fromEntries(
          text
            .split('\n')
            .map((l) => l.split(': '))
            .filter((p) => p.length === 2),
        ) as Record<string, string>;
      const classic = await bytes(`${base}/release.classic`);
      const rc = fields(classic.toString());
      assert.equal(rc['Component'], 'classic');
      assert.equal(rc['Origin'], 'Alt Linux Team');
      assert.equal(rc['Label'], 'Anvil');
      assert.equal(rc['Architecture'], 'x86_64');
      assert.equal(rc['NotAutomatic'], 'false');
      assert.ok(rc['Archive']);

      assert.equal((await req('HEAD', `${base}/release`)).status, 200);
      const pkglist = await bytes(`${base}/pkglist.classic`);
      const xz = await bytes(`${base}/pkglist.classic.xz`);
      const release = (await bytes(`${base}/release`)).toString();
      const r = fields(release);
      assert.equal(r['Origin'], 'Anvil');
      assert.equal(r['Label'], 'Anvil');
      assert.equal(r['Suite'], 'Sisyphus');
      assert.equal(r['Architectures'], 'x86_64');
      const sums = (algorithm: string) =>
        [
          ['pkglist.classic', pkglist],
          ['pkglist.classic.xz', xz],
          ['release.classic', classic],
        ]
          .map(
            ([name, b]) =>
              ` ${crypto
                .createHash(algorithm)
                .update(b as Buffer)
                .digest('hex')} ${b!.length} base/${name as string}\n`,
          )
          .join('');
      assert.ok(release.includes(`MD5Sum:\n${sums('md5')}BLAKE2b:\n${sums('blake2b512')}`), release);

      // pkglist.classic
      const headers = readPkglist(pkglist);
      assert.equal(headers.length, 1);
      const h = headers[0]!;
      assert.equal(h.get(1000), 'hello-anvil');
      assert.equal(h.get(1001), '1.0.2');
      assert.equal(h.get(1002), 'alt1');
      assert.equal(h.get(1004), 'a greeting');
      assert.equal(h.get(1005), 'A longer description.');
      assert.deepEqual(h.get(1006), [Number(query(hello, '%{BUILDTIME}'))]);
      assert.deepEqual(h.get(1009), [Number(query(hello, '%{SIZE}'))]);
      assert.equal(h.get(1014), 'MIT');
      assert.equal(h.get(1015), 'Anvil Tester <t@example.com>');
      assert.equal(h.get(1016), 'System/Base');
      assert.equal(h.get(1020), 'https://example.com/hello');
      assert.equal(h.get(1022), 'x86_64');
      assert.equal(h.get(1044), 'hello-anvil-1.0.2-alt1.src.rpm');
      // Provides and requires as the package has them (rpmlib ones too), flags raw.
      assert.deepEqual(h.get(1047), query(hello, '[%{PROVIDENAME}\\n]').trim().split('\n'));
      assert.deepEqual(h.get(1112), query(hello, '[%{PROVIDEFLAGS}\\n]').trim().split('\n').map(Number));
      assert.deepEqual(h.get(1113), query(hello, '[%{PROVIDEVERSION}\\n]').trim().split('\n'));
      const requires = h.get(1049) as string[];
      const at = requires.indexOf('other-anvil');
      assert.ok(at >= 0, String(requires));
      assert.equal((h.get(1048) as number[])[at]! & 0x0e, 0x0c, 'GE');
      assert.equal((h.get(1050) as string[])[at], '2.0');
      assert.deepEqual(requires, query(hello, '[%{REQUIRENAME}\\n]').trim().split('\n'));
      assert.deepEqual(h.get(1080), [Number(query(hello, '%{CHANGELOGTIME}'))]);
      assert.deepEqual(h.get(1081), ['Anvil Tester <t@example.com> - 1.0.2-alt1']);
      assert.deepEqual(h.get(1082), ['- first']);
      const dirs = h.get(1118) as string[];
      const paths = (h.get(1117) as string[]).map((b, i) => dirs[(h.get(1116) as number[])[i]!] + b).sort();
      assert.deepEqual(paths, ['/usr/bin/hello-anvil', '/usr/share/hello-anvil/hello.txt']);
      assert.equal(h.get(1000000), file);
      assert.deepEqual(h.get(1000001), [hello.length]);
      assert.equal(h.get(1000005), crypto.createHash('md5').update(hello).digest('hex'));
      assert.equal(h.get(1000009), crypto.createHash('blake2b512').update(hello).digest('hex'));
      assert.equal(h.get(1000010), 'RPMS.classic');

      // librpm reads it as apt-rpm would.
      const listFile = path.join(work, `pkglist-${n++}`);
      fs.writeFileSync(listFile, pkglist);
      const librpm = JSON.parse(
        execFileSync('/usr/bin/python3', ['-c', LIBRPM, listFile]).toString(),
      ) as unknown;
      assert.deepEqual(librpm, [
        {
          nevra: 'hello-anvil-1.0.2-alt1.x86_64',
          summary: 'a greeting',
          requires,
          provides: h.get(1047),
          files: ['/usr/bin/hello-anvil', '/usr/share/hello-anvil/hello.txt'],
          changelog: ['- first'],
        },
      ]);

      // pkglist.classic.xz
      assert.ok(xz.length < pkglist.length);
      assert.ok(execFileSync('xz', ['-dc'], { input: xz }).equals(pkglist));

      // Delete
      const target = `${groupUrl}.repo/x86_64/RPMS.classic/${file}`;
      assert.equal((await req('DELETE', target)).status, 401);
      assert.equal((await req('DELETE', target, basic(other))).status, 401);
      assert.equal((await req('DELETE', target, basic(u))).status, 204);
      const after1 = await s.api<unknown[]>('GET', '/packages/u?type=alt', { token: u.token });
      assert.deepEqual(after1.body, []);
      assert.equal((await req('DELETE', target, basic(u))).status, 404);
      assert.equal((await req('GET', `${base}/pkglist.classic`)).status, 404);
    });
  }

  it("keeps groups apart; webhooks, cleanup rules and the API's deletions reach the group's files", async () => {
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
    assert.equal((await upload('u', 'el9', hello, basic(u))).status, 201);
    assert.equal((await upload('u', 'el9', rpm('hello-anvil', '1.0.3'), basic(u))).status, 201);
    assert.equal((await upload('u', 'el9', rpm('other-anvil', '2.0'), basic(u))).status, 201);
    const names = async () =>
      readPkglist(await bytes('u/alt/el9.repo/x86_64/base/pkglist.classic')).map(
        (h) => `${h.get(1000) as string}-${h.get(1001) as string}`,
      );
    assert.deepEqual(await names(), ['hello-anvil-1.0.2', 'hello-anvil-1.0.3', 'other-anvil-2.0']);
    // The package's web page shows how to install it.
    const page = await fetch(`${s.url}/u/-/packages/alt/hello-anvil/1.0.2-alt1`);
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes(`apt-repo add rpm ${s.url}/api/packages/u/alt/alt.repo`));
    // Another group is another repository; an architecture with no package has no files.
    assert.equal((await req('GET', 'u/alt/alt.repo/x86_64/base/pkglist.classic')).status, 404);
    assert.equal((await req('GET', 'u/alt/el9.repo/noarch/base/release')).status, 404);

    // A cleanup rule of the type removes a version, and the group's files follow.
    const rule = await s.api<{ id: number }>('POST', '/packages/u/-/rules', {
      token: u.token,
      body: { type: 'alt', keep_count: 0, remove_pattern: '1\\.0\\.2-alt1' },
    });
    assert.equal(rule.status, 201, rule.text);
    assert.equal((await s.ctx.packageCleanup.run()).versions, 1);
    await s.api('DELETE', `/packages/u/-/rules/${rule.body.id}`, { token: u.token });
    assert.deepEqual(await names(), ['hello-anvil-1.0.3', 'other-anvil-2.0']);
    // So does a deletion through the API.
    const del = await s.api('DELETE', '/packages/u/alt/other-anvil/2.0-alt1', { token: u.token });
    assert.equal(del.status, 204);
    assert.deepEqual(await names(), ['hello-anvil-1.0.3']);

    // The package webhook: created and deleted versions.
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['event_type', 'payload'])
      .where('hook_id', '=', hook.body.id)
      .execute();
    const events = tasks.map((t) => {
      const p = JSON.parse(t.payload) as {
        action: string;
        package: { type: string; name: string; version: string };
      };
      return [t.event_type, p.action, p.package.type, p.package.name, p.package.version].join(' ');
    });
    assert.deepEqual(events.sort(), [
      'package created alt hello-anvil 1.0.2-alt1',
      'package created alt hello-anvil 1.0.3-alt1',
      'package created alt other-anvil 2.0-alt1',
      'package deleted alt hello-anvil 1.0.2-alt1',
      'package deleted alt other-anvil 2.0-alt1',
    ]);
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: u.token });
  });

  it('versions a package with an epoch as Forgejo (`{epoch}-{version}-{release}`) and serves its file', async () => {
    const e = rpm('epoch-anvil', '3.0', { epoch: 2 });
    assert.equal((await upload('u', 'ep', e, basic(u))).status, 201);
    const file = 'epoch-anvil-2-3.0-alt1.x86_64.rpm';
    const [h] = readPkglist(await bytes('u/alt/ep.repo/x86_64/base/pkglist.classic'));
    assert.deepEqual(h!.get(1003), [2]);
    assert.equal(h!.get(1001), '3.0');
    assert.equal(h!.get(1000000), file);
    assert.ok((await bytes(`u/alt/ep.repo/x86_64/RPMS.classic/${file}`)).equals(e));
    assert.equal((await req('DELETE', `u/alt/ep.repo/x86_64/RPMS.classic/${file}`, basic(u))).status, 204);
    assert.equal((await req('GET', `u/alt/ep.repo/x86_64/RPMS.classic/${file}`)).status, 404);
  });

  it('refuses bad packages with 400 keeping nothing, unknown URLs with 404', async () => {
    const used = await packagesUsed(s, u.token);
    const good = rpm('bad-case', '1.0');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(300), /not an RPM package/],
      ['an rpm cut short', good.subarray(0, 400), /truncated|no header/],
    ];
    for (const [what, body, problem] of cases) {
      const r = await upload('u', 'bad', body, basic(u));
      const t = await r.text();
      assert.equal(r.status, 400, `${what}: ${t}`);
      assert.match(t, problem, what);
    }
    assert.equal((await upload('u', '.hidden', good, basic(u))).status, 400);
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    assert.equal((await upload('u', '', good, basic(other))).status, 401);
    assert.equal((await req('GET', 'u/alt/nothing-here')).status, 404);
    assert.equal((await req('PUT', 'u/alt/el9/elsewhere', basic(u), good)).status, 404);
    assert.equal((await req('DELETE', 'u/alt/el9.repo/x86_64/base/release', basic(u))).status, 404);
  });

  it("refuses a private owner's repository to anonymous callers and others", async () => {
    const p = await s.createUser('p2');
    await s.api('PATCH', '/admin/users/p2', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await upload('p2', '', rpm('secret', '1.0'), basic(p))).status, 201);
    const urls = [
      'p2/alt/alt.repo',
      'p2/alt/alt.repo/x86_64/base/pkglist.classic',
      'p2/alt/alt.repo/x86_64/RPMS.classic/secret-1.0-alt1.x86_64.rpm',
    ];
    for (const auth of [undefined, basic(other)]) {
      for (const url of urls) {
        const r = await req('GET', url, auth);
        assert.equal(r.status, 401, url);
        assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      }
    }
    for (const url of urls) assert.equal((await req('GET', url, basic(p))).status, 200, url);
  });

  it('answers 403 over LIMIT_SIZE_ALT (administrators exempt) and 413 over quota', async () => {
    const big = rpm('big-one', '1.0', { payload: crypto.randomBytes(3000).toString('hex') });
    s.config.packages.limitSizeAlt = 1000;
    try {
      const r = await upload('u', 'big', big, basic(u));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await upload('u', 'big', big, basic(s.admin))).status, 201);
    } finally {
      s.config.packages.limitSizeAlt = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'alt-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'alt-tiny', rules: [{ name: 'alt-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/alt-tiny/users/q', { token: s.admin.token });
    // The upload that crosses the limit goes through, the next is refused (Forgejo's rule for its
    // other formats: its ALT upload route checks no quota).
    assert.equal((await upload('q', '', rpm('first-q', '1.0'), basic(q))).status, 201);
    assert.equal((await upload('q', '', rpm('second-q', '1.0'), basic(q))).status, 413);
  });
});
