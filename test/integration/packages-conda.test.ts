// The Conda registry. No conda client can be installed here, so the test builds real packages
// the way conda-build and conda-package-handling do: `.tar.bz2` with tar and bzip2 (info/ first),
// `.conda` as a zip (python3's zipfile, stored) of metadata.json, pkg-*.tar.zst and
// info-*.tar.zst made with tar and zstd. It uploads them with HTTP PUT to a channel and to no
// channel and reads repodata.json, current_repodata.json and their .bz2 forms (decompressed with
// bzip2) per subdir, downloads files, and checks the refusals: not an archive, no
// info/index.json, a name or version that is not the file's, a duplicate (409), missing
// credentials, no write access or scope (401 + Basic), over quota (413), over
// LIMIT_SIZE_CONDA (403), and an upload cut off half-way (nothing kept).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** `data` through `bzip2 -dc` (async: the server runs in this process). */
function bunzip2(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('bzip2', ['-dc']);
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`bzip2 ${code}`)),
    );
    child.stdin.end(data);
  });
}

interface Spec {
  name: string;
  version: string;
  build: string;
  subdir: string;
  noarch?: string;
  depends?: string[];
  license?: string;
  /** Replaces info/index.json (null: none at all). */
  index?: Record<string, unknown> | null;
  /** Payload before info/ in the tar (not what conda-build does, but valid). */
  payloadFirst?: boolean;
  /** .conda members deflated instead of stored. */
  deflate?: boolean;
  content?: string;
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

type Entry = Record<string, unknown>;
interface RepodataDoc {
  info: { subdir: string };
  packages: Record<string, Entry>;
  'packages.conda': Record<string, Entry>;
  removed: unknown[];
  repodata_version: number;
}

describe('Conda registry', () => {
  let s: TestServer;
  let work: string;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  const base = (owner: string) => `${s.url}/api/packages/${owner}/conda`;

  /** Lays out a package's files (info/ and a payload) in a fresh directory. */
  function layout(spec: Spec): string {
    const dir = fs.mkdtempSync(path.join(work, 'pkg-'));
    fs.mkdirSync(path.join(dir, 'info'));
    fs.mkdirSync(path.join(dir, 'share'));
    const index =
      spec.index === undefined
        ? {
            name: spec.name,
            version: spec.version,
            build: spec.build,
            build_number: Number(/_(\d+)$/.exec(spec.build)?.[1] ?? 0),
            depends: spec.depends ?? [],
            license: spec.license ?? 'MIT',
            license_family: 'MIT',
            subdir: spec.subdir,
            timestamp: 1700000000123,
            ...(spec.noarch
              ? { noarch: spec.noarch, arch: null, platform: null }
              : { arch: 'x86_64', platform: 'linux' }),
          }
        : spec.index;
    if (index) fs.writeFileSync(path.join(dir, 'info', 'index.json'), JSON.stringify(index, null, 2));
    fs.writeFileSync(
      path.join(dir, 'info', 'about.json'),
      JSON.stringify({
        summary: `The ${spec.name} package`,
        home: 'https://example.com/x',
        dev_url: 'not a url',
      }),
    );
    fs.writeFileSync(path.join(dir, 'info', 'files'), `share/${spec.name}.txt\n`);
    fs.writeFileSync(
      path.join(dir, 'share', `${spec.name}.txt`),
      spec.content ?? `${spec.name} ${spec.version}\n`,
    );
    return dir;
  }

  const stem = (spec: Spec) => `${spec.name}-${spec.version}-${spec.build}`;

  async function tarBz2(spec: Spec): Promise<{ filename: string; data: Buffer }> {
    const dir = layout(spec);
    const filename = `${stem(spec)}.tar.bz2`;
    const order = spec.payloadFirst ? ['share', 'info'] : ['info', 'share'];
    await run('tar', ['-cjf', path.join(dir, filename), '-C', dir, ...order], dir);
    return { filename, data: fs.readFileSync(path.join(dir, filename)) };
  }

  async function condaFile(spec: Spec): Promise<{ filename: string; data: Buffer }> {
    const dir = layout(spec);
    const id = stem(spec);
    for (const [part, what] of [
      ['info', 'info'],
      ['pkg', 'share'],
    ] as const) {
      await run('tar', ['-cf', path.join(dir, `${part}.tar`), '-C', dir, what], dir);
      await run('zstd', ['-q', '--rm', `${part}.tar`, '-o', `${part}-${id}.tar.zst`], dir);
    }
    fs.writeFileSync(path.join(dir, 'metadata.json'), JSON.stringify({ conda_pkg_format_version: 2 }));
    const filename = `${id}.conda`;
    // As conda-package-handling writes it: stored members, the info member last.
    await run(
      'python3',
      [
        '-c',
        `import sys, zipfile
out, mode, ident = sys.argv[1:4]
with zipfile.ZipFile(out, 'w', compression=zipfile.ZIP_DEFLATED if mode == 'deflate' else zipfile.ZIP_STORED) as z:
    for n in ('metadata.json', f'pkg-{ident}.tar.zst', f'info-{ident}.tar.zst'):
        z.write(n, n)
`,
        filename,
        spec.deflate ? 'deflate' : 'store',
        id,
      ],
      dir,
    );
    return { filename, data: fs.readFileSync(path.join(dir, filename)) };
  }

  /** An upload as `curl --upload-file` sends it (no Content-Type), or with one. */
  const put = (url: string, data: Buffer, auth?: string, type?: string) =>
    fetch(url, {
      method: 'PUT',
      body: data as Buffer<ArrayBuffer>,
      headers: { ...(auth ? { authorization: auth } : {}), ...(type ? { 'content-type': type } : {}) },
    });

  async function repodata(owner: string, prefix: string, file = 'repodata.json', auth?: string) {
    const r = await fetch(`${base(owner)}/${prefix}/${file}`, {
      headers: auth ? { authorization: auth } : {},
    });
    assert.equal(r.status, 200, `${prefix}/${file}: ${r.status}`);
    const raw = Buffer.from(await r.arrayBuffer());
    const text = file.endsWith('.bz2') ? (await bunzip2(raw)).toString('utf8') : raw.toString('utf8');
    return { doc: JSON.parse(text) as RepodataDoc, text, headers: r.headers };
  }

  async function versionsNamed(name: string) {
    return s.ctx.db
      .selectFrom('package_version')
      .innerJoin('package', 'package.id', 'package_version.package_id')
      .select(['package.name', 'package_version.version', 'package_version.download_count'])
      .where('package.type', '=', 'conda')
      .where('package.lower_name', '=', name)
      .execute();
  }

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-conda-'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const auth = () => basic('alice', alice.token);

  it('uploads .tar.bz2 and .conda packages to a channel and serves repodata per subdir', async () => {
    const hook = await s.api<{ id: number }>('POST', '/user/hooks', {
      token: alice.token,
      body: {
        type: 'forgejo',
        config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
        events: ['package'],
        active: true,
      },
    });
    assert.equal(hook.status, 201, hook.text);

    const linux = await tarBz2({
      name: 'hello-lib',
      version: '1.0.0',
      build: 'h1234_0',
      subdir: 'linux-64',
      depends: ['libgcc >=7', 'zlib'],
    });
    const linuxConda = await condaFile({
      name: 'hello-lib',
      version: '1.1.0',
      build: 'h1234_2',
      subdir: 'linux-64',
    });
    const noarch = await condaFile({
      name: 'pyhello',
      version: '2.0',
      build: 'pyhd8ed1ab_0',
      subdir: 'noarch',
      noarch: 'python',
      depends: ['python >=3.8'],
    });
    for (const f of [linux, linuxConda, noarch]) {
      const type = f === noarch ? 'application/octet-stream' : undefined;
      const r = await put(`${base('alice')}/main/${f.filename}`, f.data, auth(), type);
      assert.equal(r.status, 201, `${f.filename}: ${await r.text()}`);
    }

    const { doc, text, headers } = await repodata('alice', 'main/linux-64');
    assert.match(headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(doc.info, { subdir: 'linux-64' });
    assert.deepEqual(doc.removed, []);
    assert.deepEqual(Object.keys(doc.packages), [linux.filename]);
    assert.deepEqual(Object.keys(doc['packages.conda']), [linuxConda.filename]);
    assert.deepEqual(doc.packages[linux.filename], {
      name: 'hello-lib',
      version: '1.0.0',
      build: 'h1234_0',
      build_number: 0,
      depends: ['libgcc >=7', 'zlib'],
      license: 'MIT',
      license_family: 'MIT',
      md5: md5(linux.data),
      sha256: sha256(linux.data),
      size: linux.data.length,
      subdir: 'linux-64',
      arch: 'x86_64',
      platform: 'linux',
      timestamp: 1700000000123,
    });
    const c = doc['packages.conda'][linuxConda.filename]!;
    assert.equal(c['build_number'], 2);
    assert.equal(c['sha256'], sha256(linuxConda.data));

    // The .bz2 form and current_repodata.json say the same.
    for (const f of ['repodata.json.bz2', 'current_repodata.json', 'current_repodata.json.bz2']) {
      const other = await repodata('alice', 'main/linux-64', f);
      assert.equal(other.text, text, f);
    }
    const bz = await fetch(`${base('alice')}/main/linux-64/repodata.json.bz2`);
    assert.equal(bz.headers.get('content-type'), 'application/x-bzip2');
    assert.equal(
      Buffer.from(await bz.arrayBuffer())
        .subarray(0, 3)
        .toString(),
      'BZh',
    );

    // An ETag, and 304 when it still holds.
    const etag = headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${base('alice')}/main/linux-64/repodata.json`, {
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    assert.notEqual(bz.headers.get('etag'), etag, 'the .bz2 form has an entity tag of its own');

    const na = await repodata('alice', 'main/noarch');
    assert.deepEqual(Object.keys(na.doc['packages.conda']), [noarch.filename]);
    const entry = na.doc['packages.conda'][noarch.filename]!;
    assert.equal(entry['noarch'], 'python');
    assert.equal(entry['subdir'], 'noarch');
    assert.deepEqual(entry['depends'], ['python >=3.8']);
    assert.equal(entry['arch'], undefined);

    // A subdir with nothing (and the channel-less noarch) answers an empty document, not 404.
    for (const p of ['main/osx-arm64', 'noarch', 'linux-64', 'nochannel/noarch']) {
      const empty = await repodata('alice', p);
      assert.deepEqual(empty.doc.packages, {}, p);
      assert.deepEqual(empty.doc['packages.conda'], {}, p);
      assert.equal(empty.doc.info.subdir, p.split('/').pop());
    }
    assert.equal((await fetch(`${base('alice')}/main/Bad Subdir/repodata.json`)).status, 404);
    assert.equal((await fetch(`${base('alice')}/main/linux-64/other.json`)).status, 404);
    assert.equal((await fetch(`${base('nobody')}/noarch/repodata.json`)).status, 404);

    // Downloads: the bytes, counted per version; HEAD is not counted.
    const head = await fetch(`${base('alice')}/main/linux-64/${linux.filename}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(linux.data.length));
    for (let i = 0; i < 2; i++) {
      const dl = await fetch(`${base('alice')}/main/linux-64/${linux.filename}`);
      assert.equal(dl.status, 200);
      assert.deepEqual(Buffer.from(await dl.arrayBuffer()), linux.data);
    }
    const dl2 = await fetch(`${base('alice')}/main/noarch/${noarch.filename}`);
    assert.deepEqual(Buffer.from(await dl2.arrayBuffer()), noarch.data);
    const counts = await versionsNamed('main/hello-lib');
    assert.deepEqual(counts.map((v) => [v.name, v.version, Number(v.download_count)]).sort(), [
      ['main/hello-lib', '1.0.0', 2],
      ['main/hello-lib', '1.1.0', 0],
    ]);
    // Not in another subdir, channel or without the channel.
    for (const p of [
      `main/noarch/${linux.filename}`,
      `other/linux-64/${linux.filename}`,
      `linux-64/${linux.filename}`,
    ]) {
      assert.equal((await fetch(`${base('alice')}/${p}`)).status, 404, p);
    }

    // The version's metadata from about.json (a bad URL dropped).
    const row = await s.ctx.db
      .selectFrom('package_version')
      .innerJoin('package', 'package.id', 'package_version.package_id')
      .select('package_version.metadata_json')
      .where('package.lower_name', '=', 'main/pyhello')
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.metadata_json), {
      summary: 'The pyhello package',
      project_url: 'https://example.com/x',
      license: 'MIT',
      license_family: 'MIT',
    });

    // The package webhook: one delivery per created version.
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['event_type', 'payload'])
      .where('hook_id', '=', hook.body.id)
      .execute();
    assert.equal(tasks.length, 3);
    const created = tasks.map((t) => {
      const p = JSON.parse(t.payload) as {
        action: string;
        package: { type: string; name: string; version: string };
      };
      return [t.event_type, p.action, p.package.type, p.package.name, p.package.version].join(' ');
    });
    assert.deepEqual(created.sort(), [
      'package created conda main/hello-lib 1.0.0',
      'package created conda main/hello-lib 1.1.0',
      'package created conda main/pyhello 2.0',
    ]);
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: alice.token });
  });

  it('keeps the channel part of a package’s identity; no channel is a channel of its own', async () => {
    const f = await tarBz2({ name: 'chan-pkg', version: '0.1', build: '0', subdir: 'linux-64' });
    assert.equal((await put(`${base('alice')}/main/${f.filename}`, f.data, auth())).status, 201);
    // The same file in another channel (nested) and without a channel: other packages, no 409.
    assert.equal((await put(`${base('alice')}/Team/Extra/${f.filename}`, f.data, auth())).status, 201);
    assert.equal((await put(`${base('alice')}/${f.filename}`, f.data, auth())).status, 201);
    // The same file in the same channel: 409.
    const dup = await put(`${base('alice')}/main/${f.filename}`, f.data, auth());
    assert.equal(dup.status, 409);
    assert.equal(((await dup.json()) as { reason: string }).reason, 'Conflict');

    const list = await s.api<Array<{ name: string; version: string; type: string }>>(
      'GET',
      '/packages/alice?type=conda&q=chan-pkg',
      { token: alice.token },
    );
    assert.deepEqual(list.body.map((p) => `${p.type} ${p.name} ${p.version}`).sort(), [
      'conda chan-pkg 0.1',
      'conda main/chan-pkg 0.1',
      'conda team/extra/chan-pkg 0.1',
    ]);
    for (const p of ['linux-64', 'team/extra/linux-64', 'TEAM/extra/linux-64', 'main/linux-64']) {
      const { doc } = await repodata('alice', p);
      assert.ok(doc.packages[f.filename], p);
    }
    assert.equal(Object.keys((await repodata('alice', 'team/linux-64')).doc.packages).length, 0);
    const dl = await fetch(`${base('alice')}/team/extra/linux-64/${f.filename}`);
    assert.deepEqual(Buffer.from(await dl.arrayBuffer()), f.data);

    // The files of a version in the API; deleting a version there takes it out of repodata.
    const files = await s.api<Array<{ name: string; sha256: string }>>(
      'GET',
      `/packages/alice/conda/${encodeURIComponent('main/chan-pkg')}/0.1/files`,
      { token: alice.token },
    );
    assert.equal(files.status, 200, files.text);
    assert.deepEqual(
      files.body.map((x) => [x.name, x.sha256]),
      [[f.filename, sha256(f.data)]],
    );
    const del = await s.api('DELETE', `/packages/alice/conda/${encodeURIComponent('main/chan-pkg')}/0.1`, {
      token: alice.token,
    });
    assert.equal(del.status, 204, del.text);
    assert.equal((await repodata('alice', 'main/linux-64')).doc.packages[f.filename], undefined);
    assert.equal((await fetch(`${base('alice')}/main/linux-64/${f.filename}`)).status, 404);
    assert.ok((await repodata('alice', 'linux-64')).doc.packages[f.filename], 'other channels keep theirs');
  });

  it('reads any tar order and deflated .conda members; one version holds files of several subdirs', async () => {
    const late = await tarBz2({
      name: 'late-info',
      version: '3.0',
      build: '0',
      subdir: 'linux-64',
      payloadFirst: true,
    });
    assert.equal((await put(`${base('alice')}/x/${late.filename}`, late.data, auth())).status, 201);
    const osx = await tarBz2({
      name: 'late-info',
      version: '3.0',
      build: '0',
      subdir: 'osx-64',
      content: 'osx',
    });
    assert.equal((await put(`${base('alice')}/x/${osx.filename}`, osx.data, auth())).status, 201);
    const deflated = await condaFile({
      name: 'deflated',
      version: '1.0',
      build: 'py_0',
      subdir: 'linux-64',
      deflate: true,
    });
    assert.equal((await put(`${base('alice')}/x/${deflated.filename}`, deflated.data, auth())).status, 201);
    const l = await repodata('alice', 'x/linux-64');
    assert.equal(l.doc.packages[late.filename]!['sha256'], sha256(late.data));
    assert.equal(l.doc['packages.conda'][deflated.filename]!['sha256'], sha256(deflated.data));
    const o = await repodata('alice', 'x/osx-64');
    assert.equal(o.doc.packages[osx.filename]!['sha256'], sha256(osx.data));
    assert.equal((await versionsNamed('x/late-info')).length, 1);
  });

  it('refuses what is not a Conda package, and keeps nothing of it', async () => {
    const good = await tarBz2({ name: 'good', version: '1.0', build: '0', subdir: 'linux-64' });
    const noIndex = await tarBz2({
      name: 'noindex',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      index: null,
    });
    const noIndexConda = await condaFile({
      name: 'noindex',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      index: null,
    });
    const badSubdir = await tarBz2({
      name: 'badsub',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      index: { name: 'badsub', version: '1.0', build: '0', subdir: '../x' },
    });
    const random = crypto.randomBytes(3000);
    // A .conda whose deflated info member is damaged (a reserved block type at its start).
    const damaged = await condaFile({
      name: 'damaged',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      deflate: true,
    });
    const at = damaged.data.indexOf('info-damaged') - 30;
    assert.equal(damaged.data.readUInt32LE(at), 0x04034b50);
    const dataAt = at + 30 + damaged.data.readUInt16LE(at + 26) + damaged.data.readUInt16LE(at + 28);
    damaged.data.fill(0xff, dataAt, dataAt + 16);
    // Sound up to their info, broken after it: a .tar.bz2 cut short, a .conda with a damaged payload.
    const cut = good.data.subarray(0, good.data.length - 100);
    const goodConda = await condaFile({ name: 'good', version: '1.0', build: '0', subdir: 'linux-64' });
    const pkgAt = goodConda.data.indexOf('pkg-good') - 30;
    assert.equal(goodConda.data.readUInt32LE(pkgAt), 0x04034b50);
    const pkgData =
      pkgAt + 30 + goodConda.data.readUInt16LE(pkgAt + 26) + goodConda.data.readUInt16LE(pkgAt + 28);
    const badPayload = Buffer.from(goodConda.data);
    badPayload.fill(0xff, pkgData + 12, pkgData + 20);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['good-1.0-0.tar.bz2', cut, /\.tar\.bz2 package is not valid bzip2 data/],
      ['good-1.0-0.conda', badPayload, /member pkg-good-1\.0-0\.tar\.zst is not valid zstd data/],
      ['junk-1.0-0.tar.bz2', random, /\.tar\.bz2 package is not valid bzip2 data/],
      ['junk-1.0-0.conda', random, /\.conda package is not a valid zip archive/],
      ['junk-1.0-0.tar.bz2', await bzip2Of(random), /not a valid tar archive/],
      ['junk-1.0-0.conda', good.data, /\.conda package is not a valid zip archive/],
      ['damaged-1.0-0.conda', damaged.data, /not valid deflate data/],
      ['noindex-1.0-0.tar.bz2', noIndex.data, /info\/index\.json/],
      ['noindex-1.0-0.conda', noIndexConda.data, /info\/index\.json/],
      // The name or version of the file is not its index.json's.
      ['other-1.0-0.tar.bz2', good.data, /named for other 1\.0/],
      ['good-2.0-0.tar.bz2', good.data, /named for good 2\.0/],
      ['good-1.0-1.tar.bz2', good.data, /\(1\)/],
      ['good-1.0-0.conda', good.data, /not a valid zip archive/],
      ['badsub-1.0-0.tar.bz2', badSubdir.data, /subdir/],
      // Bad names.
      ['good-1.0.tar.bz2', good.data, /invalid file name/],
      ['good-1.0-0.zip', good.data, /invalid file name/],
      ['Good-1.0-0.tar.bz2', good.data, /invalid package name/],
    ];
    for (const [name, data, message] of cases) {
      const r = await put(`${base('alice')}/bad/${name}`, data, auth());
      const body = (await r.json()) as { message: string; reason: string };
      assert.equal(r.status, 400, `${name}: ${body.message}`);
      assert.equal(body.reason, 'Bad Request');
      assert.match(body.message, message, name);
    }
    // Channels: segments of letters, digits, `_`, `.` and `-` (none starting with `.`).
    for (const channel of ['bad channel', 'a/.hidden', 'a//b', 'a/b&c']) {
      const r = await put(`${base('alice')}/${channel}/${good.filename}`, good.data, auth());
      assert.equal(r.status, 400, channel);
    }
    const list = await s.api<unknown[]>('GET', '/packages/alice?q=bad', { token: alice.token });
    assert.deepEqual(list.body, []);
    for (const d of [random, good.data, noIndex.data, badSubdir.data, cut, badPayload]) {
      const blobs = await s.ctx.db
        .selectFrom('package_blob')
        .select('id')
        .where('hash_sha256', '=', sha256(d))
        .execute();
      assert.equal(blobs.length, 0, 'no blob kept');
    }
    const tmp = path.join(s.dataDir, 'packages', 'tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no temporary file left');
  });

  it('asks for credentials, and refuses those without write access or scope', async () => {
    const f = await tarBz2({
      name: 'creds',
      version: '1.0',
      build: '0',
      subdir: 'noarch',
      noarch: 'generic',
    });
    const url = `${base('alice')}/${f.filename}`;
    const anon = await put(url, f.data);
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.equal((await put(url, f.data, basic('alice', 'wrong'))).status, 401);
    assert.equal((await put(url, f.data, basic('bob', bob.token))).status, 401);
    const ro = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: ['alice', alice.password],
      body: { name: 'conda-read', scopes: ['read:package'] },
    });
    assert.equal(ro.status, 201, ro.text);
    const scoped = await put(url, f.data, basic('alice', ro.body.sha1));
    assert.equal(scoped.status, 401);
    assert.equal(scoped.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    assert.match(((await scoped.json()) as { message: string }).message, /write:package/);
    assert.equal((await put(url, f.data, basic('alice', alice.password))).status, 201);
  });

  it('keeps a private owner’s channel from others', async () => {
    const carol = await s.createUser('carol');
    const f = await tarBz2({ name: 'secret', version: '1.0', build: '0', subdir: 'linux-64' });
    assert.equal(
      (await put(`${base('carol')}/priv/${f.filename}`, f.data, basic('carol', carol.token))).status,
      201,
    );
    await s.api('PATCH', '/admin/users/carol', { token: s.admin.token, body: { visibility: 'private' } });
    for (const p of [
      'priv/linux-64/repodata.json',
      `priv/linux-64/${f.filename}`,
      'priv/noarch/repodata.json',
    ]) {
      const anon = await fetch(`${base('carol')}/${p}`);
      assert.equal(anon.status, 401, p);
      assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic/);
      const asBob = await fetch(`${base('carol')}/${p}`, {
        headers: { authorization: basic('bob', bob.token) },
      });
      assert.equal(asBob.status, 401, p);
      assert.equal(asBob.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
    const own = await repodata('carol', 'priv/linux-64', 'repodata.json', basic('carol', carol.token));
    assert.ok(own.doc.packages[f.filename]);
  });

  it('hides a package linked to a repository the caller may not read', async () => {
    const repo = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'conda-secret', private: true },
    });
    assert.equal(repo.status, 201, repo.text);
    const f = await tarBz2({ name: 'linked', version: '1.0', build: '0', subdir: 'linux-64' });
    assert.equal((await put(`${base('alice')}/lnk/${f.filename}`, f.data, auth())).status, 201);
    const link = await s.api(
      'POST',
      `/packages/alice/conda/${encodeURIComponent('lnk/linked')}/-/link/conda-secret`,
      { token: alice.token },
    );
    assert.equal(link.status, 201, link.text);
    assert.deepEqual((await repodata('alice', 'lnk/linux-64')).doc.packages, {});
    const asBob = await repodata('alice', 'lnk/linux-64', 'repodata.json', basic('bob', bob.token));
    assert.deepEqual(asBob.doc.packages, {});
    assert.ok((await repodata('alice', 'lnk/linux-64', 'repodata.json', auth())).doc.packages[f.filename]);
    const url = `${base('alice')}/lnk/linux-64/${f.filename}`;
    assert.equal((await fetch(url)).status, 401);
    assert.equal((await fetch(url, { headers: { authorization: basic('bob', bob.token) } })).status, 404);
    assert.equal((await fetch(url, { headers: { authorization: auth() } })).status, 200);
  });

  it('answers 403 over LIMIT_SIZE_CONDA and 413 over quota', async () => {
    const big = await tarBz2({
      name: 'big',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      content: crypto.randomBytes(20000).toString('base64'),
    });
    const q = await startServer({ ANVIL__PACKAGES__LIMIT_SIZE_CONDA: '1000' });
    try {
      const u = await q.createUser('limited');
      const r = await put(
        `${q.url}/api/packages/limited/conda/${big.filename}`,
        big.data,
        basic('limited', u.token),
      );
      assert.equal(r.status, 403);
      const asAdmin = await put(
        `${q.url}/api/packages/limited/conda/${big.filename}`,
        big.data,
        basic('root', q.admin.token),
      );
      assert.equal(asAdmin.status, 201, `administrators are exempt: ${await asAdmin.text()}`);
    } finally {
      await q.close();
    }
    const dave = await s.createUser('dave');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'conda-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'conda-tiny', rules: [{ name: 'conda-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/conda-tiny/users/dave', { token: s.admin.token });
    const first = await tarBz2({ name: 'q', version: '1.0', build: '0', subdir: 'linux-64' });
    const r1 = await put(`${base('dave')}/${first.filename}`, first.data, basic('dave', dave.token));
    assert.equal(r1.status, 201, 'the upload that crosses the limit goes through, as in Forgejo');
    const second = await tarBz2({ name: 'q', version: '1.1', build: '0', subdir: 'linux-64' });
    const r2 = await put(`${base('dave')}/${second.filename}`, second.data, basic('dave', dave.token));
    assert.equal(r2.status, 413);
    assert.equal((await versionsNamed('q')).length, 1);
  });

  it('keeps nothing of an upload cut off half-way', async () => {
    const f = await tarBz2({
      name: 'cutoff',
      version: '1.0',
      build: '0',
      subdir: 'linux-64',
      content: crypto.randomBytes(600_000).toString('base64'),
    });
    await new Promise<void>((resolve) => {
      const req = http.request(`${base('alice')}/main/${f.filename}`, {
        method: 'PUT',
        headers: { 'content-length': String(f.data.length), authorization: auth() },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(f.data.subarray(0, Math.floor(f.data.length / 2)));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(await versionsNamed('main/cutoff'), []);
    const tmp = path.join(s.dataDir, 'packages', 'tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no temporary file left');
    // The whole file afterwards goes through.
    assert.equal((await put(`${base('alice')}/main/${f.filename}`, f.data, auth())).status, 201);
  });
});

/** `data` compressed by the system bzip2. */
function bzip2Of(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('bzip2', ['-c']);
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`bzip2 ${code}`)),
    );
    child.stdin.end(data);
  });
}
