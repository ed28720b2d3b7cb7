// The header (user and "+" menus, notifications, search), the first sign-up becoming the site's
// administrator, and the user settings pages (profile, avatar, account, e-mail addresses,
// appearance, notifications, blocked users, organizations, repositories): bad input of each form
// (422, field named, nothing changed), CSRF, sign-in needed; and a browser flow with axe.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe('web: header menus, first administrator and user settings', () => {
  let s: TestServer;
  let browser: Browser;
  before(async () => {
    s = await startServer();
    // An empty site: the test server's own administrator goes (its first sign-up is under test).
    await s.ctx.db.deleteFrom('access_token').execute();
    await s.ctx.db.deleteFrom('email_address').execute();
    await s.ctx.db.deleteFrom('user').execute();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  async function signedIn(name: string): Promise<WebClient> {
    await s.ctx.users.create({
      username: name,
      email: `${name}@example.com`,
      password: `${name}-password-1`,
    });
    const c = new WebClient(s.url);
    const r = await c.signIn(name, `${name}-password-1`);
    assert.equal(r.status, 303, r.text);
    return c;
  }

  it('makes only one of two sign-ups at once on an empty site the administrator', async () => {
    const clients = [new WebClient(s.url), new WebClient(s.url), new WebClient(s.url)];
    await Promise.all(clients.map((c) => c.get('/user/sign_up')));
    const made = await Promise.all(
      clients.map((c, i) =>
        c.post('/user/sign_up', {
          user_name: `racer${i}`,
          email: `racer${i}@example.com`,
          password: 'racer-pass-1',
          retype: 'racer-pass-1',
        }),
      ),
    );
    assert.deepEqual(
      made.map((r) => r.status),
      [303, 303, 303],
    );
    const admins = await s.ctx.db.selectFrom('user').select('name').where('is_admin', '=', 1).execute();
    assert.equal(admins.length, 1, JSON.stringify(admins));
    // Empty again for the browser's first sign-up.
    await s.ctx.db.deleteFrom('web_session').execute();
    await s.ctx.db.deleteFrom('first_admin_claim').execute();
    await s.ctx.db.deleteFrom('email_address').execute();
    await s.ctx.db.deleteFrom('user').execute();
  });

  it('makes the first sign-up the administrator, in a browser, with menus, profile and theme', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${s.url}/user/sign_up`);
    assert.match((await page.textContent('main')) ?? '', /the first account becomes the administrator/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-user_name', 'founder');
    await page.fill('#f-email', 'founder@example.com');
    await page.fill('#f-password', 'founder-pass-1');
    await page.fill('#f-retype', 'founder-pass-1');
    await screenshots(page, 'settings-first-sign-up');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    assert.match((await page.textContent('main')) ?? '', /you are its administrator/);
    const founder = await s.ctx.users.getByName('founder');
    assert.equal(founder?.is_admin, 1);

    // Menus are <details>: closed at first, opened by a click, without script needed.
    assert.equal(await page.isVisible('text=Site administration'), false);
    await page.click('.user-menu summary');
    assert.equal(await page.isVisible('text=Site administration'), true);
    assert.equal(await page.getAttribute('.user-menu a[href="/admin"]', 'href'), '/admin');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'settings-user-menu');
    await page.click('.create-menu summary');
    assert.equal(await page.isVisible('.create-menu a[href="/org/create"]'), true);
    await screenshots(page, 'settings-create-menu');

    // The second sign-up is an ordinary user and the page says nothing of administrators.
    const other = new WebClient(s.url);
    const form = await other.get('/user/sign_up');
    assert.doesNotMatch(form.text, /first account becomes/);
    const made = await other.post('/user/sign_up', {
      user_name: 'second',
      email: 'second@example.com',
      password: 'second-pass-1',
      retype: 'second-pass-1',
    });
    assert.equal(made.status, 303, made.text);
    assert.equal((await s.ctx.users.getByName('second'))?.is_admin, 0);
    assert.doesNotMatch((await other.get('/')).text, /Site administration/);

    // Profile edit.
    await page.goto(`${s.url}/user/settings`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'settings-profile');
    await page.fill('#f-full_name', 'Founding Person');
    await page.fill('#f-description', 'Builds forges.');
    await page.fill('#f-website', 'https://founder.example.com');
    await page.fill('#f-location', 'Lisbon');
    await page.click('main form[action="/user/settings"] button[type=submit]');
    await page.waitForURL(`${s.url}/user/settings`);
    assert.match((await page.textContent('[role=status]')) ?? '', /profile has been updated/);
    const edited = await s.ctx.users.getByName('founder');
    assert.equal(edited?.full_name, 'Founding Person');
    assert.equal(edited?.location, 'Lisbon');

    // Theme: dark on <html>, and the page looks dark whatever the system prefers.
    await page.goto(`${s.url}/user/settings/appearance`);
    assert.equal(await page.getAttribute('html', 'data-theme'), 'auto');
    await page.selectOption('#f-theme', 'dark');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/user/settings/appearance`);
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(22, 24, 29)');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'settings-appearance-dark');

    for (const [path, name] of [
      ['/user/settings/account', 'account'],
      ['/user/settings/notifications', 'notifications'],
      ['/user/settings/blocked_users', 'blocked-users'],
      ['/user/settings/organization', 'organizations'],
      ['/user/settings/repos', 'repos'],
    ] as const) {
      await page.goto(`${s.url}${path}`);
      assert.deepEqual(await accessibilityViolations(page), [], path);
      await screenshots(page, `settings-${name}`);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('sends a visitor to sign in, and refuses a form without its CSRF token', async () => {
    const anon = new WebClient(s.url);
    for (const p of ['/user/settings', '/user/settings/account', '/user/settings/repos']) {
      const r = await anon.get(p);
      assert.equal(r.status, 303, p);
      assert.match(r.location ?? '', /^\/user\/login\?redirect_to=/);
    }
    const c = await signedIn('csrfless');
    await c.get('/user/settings');
    const r = await c.post('/user/settings', { _csrf: null, name: 'csrfless', full_name: 'Changed' });
    assert.equal(r.status, 403);
    const other = await c.post('/user/settings/account/delete', { _csrf: 'forged', password: 'x' });
    assert.equal(other.status, 403);
    assert.equal((await s.ctx.users.getByName('csrfless'))?.full_name, '');
  });

  it('keeps the profile as it was on bad input, with the field named', async () => {
    const c = await signedIn('profiler');
    await c.get('/user/settings');
    const bad = await c.post('/user/settings', {
      name: 'profiler',
      full_name: 'Kept Name',
      website: 'javascript:alert(1)',
      location: 'Here',
      visibility: 'public',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="f-website-error"/);
    assert.match(bad.text, /value="Kept Name"/);
    const taken = await c.post('/user/settings', { name: 'csrfless', visibility: 'public' });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /id="f-name-error"[^>]*>user already exists/);
    const invalidName = await c.post('/user/settings', { name: 'bad name!', visibility: 'public' });
    assert.equal(invalidName.status, 422);
    assert.match(invalidName.text, /id="f-name-error"/);
    const renameButBadSite = await c.post('/user/settings', {
      name: 'renamed',
      website: 'ftp://x',
      visibility: 'public',
    });
    assert.equal(renameButBadSite.status, 422);
    assert.equal(await s.ctx.users.getByName('renamed'), undefined, 'not renamed when the rest is refused');
    const long = await c.post('/user/settings', {
      name: 'profiler',
      full_name: 'x'.repeat(101),
      visibility: 'public',
    });
    assert.equal(long.status, 422);
    assert.match(long.text, /id="f-full_name-error"[^>]*>Must be at most 100/);
    const vis = await c.post('/user/settings', { name: 'profiler', full_name: '', visibility: 'secret' });
    assert.equal(vis.status, 422);
    assert.match(vis.text, /id="f-visibility-error"/);
    let u = await s.ctx.users.getByName('profiler');
    assert.equal(u?.full_name, '');
    assert.equal(u?.location, '');

    const ok = await c.post('/user/settings', {
      name: 'profiler',
      full_name: 'Pro Filer',
      visibility: 'limited',
      keep_email_private: 'on',
    });
    assert.equal(ok.status, 303);
    u = await s.ctx.users.getByName('profiler');
    assert.equal(u?.visibility, 1);
    assert.equal(u?.keep_email_private, 1);
  });

  it('uploads and deletes an avatar, refusing what is not an image', async () => {
    const c = await signedIn('pictured');
    await c.get('/user/settings');
    const none = await c.postMultipart('/user/settings/avatar', new FormData());
    assert.equal(none.status, 422);
    assert.match(none.text, /Choose an image/);
    const text = new FormData();
    text.append('avatar', new Blob(['not an image']), 'a.png');
    const bad = await c.postMultipart('/user/settings/avatar', text);
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="f-avatar-error"/);
    assert.equal((await s.ctx.users.getByName('pictured'))?.avatar, '');
    const good = new FormData();
    good.append('avatar', new Blob([PNG], { type: 'image/png' }), 'a.png');
    const up = await c.postMultipart('/user/settings/avatar', good);
    assert.equal(up.status, 303, up.text);
    assert.notEqual((await s.ctx.users.getByName('pictured'))?.avatar, '');
    await c.get('/user/settings');
    const del = await c.post('/user/settings/avatar/delete', {});
    assert.equal(del.status, 303);
    assert.equal((await s.ctx.users.getByName('pictured'))?.avatar, '');
  });

  it('changes the password only with the current one and a good new one', async () => {
    const c = await signedIn('passer');
    await c.get('/user/settings/account');
    const cases: Array<[Record<string, string>, string]> = [
      [{ old_password: 'passer-password-1', password: 'short', retype: 'short' }, 'password'],
      [{ old_password: 'passer-password-1', password: 'new-password-1', retype: 'other-1' }, 'retype'],
      [
        { old_password: 'wrong-password', password: 'new-password-1', retype: 'new-password-1' },
        'old_password',
      ],
    ];
    for (const [form, field] of cases) {
      const r = await c.post('/user/settings/account', form);
      assert.equal(r.status, 422, field);
      assert.match(r.text, new RegExp(`id="f-${field}-error"`), field);
    }
    assert.equal((await c.signIn('passer', 'passer-password-1')).status, 303, 'old password still works');
    await c.get('/user/settings/account');
    const ok = await c.post('/user/settings/account', {
      old_password: 'passer-password-1',
      password: 'new-password-1',
      retype: 'new-password-1',
    });
    assert.equal(ok.status, 303);
    assert.equal((await new WebClient(s.url).signIn('passer', 'new-password-1')).status, 303);
  });

  it('adds e-mail addresses, makes one primary, deletes one, refusing bad ones', async () => {
    const c = await signedIn('mailer');
    await s.ctx.users.create({ username: 'taken', email: 'taken@example.com', password: 'taken-password-1' });
    const page = await c.get('/user/settings/account');
    assert.match(page.text, /mailer@example\.com/);
    assert.match(page.text, /Activated/);
    for (const [email, why] of [
      ['', /Enter an email/],
      ['not-an-address', /invalid/],
      ['taken@example.com', /has been used/],
    ] as const) {
      const r = await c.post('/user/settings/account/email', { email });
      assert.equal(r.status, 422, email);
      assert.match(r.text, why);
      assert.match(r.text, /id="f-email-error"/);
    }
    assert.equal((await c.post('/user/settings/account/email', { email: 'second@mailer.test' })).status, 303);
    const user = (await s.ctx.users.getByName('mailer'))!;
    const added = (await s.ctx.users.emails(user)).find((e) => e.email === 'second@mailer.test')!;
    const primary = (await s.ctx.users.emails(user)).find((e) => e.is_primary)!;
    await c.get('/user/settings/account');
    const cannot = await c.post('/user/settings/account/email/delete', { id: String(primary.id) });
    assert.equal(cannot.status, 422);
    const someoneElses = await c.post('/user/settings/account/email/delete', { id: '999999' });
    assert.equal(someoneElses.status, 404);
    const made = await c.post('/user/settings/account/email', { _method: 'PRIMARY', id: String(added.id) });
    assert.equal(made.status, 303);
    assert.equal((await s.ctx.users.getByName('mailer'))?.email, 'second@mailer.test');
    const del = await c.post('/user/settings/account/email/delete', { id: String(primary.id) });
    assert.equal(del.status, 303);
    assert.deepEqual(
      (await s.ctx.users.emails(user)).map((e) => e.email),
      ['second@mailer.test'],
    );
  });

  it('sets the theme and the e-mail notification preference, refusing unknown values', async () => {
    const c = await signedIn('chooser');
    await c.get('/user/settings/appearance');
    const badTheme = await c.post('/user/settings/appearance/theme', { theme: 'neon' });
    assert.equal(badTheme.status, 422);
    assert.match(badTheme.text, /id="f-theme-error"/);
    assert.equal((await c.post('/user/settings/appearance/theme', { theme: 'light' })).status, 303);
    assert.match((await c.get('/')).text, /<html lang="en" data-theme="light">/);

    await c.get('/user/settings/notifications');
    const badPref = await c.post('/user/settings/notifications/email', { preference: 'sometimes' });
    assert.equal(badPref.status, 422);
    assert.match(badPref.text, /id="f-preference-error"/);
    assert.equal((await s.ctx.users.getByName('chooser'))?.email_notifications_preference, 'enabled');
    const ok = await c.post('/user/settings/notifications/email', { preference: 'onmention' });
    assert.equal(ok.status, 303);
    assert.equal((await s.ctx.users.getByName('chooser'))?.email_notifications_preference, 'onmention');
  });

  it('blocks and unblocks users by name, refusing unknown names and oneself', async () => {
    const c = await signedIn('blocker');
    await s.ctx.users.create({ username: 'pest', email: 'pest@example.com', password: 'pest-password-1' });
    await c.get('/user/settings/blocked_users');
    for (const [blockee, why] of [
      ['', /Enter the name/],
      ['nobody-here', /no user named/],
      ['blocker', /cannot block yourself/],
    ] as const) {
      const r = await c.post('/user/settings/blocked_users', { action: 'block', blockee });
      assert.equal(r.status, 422, blockee);
      assert.match(r.text, why);
    }
    assert.equal(
      (await c.post('/user/settings/blocked_users', { action: 'block', blockee: 'pest' })).status,
      303,
    );
    assert.match((await c.get('/user/settings/blocked_users')).text, /href="\/pest"/);
    const unblock = await c.post('/user/settings/blocked_users', { action: 'unblock', blockee: 'pest' });
    assert.equal(unblock.status, 303);
    assert.doesNotMatch((await c.get('/user/settings/blocked_users')).text, /href="\/pest"/);
  });

  it('leaves an organization, but not as its last owner', async () => {
    const c = await signedIn('member');
    const boss = (await s.ctx.users.getByName('founder'))!;
    const member = (await s.ctx.users.getByName('member'))!;
    const guild = await s.ctx.orgs.create(boss, { username: 'guild' });
    const [teams] = await s.ctx.orgs.listTeams(guild, 10, 0);
    await s.ctx.orgs.addTeamMember(teams[0]!, member);
    const own = await s.ctx.orgs.create(member, { username: 'solo-org' });
    const list = await c.get('/user/settings/organization');
    assert.match(list.text, /href="\/guild"/);
    assert.match(list.text, /href="\/solo-org"/);
    const last = await c.post('/user/settings/organization/leave', { org: own.name });
    assert.equal(last.status, 303);
    assert.match(decodeURIComponent(c.cookies.get('anvil_flash') ?? ''), /last owner/);
    assert.equal(await s.ctx.orgs.isMember(own, member.id), true);
    const missing = await c.post('/user/settings/organization/leave', { org: 'no-such-org' });
    assert.equal(missing.status, 404);
    const left = await c.post('/user/settings/organization/leave', { org: 'guild' });
    assert.equal(left.status, 303);
    assert.equal(await s.ctx.orgs.isMember(guild, member.id), false);
    assert.doesNotMatch((await c.get('/user/settings/organization')).text, /href="\/guild"/);
  });

  it('lets an administrator adopt or delete unadopted repository directories', async () => {
    for (const name of ['orphan', 'stray']) {
      execFileSync('git', [
        'init',
        '--bare',
        '-q',
        path.join(s.config.repository.root, 'founder', `${name}.git`),
      ]);
    }
    const admin = new WebClient(s.url);
    assert.equal((await admin.signIn('founder', 'founder-pass-1')).status, 303);
    const page = await admin.get('/user/settings/repos');
    assert.match(page.text, /Unadopted repositories/);
    assert.match(page.text, /founder\/orphan/);
    const bad = await admin.post('/user/settings/repos/unadopted', {
      id: 'founder/nothing',
      action: 'adopt',
    });
    assert.equal(bad.status, 404);
    const adopted = await admin.post('/user/settings/repos/unadopted', {
      id: 'founder/orphan',
      action: 'adopt',
    });
    assert.equal(adopted.status, 303);
    const rows = await s.ctx.db
      .selectFrom('repository')
      .select('name')
      .where('lower_name', '=', 'orphan')
      .execute();
    assert.equal(rows.length, 1);
    const deleted = await admin.post('/user/settings/repos/unadopted', {
      id: 'founder/stray',
      action: 'delete',
    });
    assert.equal(deleted.status, 303);
    assert.equal(fs.existsSync(path.join(s.config.repository.root, 'founder', 'stray.git')), false);
    const after = await admin.get('/user/settings/repos');
    assert.match(after.text, /href="\/founder\/orphan"/);
    assert.doesNotMatch(after.text, /<code>founder\/(orphan|stray)<\/code>/);
  });

  it('pages the lists of repositories and blocked users', async () => {
    const c = await signedIn('hoarder');
    const hoarder = (await s.ctx.users.getByName('hoarder'))!;
    const size = s.config.api.defaultPagingNum;
    const names = Array.from({ length: size + 1 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    for (const name of names) await s.ctx.repos.create(hoarder, hoarder, { name });
    const first = await c.get('/user/settings/repos');
    assert.match(first.text, new RegExp(`Repositories \\(${size + 1}\\)`));
    assert.match(first.text, /href="\/hoarder\/r000"/);
    assert.doesNotMatch(first.text, new RegExp(`href="/hoarder/${names.at(-1)}"`));
    assert.match(first.text, /href="\/user\/settings\/repos\?page=2"/);
    const second = await c.get('/user/settings/repos?page=2');
    assert.match(second.text, new RegExp(`href="/hoarder/${names.at(-1)}"`));
    assert.doesNotMatch(second.text, /href="\/hoarder\/r000"/);
    assert.match(second.text, /Page 2 of 2/);
    // Nonsense is the first page.
    assert.match((await c.get('/user/settings/repos?page=-3')).text, /href="\/hoarder\/r000"/);

    for (const name of names) {
      const u = await s.ctx.users.create({
        username: `b${name}`,
        email: `b${name}@example.com`,
        password: 'pw-123456',
      });
      await s.ctx.social.block(hoarder, u);
    }
    const blocked = await c.get('/user/settings/blocked_users');
    assert.equal((blocked.text.match(/>Unblock</g) ?? []).length, size);
    const rest = await c.get('/user/settings/blocked_users?page=2');
    assert.equal((rest.text.match(/>Unblock</g) ?? []).length, 1);
  });

  it('deletes an account only with its password, and not while it owns repositories', async () => {
    const c = await signedIn('leaving');
    const leaving = (await s.ctx.users.getByName('leaving'))!;
    await c.get('/user/settings/account');
    const wrong = await c.post('/user/settings/account/delete', { password: 'wrong-one' });
    assert.equal(wrong.status, 422);
    assert.match(wrong.text, /id="f-delete_password-error"/);
    await s.ctx.repos.create(leaving, leaving, { name: 'kept' });
    const owns = await c.post('/user/settings/account/delete', { password: 'leaving-password-1' });
    assert.equal(owns.status, 422);
    assert.match(owns.text, /still owns/);
    assert.ok(await s.ctx.users.getByName('leaving'));
    assert.match((await c.get('/user/settings/repos')).text, /leaving\/kept/);
    // Only administrators may adopt or delete unadopted directories.
    const adopt = await c.post('/user/settings/repos/unadopted', { id: 'leaving/x', action: 'adopt' });
    assert.equal(adopt.status, 403);

    const free = await signedIn('goner');
    await free.get('/user/settings/account');
    const gone = await free.post('/user/settings/account/delete', { password: 'goner-password-1' });
    assert.equal(gone.status, 303);
    assert.equal(await s.ctx.users.getByName('goner'), undefined);
  });

  it('shows the unread notification count in the header', async () => {
    const c = await signedIn('reader');
    const home = await c.get('/');
    assert.match(home.text, /<span class="sr-only">Notifications<\/span><\/a>/);
    assert.doesNotMatch(home.text, /class="badge"/);
    assert.match(home.text, /<form method="get" action="\/explore\/repos" class="topsearch" role="search">/);
    assert.match(home.text, /<a href="\/repo\/migrate">New migration<\/a>/);
    const migrate = await c.get('/repo/migrate');
    assert.equal(migrate.status, 200);
    assert.match(migrate.text, /<a class="title" href="\/repo\/migrate\?service_type=1">/);
    assert.match(home.text, /href="\/org\/create"/);
    assert.doesNotMatch(home.text, /Site administration/);

    // Two unread threads and a read one (made directly: the inbox is another area's).
    const reader = (await s.ctx.users.getByName('reader'))!;
    const repo = await s.ctx.repos.create(reader, reader, { name: 'watched' });
    const now = Math.floor(Date.now() / 1000);
    for (const status of [1, 1, 2]) {
      await s.ctx.db
        .insertInto('notification')
        .values({
          user_id: reader.id,
          repo_id: repo.id,
          status,
          source: 4,
          updated_unix: now,
          created_unix: now,
        })
        .execute();
    }
    const after = await c.get('/explore/repos');
    assert.match(
      after.text,
      /<span class="sr-only">Notifications<\/span><span class="badge">2<\/span><span class="sr-only"> unread<\/span>/,
    );
    // The site-wide code search is off by default ([indexer] REPO_INDEXER_ENABLED): no tab, and
    // its address leads to the repositories, as Forgejo's does.
    assert.doesNotMatch(after.text, /href="\/explore\/code"/);
    const code = await c.get('/explore/code?q=x');
    assert.equal(code.status, 303);
    assert.equal(code.location, '/explore/repos');
  });
});
