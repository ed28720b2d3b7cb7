// Generated over the route table: every registered route gets integers beyond int64 and NUL bytes
// in each path parameter, each declared query field and each body field (and one level below),
// as an admin with an all-scope token, against real resources, and must answer 4xx, never 5xx.
// Also the error shapes and edge statuses: 404 with `errors`, 405 with Allow, 414 and bad URLs,
// empty query values, and the OpenAPI document's error responses and parameter names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startServer, type TestServer } from '../helpers/server.js';
import { routeTable, type RouteEntry } from '../../src/http/errors.js';

const BIG = '99999999999999999999';
const BIG_NUMBER = 1e300;
const NUL_PATH = 'a%00b';
const NUL_TEXT = 'x\u0000y';

type Json = Record<string, unknown>;

interface Probe {
  method: string;
  url: string;
  body?: unknown;
  what: string;
}

/** The JSON-schema properties of an object schema (or the first object of a union). */
function propsOf(schema: unknown): Record<string, Json> {
  if (!schema || typeof schema !== 'object') return {};
  const s = schema as Json;
  if (s['properties']) return s['properties'] as Record<string, Json>;
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[k] as unknown[] | undefined;
    const first = list?.map(propsOf).find((p) => Object.keys(p).length);
    if (first) return first;
  }
  return {};
}

/** A bad value of the field's kind: integers beyond int64 for numbers, a NUL byte otherwise. */
function badValues(field: Json): unknown[] {
  const nested = propsOf(field);
  const items = field['items'] as Json | undefined;
  const out: unknown[] = [BIG_NUMBER, 1e20, NUL_TEXT];
  if (Object.keys(nested).length) {
    for (const [k, sub] of Object.entries(nested)) {
      for (const v of [BIG_NUMBER, NUL_TEXT]) out.push({ [k]: v });
      if (sub['type'] === 'array') out.push({ [k]: [NUL_TEXT] });
    }
  }
  if (items) {
    out.push([BIG_NUMBER], [NUL_TEXT]);
    for (const k of Object.keys(propsOf(items))) out.push([{ [k]: NUL_TEXT }], [{ [k]: BIG_NUMBER }]);
  }
  return out;
}

