// Quota in the web interface: administrators make rules and groups (with the API's validation,
// errors beside the field), assign an account, and the account's storage overview then shows each
// rule's usage against its limit, names the rule and group that refuse the next upload, lists
// what uses the space largest first and draws the daily history; organizations' overview for
// their owners only; the recalculation report; /admin/quota refused to everyone but
// administrators; then both pages in Chromium with axe and screenshots.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

type User = { name: string; password: string; token: string };

/** Uploads a file of `size` bytes to issue 1 of alice/proj; the status. */
async function attach(s: TestServer, token: string, name: string, size: number): Promise<number> {
  const form = new FormData();
  form.append('attachment', new Blob([Buffer.alloc(size, 7)]), name);
  const res = await fetch(`${s.url}/api/v1/repos/alice/proj/issues/1/assets`, {
    method: 'POST',
    headers: { authorization: `token ${token}` },
    body: form,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('web quota pages', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let boss: User;
  const admin = () => {
    const c = new WebClient(s.url);
    return c.signIn('boss', boss.password).then(() => c);
  };

  before(async () => {
    s = await startServer({ ANVIL__QUOTA__ENABLED: 'true' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    boss = await s.createUser('boss', { admin: true });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/repos/alice/proj/issues', { token: alice.token, body: { title: 'Files' } });
  });
  after(async () => s.close());

  it('refuses /admin/quota to everyone but administrators', async () => {
    const anonymous = new WebClient(s.url);
    const r = await anonymous.get('/admin/quota');
    assert.equal(r.status, 303);
    assert.match(r.location ?? '', /^\/user\/login\?redirect_to=/);
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    for (const p of ['/admin/quota', '/admin/quota/rules/x', '/admin/quota/groups/x']) {
      assert.equal((await a.get(p)).status, 403, p);
    }
    await a.get('/user/settings/storage_overview');
    for (const p of ['/admin/quota/rules/new', '/admin/quota/groups/new', '/admin/quota/recalculate']) {
      assert.equal((await a.post(p, { name: 'mine', limit: '1' })).status, 403, p);
    }
    const rules = await s.api<unknown[]>('GET', '/admin/quota/rules', { token: s.admin.token });
    assert.deepEqual(rules.body, []);
  });

  it('creates rules and groups with errors beside the field, and assigns an account', async () => {
    const c = await admin();
    await c.get('/admin/quota');
    let r = await c.post('/admin/quota/rules/new', { name: '', limit: '1 KiB' });
    assert.equal(r.status, 422);
    assert.match(r.text, /id="f-name-error">Required/);
    assert.match(r.text, /value="1 KiB"/);
    r = await c.post('/admin/quota/rules/new', { name: 'tiny', limit: 'lots' });
    assert.equal(r.status, 422);
    assert.match(r.text, /id="f-limit-error"/);
    assert.match(r.text, /name="name"[^>]*value="tiny"|value="tiny"[^>]*name="name"/);
    const form = new URLSearchParams({ _csrf: c.csrf, name: 'tiny', limit: '1 KiB' });
    form.append('subjects', 'size:bogus');
    r = await c.request('POST', '/admin/quota/rules/new', form.toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(r.status, 422);
    assert.match(r.text, /id="f-subjects-error">invalid quota subject: size:bogus/);
    r = await c.post('/admin/quota/rules/new', { _csrf: null, name: 'tiny', limit: '1 KiB' });
    assert.equal(r.status, 403);
    assert.deepEqual(
      (await s.api<unknown[]>('GET', '/admin/quota/rules', { token: s.admin.token })).body,
      [],
    );

    await c.get('/admin/quota');
    const ok = new URLSearchParams({ _csrf: c.csrf, name: 'tiny', limit: '1 KiB' });
    ok.append('subjects', 'size:assets:attachments:all');
    r = await c.request('POST', '/admin/quota/rules/new', ok.toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(r.status, 303);
    const rule = await s.api<{ limit: number; subjects: string[] }>('GET', '/admin/quota/rules/tiny', {
      token: s.admin.token,
    });
    assert.deepEqual(rule.body, { name: 'tiny', limit: 1024, subjects: ['size:assets:attachments:all'] });
    await c.get('/admin/quota');
    r = await c.post('/admin/quota/rules/new', { name: 'tiny', limit: '5' });
    assert.equal(r.status, 422);
    assert.match(r.text, /A rule of that name exists/);

    r = await c.post('/admin/quota/groups/new', { name: '' });
    assert.equal(r.status, 422);
    r = await c.post('/admin/quota/groups/new', { name: 'small' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/admin/quota/groups/small');
    await c.get(r.location!);
    r = await c.post('/admin/quota/groups/small/rules/add', { rule: 'tiny' });
    assert.equal(r.status, 303);
    await c.get('/admin/quota/groups/small');
    r = await c.post('/admin/quota/groups/small/users/add', { user_name: 'nobody-here' });
    assert.equal(r.status, 422);
    assert.match(r.text, /No account is called nobody-here/);
    r = await c.post('/admin/quota/groups/small/users/add', { user_name: 'alice' });
    assert.equal(r.status, 303);
    const page = await c.get('/admin/quota/groups/small');
    assert.match(page.text, /Members \(1\)/);
    assert.match(page.text, /href="\/alice"/);
    const groups = await s.api<Array<{ name: string }>>('GET', '/admin/users/alice/quota', {
      token: s.admin.token,
    });
    assert.ok(JSON.stringify(groups.body).includes('small'));
  });

  it('shows the overview: rule usage, the refusing rule, what uses the space, the history', async () => {
    assert.equal(await attach(s, alice.token, 'big.txt', 3000), 201);
    assert.equal(await attach(s, alice.token, 'small.txt', 10), 413);
    // Three daily samples: a month ago, ten days ago and today.
    const day = 86_400_000;
    await s.ctx.quota.sampleUsage(Date.now() - 30 * day);
    await s.ctx.quota.sampleUsage(Date.now() - 10 * day);
    await s.ctx.quota.sampleUsage();

    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    const page = await a.get('/user/settings/storage_overview');
    assert.equal(page.status, 200);
    assert.match(page.text, /Group <code>small<\/code>/);
    assert.match(page.text, /2\.93 KiB of 1\.00 KiB \(293%\)/);
    assert.match(
      page.text,
      /Attaching files.*?Refused:.*?rule <code>tiny<\/code> of group <code>small<\/code> counts 2\.93 KiB against its limit of 1\.00 KiB/s,
    );
    assert.match(page.text, /Pushing to a repository.*?Accepted\./s);
    assert.match(page.text, /3 daily samples from/);
    assert.match(page.text, /<path class="chart-line chart-total" d="M/);
    const files = await a.get('/user/settings/storage_overview?tab=attachments');
    assert.match(files.text, /big\.txt/);
    assert.match(files.text, /href="\/alice\/proj\/issues\/1"/);
    const repos = await a.get('/user/settings/storage_overview?tab=repos');
    assert.match(repos.text, /href="\/alice\/proj"/);

    // A larger limit: accepted again.
    const c = await admin();
    await c.get('/admin/quota/rules/tiny');
    const edit = new URLSearchParams({ _csrf: c.csrf, limit: '1 MiB' });
    edit.append('subjects', 'size:assets:attachments:all');
    const r = await c.request('POST', '/admin/quota/rules/tiny/edit', edit.toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(r.status, 303);
    assert.doesNotMatch((await a.get('/user/settings/storage_overview')).text, /Refused/);
    assert.equal(await attach(s, alice.token, 'small.txt', 10), 201);
  });

  it('shows an organization’s overview to its owners only, and the recalculation report', async () => {
    await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    assert.equal((await a.get('/org/acme/settings/storage_overview')).status, 200);
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    assert.equal((await b.get('/org/acme/settings/storage_overview')).status, 403);
    assert.equal((await b.get('/org/nothing-here/settings/storage_overview')).status, 404);

    const c = await admin();
    await c.get('/admin/quota');
    const report = await c.post('/admin/quota/recalculate', {});
    assert.equal(report.status, 200);
    assert.match(report.text, /Recalculation report/);
    assert.match((await c.get('/admin/quota')).text, /Top consumers.*href="\/alice"/s);
  });

  describe('in a browser', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => browser?.close());

    it('shows the quota pages with no accessibility violation', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const signIn = async (name: string, password: string) => {
        await page.goto(`${s.url}/user/login`);
        await page.fill('input[name=user_name]', name);
        await page.fill('input[name=password]', password);
        await page.click('main button[type=submit]');
      };
      await signIn('alice', alice.password);
      await page.goto(`${s.url}/user/settings/storage_overview`);
      await page.waitForSelector('.usage-chart svg');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'quota-overview');
      await context.clearCookies();
      await signIn('boss', boss.password);
      for (const p of ['/admin/quota', '/admin/quota/groups/small', '/admin/quota/rules/tiny']) {
        await page.goto(`${s.url}${p}`);
        assert.deepEqual(await accessibilityViolations(page), [], p);
      }
      await page.goto(`${s.url}/admin/quota`);
      await screenshots(page, 'quota-admin');
      await context.close();
    });
  });
});
