// Authentication and authorization of /api/v1: basic auth, tokens (header, query, as a password),
// token scopes, sessions (not accepted), reverse-proxy authentication, sudo and blocked accounts.
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface Msg {
  message: string;
}

interface UserJson {
  id: number;
  login: string;
  email: string;
  is_admin: boolean;
  prohibit_login: boolean;
  active: boolean;
}

const BAD_CREDENTIALS = 'invalid username, password or token';
const scopeMessage = (scope: string) => `token does not have at least one of required scope(s): [${scope}]`;
const PROHIBITED = 'This account is prohibited from signing in, please contact your site administrator.';

describe('authentication and authorization', () => {
  let s: TestServer;
  let carol: Awaited<ReturnType<TestServer['createUser']>>;
  let dave: Awaited<ReturnType<TestServer['createUser']>>;
  let orgCounter = 0;

  async function token(user: string, password: string, scopes: string[]): Promise<string> {
    const r = await s.api<{ sha1: string }>('POST', `/users/${user}/tokens`, {
      basic: [user, password],
      body: { name: `t-${crypto.randomBytes(4).toString('hex')}`, scopes },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.sha1;
  }
  const carolToken = (scopes: string[]) => token(carol.name, carol.password, scopes);
  const rootToken = (scopes: string[]) => token(s.admin.name, s.admin.password, scopes);

  before(async () => {
    s = await startServer();
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    for (const [name, visibility] of [
      ['limited-one', 'limited'],
      ['private-one', 'private'],
    ] as const) {
      const r = await s.api('POST', '/admin/users', {
        token: s.admin.token,
        body: {
          username: name,
          email: `${name}@example.com`,
          password: `${name}-password-1`,
          must_change_password: false,
          visibility,
        },
      });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(() => s.close());

  describe('basic authentication', () => {
    it('signs in with the user name, in any case', async () => {
      for (const login of ['carol', 'CAROL', 'Carol']) {
        const r = await s.api<UserJson>('GET', '/user', { basic: [login, carol.password] });
        assert.equal(r.status, 200, login);
        assert.equal(r.body.login, 'carol');
      }
    });

    it('signs in with the e-mail address, in any case', async () => {
      for (const login of ['carol@example.com', 'CAROL@Example.COM']) {
        const r = await s.api<UserJson>('GET', '/user', { basic: [login, carol.password] });
        assert.equal(r.status, 200, login);
        assert.equal(r.body.login, 'carol');
      }
    });

    it('answers 401 for a wrong password, on every route, public ones included', async () => {
      const guessed = await s.createUser('guessed');
      for (const path of ['/user', '/users/carol', '/users/search', '/version', '/orgs']) {
        const r = await s.api<Msg>('GET', path, { basic: ['guessed', 'wrong-password'] });
        assert.equal(r.status, 401, path);
        assert.equal(r.body.message, BAD_CREDENTIALS, path);
      }
      // Five failures, then the account's password is refused for the window, whatever form of
      // its name comes with it and on every surface that takes Basic authentication.
      const repo = await s.api('POST', '/user/repos', { token: guessed.token, body: { name: 'guarded' } });
      assert.equal(repo.status, 201, repo.text);
      for (const login of ['guessed', 'GUESSED', 'guessed@example.com']) {
        const r = await s.api<Msg>('GET', '/user', { basic: [login, guessed.password] });
        assert.equal(r.status, 429, login);
        assert.equal(
          r.body.message,
          'Too many failed sign-in attempts. Please wait a few minutes and try again.',
        );
      }
      const git = await fetch(`${s.url}/guessed/guarded.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Basic ${Buffer.from(`guessed:${guessed.password}`).toString('base64')}` },
      });
      assert.equal(git.status, 429, 'git over HTTP too');
      // Tokens are not passwords: they still work, as the password of Basic authentication too.
      assert.equal((await s.api('GET', '/user', { token: guessed.token })).status, 200);
      assert.equal((await s.api('GET', '/user', { basic: ['guessed', guessed.token] })).status, 200);
      // More guesses change nothing, and no request slips through side by side.
      const burst = await Promise.all(
        Array.from({ length: 10 }, () => s.api('GET', '/user', { basic: ['guessed', 'wrong-again'] })),
      );
      assert.deepEqual(new Set(burst.map((r) => r.status)), new Set([429]));
      // Time-based: once the failures are older than [security] LOGIN_THROTTLE_WINDOW (aged here
      // rather than waited for), the password works again.
      const window = s.config.security.signInThrottle.window;
      await s.ctx.db
        .updateTable('login_failure')
        .set((eb) => ({ created_unix: eb('created_unix', '-', window) }))
        .execute();
      assert.equal((await s.api('GET', '/user', { basic: ['guessed', guessed.password] })).status, 200);
    });

    it('lets as many guesses through side by side as one after another', async () => {
      const raced = await s.createUser('raced');
      const guess = () => s.api('GET', '/user', { basic: ['raced', 'wrong-password'] });
      const burst = (await Promise.all(Array.from({ length: 12 }, guess))).map((r) => r.status);
      assert.deepEqual(
        burst.filter((x) => x !== 401 && x !== 429),
        [],
        burst.join(),
      );
      // Each 401 was one guess counted; one after another, the rest of the five.
      let guesses = burst.filter((x) => x === 401).length;
      assert.ok(guesses <= 5, burst.join());
      for (let status = 401; status === 401;) {
        status = (await guess()).status;
        if (status === 401) guesses++;
        else assert.equal(status, 429);
      }
      assert.equal(guesses, 5, burst.join());
      assert.equal((await s.api('GET', '/user', { basic: ['raced', raced.password] })).status, 429);
    });

    it('answers 401 for an unknown user, an empty password or a password of another user', async () => {
      for (const [login, password] of [
        ['nobody', 'whatever-1'],
        ['nobody@example.com', 'whatever-1'],
        ['carol', ''],
        ['carol', dave.password],
        ['', carol.password],
      ] as const) {
        const r = await s.api<Msg>('GET', '/user', { basic: [login, password] });
        assert.equal(r.status, 401, `${login}:${password}`);
      }
    });

    it('answers 401 for an organization name (organizations have no password)', async () => {
      const org = await s.api('POST', '/orgs', { token: carol.token, body: { username: 'carol-org' } });
      assert.equal(org.status, 201, org.text);
      const r = await s.api('GET', '/user', { basic: ['carol-org', ''] });
      assert.equal(r.status, 401);
    });

    it('answers 401 for malformed Basic credentials and unsupported schemes', async () => {
      for (const authorization of [
        `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
        'Basic',
        'Digest username="carol"',
        'Negotiate abc',
      ]) {
        const r = await s.api<Msg>('GET', '/user', { headers: { authorization } });
        assert.equal(r.status, 401, authorization);
      }
    });
  });

  describe('access tokens', () => {
    it('are accepted as "Authorization: token X" and "Authorization: Bearer X"', async () => {
      for (const authorization of [
        `token ${carol.token}`,
        `Bearer ${carol.token}`,
        `bearer ${carol.token}`,
      ]) {
        const r = await s.api<UserJson>('GET', '/user', { headers: { authorization } });
        assert.equal(r.status, 200, authorization);
        assert.equal(r.body.login, 'carol');
      }
    });

    it('are accepted in the token and access_token query parameters', async () => {
      for (const param of ['token', 'access_token']) {
        const r = await s.api<UserJson>('GET', `/user?${param}=${carol.token}`);
        assert.equal(r.status, 200, param);
        assert.equal(r.body.login, 'carol');
      }
    });

    it('are accepted as the basic-auth password, or as the user name with an empty or x-oauth-basic password', async () => {
      for (const [login, password] of [
        ['carol', carol.token],
        ['carol@example.com', carol.token],
        [carol.token, 'x-oauth-basic'],
        [carol.token, ''],
      ] as const) {
        const r = await s.api<UserJson>('GET', '/user', { basic: [login, password] });
        assert.equal(r.status, 200, `${login}:${password}`);
        assert.equal(r.body.login, 'carol');
      }
    });

    it('keep their scopes when given as the basic-auth password', async () => {
      const readUser = await carolToken(['read:user']);
      const r = await s.api<Msg>('GET', '/orgs', { basic: ['carol', readUser] });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, scopeMessage('read:organization'));
    });

    it('answer 401 when unknown, wherever they are given, even on public routes', async () => {
      const unknown = crypto.randomBytes(20).toString('hex');
      const attempts: Array<[string, Parameters<TestServer['api']>[2]]> = [
        ['/user', { token: unknown }],
        ['/user', { headers: { authorization: `Bearer ${unknown}` } }],
        [`/user?token=${unknown}`, {}],
        [`/user?access_token=${unknown}`, {}],
        ['/user', { basic: ['carol', unknown] }],
        ['/users/carol', { token: unknown }],
        ['/version', { token: unknown }],
        ['/user', { token: 'not-a-token' }],
        ['/user', { token: carol.token.toUpperCase() }],
        ['/user', { token: `${carol.token}0` }],
        ['/user', { headers: { authorization: 'token' } }],
      ];
      for (const [path, opts] of attempts) {
        const r = await s.api<Msg>('GET', path, opts);
        assert.equal(r.status, 401, `${path} ${JSON.stringify(opts)}`);
        assert.equal(r.body.message, BAD_CREDENTIALS);
      }
    });
  });

  describe('token scopes', () => {
    it('a read:user token reads the user but is refused write and other categories with 403', async () => {
      const t = await carolToken(['read:user']);
      const me = await s.api<UserJson>('GET', '/user', { token: t });
      assert.equal(me.status, 200);
      assert.equal((await s.api('GET', '/users/dave', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/users/search?q=dave', { token: t })).status, 200);

      const write = await s.api<Msg>('POST', '/orgs', { token: t, body: { username: `o${++orgCounter}` } });
      assert.equal(write.status, 403);
      assert.equal(write.body.message, scopeMessage('write:organization'));
      const read = await s.api<Msg>('GET', '/orgs', { token: t });
      assert.equal(read.status, 403);
      assert.equal(read.body.message, scopeMessage('read:organization'));
      assert.equal((await s.api('GET', `/orgs/o${orgCounter}`, admin())).status, 404, 'nothing was created');
    });

    it('a token without read:organization is refused GET /orgs and the organization routes', async () => {
      const t = await carolToken(['write:user', 'read:repository', 'read:admin']);
      for (const path of ['/orgs', '/orgs/carol-org', '/user/orgs', '/users/carol/orgs']) {
        const r = await s.api<Msg>('GET', path, { token: t });
        assert.equal(r.status, 403, path);
        assert.equal(r.body.message, scopeMessage('read:organization'));
      }
    });

    it('a read:organization token reads organizations but may not write them or read the user', async () => {
      const t = await carolToken(['read:organization']);
      assert.equal((await s.api('GET', '/orgs', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/orgs/carol-org', { token: t })).status, 200);
      const me = await s.api<Msg>('GET', '/user', { token: t });
      assert.equal(me.status, 403);
      assert.equal(me.body.message, scopeMessage('read:user'));
      const edit = await s.api<Msg>('PATCH', '/orgs/carol-org', { token: t, body: { description: 'x' } });
      assert.equal(edit.status, 403);
      assert.equal(edit.body.message, scopeMessage('write:organization'));
    });

    it('write implies read', async () => {
      const t = await carolToken(['write:organization', 'write:user']);
      assert.equal((await s.api('GET', '/orgs', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/user', { token: t })).status, 200);
      const created = await s.api('POST', '/orgs', { token: t, body: { username: `o${++orgCounter}` } });
      assert.equal(created.status, 201, created.text);
    });

    it('read:admin reads the admin routes; writing them needs write:admin', async () => {
      const t = await rootToken(['read:admin']);
      const list = await s.api('GET', '/admin/users', { token: t });
      assert.equal(list.status, 200);
      const body = { username: 'via-read', email: 'via-read@example.com', password: 'via-read-pass-1' };
      const create = await s.api<Msg>('POST', '/admin/users', { token: t, body });
      assert.equal(create.status, 403);
      assert.equal(create.body.message, scopeMessage('write:admin'));
      const edit = await s.api<Msg>('PATCH', '/admin/users/dave', { token: t, body: { full_name: 'x' } });
      assert.equal(edit.status, 403);
      assert.equal(edit.body.message, scopeMessage('write:admin'));
      const del = await s.api<Msg>('DELETE', '/admin/users/dave', { token: t });
      assert.equal(del.status, 403);
      assert.equal(del.body.message, scopeMessage('write:admin'));
      assert.equal((await s.api('GET', '/users/via-read', admin())).status, 404);
      assert.equal((await s.api('GET', '/users/dave', admin())).status, 200);

      const w = await rootToken(['write:admin']);
      assert.equal((await s.api('GET', '/admin/users', { token: w })).status, 200);
      const created = await s.api('POST', '/admin/users', {
        token: w,
        body: { ...body, username: 'via-write', email: 'via-write@example.com' },
      });
      assert.equal(created.status, 201, created.text);
    });

    it("an administrator's token without an admin scope is refused the admin routes", async () => {
      const t = await rootToken(['write:user', 'write:organization']);
      const r = await s.api<Msg>('GET', '/admin/users', { token: t });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, scopeMessage('read:admin'));
    });

    it("a non-administrator's write:admin token is still refused the admin routes", async () => {
      const t = await carolToken(['write:admin']);
      const r = await s.api<Msg>('GET', '/admin/users', { token: t });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, 'user should be the site admin');
    });

    it('`all` opens every category', async () => {
      const t = await rootToken(['all']);
      assert.equal((await s.api('GET', '/user', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/orgs', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/admin/users', { token: t })).status, 200);
      const edit = await s.api('PATCH', '/admin/users/dave', { token: t, body: { location: 'Oslo' } });
      assert.equal(edit.status, 200);
    });

    it('routes without a category accept any token', async () => {
      const t = await carolToken(['read:misc']);
      assert.equal((await s.api('GET', '/version', { token: t })).status, 200);
      const me = await s.api<Msg>('GET', '/user', { token: t });
      assert.equal(me.status, 403);
      assert.equal(me.body.message, scopeMessage('read:user'));
    });

    it('passwords carry every scope', async () => {
      const r = await s.api('GET', '/admin/users', { basic: [s.admin.name, s.admin.password] });
      assert.equal(r.status, 200);
      const orgs = await s.api('GET', '/orgs', { basic: [carol.name, carol.password] });
      assert.equal(orgs.status, 200);
    });

    it('a public-only token sees public users only', async () => {
      const t = await carolToken(['public-only', 'read:user']);
      assert.equal((await s.api('GET', '/users/dave', { token: t })).status, 200);
      assert.equal((await s.api('GET', '/users/limited-one', { token: t })).status, 404);
      assert.equal((await s.api('GET', '/users/private-one', { token: t })).status, 404);
      const search = await s.api<{ data: UserJson[] }>('GET', '/users/search?q=-one', { token: t });
      assert.equal(search.status, 200);
      assert.deepEqual(search.body.data, []);
      assert.equal(search.headers.get('x-total-count'), '0');

      // the same user with an ordinary token sees the limited user
      const full = await s.api<{ data: UserJson[] }>('GET', '/users/search?q=-one', { token: carol.token });
      assert.deepEqual(
        full.body.data.map((u) => u.login),
        ['limited-one'],
      );
      assert.equal((await s.api('GET', '/users/limited-one', { token: carol.token })).status, 200);
    });

    it("a public-only token limits even an administrator's view", async () => {
      const t = await rootToken(['public-only', 'all']);
      assert.equal((await s.api('GET', '/users/private-one', { token: t })).status, 404);
      assert.equal((await s.api('GET', '/users/limited-one', { token: t })).status, 404);
      const search = await s.api<{ data: UserJson[] }>('GET', '/users/search?q=-one', { token: t });
      assert.deepEqual(search.body.data, []);
      assert.equal((await s.api('GET', '/users/private-one', admin())).status, 200);
    });
  });

  describe('sessions', () => {
    it('a session cookie alone is not accepted: the caller is anonymous', async () => {
      const headers = { cookie: 'i_like_gitea=0123456789abcdef; _csrf=abc; anvil_session=xyz' };
      const me = await s.api<Msg>('GET', '/user', { headers });
      assert.equal(me.status, 401);
      assert.equal(me.body.message, 'token is required');
      const profile = await s.api<UserJson>('GET', '/users/carol', { headers });
      assert.equal(profile.status, 200);
      assert.equal(profile.body.email, `carol@noreply.${new URL(s.url).hostname}`, 'anonymous view');
      assert.equal((await s.api('GET', '/users/limited-one', { headers })).status, 404);
      assert.equal((await s.api('GET', '/admin/users', { headers })).status, 401);
    });
  });

  describe('sudo', () => {
    it('lets an administrator act as another user with the Sudo header or ?sudo=', async () => {
      const byHeader = await s.api<UserJson>('GET', '/user', { ...admin(), headers: { sudo: 'carol' } });
      assert.equal(byHeader.status, 200);
      assert.equal(byHeader.body.login, 'carol');
      const byQuery = await s.api<UserJson>('GET', '/user?sudo=carol', admin());
      assert.equal(byQuery.status, 200);
      assert.equal(byQuery.body.login, 'carol');
      const byPassword = await s.api<UserJson>('GET', '/user?sudo=CAROL', {
        basic: [s.admin.name, s.admin.password],
      });
      assert.equal(byPassword.status, 200);
      assert.equal(byPassword.body.login, 'carol');
    });

    it('acts with the rights of the target user', async () => {
      const r = await s.api<Msg>('GET', '/admin/users', { ...admin(), headers: { sudo: 'carol' } });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, 'user should be the site admin');
      const priv = await s.api('GET', '/users/private-one?sudo=carol', admin());
      assert.equal(priv.status, 404);
    });

    it('answers 403 to a non-administrator', async () => {
      for (const opts of [
        { token: carol.token, headers: { sudo: 'dave' } },
        { basic: [carol.name, carol.password] as [string, string], headers: { sudo: 'dave' } },
      ]) {
        const r = await s.api<Msg>('GET', '/user', opts);
        assert.equal(r.status, 403);
        assert.equal(r.body.message, 'Only administrators allowed to sudo.');
      }
      const q = await s.api<Msg>('GET', '/user?sudo=dave', { token: carol.token });
      assert.equal(q.status, 403);
      const self = await s.api<Msg>('GET', '/user?sudo=carol', { token: carol.token });
      assert.equal(self.status, 403, 'not even as themself');
    });

    it('answers 404 for an unknown target or an organization', async () => {
      const unknown = await s.api<Msg>('GET', '/user', { ...admin(), headers: { sudo: 'nobody-here' } });
      assert.equal(unknown.status, 404);
      const org = await s.api<Msg>('GET', '/user?sudo=carol-org', admin());
      assert.equal(org.status, 404);
    });

    it('is ignored for anonymous callers', async () => {
      const r = await s.api<Msg>('GET', '/user', { headers: { sudo: 'carol' } });
      assert.equal(r.status, 401);
      assert.equal(r.body.message, 'token is required');
    });
  });

  describe('blocked accounts', () => {
    it('a user with prohibit_login gets 403 with any credential, until it is lifted', async () => {
      const eve = await s.createUser('eve');
      // Resolved once before the change, so that a remembered resolution would show.
      assert.equal((await s.api('GET', '/user', { token: eve.token })).status, 200);
      const set = await s.api<UserJson>('PATCH', '/admin/users/eve', {
        ...admin(),
        body: { prohibit_login: true },
      });
      assert.equal(set.status, 200);
      assert.equal(set.body.prohibit_login, true);
      for (const opts of [{ token: eve.token }, { basic: [eve.name, eve.password] as [string, string] }]) {
        for (const path of ['/user', '/users/carol', '/version']) {
          const r = await s.api<Msg>('GET', path, opts);
          assert.equal(r.status, 403, path);
          assert.equal(r.body.message, PROHIBITED);
        }
      }
      const tok = await s.api('POST', '/users/eve/tokens', {
        basic: [eve.name, eve.password],
        body: { name: 'blocked', scopes: ['all'] },
      });
      assert.equal(tok.status, 403);
      const wrong = await s.api('GET', '/user', { basic: [eve.name, 'wrong-password'] });
      assert.equal(wrong.status, 401, 'a wrong password is still a 401');

      const lift = await s.api('PATCH', '/admin/users/eve', { ...admin(), body: { prohibit_login: false } });
      assert.equal(lift.status, 200);
      assert.equal((await s.api('GET', '/user', { token: eve.token })).status, 200);
    });

    it('an inactive user gets 403 too', async () => {
      const fay = await s.createUser('fay');
      const set = await s.api<UserJson>('PATCH', '/admin/users/fay', { ...admin(), body: { active: false } });
      assert.equal(set.status, 200);
      assert.equal(set.body.active, false);
      const r = await s.api<Msg>('GET', '/user', { token: fay.token });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, PROHIBITED);
      const sudo = await s.api<UserJson>('GET', '/user?sudo=fay', admin());
      assert.equal(sudo.status, 200, 'an administrator may still act as them');
    });
  });

  describe('reverse-proxy authentication', () => {
    it('ignores X-WEBAUTH-USER by default', async () => {
      const headers = { 'x-webauth-user': 'carol' };
      const me = await s.api<Msg>('GET', '/user', { headers });
      assert.equal(me.status, 401);
      assert.equal(me.body.message, 'token is required');
      assert.equal((await s.api('GET', '/users/limited-one', { headers })).status, 404);
      const asRoot = await s.api('GET', '/admin/users', { headers: { 'x-webauth-user': 'root' } });
      assert.equal(asRoot.status, 401);
    });

    describe('when ENABLE_REVERSE_PROXY_AUTHENTICATION_API is on', () => {
      let p: TestServer;
      before(async () => {
        p = await startServer({ ANVIL__SERVICE__ENABLE_REVERSE_PROXY_AUTHENTICATION_API: 'true' });
        await p.createUser('proxied');
      });
      after(() => p.close());

      it('signs the named user in', async () => {
        const r = await p.api<UserJson>('GET', '/user', { headers: { 'x-webauth-user': 'proxied' } });
        assert.equal(r.status, 200);
        assert.equal(r.body.login, 'proxied');
        const asRoot = await p.api('GET', '/admin/users', { headers: { 'x-webauth-user': 'root' } });
        assert.equal(asRoot.status, 200);
      });

      it('counts as a password sign-in for token management', async () => {
        const r = await p.api<{ sha1: string }>('POST', '/users/proxied/tokens', {
          headers: { 'x-webauth-user': 'proxied' },
          body: { name: 'from-proxy', scopes: ['read:user'] },
        });
        assert.equal(r.status, 201, r.text);
        assert.match(r.body.sha1, /^[0-9a-f]{40}$/);
      });

      it('answers 401 for an unknown user or an organization', async () => {
        const r = await p.api<Msg>('GET', '/user', { headers: { 'x-webauth-user': 'nobody-here' } });
        assert.equal(r.status, 401);
        const org = await p.api('POST', '/admin/users/proxied/orgs', {
          token: p.admin.token,
          body: { username: 'proxied-org' },
        });
        assert.equal(org.status, 201);
        const asOrg = await p.api('GET', '/user', { headers: { 'x-webauth-user': 'proxied-org' } });
        assert.equal(asOrg.status, 401);
      });

      it('lets an Authorization header take precedence', async () => {
        const r = await p.api<UserJson>('GET', '/user', {
          token: p.admin.token,
          headers: { 'x-webauth-user': 'proxied' },
        });
        assert.equal(r.status, 200);
        assert.equal(r.body.login, 'root');
      });

      it('still refuses a prohibited user', async () => {
        const set = await p.api('PATCH', '/admin/users/proxied', {
          token: p.admin.token,
          body: { prohibit_login: true },
        });
        assert.equal(set.status, 200);
        const r = await p.api<Msg>('GET', '/user', { headers: { 'x-webauth-user': 'proxied' } });
        assert.equal(r.status, 403);
        assert.equal(r.body.message, PROHIBITED);
      });
    });

    describe('when the request does not come from a trusted proxy', () => {
      let p: TestServer;
      before(async () => {
        p = await startServer({
          ANVIL__SERVICE__ENABLE_REVERSE_PROXY_AUTHENTICATION_API: 'true',
          ANVIL__SECURITY__REVERSE_PROXY_TRUSTED_PROXIES: '10.0.0.0/8',
        });
      });
      after(() => p.close());

      it('ignores the header', async () => {
        const r = await p.api<Msg>('GET', '/user', { headers: { 'x-webauth-user': 'root' } });
        assert.equal(r.status, 401);
        assert.equal(r.body.message, 'token is required');
      });
    });
  });

  function admin() {
    return { token: s.admin.token };
  }
});
