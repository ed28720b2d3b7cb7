// The container registry (/v2/) driven by the real `skopeo` (no daemon): OCI layouts written
// here by hand (a multi-layer image and a two-platform index) are pushed, inspected, listed,
// pulled back by tag and by digest and deleted; anonymous pulls of public and private images.
// Then the protocol by raw HTTP: tokens, digest and size checks, chunked uploads (416 on a gap),
// missing blobs, credentials and write access, cross-repository mounts, tag paging, _catalog,
// quota counted per referencing file and 413 over it, the /api/v1/packages listing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const sha = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';

interface Desc {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os: string; architecture: string };
}

/** Writes an OCI image layout by hand: blobs/sha256/..., index.json, oci-layout. */
class Layout {
  constructor(readonly dir: string) {
    fs.mkdirSync(path.join(dir, 'blobs', 'sha256'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  }

  blob(bytes: Buffer, mediaType: string): Desc {
    const hex = sha(bytes);
    fs.writeFileSync(path.join(this.dir, 'blobs', 'sha256', hex), bytes);
    return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
  }

  /** An image of `layers` (raw contents, gzipped here) for a platform; its manifest's descriptor. */
  image(layers: Buffer[], arch = 'amd64', labels: Record<string, string> = {}): Desc {
    const gz = layers.map((l) => zlib.gzipSync(l));
    const config = Buffer.from(
      JSON.stringify({
        architecture: arch,
        os: 'linux',
        config: { Labels: labels },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => `sha256:${sha(l)}`) },
      }),
    );
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: this.blob(config, OCI_CONFIG),
        layers: gz.map((g) => this.blob(g, OCI_LAYER)),
      }),
    );
    return { ...this.blob(manifest, OCI_MANIFEST), platform: { os: 'linux', architecture: arch } };
  }

  index(manifests: Desc[]): Desc {
    const body = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }));
    return this.blob(body, OCI_INDEX);
  }

  /** index.json naming `desc` as `tag`. */
  tag(desc: Desc, tag: string): void {
    const { platform: _p, ...plain } = desc;
    fs.writeFileSync(
      path.join(this.dir, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [{ ...plain, annotations: { 'org.opencontainers.image.ref.name': tag } }],
      }),
    );
  }

  read(digest: string): Buffer {
    return fs.readFileSync(path.join(this.dir, 'blobs', 'sha256', digest.replace(/^sha256:/, '')));
  }
}

