// The Chef registry (the Supermarket API of knife and berkshelf), request by request as Forgejo's
// test drives it (Debian has no chef/knife client): requests signed here with node:crypto exactly
// as knife's mixlib-authentication signs them (protocols 1.0, 1.1, 1.2 and 1.3; the signature cut
// into X-Ops-Authorization-N lines of 60), their refusals (unknown account, no key, bad or missing
// headers, a timestamp outside the ten-minute window, a tampered signature, another key, another
// path), uploads, universe, search and lists, metadata, downloads, deletion. Also bad tarballs
// and metadata (400, nothing kept), a version again (409), a private owner (401 + challenge),
// LIMIT_SIZE_CHEF (403), quota (413), and the settings page that makes an account's key pair.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz } from '../helpers/archives.js';
import { WebClient } from '../helpers/web.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

interface Signer {
  user: string;
  key: crypto.KeyObject;
  version?: '1.0' | '1.1' | '1.2' | '1.3';
  /** X-Ops-Timestamp (now by default). */
  timestamp?: string;
  /** Signs this path instead of the one requested. */
  signedPath?: string;
}

/** knife's canonical path: runs of `/` made one, no trailing `/`. */
const canonicalPath = (p: string) => {
  const q = p.replace(/\/+/g, '/');
  return q.length > 1 ? q.replace(/\/$/, '') : q;
};

