// The integration settings pages of repositories (and the same pages of users, organizations and
// the site): webhooks with test deliveries and redelivery; Actions secrets, variables and runners;
// in a browser and as forms posted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

interface Received {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('web repository integrations', () => {
  let s: TestServer;
  let browser: Browser;
  let receiver: http.Server;
  let hookUrl = '';
  const received: Received[] = [];
  let owner: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };

  before(async () => {
    s = await startServer({
      ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
      ANVIL__ACTIONS__ENABLED: 'true',
      ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'true',
    });
    s.ctx.webhooks.start();
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ method: req.method ?? '', headers: req.headers, body });
        res.writeHead(202, { 'content-type': 'text/plain', 'x-receiver': 'tiny' });
        res.end(`got it ${received.length}`);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    owner = await s.createUser('hooker');
    other = await s.createUser('outsider');
    for (const [name, priv] of [
      ['site', false],
      ['secret-site', true],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: owner.token,
        body: { name, private: priv, auto_init: true },
      });
      assert.equal(r.status, 201, r.text);
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => receiver.close(r));
    await s.close();
  });

  const signedIn = async (u: { name: string; password: string }) => {
    const c = new WebClient(s.url);
    const r = await c.signIn(u.name, u.password);
    assert.equal(r.status, 303, r.text);
    return c;
  };

  const goodHook = {
    payload_url: '',
    http_method: 'POST',
    content_type: 'json',
    secret: 'hook-secret-1',
    events: 'push_only',
    branch_filter: '',
    authorization_header: '',
    active: 'on',
  };

  it('refuses bad webhook input with the message beside the field and nothing made', async () => {
    const c = await signedIn(owner);
    const list = await c.get('/hooker/site/settings/hooks');
    assert.equal(list.status, 200);
    assert.match(list.text, /There are no webhooks yet/);
    for (const type of ['forgejo', 'gitea', 'gogs', 'slack', 'matrix']) {
      assert.match(list.text, new RegExp(`href="/hooker/site/settings/hooks/${type}/new"`));
      assert.equal((await c.get(`/hooker/site/settings/hooks/${type}/new`)).status, 200);
    }
    assert.equal((await c.get('/hooker/site/settings/hooks/nonsense/new')).status, 404);

    const badUrl = await c.post('/hooker/site/settings/hooks/forgejo/new', {
      ...goodHook,
      payload_url: 'ftp://nowhere',
    });
    assert.equal(badUrl.status, 422);
    assert.match(badUrl.text, /id="f-payload_url-error"[^>]*>Target URL must be a valid/);
    assert.match(badUrl.text, /value="ftp:\/\/nowhere"/, 'what was typed is kept');

    const noEvents = await c.post('/hooker/site/settings/hooks/forgejo/new', {
      ...goodHook,
      payload_url: hookUrl,
      events: 'choose_events',
    });
    assert.equal(noEvents.status, 422);
    assert.match(noEvents.text, /Choose at least one event/);

    const badFilter = await c.post('/hooker/site/settings/hooks/forgejo/new', {
      ...goodHook,
      payload_url: hookUrl,
      branch_filter: '{main',
    });
    assert.equal(badFilter.status, 422, 'the service refuses an unusable glob');

    const slack = await c.post('/hooker/site/settings/hooks/slack/new', {
      ...goodHook,
      payload_url: hookUrl,
    });
    assert.equal(slack.status, 422);
    assert.match(slack.text, /A Slack channel is required/);

    const noCsrf = await c.post('/hooker/site/settings/hooks/forgejo/new', {
      ...goodHook,
      payload_url: hookUrl,
      _csrf: null,
    });
    assert.equal(noCsrf.status, 403);

    const hooks = await s.api<unknown[]>('GET', '/repos/hooker/site/hooks', { token: owner.token });
    assert.deepEqual(hooks.body, [], 'nothing was made');
  });

  it('creates, edits and deletes a webhook; the secret never shows; others are refused', async () => {
    const c = await signedIn(owner);
    await c.get('/hooker/site/settings/hooks/gitea/new');
    const made = await c.post('/hooker/site/settings/hooks/gitea/new', {
      ...goodHook,
      payload_url: `${hookUrl}?edit`,
      events: 'choose_events',
      issues: 'on',
      release: 'on',
      branch_filter: 'main',
    });
    assert.equal(made.status, 303, made.text);
    const path = made.location!;
    assert.match(path, /^\/hooker\/site\/settings\/hooks\/\d+$/);
    const id = Number(path.split('/').pop());
    const api = await s.api<{ type: string; events: string[]; branch_filter: string; active: boolean }>(
      'GET',
      `/repos/hooker/site/hooks/${id}`,
      { token: owner.token },
    );
    assert.equal(api.body.type, 'gitea');
    assert.ok(api.body.events.includes('issues') && api.body.events.includes('release'));
    assert.ok(!api.body.events.includes('push'));
    assert.equal(api.body.branch_filter, 'main');

    const edit = await c.get(path);
    assert.equal(edit.status, 200);
    assert.doesNotMatch(edit.text, /hook-secret-1/, 'the secret is not in the page');
    assert.match(edit.text, /id="f-issues"[^>]*checked/);

    const changed = await c.post(path, {
      ...goodHook,
      payload_url: `${hookUrl}?edited`,
      secret: '',
      active: null,
    });
    assert.equal(changed.status, 303);
    const after = await s.api<{ url: string; active: boolean; events: string[] }>(
      'GET',
      `/repos/hooker/site/hooks/${id}`,
      { token: owner.token },
    );
    assert.equal(after.body.url, `${hookUrl}?edited`);
    assert.equal(after.body.active, false);
    assert.deepEqual(after.body.events, ['push']);

    const bad = await c.post(path, { ...goodHook, payload_url: 'not a url' });
    assert.equal(bad.status, 422);

    // Someone who is not an administrator of the repository.
    const o = await signedIn(other);
    assert.equal((await o.get('/hooker/site/settings/hooks')).status, 403);
    assert.equal((await o.get(path)).status, 403);
    assert.equal((await o.get('/hooker/secret-site/settings/hooks')).status, 404);
    assert.equal((await o.post(`${path}/delete`, {})).status, 403);
    const anon = new WebClient(s.url);
    const toLogin = await anon.get('/hooker/site/settings/hooks');
    assert.equal(toLogin.status, 303, 'a guest is sent to sign in');
    assert.match(toLogin.location!, /^\/user\/login\?redirect_to=/);

    const gone = await c.post(`${path}/delete`, {});
    assert.equal(gone.status, 303);
    assert.equal(gone.location, '/hooker/site/settings/hooks');
    assert.equal((await c.get(path)).status, 404);
  });

  it('serves the same pages for users, organizations and site administrators', async () => {
    const c = await signedIn(owner);
    assert.equal((await c.get('/user/settings/hooks')).status, 200);
    await c.get('/user/settings/hooks/forgejo/new');
    const mine = await c.post('/user/settings/hooks/forgejo/new', { ...goodHook, payload_url: hookUrl });
    assert.equal(mine.status, 303);
    assert.match(mine.location!, /^\/user\/settings\/hooks\/\d+$/);
    const userHooks = await s.api<unknown[]>('GET', '/user/hooks', { token: owner.token });
    assert.equal(userHooks.body.length, 1);
    // Another user does not see it.
    const o = await signedIn(other);
    assert.equal((await o.get(mine.location!)).status, 404);

    const org = await s.api('POST', '/orgs', { token: owner.token, body: { username: 'hookorg' } });
    assert.equal(org.status, 201, org.text);
    assert.equal((await c.get('/org/hookorg/settings/hooks')).status, 200);
    assert.equal((await o.get('/org/hookorg/settings/hooks')).status, 403);

    assert.equal((await c.get('/admin/system-hooks/forgejo/new')).status, 403);
    const admin = await signedIn({ name: s.admin.name, password: s.admin.password });
    await admin.get('/admin/system-hooks/forgejo/new');
    const sys = await admin.post('/admin/system-hooks/forgejo/new', { ...goodHook, payload_url: hookUrl });
    assert.equal(sys.status, 303, sys.text);
    const def = await admin.post('/admin/default-hooks/gogs/new', { ...goodHook, payload_url: hookUrl });
    assert.equal(def.status, 303, def.text);
    const site = await s.api<Array<{ type: string; config: Record<string, string> }>>('GET', '/admin/hooks', {
      token: s.admin.token,
    });
    assert.deepEqual(site.body.map((h) => `${h.type}:${h.config['is_system_webhook']}`).sort(), [
      'forgejo:true',
      'gogs:false',
    ]);
    assert.equal((await admin.get(def.location!)).status, 200);
  });

  it('sends a test delivery, shows its request and response, and redelivers it (browser)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', owner.name);
    await page.fill('#f-password', owner.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.goto(`${s.url}/hooker/site/settings/hooks`);
    await page.click('a:has-text("Forgejo")');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-payload_url', hookUrl);
    await page.fill('#f-secret', 'browser-secret');
    await page.check('#f-events-send_everything');
    await page.click('main button:has-text("Add webhook")');
    await page.waitForURL(/\/hooker\/site\/settings\/hooks\/\d+$/);
    const before = received.length;

    await page.click('button:has-text("Test delivery")');
    await page.waitForURL(/\/hooker\/site\/settings\/hooks\/\d+$/);
    for (let i = 0; i < 100 && !(await page.locator('.hook-delivery .hook-succeeded').count()); i++) {
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    assert.equal(received.length, before + 1, 'the tiny server got the test delivery');
    const push = JSON.parse(received.at(-1)!.body) as { ref: string };
    assert.equal(push.ref, 'refs/heads/main');
    await page.click('.hook-delivery summary');
    const text = (await page.textContent('.hook-delivery')) ?? '';
    assert.match(text, /X-Forgejo-Event: push/i);
    assert.match(text, /refs\/heads\/main/, 'the request body');
    assert.match(text, /Status 202/);
    assert.match(text, /x-receiver: tiny/i, 'the response headers');
    assert.match(text, /got it/, 'the response body');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repo-hook-edit');

    await page.click('.hook-delivery button:has-text("Redeliver")');
    await page.waitForURL(/\/hooker\/site\/settings\/hooks\/\d+$/);
    for (let i = 0; i < 100 && (await page.locator('.hook-delivery .hook-succeeded').count()) < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    assert.equal(await page.locator('.hook-delivery').count(), 2);
    assert.equal(received.length, before + 2);
    assert.equal(received.at(-1)!.body, received.at(-2)!.body, 'the same body is sent again');
    assert.notEqual(
      received.at(-1)!.headers['x-forgejo-delivery'],
      received.at(-2)!.headers['x-forgejo-delivery'],
    );

    await page.goto(`${s.url}/hooker/site/settings/hooks`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repo-hooks');
    await context.close();
  });

  it('keeps Actions secrets unseen, checks variables, shows the runner token', async () => {
    const c = await signedIn(owner);
    const base = '/hooker/site/settings/actions';
    assert.equal((await c.get(`${base}/secrets`)).status, 200);
    const badName = await c.post(`${base}/secrets`, { name: '1BAD-NAME', data: 'x' });
    assert.equal(badName.status, 422);
    assert.match(badName.text, /id="f-name-error"[^>]*>invalid secret name/);
    assert.match(badName.text, /value="1BAD-NAME"/);
    const reserved = await c.post(`${base}/secrets`, { name: 'GITHUB_TOKEN', data: 'x' });
    assert.equal(reserved.status, 422);
    const noValue = await c.post(`${base}/secrets`, { name: 'DEPLOY_KEY', data: '' });
    assert.equal(noValue.status, 422);
    assert.match(noValue.text, /A value is required/);
    const saved = await c.post(`${base}/secrets`, { name: 'deploy_key', data: 'super-secret-value-42' });
    assert.equal(saved.status, 303);
    const again = await c.post(`${base}/secrets`, { name: 'DEPLOY_KEY', data: 'super-secret-value-43' });
    assert.equal(again.status, 303);
    const page = await c.get(`${base}/secrets`);
    assert.match(page.text, /The secret has been updated/);
    assert.match(page.text, /<code>DEPLOY_KEY<\/code>/);
    for (const p of [
      `${base}/secrets`,
      `${base}/variables`,
      `${base}/runners`,
      '/hooker/site/settings/hooks',
    ]) {
      assert.doesNotMatch((await c.get(p)).text, /super-secret-value/, `no secret value on ${p}`);
    }
    const noCsrf = await c.post(`${base}/secrets/delete`, { name: 'DEPLOY_KEY', _csrf: null });
    assert.equal(noCsrf.status, 403);
    const o = await signedIn(other);
    assert.equal((await o.get(`${base}/secrets`)).status, 403);
    assert.equal((await o.post(`${base}/secrets`, { name: 'STOLEN', data: 'x' })).status, 403);
    assert.equal((await o.get('/hooker/secret-site/settings/actions/secrets')).status, 404);
    await c.get(`${base}/secrets`);
    assert.equal((await c.post(`${base}/secrets/delete`, { name: 'DEPLOY_KEY' })).status, 303);
    assert.doesNotMatch((await c.get(`${base}/secrets`)).text, /DEPLOY_KEY/);

    // Variables.
    const empty = await c.post(`${base}/variables/new`, { name: 'MY_VAR', data: '' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /A value is required/);
    const badVar = await c.post(`${base}/variables/new`, { name: 'my-var', data: 'v' });
    assert.equal(badVar.status, 422);
    assert.match(badVar.text, /invalid variable name/);
    assert.equal((await c.post(`${base}/variables/new`, { name: 'my_var', data: 'hello' })).status, 303);
    const taken = await c.post(`${base}/variables/new`, { name: 'MY_VAR', data: 'again' });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /already exists/);
    const vars = await s.api<{ variables?: unknown } & Array<{ name: string; data: string }>>(
      'GET',
      '/repos/hooker/site/actions/variables',
      { token: owner.token },
    );
    assert.equal(vars.status, 200, vars.text);
    const list = await c.get(`${base}/variables`);
    const id = /variables\/(\d+)\/edit/.exec(list.text)![1];
    assert.equal((await c.get(`${base}/variables/${id}/edit`)).status, 200);
    assert.equal(
      (await c.post(`${base}/variables/${id}/edit`, { name: 'MY_VAR', data: 'changed' })).status,
      303,
    );
    assert.match((await c.get(`${base}/variables`)).text, /changed/);
    assert.equal((await c.post(`${base}/variables/${id}/delete`, {})).status, 303);
    assert.match((await c.get(`${base}/variables`)).text, /There are no variables yet/);

    // Runners: the registration token is the API's.
    const runnersPage = await c.get(`${base}/runners`);
    assert.equal(runnersPage.status, 200);
    const token = await s.api<{ token: string }>(
      'GET',
      '/repos/hooker/site/actions/runners/registration-token',
      {
        token: owner.token,
      },
    );
    assert.equal(token.status, 200, token.text);
    assert.ok(runnersPage.text.includes(`value="${token.body.token}"`), 'the registration token is shown');
    assert.equal((await o.get(`${base}/runners`)).status, 403);
    const { runner } = await s.ctx.runners.register({
      name: 'web-runner',
      token: token.body.token,
      version: 'v6.0.0',
      labels: ['docker:docker://node:20', 'linux'],
    });
    const withRunner = await c.get(`${base}/runners`);
    assert.match(withRunner.text, /web-runner/);
    assert.match(withRunner.text, /offline|idle/);
    assert.match(withRunner.text, />docker</);
    const tooLong = await c.post(`${base}/runners/${runner.id}`, { description: 'x'.repeat(300) });
    assert.equal(tooLong.status, 422);
    assert.match(tooLong.text, /id="f-description-error"/);
    assert.equal(
      (await c.post(`${base}/runners/${runner.id}`, { description: 'the build box' })).status,
      303,
    );
    assert.match((await c.get(`${base}/runners`)).text, /the build box/);
    assert.equal((await o.get(`${base}/runners/${runner.id}`)).status, 403);
    assert.equal(
      (await c.get(`/user/settings/actions/runners/${runner.id}`)).status,
      404,
      "not the user's runner",
    );

    // The same pages of a user and an organization.
    assert.equal((await c.get('/user/settings/actions/secrets')).status, 200);
    assert.equal(
      (await c.post('/user/settings/actions/variables/new', { name: 'MINE', data: '1' })).status,
      303,
    );
    assert.equal((await c.get('/org/hookorg/settings/actions/runners')).status, 200);
    assert.equal((await o.get('/org/hookorg/settings/actions/secrets')).status, 403);
  });

  it('shows the secrets and runners pages accessibly (browser)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', owner.name);
    await page.fill('#f-password', owner.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    await page.goto(`${s.url}/hooker/site/settings/actions/secrets`);
    await page.fill('#f-name', 'BROWSER_SECRET');
    await page.fill('#f-data', 'browser-secret-value');
    await page.click('main button:has-text("Save secret")');
    await page.waitForURL(`${s.url}/hooker/site/settings/actions/secrets`);
    assert.match((await page.textContent('main')) ?? '', /BROWSER_SECRET/);
    assert.doesNotMatch(await page.content(), /browser-secret-value/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repo-actions-secrets');
    await page.goto(`${s.url}/hooker/site/settings/actions/runners`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repo-actions-runners');
    await context.close();
  });

  it('adds a push mirror, synchronizes it now, and synchronizes a pull mirror', async () => {
    const target = await s.api('POST', '/user/repos', {
      token: owner.token,
      body: { name: 'mirror-target' },
    });
    assert.equal(target.status, 201, target.text);
    const c = await signedIn(owner);
    const base = '/hooker/site/settings/mirrors';
    const page = await c.get(base);
    assert.equal(page.status, 200);
    assert.match(page.text, /There are no push mirrors/);
    const bad = await c.post(`${base}/push`, {
      push_mirror_address: 'ssh://nope',
      push_mirror_interval: '8h0m0s',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /value="ssh:\/\/nope"/);
    const badInterval = await c.post(`${base}/push`, {
      push_mirror_address: `${s.url}/hooker/mirror-target.git`,
      push_mirror_interval: 'often',
    });
    assert.equal(badInterval.status, 422);
    const added = await c.post(`${base}/push`, {
      push_mirror_address: `${s.url}/hooker/mirror-target.git`,
      push_mirror_username: owner.name,
      push_mirror_password: owner.password,
      push_mirror_interval: '0',
    });
    assert.equal(added.status, 303, added.text);
    const listed = await c.get(base);
    assert.doesNotMatch(listed.text, new RegExp(owner.password), 'the password is not shown');
    const name = /push\/(remote_mirror_\w+)\/sync/.exec(listed.text)![1]!;
    const synced = await c.post(`${base}/push/${name}/sync`, {});
    assert.equal(synced.status, 303);
    const branches = await s.api<Array<{ name: string }>>('GET', '/repos/hooker/mirror-target/branches', {
      token: owner.token,
    });
    assert.deepEqual(
      branches.body.map((b) => b.name),
      ['main'],
      'the branch was pushed to the mirror',
    );
    assert.doesNotMatch((await c.get(base)).text, /Last update<\/dt><dd>never/);
    const o = await signedIn(other);
    assert.equal((await o.get(base)).status, 403);
    assert.equal((await o.post(`${base}/push/${name}/delete`, {})).status, 403);
    await c.get(base);
    assert.equal((await c.post(`${base}/push/${name}/delete`, {})).status, 303);
    assert.match((await c.get(base)).text, /There are no push mirrors/);

    // A pull mirror: its facts and "Synchronize now".
    const pull = await s.api('POST', '/repos/migrate', {
      token: owner.token,
      body: {
        clone_addr: `${s.url}/hooker/site.git`,
        repo_name: 'pulled',
        mirror: true,
        mirror_interval: '0',
      },
    });
    assert.equal(pull.status, 201, pull.text);
    const pullPage = await c.get('/hooker/pulled/settings/mirrors');
    assert.match(pullPage.text, /Pull mirror/);
    assert.ok(pullPage.text.includes(`${s.url}/hooker/site.git`));
    const badEvery = await c.post('/hooker/pulled/settings/mirrors/interval', { interval: 'sometimes' });
    assert.equal(badEvery.status, 422);
    assert.match(badEvery.text, /id="f-interval-error"[^>]*>[^<]*invalid duration/);
    assert.match(badEvery.text, /value="sometimes"/);
    assert.equal((await c.post('/hooker/pulled/settings/mirrors/interval', { interval: '2h' })).status, 303);
    assert.match((await c.get('/hooker/pulled/settings/mirrors')).text, /value="2h0m0s"/);
    const now = await c.post('/hooker/pulled/settings/mirrors/sync', {});
    assert.equal(now.status, 303);
    assert.match((await c.get('/hooker/pulled/settings/mirrors')).text, /The mirror is being synchronized/);
    const notMirror = await c.post(`${base}/sync`, {});
    assert.equal(notMirror.status, 400, 'a repository that is not a mirror cannot be synchronized');
  });

  it('lists and deletes LFS objects, lists and unlocks locks', async () => {
    const { repo } = await s.ctx.repos.requireRepo('hooker', 'site', null);
    const content = Buffer.from('large file content');
    const oid = crypto.createHash('sha256').update(content).digest('hex');
    await s.ctx.lfs.upload(repo, oid, content.length, Readable.from([content]));
    const user = (await s.ctx.users.getByName('hooker'))!;
    await s.ctx.lfs.createLock(repo, user, 'assets/big.bin');

    const c = await signedIn(owner);
    const base = '/hooker/site/settings/lfs';
    const files = await c.get(base);
    assert.equal(files.status, 200);
    assert.ok(files.text.includes(oid));
    assert.match(files.text, /18 B/);
    const locks = await c.get(`${base}/locks`);
    assert.match(locks.text, /assets\/big\.bin/);
    const lockId = /locks\/(\d+)\/unlock/.exec(locks.text)![1]!;

    const o = await signedIn(other);
    assert.equal((await o.get(base)).status, 403);
    assert.equal((await o.post(`${base}/delete/${oid}`, {})).status, 403);
    assert.equal((await c.post(`${base}/delete/${'0'.repeat(64)}`, {})).status, 404);
    assert.equal((await c.post(`${base}/delete/${oid}`, { _csrf: null })).status, 403);

    assert.equal((await c.post(`${base}/delete/${oid}`, {})).status, 303);
    assert.match((await c.get(base)).text, /stores no LFS objects/);
    assert.equal((await c.post(`${base}/locks/${lockId}/unlock`, {})).status, 303);
    assert.match((await c.get(`${base}/locks`)).text, /No files are locked/);
  });
});
