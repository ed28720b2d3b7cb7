// Accounts over HTTP: /user, /users/{username}, /users/search, /users/{username}/orgs, and the
// administration of users under /admin/users (list, create, edit, delete with and without purge).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type Auth, type Reply, type TestServer } from '../helpers/server.js';

interface Msg {
  message: string;
  url: string;
}

interface UserJson {
  id: number;
  login: string;
  username: string;
  login_name: string;
  source_id: number;
  full_name: string;
  email: string;
  avatar_url: string;
  html_url: string;
  language: string;
  is_admin: boolean;
  last_login: string;
  created: string;
  restricted: boolean;
  active: boolean;
  prohibit_login: boolean;
  location: string;
  pronouns: string;
  website: string;
  description: string;
  visibility: string;
  followers_count: number;
  following_count: number;
  starred_repos_count: number;
}

interface OrgJson {
  id: number;
  name: string;
  visibility: string;
}

interface TeamJson {
  id: number;
  name: string;
}

interface SearchJson {
  ok: boolean;
  data: UserJson[];
}

/** Forgejo's User definition, plus the `username` alias Forgejo adds when marshalling. */
const USER_KEYS = [
  'active',
  'avatar_url',
  'created',
  'description',
  'email',
  'followers_count',
  'following_count',
  'full_name',
  'html_url',
  'id',
  'is_admin',
  'language',
  'last_login',
  'location',
  'login',
  'login_name',
  'prohibit_login',
  'pronouns',
  'restricted',
  'source_id',
  'starred_repos_count',
  'username',
  'visibility',
  'website',
].sort();

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

function assertUserShape(u: UserJson): void {
  assert.deepEqual(Object.keys(u).sort(), USER_KEYS);
  assert.equal(typeof u.id, 'number');
  assert.equal(u.username, u.login);
  for (const k of ['login_name', 'full_name', 'email', 'avatar_url', 'html_url', 'language'] as const) {
    assert.equal(typeof u[k], 'string', k);
  }
  for (const k of ['location', 'pronouns', 'website', 'description', 'visibility'] as const) {
    assert.equal(typeof u[k], 'string', k);
  }
  for (const k of ['is_admin', 'restricted', 'active', 'prohibit_login'] as const) {
    assert.equal(typeof u[k], 'boolean', k);
  }
  for (const k of ['source_id', 'followers_count', 'following_count', 'starred_repos_count'] as const) {
    assert.equal(typeof u[k], 'number', k);
  }
  assert.match(u.created, ISO_SECONDS);
  assert.match(u.last_login, ISO_SECONDS);
}

/** The Link header as rel -> URL. */
function links(r: Reply): Map<string, URL> {
  const out = new Map<string, URL>();
  const header = r.headers.get('link');
  if (!header) return out;
  for (const part of header.split(',')) {
    const m = /^\s*<([^>]+)>;\s*rel="([a-z]+)"\s*$/.exec(part);
    assert.ok(m, `malformed Link part: ${part}`);
    out.set(m[2]!, new URL(m[1]!));
  }
  return out;
}

function totalCount(r: Reply): number {
  const v = r.headers.get('x-total-count');
  assert.ok(v !== null, 'X-Total-Count header is present');
  assert.match(v, /^\d+$/);
  return Number(v);
}

/** An empty JSON body for methods that carry one. */
const withBody = (method: string, opts: Auth): Auth & { body?: unknown } =>
  method === 'GET' || method === 'HEAD' ? opts : { ...opts, body: {} };

const logins = (list: UserJson[] | OrgJson[]) => list.map((u) => ('login' in u ? u.login : u.name)).sort();