/** The headers knife (mixlib-authentication) sends for a request. */
function signHeaders(method: string, url: string, body: Buffer, s: Signer): Record<string, string> {
  const version = s.version ?? '1.3';
  const algorithm = version === '1.3' ? 'sha256' : 'sha1';
  const timestamp = s.timestamp ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const contentHash = crypto.createHash(algorithm).update(body).digest('base64');
  const path = canonicalPath(s.signedPath ?? new URL(url).pathname);
  const sha1 = (v: string) => crypto.createHash('sha1').update(v).digest('base64');
  const userId = version === '1.1' || version === '1.2' ? sha1(s.user) : s.user;
  const text =
    version === '1.3'
      ? [
          `Method:${method}`,
          `Path:${path}`,
          `X-Ops-Content-Hash:${contentHash}`,
          `X-Ops-Sign:version=${version}`,
          `X-Ops-Timestamp:${timestamp}`,
          `X-Ops-UserId:${userId}`,
          `X-Ops-Server-API-Version:1`,
        ].join('\n')
      : [
          `Method:${method}`,
          `Hashed Path:${sha1(path)}`,
          `X-Ops-Content-Hash:${contentHash}`,
          `X-Ops-Timestamp:${timestamp}`,
          `X-Ops-UserId:${userId}`,
        ].join('\n');
  const signature =
    version === '1.0' || version === '1.1'
      ? crypto.privateEncrypt({ key: s.key, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(text))
      : crypto.sign(algorithm, Buffer.from(text), s.key);
  const headers: Record<string, string> = {
    'x-ops-userid': s.user,
    'x-ops-timestamp': timestamp,
    'x-ops-content-hash': contentHash,
    'x-ops-sign': `algorithm=${algorithm};version=${version};`,
    'x-ops-server-api-version': '1',
    'x-chef-version': '18.2.7',
  };
  const lines = signature.toString('base64').match(/.{1,60}/g) ?? [];
  lines.forEach((line, i) => (headers[`x-ops-authorization-${i + 1}`] = line));
  return headers;
}

/** A multipart body with the cookbook as `tarball` (what knife supermarket share posts). */
function multipartBody(tarball: Buffer, field = 'tarball') {
  const boundary = `----chef${crypto.randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="cookbook"\r\n\r\n{"category":"Other"}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="c.tgz"\r\n` +
        `Content-Type: application/x-binary\r\n\r\n`,
    ),
    tarball,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

describe('Chef registry', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  const { privateKey: uKey, publicKey: uPub } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const { privateKey: otherKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });

  const root = (owner: string) => `${s.url}/api/packages/${owner}/chef/api/v1`;
  const cookbook = (name: string, version: string, extra: Record<string, unknown> = {}) =>
    tgz({
      [`${name}/metadata.json`]: JSON.stringify({
        name,
        version,
        description: 'Test Description',
        maintainer: 'KN4CK3R',
        license: 'MIT',
        source_url: 'https://example.com/cookbook',
        dependencies: { apt: '>= 1.0.0' },
        ...extra,
      }),
      [`${name}/recipes/default.rb`]: "log 'hello'\n",
    });

  /** A request signed as `signer` (or with the given extra headers only). */
  async function request(
    method: string,
    url: string,
    opts: { signer?: Signer; body?: Buffer; type?: string; headers?: Record<string, string> } = {},
  ) {
    const body = opts.body ?? Buffer.alloc(0);
    const headers: Record<string, string> = { accept: 'application/json', ...(opts.headers ?? {}) };
    if (opts.signer) Object.assign(headers, signHeaders(method, url, body, opts.signer));
    if (opts.type) headers['content-type'] = opts.type;
    return fetch(url, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(body),
    });
  }
  const share = (owner: string, tarball: Buffer, signer?: Signer, field?: string) => {
    const m = multipartBody(tarball, field);
    return request('POST', `${root(owner)}/cookbooks`, { signer, body: m.body, type: m.type });
  };
  const asU = (extra: Partial<Signer> = {}): Signer => ({ user: 'u', key: uKey, ...extra });
  const messages = async (res: Response) =>
    ((await res.json()) as { error_messages: string[] }).error_messages;

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    await s.ctx.db
      .insertInto('package_chef_key')
      .values({
        owner_id: (await s.ctx.users.getByName('u'))!.id,
        public_pem: uPub.export({ type: 'spki', format: 'pem' }).toString(),
        created_unix: 0,
      })
      .execute();
  });
  after(() => s.close());

  it('verifies signed requests as Forgejo does (protocols 1.0 to 1.3, headers, the time window)', async () => {
    const url = `${root('u')}/cookbooks/nothing`;
    // Without X-Ops-Userid the request is anonymous: deleting needs an account.
    let r = await request('DELETE', url);
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('www-authenticate'), CHALLENGE);

    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const refused: Array<[string, Record<string, string>]> = [
      ['an unknown account', { 'x-ops-userid': 'not-existing-user' }],
      ['no timestamp', { 'x-ops-userid': 'u' }],
      ['an old timestamp', { 'x-ops-userid': 'u', 'x-ops-timestamp': '2023-01-01T00:00:00Z' }],
      ['no X-Ops-Sign', { 'x-ops-userid': 'u', 'x-ops-timestamp': now }],
      ['version=none', { 'x-ops-userid': 'u', 'x-ops-timestamp': now, 'x-ops-sign': 'version=none' }],
      ['version=1.4', { 'x-ops-userid': 'u', 'x-ops-timestamp': now, 'x-ops-sign': 'version=1.4' }],
      ['sha2', { 'x-ops-userid': 'u', 'x-ops-timestamp': now, 'x-ops-sign': 'version=1.0;algorithm=sha2' }],
      [
        'sha256 with 1.0',
        { 'x-ops-userid': 'u', 'x-ops-timestamp': now, 'x-ops-sign': 'version=1.0;algorithm=sha256' },
      ],
      [
        'a dummy signature',
        {
          'x-ops-userid': 'u',
          'x-ops-timestamp': now,
          'x-ops-sign': 'version=1.0;algorithm=sha1',
          'x-ops-content-hash': 'unused',
          'x-ops-authorization-4': 'dummy',
        },
      ],
    ];
    for (const [what, headers] of refused) {
      for (const target of [url, `${root('u')}/universe`]) {
        const res = await request(target === url ? 'DELETE' : 'GET', target, { headers });
        assert.equal(res.status, 401, `${what} ${target}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
        assert.match((await messages(res))[0] ?? '', /authenticate/, what);
      }
    }

    // Signed by u's key: the account is known (404 for a cookbook that does not exist, not 401).
    for (const version of ['1.0', '1.1', '1.2', '1.3'] as const) {
      r = await request('DELETE', url, { signer: asU({ version }) });
      assert.equal(r.status, 404, `protocol ${version}: ${await r.clone().text()}`);
      assert.match((await messages(r))[0] ?? '', /does not exist/);
    }
    // The query string is not signed; the path is cleaned as knife cleans it.
    r = await request('DELETE', `${url}?x=1`, { signer: asU() });
    assert.equal(r.status, 404);

    const minutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const tampered = signHeaders('DELETE', url, Buffer.alloc(0), asU());
    const sig = tampered['x-ops-authorization-1']!;
    tampered['x-ops-authorization-1'] = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    const cases: Array<[string, number, Parameters<typeof request>[2]]> = [
      ['nine minutes behind', 404, { signer: asU({ timestamp: minutes(-9) }) }],
      ['nine minutes ahead', 404, { signer: asU({ timestamp: minutes(9) }) }],
      ['eleven minutes behind', 401, { signer: asU({ timestamp: minutes(-11) }) }],
      ['eleven minutes ahead', 401, { signer: asU({ timestamp: minutes(11), version: '1.0' }) }],
      ['a tampered signature', 401, { headers: tampered }],
      ['another key', 401, { signer: { user: 'u', key: otherKey } }],
      ['another key (1.0)', 401, { signer: { user: 'u', key: otherKey, version: '1.0' } }],
      ['another path signed', 401, { signer: asU({ signedPath: `${new URL(url).pathname}x` }) }],
      ['another account named', 401, { signer: { user: 'other', key: uKey } }],
      ['an account without a key', 401, { signer: { user: 'other', key: otherKey } }],
    ];
    for (const [what, status, opts] of cases) {
      const res = await request('DELETE', url, opts);
      assert.equal(res.status, status, `${what}: ${await res.clone().text()}`);
      if (status === 401) assert.equal(res.headers.get('www-authenticate'), CHALLENGE, what);
    }
    // A request whose signature names another method does not pass either.
    const getHeaders = signHeaders('GET', url, Buffer.alloc(0), asU());
    assert.equal((await request('DELETE', url, { headers: getHeaders })).status, 401);
  });

  it('shares cookbooks and serves universe, search, lists, metadata and downloads', async () => {
    let r = await request('POST', `${root('u')}/cookbooks`, { body: Buffer.alloc(0) });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('www-authenticate'), CHALLENGE);

    const v1 = await cookbook('test', '1.0.1');
    r = await share('u', v1, asU());
    assert.equal(r.status, 201, await r.clone().text());
    assert.deepEqual(await r.json(), {});
    const listed = await s.api<Array<{ type: string; name: string; version: string }>>(
      'GET',
      '/packages/u?type=chef',
      { token: u.token },
    );
    assert.deepEqual(
      listed.body.map((p) => [p.type, p.name, p.version]),
      [['chef', 'test', '1.0.1']],
    );
    const files = await s.api<Array<{ name: string; Size: number }>>(
      'GET',
      '/packages/u/chef/test/1.0.1/files',
      {
        token: u.token,
      },
    );
    assert.deepEqual(
      files.body.map((f) => [f.name, f.Size]),
      [['1.0.1.tar.gz', v1.length]],
    );
    r = await share('u', v1, asU());
    assert.equal(r.status, 409);
    assert.ok((await messages(r)).length === 1);

    // The package's web page shows knife's install commands.
    const html = await (await fetch(`${s.url}/u/-/packages/chef/test/1.0.1`)).text();
    assert.ok(html.includes(`knife[:supermarket_site] = '${s.url}/api/packages/u/chef'`));
    assert.ok(html.includes('knife supermarket install test 1.0.1'));

    r = await request('GET', `${root('u')}/cookbooks/test/versions/1.0.1/download`);
    assert.equal(r.status, 200);
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), v1);

    const base = root('u');
    r = await request('GET', `${base}/universe`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      test: {
        '1.0.1': {
          location_type: 'opscode',
          location_path: base,
          download_url: `${base}/cookbooks/test/versions/1.0.1/download`,
          dependencies: { apt: '>= 1.0.0' },
        },
      },
    });

    const item = {
      cookbook_name: 'test',
      cookbook_maintainer: 'KN4CK3R',
      cookbook_description: 'Test Description',
      cookbook: `${base}/cookbooks/test`,
    };
    const searches: Array<[string, number, number, number, number]> = [
      ['', 0, 0, 1, 1],
      ['', 0, 10, 1, 1],
      ['gitea', 0, 10, 0, 0],
      ['test', 0, 10, 1, 1],
      ['test', 1, 10, 1, 0],
    ];
    for (const [q, start, items, total, count] of searches) {
      r = await request('GET', `${base}/search?q=${q}&start=${start}&items=${items}`, { signer: asU() });
      const res = (await r.json()) as { start: number; total: number; items: unknown[] };
      assert.equal(res.total, total, `search ${q} ${start}`);
      assert.equal(res.start, start);
      assert.equal(res.items.length, count, `search ${q} ${start}`);
      if (count === 1) assert.deepEqual(res.items[0], item);
    }
    const lists: Array<[string, number, number, number, number]> = [
      ['', 0, 0, 1, 1],
      ['', 0, 10, 1, 1],
      ['RECENTLY_ADDED', 0, 10, 1, 1],
      ['RECENTLY_UPDATED', 0, 10, 1, 1],
      ['', 1, 10, 1, 0],
    ];
    for (const [sort, start, items, total, count] of lists) {
      r = await request('GET', `${base}/cookbooks?start=${start}&items=${items}&sort=${sort}`, {
        signer: asU(),
      });
      const res = (await r.json()) as { total: number; items: unknown[] };
      assert.equal(res.total, total);
      assert.equal(res.items.length, count);
      if (count === 1) assert.deepEqual(res.items[0], item);
    }

    r = await request('GET', `${base}/cookbooks/test`);
    assert.equal(r.status, 200);
    const meta = (await r.json()) as Record<string, unknown>;
    const versionUrl = `${base}/cookbooks/test/versions/1.0.1`;
    assert.equal(meta['name'], 'test');
    assert.equal(meta['maintainer'], 'KN4CK3R');
    assert.equal(meta['description'], 'Test Description');
    assert.equal(meta['category'], '');
    assert.equal(meta['latest_version'], versionUrl);
    assert.equal(meta['source_url'], 'https://example.com/cookbook');
    assert.equal(meta['deprecated'], false);
    assert.deepEqual(meta['versions'], [versionUrl]);
    assert.ok(!Number.isNaN(Date.parse(String(meta['created_at']))));

    const version = {
      version: '1.0.1',
      tarball_file_size: v1.length,
      cookbook: `${base}/cookbooks/test`,
      file: `${versionUrl}/download`,
      license: 'MIT',
      dependencies: { apt: '>= 1.0.0' },
    };
    for (const v of ['1.0.1', '1_0_1']) {
      r = await request('GET', `${base}/cookbooks/test/versions/${v}`);
      assert.equal(r.status, 200, v);
      const { published_at, ...rest } = (await r.json()) as Record<string, unknown>;
      assert.deepEqual(rest, version);
      assert.ok(!Number.isNaN(Date.parse(String(published_at))));
    }

    // Versions in version order; `latest` is the highest; the list shows each cookbook's newest upload.
    assert.equal((await share('u', await cookbook('test', '1.10.0'), asU({ version: '1.0' }))).status, 201);
    assert.equal((await share('u', await cookbook('test', '1.2'), asU({ version: '1.2' }))).status, 201);
    assert.equal(
      (await share('u', await cookbook('another', '0.1.0', { maintainer: 'x' }), asU())).status,
      201,
    );
    const all = (await (await request('GET', `${base}/cookbooks/test`)).json()) as Record<string, unknown>;
    assert.deepEqual(
      all['versions'],
      ['1.0.1', '1.2', '1.10.0'].map((v) => `${base}/cookbooks/test/versions/${v}`),
    );
    assert.equal(all['latest_version'], `${base}/cookbooks/test/versions/1.10.0`);
    r = await request('GET', `${base}/cookbooks/test/versions/latest`);
    assert.equal(((await r.json()) as { version: string }).version, '1.10.0');
    const byName = (await (await request('GET', `${base}/cookbooks`)).json()) as {
      items: Array<{ cookbook_name: string }>;
    };
    assert.deepEqual(
      byName.items.map((i) => i.cookbook_name),
      ['another', 'test'],
    );
    const recent = (await (await request('GET', `${base}/cookbooks?order=recently_added`)).json()) as {
      items: Array<{ cookbook_name: string }>;
    };
    assert.deepEqual(
      recent.items.map((i) => i.cookbook_name),
      ['another', 'test'],
    );
    const universe = (await (await request('GET', `${base}/universe`)).json()) as Record<string, object>;
    assert.deepEqual(Object.keys(universe['test']!).sort(), ['1.0.1', '1.10.0', '1.2']);

    for (const url of [
      `${base}/cookbooks/nothing`,
      `${base}/cookbooks/test/versions/9.9.9`,
      `${base}/cookbooks/test/versions/9.9.9/download`,
      `${base}/cookbooks/nothing/versions/latest`,
    ]) {
      const res = await request('GET', url);
      assert.equal(res.status, 404, url);
      assert.equal((await messages(res)).length, 1);
    }
  });

  it('deletes versions and cookbooks for writers only', async () => {
    const base = root('u');
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
    for (const v of ['1.0.2', '1.0.3'])
      assert.equal((await share('u', await cookbook('gone', v), asU())).status, 201);
    let r = await request('DELETE', `${base}/cookbooks/gone/versions/1.0.2`);
    assert.equal(r.status, 401);
    r = await request('DELETE', `${base}/cookbooks/gone/versions/1.0.2`, {
      headers: { authorization: `token ${other.token}` },
    });
    assert.equal(r.status, 401);
    r = await request('DELETE', `${base}/cookbooks/gone/versions/1.0.2`, { signer: asU() });
    assert.equal(r.status, 200);
    assert.equal((await request('GET', `${base}/cookbooks/gone/versions/1.0.2`)).status, 404);
    assert.equal((await request('GET', `${base}/cookbooks/gone/versions/1.0.3`)).status, 200);

    assert.equal((await request('DELETE', `${base}/cookbooks/gone`)).status, 401);
    // Basic and token credentials work as for every registry.
    r = await request('DELETE', `${base}/cookbooks/gone`, {
      headers: { authorization: `Basic ${Buffer.from(`u:${u.password}`).toString('base64')}` },
    });
    assert.equal(r.status, 200);
    assert.equal((await request('GET', `${base}/cookbooks/gone`)).status, 404);
    const left = await s.api<Array<{ name: string }>>('GET', '/packages/u?type=chef&q=gone', {
      token: u.token,
    });
    assert.deepEqual(left.body, []);

    // Package events: the webhook has one delivery per version shared and per version deleted.
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select(['event_type', 'payload'])
      .where('hook_id', '=', hook.body.id)
      .orderBy('id')
      .execute();
    const events = tasks.map((t) => {
      const p = JSON.parse(t.payload) as {
        action: string;
        package: { type: string; name: string; version: string };
      };
      return [t.event_type, p.action, p.package.type, p.package.name, p.package.version].join(' ');
    });
    assert.deepEqual(events, [
      'package created chef gone 1.0.2',
      'package created chef gone 1.0.3',
      'package deleted chef gone 1.0.2',
      'package deleted chef gone 1.0.3',
    ]);
    await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: u.token });
  });

  it('refuses bad tarballs and metadata with 400 keeping nothing', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await cookbook('bad_case', '1.0.0');
    const meta = (m: unknown) =>
      tgz({ 'bad_case/metadata.json': typeof m === 'string' ? m : JSON.stringify(m) });
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(700), /gzip/],
      ['an archive cut short', good.subarray(0, good.length - 20), /gzip|tar|end/i],
      ['no metadata.json', await tgz({ 'bad_case/README.md': 'x' }), /metadata\.json file is missing/],
      ['metadata.json at the root', await tgz({ 'metadata.json': '{}' }), /metadata\.json file is missing/],
      ['metadata.json too deep', await tgz({ 'a/b/metadata.json': '{}' }), /metadata\.json file is missing/],
      ['bad JSON', await meta('{"name": '), /JSON/],
      ['a name with a space', await meta({ name: 'bad name', version: '1.0.0' }), /name is invalid/],
      ['no name', await meta({ version: '1.0.0' }), /name is invalid/],
      ['a bad version', await meta({ name: 'bad_case', version: '1' }), /version is invalid/],
      ['a semver pre-release', await meta({ name: 'bad_case', version: '1.0.0-rc1' }), /version is invalid/],
    ];
    for (const [what, body, problem] of cases) {
      const res = await share('u', body, asU());
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match((JSON.parse(t) as { error_messages: string[] }).error_messages[0] ?? '', problem, what);
    }
    let r = await share('u', good, asU(), 'other');
    assert.equal(r.status, 400);
    assert.match((await messages(r))[0] ?? '', /tarball/);
    r = await request('POST', `${root('u')}/cookbooks`, {
      signer: asU(),
      body: good,
      type: 'application/gzip',
    });
    assert.equal(r.status, 400);
    await assertNothingKept(s, [...cases.map((c) => c[1]), good], u.token, used);
  });

  it("a private owner's cookbooks answer 401 to anyone but their readers", async () => {
    const p = await s.createUser('p');
    const pAuth = { authorization: `token ${p.token}` };
    const m = multipartBody(await cookbook('secret', '1.0.0'));
    let r = await request('POST', `${root('p')}/cookbooks`, { headers: pAuth, body: m.body, type: m.type });
    assert.equal(r.status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    const urls = [
      `${root('p')}/universe`,
      `${root('p')}/search?q=secret`,
      `${root('p')}/cookbooks`,
      `${root('p')}/cookbooks/secret`,
      `${root('p')}/cookbooks/secret/versions/1.0.0`,
      `${root('p')}/cookbooks/secret/versions/1.0.0/download`,
    ];
    for (const opts of [{}, { signer: asU() }, { headers: { authorization: `token ${other.token}` } }]) {
      for (const url of urls) {
        const res = await request('GET', url, opts);
        assert.equal(res.status, 401, `${url} ${JSON.stringify(Object.keys(opts))}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
    // u signs a share into p's registry: no write access there.
    r = await share('p', await cookbook('intruder', '1.0.0'), asU());
    assert.equal(r.status, 401);
    for (const url of urls) assert.equal((await request('GET', url, { headers: pAuth })).status, 200, url);
  });

  it('answers 403 over LIMIT_SIZE_CHEF (administrators exempt) and 413 over quota', async () => {
    const big = await tgz({
      'sized/metadata.json': JSON.stringify({ name: 'sized', version: '1.0.0' }),
      'sized/files/data.bin': crypto.randomBytes(6000),
    });
    s.config.packages.limitSizeChef = 1000;
    try {
      const r = await share('u', big, asU());
      assert.equal(r.status, 403);
      assert.match((await messages(r))[0] ?? '', /limit/);
      const m = multipartBody(big);
      const admin = await request('POST', `${root('u')}/cookbooks`, {
        headers: { authorization: `token ${s.admin.token}` },
        body: m.body,
        type: m.type,
      });
      assert.equal(admin.status, 201);
    } finally {
      s.config.packages.limitSizeChef = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'chef-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'chef-tiny', rules: [{ name: 'chef-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/chef-tiny/users/q', { token: s.admin.token });
    const post = async (body: Buffer) => {
      const m = multipartBody(body);
      return request('POST', `${root('q')}/cookbooks`, {
        headers: { authorization: `token ${q.token}` },
        body: m.body,
        type: m.type,
      });
    };
    assert.equal((await post(await cookbook('quota', '1.0.0'))).status, 201);
    const second = await post(await cookbook('quota', '1.0.1'));
    assert.equal(second.status, 413);
    assert.equal((await messages(second)).length, 1);
  });

  it('makes a key pair on the package settings page; the old one stops working', async () => {
    const web = new WebClient(s.url);
    assert.equal((await web.get('/user/settings/packages')).status, 303);
    await web.signIn('other', other.password);
    let page = await web.get('/user/settings/packages');
    assert.equal(page.status, 200);
    assert.match(page.text, /data-chef-key="none"/);
    assert.match(
      page.text,
      new RegExp(`${root('other')}`.replace(/\/api\/v1$/, '').replace(/[./]/g, '\\$&')),
    );
    const bad = await web.post('/user/settings/packages/chef/regenerate_keypair', { _csrf: 'nope' });
    assert.notEqual(bad.status, 200);
    const made = await web.post('/user/settings/packages/chef/regenerate_keypair', {});
    assert.equal(made.status, 200, made.text.slice(0, 300));
    assert.match(made.headers.get('content-disposition') ?? '', /attachment; filename="other\.priv"/);
    assert.match(made.text, /^-----BEGIN RSA PRIVATE KEY-----/);
    const key = crypto.createPrivateKey(made.text);
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 4096);
    page = await web.get('/user/settings/packages');
    assert.match(page.text, /data-chef-key="set"/);

    const signer = { user: 'other', key };
    let r = await share('other', await cookbook('mine', '1.0.0'), signer);
    assert.equal(r.status, 201, await r.clone().text());
    await web.get('/user/settings/packages');
    const again = await web.post('/user/settings/packages/chef/regenerate_keypair', {});
    assert.equal(again.status, 200);
    r = await share('other', await cookbook('mine', '1.0.1'), signer);
    assert.equal(r.status, 401);
    r = await share('other', await cookbook('mine', '1.0.1'), {
      user: 'other',
      key: crypto.createPrivateKey(again.text),
    });
    assert.equal(r.status, 201);
  });

  it("cleanup rules of type chef remove an owner's older cookbook versions", async () => {
    const rule = await s.api<{ id: number }>('POST', '/packages/other/-/rules', {
      token: other.token,
      body: { type: 'chef', keep_count: 1 },
    });
    assert.equal(rule.status, 201, rule.text);
    const preview = await s.api<Array<{ type: string; name: string; version: string }>>(
      'GET',
      `/packages/other/-/rules/${rule.body.id}/preview`,
      { token: other.token },
    );
    assert.deepEqual(
      preview.body.map((p) => [p.type, p.name, p.version]),
      [['chef', 'mine', '1.0.0']],
    );
    assert.equal((await s.ctx.packageCleanup.run()).versions, 1);
    const universe = (await (await request('GET', `${root('other')}/universe`)).json()) as Record<
      string,
      object
    >;
    assert.deepEqual(Object.keys(universe['mine']!), ['1.0.1']);
  });
});
