// The Conan repository (v1 and v2 protocols), request by request as Forgejo's integration test
// drives it (no conan client can be installed here: PyPI is unreachable): ping, authenticate
// (Basic and token scopes), check_credentials, v1 upload_urls / PUT / snapshot / digest /
// download_urls / downloads, recipe and package search, v1 deletions; v2 files per revision,
// latest, revisions, search, deletion of package revisions and of a recipe revision (its packages
// go with it). Also bad references (400), a private owner (401 + challenge), LIMIT_SIZE_CONAN
// (403), quota (413), the package webhook, the REST API, a cleanup rule's preview and the web
// page's install command.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

const conanfileName = 'conanfile.py';
const conaninfoName = 'conaninfo.txt';
const pkgRef = 'dummyreference';
const contentConaninfo = `[settings]
    arch=x84_64

[requires]
    fmt/7.1.3

[options]
    shared=False

[full_settings]
    arch=x84_64

[full_requires]
    fmt/7.1.3

[full_options]
    shared=False

[recipe_hash]
    74714915a51073acb548ca1ce29afbac

[env]
CC=gcc-10`;

const conanfile = (name: string, version: string) => `from conans import ConanFile, CMake, tools

class ConanPackageConan(ConanFile):
\tname = "${name}"
\tversion = "${version}"
\tlicense = "MIT"
\tauthor = "Gitea <info@gitea.io>"
\thomepage = "https://gitea.io/"
\turl = "https://gitea.com/"
\tdescription = "Description of ConanPackage"
\ttopics = ("gitea")
\tsettings = "os", "compiler", "build_type", "arch"
\toptions = {"shared": [True, False], "fPIC": [True, False]}
\tdefault_options = {"shared": False, "fPIC": True}
\tgenerators = "cmake"`;

interface Res {
  status: number;
  text: string;
  headers: Headers;
  json<T>(): T;
}

