// The Vagrant box repository: boxes uploaded with PUT {name}/{version}/{provider}.box, the box
// metadata JSON (Forgejo's), HEAD and GET of boxes, and the real `vagrant box add` (Debian's
// vagrant) from the metadata URL, which picks the newest version and checks the SHA-512. Also bad
// boxes, names and versions (400, nothing kept), duplicates (409), credentials and a private owner
// (401 + challenge), LIMIT_SIZE_VAGRANT (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz } from '../helpers/archives.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

interface BoxMetadata {
  name: string;
  description?: string;
  versions: Array<{
    version: string;
    status: string;
    providers: Array<{ name: string; url: string; checksum: string; checksum_type: string }>;
  }>;
}

describe('Vagrant box repository', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;

  const box = (provider: string, description: string, extra: Record<string, string> = {}) =>
    tgz({
      'metadata.json': JSON.stringify({ provider }),
      'info.json': JSON.stringify({
        description,
        website: 'https://example.com/box',
        author: 'Anvil Tester',
      }),
      Vagrantfile: 'Vagrant.configure("2") do |config| end\n',
      ...extra,
    });
  const bearer = (token: string) => `Bearer ${token}`;
  const put = (p: string, body: Buffer, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, {
      method: 'PUT',
      headers: auth ? { authorization: auth } : {},
      body: new Uint8Array(body),
    });
  const req = (p: string, auth?: string, method = 'GET') =>
    fetch(`${s.url}/api/packages/${p}`, { method, headers: auth ? { authorization: auth } : {} });
  const sha512 = (b: Buffer) => crypto.createHash('sha512').update(b).digest('hex');

  function vagrant(args: string[]): Promise<{ code: number; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('vagrant', args, {
        cwd: work,
        env: {
          PATH: process.env['PATH'],
          HOME: work,
          VAGRANT_HOME: path.join(work, 'vagrant.d'),
          VAGRANT_CHECKPOINT_DISABLE: '1',
          VAGRANT_NO_PLUGINS: '1',
          LC_ALL: 'C.UTF-8',
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
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-vagrant-'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('uploads boxes, serves the metadata JSON, and vagrant box add installs the newest', async () => {
    const v1 = await box('virtualbox', 'first');
    const v2 = await box('virtualbox', 'second');
    const v2l = await box('libvirt', 'second');
    for (const [p, body] of [
      ['u/vagrant/test-box/1.0.0/virtualbox.box', v1],
      ['u/vagrant/test-box/1.10.0/virtualbox.box', v2],
      ['u/vagrant/test-box/1.10.0/libvirt.box', v2l],
    ] as const) {
      const r = await put(p, body, bearer(u.token));
      assert.equal(r.status, 201, `${p}: ${await r.text()}`);
    }
    const res = await req('u/vagrant/test-box');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const meta = (await res.json()) as BoxMetadata;
    assert.equal(meta.name, 'test-box');
    assert.equal(meta.description, 'second');
    assert.deepEqual(
      meta.versions.map((v) => v.version),
      ['1.0.0', '1.10.0'],
    );
    const base = `${s.url}/api/packages/u/vagrant/test-box`;
    assert.deepEqual(meta.versions[0]!.providers, [
      {
        name: 'virtualbox',
        url: `${base}/1.0.0/virtualbox.box`,
        checksum: sha512(v1),
        checksum_type: 'sha512',
      },
    ]);
    assert.deepEqual(meta.versions[1]!.providers.map((p) => p.name).sort(), ['libvirt', 'virtualbox']);
    assert.equal((await req('u/vagrant/test-box', undefined, 'HEAD')).status, 200);
    assert.equal((await req('u/vagrant/nothing', undefined, 'HEAD')).status, 404);
    const head = await req('u/vagrant/test-box/1.0.0/virtualbox.box', undefined, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(v1.length));
    const dl = await req('u/vagrant/test-box/1.0.0/virtualbox.box');
    assert.deepEqual(Buffer.from(await dl.arrayBuffer()), v1);
    for (const p of ['u/vagrant/test-box/2.0.0/virtualbox.box', 'u/vagrant/test-box/1.0.0/vmware.box']) {
      assert.equal((await req(p)).status, 404, p);
    }
    const auth = await req('u/vagrant/authenticate', bearer(u.token));
    assert.equal(auth.status, 200);
    assert.equal((await req('u/vagrant/authenticate')).status, 401);

    const r = await vagrant(['box', 'add', '--provider', 'virtualbox', base]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /Successfully added box 'test-box' \(v1\.10\.0\) for 'virtualbox'/);
    const listed = await vagrant(['box', 'list']);
    assert.match(listed.out, /test-box\s+\(virtualbox, 1\.10\.0\)/);
  });

  it('refuses bad boxes, names and versions with 400 keeping nothing, duplicates with 409, strangers with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await box('virtualbox', 'x');
    const cases: Array<[string, string, Buffer, RegExp]> = [
      ['random bytes', 'bad/1.0.0/virtualbox.box', crypto.randomBytes(700), /gzip/],
      ['gzip of no tar', 'bad/1.0.0/virtualbox.box', zlib.gzipSync(crypto.randomBytes(700)), /tar/i],
      ['a box cut short', 'bad/1.0.0/virtualbox.box', good.subarray(0, good.length - 20), /gzip|tar|end/i],
      ['no metadata.json', 'bad/1.0.0/virtualbox.box', await tgz({ Vagrantfile: '' }), /metadata\.json/],
      [
        'bad info.json',
        'bad/1.0.0/virtualbox.box',
        await tgz({ 'metadata.json': '{}', 'info.json': '{' }),
        /info\.json/,
      ],
      ['a bad version', 'bad/one/virtualbox.box', good, /version is invalid/],
      ['no .box', 'bad/1.0.0/virtualbox', good, /provider/],
      ['a bad name', '.bad/1.0.0/virtualbox.box', good, /name is invalid/],
    ];
    for (const [what, where, body, problem] of cases) {
      const res = await put(`u/vagrant/${where}`, body, bearer(u.token));
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match((JSON.parse(t) as { errors: string[] }).errors[0]!, problem, what);
    }
    await assertNothingKept(s, [...cases.map((c) => c[2])], u.token, used);
    const dup = await put('u/vagrant/test-box/1.0.0/virtualbox.box', good, bearer(u.token));
    assert.equal(dup.status, 409, await dup.text());
    for (const auth of [undefined, 'Bearer nothing', bearer(other.token)]) {
      const res = await put('u/vagrant/x/1.0.0/virtualbox.box', good, auth);
      assert.equal(res.status, 401, auth);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    }
  });

  it("a private owner's boxes answer 401 to anyone but their readers", async () => {
    const p = await s.createUser('p');
    const b = await box('virtualbox', 'secret');
    assert.equal((await put('p/vagrant/secret/1.0.0/virtualbox.box', b, bearer(p.token))).status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const auth of [undefined, bearer(other.token)]) {
      for (const url of ['p/vagrant/secret', 'p/vagrant/secret/1.0.0/virtualbox.box']) {
        const res = await req(url, auth);
        assert.equal(res.status, 401, `${url} ${auth}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
    assert.equal((await req('p/vagrant/secret', bearer(p.token))).status, 200);
  });

  it('answers 403 over LIMIT_SIZE_VAGRANT (administrators exempt)', async () => {
    const big = await box('virtualbox', 'big', { disk: crypto.randomBytes(6000).toString('hex') });
    s.config.packages.limitSizeVagrant = 1000;
    try {
      const r = await put('u/vagrant/big/1.0.0/virtualbox.box', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await put('u/vagrant/big/1.0.0/virtualbox.box', big, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeVagrant = -1;
    }
  });
});
