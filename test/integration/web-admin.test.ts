// The site administration (/admin...): refused to everyone but administrators (403 to a signed-in
// user, sign-in for an anonymous visitor, on every page and form), creating a user with bad input
// (422, the message by the field), CSRF, the configuration page's masked secrets, lists and
// deletion; and in Chromium: suspending a signed-in user ends their session, a background job run
// from the dashboard shows its result, with axe and screenshots.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

const ADMIN_GETS = [
  '/admin',
  '/admin/monitor/cron',
  '/admin/users',
  '/admin/users/new',
  '/admin/users/1',
  '/admin/users/1/edit',
  '/admin/emails',
  '/admin/orgs',
  '/admin/repos',
  '/admin/repos/unadopted',
  '/admin/packages',
  '/admin/hooks',
  '/admin/actions/runners',
  '/admin/config',
  '/admin/notices',
];
const ADMIN_POSTS = [
  '/admin',
  '/admin/monitor/cron',
  '/admin/users/new',
  '/admin/users/1/edit',
  '/admin/users/1/delete',
  '/admin/emails/activate',
  '/admin/repos/delete',
  '/admin/repos/unadopted',
  '/admin/packages/delete',
  '/admin/actions/runners/1/delete',
  '/admin/notices/delete',
  '/admin/notices/empty',
];

