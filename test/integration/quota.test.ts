// The quota engine through its HTTP API: rules, groups, memberships, the user-side views, and
// evaluation with usage injected straight into the server's database (the server runs in-process,
// so `s.ctx.db` is the very database the API reads). Recalculation runs the real CLI as a child
// process against the same database.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { runCli, startServer, type TestServer } from '../helpers/server.js';
import { postgresConnection } from '../../src/db/database.js';
import { recordUsage } from '../../src/quota/usage.js';
import type { LeafSubject } from '../../src/quota/subjects.js';

interface ErrorJson {
  message: string;
}

interface RuleJson {
  name?: string;
  limit: number;
  subjects: string[];
}

interface GroupJson {
  name: string;
  rules: RuleJson[];
}

interface UsedJson {
  size: {
    repos: { public: number; private: number };
    git: { LFS: number };
    assets: {
      attachments: { issues: number; releases: number };
      artifacts: number;
      packages: { all: number };
    };
  };
}

interface QuotaInfoJson {
  used: UsedJson;
  groups: GroupJson[];
}

interface UserJson {
  id: number;
  login: string;
}

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

const ZERO_USED: UsedJson = {
  size: {
    repos: { public: 0, private: 0 },
    git: { LFS: 0 },
    assets: { attachments: { issues: 0, releases: 0 }, artifacts: 0, packages: { all: 0 } },
  },
};

/** The success and error statuses each admin quota operation declares (the spec's table). */
const ADMIN_DECLARED: Record<string, Record<string, number[]>> = {
  '/admin/quota/rules': { get: [200, 403], post: [201, 400, 403, 409, 422] },
  '/admin/quota/rules/{quotarule}': {
    get: [200, 400, 403, 404],
    patch: [200, 400, 403, 404, 422],
    delete: [204, 400, 403, 404],
  },
  '/admin/quota/groups': { get: [200, 403], post: [201, 400, 403, 409, 422] },
  '/admin/quota/groups/{quotagroup}': { get: [200, 400, 403, 404], delete: [204, 400, 403, 404] },
  '/admin/quota/groups/{quotagroup}/users': { get: [200, 400, 403, 404] },
  '/admin/quota/groups/{quotagroup}/users/{username}': {
    put: [204, 400, 403, 404, 409, 422],
    delete: [204, 400, 403, 404],
  },
  '/admin/quota/groups/{quotagroup}/rules/{quotarule}': {
    put: [204, 400, 403, 404, 409, 422],
    delete: [204, 400, 403, 404],
  },
  '/admin/users/{username}/quota/groups': { post: [204, 400, 403, 404, 422] },
  '/admin/users/{username}/quota': { get: [200, 400, 403, 404] },
};

/** The user-side operations (all GET) and what Forgejo's description declares for them. */
const USER_DECLARED: Record<string, number[]> = {
  '/user/quota': [200, 401, 403],
  '/user/quota/check': [200, 401, 403, 422],
  '/user/quota/attachments': [200, 401, 403],
  '/user/quota/artifacts': [200, 401, 403],
  '/user/quota/packages': [200, 401, 403],
  '/orgs/{org}/quota': [200, 403, 404],
  '/orgs/{org}/quota/check': [200, 403, 404, 422],
  '/orgs/{org}/quota/attachments': [200, 403, 404],
  '/orgs/{org}/quota/artifacts': [200, 403, 404],
  '/orgs/{org}/quota/packages': [200, 403, 404],
};

/**
 * Closes a test server. On PostgreSQL, the helper's close() drops the database WITH (FORCE) as soon
 * as the pool's end() resolves, but end() resolves before its connections have finished closing;
 * a connection terminated by the drop then raises an uncaught 'error' on the pool (a flaky failure).
 * So the server and its pool are closed first, and the drop waits until the database has no
 * connections left; the helper's close() then does the rest (closing twice is harmless).
 */
async function stop(s: TestServer): Promise<void> {
  await s.app.close();
  await s.ctx.close();
  if (s.config.database.type === 'postgres') {
    const c = new pg.Client(postgresConnection(s.config.database, 'postgres'));
    await c.connect();
    try {
      for (let i = 0; i < 100; i++) {
        const r = await c.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
          [s.config.database.name],
        );
        if (Number(r.rows[0]?.n ?? 0) === 0) break;
        await sleep(50);
      }
    } finally {
      await c.end();
    }
  }
  await s.close();
}

/** A request as the site administrator (the helper's `all`-scoped token). */
function adm<T = unknown>(s: TestServer, method: string, path: string, body?: unknown) {
  return s.api<T>(method, path, { token: s.admin.token, body });
}

/** Adds `delta` bytes of `subject` to an owner's usage, the way a domain records it. */
async function addUsage(s: TestServer, ownerId: number, subject: LeafSubject, delta: number): Promise<void> {
  await s.ctx.db.transaction().execute((tx) => recordUsage(tx, ownerId, subject, delta));
}

async function createRule(s: TestServer, name: string, limit: number, subjects: string[]): Promise<void> {
  const r = await adm(s, 'POST', '/admin/quota/rules', { name, limit, subjects });
  assert.equal(r.status, 201, r.text);
}

async function createGroup(
  s: TestServer,
  name: string,
  rules: Array<{ name: string; limit?: number; subjects?: string[] }> = [],
): Promise<GroupJson> {
  const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', { name, rules });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function setGroups(s: TestServer, user: string, groups: string[]): Promise<void> {
  const r = await adm(s, 'POST', `/admin/users/${user}/quota/groups`, { groups });
  assert.equal(r.status, 204, r.text);
}

