// The OAuth2 provider over HTTP, as a client and a browser use it: /login/oauth/authorize (sign-in
// first, the consent page, skipped for a confidential client already authorized, errors sent back
// to the client or shown when the client or redirect URI is not registered), the consent form
// (/login/oauth/grant, CSRF-checked), the token endpoint (codes with a client secret or a PKCE
// verifier, HTTP Basic client authentication, single-use codes, rotating refresh tokens, replays
// revoking the grant), access tokens on /api/v1 with the grant's scopes, userinfo, introspection,
// discovery, and the grants in the user's settings (revoked at once; a new client secret and a
// deleted application end the tokens too). One Chromium pass clicks through the consent page.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { signJwt } from '../../src/oauth2/jwt.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

interface App {
  id: number;
  client_id: string;
  client_secret: string;
}

interface Tokens {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  id_token?: string;
  error?: string;
  error_description?: string;
}

interface Reply<T> {
  status: number;
  body: T;
  headers: Headers;
}

const JWT_SECRET = crypto.randomBytes(32).toString('base64');
const CB = 'https://client.example/cb';
const NATIVE_CB = 'http://127.0.0.1/callback';

const sha256url = (s: string) => crypto.createHash('sha256').update(s).digest('base64url');

function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

function jwtSignedWith(token: string, key: Buffer | string): boolean {
  const [h, p, sig] = token.split('.') as [string, string, string];
  return crypto.createHmac('sha256', key).update(`${h}.${p}`).digest('base64url') === sig;
}

