// Project boards of organizations and users at Forgejo's /{owner}/-/projects: an organization's
// board made by its owner, issues of its repositories and notes put on it and moved, bad input
// (422 beside the field), a team with write access to projects allowed, a read-only team and an
// outsider refused, a private repository's cards hidden from outsiders, a private organization's
// boards hidden, CSRF; a user's own board; the issue sidebar's project picker; and in Chromium a
// card moved on an organization's board stays there after a reload.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser } from '../helpers/web.js';

describe('web interface: organization and user project boards', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  const web: Record<string, WebClient> = {};
  let browser: Browser;
  let pubIssue = 0;
  let hiddenIssue = 0;
  let board = '';

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    const others = await Promise.all(['bob', 'carol', 'dave'].map((n) => s.createUser(n)));
    const t = alice.token;
    await s.api('POST', '/orgs', { token: t, body: { username: 'acme' } });
    await s.api('POST', '/orgs', { token: t, body: { username: 'hush', visibility: 'private' } });
    await s.api('POST', '/orgs/acme/repos', { token: t, body: { name: 'pub' } });
    await s.api('POST', '/orgs/acme/repos', { token: t, body: { name: 'hidden', private: true } });
    pubIssue = (
      await s.api<{ id: number }>('POST', '/repos/acme/pub/issues', {
        token: t,
        body: { title: 'Public bug' },
      })
    ).body.id;
    hiddenIssue = (
      await s.api<{ id: number }>('POST', '/repos/acme/hidden/issues', {
        token: t,
        body: { title: 'Secret bug' },
      })
    ).body.id;
    for (const [team, permission, member] of [
      ['planners', 'write', 'bob'],
      ['watchers', 'read', 'carol'],
    ] as const) {
      const units = ['repo.code', 'repo.issues', 'repo.pulls', 'repo.projects'];
      const r = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
        token: t,
        body: {
          name: team,
          permission,
          units,
          units_map: Object.fromEntries(units.map((u) => [u, permission])),
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      await s.api('PUT', `/teams/${r.body.id}/members/${member}`, { token: t });
      for (const repo of ['pub', 'hidden'])
        await s.api('PUT', `/teams/${r.body.id}/repos/acme/${repo}`, { token: t });
    }
    for (const u of [alice, ...others]) {
      web[u.name] = new WebClient(s.url);
      await web[u.name]!.signIn(u.name, u.password);
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  const columnOf = (html: string, attr: string) => {
    const at = html.indexOf(attr);
    if (at < 0) return undefined;
    return Number([...html.slice(0, at).matchAll(/data-column="(\d+)"/g)].pop()?.[1]);
  };
  const columns = (html: string) => [...html.matchAll(/data-column="(\d+)"/g)].map((m) => Number(m[1]));

  it('lets the owner make a board with issues of its repositories and notes', async () => {
    const a = web['alice']!;
    const profile = await a.get('/acme');
    assert.match(profile.text, /href="\/acme\/-\/projects"/);
    assert.equal((await a.get('/acme/-/projects')).status, 200);
    assert.equal((await a.get('/acme/-/projects/new')).status, 200);
    const empty = await a.post('/acme/-/projects/new', { title: ' ', template_type: '1' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /id="f-title-error"/);
    const made = await a.post('/acme/-/projects/new', {
      title: 'Plan',
      content: 'Org plan',
      template_type: '1',
    });
    assert.equal(made.status, 303, made.text);
    board = made.location!;
    assert.match(board, /^\/acme\/-\/projects\/\d+$/);
    let page = await a.get(board);
    assert.equal(page.status, 200);
    const cols = columns(page.text);
    assert.equal(cols.length, 3);

    // Issues of the organization's repositories; bad numbers and repositories refused beside the field.
    assert.equal((await a.post(`${board}/issues`, { repo: 'pub', index: '1' })).status, 303);
    assert.equal((await a.post(`${board}/issues`, { repo: 'hidden', index: '1' })).status, 303);
    // (A column's "+" names its column: the message shows in that column's form, opened again.)
    const noIssue = await a.post(`${board}/issues`, { repo: 'pub', index: '42', column: String(cols[2]) });
    assert.equal(noIssue.status, 422);
    assert.match(noIssue.text, /id="add-issue-error"[^>]*>[^<]*pub#42 does not exist/);
    assert.match(noIssue.text, new RegExp(`id="add-issue-${cols[2]}"[^>]*aria-invalid="true"`));
    const noRepo = await a.post(`${board}/issues`, { repo: 'elsewhere', index: '1' });
    assert.equal(noRepo.status, 422);
    assert.match(noRepo.text, /id="add-issue-error"/);
    assert.match(noRepo.text, new RegExp(`id="add-repo-${cols[0]}"[^>]*aria-invalid="true"`));
    const notNumber = await a.post(`${board}/issues`, { repo: 'pub', index: 'x' });
    assert.equal(notNumber.status, 422);

    // Notes: written, refused when empty, edited, moved both ways, deleted.
    const blank = await a.post(`${board}/notes`, { note: '   ' });
    assert.equal(blank.status, 422);
    assert.match(blank.text, /id="add-note-error"[^>]*>[^<]*note cannot be empty/i);
    assert.equal((await a.post(`${board}/notes`, { note: 'Remember <the> milk' })).status, 303);
    page = await a.get(board);
    assert.match(page.text, /Remember &lt;the(&gt;|>) milk/);
    const noteId = Number(/data-note="(\d+)"/.exec(page.text)?.[1]);
    assert.ok(noteId > 0);
    assert.equal(columnOf(page.text, `data-note="${noteId}"`), cols[0]);
    assert.equal(columnOf(page.text, `data-issue="${pubIssue}"`), cols[0]);
    assert.equal((await a.post(`${board}/notes/${noteId}/edit`, { note: 'Buy milk' })).status, 303);
    assert.equal((await a.post(`${board}/notes/${noteId}/edit`, { note: '' })).status, 422);
    assert.equal((await a.post(`${board}/notes/999999/edit`, { note: 'x' })).status, 422);
    const move = (col: number, body: unknown, csrf = a.csrf) =>
      a.request('POST', `${board}/${col}/move`, JSON.stringify(body), {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': csrf,
      });
    const moved = await move(cols[1]!, {
      issues: [
        { noteID: noteId, sorting: 0 },
        { issueID: pubIssue, sorting: 1 },
      ],
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal((await move(cols[1]!, { issues: [{ noteID: 999999, sorting: 0 }] })).status, 422);
    assert.equal(
      (await move(cols[1]!, { issues: [{ noteID: noteId, issueID: pubIssue, sorting: 0 }] })).status,
      422,
    );
    assert.equal((await move(cols[2]!, { issues: [{ noteID: noteId, sorting: 0 }] }, 'forged')).status, 403);
    page = await a.get(board);
    assert.match(page.text, /Buy milk/);
    assert.equal(columnOf(page.text, `data-note="${noteId}"`), cols[1]);
    assert.equal(columnOf(page.text, `data-issue="${pubIssue}"`), cols[1]);
    const noScript = await a.post(`${board}/move-card`, { note_id: String(noteId), column: String(cols[2]) });
    assert.equal(noScript.status, 303);
    page = await a.get(board);
    assert.equal(columnOf(page.text, `data-note="${noteId}"`), cols[2]);
    assert.equal((await a.post(`${board}/notes/${noteId}/delete`, { _csrf: null })).status, 403);
    assert.equal((await a.post(`${board}/notes/${noteId}/delete`, {})).status, 303);
    assert.doesNotMatch((await a.get(board)).text, /Buy milk/);
  });

  it('follows the organization: writers of projects change, readers and outsiders only look', async () => {
    const [bob, carol, dave] = [web['bob']!, web['carol']!, web['dave']!];
    // An outsider sees the public repository's card but not the private one's.
    const seen = await dave.get(board);
    assert.equal(seen.status, 200);
    assert.match(seen.text, new RegExp(`data-issue="${pubIssue}"`));
    assert.doesNotMatch(seen.text, new RegExp(`data-issue="${hiddenIssue}"|Secret bug`));
    assert.doesNotMatch(seen.text, /Move to|New column/);
    const carolSees = await carol.get(board);
    assert.match(carolSees.text, /Secret bug/);
    assert.doesNotMatch(carolSees.text, /Move to/);
    for (const c of [carol, dave]) {
      await c.get(board);
      assert.equal((await c.post('/acme/-/projects/new', { title: 'Mine' })).status, 403);
      assert.equal((await c.post(board, { title: 'Col', color: '' })).status, 403);
      assert.equal((await c.get('/acme/-/projects/new')).status, 403);
    }
    // A team with write access to projects may change the board.
    await bob.get(board);
    assert.equal((await bob.post(board, { title: 'Review', color: '#aa00aa' })).status, 303);
    assert.equal(columns((await bob.get(board)).text).length, 4);
    // Anonymous: the public board, but nothing to change.
    const anon = new WebClient(s.url);
    assert.equal((await anon.get(board)).status, 200);
    assert.equal((await anon.post('/acme/-/projects/new', { title: 'x' })).status, 303); // to sign in
    // A private organization's boards are not found by outsiders.
    assert.equal((await web['alice']!.post('/hush/-/projects/new', { title: 'Hidden plan' })).status, 303);
    assert.equal((await web['alice']!.get('/hush/-/projects')).status, 200);
    assert.equal((await dave.get('/hush/-/projects')).status, 404);
    assert.equal((await anon.get('/hush/-/projects')).status, 404);
    assert.equal((await dave.get('/nobody/-/projects')).status, 404);
  });

  it('gives users their own boards, changed by themselves only', async () => {
    const dave = web['dave']!;
    assert.match((await dave.get('/dave')).text, /href="\/dave\/-\/projects"/);
    const made = await dave.post('/dave/-/projects/new', { title: 'Personal', template_type: '0' });
    assert.equal(made.status, 303);
    const url = made.location!;
    assert.match((await dave.get(url)).text, /This project has no columns yet/);
    assert.equal((await dave.post(url, { title: 'Todo', color: '' })).status, 303);
    const bob = web['bob']!;
    assert.equal((await bob.get(url)).status, 200);
    assert.equal((await bob.post('/dave/-/projects/new', { title: 'Not mine' })).status, 403);
    assert.equal((await bob.post(`${url}/close`, {})).status, 403);
    assert.equal((await dave.post(`${url}/close`, {})).status, 303);
    assert.match((await dave.get('/dave/-/projects?state=closed')).text, /Personal/);
    // Another owner's project is not found under this one.
    assert.equal((await dave.get(`/dave/-/projects/${board.split('/').pop()}`)).status, 404);
  });

  it("sets an issue's project from the sidebar picker", async () => {
    const a = web['alice']!;
    const repoProject = await a.post('/acme/pub/projects/new', { title: 'Repo plan', template_type: '1' });
    assert.equal(repoProject.status, 303);
    const boardId = board.split('/').pop()!;
    const repoId = repoProject.location!.split('/').pop()!;
    const issue = await a.get('/acme/pub/issues/1');
    assert.match(issue.text, /action="\/acme\/pub\/issues\/projects"/);
    assert.match(issue.text, new RegExp(`<option value="${boardId}"[^>]*>acme / Plan</option>`));
    assert.match(issue.text, new RegExp(`<option value="${repoId}"[^>]*>Repo plan</option>`));
    // The issue moves to the repository's project (off the organization's), then off every project.
    const set = await a.post('/acme/pub/issues/projects', { issue_ids: String(pubIssue), id: repoId });
    assert.equal(set.status, 303);
    assert.equal(set.location, '/acme/pub/issues/1');
    const after = await a.get('/acme/pub/issues/1');
    assert.match(after.text, new RegExp(`href="/acme/pub/projects/${repoId}">Repo plan`));
    assert.doesNotMatch((await a.get(board)).text, new RegExp(`data-issue="${pubIssue}"`));
    const repoBoard = await a.get(repoProject.location!);
    assert.equal(columnOf(repoBoard.text, `data-issue="${pubIssue}"`), columns(repoBoard.text)[0]);
    assert.equal(
      (await a.post('/acme/pub/issues/projects', { issue_ids: String(pubIssue), id: boardId })).status,
      303,
    );
    assert.match(
      (await a.get('/acme/pub/issues/1')).text,
      new RegExp(`href="/acme/-/projects/${boardId}">Plan`),
    );
    // Bad input changes nothing; a reader and a missing token are refused.
    const bad = await a.post('/acme/pub/issues/projects', { issue_ids: String(pubIssue), id: '999999' });
    assert.equal(bad.status, 303);
    assert.match((await a.get('/acme/pub/issues/1')).text, /is not an open project/);
    assert.match((await a.get(board)).text, new RegExp(`data-issue="${pubIssue}"`));
    const carol = web['carol']!;
    const carolView = await carol.get('/acme/pub/issues/1');
    assert.doesNotMatch(carolView.text, /name="issue_ids"/);
    assert.equal(
      (await carol.post('/acme/pub/issues/projects', { issue_ids: String(pubIssue), id: '0' })).status,
      403,
    );
    assert.equal(
      (await a.post('/acme/pub/issues/projects', { _csrf: null, issue_ids: String(pubIssue), id: '0' }))
        .status,
      403,
    );
    assert.equal(
      (await a.post('/acme/pub/issues/projects', { issue_ids: String(hiddenIssue), id: '0' })).status,
      404,
    );
    const none = await a.post('/acme/pub/issues/projects', { issue_ids: String(pubIssue), id: '0' });
    assert.equal(none.status, 303);
    assert.doesNotMatch((await a.get(board)).text, new RegExp(`data-issue="${pubIssue}"`));
    assert.match((await a.get('/acme/pub/issues/1')).text, /None yet/);
    // Back on the board for the browser check.
    assert.equal((await a.post(`${board}/issues`, { repo: 'pub', index: '1' })).status, 303);
  });

  it("hides a private organization's projects from an outside collaborator's sidebar", async () => {
    const t = alice.token;
    assert.equal(
      (await s.api('POST', '/orgs/hush/repos', { token: t, body: { name: 'inside' } })).status,
      201,
    );
    const issue = await s.api<{ id: number }>('POST', '/repos/hush/inside/issues', {
      token: t,
      body: { title: 'Shared bug' },
    });
    const a = web['alice']!;
    const list = (await a.get('/hush/-/projects')).text;
    const id = /href="\/hush\/-\/projects\/(\d+)"[^>]*>\s*Hidden plan/.exec(list)?.[1];
    assert.ok(id, list);
    const set = await a.post('/hush/inside/issues/projects', { issue_ids: String(issue.body.id), id });
    assert.equal(set.status, 303);
    assert.match((await a.get('/hush/inside/issues/1')).text, /Hidden plan/);
    // dave writes to the repository without being a member of the organization.
    assert.equal(
      (
        await s.api('PUT', '/repos/hush/inside/collaborators/dave', {
          token: t,
          body: { permission: 'write' },
        })
      ).status,
      204,
    );
    const seen = await web['dave']!.get('/hush/inside/issues/1');
    assert.equal(seen.status, 200);
    assert.match(seen.text, /Shared bug/);
    assert.doesNotMatch(seen.text, /Hidden plan/);
    assert.match(seen.text, /None yet/);
  });

  it('keeps a card moved on an organization board in Chromium after a reload', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', alice.password);
    await Promise.all([
      page.waitForURL((u) => !u.pathname.startsWith('/user/login')),
      page.click('main form button[type=submit]'),
    ]);
    await page.goto(`${s.url}${board}`);
    const cols = await page
      .locator('.board-column')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-column')));
    const last = cols[cols.length - 1]!;
    const target = page.locator(`.board-column[data-column="${last}"] .board-cards`);
    const card = page.locator(`.board-card[data-issue="${pubIssue}"]`);
    const saved = page.waitForResponse((r) => r.url().endsWith(`/${last}/move`));
    const dt = await page.evaluateHandle(() => new DataTransfer());
    await card.dispatchEvent('dragstart', { dataTransfer: dt });
    await target.dispatchEvent('dragover', { dataTransfer: dt });
    await target.dispatchEvent('drop', { dataTransfer: dt });
    await card.dispatchEvent('dragend', { dataTransfer: dt });
    assert.equal((await saved).status(), 200);
    await page.reload();
    assert.equal(
      await page
        .locator(`.board-column[data-column="${last}"] .board-card[data-issue="${pubIssue}"]`)
        .count(),
      1,
    );
    assert.deepEqual(await accessibilityViolations(page), []);
    await context.close();
  });
});