describe('accounts: /user, /users and /admin/users', () => {
  let s: TestServer;
  let host: string;
  let alice: Awaited<ReturnType<TestServer['createUser']>>;
  let bob: Awaited<ReturnType<TestServer['createUser']>>;
  const lim = { name: 'lim', password: 'lim-password-1' };
  const priv = { name: 'priv', password: 'priv-password-1' };
  let limId = 0;
  let privId = 0;

  const admin = () => ({ token: s.admin.token });

  /** Creates an account through the admin API; returns the reply. */
  function createRaw(body: Record<string, unknown>) {
    return s.api<UserJson & Msg>('POST', '/admin/users', { ...admin(), body });
  }

  async function create(name: string, extra: Record<string, unknown> = {}): Promise<UserJson> {
    const r = await createRaw({
      username: name,
      email: `${name}@example.com`,
      password: `${name}-password-1`,
      must_change_password: false,
      ...extra,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function createOrg(owner: string, name: string, extra: Record<string, unknown> = {}) {
    const r = await s.api<OrgJson>('POST', `/admin/users/${owner}/orgs`, {
      ...admin(),
      body: { username: name, ...extra },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function teamOf(org: string, team: string): Promise<number> {
    const r = await s.api<TeamJson[]>('GET', `/orgs/${org}/teams`, admin());
    assert.equal(r.status, 200, r.text);
    const t = r.body.find((x) => x.name === team);
    assert.ok(t, `team ${team} of ${org}`);
    return t.id;
  }

  async function addToTeam(org: string, team: string, user: string) {
    const id = await teamOf(org, team);
    const r = await s.api('PUT', `/teams/${id}/members/${user}`, admin());
    assert.equal(r.status, 204, r.text);
  }

  async function createTeam(org: string, name: string) {
    const r = await s.api('POST', `/orgs/${org}/teams`, {
      ...admin(),
      body: { name, permission: 'read' },
    });
    assert.equal(r.status, 201, r.text);
  }

  before(async () => {
    s = await startServer();
    host = new URL(s.url).hostname;
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    limId = (await create(lim.name, { visibility: 'limited' })).id;
    privId = (await create(priv.name, { visibility: 'private' })).id;
  });
  after(() => s.close());

  describe('GET /user', () => {
    it('answers 401 "token is required" without credentials', async () => {
      const r = await s.api<Msg>('GET', '/user');
      assert.equal(r.status, 401);
      assert.equal(r.body.message, 'token is required');
      assert.equal(r.body.url, `${s.url}/api/swagger`);
    });

    it('returns the signed-in user in Forgejo shape, with the fields only they may see', async () => {
      const r = await s.api<UserJson>('GET', '/user', { token: alice.token });
      assert.equal(r.status, 200);
      assertUserShape(r.body);
      assert.equal(r.body.id, alice.id);
      assert.equal(r.body.login, 'alice');
      assert.equal(r.body.email, 'alice@example.com');
      assert.equal(r.body.login_name, 'alice');
      assert.equal(r.body.is_admin, false);
      assert.equal(r.body.active, true);
      assert.equal(r.body.prohibit_login, false);
      assert.equal(r.body.restricted, false);
      assert.equal(r.body.visibility, 'public');
      assert.equal(r.body.html_url, `${s.url}/alice`);
      assert.equal(r.body.avatar_url, `${s.url}/avatars/${alice.id}`);
    });

    it('works with basic auth too, and reports is_admin for an administrator', async () => {
      const r = await s.api<UserJson>('GET', '/user', { basic: [s.admin.name, s.admin.password] });
      assert.equal(r.status, 200);
      assert.equal(r.body.login, 'root');
      assert.equal(r.body.is_admin, true);
    });
  });

  describe('GET /users/{username}', () => {
    it('answers 404 for an unknown user, signed in or not', async () => {
      const anon = await s.api<Msg>('GET', '/users/nobody-here');
      assert.equal(anon.status, 404);
      assert.equal(typeof anon.body.message, 'string');
      const signed = await s.api<Msg>('GET', '/users/nobody-here', { token: alice.token });
      assert.equal(signed.status, 404);
    });

    it('shows a public user to anonymous callers with a no-reply e-mail and no private fields', async () => {
      const r = await s.api<UserJson>('GET', '/users/alice');
      assert.equal(r.status, 200);
      assertUserShape(r.body);
      assert.equal(r.body.login, 'alice');
      assert.equal(r.body.email, `alice@noreply.${host}`);
      assert.equal(r.body.login_name, '');
      assert.equal(r.body.is_admin, false);
      assert.equal(r.body.active, false);
      assert.equal(r.body.last_login, '1970-01-01T00:00:00Z');
    });

    it('looks the name up case-insensitively', async () => {
      const r = await s.api<UserJson>('GET', '/users/ALICE');
      assert.equal(r.status, 200);
      assert.equal(r.body.login, 'alice');
    });

    it('shows the real e-mail to a signed-in caller, but not the administrative fields', async () => {
      const r = await s.api<UserJson>('GET', '/users/alice', { token: bob.token });
      assert.equal(r.status, 200);
      assert.equal(r.body.email, 'alice@example.com');
      assert.equal(r.body.login_name, '');
      assert.equal(r.body.active, false);
    });

    it('shows the administrative fields to a site administrator', async () => {
      const r = await s.api<UserJson>('GET', '/users/alice', admin());
      assert.equal(r.status, 200);
      assert.equal(r.body.email, 'alice@example.com');
      assert.equal(r.body.login_name, 'alice');
      assert.equal(r.body.active, true);
    });

    it('hides a limited user from anonymous callers only', async () => {
      assert.equal((await s.api('GET', '/users/lim')).status, 404);
      const other = await s.api<UserJson>('GET', '/users/lim', { token: bob.token });
      assert.equal(other.status, 200);
      assert.equal(other.body.visibility, 'limited');
      assert.equal((await s.api('GET', '/users/lim', { basic: [lim.name, lim.password] })).status, 200);
      assert.equal((await s.api('GET', '/users/lim', admin())).status, 200);
    });

    it('hides a private user from everyone but themself and administrators', async () => {
      const anon = await s.api<Msg>('GET', '/users/priv');
      assert.equal(anon.status, 404);
      const unknown = await s.api<Msg>('GET', '/users/no-such-priv');
      assert.equal(anon.body.message.replace('priv', 'x'), unknown.body.message.replace('no-such-priv', 'x'));
      assert.equal((await s.api('GET', '/users/priv', { token: bob.token })).status, 404);
      const self = await s.api<UserJson>('GET', '/users/priv', { basic: [priv.name, priv.password] });
      assert.equal(self.status, 200);
      assert.equal(self.body.visibility, 'private');
      const byAdmin = await s.api<UserJson>('GET', '/users/priv', admin());
      assert.equal(byAdmin.status, 200);
      assert.equal(byAdmin.body.id, privId);
    });
  });

  describe('GET /users/{username} for an organization', () => {
    before(async () => {
      await createOrg('alice', 'shown-org', { full_name: 'Shown Org' });
      await createOrg('alice', 'hidden-org', { visibility: 'private' });
    });

    it('answers with the organization in the User shape, as Forgejo does', async () => {
      const r = await s.api<UserJson>('GET', '/users/shown-org');
      assert.equal(r.status, 200, r.text);
      assertUserShape(r.body);
      assert.equal(r.body.login, 'shown-org');
      assert.equal(r.body.full_name, 'Shown Org');
    });

    it('hides a private organization from anonymous callers and non-members', async () => {
      assert.equal((await s.api('GET', '/users/hidden-org')).status, 404);
      assert.equal((await s.api('GET', '/users/hidden-org', { token: bob.token })).status, 404);
      assert.equal((await s.api('GET', '/users/hidden-org', { token: alice.token })).status, 200);
      assert.equal((await s.api('GET', '/users/hidden-org', admin())).status, 200);
    });
  });

  describe('GET /users/search', () => {
    it('answers {ok, data} with X-Total-Count, matching the keyword case-insensitively', async () => {
      const r = await s.api<SearchJson>('GET', '/users/search?q=ALI');
      assert.equal(r.status, 200);
      assert.equal(r.body.ok, true);
      assert.deepEqual(logins(r.body.data), ['alice']);
      assert.equal(totalCount(r), 1);
      assertUserShape(r.body.data[0]!);
      assert.equal(r.body.data[0]!.email, `alice@noreply.${host}`, 'anonymous callers get the placeholder');
      assert.equal(r.headers.get('link'), null, 'one page only: no Link header');
    });

    it('trims the keyword as Forgejo does', async () => {
      const r = await s.api<SearchJson>('GET', '/users/search?q=%20alice%20');
      assert.equal(r.status, 200);
      assert.deepEqual(logins(r.body.data), ['alice']);
    });

    it('matches the full name', async () => {
      const e = await s.api('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { full_name: 'Robert Builder' },
      });
      assert.equal(e.status, 200);
      const r = await s.api<SearchJson>('GET', '/users/search?q=builder');
      assert.equal(r.status, 200);
      assert.deepEqual(logins(r.body.data), ['bob']);
    });

    it('answers an empty page with X-Total-Count 0 when nothing matches', async () => {
      const r = await s.api<SearchJson>('GET', '/users/search?q=zzz-nothing');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { ok: true, data: [] });
      assert.equal(totalCount(r), 0);
      assert.equal(r.headers.get('link'), null);
    });

    it('filters by uid', async () => {
      const r = await s.api<SearchJson>('GET', `/users/search?uid=${alice.id}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.data.length, 1);
      assert.equal(r.body.data[0]!.id, alice.id);
      assert.equal(totalCount(r), 1);
      const none = await s.api<SearchJson>('GET', '/users/search?uid=987654');
      assert.equal(none.status, 200);
      assert.deepEqual(none.body.data, []);
      assert.equal(totalCount(none), 0);
      const both = await s.api<SearchJson>('GET', `/users/search?uid=${alice.id}&q=bob`);
      assert.deepEqual(both.body.data, [], 'uid and q combine');
    });

    it('answers 422 for a uid that is not a number', async () => {
      const r = await s.api<Msg>('GET', '/users/search?uid=abc');
      assert.equal(r.status, 422);
      assert.match(r.body.message, /Uid/);
    });

    it('respects visibility: anonymous sees public users, signed-in users also limited ones', async () => {
      const anonLim = await s.api<SearchJson>('GET', `/users/search?uid=${limId}`);
      assert.deepEqual(anonLim.body.data, []);
      assert.equal(totalCount(anonLim), 0);
      const anonPriv = await s.api<SearchJson>('GET', '/users/search?q=priv');
      assert.deepEqual(anonPriv.body.data, []);

      const bobLim = await s.api<SearchJson>('GET', `/users/search?uid=${limId}`, { token: bob.token });
      assert.deepEqual(logins(bobLim.body.data), ['lim']);
      const bobPriv = await s.api<SearchJson>('GET', `/users/search?uid=${privId}`, { token: bob.token });
      assert.deepEqual(bobPriv.body.data, []);

      const self = await s.api<SearchJson>('GET', `/users/search?uid=${privId}`, {
        basic: [priv.name, priv.password],
      });
      assert.deepEqual(logins(self.body.data), ['priv']);
      const byAdmin = await s.api<SearchJson>('GET', `/users/search?uid=${privId}`, admin());
      assert.deepEqual(logins(byAdmin.body.data), ['priv']);
    });

    it('never lists organizations', async () => {
      await createOrg('alice', 'searchable-org');
      const r = await s.api<SearchJson>('GET', '/users/search?q=searchable', admin());
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.data, []);
      assert.equal(totalCount(r), 0);
    });

    describe('paging', () => {
      const TOTAL = 55;
      const pagerNames = Array.from({ length: TOTAL }, (_, i) => `pager${String(i + 1).padStart(2, '0')}`);

      before(async () => {
        for (let i = 0; i < pagerNames.length; i += 11) {
          await Promise.all(pagerNames.slice(i, i + 11).map((n) => create(n)));
        }
      });

      it('returns DEFAULT_PAGING_NUM (30) items without a limit', async () => {
        const r = await s.api<SearchJson>('GET', '/users/search?q=pager');
        assert.equal(r.status, 200);
        assert.equal(r.body.data.length, 30);
        assert.equal(totalCount(r), TOTAL);
        const l = links(r);
        assert.equal(l.get('next')?.searchParams.get('page'), '2');
        assert.equal(l.get('next')?.searchParams.get('limit'), '30');
        assert.equal(l.get('last')?.searchParams.get('page'), '2');
      });

      it('pages with page/limit and a Link header with next, last, first and prev', async () => {
        const first = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=10&page=1');
        assert.equal(first.status, 200);
        assert.equal(first.body.data.length, 10);
        assert.equal(totalCount(first), TOTAL);
        let l = links(first);
        assert.deepEqual([...l.keys()].sort(), ['last', 'next']);
        const next = l.get('next')!;
        assert.equal(`${next.origin}${next.pathname}`, `${s.url}/api/v1/users/search`);
        assert.equal(next.searchParams.get('q'), 'pager', 'other query parameters are kept');
        assert.equal(next.searchParams.get('page'), '2');
        assert.equal(next.searchParams.get('limit'), '10');
        assert.equal(l.get('last')!.searchParams.get('page'), '6');

        const middle = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=10&page=3');
        assert.equal(middle.body.data.length, 10);
        l = links(middle);
        assert.deepEqual([...l.keys()].sort(), ['first', 'last', 'next', 'prev']);
        assert.equal(l.get('first')!.searchParams.get('page'), '1');
        assert.equal(l.get('prev')!.searchParams.get('page'), '2');
        assert.equal(l.get('next')!.searchParams.get('page'), '4');

        const last = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=10&page=6');
        assert.equal(last.body.data.length, 5);
        assert.equal(totalCount(last), TOTAL);
        l = links(last);
        assert.deepEqual([...l.keys()].sort(), ['first', 'prev']);
        assert.equal(l.get('prev')!.searchParams.get('page'), '5');

        const beyond = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=10&page=7');
        assert.equal(beyond.status, 200);
        assert.deepEqual(beyond.body.data, []);
        assert.equal(totalCount(beyond), TOTAL);
      });

      it('covers every match exactly once across pages', async () => {
        const seen: string[] = [];
        for (let page = 1; page <= 6; page++) {
          const r = await s.api<SearchJson>('GET', `/users/search?q=pager&limit=10&page=${page}`);
          assert.equal(r.status, 200);
          seen.push(...r.body.data.map((u) => u.login));
        }
        assert.deepEqual(seen.sort(), pagerNames);
      });

      it('caps limit at MAX_RESPONSE_ITEMS (50)', async () => {
        const r = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=100');
        assert.equal(r.status, 200);
        assert.equal(r.body.data.length, 50);
        assert.equal(totalCount(r), TOTAL);
        const l = links(r);
        assert.equal(l.get('next')!.searchParams.get('limit'), '50');
        assert.equal(l.get('next')!.searchParams.get('page'), '2');
        const second = await s.api<SearchJson>('GET', '/users/search?q=pager&limit=100&page=2');
        assert.equal(second.body.data.length, TOTAL - 50);
      });

      it('treats page 0 as the first page and limit 0 as the default', async () => {
        const r = await s.api<SearchJson>('GET', '/users/search?q=pager&page=0&limit=0');
        assert.equal(r.status, 200);
        assert.equal(r.body.data.length, 30);
        assert.equal(links(r).get('next')!.searchParams.get('page'), '2');
      });

      it('answers 422 for a page that is not a number', async () => {
        const r = await s.api<Msg>('GET', '/users/search?q=pager&page=two');
        assert.equal(r.status, 422);
        assert.match(r.body.message, /Page/);
      });
    });
  });

  describe('GET /users/{username}/orgs', () => {
    before(async () => {
      await createOrg('alice', 'alice-public');
      await createOrg('alice', 'alice-private', { visibility: 'private' });
    });

    it('hides concealed memberships from others but shows them to the user and administrators', async () => {
      const anon = await s.api<OrgJson[]>('GET', '/users/alice/orgs');
      assert.equal(anon.status, 200);
      assert.deepEqual(anon.body, []);
      assert.equal(totalCount(anon), 0);

      const self = await s.api<OrgJson[]>('GET', '/users/alice/orgs', { token: alice.token });
      assert.equal(self.status, 200);
      const mine = ['alice-private', 'alice-public', 'hidden-org', 'searchable-org', 'shown-org'];
      assert.deepEqual(logins(self.body), mine);
      assert.equal(totalCount(self), mine.length);

      const byAdmin = await s.api<OrgJson[]>('GET', '/users/alice/orgs', admin());
      assert.deepEqual(logins(byAdmin.body), mine);
    });

    it('shows public memberships of visible organizations to everyone', async () => {
      for (const org of ['alice-public', 'alice-private']) {
        const r = await s.api('PUT', `/orgs/${org}/public_members/alice`, { token: alice.token });
        assert.equal(r.status, 204, r.text);
      }
      const anon = await s.api<OrgJson[]>('GET', '/users/alice/orgs');
      assert.equal(anon.status, 200);
      assert.deepEqual(logins(anon.body), ['alice-public'], 'a private organization stays hidden');
      assert.equal(totalCount(anon), 1);
      const other = await s.api<OrgJson[]>('GET', '/users/alice/orgs', { token: bob.token });
      assert.deepEqual(logins(other.body), ['alice-public']);
    });

    it('pages with limit', async () => {
      const r = await s.api<OrgJson[]>('GET', '/users/alice/orgs?limit=1&page=2', { token: alice.token });
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 1);
      assert.equal(totalCount(r), 5);
      assert.deepEqual([...links(r).keys()].sort(), ['first', 'last', 'next', 'prev']);
    });

    it('answers 404 for an unknown user and for a user the caller may not see', async () => {
      assert.equal((await s.api('GET', '/users/nobody-here/orgs')).status, 404);
      assert.equal((await s.api('GET', '/users/priv/orgs')).status, 404);
      assert.equal((await s.api('GET', '/users/lim/orgs')).status, 404);
      const limSelf = await s.api<OrgJson[]>('GET', '/users/lim/orgs', { token: bob.token });
      assert.equal(limSelf.status, 200);
      assert.deepEqual(limSelf.body, []);
    });
  });

  describe('every /admin route refuses non-administrators', () => {
    const routes: Array<[string, string]> = [
      ['GET', '/admin/users'],
      ['POST', '/admin/users'],
      ['PATCH', '/admin/users/alice'],
      ['DELETE', '/admin/users/alice'],
      ['POST', '/admin/users/alice/orgs'],
      ['GET', '/admin/orgs'],
    ];

    /** Every /admin operation in the API description, with path parameters filled in. */
    async function documentedRoutes(): Promise<Array<[string, string]>> {
      const doc = await s.api<{ paths: Record<string, Record<string, unknown>> }>('GET', '/swagger.v1.json');
      assert.equal(doc.status, 200);
      const out: Array<[string, string]> = [];
      for (const [p, ops] of Object.entries(doc.body.paths)) {
        if (!p.startsWith('/admin/')) continue;
        const concrete = p.replace(/\{(\w+)\}/g, (_, name: string) => (/id$/.test(name) ? '1' : 'alice'));
        for (const method of Object.keys(ops)) {
          if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) {
            out.push([method.toUpperCase(), concrete]);
          }
        }
      }
      return out;
    }

    it('answers 401 to anonymous callers', async () => {
      for (const [method, path] of [...routes, ...(await documentedRoutes())]) {
        const r = await s.api<Msg>(method, path, withBody(method, {}));
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.equal(r.body.message, 'token is required', `${method} ${path}`);
      }
    });

    it('answers 403 to a signed-in user who is not an administrator (token or password)', async () => {
      for (const [method, path] of [...routes, ...(await documentedRoutes())]) {
        const byToken = await s.api<Msg>(method, path, withBody(method, { token: alice.token }));
        assert.equal(byToken.status, 403, `${method} ${path} with a token`);
        assert.equal(byToken.body.message, 'user should be the site admin');
        const byPassword = await s.api<Msg>(
          method,
          path,
          withBody(method, { basic: [alice.name, alice.password] }),
        );
        assert.equal(byPassword.status, 403, `${method} ${path} with a password`);
      }
      const stillThere = await s.api('GET', '/users/alice');
      assert.equal(stillThere.status, 200, 'the refused DELETE changed nothing');
    });
  });

  describe('GET /admin/users', () => {
    it('lists every individual account, private ones included, with paging headers', async () => {
      const all: UserJson[] = [];
      let total = -1;
      for (let page = 1; ; page++) {
        const r = await s.api<UserJson[]>('GET', `/admin/users?limit=50&page=${page}`, admin());
        assert.equal(r.status, 200);
        total = totalCount(r);
        all.push(...r.body);
        if (r.body.length < 50) break;
      }
      assert.equal(all.length, total);
      const names = all.map((u) => u.login);
      for (const n of ['root', 'alice', 'bob', 'lim', 'priv', 'pager01']) assert.ok(names.includes(n), n);
      for (const org of ['alice-public', 'alice-private', 'searchable-org', 'shown-org']) {
        assert.ok(!names.includes(org), `organization ${org} is not listed`);
      }
      assert.equal(new Set(names).size, names.length, 'no account twice');
      const a = all.find((u) => u.login === 'alice')!;
      assertUserShape(a);
      assert.equal(a.email, 'alice@example.com');
      assert.equal(a.login_name, 'alice', 'administrators see the sign-in name');
    });

    it('pages with limit and a Link header', async () => {
      const r = await s.api<UserJson[]>('GET', '/admin/users?limit=2', admin());
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 2);
      const total = totalCount(r);
      const l = links(r);
      assert.equal(l.get('next')!.searchParams.get('page'), '2');
      assert.equal(l.get('last')!.searchParams.get('page'), String(Math.ceil(total / 2)));
      const capped = await s.api<UserJson[]>('GET', '/admin/users?limit=1000', admin());
      assert.equal(capped.body.length, Math.min(50, total));
    });

    it('filters by login_name', async () => {
      const r = await s.api<UserJson[]>('GET', '/admin/users?login_name=bob', admin());
      assert.equal(r.status, 200);
      assert.deepEqual(logins(r.body), ['bob']);
      assert.equal(totalCount(r), 1);
    });
  });

  describe('POST /admin/users', () => {
    it('creates a user: 201 with the User shape', async () => {
      const r = await createRaw({
        username: 'carol',
        email: 'Carol@Example.com',
        password: 'carol-password-1',
        full_name: 'Carol C',
        must_change_password: false,
      });
      assert.equal(r.status, 201, r.text);
      assertUserShape(r.body);
      assert.equal(r.body.login, 'carol');
      assert.equal(r.body.email, 'Carol@Example.com');
      assert.equal(r.body.full_name, 'Carol C');
      assert.equal(r.body.is_admin, false);
      assert.equal(r.body.active, true);
      assert.equal(r.body.restricted, false);
      assert.equal(r.body.visibility, 'public');
      const age = Date.now() - Date.parse(r.body.created);
      assert.ok(age >= -2000 && age < 60_000, `created is now: ${r.body.created}`);
      const signIn = await s.api<UserJson>('GET', '/user', { basic: ['carol', 'carol-password-1'] });
      assert.equal(signIn.status, 200);
      assert.equal(signIn.body.id, r.body.id);
    });

    it('applies visibility and restricted', async () => {
      const r = await createRaw({
        username: 'dora',
        email: 'dora@example.com',
        password: 'dora-password-1',
        visibility: 'limited',
        restricted: true,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.visibility, 'limited');
      assert.equal(r.body.restricted, true);
      const bad = await createRaw({
        username: 'dora2',
        email: 'dora2@example.com',
        password: 'dora-password-1',
        visibility: 'secret',
      });
      assert.equal(bad.status, 422);
      assert.match(bad.body.message, /Visibility/);
    });

    it('sets the creation time from created_at', async () => {
      const r = await createRaw({
        username: 'migrated',
        email: 'migrated@example.com',
        password: 'migrated-password-1',
        created_at: '2019-05-06T07:08:09Z',
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.created, '2019-05-06T07:08:09Z');
      const again = await s.api<UserJson>('GET', '/users/migrated');
      assert.equal(again.body.created, '2019-05-06T07:08:09Z');
      const offset = await createRaw({
        username: 'migrated2',
        email: 'migrated2@example.com',
        password: 'migrated-password-1',
        created_at: '2019-05-06T09:08:09+02:00',
      });
      assert.equal(offset.status, 201, offset.text);
      assert.equal(offset.body.created, '2019-05-06T07:08:09Z', 'the offset is applied');
    });

    it('answers 422 for a created_at that is not a datetime, creating nothing', async () => {
      for (const created_at of ['yesterday', '2019-05-06', '2019-13-45T07:08:09Z', '']) {
        const r = await createRaw({
          username: 'badtime',
          email: 'badtime@example.com',
          password: 'badtime-password-1',
          created_at,
        });
        assert.equal(r.status, 422, `created_at ${JSON.stringify(created_at)}: ${r.text}`);
        assert.match(r.body.message, /CreatedAt/);
      }
      const wrongType = await createRaw({
        username: 'badtime',
        email: 'badtime@example.com',
        password: 'badtime-password-1',
        created_at: 12345,
      });
      assert.equal(wrongType.status, 422);
      assert.equal((await s.api('GET', '/users/badtime', admin())).status, 404);
    });

    it('requires a password change by default', async () => {
      const r = await createRaw({
        username: 'mustchange',
        email: 'mc@example.com',
        password: 'mc-password-1',
      });
      assert.equal(r.status, 201, r.text);
      const row = await s.ctx.db
        .selectFrom('user')
        .select('must_change_password')
        .where('lower_name', '=', 'mustchange')
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.must_change_password), 1);
      // Anvil has no web sign-in where the password could be changed, so the flag is recorded
      // (and reported) but does not lock the account out of the API.
      const ok = await s.api('GET', '/user', { basic: ['mustchange', 'mc-password-1'] });
      assert.equal(ok.status, 200);

      const explicit = await create('nochange');
      const row2 = await s.ctx.db
        .selectFrom('user')
        .select('must_change_password')
        .where('id', '=', explicit.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row2.must_change_password), 0);
    });

    it('answers 422 for a name that is taken, whatever its case, or by an organization', async () => {
      for (const username of ['alice', 'ALICE', 'Alice', 'alice-public']) {
        const r = await createRaw({
          username,
          email: `${username}-dup@example.com`,
          password: 'dup-password-1',
        });
        assert.equal(r.status, 422, username);
        assert.match(r.body.message, /Username/);
      }
    });

    it('answers 422 for an e-mail address that is taken, whatever its case', async () => {
      for (const email of ['alice@example.com', 'ALICE@example.COM']) {
        const r = await createRaw({ username: 'alice2', email, password: 'dup-password-1' });
        assert.equal(r.status, 422, email);
        assert.match(r.body.message, /Email/);
      }
      assert.equal((await s.api('GET', '/users/alice2', admin())).status, 404);
    });

    it('answers 422 for reserved names, the actions bot name included', async () => {
      const reserved = [
        'api',
        'admin',
        'assets',
        'user',
        'org',
        'repo',
        'ghost',
        'anvil-actions',
        'Admin',
        'API',
        'GHOST',
        'Anvil-Actions',
        'explore',
        'login',
        'swagger.v1.json',
        'someone.keys',
        'someone.gpg',
        'someone.git',
        'someone.rss',
      ];
      for (const username of reserved) {
        const r = await createRaw({
          username,
          email: `r${reserved.indexOf(username)}@example.com`,
          password: 'p-1',
        });
        assert.equal(r.status, 422, `${username}: ${r.text}`);
        assert.match(r.body.message, /Username/, username);
      }
    });

    it('answers 422 for invalid names', async () => {
      const invalid = [
        '',
        '-lead',
        'trail-',
        '.dot',
        'dot.',
        '_under',
        'a..b',
        'a--b',
        'a_-b',
        'with space',
        'sl/ash',
        'ünïcode',
        'semi;colon',
        'a'.repeat(41),
      ];
      for (const username of invalid) {
        const r = await createRaw({
          username,
          email: `i${invalid.indexOf(username)}@example.com`,
          password: 'p-1',
        });
        assert.equal(r.status, 422, `${JSON.stringify(username)}: ${r.text}`);
        assert.match(r.body.message, /Username/, username);
      }
    });

    it('accepts names at the edge of the rules', async () => {
      for (const username of ['a', 'a.b-c_d', 'x'.repeat(40), 'Mixed.Case9']) {
        const r = await createRaw({
          username,
          email: `${username.length}-${username.toLowerCase()}@example.com`,
          password: 'edge-password-1',
        });
        assert.equal(r.status, 201, `${username}: ${r.text}`);
        assert.equal(r.body.login, username, 'the case is kept');
      }
    });

    it('answers 422 when a required field is missing or malformed', async () => {
      const noPassword = await createRaw({ username: 'nopass', email: 'nopass@example.com' });
      assert.equal(noPassword.status, 422);
      assert.match(noPassword.body.message, /Password/);
      const emptyPassword = await createRaw({
        username: 'nopass',
        email: 'nopass@example.com',
        password: '',
      });
      assert.equal(emptyPassword.status, 422);
      assert.match(emptyPassword.body.message, /Password/);
      const noName = await createRaw({ email: 'noname@example.com', password: 'p-1' });
      assert.equal(noName.status, 422);
      assert.match(noName.body.message, /Username/);
      const noEmail = await createRaw({ username: 'noemail', password: 'p-1' });
      assert.equal(noEmail.status, 422);
      assert.match(noEmail.body.message, /Email/);
      for (const email of ['not-an-email', 'a@', '@b.c', 'two@@example.com', 'sp ace@example.com']) {
        const r = await createRaw({ username: 'bademail', email, password: 'p-1' });
        assert.equal(r.status, 422, email);
        assert.match(r.body.message, /Email/, email);
      }
      const wrongType = await createRaw({
        username: { name: 'x' },
        email: 'x42@example.com',
        password: 'p-1',
      });
      assert.equal(wrongType.status, 422);
      for (const name of ['nopass', 'noemail', 'bademail']) {
        assert.equal((await s.api('GET', `/users/${name}`, admin())).status, 404, name);
      }
    });

    it('answers 422 for a login source that does not exist, even without a password', async () => {
      for (const body of [
        { username: 'sourced', email: 'sourced@example.com', source_id: 7, login_name: 'ext' },
        { username: 'sourced', email: 'sourced@example.com', source_id: 7, password: 'sourced-pass-1' },
      ]) {
        const r = await createRaw(body);
        assert.equal(r.status, 422, r.text);
        assert.match(r.body.message, /SourceId/);
      }
      assert.equal((await s.api('GET', '/users/sourced', admin())).status, 404);
      const local = await createRaw({
        username: 'sourced',
        email: 'sourced@example.com',
        password: 'sourced-pass-1',
        source_id: 0,
      });
      assert.equal(local.status, 201, 'source 0 is the local one');
    });

    it('answers 400 for a body that is not JSON', async () => {
      const r = await s.api<Msg>('POST', '/admin/users', { ...admin(), raw: '{"username": "x",' });
      assert.equal(r.status, 400);
    });
  });

  describe('PATCH /admin/users/{username}', () => {
    it('refuses to remove the last administrator with 400', async () => {
      const r = await s.api<Msg>('PATCH', '/admin/users/root', { ...admin(), body: { admin: false } });
      assert.equal(r.status, 400);
      assert.match(r.body.message, /administrator/);
      const still = await s.api<UserJson>('GET', '/user', admin());
      assert.equal(still.body.is_admin, true);
    });

    it('edits profile and account fields and returns the user', async () => {
      const body = {
        full_name: 'Bob B',
        website: 'https://bob.example.com',
        location: 'Lyon',
        description: 'builds things',
        pronouns: 'he/him',
        email: 'bob.new@example.com',
        visibility: 'limited',
        restricted: true,
        max_repo_creation: 5,
        allow_create_organization: false,
      };
      const r = await s.api<UserJson>('PATCH', '/admin/users/bob', { ...admin(), body });
      assert.equal(r.status, 200, r.text);
      assertUserShape(r.body);
      assert.equal(r.body.login, 'bob');
      assert.equal(r.body.full_name, 'Bob B');
      assert.equal(r.body.website, 'https://bob.example.com');
      assert.equal(r.body.location, 'Lyon');
      assert.equal(r.body.description, 'builds things');
      assert.equal(r.body.pronouns, 'he/him');
      assert.equal(r.body.email, 'bob.new@example.com');
      assert.equal(r.body.visibility, 'limited');
      assert.equal(r.body.restricted, true);

      const seen = await s.api<UserJson>('GET', '/user', { token: bob.token });
      assert.equal(seen.body.full_name, 'Bob B');
      assert.equal(seen.body.email, 'bob.new@example.com');
      const row = await s.ctx.db
        .selectFrom('user')
        .select(['max_repo_creation', 'allow_create_organization'])
        .where('id', '=', bob.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.max_repo_creation), 5);
      assert.equal(Number(row.allow_create_organization), 0);

      const back = await s.api<UserJson>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { visibility: 'public', restricted: false, email: 'bob@example.com' },
      });
      assert.equal(back.status, 200);
      assert.equal(back.body.full_name, 'Bob B', 'fields not given are kept');
      assert.equal(back.body.visibility, 'public');
    });

    it('changes the password: the new one signs in, the old one no longer does', async () => {
      const r = await s.api('PATCH', '/admin/users/carol', {
        ...admin(),
        body: { password: 'carol-new-pass-2' },
      });
      assert.equal(r.status, 200);
      assert.equal((await s.api('GET', '/user', { basic: ['carol', 'carol-new-pass-2'] })).status, 200);
      const old = await s.api<Msg>('GET', '/user', { basic: ['carol', 'carol-password-1'] });
      assert.equal(old.status, 401);
    });

    it('grants and removes administration when another administrator remains', async () => {
      const up = await s.api<UserJson>('PATCH', '/admin/users/carol', { ...admin(), body: { admin: true } });
      assert.equal(up.status, 200);
      assert.equal(up.body.is_admin, true);
      const list = await s.api('GET', '/admin/users?limit=1', { basic: ['carol', 'carol-new-pass-2'] });
      assert.equal(list.status, 200, 'the new administrator may use /admin');
      const down = await s.api<UserJson>('PATCH', '/admin/users/carol', {
        ...admin(),
        body: { admin: false },
      });
      assert.equal(down.status, 200);
      assert.equal(down.body.is_admin, false);
      const refused = await s.api('GET', '/admin/users', { basic: ['carol', 'carol-new-pass-2'] });
      assert.equal(refused.status, 403);
    });

    it('answers 400 for an e-mail address another user has, and 422 for a malformed one', async () => {
      const taken = await s.api<Msg>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { email: 'ALICE@example.com' },
      });
      assert.equal(taken.status, 400);
      assert.match(taken.body.message, /e-mail/);
      const bad = await s.api<Msg>('PATCH', '/admin/users/bob', { ...admin(), body: { email: 'nope' } });
      assert.equal(bad.status, 422);
      assert.match(bad.body.message, /Email/);
      const same = await s.api<UserJson>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { email: 'BOB@example.com' },
      });
      assert.equal(same.status, 200, 'a user may keep their own address in another case');
      const row = await s.api<UserJson>('GET', '/users/bob', admin());
      assert.equal(row.body.email, 'BOB@example.com');
    });

    it('changes login_name only together with source_id (422 otherwise, or for an unknown source)', async () => {
      const alone = await s.api<Msg>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { login_name: 'robert' },
      });
      assert.equal(alone.status, 422);
      assert.match(alone.body.message, /together/);
      const sourceAlone = await s.api<Msg>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { source_id: 0 },
      });
      assert.equal(sourceAlone.status, 422);
      const unknown = await s.api<Msg>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { source_id: 4, login_name: 'robert' },
      });
      assert.equal(unknown.status, 422);
      assert.match(unknown.body.message, /SourceId/);
      const both = await s.api<UserJson>('PATCH', '/admin/users/bob', {
        ...admin(),
        body: { source_id: 0, login_name: 'robert' },
      });
      assert.equal(both.status, 200);
      assert.equal(both.body.login_name, 'robert');
      assert.equal(both.body.source_id, 0);
      assert.equal((await s.api('GET', '/user', { basic: ['bob', bob.password] })).status, 200);
    });

    it('answers 422 for malformed fields', async () => {
      for (const body of [{ visibility: 'secret' }, { admin: 'yes please' }, { max_repo_creation: -2 }]) {
        const r = await s.api('PATCH', '/admin/users/bob', { ...admin(), body });
        assert.equal(r.status, 422, JSON.stringify(body));
      }
    });

    it('refuses a user who owns packages without purge; with purge deletes them, their usage and blobs', async () => {
      const packer = await s.createUser('packer', { scopes: ['write:package'] });
      const body = 'packed bytes';
      const put = await fetch(`${s.url}/api/packages/packer/generic/thing/1.0/thing.txt`, {
        method: 'PUT',
        headers: { authorization: `token ${packer.token}` },
        body,
      });
      assert.equal(put.status, 201);
      const r = await s.api<Msg>('DELETE', '/admin/users/packer', admin());
      assert.equal(r.status, 422);
      assert.match(r.body.message, /packages/);
      const purged = await s.api('DELETE', '/admin/users/packer?purge=true', admin());
      assert.equal(purged.status, 204, purged.text);
      const sha = crypto.createHash('sha256').update(body).digest('hex');
      const left = await s.ctx.db
        .selectFrom('package_blob')
        .select('id')
        .where('hash_sha256', '=', sha)
        .execute();
      assert.deepEqual(left, []);
      const usage = await s.ctx.db
        .selectFrom('package')
        .select('id')
        .where('owner_id', '=', packer.id)
        .execute();
      assert.deepEqual(usage, []);
    });

    it('answers 404 for an unknown user', async () => {
      const r = await s.api<Msg>('PATCH', '/admin/users/nobody-here', {
        ...admin(),
        body: { full_name: 'x' },
      });
      assert.equal(r.status, 404);
    });
  });

  describe('DELETE /admin/users/{username}', () => {
    it('deletes a user: 204, then the account and its tokens are gone', async () => {
      const gone = await s.createUser('gone');
      const r = await s.api('DELETE', '/admin/users/gone', admin());
      assert.equal(r.status, 204);
      assert.equal(r.text, '');
      assert.equal((await s.api('GET', '/users/gone', admin())).status, 404);
      assert.equal((await s.api('GET', '/user', { token: gone.token })).status, 401);
      assert.equal((await s.api('GET', '/user', { basic: [gone.name, gone.password] })).status, 401);
      const tokens = await s.ctx.db
        .selectFrom('access_token')
        .select('id')
        .where('uid', '=', gone.id)
        .execute();
      assert.deepEqual(tokens, []);
      const again = await s.api('DELETE', '/admin/users/gone', admin());
      assert.equal(again.status, 404);
    });

    it('answers 404 for an unknown user', async () => {
      const r = await s.api<Msg>('DELETE', '/admin/users/nobody-here', admin());
      assert.equal(r.status, 404);
    });

    it('answers 422 for an organization name, and deletes nothing', async () => {
      const r = await s.api<Msg>('DELETE', '/admin/users/alice-public', admin());
      assert.equal(r.status, 422);
      assert.equal((await s.api('GET', '/orgs/alice-public')).status, 200);
      const purge = await s.api('DELETE', '/admin/users/alice-public?purge=true', admin());
      assert.equal(purge.status, 422);
      assert.equal((await s.api('GET', '/orgs/alice-public')).status, 200);
    });

    it('answers 422 for a member of an organization without purge, and changes nothing', async () => {
      const member = await s.createUser('member');
      await createOrg('member', 'member-org');
      const r = await s.api<Msg>('DELETE', '/admin/users/member', admin());
      assert.equal(r.status, 422);
      assert.match(r.body.message, /organization/);
      assert.equal((await s.api('GET', '/user', { token: member.token })).status, 200, 'still signs in');
      const orgs = await s.api<OrgJson[]>('GET', '/users/member/orgs', admin());
      assert.deepEqual(logins(orgs.body), ['member-org']);
      const purgeFalse = await s.api('DELETE', '/admin/users/member?purge=false', admin());
      assert.equal(purgeFalse.status, 422);
    });

    it('with purge: leaves organizations, deletes those it was the last owner of, keeps the others', async () => {
      const leaver = await s.createUser('leaver');
      await s.createUser('partner');
      // sole-owned: deleted with the user
      await createOrg('leaver', 'leaver-solo');
      // co-owned with partner: survives, partner remains owner
      await createOrg('leaver', 'leaver-shared');
      await addToTeam('leaver-shared', 'Owners', 'partner');
      // plain membership in someone else's organization: survives, leaver leaves
      await createOrg('partner', 'partner-org');
      await createTeam('partner-org', 'devs');
      await addToTeam('partner-org', 'devs', 'leaver');

      const r = await s.api('DELETE', '/admin/users/leaver?purge=true', admin());
      assert.equal(r.status, 204, r.text);

      assert.equal((await s.api('GET', '/users/leaver', admin())).status, 404);
      assert.equal((await s.api('GET', '/user', { token: leaver.token })).status, 401);
      assert.equal((await s.api('GET', '/orgs/leaver-solo', admin())).status, 404);
      assert.equal((await s.api('GET', '/orgs/leaver-shared', admin())).status, 200);
      assert.equal((await s.api('GET', '/orgs/partner-org', admin())).status, 200);

      const partnerOrgs = await s.api<OrgJson[]>('GET', '/users/partner/orgs', admin());
      assert.deepEqual(logins(partnerOrgs.body), ['leaver-shared', 'partner-org']);
      for (const org of ['leaver-shared', 'partner-org']) {
        const members = await s.api<UserJson[]>('GET', `/orgs/${org}/members`, admin());
        assert.equal(members.status, 200);
        assert.deepEqual(logins(members.body), ['partner'], org);
      }
      const rows = await s.ctx.db
        .selectFrom('org_user')
        .select('org_id')
        .where('uid', '=', leaver.id)
        .execute();
      assert.deepEqual(rows, []);
      const teamRows = await s.ctx.db
        .selectFrom('team_user')
        .select('id')
        .where('uid', '=', leaver.id)
        .execute();
      assert.deepEqual(teamRows, []);
    });

    it('with purge: deletes a user who belongs to no organization', async () => {
      await s.createUser('lonely');
      const r = await s.api('DELETE', '/admin/users/lonely?purge=true', admin());
      assert.equal(r.status, 204);
      assert.equal((await s.api('GET', '/users/lonely', admin())).status, 404);
    });

    it('answers 422 when an administrator deletes themself, even when not the last one', async () => {
      const second = await s.createUser('second-admin', { admin: true });
      const r = await s.api<Msg>('DELETE', '/admin/users/second-admin', { token: second.token });
      assert.equal(r.status, 422);
      assert.match(r.body.message, /yourself/);
      const rootSelf = await s.api<Msg>('DELETE', '/admin/users/root?purge=true', admin());
      assert.equal(rootSelf.status, 422);
      assert.equal((await s.api('GET', '/users/second-admin', admin())).status, 200);
      assert.equal((await s.api('GET', '/user', admin())).status, 200);
      // another administrator may delete them
      const byRoot = await s.api('DELETE', '/admin/users/second-admin', admin());
      assert.equal(byRoot.status, 204);
    });

    it('never deletes the last administrator', async () => {
      // Over HTTP the last administrator can only be reached by themself (refused above); the rule
      // itself holds for any caller, the command line included.
      const root = (await s.ctx.users.getByName('root'))!;
      await assert.rejects(s.ctx.users.delete(root, { purge: true }), (err: Error & { kind?: string }) => {
        assert.equal(err.kind, 'invalid');
        assert.match(err.message, /last administrator/);
        return true;
      });
      assert.equal((await s.api('GET', '/user', admin())).status, 200);
    });
  });
});
