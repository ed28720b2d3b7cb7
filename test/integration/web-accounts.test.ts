// The web interface's accounts through HTTP as a browser sends it: sign up, sign in and out,
// sessions (rotated at sign-in, HttpOnly, SameSite=Lax, never accepted by the API), CSRF on every
// form, sign-in throttling, must-change-password, registration switched off, error pages in the
// site's look, and escaping of what users typed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

describe('web accounts', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => s.close());

  it('signs up, signs in with a fresh session, signs out', async () => {
    const c = new WebClient(s.url);
    const form = await c.get('/user/sign_up');
    assert.equal(form.status, 200);
    assert.match(form.text, /<title>Register - Anvil<\/title>/);
    const csrfCookie = c.cookies.get('_csrf');
    assert.ok(csrfCookie, 'a CSRF cookie is set on the first visit');
    assert.match(form.headers.getSetCookie().join('\n'), /_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);

    const made = await c.post('/user/sign_up', {
      user_name: 'webby',
      email: 'webby@example.com',
      password: 'a-good-password',
      retype: 'a-good-password',
    });
    assert.equal(made.status, 303, made.text);
    assert.equal(made.location, '/');
    const cookie = made.headers.getSetCookie().find((x) => x.startsWith('i_like_gitea='));
    assert.ok(cookie, 'the session cookie is set');
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/, 'no Secure flag under http');
    const first = c.cookies.get('i_like_gitea')!;

    const home = await c.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /Welcome back, webby/);
    assert.match(home.text, /Welcome, webby! Your account is ready./, 'the flash message shows once');
    assert.doesNotMatch((await c.get('/')).text, /Your account is ready/);

    // The account exists for the API too.
    const u = await s.api<{ login: string }>('GET', '/users/webby');
    assert.equal(u.body.login, 'webby');

    // The session cookie is not a credential for the API.
    const viaCookie = await fetch(`${s.url}/api/v1/user`, { headers: { cookie: `i_like_gitea=${first}` } });
    assert.equal(viaCookie.status, 401);

    const out = await c.post('/user/logout', {});
    assert.equal(out.status, 303);
    assert.equal(c.cookies.has('i_like_gitea'), false);
    // The old session value no longer signs anyone in.
    const replay = new WebClient(s.url);
    replay.cookies.set('i_like_gitea', first);
    assert.doesNotMatch((await replay.get('/')).text, /Welcome back/);

    const signed = await c.signIn('webby', 'a-good-password');
    assert.equal(signed.status, 303);
    assert.notEqual(c.cookies.get('i_like_gitea'), first, 'a new session value at every sign-in');
  });

  it('rejects bad sign-up input with the field named, and escapes it', async () => {
    const c = new WebClient(s.url);
    await c.get('/user/sign_up');
    const short = await c.post('/user/sign_up', {
      user_name: 'shorty',
      email: 'shorty@example.com',
      password: 'short',
      retype: 'short',
    });
    assert.equal(short.status, 422);
    assert.match(short.text, /at least 8 characters/);
    const mismatch = await c.post('/user/sign_up', {
      user_name: 'shorty',
      email: 'shorty@example.com',
      password: 'long-enough-1',
      retype: 'long-enough-2',
    });
    assert.equal(mismatch.status, 422);
    assert.match(mismatch.text, /do not match/);
    const xss = await c.post('/user/sign_up', {
      user_name: '<script>alert(1)</script>',
      email: 'x@example.com',
      password: 'long-enough-1',
      retype: 'long-enough-1',
    });
    assert.equal(xss.status, 422);
    assert.doesNotMatch(xss.text, /<script>alert/);
    assert.match(xss.text, /value="&lt;script>alert\(1\)&lt;\/script>"/);
    const taken = await c.post('/user/sign_up', {
      user_name: 'root',
      email: 'another@example.com',
      password: 'long-enough-1',
      retype: 'long-enough-1',
    });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /already exists/);
  });

  it('refuses a form without its CSRF token, or with another browser’s', async () => {
    const user = await s.createUser('csrfy');
    const c = new WebClient(s.url);
    await c.get('/user/login');
    const none = await c.post('/user/login', { _csrf: null, user_name: user.name, password: user.password });
    assert.equal(none.status, 403);
    assert.match(none.text, /CSRF/);
    assert.match(none.text, /<title>Access denied - Anvil<\/title>/);
    const other = new WebClient(s.url);
    await other.get('/user/login');
    const foreign = await c.post('/user/login', {
      _csrf: other.csrf,
      user_name: user.name,
      password: user.password,
    });
    assert.equal(foreign.status, 403);
    // A token from before signing in is worthless after it.
    const before = c.csrf;
    assert.equal(
      (await c.post('/user/login', { user_name: user.name, password: user.password })).status,
      303,
    );
    const stale = await c.post('/user/logout', { _csrf: before });
    assert.equal(stale.status, 403);
  });

  it('throttles repeated failed sign-ins', async () => {
    const user = await s.createUser('throttled');
    const c = new WebClient(s.url);
    await c.get('/user/login');
    for (let i = 0; i < 5; i++) {
      const r = await c.post('/user/login', { user_name: user.name, password: 'wrong-password' });
      assert.equal(r.status, 401);
      assert.match(r.text, /Username or password is incorrect/);
    }
    const blocked = await c.post('/user/login', { user_name: user.name, password: user.password });
    assert.equal(blocked.status, 429);
    assert.match(blocked.text, /Too many failed sign-in attempts/);
    assert.equal(c.cookies.has('i_like_gitea'), false);
  });

  it('throttles one account whatever form of its name is typed, and lifts after the window', async () => {
    const user = await s.createUser('namey');
    const c = new WebClient(s.url);
    await c.get('/user/login');
    // Five failures under three forms of one account: name, e-mail address, another case.
    for (const login of ['namey', 'namey@example.com', 'NAMEY', 'Namey@Example.com', ' namey ']) {
      const r = await c.post('/user/login', { user_name: login, password: 'wrong-password' });
      assert.equal(r.status, 401, login);
    }
    for (const login of ['namey', 'namey@example.com']) {
      const blocked = await c.post('/user/login', { user_name: login, password: user.password });
      assert.equal(blocked.status, 429, login);
      assert.match(blocked.text, /Too many failed sign-in attempts/);
    }
    // The same limiter guards Basic authentication of the account.
    const api = await s.api<{ message: string }>('GET', '/user', { basic: [user.name, user.password] });
    assert.equal(api.status, 429);
    assert.match(api.body.message, /Too many failed sign-in attempts/);
    // A name no account has counts under the name as typed, normalised.
    for (const login of ['Ghost', 'ghost ', 'GHOST', 'ghost', 'gHost']) {
      assert.equal((await c.post('/user/login', { user_name: login, password: 'x-password' })).status, 401);
    }
    assert.equal((await c.post('/user/login', { user_name: 'ghost', password: 'x-password' })).status, 429);
    // Failures only count within the window ([security] LOGIN_THROTTLE_WINDOW): once they are
    // older than it, the account signs in again (rows aged rather than minutes slept).
    const window = s.config.security.signInThrottle.window;
    await s.ctx.db
      .updateTable('login_failure')
      .set((eb) => ({ created_unix: eb('created_unix', '-', window) }))
      .execute();
    const lifted = await c.post('/user/login', { user_name: 'namey@example.com', password: user.password });
    assert.equal(lifted.status, 303, lifted.text);
  });

  it('sends the browser back only to a path of this site after signing in', async () => {
    const user = await s.createUser('redirected');
    const evil = [
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r/evil.example',
      '/\r\nSet-Cookie: x=1',
      '\t//evil.example',
      ' //evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/%2F/evil.example',
      '/%5C/evil.example',
      '/%2f%2fevil.example',
      '%09/evil.example',
      '/%09/evil.example',
      '//evil.example',
      '///evil.example',
      'javascript:alert(1)',
      'JavaScript:alert(1)//',
      'data:text/html,<script>alert(1)</script>',
      'https://evil.example',
      'http://evil.example/path',
      'https:evil.example',
      '/%2e%2e//evil.example',
      '/.//evil.example',
      '/x/../..//evil.example',
      '/\u0001/evil.example',
      '/\u007f',
      'http://redirected@evil.example/',
    ];
    /** A Location the browser resolves on this site, with nothing a header may not carry. */
    const assertLocal = (location: string | null, what: string) => {
      assert.ok(location, what);
      assert.match(location, /^\/(?![/\\])[\x21-\x7e]*$/, `${what}: ${JSON.stringify(location)}`);
      assert.equal(new URL(location, 'http://anvil.test/').host, 'anvil.test', what);
    };
    const signed = new WebClient(s.url);
    await signed.signIn(user.name, user.password);
    for (const to of evil) {
      const what = `redirect_to=${JSON.stringify(to)}`;
      // Signed in already: straight back; percent-encoded in the query and as typed.
      const back = await signed.get(`/user/login?redirect_to=${encodeURIComponent(to)}`);
      assert.equal(back.status, 303, what);
      assertLocal(back.location, `GET ${what}`);
      // Signing in: the form's hidden field, then the answer to the sign-in.
      const c = new WebClient(s.url);
      const form = await c.get(`/user/login?redirect_to=${encodeURIComponent(to)}`);
      assert.equal(form.status, 200, what);
      const hidden = /name="redirect_to" value="([^"]*)"/.exec(form.text)?.[1] ?? '';
      assertLocal(hidden.replaceAll('&amp;', '&'), `form ${what}`);
      // A failed sign-in shows the form again with control characters too, never a 500 (a few:
      // failures count against this address).
      if ([...to].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) {
        const wrong = await c.post('/user/login', {
          user_name: `nobody-${evil.indexOf(to)}`,
          password: 'x',
          redirect_to: to,
        });
        assert.equal(wrong.status, 401, what);
      }
      const r = await c.post('/user/login', {
        user_name: user.name,
        password: user.password,
        redirect_to: to,
      });
      assert.equal(r.status, 303, `${what}: ${r.text.slice(0, 200)}`);
      assertLocal(r.location, `POST ${what}`);
    }
    // Raw query strings as a link would carry them.
    for (const raw of [
      '/%09/evil.example',
      '/%0D%0A/evil.example',
      '%2F%2Fevil.example',
      '/%5Cevil.example',
    ]) {
      const back = await signed.get(`/user/login?redirect_to=${raw}`);
      assert.equal(back.status, 303, raw);
      assertLocal(back.location, `GET raw ${raw}`);
    }
    // Paths of this site survive, normalised, with their query and fragment.
    const kept = [
      ['/alice/repo/issues?state=closed&q=a+b#issue-1', '/alice/repo/issues?state=closed&q=a+b#issue-1'],
      ['/explore/repos', '/explore/repos'],
      ['/a/./b/../c', '/a/c'],
      ['/a b', '/a%20b'],
      [`${s.url}/explore/users`, '/explore/users'],
      ['/%2F/local', '/%2F/local'],
    ];
    for (const [to, want] of kept) {
      const back = await signed.get(`/user/login?redirect_to=${encodeURIComponent(to!)}`);
      assert.equal(back.location, want, to);
      const c = new WebClient(s.url);
      await c.get('/user/login');
      const r = await c.post('/user/login', {
        user_name: user.name,
        password: user.password,
        redirect_to: to!,
      });
      assert.equal(r.location, want, `POST ${to}`);
    }
  });

  it('ends every session of an account when its password changes, whoever changes it', async () => {
    const user = await s.createUser('sessiony');
    let password = user.password;
    const signedIn = async (c: WebClient) => (await c.get('/repo/create')).status === 200;
    const browsers = async () => {
      const a = new WebClient(s.url);
      const b = new WebClient(s.url);
      for (const c of [a, b]) {
        await c.signIn(user.name, password);
        assert.ok(await signedIn(c), 'signed in');
      }
      return [a, b] as const;
    };
    // The user's own form: that browser goes on with a fresh session, the other is signed out.
    let [a, b] = await browsers();
    await a.get('/user/settings/change_password');
    password = 'own-form-pass-2';
    const own = await a.post('/user/settings/change_password', { password, retype: password });
    assert.equal(own.status, 303);
    assert.ok(await signedIn(a), 'the browser that changed it stays signed in');
    assert.equal(await signedIn(b), false, 'the other browser is signed out');
    // An administrator through the API.
    [a, b] = await browsers();
    password = 'admin-set-pass-3';
    const patched = await s.api('PATCH', `/admin/users/${user.name}`, {
      token: s.admin.token,
      body: { password, must_change_password: false },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(await signedIn(a), false, 'an administrator’s new password ends the sessions');
    assert.equal(await signedIn(b), false);
    // Another change (a description) ends nothing.
    [a] = await browsers();
    await s.api('PATCH', `/admin/users/${user.name}`, { token: s.admin.token, body: { description: 'hi' } });
    assert.ok(await signedIn(a), 'other edits leave sessions alone');
    // Suspension and a sign-in ban end them for good: lifting either does not bring them back.
    for (const [set, unset] of [
      [{ active: false }, { active: true }],
      [{ prohibit_login: true }, { prohibit_login: false }],
    ] as const) {
      [a] = await browsers();
      const on = await s.api('PATCH', `/admin/users/${user.name}`, { token: s.admin.token, body: set });
      assert.equal(on.status, 200);
      assert.equal(await signedIn(a), false, JSON.stringify(set));
      await s.api('PATCH', `/admin/users/${user.name}`, { token: s.admin.token, body: unset });
      assert.equal(await signedIn(a), false, `${JSON.stringify(unset)} does not revive the session`);
      const count = await s.ctx.db
        .selectFrom('web_session')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0, 'the rows are gone');
    }
    // Deletion.
    [a] = await browsers();
    assert.equal((await s.api('DELETE', `/admin/users/${user.name}`, { token: s.admin.token })).status, 204);
    assert.equal(await signedIn(a), false, 'a deleted account’s session ends');
  });

  it('sends a user who must change the password to change it first', async () => {
    const made = await s.api('POST', '/admin/users', {
      token: s.admin.token,
      body: {
        username: 'mustchange',
        email: 'mustchange@example.com',
        password: 'initial-pass-1',
        must_change_password: true,
      },
    });
    assert.equal(made.status, 201);
    const c = new WebClient(s.url);
    const signed = await c.signIn('mustchange', 'initial-pass-1');
    assert.equal(signed.location, '/user/settings/change_password');
    const elsewhere = await c.get('/explore/repos');
    assert.equal(elsewhere.status, 303);
    assert.equal(elsewhere.location, '/user/settings/change_password');
    await c.get('/user/settings/change_password');
    const bad = await c.post('/user/settings/change_password', {
      password: 'new-pass-123',
      retype: 'other-pass-1',
    });
    assert.equal(bad.status, 422);
    const ok = await c.post('/user/settings/change_password', {
      password: 'new-pass-123',
      retype: 'new-pass-123',
    });
    assert.equal(ok.status, 303);
    assert.equal((await c.get('/explore/repos')).status, 200);
    // The new password works for the API, the old one does not.
    assert.equal((await s.api('GET', '/user', { basic: ['mustchange', 'new-pass-123'] })).status, 200);
    assert.equal((await s.api('GET', '/user', { basic: ['mustchange', 'initial-pass-1'] })).status, 401);
  });

  it('answers pages a browser cannot have with pages, and JSON to API clients', async () => {
    const c = new WebClient(s.url);
    const missing = await c.get('/no-such-user');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /text\/html/);
    assert.match(missing.text, /Page not found/);
    const unrouted = await c.get('/a/b/c/d/e/f');
    assert.equal(unrouted.status, 404);
    assert.match(unrouted.text, /<title>Page not found - Anvil<\/title>/);
    const api = await fetch(`${s.url}/a/b/c/d/e/f`);
    assert.equal(api.status, 404);
    assert.match(api.headers.get('content-type') ?? '', /application\/json/);
    const apiInBrowser = await c.get('/api/v1/nothing-here');
    assert.match(apiInBrowser.headers.get('content-type') ?? '', /application\/json/);
    // Pages that need a signed-in user send the browser to sign in, and back.
    const create = await c.get('/repo/create');
    assert.equal(create.status, 303);
    assert.equal(create.location, '/user/login?redirect_to=%2Frepo%2Fcreate');
  });

  it('hides private accounts and repositories from outsiders', async () => {
    const owner = await s.createUser('secretive');
    await s.api('PATCH', `/admin/users/${owner.name}`, {
      token: s.admin.token,
      body: { visibility: 'private' },
    });
    const hidden = new WebClient(s.url);
    assert.equal((await hidden.get('/secretive')).status, 404);
    const me = new WebClient(s.url);
    await me.signIn(owner.name, owner.password);
    assert.equal((await me.get('/secretive')).status, 200);

    const alice = await s.createUser('alicew');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'hidden-repo', private: true } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'open-repo' } });
    const anon = new WebClient(s.url);
    const profile = await anon.get('/alicew');
    assert.match(profile.text, /open-repo/);
    assert.doesNotMatch(profile.text, /hidden-repo/);
    const explore = await anon.get('/explore/repos?q=repo');
    assert.match(explore.text, /open-repo/);
    assert.doesNotMatch(explore.text, /hidden-repo/);
    const a = new WebClient(s.url);
    await a.signIn(alice.name, alice.password);
    assert.match((await a.get('/alicew')).text, /hidden-repo/);
  });

  it('creates a repository from the form', async () => {
    const user = await s.createUser('maker');
    const c = new WebClient(s.url);
    await c.signIn(user.name, user.password);
    await c.get('/repo/create');
    const bad = await c.post('/repo/create', { uid: '0', repo_name: 'bad name!' });
    assert.equal(bad.status, 422);
    const made = await c.post('/repo/create', {
      repo_name: 'from-web',
      description: 'made <b>here</b>',
      auto_init: 'on',
    });
    assert.equal(made.status, 303, made.text);
    assert.equal(made.location, '/maker/from-web');
    const r = await s.api<{ description: string; empty: boolean }>('GET', '/repos/maker/from-web', {
      token: user.token,
    });
    assert.equal(r.body.description, 'made <b>here</b>');
    assert.equal(r.body.empty, false);
    const again = await c.post('/repo/create', { repo_name: 'from-web' });
    assert.equal(again.status, 422);
    assert.match(again.text, /already exists/);
    // Someone else's organization is not offered and cannot be chosen.
    const other = await s.createUser('outsider');
    const org = await s.api<{ id: number }>('POST', '/orgs', {
      token: other.token,
      body: { username: 'not-mine' },
    });
    const sneaky = await c.post('/repo/create', { uid: String(org.body.id), repo_name: 'sneaky' });
    assert.equal(sneaky.status, 303);
    assert.equal(sneaky.location, '/maker/sneaky', 'falls back to the user’s own account');
  });

  it('closes registration when DISABLE_REGISTRATION is set', async () => {
    const closed = await startServer({ ANVIL__SERVICE__DISABLE_REGISTRATION: 'true' });
    try {
      const c = new WebClient(closed.url);
      assert.equal((await c.get('/user/sign_up')).status, 403);
      const r = await c.post('/user/sign_up', {
        user_name: 'nope',
        email: 'nope@example.com',
        password: 'long-enough-1',
        retype: 'long-enough-1',
      });
      assert.equal(r.status, 403);
      assert.equal((await closed.api('GET', '/users/nope')).status, 404);
    } finally {
      await closed.close();
    }
  });

  it('serves an identicon for every avatar_url', async () => {
    const u = await s.api<{ avatar_url: string }>('GET', '/users/root');
    const res = await fetch(u.body.avatar_url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml');
    assert.match(await res.text(), /^<svg /);
    assert.equal((await fetch(`${s.url}/avatars/abc`)).status, 404);
  });
});