describe('Conan repository', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string; id: number };
  let url: string;

  async function req(
    method: string,
    path: string,
    auth?: string,
    body?: string | Buffer | object,
  ): Promise<Res> {
    const headers: Record<string, string> = auth ? { authorization: auth } : {};
    let payload: string | Uint8Array<ArrayBuffer> | undefined;
    if (typeof body === 'string') payload = body;
    else if (Buffer.isBuffer(body)) payload = new Uint8Array(body);
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const r = await fetch(path.startsWith('http') ? path : `${url}${path}`, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await r.text();
    return { status: r.status, text, headers: r.headers, json: <T>() => JSON.parse(text) as T };
  }
  const basic = (name: string, secret: string) =>
    `Basic ${Buffer.from(`${name}:${secret}`).toString('base64')}`;
  const bearer = (t: string) => `Bearer ${t}`;
  async function scopedToken(scopes: string[]): Promise<string> {
    const t = await s.api<{ sha1: string }>('POST', `/users/${u.name}/tokens`, {
      basic: [u.name, u.password],
      body: { name: `t-${scopes.join('-')}-${Math.random()}`, scopes },
    });
    assert.equal(t.status, 201, t.text);
    return t.body.sha1;
  }
  const expect = async (p: Promise<Res>, status: number, what = '') => {
    const r = await p;
    assert.equal(r.status, status, `${what} ${r.text}`);
    return r;
  };

  async function uploadV1(auth: string, name: string, version: string, user: string, channel: string) {
    const recipeURL = `/v1/conans/${name}/${version}/${user}/${channel}`;
    const content = conanfile(name, version);
    await expect(req('GET', recipeURL, auth), 404, 'snapshot before');
    await expect(req('GET', `${recipeURL}/digest`, auth), 404);
    await expect(req('GET', `${recipeURL}/download_urls`, auth), 404);
    await expect(req('POST', `${recipeURL}/upload_urls`), 401);
    let r = await expect(
      req('POST', `${recipeURL}/upload_urls`, auth, { [conanfileName]: content.length, 'removed.txt': 0 }),
      200,
    );
    let urls = r.json<Record<string, string>>();
    assert.deepEqual(Object.keys(urls), [conanfileName]);
    await expect(req('PUT', urls[conanfileName]!, auth, content), 201, 'PUT conanfile');

    const packageURL = `${recipeURL}/packages/${pkgRef}`;
    await expect(req('GET', packageURL, auth), 404);
    await expect(req('GET', `${packageURL}/digest`, auth), 404);
    await expect(req('GET', `${packageURL}/download_urls`, auth), 404);
    await expect(req('POST', `${packageURL}/upload_urls`), 401);
    r = await expect(
      req('POST', `${packageURL}/upload_urls`, auth, {
        [conaninfoName]: contentConaninfo.length,
        'removed.txt': 0,
      }),
      200,
    );
    urls = r.json<Record<string, string>>();
    assert.deepEqual(Object.keys(urls), [conaninfoName]);
    await expect(req('PUT', urls[conaninfoName]!, auth, contentConaninfo), 201, 'PUT conaninfo');
  }

  async function uploadV2(
    auth: string,
    name: string,
    version: string,
    user: string,
    channel: string,
    rrev: string,
    prev: string,
  ) {
    const recipeURL = `/v2/conans/${name}/${version}/${user}/${channel}/revisions/${rrev}`;
    await expect(req('PUT', `${recipeURL}/files/${conanfileName}`, auth, conanfile(name, version)), 201);
    let r = await expect(req('GET', `${recipeURL}/files`, auth), 200);
    assert.deepEqual(r.json(), { files: { [conanfileName]: null } });
    const packageURL = `${recipeURL}/packages/${pkgRef}/revisions/${prev}`;
    await expect(req('GET', `${packageURL}/files`, auth), 404);
    await expect(req('PUT', `${packageURL}/files/${conaninfoName}`, auth, contentConaninfo), 201);
    r = await expect(req('GET', `${packageURL}/files`, auth), 200);
    assert.deepEqual(r.json(), { files: { [conaninfoName]: null } });
  }

  const versions = async () =>
    (
      await s.api<Array<{ name: string; version: string }>>('GET', `/packages/${u.name}?type=conan`, {
        token: u.token,
      })
    ).body
      .map((p) => `${p.name}@${p.version}`)
      .sort();

  async function search(v: string, q: string): Promise<string[]> {
    const r = await expect(req('GET', `/${v}/conans/search?q=${encodeURIComponent(q)}`), 200);
    return r.json<{ results: string[] }>().results.sort();
  }

  async function hookEvents(id: number): Promise<string[]> {
    const tasks = await s.ctx.db
      .selectFrom('hook_task')
      .select('payload')
      .where('hook_id', '=', id)
      .execute();
    return tasks
      .map((t) => {
        const p = JSON.parse(t.payload) as {
          action: string;
          package: { type: string; name: string; version: string };
        };
        return `${p.action} ${p.package.type} ${p.package.name} ${p.package.version}`;
      })
      .sort();
  }
  const addHook = async () => {
    const hook = await s.api<{ id: number }>('POST', '/user/hooks', {
      token: u.token,
      body: {
        type: 'gitea',
        events: ['package'],
        active: true,
        config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
      },
    });
    assert.equal(hook.status, 201, hook.text);
    return hook.body.id;
  };

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    url = `${s.url}/api/packages/u/conan`;
  });
  after(() => s.close());

  const name = 'ConanPackage';

  it('v1: ping, authenticate, upload, download, search and delete as Forgejo', async () => {
    const hook = await addHook();

    const ping = await expect(req('GET', '/v1/ping'), 200);
    assert.equal(ping.headers.get('x-conan-server-capabilities'), 'revisions');

    // Basic credentials exchanged for a token.
    let r = await expect(req('GET', '/v1/users/authenticate', basic(u.name, u.password)), 200);
    const token = bearer(r.text);
    // A day, as Forgejo's package tokens.
    const claims = JSON.parse(Buffer.from(r.text.split('.')[0]!, 'base64url').toString()) as { e: number };
    assert.ok(claims.e - Date.now() / 1000 > 23 * 3600);
    await expect(req('GET', '/v1/users/authenticate'), 400, 'anonymous authenticate');
    await expect(req('GET', '/v1/users/check_credentials', token), 200);
    await expect(req('GET', '/v1/users/check_credentials'), 401);
    await expect(
      req('GET', '/v1/users/check_credentials', bearer('a.bcdefghijklmnopqrstuvwxyzabcdefghijklmnopq')),
      401,
    );

    // Token scopes: what authenticate and an upload answer.
    const cases: Array<[string[], number, number]> = [
      [['read:notification'], 401, 0],
      [['read:package'], 200, 401],
      [['write:package'], 200, 200],
      [['all'], 200, 200],
    ];
    for (const [scopes, authStatus, uploadStatus] of cases) {
      const pat = await scopedToken(scopes);
      const a = await expect(req('GET', '/v1/users/authenticate', bearer(pat)), authStatus, scopes.join());
      if (authStatus !== 200) {
        assert.equal(a.headers.get('www-authenticate'), CHALLENGE);
        continue;
      }
      // The exchanged token carries the scopes of the credential it was issued for.
      for (const t of [pat, a.text]) {
        await expect(
          req('POST', '/v1/conans/TestScope/1.2/testing/test/upload_urls', bearer(t), {
            [conanfileName]: 64,
          }),
          uploadStatus,
          scopes.join(),
        );
      }
    }
    const badToken = bearer(await scopedToken(['read:notification']));

    await uploadV1(token, name, '1.2', 'dummy', 'test');
    assert.deepEqual(await versions(), ['ConanPackage@1.2']);
    const meta = await s.ctx.db
      .selectFrom('package_version')
      .innerJoin('package', 'package.id', 'package_version.package_id')
      .select(['package_version.id', 'package_version.metadata_json', 'package.name'])
      .where('package.type', '=', 'conan')
      .executeTakeFirstOrThrow();
    assert.equal(meta.name, name);
    assert.deepEqual(JSON.parse(meta.metadata_json), {
      author: 'Gitea <info@gitea.io>',
      license: 'MIT',
      project_url: 'https://gitea.io/',
      repository_url: 'https://gitea.com/',
      description: 'Description of ConanPackage',
      keywords: ['gitea'],
    });
    const files = await s.api<Array<{ name: string; Size: number }>>(
      'GET',
      `/packages/u/conan/${name}/1.2/files`,
      {
        token: u.token,
      },
    );
    assert.deepEqual(files.body.map((f) => [f.name, f.Size]).sort(), [
      [conanfileName, conanfile(name, '1.2').length],
      [conaninfoName, contentConaninfo.length],
    ]);
    const lead = await s.ctx.db
      .selectFrom('package_file')
      .select(['name', 'is_lead', 'composite_key'])
      .where('version_id', '=', meta.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      lead.map((f) => [f.name, Number(f.is_lead), f.composite_key]),
      [
        [conanfileName, 1, 'dummy|test|0'],
        [conaninfoName, 0, `dummy|test|0|${pkgRef}|0`],
      ],
    );

    // Download, anonymously (a public owner).
    const recipeURL = `/v1/conans/${name}/1.2/dummy/test`;
    r = await expect(req('GET', recipeURL), 200);
    assert.deepEqual(r.json(), { [conanfileName]: '7abc52241c22090782c54731371847a8' });
    r = await expect(req('GET', `${recipeURL}/digest`), 200);
    assert.ok(conanfileName in r.json<object>());
    r = await expect(req('GET', `${recipeURL}/download_urls`), 200);
    const dl = r.json<Record<string, string>>();
    assert.equal(dl[conanfileName], `${url}/v1/files/${name}/1.2/dummy/test/0/recipe/${conanfileName}`);
    r = await expect(req('GET', dl[conanfileName]!), 200);
    assert.equal(r.text, conanfile(name, '1.2'));
    const packageURL = `${recipeURL}/packages/${pkgRef}`;
    r = await expect(req('GET', packageURL), 200);
    assert.deepEqual(r.json(), { [conaninfoName]: '7628bfcc5b17f1470c468621a78df394' });
    r = await expect(req('GET', `${packageURL}/download_urls`), 200);
    const pdl = r.json<Record<string, string>>();
    assert.equal(
      pdl[conaninfoName],
      `${url}/v1/files/${name}/1.2/dummy/test/0/package/${pkgRef}/0/${conaninfoName}`,
    );
    r = await expect(req('GET', pdl[conaninfoName]!), 200);
    assert.equal(r.text, contentConaninfo);
    await expect(req('GET', `/v1/files/${name}/1.2/dummy/test/0/recipe/conan_sources.tgz`), 404);
    await expect(req('GET', `/v1/files/${name}/1.2/dummy/test/0/recipe/other.txt`), 400);
    await expect(req('GET', `/v1/files/${name}/9.9/dummy/test/0/recipe/${conanfileName}`), 404);
    // Only the recipe's conanfile.py counts as a download (as in Forgejo).
    const count = await s.ctx.db
      .selectFrom('package_version')
      .select('download_count')
      .where('id', '=', meta.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.download_count), 1);

    // Search.
    await uploadV1(token, name, '1.3', 'dummy', 'test');
    await uploadV1(token, name, '1.2', 'dummy', 'final');
    await uploadV1(token, name, '1.2', 'gitea', 'test');
    await uploadV1(token, name, '1.2', 'gitea', 'final');
    const all = ['1.2@dummy/test', '1.3@dummy/test', '1.2@dummy/final', '1.2@gitea/test', '1.2@gitea/final'];
    const searches: Array<[string, string[]]> = [
      ['ConanPackage', all],
      ['ConanPackage/1.2', ['1.2@dummy/test', '1.2@dummy/final', '1.2@gitea/test', '1.2@gitea/final']],
      ['ConanPackage/1.1', []],
      ['Conan*', all],
      ['ConanPackage/', all],
      ['ConanPackage/*', all],
      ['ConanPackage/1*', all],
      ['ConanPackage/*2', ['1.2@dummy/test', '1.2@dummy/final', '1.2@gitea/test', '1.2@gitea/final']],
      ['ConanPackage/1*2', ['1.2@dummy/test', '1.2@dummy/final', '1.2@gitea/test', '1.2@gitea/final']],
      ['ConanPackage/1.2@', ['1.2@dummy/test', '1.2@dummy/final', '1.2@gitea/test', '1.2@gitea/final']],
      ['ConanPackage/1.2@du*', ['1.2@dummy/test', '1.2@dummy/final']],
      ['ConanPackage/1.2@du*/', ['1.2@dummy/test', '1.2@dummy/final']],
      ['ConanPackage/1.2@du*/*test', ['1.2@dummy/test']],
      ['ConanPackage/1.2@du*/*st', ['1.2@dummy/test']],
      ['ConanPackage/1.2@gitea/*', ['1.2@gitea/test', '1.2@gitea/final']],
      ['*/*@dummy', ['1.2@dummy/test', '1.3@dummy/test', '1.2@dummy/final']],
      ['*/*@*/final', ['1.2@dummy/final', '1.2@gitea/final']],
    ];
    for (const [q, expected] of searches) {
      assert.deepEqual(await search('v1', q), expected.map((e) => `ConanPackage/${e}`).sort(), q);
    }
    r = await expect(req('GET', `/v1/conans/${name}/1.2/dummy/final/search`), 200);
    const infos =
      r.json<Record<string, { settings: Record<string, string>; environment: Record<string, string[]> }>>();
    assert.deepEqual(Object.keys(infos), [pkgRef]);
    assert.deepEqual(infos[pkgRef]!.settings, { arch: 'x84_64' });
    assert.deepEqual(infos[pkgRef]!.environment, { CC: ['gcc-10'] });
    await expect(req('GET', `/v1/conans/${name}/1.2/nobody/final/search`), 404);

    // Delete packages, then recipes.
    for (const [channel, refs] of [
      ['test', [pkgRef]],
      ['final', []],
    ] as const) {
      const del = `/v1/conans/${name}/1.2/dummy/${channel}/packages/delete`;
      await expect(req('POST', del, badToken, { package_ids: refs }), 401);
      await expect(req('POST', del, token, { package_ids: refs }), 200);
      await expect(req('GET', `/v1/conans/${name}/1.2/dummy/${channel}/packages/${pkgRef}`), 404);
      await expect(req('GET', `/v1/conans/${name}/1.2/dummy/${channel}`), 200);
    }
    await expect(
      req('POST', `/v1/conans/${name}/1.2/dummy/test/packages/delete`, token, { package_ids: ['bad-ref'] }),
      400,
    );
    await expect(req('POST', `/v1/conans/${name}/1.2/dummy/test/packages/delete`, token, 'nope'), 400);
    for (const channel of ['test', 'final']) {
      const del = `/v1/conans/${name}/1.2/dummy/${channel}`;
      await expect(req('DELETE', del, badToken), 401);
      await expect(req('DELETE', del, token), 200);
      await expect(req('GET', del), 404);
      await expect(req('DELETE', del, token), 404);
    }
    assert.deepEqual(await versions(), ['ConanPackage@1.2', 'ConanPackage@1.3']);
    // The package webhook: one delivery per version created.
    assert.deepEqual(await hookEvents(hook), [
      'created conan ConanPackage 1.2',
      'created conan ConanPackage 1.3',
    ]);
    await s.api('DELETE', `/user/hooks/${hook}`, { token: u.token });
  });

  it('v2: revisions, latest, files, search and deletions as Forgejo', async () => {
    const ping = await expect(req('GET', '/v2/ping'), 200);
    assert.equal(ping.headers.get('x-conan-server-capabilities'), 'revisions');
    const r0 = await expect(req('GET', '/v2/users/authenticate', basic(u.name, u.token)), 200);
    const token = bearer(r0.text);
    await expect(req('GET', '/v2/users/check_credentials', token), 200);
    const badToken = bearer(await scopedToken(['read:notification']));
    await expect(
      req(
        'PUT',
        `/v2/conans/TestScope/1.2/testing/test/revisions/rev1/files/${conanfileName}`,
        badToken,
        'Demo',
      ),
      401,
    );
    await expect(
      req(
        'PUT',
        `/v2/conans/TestScope/1.2/testing/test/revisions/rev1/files/${conanfileName}`,
        bearer(await scopedToken(['read:package'])),
        'Demo',
      ),
      401,
    );

    await uploadV2(token, name, '1.2', 'dummy', 'test', 'rev1', 'rev1');
    const recipeURL = `/v2/conans/${name}/1.2/dummy/test`;
    let r = await expect(req('GET', `${recipeURL}/latest`), 200);
    assert.equal(r.json<{ revision: string }>().revision, 'rev1');
    assert.match(r.json<{ time: string }>().time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    r = await expect(req('GET', `${recipeURL}/revisions/rev1/packages/${pkgRef}/latest`), 200);
    assert.equal(r.json<{ revision: string }>().revision, 'rev1');
    await expect(req('GET', `/v2/conans/${name}/1.2/nobody/test/latest`), 404);
    await expect(req('GET', `${recipeURL}/revisions/rev9/packages/${pkgRef}/latest`), 404);
    r = await expect(req('GET', `${recipeURL}/revisions/rev1/files/${conanfileName}`), 200);
    assert.equal(r.text, conanfile(name, '1.2'));
    r = await expect(
      req('GET', `${recipeURL}/revisions/rev1/packages/${pkgRef}/revisions/rev1/files/${conaninfoName}`),
      200,
    );
    assert.equal(r.text, contentConaninfo);

    await uploadV2(token, name, '1.2', 'dummy', 'test', 'rev1', 'rev2');
    await uploadV2(token, name, '1.2', 'dummy', 'test', 'rev2', 'rev1');
    await uploadV2(token, name, '1.2', 'dummy', 'test', 'rev2', 'rev2');
    r = await expect(req('GET', `${recipeURL}/revisions`), 200);
    let list = r.json<{ revisions: Array<{ revision: string }> }>().revisions.map((x) => x.revision);
    assert.deepEqual(list, ['rev2', 'rev1']);
    r = await expect(req('GET', `${recipeURL}/revisions/rev1/packages/${pkgRef}/revisions`), 200);
    list = r.json<{ revisions: Array<{ revision: string }> }>().revisions.map((x) => x.revision);
    assert.deepEqual(list, ['rev2', 'rev1']);
    r = await expect(req('GET', `${recipeURL}/latest`), 200);
    assert.equal(r.json<{ revision: string }>().revision, 'rev2');

    const v2all = ['1.2@dummy/test', '1.3@dummy/test', '1.2@gitea/test', '1.2@gitea/final'];
    assert.deepEqual(await search('v2', 'ConanPackage'), v2all.map((e) => `ConanPackage/${e}`).sort());
    assert.deepEqual(await search('v2', '*/*@*/final'), ['ConanPackage/1.2@gitea/final']);
    for (const p of [`${recipeURL}/search`, `${recipeURL}/revisions/rev1/search`]) {
      r = await expect(req('GET', p), 200);
      const infos = r.json<Record<string, { settings: Record<string, string> }>>();
      assert.deepEqual(Object.keys(infos), [pkgRef], p);
      assert.deepEqual(infos[pkgRef]!.settings, { arch: 'x84_64' });
    }

    // Package revisions, then all packages of a recipe revision.
    const pkgRevisions = async (rrev: string) => {
      const x = await req('GET', `${recipeURL}/revisions/${rrev}/packages/${pkgRef}/revisions`);
      return x.status === 404
        ? []
        : x.json<{ revisions: Array<{ revision: string }> }>().revisions.map((y) => y.revision);
    };
    assert.deepEqual(await pkgRevisions('rev1'), ['rev2', 'rev1']);
    let del = `${recipeURL}/revisions/rev1/packages/${pkgRef}/revisions/rev1`;
    await expect(req('DELETE', del, badToken), 401);
    await expect(req('DELETE', del, token), 200);
    assert.deepEqual(await pkgRevisions('rev1'), ['rev2']);
    del = `${recipeURL}/revisions/rev1/packages/${pkgRef}`;
    await expect(req('DELETE', del, badToken), 401);
    await expect(req('DELETE', del, token), 200);
    assert.deepEqual(await pkgRevisions('rev1'), []);
    await expect(req('DELETE', del, token), 404);
    assert.deepEqual(await pkgRevisions('rev2'), ['rev2', 'rev1']);
    del = `${recipeURL}/revisions/rev2/packages`;
    await expect(req('DELETE', del, badToken), 401);
    await expect(req('DELETE', del, token), 200);
    assert.deepEqual(await pkgRevisions('rev2'), []);
    await expect(req('DELETE', del, token), 404);

    // A recipe revision's deletion takes its packages along; then the whole recipe.
    await uploadV2(token, name, '1.2', 'dummy', 'test', 'rev3', 'rev1');
    const recipeRevisions = async () => {
      const x = await req('GET', `${recipeURL}/revisions`);
      return x.status === 404
        ? []
        : x.json<{ revisions: Array<{ revision: string }> }>().revisions.map((y) => y.revision);
    };
    assert.deepEqual(await recipeRevisions(), ['rev3', 'rev2', 'rev1']);
    await expect(req('DELETE', `${recipeURL}/revisions/rev3`, badToken), 401);
    await expect(req('DELETE', `${recipeURL}/revisions/rev3`, token), 200);
    assert.deepEqual(await recipeRevisions(), ['rev2', 'rev1']);
    await expect(req('GET', `${recipeURL}/revisions/rev3/packages/${pkgRef}/revisions/rev1/files`), 404);
    const keys = await s.ctx.db
      .selectFrom('package_file')
      .select('composite_key')
      .where('composite_key', 'like', '%rev3%')
      .execute();
    assert.deepEqual(keys, []);
    await expect(req('DELETE', recipeURL, badToken), 401);
    await expect(req('DELETE', recipeURL, token), 200);
    assert.deepEqual(await recipeRevisions(), []);
    await expect(req('GET', `${recipeURL}/latest`), 404);
  });

  it('refuses bad references and file names with 400', async () => {
    const auth = bearer(u.token);
    for (const p of [
      '/v1/conans/a/1.0/_/_',
      '/v1/conans/name/1.0/user/_',
      '/v1/conans/name/1.0/_/channel',
      '/v1/conans/-name/1.0/_/_',
      '/v1/conans/name/1.0/us%7Cer/chan',
      '/v1/conans/name/1.0/_/_/packages/bad-ref',
      '/v2/conans/name/1.0/_/_/revisions/bad-rev/files',
      '/v2/conans/name/1.0/_/_/revisions/rev/packages/ref/revisions/bad|rev/files',
    ]) {
      const r = await expect(req('GET', p, auth), 400, p);
      assert.match(r.json<{ message: string }>().message, /reference/);
    }
    await expect(req('PUT', '/v2/conans/name/1.0/_/_/revisions/rev/files/evil.sh', auth, 'x'), 400);
    await expect(
      req(
        'PUT',
        `/v2/conans/name/1.0/_/_/revisions/rev/packages/ref/revisions/r/files/${conanfileName}`,
        auth,
        'x',
      ),
      400,
    );
    await expect(req('POST', '/v1/conans/name/1.0/_/_/upload_urls', auth, '[1'), 400);
    await expect(
      req(
        'PUT',
        `/v2/conans/name/1.0/_/_/revisions/rev/packages/ref/revisions/r/files/${conaninfoName}`,
        auth,
        'junk\n[settings]\n',
      ),
      400,
    );
    const long = 'a'.repeat(51);
    await expect(
      req(
        'PUT',
        `/v2/conans/name/1.0/${long}/${long}/revisions/${long}/packages/${long}/revisions/${long}/files/${conaninfoName}`,
        auth,
        contentConaninfo,
      ),
      400,
      'too long a key',
    );
    // A recipe without user and channel; its version's creation and deletion reach webhooks.
    const hook = await addHook();
    await expect(
      req(
        'PUT',
        `/v2/conans/plain/1.0/_/_/revisions/r1/files/${conanfileName}`,
        auth,
        conanfile('plain', '1.0'),
      ),
      201,
    );
    assert.deepEqual(await search('v2', 'plain'), ['plain/1.0']);
    const r = await expect(req('GET', '/v1/conans/plain/1.0/_/_/download_urls'), 404);
    assert.ok(r.text);
    await expect(req('DELETE', '/v2/conans/plain/1.0/_/_', auth), 200);
    assert.deepEqual(await hookEvents(hook), ['created conan plain 1.0', 'deleted conan plain 1.0']);
    await s.api('DELETE', `/user/hooks/${hook}`, { token: u.token });
  });

  it("a private owner's recipes answer 401 to anyone but its readers", async () => {
    const p = await s.createUser('p');
    const other = await s.createUser('other');
    const put = `${s.url}/api/packages/p/conan/v2/conans/secret/1.0/_/_/revisions/r1/files/${conanfileName}`;
    await expect(req('PUT', put, bearer(p.token), conanfile('secret', '1.0')), 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const auth of [undefined, bearer(other.token)]) {
      for (const path of [
        'v2/ping',
        'v2/conans/search?q=secret',
        'v2/conans/secret/1.0/_/_/latest',
        `v2/conans/secret/1.0/_/_/revisions/r1/files/${conanfileName}`,
        `v1/conans/secret/1.0/_/_`,
      ]) {
        const r = await req('GET', `${s.url}/api/packages/p/conan/${path}`, auth);
        assert.equal(r.status, 401, `${path} ${auth}`);
        assert.equal(r.headers.get('www-authenticate'), CHALLENGE);
      }
      await expect(req('PUT', put, auth, 'x'), 401);
      await expect(req('DELETE', `${s.url}/api/packages/p/conan/v2/conans/secret/1.0/_/_`, auth), 401);
    }
    const r = await expect(
      req('GET', `${s.url}/api/packages/p/conan/v2/conans/search?q=secret`, bearer(p.token)),
      200,
    );
    assert.deepEqual(r.json(), { results: ['secret/1.0'] });
    // A token limited to public resources: 403.
    const pub = await s.api<{ sha1: string }>('POST', '/users/p/tokens', {
      basic: ['p', 'p-password-1'],
      body: { name: 'public', scopes: ['read:package', 'public-only'] },
    });
    assert.equal(pub.status, 201, pub.text);
    await expect(
      req('GET', `${s.url}/api/packages/p/conan/v2/conans/search?q=secret`, bearer(pub.body.sha1)),
      403,
    );
  });

  it('answers 403 over LIMIT_SIZE_CONAN (administrators exempt) and 413 over quota', async () => {
    const big = Buffer.alloc(5000, 1);
    const file = (o: string, rev: string) =>
      `${s.url}/api/packages/${o}/conan/v2/conans/sized/1.0/_/_/revisions/${rev}/files/conan_sources.tgz`;
    s.config.packages.limitSizeConan = 1000;
    try {
      const r = await expect(req('PUT', file('u', 'r1'), bearer(u.token), big), 403);
      assert.match(r.json<{ message: string }>().message, /limit/);
      await expect(req('PUT', file('u', 'r1'), bearer(s.admin.token), big), 201);
    } finally {
      s.config.packages.limitSizeConan = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'conan-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'conan-tiny', rules: [{ name: 'conan-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/conan-tiny/users/q', { token: s.admin.token });
    await expect(req('PUT', file('q', 'r1'), bearer(q.token), big), 201);
    await expect(req('PUT', file('q', 'r2'), bearer(q.token), big), 413);
    // The same content in another revision is stored once.
    const blobs = await s.ctx.db.selectFrom('package_blob').select('id').where('size', '=', 5000).execute();
    assert.equal(blobs.length, 1);
  });

  it('shows the install command, and cleanup rules take conan versions', async () => {
    const auth = bearer(u.token);
    for (const v of ['1.0', '2.0']) {
      await expect(
        req(
          'PUT',
          `/v2/conans/tool/${v}/_/_/revisions/r1/files/${conanfileName}`,
          auth,
          conanfile('tool', v),
        ),
        201,
      );
    }
    const page = await fetch(`${s.url}/u/-/packages/conan/tool/2.0`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /conan remote add anvil http:\/\/[^ ]+\/api\/packages\/u\/conan/);
    assert.match(html, /conan install --remote anvil --requires tool\/2\.0/);
    const rule = await s.api<{ id: number }>('POST', '/packages/u/-/rules', {
      token: u.token,
      body: { type: 'conan', enabled: true, keep_count: 1, remove_pattern: '' },
    });
    assert.equal(rule.status, 201, rule.text);
    const preview = await s.api<Array<{ name: string; version: string }>>(
      'GET',
      `/packages/u/-/rules/${rule.body.id}/preview`,
      {
        token: u.token,
      },
    );
    assert.equal(preview.status, 200, preview.text);
    assert.ok(preview.body.some((p) => p.name === 'tool' && p.version === '1.0'));
    assert.ok(!preview.body.some((p) => p.name === 'tool' && p.version === '2.0'));
  });
});
