// Body-less writes, generated over the route table: every POST, PUT, PATCH and DELETE under
// /api/v1 is sent without a body three ways (no Content-Type; `application/json` and
// `application/x-www-form-urlencoded` with an empty body, as axios-based clients such as gitea-js
// send it), as an administrator, against real resources. None may answer 5xx or 415; a route whose
// body has no required field may not answer 400; a route whose body requires a field answers 422
// naming it. Also the writes Forgejo's clients make body-less, each checked for Forgejo's 2xx, and
// a form body read like JSON.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { routeTable, type RouteEntry } from '../../src/http/errors.js';
import { fieldLabel } from '../../src/errors.js';

type Json = Record<string, unknown>;

const VARIANTS: Array<[string, Record<string, string>]> = [
  ['no Content-Type', {}],
  ['empty JSON', { 'content-type': 'application/json' }],
  ['empty form', { 'content-type': 'application/x-www-form-urlencoded' }],
];

/** What Fastify and the schemas answer when a body is missing, empty or of the wrong kind. */
const BODY_REFUSAL = /body|content-type|media type|JSON/i;

/** The required fields of a body schema (an object's, or the first object's of a union). */
function requiredOf(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Json;
  if (Array.isArray(s['required'])) return s['required'] as string[];
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[k];
    if (Array.isArray(list)) {
      const found = list.map(requiredOf).find((r) => r.length);
      if (found) return found;
    }
  }
  return [];
}