describe('container registry (skopeo and raw HTTP)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let priv: { name: string; password: string; token: string };
  let home: string;
  let host: string;

  function skopeo(args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env['PATH'],
        HOME: home,
        XDG_RUNTIME_DIR: path.join(home, 'run'),
        XDG_CONFIG_HOME: path.join(home, 'config'),
        CONTAINERS_REGISTRIES_CONF: path.join(home, 'registries.conf'),
        REGISTRY_AUTH_FILE: path.join(home, 'auth.json'),
      };
      const child = spawn(
        'skopeo',
        [
          '--insecure-policy',
          '--registries.d',
          path.join(home, 'registries.d'),
          '--tmpdir',
          path.join(home, 'tmp'),
          ...args,
        ],
        { env },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  const basic = (user: { name: string; token: string }) =>
    `Basic ${Buffer.from(`${user.name}:${user.token}`).toString('base64')}`;

  async function reg(
    method: string,
    p: string,
    opts: { auth?: string; body?: Buffer | string; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.auth) headers['authorization'] = opts.auth;
    const body =
      typeof opts.body === 'string' || opts.body === undefined ? opts.body : new Uint8Array(opts.body);
    const res = await fetch(`${s.url}${p}`, { method, headers, body, redirect: 'manual' });
    const buf = Buffer.from(await res.arrayBuffer());
    let json: { errors?: Array<{ code: string; message: string }> } & Record<string, unknown> = {};
    try {
      json = JSON.parse(buf.toString('utf8')) as typeof json;
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body: buf, json };
  }

  const code = (r: { json: { errors?: Array<{ code: string }> } }) => r.json.errors?.[0]?.code;

  /** Pushes a blob in one request (POST ?digest=). */
  async function pushBlob(owner: string, image: string, bytes: Buffer, auth: string) {
    return reg('POST', `/v2/${owner}/${image}/blobs/uploads/?digest=sha256:${sha(bytes)}`, {
      auth,
      body: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
  }

  /** Pushes a config and layers, and a manifest naming them under `ref`. */
  async function pushImage(owner: string, image: string, ref: string, layers: Buffer[], auth: string) {
    const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', n: image + ref }));
    for (const b of [config, ...layers]) assert.equal((await pushBlob(owner, image, b, auth)).status, 201);
    const manifest = manifestOf(config, layers);
    const r = await reg('PUT', `/v2/${owner}/${image}/manifests/${ref}`, {
      auth,
      body: manifest,
      headers: { 'content-type': OCI_MANIFEST },
    });
    assert.equal(r.status, 201, r.body.toString());
    return { config, manifest };
  }

  const manifestOf = (config: Buffer, layers: Buffer[], sizes?: number[]) =>
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, digest: `sha256:${sha(config)}`, size: config.length },
        layers: layers.map((l, i) => ({
          mediaType: OCI_LAYER,
          digest: `sha256:${sha(l)}`,
          size: sizes?.[i] ?? l.length,
        })),
      }),
    );

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    priv = await s.createUser('priv');
    const r = await s.api('PATCH', '/admin/users/priv', {
      token: s.admin.token,
      body: { login_name: 'priv', source_id: 0, visibility: 'private' },
    });
    assert.equal(r.status, 200, r.text);
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-container-'));
    for (const d of ['run', 'config', 'registries.d', 'tmp']) fs.mkdirSync(path.join(home, d));
    fs.writeFileSync(path.join(home, 'registries.conf'), 'unqualified-search-registries = []\n');
    host = s.url.replace(/^http:\/\//, '');
  });
  after(async () => {
    await s.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  describe('skopeo', () => {
    let layout: Layout;
    let image: Desc;
    let index: Desc;

    it('pushes a multi-layer image to a name with a slash, inspects it and lists its tags', async () => {
      layout = new Layout(path.join(home, 'src-image'));
      image = layout.image(
        [crypto.randomBytes(300_000), Buffer.from('second layer\n'), crypto.randomBytes(70_000)],
        'amd64',
        { 'org.opencontainers.image.description': 'test image' },
      );
      layout.tag(image, '1.0');
      const r = await skopeo([
        'copy',
        '--dest-tls-verify=false',
        '--dest-creds',
        `u:${u.token}`,
        `oci:${layout.dir}:1.0`,
        `docker://${host}/u/team/app:1.0`,
      ]);
      assert.equal(r.code, 0, r.stderr);

      const i = await skopeo([
        'inspect',
        '--tls-verify=false',
        '--creds',
        `u:${u.token}`,
        `docker://${host}/u/team/app:1.0`,
      ]);
      assert.equal(i.code, 0, i.stderr);
      const info = JSON.parse(i.stdout) as { Digest: string; Layers: string[]; Architecture: string };
      assert.equal(info.Digest, image.digest);
      assert.equal(info.Layers.length, 3);
      assert.equal(info.Architecture, 'amd64');

      // A second tag of the same image, pushed again: the blobs are there already.
      const again = await skopeo([
        'copy',
        '--dest-tls-verify=false',
        '--dest-creds',
        `u:${u.token}`,
        `oci:${layout.dir}:1.0`,
        `docker://${host}/u/team/app:latest`,
      ]);
      assert.equal(again.code, 0, again.stderr);
      const t = await skopeo([
        'list-tags',
        '--tls-verify=false',
        '--creds',
        `u:${u.token}`,
        `docker://${host}/u/team/app`,
      ]);
      assert.equal(t.code, 0, t.stderr);
      assert.deepEqual((JSON.parse(t.stdout) as { Tags: string[] }).Tags, ['1.0', 'latest']);
    });

    it('pulls the image back by tag and by digest, byte for byte', async () => {
      for (const ref of [':1.0', `@${image.digest}`]) {
        const dest = path.join(home, `pulled-${crypto.randomBytes(3).toString('hex')}`);
        const r = await skopeo([
          'copy',
          '--src-tls-verify=false',
          '--src-creds',
          `u:${u.token}`,
          `docker://${host}/u/team/app${ref}`,
          `oci:${dest}:out`,
        ]);
        assert.equal(r.code, 0, r.stderr);
        const idx = JSON.parse(fs.readFileSync(path.join(dest, 'index.json'), 'utf8')) as {
          manifests: Desc[];
        };
        assert.equal(idx.manifests[0]!.digest, image.digest);
        const manifest = JSON.parse(layout.read(image.digest).toString()) as { config: Desc; layers: Desc[] };
        for (const d of [manifest.config, ...manifest.layers]) {
          const got = fs.readFileSync(path.join(dest, 'blobs', 'sha256', d.digest.slice(7)));
          assert.equal(`sha256:${sha(got)}`, d.digest);
        }
      }
    });

    it('pushes a two-platform index with --all and pulls it back', async () => {
      const l2 = new Layout(path.join(home, 'src-index'));
      const amd = l2.image([crypto.randomBytes(50_000)], 'amd64');
      const arm = l2.image([crypto.randomBytes(40_000)], 'arm64');
      index = l2.index([amd, arm]);
      l2.tag(index, 'multi');
      let r = await skopeo([
        'copy',
        '--all',
        '--dest-tls-verify=false',
        '--dest-creds',
        `u:${u.token}`,
        `oci:${l2.dir}:multi`,
        `docker://${host}/u/multi/arch:v1`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      r = await skopeo([
        'inspect',
        '--raw',
        '--tls-verify=false',
        '--creds',
        `u:${u.token}`,
        `docker://${host}/u/multi/arch:v1`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(`sha256:${sha(r.stdout)}`, index.digest);
      const raw = JSON.parse(r.stdout) as { manifests: Desc[] };
      assert.deepEqual(
        raw.manifests.map((m) => m.platform?.architecture),
        ['amd64', 'arm64'],
      );
      // One platform by the override.
      r = await skopeo([
        '--override-arch',
        'arm64',
        'inspect',
        '--tls-verify=false',
        '--creds',
        `u:${u.token}`,
        `docker://${host}/u/multi/arch:v1`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { Architecture: string }).Architecture, 'arm64');

      const dest = path.join(home, 'pulled-index');
      r = await skopeo([
        'copy',
        '--all',
        '--src-tls-verify=false',
        '--src-creds',
        `u:${u.token}`,
        `docker://${host}/u/multi/arch:v1`,
        `oci:${dest}:out`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const idx = JSON.parse(fs.readFileSync(path.join(dest, 'index.json'), 'utf8')) as { manifests: Desc[] };
      assert.equal(idx.manifests[0]!.digest, index.digest);
      for (const m of [amd, arm])
        assert.ok(fs.existsSync(path.join(dest, 'blobs', 'sha256', m.digest.slice(7))));
    });

    it('lets anyone pull a public image and refuses a private owner’s to anonymous and other users', async () => {
      const dest = path.join(home, 'anon');
      let r = await skopeo([
        'copy',
        '--src-tls-verify=false',
        '--src-no-creds',
        `docker://${host}/u/team/app:1.0`,
        `oci:${dest}:out`,
      ]);
      assert.equal(r.code, 0, r.stderr);

      r = await skopeo([
        'copy',
        '--dest-tls-verify=false',
        '--dest-creds',
        `priv:${priv.token}`,
        `oci:${layout.dir}:1.0`,
        `docker://${host}/priv/secret:1.0`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      r = await skopeo(['inspect', '--tls-verify=false', '--no-creds', `docker://${host}/priv/secret:1.0`]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /unauthorized|authentication required/i);
      r = await skopeo([
        'inspect',
        '--tls-verify=false',
        '--creds',
        `other:${other.token}`,
        `docker://${host}/priv/secret:1.0`,
      ]);
      assert.notEqual(r.code, 0);
      r = await skopeo([
        'inspect',
        '--tls-verify=false',
        '--creds',
        `priv:${priv.token}`,
        `docker://${host}/priv/secret:1.0`,
      ]);
      assert.equal(r.code, 0, r.stderr);
    });

    it('deletes an image with skopeo delete (the digest a tag names, so every tag of it)', async () => {
      for (const t of ['x', 'y']) {
        const r = await skopeo([
          'copy',
          '--dest-tls-verify=false',
          '--dest-creds',
          `u:${u.token}`,
          `oci:${layout.dir}:1.0`,
          `docker://${host}/u/del/me:${t}`,
        ]);
        assert.equal(r.code, 0, r.stderr);
      }
      // Another user may not delete.
      let r = await skopeo([
        'delete',
        '--tls-verify=false',
        '--creds',
        `other:${other.token}`,
        `docker://${host}/u/del/me:x`,
      ]);
      assert.notEqual(r.code, 0);
      r = await skopeo([
        'delete',
        '--tls-verify=false',
        '--creds',
        `u:${u.token}`,
        `docker://${host}/u/del/me:x`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      for (const t of ['x', 'y']) {
        const m = await reg('HEAD', `/v2/u/del/me/manifests/${t}`, { auth: basic(u) });
        assert.equal(m.status, 404);
      }
      const m = await reg('HEAD', `/v2/u/team/app/manifests/1.0`, { auth: basic(u) });
      assert.equal(m.status, 200);
    });
  });

  describe('protocol', () => {
    it('answers 401 with the Bearer challenge and issues signed, checked tokens', async () => {
      let r = await reg('GET', '/v2/');
      assert.equal(r.status, 401);
      assert.equal(
        r.headers.get('www-authenticate'),
        `Bearer realm="${s.url}/v2/token",service="container_registry",scope="*"`,
      );
      assert.equal(code(r), 'UNAUTHORIZED');
      // Wrong credentials: 401 with the challenge, on the token endpoint and on /v2/.
      const wrong = `Basic ${Buffer.from('u:not-the-password').toString('base64')}`;
      r = await reg('GET', '/v2/token', { auth: wrong });
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
      r = await reg('GET', '/v2/u/team/app/tags/list', { auth: wrong });
      assert.equal(r.status, 401);

      r = await reg('GET', '/v2/token', {
        auth: `Basic ${Buffer.from(`u:${u.password}`).toString('base64')}`,
      });
      assert.equal(r.status, 200);
      const token = r.json['token'] as string;
      assert.ok(token && (r.json['expires_in'] as number) > 0);
      r = await reg('GET', '/v2/', { auth: `Bearer ${token}` });
      assert.equal(r.status, 200);
      r = await reg('GET', '/v2/u/team/app/tags/list', { auth: `Bearer ${token}` });
      assert.equal(r.status, 200);
      // A token with its signature altered is refused.
      const [body, sig] = token.split('.');
      const forged = `${body}.${sig!.slice(0, -2)}${sig!.endsWith('AA') ? 'BB' : 'AA'}`;
      r = await reg('GET', '/v2/', { auth: `Bearer ${forged}` });
      assert.equal(r.status, 401);
      // A payload naming another user with the old signature is refused too.
      const other64 = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), u: 1 }),
      ).toString('base64url');
      r = await reg('PUT', '/v2/root/x/manifests/t', { auth: `Bearer ${other64}.${sig}`, body: '{}' });
      assert.equal(r.status, 401);
      // The anonymous token reads public images but writes nothing.
      r = await reg('GET', '/v2/token');
      const anon = r.json['token'] as string;
      r = await reg('GET', '/v2/u/team/app/manifests/1.0', { auth: `Bearer ${anon}` });
      assert.equal(r.status, 200);
      r = await reg('POST', '/v2/u/team/app/blobs/uploads/', { auth: `Bearer ${anon}` });
      assert.equal(r.status, 401);
      r = await reg('GET', '/v2/priv/secret/manifests/1.0', { auth: `Bearer ${anon}` });
      assert.equal(r.status, 401);
    });

    it('refuses a digest that does not match the bytes (400 DIGEST_INVALID)', async () => {
      const bytes = Buffer.from('some blob');
      const r = await reg('POST', `/v2/u/raw/blobs/uploads/?digest=sha256:${sha('other')}`, {
        auth: basic(u),
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
      assert.equal(r.status, 400);
      assert.equal(code(r), 'DIGEST_INVALID');
      const h = await reg('HEAD', `/v2/u/raw/blobs/sha256:${sha('other')}`, { auth: basic(u) });
      assert.equal(h.status, 404);
      const bad = await reg('POST', `/v2/u/raw/blobs/uploads/?digest=md5:abc`, {
        auth: basic(u),
        body: bytes,
      });
      assert.equal(bad.status, 400);
    });

    it('takes a chunked upload in order, answers 416 on a gap, and serves ranges of the blob', async () => {
      const data = crypto.randomBytes(30);
      let r = await reg('POST', '/v2/u/raw/blobs/uploads/', { auth: basic(u) });
      assert.equal(r.status, 202);
      const loc = r.headers.get('location')!;
      assert.match(loc, /^\/v2\/u\/raw\/blobs\/uploads\/[0-9a-f-]{36}$/);
      assert.equal(r.headers.get('range'), '0-0');
      assert.ok(r.headers.get('docker-upload-uuid'));
      const patch = (from: number, to: number) =>
        reg('PATCH', loc, {
          auth: basic(u),
          body: data.subarray(from, to + 1),
          headers: { 'content-type': 'application/octet-stream', 'content-range': `${from}-${to}` },
        });
      r = await patch(0, 9);
      assert.equal(r.status, 202);
      assert.equal(r.headers.get('range'), '0-9');
      r = await patch(20, 29);
      assert.equal(r.status, 416);
      r = await reg('GET', loc, { auth: basic(u) });
      assert.equal(r.status, 204);
      assert.equal(r.headers.get('range'), '0-9');
      r = await patch(10, 19);
      assert.equal(r.status, 202);
      // The last chunk comes with the PUT.
      r = await reg('PUT', `${loc}?digest=sha256:${sha(data)}`, {
        auth: basic(u),
        body: data.subarray(20),
        headers: { 'content-type': 'application/octet-stream' },
      });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.headers.get('docker-content-digest'), `sha256:${sha(data)}`);
      r = await reg('GET', `/v2/u/raw/blobs/sha256:${sha(data)}`, { auth: basic(u) });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, data);
      r = await reg('GET', `/v2/u/raw/blobs/sha256:${sha(data)}`, {
        auth: basic(u),
        headers: { range: 'bytes=5-14' },
      });
      assert.equal(r.status, 206);
      assert.deepEqual(r.body, data.subarray(5, 15));
      // The finished upload is gone.
      r = await reg('GET', loc, { auth: basic(u) });
      assert.equal(r.status, 404);
      assert.equal(code(r), 'BLOB_UPLOAD_UNKNOWN');
      // A chunked upload whose bytes have another digest: 400, and nothing kept.
      r = await reg('POST', '/v2/u/raw/blobs/uploads/', { auth: basic(u) });
      const loc2 = r.headers.get('location')!;
      await reg('PATCH', loc2, {
        auth: basic(u),
        body: 'abc',
        headers: { 'content-type': 'application/octet-stream' },
      });
      await reg('PATCH', loc2, {
        auth: basic(u),
        body: 'def',
        headers: { 'content-type': 'application/octet-stream' },
      });
      r = await reg('PUT', `${loc2}?digest=sha256:${sha('abcdeX')}`, { auth: basic(u) });
      assert.equal(r.status, 400);
      assert.equal(code(r), 'DIGEST_INVALID');
      r = await reg('HEAD', `/v2/u/raw/blobs/sha256:${sha('abcdef')}`, { auth: basic(u) });
      assert.equal(r.status, 404);
      // Of the uploads, finished or failed, nothing stays under packages/tmp/: no part (in the
      // blob store, local or S3) and, on local disk, no folder.
      const leftovers = async () => {
        const keys: string[] = [];
        for await (const blob of s.ctx.storage.packages.list('tmp/')) keys.push(blob.key);
        const tmp = path.join(s.dataDir, 'packages', 'tmp');
        return [...keys, ...(fs.existsSync(tmp) ? fs.readdirSync(tmp).map((n) => `folder ${n}`) : [])];
      };
      assert.deepEqual(await leftovers(), []);
      // A part of a session still open is no leftover: the sweep keeps it (clients resume sessions).
      r = await reg('POST', '/v2/u/raw/blobs/uploads/', { auth: basic(u) });
      const open = r.headers.get('location')!;
      r = await reg('PATCH', open, {
        auth: basic(u),
        body: 'ghi',
        headers: { 'content-type': 'application/octet-stream' },
      });
      assert.equal(r.status, 202);
      const swept = await s.ctx.sweeper.sweep({ graceMs: 0, now: Date.now() + 1000 });
      assert.deepEqual(
        swept.orphans.filter((o) => o.key.startsWith('tmp/')),
        [],
      );
      r = await reg('PUT', `${open}?digest=sha256:${sha('ghi')}`, { auth: basic(u) });
      assert.equal(r.status, 201);
      assert.deepEqual(await leftovers(), []);
    });

    it('refuses manifests naming missing blobs or wrong sizes, and bad manifests', async () => {
      const config = Buffer.from('{"os":"linux","architecture":"amd64"}');
      const layer = crypto.randomBytes(100);
      assert.equal((await pushBlob('u', 'refs', config, basic(u))).status, 201);
      const put = (ref: string, body: Buffer | string, type = OCI_MANIFEST) =>
        reg('PUT', `/v2/u/refs/manifests/${ref}`, {
          auth: basic(u),
          body,
          headers: { 'content-type': type },
        });
      let r = await put('t', manifestOf(config, [layer]));
      assert.equal(r.status, 404);
      assert.equal(code(r), 'BLOB_UNKNOWN');
      assert.equal((await pushBlob('u', 'refs', layer, basic(u))).status, 201);
      r = await put('t', manifestOf(config, [layer], [99]));
      assert.equal(r.status, 400);
      assert.equal(code(r), 'SIZE_INVALID');
      r = await put('t', 'not json');
      assert.equal(r.status, 400);
      assert.equal(code(r), 'MANIFEST_INVALID');
      r = await put('t', JSON.stringify({ schemaVersion: 1 }));
      assert.equal(r.status, 400);
      // By digest: the digest must be the body's.
      const m = manifestOf(config, [layer]);
      r = await put(`sha256:${sha('x')}`, m);
      assert.equal(r.status, 400);
      assert.equal(code(r), 'DIGEST_INVALID');
      r = await put(`sha256:${sha(m)}`, m);
      assert.equal(r.status, 201);
      // An index naming a manifest the image does not have.
      const idx = JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: OCI_MANIFEST, digest: `sha256:${sha('nope')}`, size: 4 }],
      });
      r = await put('i', idx, OCI_INDEX);
      assert.equal(r.status, 404);
      assert.equal(code(r), 'MANIFEST_BLOB_UNKNOWN');
      r = await reg('GET', '/v2/u/refs/manifests/i', { auth: basic(u) });
      assert.equal(r.status, 404);
      assert.equal(code(r), 'MANIFEST_UNKNOWN');
      r = await reg('GET', '/v2/u/nothing/manifests/i', { auth: basic(u) });
      assert.equal(r.status, 404);
      assert.equal(code(r), 'NAME_UNKNOWN');
      r = await reg('GET', '/v2/u/Bad..Name/manifests/i', { auth: basic(u) });
      assert.equal(r.status, 400);
    });

    it('asks again (401, Bearer challenge) for writes without write access; unknown owners 404', async () => {
      let r = await reg('POST', '/v2/u/raw/blobs/uploads/', { auth: basic(other) });
      assert.equal(r.status, 401);
      assert.equal(code(r), 'UNAUTHORIZED');
      assert.match(
        r.headers.get('www-authenticate') ?? '',
        /^Bearer realm=".*\/v2\/token",service="container_registry"/,
      );
      r = await reg('PUT', '/v2/u/team/app/manifests/x', { auth: basic(other), body: '{}' });
      assert.equal(r.status, 401);
      r = await reg('DELETE', '/v2/u/team/app/manifests/1.0', { auth: basic(other) });
      assert.equal(r.status, 401);
      // A read-only token reads but does not write.
      const t = await s.api<{ sha1: string }>('POST', '/users/u/tokens', {
        basic: ['u', u.password],
        body: { name: 'ro', scopes: ['read:package'] },
      });
      const ro = `Basic ${Buffer.from(`u:${t.body.sha1}`).toString('base64')}`;
      r = await reg('GET', '/v2/u/team/app/tags/list', { auth: ro });
      assert.equal(r.status, 200);
      r = await reg('POST', '/v2/u/raw/blobs/uploads/', { auth: ro });
      assert.equal(r.status, 401);
      r = await reg('GET', '/v2/nobody/x/tags/list', { auth: basic(u) });
      assert.equal(r.status, 404);
    });

    it('mounts a blob from another image without sending it', async () => {
      const layer = crypto.randomBytes(2000);
      assert.equal((await pushBlob('u', 'mount/a', layer, basic(u))).status, 201);
      const d = `sha256:${sha(layer)}`;
      let r = await reg('POST', `/v2/u/mount/b/blobs/uploads/?mount=${d}&from=u/mount/a`, { auth: basic(u) });
      assert.equal(r.status, 201);
      assert.equal(r.headers.get('location'), `/v2/u/mount/b/blobs/${d}`);
      r = await reg('GET', `/v2/u/mount/b/blobs/${d}`, { auth: basic(u) });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, layer);
      // Unknown source blob (or unreadable source): an ordinary upload starts.
      r = await reg('POST', `/v2/u/mount/b/blobs/uploads/?mount=sha256:${sha('zz')}&from=u/mount/a`, {
        auth: basic(u),
      });
      assert.equal(r.status, 202);
      r = await reg('POST', `/v2/u/mount/c/blobs/uploads/?mount=${d}&from=priv/secret`, { auth: basic(u) });
      assert.equal(r.status, 202);
      // A blob no manifest names can be deleted.
      r = await reg('DELETE', `/v2/u/mount/b/blobs/${d}`, { auth: basic(u) });
      assert.equal(r.status, 202);
      r = await reg('HEAD', `/v2/u/mount/b/blobs/${d}`, { auth: basic(u) });
      assert.equal(r.status, 404);
      r = await reg('HEAD', `/v2/u/mount/a/blobs/${d}`, { auth: basic(u) });
      assert.equal(r.status, 200);
    });

    it('pages tags with Link, lists the catalog, and survives concurrent pushes of one tag', async () => {
      const { manifest } = await pushImage('u', 'paged', 'a', [Buffer.from('layer')], basic(u));
      for (const t of ['b', 'c', 'd']) {
        const r = await reg('PUT', `/v2/u/paged/manifests/${t}`, {
          auth: basic(u),
          body: manifest,
          headers: { 'content-type': OCI_MANIFEST },
        });
        assert.equal(r.status, 201);
      }
      let r = await reg('GET', '/v2/u/paged/tags/list?n=2', { auth: basic(u) });
      assert.deepEqual(r.json['tags'], ['a', 'b']);
      assert.equal(r.headers.get('link'), '</v2/u/paged/tags/list?n=2&last=b>; rel="next"');
      r = await reg('GET', '/v2/u/paged/tags/list?n=2&last=b', { auth: basic(u) });
      assert.deepEqual(r.json['tags'], ['c', 'd']);
      assert.equal(r.headers.get('link'), null);
      r = await reg('GET', '/v2/u/paged/tags/list', { auth: basic(u) });
      assert.deepEqual(r.json, { name: 'u/paged', tags: ['a', 'b', 'c', 'd'] });

      r = await reg('GET', '/v2/_catalog', { auth: basic(other) });
      assert.equal(r.status, 200);
      const all = r.json['repositories'] as string[];
      assert.ok(all.includes('u/team/app') && all.includes('u/paged'));
      assert.ok(!all.includes('priv/secret'));
      r = await reg('GET', '/v2/_catalog?n=1', { auth: basic(u) });
      assert.equal((r.json['repositories'] as string[]).length, 1);
      assert.match(r.headers.get('link') ?? '', /^<\/v2\/_catalog\?n=1&last=.+>; rel="next"$/);
      r = await reg('GET', '/v2/_catalog');
      assert.equal(r.status, 401);

      // Concurrent pushes of the same tag and of the same digest: all succeed.
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          reg('PUT', `/v2/u/paged/manifests/${i % 2 ? 'race' : `sha256:${sha(manifest)}`}`, {
            auth: basic(u),
            body: manifest,
            headers: { 'content-type': OCI_MANIFEST },
          }),
        ),
      );
      assert.deepEqual(
        results.map((x) => x.status),
        [201, 201, 201, 201, 201, 201],
      );
      r = await reg('GET', '/v2/u/paged/manifests/race', { auth: basic(u) });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('docker-content-digest'), `sha256:${sha(manifest)}`);
      assert.equal(r.headers.get('content-type'), OCI_MANIFEST);
      // Deleting by digest removes every version it names.
      r = await reg('DELETE', `/v2/u/paged/manifests/sha256:${sha(manifest)}`, { auth: basic(u) });
      assert.equal(r.status, 202);
      r = await reg('GET', '/v2/u/paged/tags/list', { auth: basic(u) });
      assert.equal(r.status, 404);
    });

    it('counts a layer shared by two images per referencing file, and answers 413 over quota', async () => {
      const q = await s.createUser('quser');
      const auth = basic(q);
      const shared = crypto.randomBytes(10_000);
      const a = await pushImage('quser', 'one', 'v1', [shared], auth);
      const b = await pushImage('quser', 'two', 'v1', [shared], auth);
      const expected =
        2 * shared.length + a.config.length + a.manifest.length + b.config.length + b.manifest.length;
      const used = await s.api<{ used: { size: { assets: { packages: { all: number } } } } }>(
        'GET',
        '/user/quota',
        {
          token: q.token,
        },
      );
      assert.equal(used.body.used.size.assets.packages.all, expected);
      // Stored once.
      const rows = await s.ctx.db
        .selectFrom('package_blob')
        .select('id')
        .where('hash_sha256', '=', sha(shared))
        .execute();
      assert.equal(rows.length, 1);
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:assets:packages:all'),
        [],
      );

      let r = await s.api('POST', '/admin/quota/groups', {
        token: s.admin.token,
        body: {
          name: 'tiny',
          rules: [{ name: 'pkg', limit: expected + 10, subjects: ['size:assets:packages:all'] }],
        },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', '/admin/users/quser/quota/groups', {
        token: s.admin.token,
        body: { groups: ['tiny'] },
      });
      assert.equal(r.status, 204, r.text);
      // Under the limit still: this one passes and crosses it; the next is refused.
      assert.equal((await pushBlob('quser', 'one', crypto.randomBytes(100), auth)).status, 201);
      const over = await pushBlob('quser', 'one', crypto.randomBytes(100), auth);
      assert.equal(over.status, 413);
      const started = await reg('POST', '/v2/quser/one/blobs/uploads/', { auth });
      assert.equal(started.status, 413);
    });

    it('emits package events, counts manifest downloads, keeps named layers from blob DELETE', async () => {
      const seen: Array<[string, string, string]> = [];
      s.ctx.events.on(
        'package.created',
        (e) => void seen.push(['created', e.package.name, e.package.version]),
      );
      s.ctx.events.on(
        'package.deleted',
        (e) => void seen.push(['deleted', e.package.name, e.package.version]),
      );
      const layer = crypto.randomBytes(500);
      await pushImage('u', 'events', 'v1', [layer], basic(u));
      assert.deepEqual(seen, [['created', 'events', 'v1']]);
      const count = async () =>
        Number(
          (
            await s.ctx.db
              .selectFrom('package_version')
              .innerJoin('package', 'package.id', 'package_version.package_id')
              .select('package_version.download_count')
              .where('package.name', '=', 'events')
              .where('package_version.version', '=', 'v1')
              .executeTakeFirstOrThrow()
          ).download_count,
        );
      assert.equal(await count(), 0);
      await reg('HEAD', '/v2/u/events/manifests/v1', { auth: basic(u) });
      assert.equal(await count(), 0);
      await reg('GET', '/v2/u/events/manifests/v1', { auth: basic(u) });
      await reg('GET', '/v2/u/events/manifests/v1', { auth: basic(u) });
      assert.equal(await count(), 2);
      // A layer a manifest names is not deleted alone.
      let r = await reg('DELETE', `/v2/u/events/blobs/sha256:${sha(layer)}`, { auth: basic(u) });
      assert.equal(r.status, 405);
      assert.equal(code(r), 'UNSUPPORTED');
      r = await reg('DELETE', '/v2/u/events/manifests/v1', { auth: basic(u) });
      assert.equal(r.status, 202);
      assert.deepEqual(seen[1], ['deleted', 'events', 'v1']);
      assert.equal(seen.length, 2);
      r = await reg('GET', `/v2/u/events/blobs/sha256:${sha(layer)}`, { auth: basic(u) });
      assert.equal(r.status, 404);
    });

    it('limits a blob to LIMIT_SIZE_CONTAINER and drops stale upload sessions in the cleanup job', async () => {
      s.config.packages.limitSizeContainer = 1000;
      try {
        let r = await pushBlob('u', 'limited', crypto.randomBytes(1001), basic(other));
        assert.equal(r.status, 401);
        r = await pushBlob('other', 'limited', crypto.randomBytes(1001), basic(other));
        assert.equal(r.status, 403);
        assert.equal(code(r), 'DENIED');
        r = await pushBlob('other', 'limited', crypto.randomBytes(1000), basic(other));
        assert.equal(r.status, 201);
      } finally {
        s.config.packages.limitSizeContainer = -1;
      }
      const r = await reg('POST', '/v2/other/stale/blobs/uploads/', { auth: basic(other) });
      assert.equal(r.status, 202);
      const loc = r.headers.get('location')!;
      await s.ctx.db.updateTable('package_blob_upload').set({ updated_unix: 1, created_unix: 1 }).execute();
      await s.ctx.packageCleanup.run();
      assert.equal((await reg('GET', loc, { auth: basic(other) })).status, 404);
    });

    it('lists images in /api/v1/packages without the upload version, and links by the source label', async () => {
      const r = await s.api<Array<{ name: string; version: string; type: string }>>(
        'GET',
        '/packages/u?type=container&limit=50',
        { token: u.token },
      );
      assert.equal(r.status, 200);
      const names = r.body.map((p) => `${p.name}:${p.version}`);
      assert.ok(names.includes('team/app:1.0'), names.join());
      assert.ok(names.includes('multi/arch:v1'));
      assert.ok(!names.some((n) => n.endsWith(':_upload')), names.join());
      assert.ok(r.body.every((p) => p.type === 'container'));

      // A repository named by org.opencontainers.image.source gets the image linked.
      const repo = await s.api('POST', '/user/repos', { token: u.token, body: { name: 'src-repo' } });
      assert.equal(repo.status, 201, repo.text);
      const config = Buffer.from(
        JSON.stringify({
          os: 'linux',
          architecture: 'amd64',
          config: { Labels: { 'org.opencontainers.image.source': `${s.url}/u/src-repo` } },
        }),
      );
      const layer = Buffer.from('linked layer');
      for (const bb of [config, layer])
        assert.equal((await pushBlob('u', 'linked', bb, basic(u))).status, 201);
      const put = await reg('PUT', '/v2/u/linked/manifests/1', {
        auth: basic(u),
        body: manifestOf(config, [layer]),
        headers: { 'content-type': OCI_MANIFEST },
      });
      assert.equal(put.status, 201);
      const listed = await s.api<Array<{ name: string; repository: { name: string } | null }>>(
        'GET',
        '/packages/u?type=container&q=linked',
        { token: u.token },
      );
      assert.equal(listed.body[0]?.repository?.name, 'src-repo');
    });
  });
});