describe('OAuth2 provider', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string; id: number };
  let bob: { name: string; password: string; token: string; id: number };
  let web: WebClient;
  let conf: App;
  let pub: App;

  const authorizeUrl = (app: App, extra: Record<string, string> = {}) =>
    `/login/oauth/authorize?${new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: CB,
      response_type: 'code',
      state: 'st4te',
      scope: 'openid profile email',
      ...extra,
    })}`;

  /** Posts to the token endpoint as a form (or JSON), with optional Basic credentials. */
  async function token(
    fields: Record<string, string>,
    opts: { json?: boolean; basic?: [string, string] } = {},
  ): Promise<Reply<Tokens>> {
    const headers: Record<string, string> = {
      'content-type': opts.json ? 'application/json' : 'application/x-www-form-urlencoded',
    };
    if (opts.basic)
      headers['authorization'] = `Basic ${Buffer.from(opts.basic.join(':')).toString('base64')}`;
    const res = await fetch(`${s.url}/login/oauth/access_token`, {
      method: 'POST',
      headers,
      body: opts.json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
    });
    return { status: res.status, body: (await res.json()) as Tokens, headers: res.headers };
  }

  const bearer = (t: string, scheme = 'Bearer') =>
    s.api<{ login: string }>('GET', '/user', { headers: { authorization: `${scheme} ${t}` } });

  /** Authorizes `app` for the signed-in `c` (consenting when asked): the code and the redirect. */
  async function codeFor(
    c: WebClient,
    app: App,
    extra: Record<string, string> = {},
  ): Promise<{ code: string; location: URL }> {
    let r = await c.get(authorizeUrl(app, extra));
    if (r.status === 200) {
      assert.match(r.text, /Authorize &quot;/);
      const hidden = Object.fromEntries(
        [...r.text.matchAll(/<input type="hidden" name="([a-z_]+)" value(?:="([^"]*)")?/g)].map((m) => [
          m[1]!,
          (m[2] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&'),
        ]),
      );
      r = await c.post('/login/oauth/grant', { ...hidden, granted: 'true' });
    }
    assert.equal(r.status, 303, r.text);
    const location = new URL(r.location!);
    const code = location.searchParams.get('code');
    assert.ok(code, r.location!);
    return { code, location };
  }

  async function confidentialTokens(c: WebClient, extra: Record<string, string> = {}): Promise<Tokens> {
    const { code } = await codeFor(c, conf, extra);
    const r = await token({
      grant_type: 'authorization_code',
      code,
      client_id: conf.client_id,
      client_secret: conf.client_secret,
      redirect_uri: CB,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  }

  const newApp = async (name: string, confidential: boolean, uris = [CB]) => {
    const r = await s.api<App>('POST', '/user/applications/oauth2', {
      token: bob.token,
      body: { name, redirect_uris: uris, confidential_client: confidential },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body;
  };

  before(async () => {
    s = await startServer({ ANVIL__OAUTH2__JWT_SECRET: JWT_SECRET });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    conf = await newApp('Confidential app', true);
    pub = await newApp('Native app', false, [NATIVE_CB, CB]);
    web = new WebClient(s.url);
  });
  after(() => s.close());

  it('sends a signed-out user to sign in, then shows the consent page', async () => {
    const first = await web.get(authorizeUrl(conf));
    assert.equal(first.status, 303);
    const login = new URL(first.location!, s.url);
    assert.equal(login.pathname, '/user/login');
    const back = login.searchParams.get('redirect_to')!;
    assert.equal(back, authorizeUrl(conf));
    await web.get(`/user/login?redirect_to=${encodeURIComponent(back)}`);
    const signed = await web.post('/user/login', {
      user_name: alice.name,
      password: alice.password,
      redirect_to: back,
    });
    assert.equal(signed.status, 303);
    assert.equal(signed.location, back);
    const page = await web.get(back);
    assert.equal(page.status, 200);
    assert.match(page.text, /Authorize &quot;Confidential app&quot; to access your account\?/);
    assert.match(page.text, /@bob/);
    assert.match(page.text, /name="state" value="st4te"/);
    assert.match(page.text, new RegExp(`redirected to <strong>${CB}</strong>`));
  });

  it('refuses the consent form without its CSRF token (403), and a denial goes back as access_denied', async () => {
    const form = {
      client_id: conf.client_id,
      redirect_uri: CB,
      state: 'st4te',
      scope: 'openid',
      nonce: '',
      granted: 'true',
    };
    const noCsrf = await web.post('/login/oauth/grant', { ...form, _csrf: null });
    assert.equal(noCsrf.status, 403);
    await web.get('/');
    const denied = await web.post('/login/oauth/grant', { ...form, granted: 'false' });
    assert.equal(denied.status, 303);
    const to = new URL(denied.location!);
    assert.equal(`${to.origin}${to.pathname}`, CB);
    assert.equal(to.searchParams.get('error'), 'access_denied');
    assert.equal(to.searchParams.get('state'), 'st4te');
    // Nothing was granted.
    const none = await s.ctx.db
      .selectFrom('oauth2_grant')
      .select('id')
      .where('user_id', '=', alice.id)
      .execute();
    assert.equal(none.length, 0);
  });

  it('runs the code flow of a confidential client: state, single-use hashed code, tokens, id_token, userinfo', async () => {
    const { code, location } = await codeFor(web, conf, { nonce: 'n-0S6' });
    assert.equal(`${location.origin}${location.pathname}`, CB);
    assert.equal(location.searchParams.get('state'), 'st4te');
    const rows = await s.ctx.db.selectFrom('oauth2_authorization_code').selectAll().execute();
    assert.ok(rows.every((r) => r.code_hash !== code && !r.code_hash.includes(code)));
    assert.ok(rows.some((r) => r.code_hash === crypto.createHash('sha256').update(code).digest('hex')));

    const r = await token({
      grant_type: 'authorization_code',
      code,
      client_id: conf.client_id,
      client_secret: conf.client_secret,
      redirect_uri: CB,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const t = r.body;
    assert.equal(t.token_type, 'bearer');
    assert.equal(t.expires_in, 3600);
    assert.ok(t.refresh_token && t.access_token !== t.refresh_token);

    // The id_token: HS256 with the client secret (OpenID Connect §10.1), for this user and client.
    assert.ok(t.id_token);
    assert.ok(jwtSignedWith(t.id_token, conf.client_secret));
    const id = decodeJwt(t.id_token);
    assert.equal(id['iss'], s.url);
    assert.deepEqual(id['aud'], [conf.client_id]);
    assert.equal(id['sub'], String(alice.id));
    assert.equal(id['nonce'], 'n-0S6');
    assert.equal(id['preferred_username'], 'alice');
    assert.equal(id['email'], 'alice@example.com');

    // The access token works on the API as Bearer and as token.
    for (const scheme of ['Bearer', 'token']) {
      const me = await bearer(t.access_token, scheme);
      assert.equal(me.status, 200);
      assert.equal(me.body.login, 'alice');
    }
    // A refresh token is no access token.
    assert.equal((await bearer(t.refresh_token)).status, 401);

    for (const method of ['GET', 'POST']) {
      const info = await fetch(`${s.url}/login/oauth/userinfo`, {
        method,
        headers: { authorization: `Bearer ${t.access_token}` },
      });
      assert.equal(info.status, 200);
      const body = (await info.json()) as Record<string, unknown>;
      assert.equal(body['sub'], String(alice.id));
      assert.equal(body['preferred_username'], 'alice');
      assert.equal(body['email'], 'alice@example.com');
      assert.match(String(body['picture']), /\/avatars\//);
    }
    // userinfo wants an OAuth2 access token: a personal access token is not one.
    const pat = await fetch(`${s.url}/login/oauth/userinfo`, {
      headers: { authorization: `token ${alice.token}` },
    });
    assert.equal(pat.status, 401);
    assert.match(pat.headers.get('www-authenticate') ?? '', /^Bearer/);

    // The code works once: a second exchange fails and revokes what the first issued.
    const again = await token({
      grant_type: 'authorization_code',
      code,
      client_id: conf.client_id,
      client_secret: conf.client_secret,
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
    assert.equal((await bearer(t.access_token)).status, 401);
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: conf.client_id,
      client_secret: conf.client_secret,
    });
    assert.equal(refreshed.body.error, 'invalid_grant');
  });

  it('refuses a wrong client secret and a wrong redirect URI; takes the client by HTTP Basic', async () => {
    const { code } = await codeFor(web, conf);
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      client_id: conf.client_id,
      client_secret: `${conf.client_secret}x`,
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, 'invalid_client');
    const none = await token({ grant_type: 'authorization_code', code, client_id: conf.client_id });
    assert.equal(none.body.error, 'invalid_client');
    const unknown = await token({
      grant_type: 'authorization_code',
      code,
      client_id: crypto.randomUUID(),
      client_secret: 'x',
    });
    assert.equal(unknown.body.error, 'invalid_client');
    const otherUri = await token(
      { grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/other' },
      { basic: [conf.client_id, conf.client_secret] },
    );
    assert.equal(otherUri.body.error, 'invalid_grant');
    const badType = await token({ grant_type: 'password', client_id: conf.client_id });
    assert.equal(badType.body.error, 'unsupported_grant_type');
    // Those did not spend the code: it still works, once, with the client by HTTP Basic.
    const ok = await token(
      { grant_type: 'authorization_code', code },
      { basic: [conf.client_id, conf.client_secret] },
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await bearer(ok.body.access_token)).status, 200);
  });

  it('skips the consent of a confidential client already authorized for the scope', async () => {
    const r = await web.get(authorizeUrl(conf));
    assert.equal(r.status, 303);
    assert.ok(new URL(r.location!).searchParams.get('code'));
    // A wider scope asks again.
    const wider = await web.get(authorizeUrl(conf, { scope: 'openid profile email groups' }));
    assert.equal(wider.status, 200);
  });

  it('shows, never redirects, an unknown client or unregistered redirect URI; sends other errors to the client', async () => {
    for (const url of [
      authorizeUrl({ ...conf, client_id: crypto.randomUUID() }),
      authorizeUrl(conf, { redirect_uri: 'https://evil.example/cb' }),
      authorizeUrl(conf, { redirect_uri: `${CB}?extra=1` }),
      authorizeUrl(conf, { redirect_uri: `${CB}/more` }),
      authorizeUrl(conf, { redirect_uri: '' }),
    ]) {
      const r = await web.get(url);
      assert.equal(r.status, 400, url);
      assert.equal(r.location, null);
      assert.match(r.text, /Authorization failed/);
    }
    const type = await web.get(authorizeUrl(conf, { response_type: 'token' }));
    assert.equal(type.status, 303);
    const to = new URL(type.location!);
    assert.equal(to.searchParams.get('error'), 'unsupported_response_type');
    assert.equal(to.searchParams.get('state'), 'st4te');
    const method = await web.get(
      authorizeUrl(conf, { code_challenge: 'x'.repeat(43), code_challenge_method: 'S512' }),
    );
    assert.equal(new URL(method.location!).searchParams.get('error'), 'invalid_request');
  });

  it('rotates refresh tokens; an expired one fails; a reused one revokes the grant', async () => {
    const t = await confidentialTokens(web);
    const creds = { client_id: conf.client_id, client_secret: conf.client_secret };
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, ...creds });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.notEqual(r1.body.refresh_token, t.refresh_token);
    assert.equal((await bearer(r1.body.access_token)).status, 200);
    assert.ok(r1.body.id_token);

    // An expired refresh token, validly signed, of this very grant: refused.
    const claims = decodeJwt(r1.body.refresh_token);
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt(Buffer.from(JWT_SECRET, 'base64'), { ...claims, iat: now - 100, exp: now - 10 });
    const old = await token({ grant_type: 'refresh_token', refresh_token: expired, ...creds });
    assert.equal(old.status, 400);
    assert.equal(old.body.error, 'invalid_grant');
    // A forged one (another key) too.
    const forged = signJwt('not the key', claims);
    assert.equal(
      (await token({ grant_type: 'refresh_token', refresh_token: forged, ...creds })).body.error,
      'invalid_grant',
    );
    // Another client cannot use it.
    const other = await token(
      { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: pub.client_id },
      { json: true },
    );
    assert.equal(other.body.error, 'invalid_grant');

    // The first refresh token again: a replay, so the grant goes, with every token it issued.
    const replay = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, ...creds });
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal((await bearer(r1.body.access_token)).status, 401);
    const next = await token({ grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, ...creds });
    assert.equal(next.body.error, 'invalid_grant');
    // So the next authorization asks again.
    assert.equal((await web.get(authorizeUrl(conf))).status, 200);
  });

  it('runs the PKCE flow of a public client (S256 and plain, JSON body, loopback on any port)', async () => {
    const noPkce = await web.get(authorizeUrl(pub, { redirect_uri: NATIVE_CB }));
    assert.equal(noPkce.status, 303);
    const err = new URL(noPkce.location!);
    assert.equal(err.searchParams.get('error'), 'invalid_request');
    assert.match(err.searchParams.get('error_description')!, /PKCE/);

    const verifier = crypto.randomBytes(32).toString('base64url');
    const loopback = 'http://127.0.0.1:54321/callback';
    const { code, location } = await codeFor(web, pub, {
      redirect_uri: loopback,
      code_challenge: sha256url(verifier),
      code_challenge_method: 'S256',
      scope: 'read:user',
    });
    assert.equal(`${location.origin}${location.pathname}`, 'http://127.0.0.1:54321/callback');
    const base = { grant_type: 'authorization_code', code, client_id: pub.client_id, redirect_uri: loopback };
    assert.equal((await token(base, { json: true })).body.error, 'invalid_grant');
    assert.equal(
      (await token({ ...base, code_verifier: `${verifier}x` }, { json: true })).body.error,
      'invalid_grant',
    );
    const ok = await token({ ...base, code_verifier: verifier }, { json: true });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.id_token, undefined);

    // The grant's scope limits the token: read:user reads the user, and writes nothing.
    const t = ok.body.access_token;
    assert.equal((await bearer(t)).status, 200);
    const write = await s.api('PATCH', '/user/settings', {
      headers: { authorization: `Bearer ${t}` },
      body: { full_name: 'Alice' },
    });
    assert.equal(write.status, 403);
    const repos = await s.api('GET', '/repos/search', { headers: { authorization: `Bearer ${t}` } });
    assert.equal(repos.status, 403);

    // A public client is asked about every time (RFC 6749 §10.2), and plain PKCE works too.
    const plain = crypto.randomBytes(40).toString('base64url');
    const again = await web.get(
      authorizeUrl(pub, { redirect_uri: NATIVE_CB, code_challenge: plain, scope: 'read:user' }),
    );
    assert.equal(again.status, 200);
    const second = await codeFor(web, pub, {
      redirect_uri: NATIVE_CB,
      code_challenge: plain,
      code_challenge_method: 'plain',
      scope: 'read:user',
    });
    const r = await token({
      grant_type: 'authorization_code',
      code: second.code,
      client_id: pub.client_id,
      code_verifier: plain,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  it('introspects tokens for an authenticated client; serves the discovery document', async () => {
    const t = await confidentialTokens(web);
    const introspect = async (tok: string, basic?: [string, string]) => {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (basic) headers['authorization'] = `Basic ${Buffer.from(basic.join(':')).toString('base64')}`;
      const res = await fetch(`${s.url}/login/oauth/introspect`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ token: tok }).toString(),
      });
      return {
        status: res.status,
        body: res.status === 200 ? ((await res.json()) as Record<string, unknown>) : {},
      };
    };
    assert.equal((await introspect(t.access_token)).status, 401);
    assert.equal((await introspect(t.access_token, [conf.client_id, 'wrong'])).status, 401);
    assert.equal((await introspect(t.access_token, [pub.client_id, ''])).status, 401);
    const active = await introspect(t.access_token, [conf.client_id, conf.client_secret]);
    assert.equal(active.body['active'], true);
    assert.equal(active.body['username'], 'alice');
    assert.equal(active.body['scope'], 'openid profile email');
    assert.equal((await introspect('nonsense', [conf.client_id, conf.client_secret])).body['active'], false);

    const wk = await fetch(`${s.url}/.well-known/openid-configuration`);
    assert.equal(wk.status, 200);
    const doc = (await wk.json()) as Record<string, unknown>;
    assert.equal(doc['issuer'], s.url);
    assert.equal(doc['token_endpoint'], `${s.url}/login/oauth/access_token`);
    assert.deepEqual(doc['code_challenge_methods_supported'], ['plain', 'S256']);
  });

  it('lists authorized applications in the settings and revokes them at once', async () => {
    const t = await confidentialTokens(web);
    const page = await web.get('/user/settings/applications');
    assert.equal(page.status, 200);
    assert.match(page.text, /Authorized OAuth2 applications/);
    const m = new RegExp(`action="/user/settings/applications/oauth2/${conf.id}/revoke/(\\d+)"`).exec(
      page.text,
    );
    assert.ok(m, 'a Revoke button');
    const grantId = m[1]!;

    // Bob cannot revoke Alice's grant (404), nor can anyone without the form's token (403).
    const bobWeb = new WebClient(s.url);
    await bobWeb.signIn(bob.name, bob.password);
    await bobWeb.get('/user/settings/applications');
    assert.equal(
      (await bobWeb.post(`/user/settings/applications/oauth2/${conf.id}/revoke/${grantId}`, {})).status,
      404,
    );
    assert.equal(
      (await web.post(`/user/settings/applications/oauth2/${conf.id}/revoke/${grantId}`, { _csrf: null }))
        .status,
      403,
    );
    assert.equal((await bearer(t.access_token)).status, 200);

    await web.get('/user/settings/applications');
    const revoked = await web.post(`/user/settings/applications/oauth2/${conf.id}/revoke/${grantId}`, {});
    assert.equal(revoked.status, 303);
    assert.equal((await bearer(t.access_token)).status, 401);
    const after = await web.get('/user/settings/applications');
    assert.doesNotMatch(after.text, new RegExp(`/revoke/${grantId}"`));
  });

  it('ends the tokens of an application whose secret is regenerated, or which is deleted', async () => {
    const t = await confidentialTokens(web);
    assert.equal((await bearer(t.access_token)).status, 200);
    const bobWeb = new WebClient(s.url);
    await bobWeb.signIn(bob.name, bob.password);
    await bobWeb.get(`/user/settings/applications/oauth2/${conf.id}`);
    const regen = await bobWeb.post(`/user/settings/applications/oauth2/${conf.id}/regenerate_secret`, {});
    assert.equal(regen.status, 303);
    assert.equal((await bearer(t.access_token)).status, 401);
    const flash = decodeURIComponent(bobWeb.cookies.get('anvil_flash') ?? '');
    conf.client_secret = /(gto_\S+)/.exec(flash)![1]!;
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: conf.client_id,
      client_secret: conf.client_secret,
    });
    assert.equal(refreshed.body.error, 'invalid_grant');
    // The grant stayed: the consent is not asked again, and new tokens work.
    const fresh = await confidentialTokens(web);
    assert.equal((await bearer(fresh.access_token)).status, 200);

    const del = await s.api('DELETE', `/user/applications/oauth2/${conf.id}`, { token: bob.token });
    assert.equal(del.status, 204);
    assert.equal((await bearer(fresh.access_token)).status, 401);
    assert.equal((await web.get(authorizeUrl(conf))).status, 400);
  });

  it("reads [oauth2] with Forgejo's defaults and refuses a JWT_SECRET that is not 32 bytes of base64", () => {
    const config = loadConfig({ env: {}, cwd: s.dataDir });
    assert.deepEqual(config.oauth2, {
      enabled: true,
      accessTokenExpirationTime: 3600,
      refreshTokenExpirationTime: 730,
      invalidateRefreshTokens: true,
      jwtSecret: '',
    });
    for (const bad of ['short', crypto.randomBytes(16).toString('base64'), 'not base64 at all!']) {
      assert.throws(
        () => loadConfig({ env: { ANVIL__OAUTH2__JWT_SECRET: bad }, cwd: s.dataDir }),
        ConfigError,
      );
    }
  });

  it('consents in Chromium', async () => {
    const app = await newApp('Browser app', true, [`${s.url}/oauth-callback`]);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', alice.name);
      await page.fill('#f-password', alice.password);
      await page.click('main button[type=submit]');
      await page.waitForURL((u) => !u.pathname.startsWith('/user/login'));
      await page.goto(
        `${s.url}/login/oauth/authorize?${new URLSearchParams({
          client_id: app.client_id,
          redirect_uri: `${s.url}/oauth-callback`,
          response_type: 'code',
          state: 'browser-state',
        })}`,
      );
      assert.equal(await page.textContent('h1'), 'Authorize "Browser app" to access your account?');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'oauth2-consent');
      await page.click('#authorize-app');
      await page.waitForURL((u) => u.pathname === '/oauth-callback');
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('state'), 'browser-state');
      assert.match(landed.searchParams.get('code') ?? '', /^gta_/);
    } finally {
      await browser.close();
    }
  });
});