async function adminInfo(s: TestServer, user: string): Promise<QuotaInfoJson> {
  const r = await adm<QuotaInfoJson>(s, 'GET', `/admin/users/${user}/quota`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const groupNames = (info: QuotaInfoJson) => info.groups.map((g) => g.name).sort();

/** GET {prefix}/check?subject=...; asserts a 200 with a JSON boolean and returns it. */
async function check(
  s: TestServer,
  token: string,
  subject: string,
  prefix = '/user/quota',
): Promise<boolean> {
  const r = await s.api<boolean>('GET', `${prefix}/check?subject=${encodeURIComponent(subject)}`, { token });
  assert.equal(r.status, 200, `check ${subject}: ${r.status} ${r.text}`);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  assert.ok(r.text === 'true' || r.text === 'false', `a JSON boolean, got ${r.text}`);
  return r.body;
}

function assertNoContent(r: { status: number; text: string }, what: string): void {
  assert.equal(r.status, 204, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.text, '', `${what}: empty body`);
}

async function createOrg(s: TestServer, owner: U, name: string, extra: Record<string, unknown> = {}) {
  const r = await s.api<{ id: number; name: string }>('POST', '/orgs', {
    token: owner.token,
    body: { username: name, ...extra },
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

describe('quota rules: /admin/quota/rules', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => stop(s));

  it('lists no rules on a fresh server', async () => {
    const r = await adm<RuleJson[]>(s, 'GET', '/admin/quota/rules');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, []);
  });

  it('creates a rule: 201 with name, limit and subjects', async () => {
    const r = await adm<RuleJson>(s, 'POST', '/admin/quota/rules', {
      name: 'all-1k',
      limit: 1024,
      subjects: ['size:all'],
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body, { name: 'all-1k', limit: 1024, subjects: ['size:all'] });
    const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/all-1k');
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.body, { name: 'all-1k', limit: 1024, subjects: ['size:all'] });
  });

  it('accepts every subject of the hierarchy, several per rule, in order', async () => {
    const subjects = [
      'size:all',
      'size:repos:all',
      'size:repos:public',
      'size:repos:private',
      'size:git:all',
      'size:git:lfs',
      'size:assets:all',
      'size:assets:attachments:all',
      'size:assets:attachments:issues',
      'size:assets:attachments:releases',
      'size:assets:artifacts',
      'size:assets:packages:all',
      'size:wiki',
    ];
    const r = await adm<RuleJson>(s, 'POST', '/admin/quota/rules', { name: 'every', limit: 1, subjects });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.subjects, subjects);
    const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/every');
    assert.deepEqual(g.body.subjects, subjects);
  });

  it('keeps int64 limits beyond 32 bits, and -1 (unlimited)', async () => {
    const big = 10 * 1024 ** 4; // 10 TiB
    let r = await adm<RuleJson>(s, 'POST', '/admin/quota/rules', {
      name: 'big',
      limit: big,
      subjects: ['size:git:lfs'],
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.limit, big);
    assert.equal((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/big')).body.limit, big);
    r = await adm<RuleJson>(s, 'POST', '/admin/quota/rules', {
      name: 'unlimited',
      limit: -1,
      subjects: ['size:all'],
    });
    assert.equal(r.status, 201, r.text);
    assert.equal((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/unlimited')).body.limit, -1);
  });

  it('answers 409 when the rule name exists, leaving the rule unchanged', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/rules', {
      name: 'all-1k',
      limit: 1,
      subjects: ['size:wiki'],
    });
    assert.equal(r.status, 409, r.text);
    assert.equal(typeof r.body.message, 'string');
    const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/all-1k');
    assert.deepEqual(g.body, { name: 'all-1k', limit: 1024, subjects: ['size:all'] });
  });

  it('answers 422 when limit is absent, saying the field Limit is required; nothing is created', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/rules', {
      name: 'no-limit',
      subjects: ['size:all'],
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Limit/);
    assert.match(r.body.message, /Required/);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/no-limit')).status, 404);
  });

  it('answers 422 for an unrecognized subject, naming it; nothing is created', async () => {
    for (const bad of ['size:bogus', 'size:git', 'SIZE:ALL', 'size:all ', '', 'count:repos']) {
      const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/rules', {
        name: 'bad-subject',
        limit: 10,
        subjects: ['size:all', bad],
      });
      assert.equal(r.status, 422, `${JSON.stringify(bad)}: ${r.text}`);
      if (bad.trim())
        assert.ok(r.body.message.includes(bad.trim()), `message names ${bad}: ${r.body.message}`);
      assert.equal((await adm(s, 'GET', '/admin/quota/rules/bad-subject')).status, 404);
    }
  });

  it('answers 422 when the name is absent', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/rules', { limit: 10, subjects: ['size:all'] });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Name/);
  });

  it('answers 400 for malformed JSON', async () => {
    const r = await s.api<ErrorJson>('POST', '/admin/quota/rules', {
      token: s.admin.token,
      raw: '{"name": "broken", "limit": ',
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(typeof r.body.message, 'string');
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/broken')).status, 404);
  });

  it('lists every rule with its name, limit and subjects', async () => {
    const r = await adm<RuleJson[]>(s, 'GET', '/admin/quota/rules');
    assert.equal(r.status, 200, r.text);
    const byName = new Map(r.body.map((x) => [x.name, x]));
    assert.deepEqual([...byName.keys()].sort(), ['all-1k', 'big', 'every', 'unlimited']);
    assert.deepEqual(byName.get('all-1k'), { name: 'all-1k', limit: 1024, subjects: ['size:all'] });
    assert.deepEqual(byName.get('unlimited'), { name: 'unlimited', limit: -1, subjects: ['size:all'] });
  });

  it('GET of an unknown rule is 404', async () => {
    const r = await adm<ErrorJson>(s, 'GET', '/admin/quota/rules/no-such-rule');
    assert.equal(r.status, 404, r.text);
    assert.equal(typeof r.body.message, 'string');
  });

  it('handles rule names that need escaping in the path', async () => {
    await createRule(s, 'my rule+1', 5, ['size:wiki']);
    const path = `/admin/quota/rules/${encodeURIComponent('my rule+1')}`;
    const g = await adm<RuleJson>(s, 'GET', path);
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.name, 'my rule+1');
    assertNoContent(await adm(s, 'DELETE', path), 'DELETE');
  });

  it('describes every quota operation in the API document, with the declared statuses', async () => {
    const doc = await s.api<{
      paths: Record<string, Record<string, { tags?: string[]; responses: object }>>;
    }>('GET', '/swagger.v1.json');
    assert.equal(doc.status, 200, doc.text);
    const declared = (path: string, method: string) => {
      const op = doc.body.paths[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path} is described`);
      return { tags: op.tags ?? [], statuses: Object.keys(op.responses).map(Number) };
    };
    for (const [path, methods] of Object.entries(ADMIN_DECLARED)) {
      for (const [method, statuses] of Object.entries(methods)) {
        const op = declared(path, method);
        assert.ok(op.tags.includes('admin'), `${method} ${path} is in the admin group`);
        for (const st of statuses)
          assert.ok(op.statuses.includes(st), `${method} ${path} declares ${st}: ${op.statuses.join(',')}`);
      }
    }
    const removeRule = declared('/admin/quota/groups/{quotagroup}/rules/{quotarule}', 'delete');
    assert.ok(!removeRule.statuses.includes(201), 'removing a rule from a group declares 204, not 201');
    for (const [path, statuses] of Object.entries(USER_DECLARED)) {
      const op = declared(path, 'get');
      for (const st of statuses)
        assert.ok(op.statuses.includes(st), `GET ${path} declares ${st}: ${op.statuses.join(',')}`);
    }
  });

  describe('PATCH /admin/quota/rules/{quotarule}', () => {
    before(async () => {
      await createRule(s, 'editable', 100, ['size:repos:all']);
    });

    it('applies limit only: 200 with the subjects unchanged', async () => {
      const r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', { limit: 200 });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { name: 'editable', limit: 200, subjects: ['size:repos:all'] });
      const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable');
      assert.deepEqual(g.body, { name: 'editable', limit: 200, subjects: ['size:repos:all'] });
    });

    it('replaces the subjects when present, keeping the limit when absent', async () => {
      const r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', {
        subjects: ['size:git:lfs', 'size:assets:artifacts'],
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, {
        name: 'editable',
        limit: 200,
        subjects: ['size:git:lfs', 'size:assets:artifacts'],
      });
      const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable');
      assert.deepEqual(g.body.subjects, ['size:git:lfs', 'size:assets:artifacts']);
      assert.equal(g.body.limit, 200);
    });

    it('applies limit and subjects together, including a limit of 0 and -1', async () => {
      let r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', {
        limit: 0,
        subjects: ['size:all'],
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { name: 'editable', limit: 0, subjects: ['size:all'] });
      r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', { limit: -1 });
      assert.equal(r.status, 200, r.text);
      assert.equal((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable')).body.limit, -1);
      r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', { limit: 300 });
      assert.equal(r.status, 200, r.text);
    });

    it('with an empty body changes nothing: 200 with the rule', async () => {
      const r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', {});
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { name: 'editable', limit: 300, subjects: ['size:all'] });
      const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable');
      assert.deepEqual(g.body, { name: 'editable', limit: 300, subjects: ['size:all'] });
    });

    it('accepts an empty subjects list as a replacement', async () => {
      const r = await adm<RuleJson>(s, 'PATCH', '/admin/quota/rules/editable', { subjects: [] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.subjects, []);
      assert.deepEqual((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable')).body.subjects, []);
      await adm(s, 'PATCH', '/admin/quota/rules/editable', { subjects: ['size:all'] });
    });

    it('validates the subjects: 422 naming the bad one, and neither limit nor subjects change', async () => {
      const r = await adm<ErrorJson>(s, 'PATCH', '/admin/quota/rules/editable', {
        limit: 1,
        subjects: ['size:assets:all', 'size:nope'],
      });
      assert.equal(r.status, 422, r.text);
      assert.ok(r.body.message.includes('size:nope'), r.body.message);
      const g = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable');
      assert.deepEqual(g.body, { name: 'editable', limit: 300, subjects: ['size:all'] });
    });

    it('answers 404 for an unknown rule, and does not create it', async () => {
      let r = await adm<ErrorJson>(s, 'PATCH', '/admin/quota/rules/ghost', { limit: 5 });
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'PATCH', '/admin/quota/rules/ghost', { subjects: ['size:all'] });
      assert.equal(r.status, 404, r.text);
      assert.equal((await adm(s, 'GET', '/admin/quota/rules/ghost')).status, 404);
    });

    it('answers 400 for malformed JSON', async () => {
      const r = await s.api<ErrorJson>('PATCH', '/admin/quota/rules/editable', {
        token: s.admin.token,
        raw: '{"limit": 5',
      });
      assert.equal(r.status, 400, r.text);
      assert.equal((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/editable')).body.limit, 300);
    });
  });

  describe('DELETE /admin/quota/rules/{quotarule}', () => {
    it('answers 204 with an empty body, then the rule is gone (GET and DELETE 404)', async () => {
      await createRule(s, 'doomed', 1, ['size:all']);
      assertNoContent(await adm(s, 'DELETE', '/admin/quota/rules/doomed'), 'DELETE');
      assert.equal((await adm(s, 'GET', '/admin/quota/rules/doomed')).status, 404);
      assert.equal((await adm(s, 'DELETE', '/admin/quota/rules/doomed')).status, 404);
      const list = await adm<RuleJson[]>(s, 'GET', '/admin/quota/rules');
      assert.ok(!list.body.some((r) => r.name === 'doomed'));
    });

    it('answers 404 for a rule that never existed', async () => {
      const r = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/rules/never-was');
      assert.equal(r.status, 404, r.text);
    });

    it('removes the rule from every group that had it, leaving the groups', async () => {
      await createRule(s, 'shared', 10, ['size:all']);
      await createRule(s, 'kept', 20, ['size:wiki']);
      await createGroup(s, 'holder-1', [{ name: 'shared' }, { name: 'kept' }]);
      await createGroup(s, 'holder-2', [{ name: 'shared' }]);
      assertNoContent(await adm(s, 'DELETE', '/admin/quota/rules/shared'), 'DELETE');
      const g1 = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/holder-1');
      assert.equal(g1.status, 200, g1.text);
      assert.deepEqual(g1.body, {
        name: 'holder-1',
        rules: [{ name: 'kept', limit: 20, subjects: ['size:wiki'] }],
      });
      const g2 = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/holder-2');
      assert.deepEqual(g2.body, { name: 'holder-2', rules: [] });
      // The name is free again, and a new rule of that name is not in the old groups.
      await createRule(s, 'shared', 99, ['size:git:lfs']);
      assert.deepEqual((await adm<GroupJson>(s, 'GET', '/admin/quota/groups/holder-2')).body.rules, []);
    });
  });
});

describe('quota groups: /admin/quota/groups', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => stop(s));

  it('lists no groups on a fresh server', async () => {
    const r = await adm<GroupJson[]>(s, 'GET', '/admin/quota/groups');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, []);
  });

  it('creates an empty group: 201 with no rules', async () => {
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', { name: 'empty' });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body, { name: 'empty', rules: [] });
    const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/empty');
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.body, { name: 'empty', rules: [] });
  });

  it('creates a group with new rules: 201 with its rules, and the rules exist', async () => {
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'starter',
      rules: [
        { name: 'starter-git', limit: 1000, subjects: ['size:git:all'] },
        { name: 'starter-assets', limit: 500, subjects: ['size:assets:all', 'size:wiki'] },
      ],
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.name, 'starter');
    const rules = [...r.body.rules].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
    assert.deepEqual(rules, [
      { name: 'starter-assets', limit: 500, subjects: ['size:assets:all', 'size:wiki'] },
      { name: 'starter-git', limit: 1000, subjects: ['size:git:all'] },
    ]);
    const rule = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/starter-git');
    assert.equal(rule.status, 200, rule.text);
    assert.deepEqual(rule.body, { name: 'starter-git', limit: 1000, subjects: ['size:git:all'] });
    const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/starter');
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.body.rules.map((x) => x.name).sort(), ['starter-assets', 'starter-git']);
  });

  it('an entry naming an existing rule uses it unchanged, ignoring the entry limit and subjects', async () => {
    await createRule(s, 'existing', 100, ['size:all']);
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'reuser',
      rules: [{ name: 'existing', limit: 5, subjects: ['size:wiki'] }],
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body, {
      name: 'reuser',
      rules: [{ name: 'existing', limit: 100, subjects: ['size:all'] }],
    });
    const rule = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/existing');
    assert.deepEqual(rule.body, { name: 'existing', limit: 100, subjects: ['size:all'] });
  });

  it('an entry naming an existing rule is not validated: an invalid subject there is ignored', async () => {
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'reuser-2',
      rules: [{ name: 'existing', subjects: ['size:not-a-subject'] }],
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.rules, [{ name: 'existing', limit: 100, subjects: ['size:all'] }]);
  });

  it('an entry with absent limit creates the rule with limit 0', async () => {
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'zero',
      rules: [{ name: 'zero-rule', subjects: ['size:assets:packages:all'] }],
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.rules, [{ name: 'zero-rule', limit: 0, subjects: ['size:assets:packages:all'] }]);
    const rule = await adm<RuleJson>(s, 'GET', '/admin/quota/rules/zero-rule');
    assert.equal(rule.status, 200, rule.text);
    assert.equal(rule.body.limit, 0);
  });

  it('mixes existing and new rules in one group', async () => {
    const r = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'mixed',
      rules: [
        { name: 'existing', limit: 1, subjects: ['size:wiki'] },
        { name: 'mixed-new', limit: 7, subjects: ['size:repos:private'] },
      ],
    });
    assert.equal(r.status, 201, r.text);
    const byName = new Map(r.body.rules.map((x) => [x.name, x]));
    assert.deepEqual(byName.get('existing'), { name: 'existing', limit: 100, subjects: ['size:all'] });
    assert.deepEqual(byName.get('mixed-new'), {
      name: 'mixed-new',
      limit: 7,
      subjects: ['size:repos:private'],
    });
    assert.equal(byName.size, 2);
  });

  it('answers 409 when the group name exists, creating none of the entry rules', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/groups', {
      name: 'starter',
      rules: [{ name: 'late-rule', limit: 1, subjects: ['size:all'] }],
    });
    assert.equal(r.status, 409, r.text);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/late-rule')).status, 404);
    const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/starter');
    assert.deepEqual(g.body.rules.map((x) => x.name).sort(), ['starter-assets', 'starter-git']);
  });

  it('answers 422 for an unrecognized subject in a new rule entry, naming it; nothing is created', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/groups', {
      name: 'bad-group',
      rules: [{ name: 'bad-entry', limit: 1, subjects: ['size:all', 'size:everything'] }],
    });
    assert.equal(r.status, 422, r.text);
    assert.ok(r.body.message.includes('size:everything'), r.body.message);
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/bad-group')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/bad-entry')).status, 404);
  });

  it('is all or nothing: [valid new X, invalid new Y] leaves neither the group nor X nor Y', async () => {
    const r = await adm<ErrorJson>(s, 'POST', '/admin/quota/groups', {
      name: 'atomic',
      rules: [
        { name: 'atomic-x', limit: 10, subjects: ['size:all'] },
        { name: 'existing', limit: 10, subjects: ['size:all'] },
        { name: 'atomic-y', limit: 10, subjects: ['size:bogus'] },
      ],
    });
    assert.equal(r.status, 422, r.text);
    assert.ok(r.body.message.includes('size:bogus'), r.body.message);
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/atomic')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/atomic-x')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/atomic-y')).status, 404);
    const list = await adm<GroupJson[]>(s, 'GET', '/admin/quota/groups');
    assert.ok(!list.body.some((g) => g.name === 'atomic'));
    const rules = await adm<RuleJson[]>(s, 'GET', '/admin/quota/rules');
    assert.ok(!rules.body.some((x) => x.name === 'atomic-x' || x.name === 'atomic-y'));
    // The existing rule named in the failed request is untouched.
    assert.deepEqual((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/existing')).body, {
      name: 'existing',
      limit: 100,
      subjects: ['size:all'],
    });
    // And the same request without the bad entry now succeeds from scratch.
    const ok = await adm<GroupJson>(s, 'POST', '/admin/quota/groups', {
      name: 'atomic',
      rules: [{ name: 'atomic-x', limit: 10, subjects: ['size:all'] }],
    });
    assert.equal(ok.status, 201, ok.text);
  });

  it('answers 422 when the name is absent, and 400 for malformed JSON', async () => {
    let r = await adm<ErrorJson>(s, 'POST', '/admin/quota/groups', { rules: [] });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Name/);
    r = await s.api<ErrorJson>('POST', '/admin/quota/groups', { token: s.admin.token, raw: '{"name": "x"' });
    assert.equal(r.status, 400, r.text);
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/x')).status, 404);
  });

  it('lists every group with its rules', async () => {
    const r = await adm<GroupJson[]>(s, 'GET', '/admin/quota/groups');
    assert.equal(r.status, 200, r.text);
    const byName = new Map(r.body.map((g) => [g.name, g]));
    assert.deepEqual([...byName.keys()].sort(), [
      'atomic',
      'empty',
      'mixed',
      'reuser',
      'reuser-2',
      'starter',
      'zero',
    ]);
    assert.deepEqual(byName.get('empty'), { name: 'empty', rules: [] });
    assert.deepEqual(byName.get('reuser'), {
      name: 'reuser',
      rules: [{ name: 'existing', limit: 100, subjects: ['size:all'] }],
    });
    assert.deepEqual(
      byName
        .get('starter')!
        .rules.map((x) => x.name)
        .sort(),
      ['starter-assets', 'starter-git'],
    );
    assert.deepEqual(byName.get('zero')!.rules, [
      { name: 'zero-rule', limit: 0, subjects: ['size:assets:packages:all'] },
    ]);
  });

  it('GET of an unknown group is 404', async () => {
    const r = await adm<ErrorJson>(s, 'GET', '/admin/quota/groups/no-such-group');
    assert.equal(r.status, 404, r.text);
  });

  it('DELETE answers 204, then 404; the group rules survive and its members lose it', async () => {
    const u = await s.createUser('grpdel');
    await setGroups(s, u.name, ['mixed', 'empty']);
    assertNoContent(await adm(s, 'DELETE', '/admin/quota/groups/mixed'), 'DELETE');
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/mixed')).status, 404);
    assert.equal((await adm(s, 'DELETE', '/admin/quota/groups/mixed')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/mixed/users')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/mixed-new')).status, 200);
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/existing')).status, 200);
    assert.deepEqual(groupNames(await adminInfo(s, u.name)), ['empty']);
    // The name can be used again, empty.
    assert.deepEqual(await createGroup(s, 'mixed'), { name: 'mixed', rules: [] });
  });

  it('DELETE of an unknown group is 404', async () => {
    const r = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/groups/never-was');
    assert.equal(r.status, 404, r.text);
  });
});

describe('quota group members and rules', () => {
  let s: TestServer;
  let alice: U;
  let bob: U;
  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await createRule(s, 'r-one', 10, ['size:all']);
    await createRule(s, 'r-two', 20, ['size:git:lfs']);
    await createGroup(s, 'team', [{ name: 'r-one' }]);
    await createGroup(s, 'other');
  });
  after(() => stop(s));

  describe('/admin/quota/groups/{quotagroup}/users', () => {
    it('lists no users of a fresh group, with X-Total-Count 0', async () => {
      const r = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, []);
      assert.equal(r.headers.get('x-total-count'), '0');
    });

    it('PUT adds a user: 204, then listed as a User object', async () => {
      assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/team/users/alice'), 'PUT');
      const r = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.length, 1);
      assert.equal(r.body[0]!.login, 'alice');
      assert.equal(r.body[0]!.id, alice.id);
      assert.equal(r.headers.get('x-total-count'), '1');
      assert.deepEqual(groupNames(await adminInfo(s, 'alice')), ['team']);
    });

    it('PUT answers 409 when the user is already in the group', async () => {
      const r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/team/users/alice');
      assert.equal(r.status, 409, r.text);
      assert.equal((await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users')).body.length, 1);
    });

    it('PUT answers 404 for an unknown group and for an unknown user', async () => {
      let r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/nope/users/alice');
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/team/users/nobody-here');
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/nope/users/nobody-here');
      assert.equal(r.status, 404, r.text);
      assert.equal((await adm(s, 'GET', '/admin/quota/groups/nope')).status, 404);
    });

    it('lists several users, paged, with X-Total-Count', async () => {
      assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/team/users/bob'), 'PUT');
      let r = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users');
      assert.deepEqual(r.body.map((u) => u.login).sort(), ['alice', 'bob']);
      assert.equal(r.body.find((u) => u.login === 'bob')?.id, bob.id);
      assert.equal(r.headers.get('x-total-count'), '2');
      r = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users?limit=1&page=2');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.length, 1);
      assert.equal(r.headers.get('x-total-count'), '2');
      // A user may be in several groups.
      assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/other/users/bob'), 'PUT');
      assert.deepEqual(groupNames(await adminInfo(s, 'bob')), ['other', 'team']);
    });

    it('GET answers 404 for an unknown group', async () => {
      const r = await adm<ErrorJson>(s, 'GET', '/admin/quota/groups/nope/users');
      assert.equal(r.status, 404, r.text);
    });

    it('DELETE removes a user: 204; again 404 since the user is no longer in the group', async () => {
      assertNoContent(await adm(s, 'DELETE', '/admin/quota/groups/team/users/bob'), 'DELETE');
      const r = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/team/users');
      assert.deepEqual(
        r.body.map((u) => u.login),
        ['alice'],
      );
      assert.deepEqual(groupNames(await adminInfo(s, 'bob')), ['other']);
      const again = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/groups/team/users/bob');
      assert.equal(again.status, 404, again.text);
    });

    it('DELETE answers 404 for a user never in the group, an unknown group and an unknown user', async () => {
      assert.equal((await adm(s, 'DELETE', '/admin/quota/groups/other/users/alice')).status, 404);
      assert.equal((await adm(s, 'DELETE', '/admin/quota/groups/nope/users/alice')).status, 404);
      assert.equal((await adm(s, 'DELETE', '/admin/quota/groups/team/users/nobody-here')).status, 404);
      assert.deepEqual(groupNames(await adminInfo(s, 'alice')), ['team']);
    });
  });

  describe('/admin/quota/groups/{quotagroup}/rules/{quotarule}', () => {
    it('PUT adds a rule: 204, then the group has it', async () => {
      assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/team/rules/r-two'), 'PUT');
      const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/team');
      assert.deepEqual(
        [...g.body.rules].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')),
        [
          { name: 'r-one', limit: 10, subjects: ['size:all'] },
          { name: 'r-two', limit: 20, subjects: ['size:git:lfs'] },
        ],
      );
    });

    it('PUT answers 409 when the rule is already in the group', async () => {
      const r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/team/rules/r-one');
      assert.equal(r.status, 409, r.text);
      assert.equal((await adm<GroupJson>(s, 'GET', '/admin/quota/groups/team')).body.rules.length, 2);
    });

    it('PUT answers 422 when the rule does not exist, and 404 for an unknown group', async () => {
      let r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/team/rules/no-rule');
      assert.equal(r.status, 422, r.text);
      assert.equal((await adm(s, 'GET', '/admin/quota/rules/no-rule')).status, 404);
      r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/nope/rules/r-one');
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/nope/rules/no-rule');
      assert.equal(r.status, 404, r.text);
    });

    it('a rule can be in several groups', async () => {
      assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/other/rules/r-one'), 'PUT');
      const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/other');
      assert.deepEqual(g.body.rules, [{ name: 'r-one', limit: 10, subjects: ['size:all'] }]);
    });

    it('DELETE removes a rule: 204 (not 201) with an empty body; the rule itself survives', async () => {
      const r = await adm(s, 'DELETE', '/admin/quota/groups/team/rules/r-two');
      assert.notEqual(r.status, 201);
      assertNoContent(r, 'DELETE');
      const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/team');
      assert.deepEqual(g.body.rules, [{ name: 'r-one', limit: 10, subjects: ['size:all'] }]);
      assert.equal((await adm(s, 'GET', '/admin/quota/rules/r-two')).status, 200);
      // Only that group lost it.
      const other = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/other');
      assert.deepEqual(
        other.body.rules.map((x) => x.name),
        ['r-one'],
      );
    });

    it('DELETE answers 404 when the rule is not in the group, is unknown, or the group is unknown', async () => {
      let r = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/groups/team/rules/r-two');
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/groups/team/rules/no-rule');
      assert.equal(r.status, 404, r.text);
      r = await adm<ErrorJson>(s, 'DELETE', '/admin/quota/groups/nope/rules/r-one');
      assert.equal(r.status, 404, r.text);
    });
  });

  describe('POST /admin/users/{username}/quota/groups', () => {
    before(async () => {
      await createGroup(s, 'ga', [{ name: 'r-one' }]);
      await createGroup(s, 'gb', [{ name: 'r-two' }]);
      await s.createUser('carol');
    });

    const usersOf = async (group: string) =>
      (await adm<UserJson[]>(s, 'GET', `/admin/quota/groups/${group}/users`)).body.map((u) => u.login);

    it('sets the groups: 204, visible in the user quota and in each group users', async () => {
      const r = await adm(s, 'POST', '/admin/users/carol/quota/groups', { groups: ['ga', 'gb'] });
      assertNoContent(r, 'POST');
      const info = await adminInfo(s, 'carol');
      assert.deepEqual(groupNames(info), ['ga', 'gb']);
      assert.ok((await usersOf('ga')).includes('carol'));
      assert.ok((await usersOf('gb')).includes('carol'));
    });

    it('replaces the whole list: [ga, gb] then [gb] leaves only gb', async () => {
      assertNoContent(await adm(s, 'POST', '/admin/users/carol/quota/groups', { groups: ['gb'] }), 'POST');
      assert.deepEqual(groupNames(await adminInfo(s, 'carol')), ['gb']);
      assert.ok(!(await usersOf('ga')).includes('carol'));
      assert.ok((await usersOf('gb')).includes('carol'));
    });

    it('answers 422 when any named group does not exist, and nothing changes', async () => {
      const r = await adm<ErrorJson>(s, 'POST', '/admin/users/carol/quota/groups', {
        groups: ['ga', 'no-such-group'],
      });
      assert.equal(r.status, 422, r.text);
      assert.ok(r.body.message.includes('no-such-group'), r.body.message);
      assert.deepEqual(groupNames(await adminInfo(s, 'carol')), ['gb']);
      assert.ok(!(await usersOf('ga')).includes('carol'));
      assert.ok((await usersOf('gb')).includes('carol'));
      assert.equal((await adm(s, 'GET', '/admin/quota/groups/no-such-group')).status, 404);
    });

    it('ignores a repeated name', async () => {
      assertNoContent(
        await adm(s, 'POST', '/admin/users/carol/quota/groups', { groups: ['ga', 'ga', 'gb'] }),
        'POST',
      );
      assert.deepEqual(groupNames(await adminInfo(s, 'carol')), ['ga', 'gb']);
      assert.deepEqual(
        (await usersOf('ga')).filter((n) => n === 'carol'),
        ['carol'],
      );
    });

    it('an empty list removes the user from every group', async () => {
      assertNoContent(await adm(s, 'POST', '/admin/users/carol/quota/groups', { groups: [] }), 'POST');
      assert.deepEqual(groupNames(await adminInfo(s, 'carol')), []);
      assert.ok(!(await usersOf('ga')).includes('carol'));
      assert.ok(!(await usersOf('gb')).includes('carol'));
    });

    it('does not touch other users', async () => {
      assert.deepEqual(groupNames(await adminInfo(s, 'alice')), ['team']);
      assert.deepEqual(groupNames(await adminInfo(s, 'bob')), ['other']);
    });

    it('answers 404 for an unknown user', async () => {
      const r = await adm<ErrorJson>(s, 'POST', '/admin/users/nobody-here/quota/groups', { groups: ['ga'] });
      assert.equal(r.status, 404, r.text);
      assert.deepEqual(await usersOf('ga'), []);
    });

    it('answers 422 when groups is absent, and 400 for malformed JSON', async () => {
      let r = await adm<ErrorJson>(s, 'POST', '/admin/users/carol/quota/groups', {});
      assert.equal(r.status, 422, r.text);
      assert.match(r.body.message, /Groups/);
      r = await s.api<ErrorJson>('POST', '/admin/users/carol/quota/groups', {
        token: s.admin.token,
        raw: '{"groups": ["ga"',
      });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(groupNames(await adminInfo(s, 'carol')), []);
    });
  });

  describe('GET /admin/users/{username}/quota', () => {
    it("reports Forgejo's QuotaUsed shape, all zero for a new user, and no groups", async () => {
      const dave = await s.createUser('dave');
      const r = await adm<QuotaInfoJson>(s, 'GET', '/admin/users/dave/quota');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { used: ZERO_USED, groups: [] });
      assert.ok(dave.id > 0);
    });

    it('maps each stored subject to its place in used', async () => {
      const erin = await s.createUser('erin');
      await addUsage(s, erin.id, 'size:repos:public', 1);
      await addUsage(s, erin.id, 'size:repos:private', 2);
      await addUsage(s, erin.id, 'size:git:lfs', 3);
      await addUsage(s, erin.id, 'size:assets:attachments:issues', 4);
      await addUsage(s, erin.id, 'size:assets:attachments:releases', 5);
      await addUsage(s, erin.id, 'size:assets:artifacts', 6);
      await addUsage(s, erin.id, 'size:assets:packages:all', 7 * 1024 ** 3);
      await addUsage(s, erin.id, 'size:assets:artifacts', 10);
      const info = await adminInfo(s, 'erin');
      assert.deepEqual(info.used, {
        size: {
          repos: { public: 1, private: 2 },
          git: { LFS: 3 },
          assets: {
            attachments: { issues: 4, releases: 5 },
            artifacts: 16,
            packages: { all: 7 * 1024 ** 3 },
          },
        },
      });
      // Negative deltas (removals) subtract.
      await addUsage(s, erin.id, 'size:assets:artifacts', -16);
      assert.equal((await adminInfo(s, 'erin')).used.size.assets.artifacts, 0);
    });

    it('lists the groups with their rule names', async () => {
      await setGroups(s, 'erin', ['team', 'gb']);
      const info = await adminInfo(s, 'erin');
      const byName = new Map(info.groups.map((g) => [g.name, g]));
      assert.deepEqual([...byName.keys()].sort(), ['gb', 'team']);
      assert.deepEqual(byName.get('team')!.rules, [{ name: 'r-one', limit: 10, subjects: ['size:all'] }]);
      assert.deepEqual(byName.get('gb')!.rules, [{ name: 'r-two', limit: 20, subjects: ['size:git:lfs'] }]);
    });

    it('answers 404 for an unknown user', async () => {
      const r = await adm<ErrorJson>(s, 'GET', '/admin/users/nobody-here/quota');
      assert.equal(r.status, 404, r.text);
    });

    it('resolves user names case-insensitively, as every user path does', async () => {
      const r = await adm<QuotaInfoJson>(s, 'GET', '/admin/users/ERIN/quota');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(groupNames(r.body), ['gb', 'team']);
      const dup = await adm<ErrorJson>(s, 'PUT', '/admin/quota/groups/team/users/Erin');
      assert.equal(dup.status, 409, dup.text);
    });

    it('a deleted user leaves every group and its usage goes with it', async () => {
      const gone = await s.createUser('gone');
      await setGroups(s, 'gone', ['team', 'gb']);
      await addUsage(s, gone.id, 'size:git:lfs', 99);
      const d = await adm(s, 'DELETE', '/admin/users/gone');
      assertNoContent(d, 'DELETE user');
      for (const g of ['team', 'gb']) {
        const users = await adm<UserJson[]>(s, 'GET', `/admin/quota/groups/${g}/users`);
        assert.ok(!users.body.some((u) => u.login === 'gone'), g);
      }
      assert.equal((await adm(s, 'GET', '/admin/users/gone/quota')).status, 404);
      // A new account of the same name starts from nothing.
      await s.createUser('gone');
      assert.deepEqual(await adminInfo(s, 'gone'), { used: ZERO_USED, groups: [] });
    });
  });
});

describe('quota administration permissions', () => {
  let s: TestServer;
  let plain: U;
  let reader: U;
  let writer: U;
  let adminNoAdminScope: U;

  before(async () => {
    s = await startServer();
    plain = await s.createUser('plain');
    reader = await s.createUser('reader', { admin: true, scopes: ['read:admin'] });
    writer = await s.createUser('writer', { admin: true, scopes: ['write:admin'] });
    adminNoAdminScope = await s.createUser('useronly', { admin: true, scopes: ['write:user'] });
    await createRule(s, 'perm-rule', 100, ['size:all']);
    await createGroup(s, 'perm-group', [{ name: 'perm-rule' }]);
  });
  after(() => stop(s));

  /** Every admin quota route, in an order in which a write:admin token can run them all. */
  const routes: Array<{ method: string; path: string; body?: unknown; ok: number }> = [
    { method: 'GET', path: '/admin/quota/rules', ok: 200 },
    {
      method: 'POST',
      path: '/admin/quota/rules',
      body: { name: 'perm-new', limit: 1, subjects: ['size:all'] },
      ok: 201,
    },
    { method: 'GET', path: '/admin/quota/rules/perm-rule', ok: 200 },
    { method: 'PATCH', path: '/admin/quota/rules/perm-rule', body: { limit: 2 }, ok: 200 },
    { method: 'GET', path: '/admin/quota/groups', ok: 200 },
    { method: 'POST', path: '/admin/quota/groups', body: { name: 'perm-new-group' }, ok: 201 },
    { method: 'GET', path: '/admin/quota/groups/perm-group', ok: 200 },
    { method: 'GET', path: '/admin/quota/groups/perm-group/users', ok: 200 },
    { method: 'PUT', path: '/admin/quota/groups/perm-group/users/plain', ok: 204 },
    { method: 'DELETE', path: '/admin/quota/groups/perm-group/users/plain', ok: 204 },
    { method: 'PUT', path: '/admin/quota/groups/perm-group/rules/perm-new', ok: 204 },
    { method: 'DELETE', path: '/admin/quota/groups/perm-group/rules/perm-new', ok: 204 },
    { method: 'POST', path: '/admin/users/plain/quota/groups', body: { groups: ['perm-group'] }, ok: 204 },
    { method: 'GET', path: '/admin/users/plain/quota', ok: 200 },
    { method: 'DELETE', path: '/admin/quota/groups/perm-new-group', ok: 204 },
    { method: 'DELETE', path: '/admin/quota/rules/perm-new', ok: 204 },
  ];

  async function assertUntouched(): Promise<void> {
    assert.equal((await adm(s, 'GET', '/admin/quota/rules/perm-new')).status, 404);
    assert.equal((await adm(s, 'GET', '/admin/quota/groups/perm-new-group')).status, 404);
    assert.deepEqual((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/perm-rule')).body, {
      name: 'perm-rule',
      limit: 100,
      subjects: ['size:all'],
    });
    assert.deepEqual((await adm<GroupJson>(s, 'GET', '/admin/quota/groups/perm-group')).body.rules, [
      { name: 'perm-rule', limit: 100, subjects: ['size:all'] },
    ]);
    assert.deepEqual(groupNames(await adminInfo(s, 'plain')), []);
  }

  it('answers 401 to anonymous callers on every route', async () => {
    for (const r of routes) {
      const res = await s.api<ErrorJson>(r.method, r.path, { body: r.body });
      assert.equal(res.status, 401, `${r.method} ${r.path}: ${res.text}`);
    }
    await assertUntouched();
  });

  it('answers 401 to a wrong token or wrong password', async () => {
    let res = await s.api('GET', '/admin/quota/rules', { token: 'f'.repeat(40) });
    assert.equal(res.status, 401, res.text);
    res = await s.api('GET', '/admin/quota/rules', { basic: ['root', 'wrong-password'] });
    assert.equal(res.status, 401, res.text);
  });

  it('answers 403 to a signed-in non-admin on every route (token and password)', async () => {
    for (const r of routes) {
      let res = await s.api<ErrorJson>(r.method, r.path, { token: plain.token, body: r.body });
      assert.equal(res.status, 403, `${r.method} ${r.path} (token): ${res.text}`);
      res = await s.api<ErrorJson>(r.method, r.path, { basic: [plain.name, plain.password], body: r.body });
      assert.equal(res.status, 403, `${r.method} ${r.path} (basic): ${res.text}`);
    }
    await assertUntouched();
  });

  it('answers 403 (not 404 or 422) to a non-admin naming things that do not exist or sending bad bodies', async () => {
    const probes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/quota/rules/ghost'],
      ['DELETE', '/admin/quota/groups/ghost'],
      ['PUT', '/admin/quota/groups/ghost/users/ghost'],
      ['PUT', '/admin/quota/groups/perm-group/rules/ghost'],
      ['GET', '/admin/users/ghost/quota'],
      ['POST', '/admin/quota/rules', { name: 'x', subjects: ['size:bogus'] }],
      ['POST', '/admin/users/plain/quota/groups', { groups: ['ghost'] }],
    ];
    for (const [method, path, body] of probes) {
      const res = await s.api(method, path, { token: plain.token, body });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      const anon = await s.api(method, path, { body });
      assert.equal(anon.status, 401, `${method} ${path} anonymous: ${anon.text}`);
    }
  });

  it('a read:admin token can GET every route, but gets 403 on POST/PUT/PATCH/DELETE', async () => {
    for (const r of routes) {
      const res = await s.api<ErrorJson>(r.method, r.path, { token: reader.token, body: r.body });
      if (r.method === 'GET') assert.equal(res.status, r.ok, `${r.method} ${r.path}: ${res.text}`);
      else assert.equal(res.status, 403, `${r.method} ${r.path}: ${res.text}`);
    }
    await assertUntouched();
  });

  it("an admin's token without an admin scope gets 403 everywhere", async () => {
    for (const r of routes) {
      const res = await s.api(r.method, r.path, { token: adminNoAdminScope.token, body: r.body });
      assert.equal(res.status, 403, `${r.method} ${r.path}: ${res.text}`);
    }
    await assertUntouched();
  });

  it('an administrator acting as a non-admin through Sudo gets 403', async () => {
    let res = await s.api('GET', '/admin/quota/rules', { token: s.admin.token, headers: { Sudo: 'plain' } });
    assert.equal(res.status, 403, res.text);
    res = await s.api('GET', '/admin/quota/rules?sudo=plain', { token: s.admin.token });
    assert.equal(res.status, 403, res.text);
    // And a non-admin cannot use Sudo to become the administrator.
    res = await s.api('GET', '/admin/quota/rules', { token: plain.token, headers: { Sudo: 'root' } });
    assert.equal(res.status, 403, res.text);
  });

  it("an admin's password (basic auth, scope all) is accepted", async () => {
    const res = await s.api<RuleJson[]>('GET', '/admin/quota/rules', { basic: ['root', s.admin.password] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.map((r) => r.name),
      ['perm-rule'],
    );
  });

  it('a write:admin token can do everything', async () => {
    for (const r of routes) {
      const res = await s.api(r.method, r.path, { token: writer.token, body: r.body });
      assert.equal(res.status, r.ok, `${r.method} ${r.path}: ${res.text}`);
    }
    assert.equal((await adm<RuleJson>(s, 'GET', '/admin/quota/rules/perm-rule')).body.limit, 2);
    assert.deepEqual(groupNames(await adminInfo(s, 'plain')), ['perm-group']);
  });
});

describe('user-side quota views: /user/quota and /orgs/{org}/quota', () => {
  let s: TestServer;
  let alice: U;
  let bob: U;
  let acme: { id: number; name: string };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await createGroup(s, 'visible', [{ name: 'secret-rule', limit: 1000, subjects: ['size:all'] }]);
    await setGroups(s, 'alice', ['visible']);
    await setGroups(s, 'root', ['visible']);
    acme = await createOrg(s, alice, 'acme');
    await createOrg(s, alice, 'hidden', { visibility: 'private' });
  });
  after(() => stop(s));

  it('GET /user/quota shows usage and groups, hiding rule names from non-admins', async () => {
    await addUsage(s, alice.id, 'size:git:lfs', 42);
    const r = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: alice.token });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.used.size.git.LFS, 42);
    assert.equal(r.body.used.size.assets.artifacts, 0);
    assert.equal(r.body.groups.length, 1);
    assert.equal(r.body.groups[0]!.name, 'visible');
    const rule = r.body.groups[0]!.rules[0]!;
    assert.ok(!('name' in rule), `no name key for a non-admin: ${JSON.stringify(rule)}`);
    assert.deepEqual(rule, { limit: 1000, subjects: ['size:all'] });
    assert.ok(!r.text.includes('secret-rule'));
  });

  it('GET /user/quota shows rule names to an administrator', async () => {
    const r = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: s.admin.token });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.groups, [
      { name: 'visible', rules: [{ name: 'secret-rule', limit: 1000, subjects: ['size:all'] }] },
    ]);
    assert.deepEqual(r.body.used, ZERO_USED);
  });

  it('GET /user/quota of a user without groups has an empty group list', async () => {
    const r = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: bob.token });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { used: ZERO_USED, groups: [] });
  });

  it('GET /user/quota/check answers a JSON boolean', async () => {
    assert.equal(await check(s, alice.token, 'size:all'), true);
    assert.equal(await check(s, alice.token, 'size:git:lfs'), true);
    await addUsage(s, alice.id, 'size:git:lfs', 1000);
    assert.equal(await check(s, alice.token, 'size:all'), false);
    assert.equal(await check(s, alice.token, 'size:git:lfs'), false);
    assert.equal(await check(s, alice.token, 'size:wiki'), true);
    await addUsage(s, alice.id, 'size:git:lfs', -1000);
    assert.equal(await check(s, alice.token, 'size:all'), true);
  });

  it('GET /user/quota/check answers 422 for an unknown subject (naming it) and a missing one', async () => {
    let r = await s.api<ErrorJson>('GET', '/user/quota/check?subject=size:bogus', { token: alice.token });
    assert.equal(r.status, 422, r.text);
    assert.ok(r.body.message.includes('size:bogus'), r.body.message);
    r = await s.api<ErrorJson>('GET', '/user/quota/check', { token: alice.token });
    assert.equal(r.status, 422, r.text);
    r = await s.api<ErrorJson>('GET', '/user/quota/check?subject=', { token: alice.token });
    assert.equal(r.status, 422, r.text);
  });

  for (const kind of ['attachments', 'artifacts', 'packages']) {
    it(`GET /user/quota/${kind} lists nothing yet, with X-Total-Count 0`, async () => {
      const r = await s.api<unknown[]>('GET', `/user/quota/${kind}`, { token: alice.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, []);
      assert.equal(r.headers.get('x-total-count'), '0');
      const paged = await s.api<unknown[]>('GET', `/user/quota/${kind}?page=2&limit=5`, {
        token: alice.token,
      });
      assert.equal(paged.status, 200, paged.text);
      assert.deepEqual(paged.body, []);
    });
  }

  const userPaths = [
    '/user/quota',
    '/user/quota/check?subject=size:all',
    '/user/quota/attachments',
    '/user/quota/artifacts',
    '/user/quota/packages',
  ];

  it('answers 401 without credentials, and with a bad token', async () => {
    for (const p of userPaths) {
      let r = await s.api('GET', p);
      assert.equal(r.status, 401, `${p}: ${r.text}`);
      r = await s.api('GET', p, { token: '0'.repeat(40) });
      assert.equal(r.status, 401, `${p} (bad token): ${r.text}`);
    }
  });

  it('accepts basic authentication and answers 403 to a token without a user scope', async () => {
    const narrow = await s.api<{ sha1: string }>('POST', '/users/bob/tokens', {
      basic: [bob.name, bob.password],
      body: { name: 'repo-only', scopes: ['read:repository'] },
    });
    assert.equal(narrow.status, 201, narrow.text);
    for (const p of userPaths) {
      let r = await s.api('GET', p, { basic: [bob.name, bob.password] });
      assert.equal(r.status, 200, `${p} (basic): ${r.text}`);
      r = await s.api('GET', p, { token: narrow.body.sha1 });
      assert.equal(r.status, 403, `${p} (read:repository): ${r.text}`);
    }
  });

  describe('/orgs/{org}/quota', () => {
    const orgPaths = (org: string) => [
      `/orgs/${org}/quota`,
      `/orgs/${org}/quota/check?subject=size:all`,
      `/orgs/${org}/quota/attachments`,
      `/orgs/${org}/quota/artifacts`,
      `/orgs/${org}/quota/packages`,
    ];

    it('answers 200 to members and to site administrators', async () => {
      for (const p of orgPaths('acme')) {
        let r = await s.api('GET', p, { token: alice.token });
        assert.equal(r.status, 200, `${p} (member): ${r.text}`);
        r = await s.api('GET', p, { token: s.admin.token });
        assert.equal(r.status, 200, `${p} (admin): ${r.text}`);
      }
    });

    it("shows the organization's own usage and groups, with the same shape", async () => {
      const r = await s.api<QuotaInfoJson>('GET', '/orgs/acme/quota', { token: alice.token });
      assert.deepEqual(r.body, { used: ZERO_USED, groups: [] });
      assert.equal(await check(s, alice.token, 'size:all', '/orgs/acme/quota'), true);
      for (const kind of ['attachments', 'artifacts', 'packages']) {
        const l = await s.api<unknown[]>('GET', `/orgs/acme/quota/${kind}`, { token: alice.token });
        assert.deepEqual(l.body, []);
        assert.equal(l.headers.get('x-total-count'), '0');
      }
    });

    it('answers 403 to signed-in non-members of a visible organization', async () => {
      for (const p of orgPaths('acme')) {
        const r = await s.api('GET', p, { token: bob.token });
        assert.equal(r.status, 403, `${p}: ${r.text}`);
      }
    });

    it('answers 404 for an unknown organization, and for a private one the caller cannot see', async () => {
      for (const p of orgPaths('no-such-org')) {
        const r = await s.api('GET', p, { token: alice.token });
        assert.equal(r.status, 404, `${p}: ${r.text}`);
      }
      for (const p of orgPaths('hidden')) {
        let r = await s.api('GET', p, { token: bob.token });
        assert.equal(r.status, 404, `${p} (outsider): ${r.text}`);
        r = await s.api('GET', p, { token: alice.token });
        assert.equal(r.status, 200, `${p} (member): ${r.text}`);
      }
      // A user is not an organization.
      const r = await s.api('GET', '/orgs/bob/quota', { token: bob.token });
      assert.equal(r.status, 404, r.text);
    });

    it('answers 401 without credentials', async () => {
      for (const p of orgPaths('acme')) {
        const r = await s.api('GET', p);
        assert.equal(r.status, 401, `${p}: ${r.text}`);
      }
    });

    it('check answers 422 for an unknown or missing subject', async () => {
      let r = await s.api<ErrorJson>('GET', '/orgs/acme/quota/check?subject=size:nothing', {
        token: alice.token,
      });
      assert.equal(r.status, 422, r.text);
      assert.ok(r.body.message.includes('size:nothing'), r.body.message);
      r = await s.api('GET', '/orgs/acme/quota/check', { token: alice.token });
      assert.equal(r.status, 422, r.text);
    });

    it('counts usage per owner: the organization sees its usage, its members do not', async () => {
      await addUsage(s, acme.id, 'size:assets:artifacts', 777);
      await addUsage(s, acme.id, 'size:repos:private', 5);
      const org = await s.api<QuotaInfoJson>('GET', '/orgs/acme/quota', { token: alice.token });
      assert.equal(org.status, 200, org.text);
      assert.equal(org.body.used.size.assets.artifacts, 777);
      assert.equal(org.body.used.size.repos.private, 5);
      const admin = await adminInfo(s, 'acme');
      assert.equal(admin.used.size.assets.artifacts, 777);
      const mine = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: alice.token });
      assert.equal(mine.body.used.size.assets.artifacts, 0);
      assert.equal(mine.body.used.size.repos.private, 0);
      assert.equal(mine.body.used.size.git.LFS, 42);
      assert.deepEqual((await adminInfo(s, 'root')).used, ZERO_USED);
    });

    it("evaluates the organization's checks against the organization's groups and usage", async () => {
      await createGroup(s, 'org-tight', [
        { name: 'org-tight-rule', limit: 100, subjects: ['size:assets:all'] },
      ]);
      await setGroups(s, 'acme', ['org-tight']);
      assert.deepEqual(groupNames(await adminInfo(s, 'acme')), ['org-tight']);
      assert.equal(await check(s, alice.token, 'size:assets:artifacts', '/orgs/acme/quota'), false);
      assert.equal(await check(s, alice.token, 'size:repos:all', '/orgs/acme/quota'), true);
      // The member's own check is against the member's own groups and usage.
      assert.equal(await check(s, alice.token, 'size:assets:artifacts'), true);
      const org = await s.api<QuotaInfoJson>('GET', '/orgs/acme/quota', { token: alice.token });
      assert.deepEqual(org.body.groups, [
        { name: 'org-tight', rules: [{ limit: 100, subjects: ['size:assets:all'] }] },
      ]);
    });
  });
});

describe('quota evaluation through the API', () => {
  let s: TestServer;
  let n = 0;

  before(async () => {
    s = await startServer();
  });
  after(() => stop(s));

  /** A fresh user in `groups` (none: no groups at all). */
  async function userIn(...groups: string[]): Promise<U> {
    const u = await s.createUser(`eval${++n}`);
    if (groups.length) await setGroups(s, u.name, groups);
    return u;
  }

  it('a user with no groups and no default groups is unlimited', async () => {
    const u = await userIn();
    await addUsage(s, u.id, 'size:assets:artifacts', 10 * 1024 ** 4);
    await addUsage(s, u.id, 'size:git:lfs', 10 * 1024 ** 4);
    for (const subject of ['size:all', 'size:assets:artifacts', 'size:git:all', 'size:wiki'])
      assert.equal(await check(s, u.token, subject), true, subject);
  });

  it('a rule stands when the usage is within (<=) its limit', async () => {
    await createGroup(s, 'all-100', [{ name: 'all-100', limit: 100, subjects: ['size:all'] }]);
    const u = await userIn('all-100');
    assert.equal(await check(s, u.token, 'size:all'), true);
    await addUsage(s, u.id, 'size:assets:artifacts', 100);
    assert.equal(await check(s, u.token, 'size:all'), true, 'exactly at the limit');
    await addUsage(s, u.id, 'size:assets:artifacts', 1);
    assert.equal(await check(s, u.token, 'size:all'), false, 'one byte over');
  });

  it('limit 0 allows nothing, -1 allows everything', async () => {
    await createGroup(s, 'zero', [{ name: 'zero', limit: 0, subjects: ['size:all'] }]);
    await createGroup(s, 'unlimited', [{ name: 'unlimited', limit: -1, subjects: ['size:all'] }]);
    const z = await userIn('zero');
    assert.equal(await check(s, z.token, 'size:all'), true, 'nothing used yet');
    await addUsage(s, z.id, 'size:repos:public', 1);
    assert.equal(await check(s, z.token, 'size:all'), false);
    const u = await userIn('unlimited');
    await addUsage(s, u.id, 'size:repos:public', 50 * 1024 ** 4);
    assert.equal(await check(s, u.token, 'size:all'), true);
    assert.equal(await check(s, u.token, 'size:repos:public'), true);
  });

  it('a rule on size:all limits checks of every tracked subject below it', async () => {
    const u = await userIn('all-100');
    await addUsage(s, u.id, 'size:git:lfs', 150);
    for (const subject of [
      'size:all',
      'size:assets:artifacts',
      'size:assets:all',
      'size:repos:public',
      'size:git:all',
      'size:assets:attachments:issues',
    ])
      assert.equal(await check(s, u.token, subject), false, subject);
    assert.equal(await check(s, u.token, 'size:wiki'), true);
  });

  it('the usage of every subject counts toward a size:all rule', async () => {
    const u = await userIn('all-100');
    const leaves: LeafSubject[] = [
      'size:repos:public',
      'size:repos:private',
      'size:git:lfs',
      'size:assets:attachments:issues',
      'size:assets:attachments:releases',
      'size:assets:artifacts',
      'size:assets:packages:all',
    ];
    for (const leaf of leaves) await addUsage(s, u.id, leaf, 14); // 98 in all
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    await addUsage(s, u.id, 'size:repos:private', 3); // 101
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
  });

  it('a rule on size:git:lfs limits size:git:lfs, size:git:all and size:all, not unrelated subjects', async () => {
    await createGroup(s, 'lfs-100', [{ name: 'lfs-100', limit: 100, subjects: ['size:git:lfs'] }]);
    const u = await userIn('lfs-100');
    await addUsage(s, u.id, 'size:git:lfs', 150);
    assert.equal(await check(s, u.token, 'size:git:lfs'), false);
    assert.equal(await check(s, u.token, 'size:git:all'), false);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    assert.equal(await check(s, u.token, 'size:assets:all'), true);
    assert.equal(await check(s, u.token, 'size:repos:all'), true);
    assert.equal(await check(s, u.token, 'size:repos:public'), true);
  });

  it('a rule on size:git:lfs ignores usage of other subjects', async () => {
    const u = await userIn('lfs-100');
    await addUsage(s, u.id, 'size:repos:public', 1000);
    await addUsage(s, u.id, 'size:assets:artifacts', 1000);
    await addUsage(s, u.id, 'size:git:lfs', 100);
    for (const subject of ['size:git:lfs', 'size:git:all', 'size:all', 'size:repos:public'])
      assert.equal(await check(s, u.token, subject), true, subject);
  });

  it('a rule on a parent sums its children: size:repos:all over public + private', async () => {
    await createGroup(s, 'repos-100', [{ name: 'repos-100', limit: 100, subjects: ['size:repos:all'] }]);
    const u = await userIn('repos-100');
    await addUsage(s, u.id, 'size:repos:public', 60);
    await addUsage(s, u.id, 'size:repos:private', 40);
    assert.equal(await check(s, u.token, 'size:repos:public'), true);
    await addUsage(s, u.id, 'size:repos:private', 1);
    assert.equal(await check(s, u.token, 'size:repos:public'), false);
    assert.equal(await check(s, u.token, 'size:repos:private'), false);
    assert.equal(await check(s, u.token, 'size:git:all'), false);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assert.equal(await check(s, u.token, 'size:git:lfs'), true);
    assert.equal(await check(s, u.token, 'size:assets:all'), true);
  });

  it('a rule sums all of its subjects together', async () => {
    await createGroup(s, 'pair-100', [
      { name: 'pair-100', limit: 100, subjects: ['size:assets:artifacts', 'size:assets:attachments:issues'] },
    ]);
    const u = await userIn('pair-100');
    await addUsage(s, u.id, 'size:assets:artifacts', 60);
    await addUsage(s, u.id, 'size:assets:attachments:issues', 30);
    await addUsage(s, u.id, 'size:assets:packages:all', 500);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    await addUsage(s, u.id, 'size:assets:attachments:issues', 11);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    assert.equal(await check(s, u.token, 'size:assets:attachments:issues'), false);
    assert.equal(await check(s, u.token, 'size:assets:attachments:all'), false);
    assert.equal(await check(s, u.token, 'size:assets:packages:all'), true);
  });

  describe("the spec's example: rule A (release attachments + packages + LFS), rule B (packages)", () => {
    before(async () => {
      await createGroup(s, 'example', [
        {
          name: 'rule-a',
          limit: 100,
          subjects: ['size:assets:attachments:releases', 'size:assets:packages:all', 'size:git:lfs'],
        },
        { name: 'rule-b', limit: 50, subjects: ['size:assets:packages:all'] },
      ]);
    });

    it('within both rules: true', async () => {
      const u = await userIn('example');
      await addUsage(s, u.id, 'size:assets:packages:all', 40);
      await addUsage(s, u.id, 'size:assets:attachments:releases', 30);
      await addUsage(s, u.id, 'size:git:lfs', 30);
      for (const subject of [
        'size:assets:packages:all',
        'size:assets:attachments:releases',
        'size:git:lfs',
        'size:all',
      ])
        assert.equal(await check(s, u.token, subject), true, subject);
    });

    it('over rule B alone (packages 60 > 50, A at 60 <= 100): false', async () => {
      const u = await userIn('example');
      await addUsage(s, u.id, 'size:assets:packages:all', 60);
      assert.equal(await check(s, u.token, 'size:assets:packages:all'), false);
      assert.equal(await check(s, u.token, 'size:assets:all'), false);
      assert.equal(await check(s, u.token, 'size:all'), false);
      // Release attachments are only under rule A, which stands.
      assert.equal(await check(s, u.token, 'size:assets:attachments:releases'), true);
    });

    it('over rule A alone (releases 90 + LFS 20 > 100, packages 0): false', async () => {
      const u = await userIn('example');
      await addUsage(s, u.id, 'size:assets:attachments:releases', 90);
      await addUsage(s, u.id, 'size:git:lfs', 20);
      assert.equal(await check(s, u.token, 'size:assets:packages:all'), false);
      assert.equal(await check(s, u.token, 'size:assets:attachments:releases'), false);
      assert.equal(await check(s, u.token, 'size:git:lfs'), false);
      assert.equal(await check(s, u.token, 'size:all'), false);
      // Neither rule covers issue attachments or artifacts.
      assert.equal(await check(s, u.token, 'size:assets:attachments:issues'), true);
      assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    });
  });

  it('with several groups, any one group standing is enough', async () => {
    await createGroup(s, 'loose', [{ name: 'loose', limit: 1_000_000, subjects: ['size:all'] }]);
    const u = await userIn('all-100', 'loose');
    await addUsage(s, u.id, 'size:assets:artifacts', 5000);
    assert.equal(await check(s, u.token, 'size:all'), true);
    const v = await userIn('all-100', 'zero');
    await addUsage(s, v.id, 'size:assets:artifacts', 5000);
    assert.equal(await check(s, v.token, 'size:all'), false);
    // Leaving the loose group makes the tight one decide.
    await setGroups(s, u.name, ['all-100']);
    assert.equal(await check(s, u.token, 'size:all'), false);
  });

  it('a group whose rules do not cover the subject does not limit it', async () => {
    await createGroup(s, 'nothing');
    const u = await userIn('nothing');
    await addUsage(s, u.id, 'size:assets:artifacts', 10 ** 9);
    assert.equal(await check(s, u.token, 'size:all'), true);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
  });

  it('size:wiki is always within quota', async () => {
    await createGroup(s, 'wiki-0', [{ name: 'wiki-0', limit: 0, subjects: ['size:wiki', 'size:all'] }]);
    const u = await userIn('wiki-0');
    await addUsage(s, u.id, 'size:repos:public', 10);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assert.equal(await check(s, u.token, 'size:wiki'), true);
    const v = await userIn('zero');
    await addUsage(s, v.id, 'size:git:lfs', 10);
    assert.equal(await check(s, v.token, 'size:wiki'), true);
  });

  it('checks follow rule and group changes immediately', async () => {
    await createGroup(s, 'live', [{ name: 'live', limit: 10, subjects: ['size:assets:artifacts'] }]);
    const u = await userIn('live');
    await addUsage(s, u.id, 'size:assets:artifacts', 20);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    let r = await adm(s, 'PATCH', '/admin/quota/rules/live', { limit: 20 });
    assert.equal(r.status, 200, r.text);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    r = await adm(s, 'PATCH', '/admin/quota/rules/live', { limit: 19 });
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    // Moving the rule to another subject frees artifacts.
    r = await adm(s, 'PATCH', '/admin/quota/rules/live', { subjects: ['size:git:lfs'] });
    assert.equal(r.status, 200, r.text);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    await adm(s, 'PATCH', '/admin/quota/rules/live', { subjects: ['size:assets:artifacts'] });
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    // Taking the rule out of the group, then deleting the group.
    assertNoContent(await adm(s, 'DELETE', '/admin/quota/groups/live/rules/live'), 'DELETE');
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    assertNoContent(await adm(s, 'PUT', '/admin/quota/groups/live/rules/live'), 'PUT');
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    assertNoContent(await adm(s, 'DELETE', '/admin/quota/rules/live'), 'DELETE');
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
  });
});

describe('default quota groups (ANVIL__QUOTA__DEFAULT_GROUPS)', () => {
  let s: TestServer;
  let u: U;

  before(async () => {
    s = await startServer({ ANVIL__QUOTA__DEFAULT_GROUPS: 'default-group' });
    u = await s.createUser('defaulted');
    await addUsage(s, u.id, 'size:assets:artifacts', 500);
  });
  after(() => stop(s));

  it('while the configured default group does not exist, a user without groups is unlimited', async () => {
    assert.equal(await check(s, u.token, 'size:all'), true);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    assert.deepEqual((await adminInfo(s, u.name)).groups, []);
  });

  it('once it exists, the default group limits a user with no groups of their own', async () => {
    await createGroup(s, 'default-group', [{ name: 'tight', limit: 100, subjects: ['size:all'] }]);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), false);
    assert.equal(await check(s, u.token, 'size:wiki'), true);
    // The default group is what applies, so it is what the quota info shows.
    assert.deepEqual(groupNames(await adminInfo(s, u.name)), ['default-group']);
    const mine = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: u.token });
    assert.deepEqual(
      mine.body.groups.map((g) => g.name),
      ['default-group'],
    );
    // Assigning nobody to it: it is not a membership.
    const members = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/default-group/users');
    assert.deepEqual(members.body, []);
  });

  it('within the default limit the check is true', async () => {
    const v = await s.createUser('defaulted-small');
    await addUsage(s, v.id, 'size:assets:artifacts', 99);
    assert.equal(await check(s, v.token, 'size:all'), true);
  });

  it('assigned groups replace the defaults: a loose group makes the check true', async () => {
    await createGroup(s, 'loose', [{ name: 'loose', limit: 10_000, subjects: ['size:all'] }]);
    await setGroups(s, u.name, ['loose']);
    assert.equal(await check(s, u.token, 'size:all'), true);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    assert.deepEqual(groupNames(await adminInfo(s, u.name)), ['loose']);
  });

  it('even a group that limits nothing replaces the defaults', async () => {
    await createGroup(s, 'no-rules');
    await setGroups(s, u.name, ['no-rules']);
    assert.equal(await check(s, u.token, 'size:all'), true);
    await createGroup(s, 'lfs-only', [{ name: 'lfs-only', limit: 1, subjects: ['size:git:lfs'] }]);
    await setGroups(s, u.name, ['lfs-only']);
    assert.equal(await check(s, u.token, 'size:assets:artifacts'), true);
    assert.equal(await check(s, u.token, 'size:git:lfs'), true);
  });

  it('being added to a group through PUT also replaces the defaults', async () => {
    const w = await s.createUser('defaulted-put');
    await addUsage(s, w.id, 'size:repos:private', 1000);
    assert.equal(await check(s, w.token, 'size:all'), false);
    assertNoContent(await adm(s, 'PUT', `/admin/quota/groups/loose/users/${w.name}`), 'PUT');
    assert.equal(await check(s, w.token, 'size:all'), true);
    assertNoContent(await adm(s, 'DELETE', `/admin/quota/groups/loose/users/${w.name}`), 'DELETE');
    assert.equal(await check(s, w.token, 'size:all'), false);
  });

  it('removing all of the user groups brings the defaults back', async () => {
    await setGroups(s, u.name, []);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assert.deepEqual(groupNames(await adminInfo(s, u.name)), ['default-group']);
  });

  it('the default group can itself be assigned; a tight assigned group does not fall back', async () => {
    await createGroup(s, 'tighter', [{ name: 'tighter', limit: 10, subjects: ['size:all'] }]);
    await setGroups(s, u.name, ['tighter']);
    assert.equal(await check(s, u.token, 'size:all'), false);
    await setGroups(s, u.name, ['tighter', 'loose']);
    assert.equal(await check(s, u.token, 'size:all'), true);
  });

  it('when the default group is deleted, users without groups are unlimited again', async () => {
    await setGroups(s, u.name, []);
    assert.equal(await check(s, u.token, 'size:all'), false);
    assertNoContent(await adm(s, 'DELETE', '/admin/quota/groups/default-group'), 'DELETE');
    assert.equal(await check(s, u.token, 'size:all'), true);
    assert.deepEqual((await adminInfo(s, u.name)).groups, []);
  });
});

describe('anvil admin quota recalculate', () => {
  let s: TestServer;
  let ursula: U;
  let victor: U;

  before(async () => {
    s = await startServer();
    ursula = await s.createUser('ursula');
    victor = await s.createUser('victor');
  });
  after(() => stop(s));

  it('reports and fixes the drift of one owner with --owner, leaving others alone', async () => {
    await addUsage(s, ursula.id, 'size:assets:artifacts', 500);
    await addUsage(s, ursula.id, 'size:git:lfs', 7);
    await addUsage(s, victor.id, 'size:assets:packages:all', 300);
    assert.equal((await adminInfo(s, 'ursula')).used.size.assets.artifacts, 500);

    const r = await runCli(s, ['admin', 'quota', 'recalculate', '--owner', 'ursula']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /ursula\b.*size:assets:artifacts.*\b500\b.*\b0\b/);
    assert.match(r.stdout, /ursula\b.*size:git:lfs.*\b7\b.*\b0\b/);
    assert.match(r.stdout, /\b2\b.*corrected/);
    assert.doesNotMatch(r.stdout, /victor/);

    // The running server reads the database directly: nothing cached.
    assert.deepEqual((await adminInfo(s, 'ursula')).used, ZERO_USED);
    const mine = await s.api<QuotaInfoJson>('GET', '/user/quota', { token: ursula.token });
    assert.deepEqual(mine.body.used, ZERO_USED);
    assert.equal((await adminInfo(s, 'victor')).used.size.assets.packages.all, 300);
  });

  it('a second run for the owner reports no drift', async () => {
    const r = await runCli(s, ['admin', 'quota', 'recalculate', '--owner', 'ursula']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /No drift/i);
    assert.doesNotMatch(r.stdout, /^drift:/m);
  });

  it('without --owner, every owner is recalculated; then there is no drift at all', async () => {
    let r = await runCli(s, ['admin', 'quota', 'recalculate']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /victor\b.*size:assets:packages:all.*\b300\b.*\b0\b/);
    assert.match(r.stdout, /\b1\b.*corrected/);
    assert.deepEqual((await adminInfo(s, 'victor')).used, ZERO_USED);
    r = await runCli(s, ['admin', 'quota', 'recalculate']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /No drift/i);
  });

  it('fixes negative drift too', async () => {
    await addUsage(s, victor.id, 'size:repos:public', -40);
    assert.equal((await adminInfo(s, 'victor')).used.size.repos.public, -40);
    const r = await runCli(s, ['admin', 'quota', 'recalculate', '--owner', 'victor']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /victor\b.*size:repos:public.*-40\b.*\b0\b/);
    assert.equal((await adminInfo(s, 'victor')).used.size.repos.public, 0);
  });

  it('fails for an unknown owner, naming it', async () => {
    const r = await runCli(s, ['admin', 'quota', 'recalculate', '--owner', 'nobody-here']);
    assert.notEqual(r.code, 0, `should fail\nstdout: ${r.stdout}`);
    assert.match(r.stderr, /nobody-here/);
  });
});

describe('quota disabled (ANVIL__QUOTA__ENABLED=false)', () => {
  let s: TestServer;
  let u: U;

  before(async () => {
    s = await startServer({ ANVIL__QUOTA__ENABLED: 'false' });
    u = await s.createUser('quotaless');
    await createOrg(s, u, 'quotaless-org');
  });
  after(() => stop(s));

  it('answers 404 on the administration routes', async () => {
    const probes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/quota/rules'],
      ['POST', '/admin/quota/rules', { name: 'r', limit: 1, subjects: ['size:all'] }],
      ['GET', '/admin/quota/rules/r'],
      ['GET', '/admin/quota/groups'],
      ['POST', '/admin/quota/groups', { name: 'g' }],
      ['GET', '/admin/quota/groups/g/users'],
      ['POST', '/admin/users/quotaless/quota/groups', { groups: [] }],
      ['GET', '/admin/users/quotaless/quota'],
    ];
    for (const [method, path, body] of probes) {
      const r = await adm(s, method, path, body);
      assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
    }
  });

  it('leaves the quota operations out of the API document', async () => {
    const doc = await s.api<{ paths: Record<string, unknown> }>('GET', '/swagger.v1.json');
    assert.equal(doc.status, 200, doc.text);
    assert.ok(doc.body.paths['/admin/users'], 'the rest is described');
    assert.deepEqual(
      Object.keys(doc.body.paths).filter((p) => p.includes('quota')),
      [],
    );
  });

  it('answers 404 on the user and organization views', async () => {
    for (const p of [
      '/user/quota',
      '/user/quota/check?subject=size:all',
      '/user/quota/attachments',
      '/user/quota/artifacts',
      '/user/quota/packages',
      '/orgs/quotaless-org/quota',
      '/orgs/quotaless-org/quota/check?subject=size:all',
    ]) {
      const r = await s.api('GET', p, { token: u.token });
      assert.equal(r.status, 404, `${p}: ${r.text}`);
    }
  });
});

describe('concurrent quota administration', () => {
  let s: TestServer;
  const N = 8;

  before(async () => {
    s = await startServer();
    await s.createUser('racer');
    await createRule(s, 'race-rule', 1, ['size:all']);
    await createGroup(s, 'race-group');
  });
  after(() => stop(s));

  const statuses = (rs: Array<{ status: number }>) => rs.map((r) => r.status).sort((a, b) => a - b);
  const oneThenConflicts = (ok: number) => [ok, ...Array<number>(N - 1).fill(409)];

  it('creating the same rule at once: one 201, the rest 409', async () => {
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        adm(s, 'POST', '/admin/quota/rules', { name: 'same-rule', limit: i, subjects: ['size:all'] }),
      ),
    );
    assert.deepEqual(statuses(rs), oneThenConflicts(201), rs.map((r) => r.text).join('\n'));
  });

  it('creating the same group at once: one 201, the rest 409', async () => {
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        adm(s, 'POST', '/admin/quota/groups', {
          name: 'same-group',
          rules: [{ name: `same-group-rule-${i}`, limit: 1, subjects: ['size:all'] }],
        }),
      ),
    );
    assert.deepEqual(statuses(rs), oneThenConflicts(201), rs.map((r) => r.text).join('\n'));
    // Only the winner's rule exists: the losers left nothing behind.
    const rules = await adm<RuleJson[]>(s, 'GET', '/admin/quota/rules');
    assert.equal(rules.body.filter((r) => r.name?.startsWith('same-group-rule-')).length, 1);
  });

  it('groups sharing a new rule entry at once: every group made, the rule made once', async () => {
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        adm(s, 'POST', '/admin/quota/groups', {
          name: `sharing-${i}`,
          rules: [{ name: 'shared-new', limit: 5, subjects: ['size:git:lfs'] }],
        }),
      ),
    );
    assert.deepEqual(statuses(rs), Array<number>(N).fill(201), rs.map((r) => r.text).join('\n'));
    for (let i = 0; i < N; i++) {
      const g = await adm<GroupJson>(s, 'GET', `/admin/quota/groups/sharing-${i}`);
      assert.deepEqual(g.body.rules, [{ name: 'shared-new', limit: 5, subjects: ['size:git:lfs'] }]);
    }
  });

  it('adding the same user to a group at once: one 204, the rest 409', async () => {
    const rs = await Promise.all(
      Array.from({ length: N }, () => adm(s, 'PUT', '/admin/quota/groups/race-group/users/racer')),
    );
    assert.deepEqual(statuses(rs), oneThenConflicts(204), rs.map((r) => r.text).join('\n'));
    const users = await adm<UserJson[]>(s, 'GET', '/admin/quota/groups/race-group/users');
    assert.deepEqual(
      users.body.map((u) => u.login),
      ['racer'],
    );
  });

  it('adding the same rule to a group at once: one 204, the rest 409', async () => {
    const rs = await Promise.all(
      Array.from({ length: N }, () => adm(s, 'PUT', '/admin/quota/groups/race-group/rules/race-rule')),
    );
    assert.deepEqual(statuses(rs), oneThenConflicts(204), rs.map((r) => r.text).join('\n'));
    const g = await adm<GroupJson>(s, 'GET', '/admin/quota/groups/race-group');
    assert.deepEqual(g.body.rules, [{ name: 'race-rule', limit: 1, subjects: ['size:all'] }]);
  });

  it("setting a user's groups at once: all 204, and the result is exactly one of the lists", async () => {
    const lists = Array.from({ length: N }, (_, i) =>
      i % 2 ? ['race-group', 'sharing-1'] : [`sharing-${i}`],
    );
    const rs = await Promise.all(
      lists.map((groups) => adm(s, 'POST', '/admin/users/racer/quota/groups', { groups })),
    );
    assert.deepEqual(statuses(rs), Array<number>(N).fill(204), rs.map((r) => r.text).join('\n'));
    const got = groupNames(await adminInfo(s, 'racer'));
    assert.ok(
      lists.some((l) => JSON.stringify([...l].sort()) === JSON.stringify(got)),
      `one of the lists, got ${JSON.stringify(got)}`,
    );
  });

  it('recording usage at once adds up exactly', async () => {
    const racer = await adminInfo(s, 'racer');
    assert.equal(racer.used.size.assets.artifacts, 0);
    const id = (await adm<UserJson>(s, 'GET', '/users/racer')).body.id;
    await Promise.all(Array.from({ length: 20 }, (_, i) => addUsage(s, id, 'size:assets:artifacts', i + 1)));
    assert.equal((await adminInfo(s, 'racer')).used.size.assets.artifacts, 210);
  });
});
