// The notifications pages and the dashboard lists in the web interface: the inbox by status,
// grouped by repository, marking one thread read, unread or pinned and all of them read (CSRF
// checked, someone else's thread not found), threads of a repository the user can no longer read
// left out, subscriptions and watched repositories, and /issues, /pulls (review requested
// included, also through the API's issue search) and /milestones of the signed-in user; then the
// inbox in Chromium with axe and screenshots.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

type User = { name: string; password: string; token: string };

/** Polls `check` until it holds (notifications are written by event handlers). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** The ids of the notification threads listed on a page. */
const threadIds = (html: string) => [...html.matchAll(/id="notification_(\d+)"/g)].map((m) => Number(m[1]));

describe('web notifications and dashboard', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let carol: User;
  let issueNo: number;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', private: true, auto_init: true },
    });
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: bob.token,
      body: { title: 'Crash on <start>', body: 'It crashes.' },
    });
    issueNo = issue.body.number;
  });
  after(async () => s.close());

  it('lists unread threads by repository and marks them read, unread, pinned and all read', async () => {
    const c = new WebClient(s.url);
    await c.signIn('alice', alice.password);
    await until('the thread', async () => /Crash on &lt;start>/.test((await c.get('/notifications')).text));
    let inbox = await c.get('/notifications');
    assert.equal(inbox.status, 200);
    assert.match(inbox.text, /<h2>.*alice\/proj<\/a><\/h2>/s);
    assert.match(inbox.text, new RegExp(`href="/alice/proj/issues/${issueNo}"`));
    const [id] = threadIds(inbox.text);
    assert.ok(id);

    // Read: gone from the unread tab, shown on the read tab.
    let r = await c.post('/notifications/status', {
      notification_id: String(id),
      status: 'read',
      type: 'unread',
    });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/notifications?type=unread');
    assert.deepEqual(threadIds((await c.get('/notifications')).text), []);
    assert.deepEqual(threadIds((await c.get('/notifications?type=read')).text), [id]);
    const api = await s.api<Array<{ id: number; unread: boolean }>>('GET', '/notifications?all=true', {
      token: alice.token,
    });
    assert.equal(api.body.find((t) => t.id === id)?.unread, false);

    // Pinned, then unread again.
    await c.get('/notifications?type=read');
    await c.post('/notifications/status', { notification_id: String(id), status: 'pinned', type: 'read' });
    assert.deepEqual(threadIds((await c.get('/notifications?type=pinned')).text), [id]);
    await c.post('/notifications/status', { notification_id: String(id), status: 'unread', type: 'pinned' });
    inbox = await c.get('/notifications');
    assert.deepEqual(threadIds(inbox.text), [id]);
    assert.match(inbox.text, /Mark all as read/);

    // All read at once.
    r = await c.post('/notifications/purge', {});
    assert.equal(r.status, 303);
    inbox = await c.get(r.location!);
    assert.match(inbox.text, /1 notification marked as read/);
    assert.deepEqual(threadIds(inbox.text), []);
  });

  it('refuses a missing CSRF token, someone else’s thread and an unknown status, changing nothing', async () => {
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    const [id] = threadIds((await a.get('/notifications?type=read')).text);
    assert.ok(id);
    let r = await a.post('/notifications/status', {
      _csrf: null,
      notification_id: String(id),
      status: 'pinned',
    });
    assert.equal(r.status, 403);
    r = await a.post('/notifications/purge', { _csrf: 'forged' });
    assert.equal(r.status, 403);
    r = await a.post('/notifications/status', { notification_id: String(id), status: 'gone' });
    assert.equal(r.status, 303);
    assert.match((await a.get(r.location!)).text, /Unknown notification status/);

    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    await b.get('/notifications');
    r = await b.post('/notifications/status', { notification_id: String(id), status: 'pinned' });
    assert.equal(r.status, 404);
    r = await b.post('/notifications/status', { notification_id: 'abc', status: 'read' });
    assert.equal(r.status, 404);
    assert.deepEqual(threadIds((await a.get('/notifications?type=read')).text), [id]);
    assert.deepEqual(threadIds((await a.get('/notifications?type=pinned')).text), []);

    const anonymous = new WebClient(s.url);
    for (const p of [
      '/notifications',
      '/notifications/subscriptions',
      '/notifications/watching',
      '/issues',
      '/pulls',
      '/milestones',
    ]) {
      const page = await anonymous.get(p);
      assert.equal(page.status, 303, p);
      assert.equal(page.location, `/user/login?redirect_to=${encodeURIComponent(p)}`);
    }
  });

  it('leaves out the threads of a repository the user can no longer read', async () => {
    await s.api('PUT', '/repos/alice/secret/collaborators/carol', {
      token: alice.token,
      body: { permission: 'read' },
    });
    await s.api('PUT', '/repos/alice/secret/subscription', { token: carol.token });
    await s.api('POST', '/repos/alice/secret/issues', { token: alice.token, body: { title: 'Hidden plan' } });
    const c = new WebClient(s.url);
    await c.signIn('carol', carol.password);
    await until('carol’s thread', async () => /Hidden plan/.test((await c.get('/notifications')).text));
    await s.api('DELETE', '/repos/alice/secret/collaborators/carol', { token: alice.token });
    const inbox = await c.get('/notifications');
    assert.doesNotMatch(inbox.text, /Hidden plan|alice\/secret/);
    assert.doesNotMatch((await c.get('/notifications/watching')).text, /alice\/secret/);
  });

  it('lists subscriptions and watched repositories', async () => {
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    let subs = await b.get('/notifications/subscriptions');
    assert.equal(subs.status, 200);
    assert.match(subs.text, /Crash on &lt;start>/);
    assert.doesNotMatch((await b.get('/notifications/subscriptions?state=closed')).text, /Crash on/);
    assert.doesNotMatch((await b.get('/notifications/subscriptions?issueType=pulls')).text, /Crash on/);
    await s.api('DELETE', `/repos/alice/proj/issues/${issueNo}/subscriptions/bob`, { token: bob.token });
    subs = await b.get('/notifications/subscriptions');
    assert.doesNotMatch(subs.text, /Crash on/);
    // Alice, the owner, took no part: subscribed only once she says so.
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    assert.doesNotMatch((await a.get('/notifications/subscriptions')).text, /Crash on/);
    await s.api('PUT', `/repos/alice/proj/issues/${issueNo}/subscriptions/alice`, { token: alice.token });
    assert.match((await a.get('/notifications/subscriptions')).text, /Crash on/);

    assert.doesNotMatch((await b.get('/notifications/watching')).text, /alice\/proj/);
    await s.api('PUT', '/repos/alice/proj/subscription', { token: bob.token });
    assert.match((await b.get('/notifications/watching')).text, /href="\/alice\/proj"/);
    // Alice watches her own repositories from their creation.
    const watching = (await a.get('/notifications/watching')).text;
    assert.match(watching, /alice\/proj/);
    assert.match(watching, /alice\/secret/);
  });

  it('shows the dashboard lists: created, assigned, mentioned, review requested and milestones', async () => {
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    assert.match((await b.get('/issues?type=created_by')).text, /Crash on &lt;start>/);
    assert.doesNotMatch((await b.get('/issues?type=assigned')).text, /Crash on/);
    // Bob is neither owner nor member of alice/proj.
    assert.doesNotMatch((await b.get('/issues')).text, /Crash on/);
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    assert.match((await a.get('/issues')).text, /Crash on &lt;start>/);
    assert.doesNotMatch((await a.get('/issues?type=created_by')).text, /Crash on/);
    assert.doesNotMatch((await a.get('/issues?state=closed')).text, /Crash on/);

    await s.api('PUT', '/repos/alice/proj/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
    await s.api('PATCH', `/repos/alice/proj/issues/${issueNo}`, {
      token: alice.token,
      body: { assignees: ['bob'] },
    });
    assert.match((await b.get('/issues?type=assigned')).text, /Crash on/);
    await s.api('POST', '/repos/alice/proj/issues', {
      token: carol.token,
      body: { title: 'Ask @bob', body: 'cc @bob' },
    });
    assert.match((await b.get('/issues?type=mentioned')).text, /Ask @bob/);
    assert.match((await b.get('/issues?type=mentioned&q=Ask')).text, /Ask @bob/);
    assert.doesNotMatch((await b.get('/issues?type=mentioned&q=zzz')).text, /Ask @bob/);

    // A pull request whose review alice asks of bob.
    const file = await s.api('POST', '/repos/alice/proj/contents/feature.txt', {
      token: alice.token,
      body: { content: Buffer.from('new\n').toString('base64'), new_branch: 'feature', message: 'Feature' },
    });
    assert.equal(file.status, 201, file.text);
    const pr = await s.api<{ number: number }>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { head: 'feature', base: 'main', title: 'Add the feature' },
    });
    assert.equal(pr.status, 201, pr.text);
    assert.doesNotMatch((await b.get('/pulls?type=review_requested')).text, /Add the feature/);
    const asked = await s.api('POST', `/repos/alice/proj/pulls/${pr.body.number}/requested_reviewers`, {
      token: alice.token,
      body: { reviewers: ['bob'] },
    });
    assert.equal(asked.status, 201, asked.text);
    assert.match((await b.get('/pulls?type=review_requested')).text, /Add the feature/);
    assert.doesNotMatch((await b.get('/issues?type=review_requested')).text, /Add the feature/);
    const search = await s.api<Array<{ title: string }>>(
      'GET',
      '/repos/issues/search?review_requested=true',
      {
        token: bob.token,
      },
    );
    assert.deepEqual(
      search.body.map((i) => i.title),
      ['Add the feature'],
    );
    const none = await s.api<unknown[]>('GET', '/repos/issues/search?review_requested=true', {
      token: carol.token,
    });
    assert.deepEqual(none.body, []);

    await s.api('POST', '/repos/alice/proj/milestones', {
      token: alice.token,
      body: { title: 'Version 1.0' },
    });
    assert.match((await a.get('/milestones')).text, /Version 1\.0/);
    assert.doesNotMatch((await a.get('/milestones?state=closed')).text, /Version 1\.0/);
    const c = new WebClient(s.url);
    await c.signIn('carol', carol.password);
    assert.doesNotMatch((await c.get('/milestones')).text, /Version 1\.0/);
  });

  describe('in a browser', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => browser?.close());

    it('reads and marks notifications, with no accessibility violation', async () => {
      await s.api('POST', `/repos/alice/proj/issues/${issueNo}/comments`, {
        token: bob.token,
        body: { body: 'Still crashing.' },
      });
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('input[name=user_name]', 'alice');
      await page.fill('input[name=password]', alice.password);
      await page.click('main button[type=submit]');
      await page.goto(`${s.url}/notifications`);
      await page.waitForSelector('.notifications li.unread');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'notifications');
      const crash = page.locator('.notifications li', { hasText: 'Crash on <start>' });
      await crash.locator('button[aria-label="Mark as read"]').click();
      await page.waitForURL(`${s.url}/notifications?type=unread`);
      assert.equal(await page.locator('.notifications li', { hasText: 'Crash on <start>' }).count(), 0);
      await page.click('a[href="/notifications?type=read"]');
      await page.locator('.notifications li', { hasText: 'Crash on <start>' }).waitFor();
      for (const p of [
        '/notifications/subscriptions',
        '/notifications/watching',
        '/issues',
        '/pulls',
        '/milestones',
      ]) {
        await page.goto(`${s.url}${p}`);
        assert.deepEqual(await accessibilityViolations(page), [], p);
      }
      await page.goto(`${s.url}/pulls?type=your_repositories`);
      await screenshots(page, 'dashboard-pulls');
      await context.close();
    });
  });
});
