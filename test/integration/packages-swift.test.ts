// The Swift package registry (SE-0292), request by request as Forgejo's test drives it (no Swift
// client on this machine): the credential check, the Accept version check (400, problem details),
// publishing with the archive as a file or a text field and the metadata before or after it,
// releases with their `Link`, release metadata, manifests (alternates, `?swift-version=`, 303),
// archives with `Digest`, lookup by repository URL. Also bad scopes, names, versions, archives and
// metadata (400, nothing kept), a release published again (409), a private owner (401 + challenge,
// 403 to a public-only token), LIMIT_SIZE_SWIFT (403), quota (413), the listing API and the page.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, zip } from '../helpers/archives.js';
import { WebClient } from '../helpers/web.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';
const JSON_TYPE = 'application/vnd.swift.registry.v1+json';
const SWIFT_TYPE = 'application/vnd.swift.registry.v1+swift';
const ZIP_TYPE = 'application/vnd.swift.registry.v1+zip';

const scope = 'test-scope';
const name = 'test_package';
const id = `${scope}.${name}`;
const author = 'KN4CK3R';
const description = 'Gitea Test Package';
const repositoryUrl = 'https://gitea.io/gitea/gitea';
const manifest1 = '// swift-tools-version:5.7\n//\n//  Package.swift';
const manifest2 = '// swift-tools-version:5.6\n//\n//  Package@swift-5.6.swift';

/** A source archive as `swift package archive-source` makes it: the sources in one folder. */
const archive = (members: Record<string, string | Buffer>) =>
  zip(Object.fromEntries(Object.entries(members).map(([k, v]) => [`${name}/${k}`, v])));
const metadataOf = (version: string) =>
  JSON.stringify({
    name,
    version,
    description,
    codeRepository: repositoryUrl,
    author: { givenName: author },
    repositoryURLs: [repositoryUrl],
  });

interface Part {
  field: string;
  data: Buffer | string;
  /** A file part when given, else a text field. */
  filename?: string;
}