describe('body-less writes on every route', () => {
  let s: TestServer;
  const real: Record<string, string> = {};

  /** A body-less request: `headers` decide the Content-Type; the body is empty when one is named. */
  const send = async (method: string, path: string, headers: Record<string, string>) => {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: { authorization: `token ${s.admin.token}`, ...headers },
      ...(headers['content-type'] ? { body: '' } : {}),
    });
    return { status: res.status, text: await res.text() };
  };

  before(async () => {
    s = await startServer();
    const token = s.admin.token;
    const ok = async (method: string, path: string, body?: unknown) => {
      const r = await s.api<Json>(method, path, { token, body });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.body;
    };
    await s.createUser('bl-user');
    await ok('POST', '/orgs', { username: 'bl-org' });
    await ok('POST', '/orgs/bl-org/repos', { name: 'bl-repo', auto_init: true });
    const issue = await ok('POST', '/repos/bl-org/bl-repo/issues', { title: 'body-less' });
    await ok('POST', '/repos/bl-org/bl-repo/labels', { name: 'bug', color: '#ff0000' });
    const team = await ok('POST', '/orgs/bl-org/teams', { name: 'blteam', permission: 'read', units: [] });
    await ok('PUT', '/repos/bl-org/bl-repo/actions/secrets/BL_SECRET', { data: 'x' });
    await ok('POST', '/admin/quota/groups', { name: 'bl-group' });
    for (const at of ['/repos/bl-org/bl-repo', '/orgs/bl-org', '/user']) {
      await ok('POST', `${at}/actions/variables/BL_VAR`, { value: 'v' });
    }
    Object.assign(real, {
      variablename: 'BL_VAR',
      owner: 'bl-org',
      repo: 'bl-repo',
      org: 'bl-org',
      username: 'bl-user',
      user: 'bl-user',
      collaborator: 'bl-user',
      index: String(issue['number'] ?? 1),
      id: String(team['id'] ?? 1),
      secretname: 'BL_SECRET',
      quotagroup: 'bl-group',
      ref: 'main',
      sha: 'main',
      name: 'main',
      branch: 'main',
      '*': 'README.md',
    });
  });
  after(() => s?.close());

  it('never answers 5xx, 415, or 400 where no body is needed; 422 naming a required field', async () => {
    const routes = routeTable(s.app).filter(
      (r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) && r.url.startsWith('/api/v1/'),
    );
    assert.ok(routes.length > 100, `route table has ${routes.length} write routes`);
    // Deletions last, and among them the owner's, user's and repository's very last: every other
    // probe then meets real resources.
    const rank = (r: RouteEntry) =>
      r.method !== 'DELETE'
        ? 0
        : /^\/api\/v1\/(repos\/:owner\/:repo|orgs\/:org|admin\/users\/:username|users\/:username)$/.test(
              r.url,
            )
          ? 2
          : 1;
    routes.sort((a, b) => rank(a) - rank(b));

    const failures: string[] = [];
    let probes = 0;
    for (const route of routes) {
      const path = route.url.replace(
        /:([A-Za-z_]+)|\*/g,
        (_m, n: string | undefined) => real[n ?? '*'] ?? '1',
      );
      const required = requiredOf(route.schema?.['body']);
      for (const [label, headers] of VARIANTS) {
        probes++;
        const r = await send(route.method, path, headers);
        const where = `${route.method} ${route.url} (${label}): ${r.status} ${r.text.slice(0, 160)}`;
        if (r.status >= 500 || r.status === 415) failures.push(where);
        // A 400 about the request itself (not a mirror, a bad name, no file) is the route's own
        // answer; one about the missing or empty body is the failure this test is for.
        else if (r.status === 400 && BODY_REFUSAL.test(r.text)) failures.push(where);
        // Creating a token takes a password (basic authentication) before the body is read.
        else if (required.length > 0 && r.status !== 401) {
          const named = required.some((f) => r.text.includes(fieldLabel(f)) || r.text.includes(f));
          if (r.status !== 422 || !named) failures.push(`${where} (requires ${required.join(', ')})`);
        }
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${probes} probes failed`);
  });
});

describe("the writes Forgejo's clients send body-less", () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  const send = async (
    method: string,
    path: string,
    token: string,
    headers: Record<string, string> = form,
  ) => {
    const res = await fetch(`${s.url}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, ...headers },
      body: '',
    });
    return { status: res.status, text: await res.text() };
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'r', auto_init: true } });
    for (const n of [1, 2, 3]) {
      await s.api('POST', '/repos/alice/r/issues', { token: alice.token, body: { title: `pin me ${n}` } });
      await s.api('PUT', `/repos/alice/r/actions/secrets/S${n}`, { token: alice.token, body: { data: 'x' } });
    }
    await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    await s.createUser('bob');
    for (const n of [1, 2, 3]) {
      await s.api('POST', '/admin/quota/groups', { token: s.admin.token, body: { name: `g${n}` } });
    }
  });
  after(() => s?.close());

  it("answers Forgejo's 2xx with an empty form body", async () => {
    const teams = await s.api<Array<{ id: number; name: string }>>('GET', '/orgs/acme/teams', {
      token: alice.token,
    });
    const owners = teams.body.find((t) => t.name === 'Owners')!;
    // Each way of sending no body (n: 1, 2, 3) on a resource of its own where the write is not
    // idempotent; Forgejo's status each time.
    const cases: Array<[string, (n: number) => string, string, number]> = [
      ['PUT', () => '/repos/alice/r/subscription', alice.token, 200],
      ['DELETE', () => '/repos/alice/r/subscription', alice.token, 204],
      ['DELETE', (n) => `/repos/alice/r/actions/secrets/S${n}`, alice.token, 204],
      ['PUT', () => '/notifications', alice.token, 205],
      ['PUT', () => `/teams/${owners.id}/members/bob`, alice.token, 204],
      ['PUT', (n) => `/admin/quota/groups/g${n}/users/bob`, s.admin.token, 204],
      ['POST', (n) => `/repos/alice/r/issues/${n}/pin`, alice.token, 204],
      ['PUT', () => '/user/starred/alice/r', alice.token, 204],
      ['PUT', () => '/user/following/bob', alice.token, 204],
    ];
    const ways = [form, { 'content-type': 'application/json' }, {}];
    for (const [method, path, token, status] of cases) {
      for (const [i, headers] of ways.entries()) {
        const r = await send(method, path(i + 1), token, headers);
        assert.equal(r.status, status, `${method} ${path(i + 1)} ${JSON.stringify(headers)}: ${r.text}`);
      }
    }
  });

  it('reads a non-empty form body as JSON would be read, and names missing fields', async () => {
    let r = await send('POST', '/repos/alice/r/issues', alice.token);
    assert.equal(r.status, 422);
    assert.match(r.text, /Title/);
    const res = await fetch(`${s.url}/api/v1/repos/alice/r/issues`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'title=from+a+form&body=hello%20there',
    });
    assert.equal(res.status, 201);
    const issue = (await res.json()) as { title: string; body: string };
    assert.deepEqual([issue.title, issue.body], ['from a form', 'hello there']);
    // Malformed JSON is still refused, and a body of a type the API cannot read is 415.
    r = await send('POST', '/repos/alice/r/issues', alice.token, { 'content-type': 'application/json' });
    assert.equal(r.status, 422);
    const bad = await fetch(`${s.url}/api/v1/repos/alice/r/issues`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json' },
      body: '{"title": ',
    });
    assert.equal(bad.status, 400);
    const odd = await fetch(`${s.url}/api/v1/repos/alice/r/issues`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'application/xml' },
      body: '<title>x</title>',
    });
    assert.equal(odd.status, 415);
    const body = (await odd.json()) as { message: string; url: string };
    assert.match(body.message, /Unsupported Media Type/);
  });
});