describe('generated fuzz over every route', () => {
  let s: TestServer;
  const real: Record<string, string> = {};

  before(async () => {
    s = await startServer();
    const token = s.admin.token;
    const ok = async (method: string, path: string, body?: unknown) => {
      const r = await s.api<Json>(method, path, { token, body });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.body;
    };
    await s.createUser('fz-user');
    await ok('POST', '/orgs', { username: 'fz-org' });
    await ok('POST', '/orgs/fz-org/repos', { name: 'fz-repo', auto_init: true });
    const issue = await ok('POST', '/repos/fz-org/fz-repo/issues', { title: 'fuzzed' });
    await ok('POST', '/repos/fz-org/fz-repo/labels', { name: 'bug', color: '#ff0000' });
    await ok('POST', '/repos/fz-org/fz-repo/milestones', { title: 'v1' });
    const team = await ok('POST', '/orgs/fz-org/teams', { name: 'fzteam', permission: 'read', units: [] });
    Object.assign(real, {
      owner: 'fz-org',
      repo: 'fz-repo',
      org: 'fz-org',
      username: 'fz-user',
      user: 'fz-user',
      collaborator: 'fz-user',
      index: String(issue['number'] ?? 1),
      id: String(team['id'] ?? 1),
      ref: 'main',
      sha: 'main',
      name: 'main',
      '*': 'README.md',
    });
  });
  after(() => s?.close());

  it('answers 4xx, never 5xx, to out-of-range integers and NUL bytes anywhere', async () => {
    const routes = routeTable(s.app).filter(
      (r) =>
        ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) && !r.url.startsWith('/api/swagger'),
    );
    assert.ok(routes.length > 100, `route table has ${routes.length} routes`);
    const probes: Probe[] = [];
    for (const route of routes) probes.push(...probesOf(route));
    // Deletions last, so that a deletion a probe does not stop cannot hide the other routes' bugs.
    probes.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));

    const failures: string[] = [];
    const queue = [...probes];
    const worker = async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const r = await s.api(p.method, p.url.startsWith('/api/v1') ? p.url : `/api/..${p.url}`, {
          token: s.admin.token,
          ...(p.body === undefined ? {} : { body: p.body }),
        });
        if (r.status >= 500)
          failures.push(`${p.method} ${p.url} (${p.what}): ${r.status} ${r.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    assert.deepEqual(failures, [], `${failures.length} of ${probes.length} probes answered 5xx`);
  });

  function probesOf(route: RouteEntry): Probe[] {
    const names = [...route.url.matchAll(/:([A-Za-z_]+)|\*/g)].map((m) => m[1] ?? '*');
    const path = (bad?: string, value?: string) =>
      route.url.replace(/:([A-Za-z_]+)|\*/g, (_m, n: string | undefined) => {
        const name = n ?? '*';
        if (name === bad) return value ?? '';
        return real[name] ?? '1';
      });
    const out: Probe[] = [];
    for (const name of names) {
      for (const v of [BIG, NUL_PATH])
        out.push({ method: route.method, url: path(name, v), what: `path ${name}` });
    }
    const schema = route.schema ?? {};
    for (const q of Object.keys(propsOf(schema['querystring']))) {
      for (const v of ['35599653291107852288', NUL_PATH]) {
        out.push({ method: route.method, url: `${path()}?${q}=${v}`, what: `query ${q}` });
      }
    }
    if (route.method !== 'GET') {
      for (const [field, fieldSchema] of Object.entries(propsOf(schema['body']))) {
        for (const v of badValues(fieldSchema)) {
          out.push({ method: route.method, url: path(), body: { [field]: v }, what: `body ${field}` });
        }
      }
    }
    return out;
  }
});

describe('error shapes and edge statuses', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s?.close());

  it("404s carry Forgejo's errors array, for unknown paths and missing resources", async () => {
    const unknown = await s.api<Json>('GET', '/no/such/path', { token: s.admin.token });
    assert.equal(unknown.status, 404);
    assert.ok(Array.isArray(unknown.body['errors']));
    const missing = await s.api<Json>('GET', '/users/nobody-here', { token: s.admin.token });
    assert.equal(missing.status, 404);
    assert.ok(Array.isArray(missing.body['errors']));
    assert.equal(typeof missing.body['message'], 'string');
    assert.equal(typeof missing.body['url'], 'string');
  });

  it('answers 405 with Allow to a method the path does not have', async () => {
    const r = await s.api<Json>('PUT', '/version', { token: s.admin.token });
    assert.equal(r.status, 405);
    assert.match(r.headers.get('allow') ?? '', /GET/);
    assert.ok(Array.isArray(r.body['errors']));
  });

  it('accepts long path parameters and answers bad URLs in Forgejo shape', async () => {
    const long = await s.api<Json>('GET', `/users/${'a'.repeat(300)}`, { token: s.admin.token });
    assert.equal(long.status, 404);
    const tooLong = await s.api<Json>('GET', `/users/${'a'.repeat(5000)}`, { token: s.admin.token });
    assert.equal(tooLong.status, 414);
    assert.equal(typeof tooLong.body['url'], 'string');
    const bad = await s.api<Json>('GET', '/users/%FF', { token: s.admin.token });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body).sort(), ['message', 'url']);
  });

  it('names the field in 422s for out-of-range integers and NUL bytes', async () => {
    const id = await s.api<Json>('GET', `/teams/${BIG}`, { token: s.admin.token });
    assert.equal(id.status, 422);
    assert.match(String(id.body['message']), /^\[Id\]: /);
    const nul = await s.api<Json>('GET', `/users/${NUL_PATH}`, { token: s.admin.token });
    assert.equal(nul.status, 422);
    assert.match(String(nul.body['message']), /^\[Username\]: must not contain NUL/);
    const page = await s.api<Json>('GET', '/repos/search?page=35599653291107852288', {
      token: s.admin.token,
    });
    assert.equal(page.status, 422);
    assert.match(String(page.body['message']), /^\[Page\]/);
  });

  it('treats empty query values as absent', async () => {
    const r = await s.api('GET', '/repos/search?page=&limit=&q=', { token: s.admin.token });
    assert.equal(r.status, 200);
  });

  it('declares 404 and 422 in the OpenAPI document, and names parameters as Forgejo does', async () => {
    const doc = (await s.api<Json>('GET', '/swagger.v1.json')).body;
    const paths = doc['paths'] as Record<string, Record<string, { parameters?: Json[]; responses?: Json }>>;
    const forgejoFile = '/work/shared/reference/forgejo-api-v1.swagger.json';
    const forgejo = fs.existsSync(forgejoFile)
      ? (JSON.parse(fs.readFileSync(forgejoFile, 'utf8')) as { paths: Record<string, unknown> }).paths
      : {};
    const shape = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
    const forgejoByShape = new Map(Object.keys(forgejo).map((p) => [shape(p), p]));
    for (const [p, item] of Object.entries(paths)) {
      assert.ok(!p.includes('{*}'), `${p} has a * parameter`);
      const theirs = forgejoByShape.get(shape(p));
      if (theirs) assert.equal(p, theirs, 'parameter names as Forgejo names them');
      for (const op of Object.values(item)) {
        for (const param of op.parameters ?? []) assert.notEqual(param['name'], '*', p);
        const pathParams = (op.parameters ?? []).some((x) => x['in'] === 'path');
        if (pathParams) {
          assert.ok(op.responses?.['404'], `${p} declares 404`);
          assert.ok(op.responses?.['422'], `${p} declares 422`);
        }
      }
    }
    assert.ok(paths['/repos/{owner}/{repo}/contents/{filepath}'], 'contents is named {filepath}');
  });
});