describe('web site administration', () => {
  let s: TestServer;
  let admin: WebClient;
  before(async () => {
    s = await startServer();
    admin = new WebClient(s.url);
    assert.equal((await admin.signIn(s.admin.name, s.admin.password)).status, 303);
  });
  after(async () => s.close());

  it('refuses every page and form to a user who is not an administrator, and sends anonymous visitors to sign in', async () => {
    const u = await s.createUser('plain');
    const c = new WebClient(s.url);
    assert.equal((await c.signIn(u.name, u.password)).status, 303);
    for (const p of ADMIN_GETS) {
      const r = await c.get(p);
      assert.equal(r.status, 403, `GET ${p}`);
      assert.match(r.text, /Access denied/, `GET ${p}`);
    }
    await c.get('/');
    for (const p of ADMIN_POSTS) {
      const r = await c.post(p, { op: 'sweep_leftovers', user_name: 'x', id: '1', purge: 'on' });
      assert.equal(r.status, 403, `POST ${p}`);
    }
    // Nothing changed: the admin account is still there.
    assert.equal((await s.api('GET', '/users/root')).status, 200);

    const anon = new WebClient(s.url);
    for (const p of ADMIN_GETS) {
      const r = await anon.get(p);
      assert.equal(r.status, 303, `anonymous GET ${p}`);
      assert.equal(r.location, `/user/login?redirect_to=${encodeURIComponent(p)}`);
    }
    // The administrator sees them all.
    for (const p of ADMIN_GETS) {
      const r = await admin.get(p);
      assert.ok(r.status === 200 || r.status === 303, `admin GET ${p}: ${r.status}`);
    }
  });

  it('rejects bad input when creating a user, with the message by the field, and creates a good one', async () => {
    await admin.get('/admin/users/new');
    const good = {
      user_name: 'newbie',
      email: 'newbie@example.com',
      password: 'newbie-pass-1',
      visibility: 'public',
    };

    const empty = await admin.post('/admin/users/new', { user_name: '', email: '', password: '' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /id="f-user_name-error"[^>]*>The username must not be empty/);
    assert.match(empty.text, /id="f-email-error"[^>]*>The email address must not be empty/);
    assert.match(empty.text, /id="f-password-error"[^>]*>The password must be at least 8/);

    const short = await admin.post('/admin/users/new', { ...good, password: 'short' });
    assert.equal(short.status, 422);
    assert.match(short.text, /id="f-password-error"/);
    assert.match(short.text, /value="newbie@example.com"/, 'what was typed is kept');

    const badEmail = await admin.post('/admin/users/new', { ...good, email: 'not-an-address' });
    assert.equal(badEmail.status, 422);
    assert.match(badEmail.text, /id="f-email-error"[^>]*>e-mail address is invalid/);

    const taken = await admin.post('/admin/users/new', { ...good, user_name: 'root' });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /id="f-user_name-error"[^>]*>user already exists/);
    assert.equal((await s.api('GET', '/users/newbie')).status, 404, 'nothing was created');

    const made = await admin.post('/admin/users/new', good);
    assert.equal(made.status, 303, made.text);
    assert.match(made.location ?? '', /^\/admin\/users\/\d+\/edit$/);
    const edit = await admin.get(made.location!);
    assert.match(edit.text, /The user account newbie has been created/);
    assert.equal((await s.api('GET', '/users/newbie')).status, 200);

    // The list finds it, sorted and searched.
    const list = await admin.get('/admin/users?q=newb&sort=alphabetically');
    assert.equal(list.status, 200);
    assert.match(list.text, /newbie@example.com/);
    assert.doesNotMatch(list.text, /root@/);

    // Edit with a bad email and a bad limit: 422, nothing changed.
    const bad = await admin.post(made.location!, {
      user_name: 'newbie',
      email: 'nope',
      max_repo_creation: 'lots',
      active: 'on',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="f-max_repo_creation-error"/);
    const ok = await admin.post(made.location!, {
      user_name: 'newbie',
      full_name: 'New Bie',
      email: 'newbie@example.com',
      max_repo_creation: '3',
      visibility: 'public',
      active: 'on',
      restricted: 'on',
    });
    assert.equal(ok.status, 303, ok.text);
    const api = await s.api<{ full_name: string; restricted: boolean }>('GET', '/users/newbie', {
      token: s.admin.token,
    });
    assert.equal(api.body.full_name, 'New Bie');
    assert.equal(api.body.restricted, true);

    // Delete.
    const id = /\/admin\/users\/(\d+)\/edit/.exec(made.location!)![1]!;
    const del = await admin.post(`/admin/users/${id}/delete`, {});
    assert.equal(del.status, 303);
    assert.equal((await s.api('GET', '/users/newbie')).status, 404);
  });

  it('refuses a form without its CSRF token', async () => {
    await admin.get('/admin/users/new');
    const r = await admin.post('/admin/users/new', {
      _csrf: null,
      user_name: 'csrfy',
      email: 'csrfy@example.com',
      password: 'csrfy-pass-1',
    });
    assert.equal(r.status, 403);
    assert.equal((await s.api('GET', '/users/csrfy')).status, 404);
  });

  it("filters the user list by Forgejo's status_filter[...], sorts by update time and keeps the search in pager links", async () => {
    const made = await Promise.all(
      ['flt-on', 'flt-off', 'flt-boss', 'flt-limited', 'flt-banned', 'flt-2fa'].map((n) => s.createUser(n)),
    );
    const edit = (name: string, body: Record<string, unknown>) =>
      s.api('PATCH', `/admin/users/${name}`, { token: s.admin.token, body });
    await edit('flt-off', { active: false });
    await edit('flt-boss', { admin: true });
    await edit('flt-limited', { restricted: true });
    await edit('flt-banned', { prohibit_login: true });
    const twofa = made[5]!;
    await s.ctx.db
      .insertInto('two_factor')
      .values({
        uid: twofa.id,
        secret: 'x',
        scratch_salt: '',
        scratch_hash: '',
        created_unix: 1,
        updated_unix: 1,
      })
      .execute();
    // flt-on is the one updated last.
    await edit('flt-on', { full_name: 'Updated last' });
    await s.ctx.db
      .updateTable('user')
      .set({ updated_unix: 4_000_000_000 })
      .where('lower_name', '=', 'flt-on')
      .execute();

    const names = async (query: string) => {
      const r = await admin.get(`/admin/users?q=flt-&${query}`);
      assert.equal(r.status, 200, query);
      return [...r.text.matchAll(/<a href="\/(flt-[a-z0-9]+)">/g)].map((m) => m[1]).sort();
    };
    const f = (k: string, v: string) => `status_filter%5B${k}%5D=${v}`;
    assert.deepEqual(await names(f('is_active', '0')), ['flt-off']);
    assert.deepEqual(await names(f('is_admin', '1')), ['flt-boss']);
    assert.deepEqual(await names(f('is_restricted', '1')), ['flt-limited']);
    assert.deepEqual(await names(f('is_prohibit_login', '1')), ['flt-banned']);
    assert.deepEqual(await names(f('is_2fa_enabled', '1')), ['flt-2fa']);
    assert.equal((await names(f('is_2fa_enabled', '0'))).length, 5);
    assert.deepEqual(
      await names(
        `${f('is_active', '1')}&${f('is_admin', '0')}&${f('is_restricted', '0')}&${f('is_prohibit_login', '0')}&${f('is_2fa_enabled', '0')}`,
      ),
      ['flt-on'],
    );
    // Bad values are ignored, never an error; a bad sort falls back to the default.
    assert.equal((await names(`${f('is_admin', 'yes')}&sort=sideways`)).length, 6);
    const chosen = await admin.get(`/admin/users?q=flt-&${f('is_admin', '0')}`);
    assert.match(
      chosen.text,
      /<select name="status_filter\[is_admin\]">(?:(?!<\/select>).)*<option value="0" selected/s,
    );

    const recent = await admin.get('/admin/users?q=flt-&sort=recentupdate');
    assert.equal(/<a href="\/(flt-[a-z0-9]+)">/.exec(recent.text)?.[1], 'flt-on');
    const least = await admin.get('/admin/users?q=flt-&sort=leastupdate');
    assert.notEqual(/<a href="\/(flt-[a-z0-9]+)">/.exec(least.text)?.[1], 'flt-on');

    // Pager links keep the search, the sort and the filters.
    const now = Math.floor(Date.now() / 1000);
    await s.ctx.db
      .insertInto('user')
      .values(
        Array.from({ length: 55 }, (_, i) => ({
          name: `pgr${i}`,
          lower_name: `pgr${i}`,
          email: `pgr${i}@example.com`,
          lower_email: `pgr${i}@example.com`,
          created_unix: now,
          updated_unix: now,
        })),
      )
      .execute();
    const paged = await admin.get(`/admin/users?q=pgr&sort=alphabetically&${f('is_admin', '0')}`);
    assert.match(paged.text, /href="\/admin\/users\?[^"]*page=2/);
    const link = /href="(\/admin\/users\?[^"]*page=2[^"]*)"/.exec(paged.text)![1]!.replace(/&amp;/g, '&');
    const u = new URL(link, s.url);
    assert.equal(u.searchParams.get('q'), 'pgr');
    assert.equal(u.searchParams.get('sort'), 'alphabetically');
    assert.equal(u.searchParams.get('status_filter[is_admin]'), '0');
    const page2 = await admin.get(link);
    assert.equal(page2.status, 200);
    assert.match(page2.text, /pgr9/);
  });

  it('shows the configuration without its secrets', async () => {
    const secret = s.config.security.secretKey;
    assert.ok(secret.length > 8, 'the test server has a secret key');
    const r = await admin.get('/admin/config');
    assert.equal(r.status, 200);
    assert.match(r.text, /secretKey<\/dt><dd>\*\*\*\*\*\*/);
    assert.ok(!r.text.includes(secret), 'the secret key value is never shown');
    const token = s.config.security.internalToken;
    if (token) assert.ok(!r.text.includes(token), 'nor the internal token');
    assert.match(r.text, new RegExp(s.config.server.rootUrl.replace(/[/.]/g, '\\$&')));
  });

  it('lists emails, organizations, repositories, hooks and runners, and deletes a repository', async () => {
    const owner = await s.createUser('lister');
    await s.api('POST', '/user/repos', { token: owner.token, body: { name: 'listed', auto_init: true } });
    await s.api('POST', '/orgs', { token: owner.token, body: { username: 'listorg' } });

    const emails = await admin.get('/admin/emails?q=lister');
    assert.match(emails.text, /lister@example.com/);
    const off = await admin.post('/admin/emails/activate', {
      uid: String(owner.id),
      email: 'lister@example.com',
      activate: 'false',
    });
    assert.equal(off.status, 303);
    assert.match((await admin.get('/admin/emails?q=lister')).text, /Activate lister@example.com/);
    await admin.post('/admin/emails/activate', {
      uid: String(owner.id),
      email: 'lister@example.com',
      activate: 'true',
    });

    assert.match((await admin.get('/admin/orgs?q=listorg')).text, /href="\/listorg"/);
    const repos = await admin.get('/admin/repos?q=listed');
    assert.match(repos.text, /href="\/lister\/listed"/);
    assert.match((await admin.get('/admin/hooks')).text, /Default webhooks/);
    assert.equal((await admin.get('/admin/actions/runners')).status, 200);
    assert.equal((await admin.get('/admin/packages')).status, 200);
    assert.equal((await admin.get('/admin/repos/unadopted')).status, 200);

    const repo = await s.api<{ id: number }>('GET', '/repos/lister/listed', { token: owner.token });
    const del = await admin.post('/admin/repos/delete', { id: String(repo.body.id) });
    assert.equal(del.status, 303);
    assert.equal((await s.api('GET', '/repos/lister/listed', { token: owner.token })).status, 404);
    assert.equal((await admin.post('/admin/repos/delete', { id: '999999' })).status, 404);
  });

  it('shows a failed background job and leaves a notice, which can be deleted', async () => {
    s.ctx.cron.register({
      name: 'failing_test_job',
      schedule: '@every 3600s',
      nextIn: () => 3_600_000,
      run: () => Promise.reject(new Error('the disk is on fire')),
    });
    await admin.get('/admin/monitor/cron');
    const run = await admin.post('/admin/monitor/cron', { op: 'failing_test_job', from: 'monitor' });
    assert.equal(run.status, 303);
    assert.equal(run.location, '/admin/monitor/cron');
    const page = await admin.get('/admin/monitor/cron');
    assert.match(page.text, /Failed: the disk is on fire/);
    const unknown = await admin.post('/admin/monitor/cron', { op: 'no_such_job' });
    assert.equal(unknown.status, 303);
    assert.match((await admin.get('/admin')).text, /There is no background job named/);

    let notices = await admin.get('/admin/notices');
    for (let i = 0; i < 20 && !/the disk is on fire/.test(notices.text); i++) {
      await new Promise((r) => setTimeout(r, 50));
      notices = await admin.get('/admin/notices');
    }
    assert.match(notices.text, /Background job failing_test_job failed: the disk is on fire/);
    const id = /name="ids\[\]" value="(\d+)"/.exec(notices.text)![1]!;
    const del = await admin.post('/admin/notices/delete', { 'ids[]': id });
    assert.equal(del.status, 303);
    assert.doesNotMatch((await admin.get('/admin/notices')).text, /the disk is on fire/);
  });

  describe('in a browser', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => browser?.close());

    it('suspends a signed-in user, whose session ends; runs a background job from the dashboard', async () => {
      const adminContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await adminContext.newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', s.admin.name);
      await page.fill('#f-password', s.admin.password);
      await page.click('main button[type=submit]');
      await page.waitForURL(`${s.url}/`);

      // Create a user.
      await page.goto(`${s.url}/admin/users/new`);
      await page.fill('#f-user_name', 'suspendee');
      await page.fill('#f-email', 'suspendee@example.com');
      await page.fill('#f-password', 'suspendee-pass-1');
      await page.uncheck('#f-must_change_password');
      await page.click('main button[type=submit]');
      await page.waitForURL(/\/admin\/users\/\d+\/edit$/);
      assert.match((await page.textContent('main')) ?? '', /has been created/);
      const editUrl = page.url();

      // The user signs in, in another browser.
      const userContext = await browser.newContext();
      const userPage = await userContext.newPage();
      await userPage.goto(`${s.url}/user/login`);
      await userPage.fill('#f-user_name', 'suspendee');
      await userPage.fill('#f-password', 'suspendee-pass-1');
      await userPage.click('main button[type=submit]');
      await userPage.waitForURL(`${s.url}/`);
      assert.match((await userPage.textContent('header')) ?? '', /Sign out/);

      // Suspend them.
      await page.goto(editUrl);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'admin-user-edit');
      await page.check('#f-prohibit_login');
      await Promise.all([page.waitForNavigation(), page.click('form[action$="/edit"] button[type=submit]')]);
      assert.match((await page.textContent('main')) ?? '', /has been updated/);
      assert.equal(await page.isChecked('#f-prohibit_login'), true);

      // Their next page shows them signed out.
      await userPage.goto(`${s.url}/`);
      const header = (await userPage.textContent('header')) ?? '';
      assert.match(header, /Sign in/);
      assert.doesNotMatch(header, /Sign out/);

      // Users list.
      await page.goto(`${s.url}/admin/users`);
      assert.match((await page.textContent('main')) ?? '', /suspendee/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'admin-users');

      // Run a background job from the dashboard.
      await page.goto(`${s.url}/admin`);
      const row = page.locator('tr[data-task="sweep_leftovers"]');
      assert.match((await row.textContent()) ?? '', /Not run yet/);
      await Promise.all([page.waitForNavigation(), row.locator('button').click()]);
      assert.match((await page.textContent('main')) ?? '', /Started the background job sweep_leftovers/);
      await page.reload();
      assert.match((await page.locator('tr[data-task="sweep_leftovers"]').textContent()) ?? '', /Succeeded/);
      assert.match((await page.textContent('[data-count="users"]')) ?? '', /^\d+$/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'admin-dashboard');

      await page.goto(`${s.url}/admin/config`);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'admin-config');

      await userContext.close();
      await adminContext.close();
    });
  });
});
