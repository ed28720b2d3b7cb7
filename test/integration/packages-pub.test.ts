// The Pub repository (Dart, hosted repository spec v2), request by request as Forgejo's test
// drives it (no dart client here): the three-step publish (versions/new, upload, finalize),
// version listings and metadata, archive downloads. Also bad archives and pubspecs (400, nothing
// kept), a version published again (409), credentials and a private owner (401 + challenge),
// LIMIT_SIZE_PUB (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz } from '../helpers/archives.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

describe('Pub repository', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };

  const pubspec = (name: string, version: string) =>
    `name: ${name}\nversion: ${version}\ndescription: Gitea Test Package\nhomepage: https://gitea.io/\n` +
    `environment:\n  sdk: '>=2.12.0 <3.0.0'\n`;
  const archive = (name: string, version: string) =>
    tgz({ 'pubspec.yaml': pubspec(name, version), 'lib/a.dart': 'void main() {}\n' });
  const bearer = (token: string) => `Bearer ${token}`;
  const api = (owner: string) => `${s.url}/api/packages/${owner}/pub/api/packages`;
  const upload = (owner: string, body: Buffer, auth?: string, field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([new Uint8Array(body)]), 'package.tar.gz');
    return fetch(`${api(owner)}/versions/new/upload`, {
      method: 'POST',
      headers: auth ? { authorization: auth } : {},
      body: form,
    });
  };
  const get = (url: string, auth?: string) => fetch(url, { headers: auth ? { authorization: auth } : {} });

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
  });
  after(() => s.close());

  it('publishes in three steps and lists versions with their pubspecs', async () => {
    const step = await get(`${api('u')}/versions/new`, bearer(u.token));
    assert.equal(step.status, 200);
    assert.match(step.headers.get('content-type') ?? '', /^application\/vnd\.pub\.v2\+json/);
    const target = (await step.json()) as { url: string; fields: Record<string, string> };
    assert.deepEqual(target, { url: `${api('u')}/versions/new/upload`, fields: {} });

    const v1 = await archive('test_package', '1.0.1');
    let r = await upload('u', v1, bearer(u.token));
    assert.equal(r.status, 204, await r.text());
    const finalize = r.headers.get('location') ?? '';
    assert.equal(finalize, `${api('u')}/versions/new/finalize/test_package/1.0.1`);
    r = await get(finalize, bearer(u.token));
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { success: { message: '' } });
    assert.equal(
      (await get(`${api('u')}/versions/new/finalize/test_package/9.9.9`, bearer(u.token))).status,
      404,
    );
    assert.equal((await upload('u', await archive('test_package', '1.10.0'), bearer(u.token))).status, 204);

    const meta = await get(`${api('u')}/test_package/1.0.1`);
    assert.equal(meta.status, 200);
    const one = (await meta.json()) as Record<string, unknown>;
    assert.equal(one['version'], '1.0.1');
    assert.equal(one['archive_url'], `${api('u')}/test_package/files/1.0.1.tar.gz`);
    assert.equal((one['pubspec'] as Record<string, unknown>)['description'], 'Gitea Test Package');

    const all = (await (await get(`${api('u')}/test_package`)).json()) as {
      name: string;
      latest: { version: string };
      versions: Array<{ version: string }>;
    };
    assert.equal(all.name, 'test_package');
    assert.equal(all.latest.version, '1.10.0');
    assert.deepEqual(
      all.versions.map((v) => v.version),
      ['1.0.1', '1.10.0'],
    );
    const dl = await get(`${api('u')}/test_package/files/1.0.1.tar.gz`);
    assert.deepEqual(Buffer.from(await dl.arrayBuffer()), v1);
    for (const url of [
      `${api('u')}/nothing`,
      `${api('u')}/test_package/2.0.0`,
      `${api('u')}/test_package/files/2.0.0.tar.gz`,
    ]) {
      const res = await get(url);
      assert.equal(res.status, 404, url);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'Not Found');
    }
  });

  it('refuses bad archives and pubspecs with 400 keeping nothing, a version again with 409, strangers with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await archive('bad_case', '1.0.0');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(700), /gzip/],
      ['an archive cut short', good.subarray(0, good.length - 20), /gzip|tar|end/i],
      ['no pubspec.yaml', await tgz({ 'lib/a.dart': '' }), /pubspec\.yaml file is missing/],
      ['a bad name', await tgz({ 'pubspec.yaml': pubspec('bad-name', '1.0.0') }), /name is invalid/],
      ['a bad version', await tgz({ 'pubspec.yaml': pubspec('okname', '1.0') }), /version is invalid/],
      ['bad YAML', await tgz({ 'pubspec.yaml': 'a: [\n' }), /YAML/],
    ];
    for (const [what, body, problem] of cases) {
      const res = await upload('u', body, bearer(u.token));
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match((JSON.parse(t) as { error: { message: string } }).error.message, problem, what);
    }
    const wrongField = await upload('u', good, bearer(u.token), 'other');
    assert.equal(wrongField.status, 400);
    await assertNothingKept(s, [...cases.map((c) => c[1]), good], u.token, used);
    const dup = await upload('u', await archive('test_package', '1.0.1'), bearer(u.token));
    assert.equal(dup.status, 409, await dup.text());
    for (const auth of [undefined, 'Bearer nothing', bearer(other.token)]) {
      for (const res of [await upload('u', good, auth), await get(`${api('u')}/versions/new`, auth)]) {
        assert.equal(res.status, 401, auth);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
  });

  it("a private owner's packages answer 401 to anyone but their readers", async () => {
    const p = await s.createUser('p');
    assert.equal((await upload('p', await archive('secret', '1.0.0'), bearer(p.token))).status, 204);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const auth of [undefined, bearer(other.token)]) {
      for (const url of [`${api('p')}/secret`, `${api('p')}/secret/files/1.0.0.tar.gz`]) {
        const res = await get(url, auth);
        assert.equal(res.status, 401, `${url} ${auth}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
    assert.equal((await get(`${api('p')}/secret`, bearer(p.token))).status, 200);
  });

  it('answers 403 over LIMIT_SIZE_PUB (administrators exempt)', async () => {
    const big = await tgz({
      'pubspec.yaml': pubspec('sized', '1.0.0'),
      'lib/data.dart': crypto.randomBytes(6000).toString('hex'),
    });
    s.config.packages.limitSizePub = 1000;
    try {
      const r = await upload('u', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await upload('u', big, bearer(s.admin.token))).status, 204);
    } finally {
      s.config.packages.limitSizePub = -1;
    }
  });
});
