// The Helm chart repository, request by request as Forgejo's integration test drives it (there is
// no helm client here): chart uploads by POST to api/charts (the archive as the body, or multipart
// as `helm cm-push` sends it), index.yaml, downloads. Also bad archives and Chart.yaml (400,
// nothing kept), a version uploaded again (replaced, as in Forgejo), credentials and a private
// owner (401 + challenge), LIMIT_SIZE_HELM (403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import YAML from 'yaml';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, tgz } from '../helpers/archives.js';

const CHALLENGE = 'Basic realm="Gitea Package API"';

interface Index {
  apiVersion: string;
  entries: Record<string, Array<Record<string, unknown> & { urls: string[]; digest: string }>>;
  serverInfo: { contextPath: string };
}

describe('Helm chart repository', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };

  const chartYaml = (name: string, version: string, extra = '') =>
    `apiVersion: v2\ndescription: Gitea Test Package\nname: ${name}\ntype: application\nversion: ${version}\n` +
    `maintainers:\n- name: KN4CK3R\ndependencies:\n- name: dep1\n  repository: https://example.com/\n  version: 1.0.0\n${extra}`;
  const chart = (name: string, version: string, extra = '') =>
    tgz({
      [`${name}/Chart.yaml`]: chartYaml(name, version, extra),
      [`${name}/templates/a.yaml`]: 'kind: ConfigMap\n',
    });
  const bearer = (token: string) => `Bearer ${token}`;
  const post = (owner: string, body: Buffer | FormData, auth?: string) =>
    fetch(`${s.url}/api/packages/${owner}/helm/api/charts`, {
      method: 'POST',
      headers: auth ? { authorization: auth } : {},
      body: body instanceof FormData ? body : new Uint8Array(body),
    });
  const get = (p: string, auth?: string) =>
    fetch(`${s.url}/api/packages/${p}`, { headers: auth ? { authorization: auth } : {} });
  const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
  const versions = async (owner: string, token: string) =>
    (
      await s.api<Array<{ name: string; version: string }>>('GET', `/packages/${owner}?type=helm`, { token })
    ).body
      .map((p) => `${p.name}@${p.version}`)
      .sort();

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
  });
  after(() => s.close());

  it('uploads charts (body and cm-push multipart), serves them and lists every version in index.yaml', async () => {
    const first = await chart('test-chart', '1.0.3');
    let r = await post('u', first, bearer(u.token));
    assert.equal(r.status, 201, await r.text());
    // The same version again replaces its chart, as Forgejo does.
    const replaced = await chart('test-chart', '1.0.3', 'appVersion: "2.0"\n');
    r = await post('u', replaced, bearer(u.token));
    assert.equal(r.status, 201, await r.text());
    const form = new FormData();
    const next = await chart('test-chart', '1.1.0');
    form.append('chart', new Blob([new Uint8Array(next)]), 'test-chart-1.1.0.tgz');
    r = await post('u', form, `Basic ${Buffer.from(`u:${u.token}`).toString('base64')}`);
    assert.equal(r.status, 201, await r.text());
    assert.deepEqual(await versions('u', u.token), ['test-chart@1.0.3', 'test-chart@1.1.0']);
    const files = await s.api<Array<{ name: string }>>('GET', '/packages/u/helm/test-chart/1.0.3/files', {
      token: u.token,
    });
    assert.deepEqual(
      files.body.map((f) => f.name),
      ['test-chart-1.0.3.tgz'],
    );

    const dl = await get('u/helm/test-chart-1.0.3.tgz');
    assert.equal(dl.status, 200);
    assert.deepEqual(Buffer.from(await dl.arrayBuffer()), replaced);
    assert.equal((await get('u/helm/test-chart-9.9.9.tgz')).status, 404);

    const res = await get('u/helm/index.yaml');
    assert.equal(res.status, 200);
    const index = YAML.parse(await res.text()) as Index;
    assert.equal(index.apiVersion, 'v1');
    assert.equal(index.serverInfo.contextPath, '/api/packages/u/helm');
    const cvs = index.entries['test-chart'] ?? [];
    assert.equal(cvs.length, 2);
    const cv = cvs.find((c) => c['version'] === '1.0.3')!;
    assert.equal(cv['name'], 'test-chart');
    assert.equal(cv['apiVersion'], 'v2');
    assert.equal(cv['appVersion'], '2.0');
    assert.equal(cv['description'], 'Gitea Test Package');
    assert.deepEqual(cv['maintainers'], [{ name: 'KN4CK3R' }]);
    assert.deepEqual(cv['dependencies'], [
      { name: 'dep1', repository: 'https://example.com/', version: '1.0.0' },
    ]);
    assert.deepEqual(cv.urls, [`${s.url}/api/packages/u/helm/test-chart-1.0.3.tgz`]);
    assert.equal(cv.digest, sha256(replaced));
    // An owner without charts has an empty index.
    const empty = YAML.parse(await (await get('other/helm/index.yaml')).text()) as Index;
    assert.deepEqual(empty.entries, {});
  });

  it('refuses bad archives and Chart.yaml with 400 keeping nothing, strangers with 401', async () => {
    const used = await packagesUsed(s, u.token);
    const good = await chart('bad-case', '1.0.0');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['random bytes', crypto.randomBytes(700), /gzip/],
      ['gzip of no tar', zlib.gzipSync(crypto.randomBytes(700)), /tar/i],
      ['a chart cut short', good.subarray(0, good.length - 20), /gzip|tar|unexpected|end/i],
      ['no Chart.yaml', await tgz({ 'c/values.yaml': 'a: 1\n' }), /Chart\.yaml file is missing/],
      ['Chart.yaml too deep', await tgz({ 'c/sub/Chart.yaml': chartYaml('deep', '1.0.0') }), /missing/],
      ['no apiVersion', await tgz({ 'c/Chart.yaml': 'name: c\nversion: 1.0.0\n' }), /apiVersion/],
      [
        'a bad type',
        await tgz({ 'c/Chart.yaml': chartYaml('c', '1.0.0').replace('application', 'x') }),
        /type/,
      ],
      ['a bad name', await tgz({ 'c/Chart.yaml': chartYaml('../c', '1.0.0') }), /name is invalid/],
      ['a bad version', await tgz({ 'c/Chart.yaml': chartYaml('c', 'one') }), /version is invalid/],
      ['bad YAML', await tgz({ 'c/Chart.yaml': 'a: [\n' }), /YAML/],
    ];
    for (const [what, body, problem] of cases) {
      const res = await post('u', body, bearer(u.token));
      const t = await res.text();
      assert.equal(res.status, 400, `${what}: ${t}`);
      assert.match((JSON.parse(t) as { error: string }).error, problem, what);
    }
    const form = new FormData();
    form.append('prov', new Blob([new Uint8Array(good)]), 'x.prov');
    const noChart = await post('u', form, bearer(u.token));
    assert.equal(noChart.status, 400);
    assert.match(await noChart.text(), /chart/);
    await assertNothingKept(s, [...cases.map((c) => c[1]), good], u.token, used);
    for (const auth of [undefined, 'Bearer nothing', bearer(other.token)]) {
      const res = await post('u', good, auth);
      assert.equal(res.status, 401, auth);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    }
  });

  it("a private owner's repository answers 401 to anyone but its readers", async () => {
    const p = await s.createUser('p');
    assert.equal((await post('p', await chart('secret', '1.0.0'), bearer(p.token))).status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    for (const auth of [undefined, bearer(other.token)]) {
      for (const url of ['p/helm/index.yaml', 'p/helm/secret-1.0.0.tgz']) {
        const res = await get(url, auth);
        assert.equal(res.status, 401, `${url} ${auth}`);
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      }
    }
    assert.match(await (await get('p/helm/index.yaml', bearer(p.token))).text(), /secret-1\.0\.0\.tgz/);
  });

  it('answers 403 over LIMIT_SIZE_HELM (administrators exempt)', async () => {
    const big = await tgz({
      'sized/Chart.yaml': chartYaml('sized', '1.0.0'),
      'sized/files/data': crypto.randomBytes(6000).toString('hex'),
    });
    s.config.packages.limitSizeHelm = 1000;
    try {
      const r = await post('u', big, bearer(u.token));
      assert.equal(r.status, 403);
      assert.match(await r.text(), /limit/);
      assert.equal((await post('u', big, bearer(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeHelm = -1;
    }
  });
});