/** A multipart/form-data body with its parts as given (a text field may hold any bytes). */
function multipartBody(parts: Part[]): { body: Buffer; type: string } {
  const boundary = `----swift${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.field}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${
      p.filename ? 'Content-Type: application/octet-stream\r\n' : ''
    }\r\n`;
    chunks.push(Buffer.from(head), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

describe('Swift package registry', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let first: Buffer;

  const basic = (user: string, secret: string) =>
    `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
  const base = (owner = 'u') => `${s.url}/api/packages/${owner}/swift`;
  const request = (
    method: string,
    url: string,
    opts: { auth?: string | undefined; accept?: string; body?: Buffer; type?: string } = {},
  ) => {
    const headers: Record<string, string> = {};
    if (opts.auth) headers['authorization'] = opts.auth;
    if (opts.accept) headers['accept'] = opts.accept;
    if (opts.type) headers['content-type'] = opts.type;
    return fetch(url, {
      method,
      headers,
      redirect: 'manual',
      ...(opts.body ? { body: new Uint8Array(opts.body) } : {}),
    });
  };
  const publish = (url: string, parts: Part[], auth: string | undefined = basic('u', u.token)) => {
    const { body, type } = multipartBody(parts);
    return request('PUT', url, { auth, accept: JSON_TYPE, body, type });
  };
  const archivePart = (data: Buffer): Part => ({
    field: 'source-archive',
    data,
    filename: 'source-archive.zip',
  });
  const assertProblem = async (r: Response, status: number, what = '') => {
    const text = await r.text();
    assert.equal(r.status, status, `${what}: ${text}`);
    assert.equal(r.headers.get('content-version'), '1', what);
    assert.equal(r.headers.get('content-type'), 'application/problem+json', what);
    const body = JSON.parse(text) as { status: number; detail: string };
    assert.equal(body.status, status, what);
    return body.detail;
  };

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
  });
  after(() => s.close());

  it('checks credentials on POST / and /login', async () => {
    for (const url of [base(), `${base()}/login`]) {
      const anon = await request('POST', url);
      assert.equal(anon.status, 401);
      assert.equal(anon.headers.get('www-authenticate'), CHALLENGE);
      assert.equal((await request('POST', url, { auth: basic('u', u.password) })).status, 200);
      assert.equal((await request('POST', url, { auth: basic('u', 'wrong') })).status, 401);
    }
  });

  it('refuses another media type or API version with 400 and problem details', async () => {
    for (const sub of [
      '/scope/package',
      '/scope/package.json',
      '/scope/package/1.0.0',
      '/scope/package/1.0.0.json',
      '/scope/package/1.0.0.zip',
      '/scope/package/1.0.0/Package.swift',
      '/identifiers',
    ]) {
      for (const accept of ['application/unknown', 'application/vnd.swift.registry.v2+json']) {
        const detail = await assertProblem(await request('GET', base() + sub, { accept }), 400, sub);
        assert.match(detail, /Unexpected accept header/);
      }
    }
    const r = await request('PUT', `${base()}/scope/package/1.0.0`, {
      auth: basic('u', u.token),
      accept: 'application/unknown',
    });
    await assertProblem(r, 400, 'PUT');
  });

  it('publishes releases (archive as a file or a field, metadata after or before it), 409 again', async () => {
    for (const triple of ['/sc_ope/package/1.0.0', '/scope/pack~age/1.0.0', '/scope/package/1_0.0']) {
      const r = await request('PUT', base() + triple, { auth: basic('u', u.token), body: Buffer.alloc(0) });
      await assertProblem(r, 400, triple);
    }
    const uploadUrl = `${base()}/${scope}/${name}/1.0.3`;
    const anon = await request('PUT', uploadUrl, { body: Buffer.alloc(0) });
    assert.equal(anon.status, 401);
    assert.equal(anon.headers.get('www-authenticate'), CHALLENGE);

    first = archive({
      'Package.swift': manifest1,
      'Package@swift-5.6.swift': manifest2,
      'Sources/a.swift': '',
    });
    const r1 = await publish(uploadUrl, [
      archivePart(first),
      { field: 'metadata', data: metadataOf('1.0.3') },
    ]);
    assert.equal(r1.status, 201, await r1.text());
    assert.equal(r1.headers.get('content-version'), '1');
    assert.equal(r1.headers.get('location'), uploadUrl);

    // The archive's bytes as a text field, the metadata (a file part) before it; `v1.0.4` is 1.0.4.
    const second = archive({ 'Package.swift': manifest1, 'Package@swift-5.6.swift': manifest2 });
    const r2 = await publish(`${base()}/${scope}/${name}/v1.0.4`, [
      { field: 'metadata', data: metadataOf('1.0.4'), filename: 'metadata.json' },
      { field: 'source-archive', data: second },
    ]);
    assert.equal(r2.status, 201, await r2.text());

    const rows = await s.ctx.db
      .selectFrom('package_version as v')
      .innerJoin('package as p', 'p.id', 'v.package_id')
      .select(['p.name', 'v.id', 'v.version', 'v.metadata_json'])
      .where('p.type', '=', 'swift')
      .orderBy('v.id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.name, r.version]),
      [
        [id, '1.0.3'],
        [id, '1.0.4'],
      ],
    );
    for (const row of rows) {
      const m = JSON.parse(row.metadata_json) as {
        description: string;
        author: { givenName: string; name: string };
        repository_url: string;
        manifests: Record<string, { content: string; tools_version: string }>;
      };
      assert.equal(m.description, description);
      assert.deepEqual(m.author, { givenName: author, name: author });
      assert.equal(m.repository_url, repositoryUrl);
      assert.deepEqual(m.manifests, {
        '': { content: manifest1, tools_version: '5.7' },
        '5.6': { content: manifest2, tools_version: '5.6' },
      });
      const props = await s.ctx.db
        .selectFrom('package_property')
        .select(['name', 'value'])
        .where('ref_type', '=', 0)
        .where('ref_id', '=', row.id)
        .execute();
      assert.deepEqual(props, [{ name: 'swift.repository_url', value: repositoryUrl }]);
    }

    const listed = await s.api<Array<{ name: string; version: string; type: string }>>(
      'GET',
      '/packages/u?type=swift',
      { token: u.token },
    );
    assert.deepEqual(
      listed.body.map((p) => [p.type, p.name, p.version]),
      [
        ['swift', id, '1.0.4'],
        ['swift', id, '1.0.3'],
      ],
    );
    const files = await s.api<Array<{ name: string; Size: number; sha256: string }>>(
      'GET',
      `/packages/u/swift/${id}/1.0.3/files`,
      { token: u.token },
    );
    assert.deepEqual(
      files.body.map((f) => [f.name, f.Size]),
      [[`${name}-1.0.3.zip`, first.length]],
    );

    const dup = await publish(uploadUrl, [archivePart(archive({ 'Package.swift': manifest1 }))]);
    await assertProblem(dup, 409, 'again');
  });

  it('serves the source archive with its Digest', async () => {
    const r = await request('GET', `${base()}/${scope}/${name}/1.0.3.zip`, {
      auth: basic('u', u.token),
      accept: ZIP_TYPE,
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-version'), '1');
    assert.equal(r.headers.get('content-type'), 'application/zip');
    assert.equal(
      r.headers.get('digest'),
      `sha256=${crypto.createHash('sha256').update(first).digest('hex')}`,
    );
    assert.equal(r.headers.get('content-disposition'), `attachment; filename="${name}-1.0.3.zip"`);
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), first);
    await assertProblem(await request('GET', `${base()}/${scope}/${name}/9.9.9.zip`), 404, 'no release');
  });

  it('lists releases with the latest in Link, and the same as .json', async () => {
    const r = await request('GET', `${base()}/${scope}/${name}`, {
      auth: basic('u', u.token),
      accept: JSON_TYPE,
    });
    assert.equal(r.status, 200);
    const versionUrl = `${base()}/${scope}/${name}/1.0.4`;
    assert.equal(r.headers.get('content-version'), '1');
    assert.equal(r.headers.get('link'), `<${versionUrl}>; rel="latest-version"`);
    const body = await r.text();
    const result = JSON.parse(body) as { releases: Record<string, { url: string }> };
    assert.deepEqual(Object.keys(result.releases).sort(), ['1.0.3', '1.0.4']);
    assert.equal(result.releases['1.0.4']!.url, versionUrl);
    const again = await request('GET', `${base()}/${scope}/${name}.json`, { auth: basic('u', u.token) });
    assert.equal(await again.text(), body);
    await assertProblem(await request('GET', `${base()}/${scope}/nothing`), 404, 'no package');
  });

  it('answers release metadata, and the same as .json', async () => {
    const r = await request('GET', `${base()}/${scope}/${name}/1.0.3`, {
      auth: basic('u', u.token),
      accept: JSON_TYPE,
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-version'), '1');
    const body = await r.text();
    assert.deepEqual(JSON.parse(body), {
      id,
      version: '1.0.3',
      resources: [
        {
          name: 'source-archive',
          type: 'application/zip',
          checksum: crypto.createHash('sha256').update(first).digest('hex'),
        },
      ],
      metadata: {
        '@context': ['http://schema.org/'],
        '@type': 'SoftwareSourceCode',
        name,
        version: '1.0.3',
        description,
        codeRepository: repositoryUrl,
        author: { '@type': 'Person', givenName: author },
        programmingLanguage: { '@type': 'ComputerLanguage', name: 'Swift', url: 'https://swift.org' },
      },
    });
    const again = await request('GET', `${base()}/${scope}/${name}/1.0.3.json`, {
      auth: basic('u', u.token),
    });
    assert.equal(await again.text(), body);
    await assertProblem(await request('GET', `${base()}/${scope}/${name}/2.0.0`), 404, 'no release');
  });

  it('serves manifests: the default with its alternates in Link, by Swift version, else 303', async () => {
    const manifestUrl = `${base()}/${scope}/${name}/1.0.3/Package.swift`;
    const r = await request('GET', manifestUrl, { auth: basic('u', u.token), accept: SWIFT_TYPE });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-version'), '1');
    assert.equal(r.headers.get('content-type'), 'text/x-swift');
    assert.equal(r.headers.get('content-disposition'), 'attachment; filename="Package.swift"');
    assert.equal(
      r.headers.get('link'),
      `<${manifestUrl}?swift-version=5.6>; rel="alternate"; filename="Package@swift-5.6.swift"; swift-tools-version="5.6"`,
    );
    assert.equal(await r.text(), manifest1);
    for (const v of ['5.6', '5.6.0']) {
      const alt = await request('GET', `${manifestUrl}?swift-version=${v}`, { auth: basic('u', u.token) });
      assert.equal(alt.status, 200, v);
      assert.equal(alt.headers.get('content-type'), 'text/x-swift');
      assert.equal(alt.headers.get('content-disposition'), 'attachment; filename="Package@swift-5.6.swift"');
      assert.equal(await alt.text(), manifest2);
    }
    const redirect = await request('GET', `${manifestUrl}?swift-version=1.0`, { auth: basic('u', u.token) });
    assert.equal(redirect.status, 303);
    assert.equal(redirect.headers.get('content-version'), '1');
    assert.equal(redirect.headers.get('location'), manifestUrl);
  });

  it('finds packages by repository URL', async () => {
    await assertProblem(await request('GET', `${base()}/identifiers`, { accept: JSON_TYPE }), 400, 'no url');
    const unknown = await request('GET', `${base()}/identifiers?url=https://unknown.host/`);
    await assertProblem(unknown, 404, 'unknown url');
    const r = await request('GET', `${base()}/identifiers?url=${encodeURIComponent(repositoryUrl)}`, {
      accept: JSON_TYPE,
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-version'), '1');
    assert.deepEqual(await r.json(), { identifiers: [id] });
    const twice = await request(
      'GET',
      `${base()}/identifiers?url=${encodeURIComponent(repositoryUrl)}&url=https://unknown.host/`,
    );
    assert.deepEqual(await twice.json(), { identifiers: [id] }, 'the first of a repeated url');
  });

  it('refuses bad archives and metadata with 400 keeping nothing', async () => {
    const used = await packagesUsed(s, u.token);
    const good = archive({ 'Package.swift': manifest1, 'README.md': 'bad cases' });
    const cases: Array<[string, Part[], RegExp]> = [
      ['random bytes', [archivePart(crypto.randomBytes(700))], /zip/i],
      ['an archive cut short', [archivePart(good.subarray(0, good.length - 30))], /zip/i],
      [
        'no Package.swift',
        [archivePart(archive({ 'Sources/a.swift': '' }))],
        /Package\.swift file is missing/,
      ],
      [
        'a manifest too large',
        [archivePart(archive({ 'Package.swift': `// ${'x'.repeat(130 * 1024)}` }))],
        /too large/,
      ],
      ['metadata that is no JSON', [archivePart(good), { field: 'metadata', data: '{"name":' }], /metadata/],
      ['no source-archive', [{ field: 'metadata', data: metadataOf('1.0.0') }], /source-archive/],
      [
        'metadata too large',
        [
          archivePart(good),
          { field: 'metadata', data: JSON.stringify({ description: 'x'.repeat(1 << 20) }) },
        ],
        /larger/,
      ],
    ];
    const bodies: Buffer[] = [good];
    for (const [what, parts, problem] of cases) {
      const detail = await assertProblem(await publish(`${base()}/${scope}/bad/1.0.0`, parts), 400, what);
      assert.match(detail, problem, what);
      for (const p of parts) if (p.field === 'source-archive') bodies.push(Buffer.from(p.data));
    }
    const notMultipart = await request('PUT', `${base()}/${scope}/bad/1.0.0`, {
      auth: basic('u', u.token),
      body: good,
      type: 'application/zip',
    });
    await assertProblem(notMultipart, 400, 'not multipart');
    await assertNothingKept(s, bodies, u.token, used);
    assert.equal((await request('GET', `${base()}/${scope}/bad`)).status, 404);
  });

  it("a private owner's packages answer 401 to anyone but their readers, 403 to a public-only token", async () => {
    const p = await s.createUser('p');
    const pkg = archive({ 'Package.swift': manifest1 });
    const r = await publish(`${base('p')}/${scope}/secret/1.0.0`, [archivePart(pkg)], basic('p', p.token));
    assert.equal(r.status, 201, await r.text());
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    const urls = [
      `${base('p')}/${scope}/secret`,
      `${base('p')}/${scope}/secret/1.0.0`,
      `${base('p')}/${scope}/secret/1.0.0.zip`,
      `${base('p')}/${scope}/secret/1.0.0/Package.swift`,
      `${base('p')}/identifiers?url=x`,
    ];
    for (const auth of [undefined, basic('other', other.token)]) {
      for (const url of urls) {
        const res = await request('GET', url, { auth });
        assert.equal(res.status, 401, `${url} ${auth}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
      const put = await publish(`${base('p')}/${scope}/secret/2.0.0`, [archivePart(pkg)], auth);
      assert.equal(put.status, 401);
    }
    const publicOnly = await s.api<{ sha1: string }>('POST', '/users/p/tokens', {
      basic: ['p', p.password],
      body: { name: 'public-only', scopes: ['public-only', 'read:package'] },
    });
    const denied = await request('GET', urls[0]!, { auth: basic('p', publicOnly.body.sha1) });
    assert.equal(denied.status, 403);
    assert.equal((await request('GET', urls[0]!, { auth: basic('p', p.token) })).status, 200);
    assert.equal((await request('GET', urls[2]!, { auth: basic('p', p.token) })).status, 200);
  });

  it('answers 403 over LIMIT_SIZE_SWIFT (administrators exempt) and 413 over quota', async () => {
    const big = archive({ 'Package.swift': manifest1, 'data.bin': crypto.randomBytes(6000) });
    s.config.packages.limitSizeSwift = 1000;
    try {
      const used = await packagesUsed(s, u.token);
      for (const part of [archivePart(big), { field: 'source-archive', data: big }]) {
        const r = await publish(`${base()}/${scope}/sized/1.0.0`, [part]);
        assert.match(await assertProblem(r, 403, 'over the limit'), /limit/);
      }
      await assertNothingKept(s, [big], u.token, used);
      const asAdmin = await publish(
        `${base()}/${scope}/sized/1.0.0`,
        [archivePart(big)],
        basic('root', s.admin.token),
      );
      assert.equal(asAdmin.status, 201, `administrators are exempt: ${await asAdmin.text()}`);
    } finally {
      s.config.packages.limitSizeSwift = -1;
    }
    const dave = await s.createUser('dave');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'swift-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'swift-tiny', rules: [{ name: 'swift-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/swift-tiny/users/dave', { token: s.admin.token });
    const url = (v: string) => `${base('dave')}/${scope}/q/${v}`;
    const q1 = await publish(url('1.0.0'), [archivePart(first)], basic('dave', dave.token));
    assert.equal(q1.status, 201, 'the upload that crosses the limit goes through, as in Forgejo');
    const q2 = await publish(url('1.0.1'), [archivePart(first)], basic('dave', dave.token));
    assert.match(await assertProblem(q2, 413, 'over quota'), /quota/);
  });

  it("shows the install commands on the version's page", async () => {
    const page = await new WebClient(s.url).get(`/u/-/packages/swift/${id}/1.0.3`);
    assert.equal(page.status, 200);
    assert.match(page.text, /swift package-registry set http:\/\/[^<]*\/api\/packages\/u\/swift/);
    assert.match(
      page.text,
      /\.package\(id: &quot;test-scope\.test_package&quot;, from: &quot;1\.0\.3&quot;\)/,
    );
  });

  it('previews cleanup rules of type swift and deletes a release through the API', async () => {
    const rule = await s.api<{ id: number }>('POST', '/packages/u/-/rules', {
      token: u.token,
      body: { type: 'swift', keep_count: 1 },
    });
    assert.equal(rule.status, 201, rule.text);
    const preview = await s.api<Array<{ name: string; version: string }>>(
      'GET',
      `/packages/u/-/rules/${rule.body.id}/preview`,
      { token: u.token },
    );
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(
      preview.body.map((p) => `${p.name}@${p.version}`),
      [`${id}@1.0.3`],
    );
    const gone = await s.api('DELETE', `/packages/u/swift/${id}/1.0.4`, { token: u.token });
    assert.equal(gone.status, 204, gone.text);
    const r = await request('GET', `${base()}/${scope}/${name}`, { auth: basic('u', u.token) });
    assert.equal(r.headers.get('link'), `<${base()}/${scope}/${name}/1.0.3>; rel="latest-version"`);
    assert.equal((await request('GET', `${base()}/${scope}/${name}/1.0.4.zip`)).status, 404);
  });
});
