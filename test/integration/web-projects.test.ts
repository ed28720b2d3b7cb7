// Project boards in the web interface at Forgejo's addresses: a project with the basic kanban
// columns, columns added, edited and made the default, issues put on the board, cards moved by
// Forgejo's JSON endpoint and by the no-script "Move to" form, cards put on a chosen column (the
// column's "+" posts it), bad input, a reader refused, a private repository hidden, CSRF; and in
// Chromium a card dragged to another column stays there, and a column, an issue card and a note
// card are added through the board's toolbar and a column's "+" (axe, no sideways page at 375 px).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

describe('web interface: project boards', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let a: WebClient;
  let b: WebClient;
  let browser: Browser;
  const issueIds: number[] = [];
  let projectUrl = '';

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    const bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'secret', private: true } });
    for (const title of ['First card', 'Second card']) {
      const r = await s.api<{ id: number }>('POST', '/repos/alice/proj/issues', {
        token: alice.token,
        body: { title },
      });
      issueIds.push(r.body.id);
    }
    const label = await s.api<{ id: number }>('POST', '/repos/alice/proj/labels', {
      token: alice.token,
      body: { name: 'docs', color: '#0075ca' },
    });
    await s.api('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'Write the board guide', labels: [label.body.id] },
    });
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  const columnIds = async (url: string) =>
    [...(await a.get(url)).text.matchAll(/data-column="(\d+)"/g)].map((m) => Number(m[1]));
  const columnOf = (html: string, card: number | string) => {
    const at = html.indexOf(typeof card === 'number' ? `data-issue="${card}"` : card);
    const before = html.slice(0, at);
    return Number([...before.matchAll(/data-column="(\d+)"/g)].pop()?.[1]);
  };

  it('creates a kanban project, edits columns, adds issues and moves cards', async () => {
    assert.equal((await a.get('/alice/proj/projects')).status, 200);
    const empty = await a.post('/alice/proj/projects/new', { title: '  ', content: '', template_type: '1' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /id="f-title-error"/);
    assert.match(empty.text, /Basic kanban/);
    const created = await a.post('/alice/proj/projects/new', {
      title: 'Roadmap',
      content: 'What comes next',
      template_type: '1',
    });
    assert.equal(created.status, 303, created.text);
    projectUrl = created.location!;
    assert.match(projectUrl, /^\/alice\/proj\/projects\/\d+$/);
    let board = await a.get(projectUrl);
    assert.equal(board.status, 200);
    for (const t of ['To Do', 'In Progress', 'Done'])
      assert.ok(board.text.includes(`> ${t} <`) || board.text.includes(t));
    const cols = await columnIds(projectUrl);
    assert.equal(cols.length, 3);

    // A new column, then a bad colour, renamed, made the default.
    assert.equal((await a.post(projectUrl, { title: 'Review', color: '#aa00aa' })).status, 303);
    const bad = await a.post(projectUrl, { title: 'X', color: 'purple' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="new-column-error"[^>]*>[^<]*colour/);
    const all = await columnIds(projectUrl);
    assert.equal(all.length, 4);
    assert.equal(
      (await a.post(`${projectUrl}/${all[3]}/edit`, { title: 'QA', color: '#00aa00' })).status,
      303,
    );
    assert.equal((await a.post(`${projectUrl}/${all[1]}/default`, {})).status, 303);
    board = await a.get(projectUrl);
    assert.match(board.text, /QA/);

    // Issues land in the default column.
    assert.equal((await a.post(`${projectUrl}/issues`, { index: '1' })).status, 303);
    assert.equal((await a.post(`${projectUrl}/issues`, { index: '2' })).status, 303);
    const missing = await a.post(`${projectUrl}/issues`, { index: '99' });
    assert.equal(missing.status, 422);
    assert.match(missing.text, /id="add-issue-error"[^>]*>[^<]*does not exist/);
    board = await a.get(projectUrl);
    assert.equal(columnOf(board.text, issueIds[0]!), all[1]);
    // The column's "+" names its column; a failed add opens that column's form again.
    assert.equal(
      (await a.post(`${projectUrl}/notes`, { note: 'Check QA', column: String(all[3]) })).status,
      303,
    );
    board = await a.get(projectUrl);
    assert.equal(columnOf(board.text, 'data-note="'), all[3]);
    const blank = await a.post(`${projectUrl}/notes`, { note: ' ', column: String(all[2]) });
    assert.equal(blank.status, 422);
    assert.match(blank.text, new RegExp(`id="add-note-${all[2]}"[^>]*aria-invalid="true"`));
    assert.match(blank.text, /<details class="column-add" open/);
    for (const column of ['999999', 'x']) {
      const wrong = await a.post(`${projectUrl}/notes`, { note: 'Lost', column });
      assert.equal(wrong.status, 422, column);
      assert.match(wrong.text, /role="alert">column is not a column of this project/i);
    }

    // Forgejo's JSON move, then bad JSON, then an issue not on the board: nothing moves.
    const move = (col: number, body: unknown, csrf = a.csrf) =>
      a.request('POST', `${projectUrl}/${col}/move`, JSON.stringify(body), {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': csrf,
      });
    const ok = await move(all[2]!, { issues: [{ issueID: issueIds[1], sorting: 0 }] });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(JSON.parse(ok.text), { ok: true });
    assert.equal((await move(all[2]!, { issues: [{ issueID: 'x', sorting: 0 }] })).status, 422);
    assert.equal((await move(all[2]!, { issues: [{ issueID: 999999, sorting: 0 }] })).status, 422);
    assert.equal((await move(999999, { issues: [{ issueID: issueIds[0], sorting: 0 }] })).status, 404);
    assert.equal(
      (await move(all[2]!, { issues: [{ issueID: issueIds[0], sorting: 1 }] }, 'forged')).status,
      403,
    );
    board = await a.get(projectUrl);
    assert.equal(columnOf(board.text, issueIds[1]!), all[2]);
    assert.equal(columnOf(board.text, issueIds[0]!), all[1]);

    // The no-script form.
    const moved = await a.post(`${projectUrl}/move-card`, {
      issue_id: String(issueIds[0]),
      column: String(all[3]),
    });
    assert.equal(moved.status, 303);
    board = await a.get(projectUrl);
    assert.equal(columnOf(board.text, issueIds[0]!), all[3]);
    const noCsrf = await a.post(`${projectUrl}/move-card`, {
      _csrf: null,
      issue_id: String(issueIds[0]),
      column: String(all[0]),
    });
    assert.equal(noCsrf.status, 403);

    // Deleting a column sends its cards to the default one.
    assert.equal((await a.post(`${projectUrl}/${all[3]}/delete`, {})).status, 303);
    board = await a.get(projectUrl);
    assert.equal(columnOf(board.text, issueIds[0]!), all[1]);
  });

  it('shows the state of each card: an open and a closed issue, a merged pull request', async () => {
    const branch = await s.api('POST', '/repos/alice/proj/contents/guide.md', {
      token: alice.token,
      body: { content: Buffer.from('# Guide\n').toString('base64'), new_branch: 'guide', message: 'Guide' },
    });
    assert.equal(branch.status, 201, branch.text);
    const pr = await s.api<{ number: number; id: number }>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { title: 'Add the guide', head: 'guide', base: 'main' },
    });
    assert.equal(pr.status, 201, pr.text);
    const merged = await s.api('POST', `/repos/alice/proj/pulls/${pr.body.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(merged.status, 200, merged.text);
    await s.api('PATCH', `/repos/alice/proj/issues/2`, { token: alice.token, body: { state: 'closed' } });
    assert.equal((await a.post(`${projectUrl}/issues`, { index: String(pr.body.number) })).status, 303);
    const board = (await a.get(projectUrl)).text;
    assert.match(board, /title="Pull request, merged"/);
    assert.match(board, /title="Issue, closed"/);
    assert.match(board, /title="Issue, open"/);
    assert.doesNotMatch(board, /Pull request, closed/);
  });

  it('lets readers look but not change, and hides private repositories', async () => {
    const seen = await b.get(projectUrl);
    assert.equal(seen.status, 200);
    assert.doesNotMatch(seen.text, /Move to/);
    const cols = [...seen.text.matchAll(/data-column="(\d+)"/g)].map((m) => m[1]);
    assert.equal(
      (await b.post(`${projectUrl}/move-card`, { issue_id: String(issueIds[0]), column: cols[0]! })).status,
      403,
    );
    assert.equal((await b.post('/alice/proj/projects/new', { title: 'Mine' })).status, 403);
    assert.equal((await b.get('/alice/secret/projects')).status, 404);
    // Projects turned off: no board.
    await s.api('PATCH', '/repos/alice/proj', { token: alice.token, body: { has_projects: false } });
    assert.equal((await a.get(projectUrl)).status, 404);
    await s.api('PATCH', '/repos/alice/proj', { token: alice.token, body: { has_projects: true } });
  });

  it('moves a card by drag and drop in Chromium, and it stays after a reload', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', alice.password);
    await Promise.all([
      page.waitForURL((u) => !u.pathname.startsWith('/user/login')),
      page.click('main form button[type=submit]'),
    ]);
    await page.goto(`${s.url}${projectUrl}`);
    const cols = await page
      .locator('.board-column')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-column')));
    const target = page.locator(`.board-column[data-column="${cols[0]}"] .board-cards`);
    const card = page.locator(`.board-card[data-issue="${issueIds[0]}"]`);
    const saved = page.waitForResponse((r) => r.url().endsWith(`/${cols[0]}/move`));
    // The HTML5 drag events, as a mouse drag fires them (with one DataTransfer).
    const dt = await page.evaluateHandle(() => new DataTransfer());
    await card.dispatchEvent('dragstart', { dataTransfer: dt });
    await target.dispatchEvent('dragover', { dataTransfer: dt });
    await target.dispatchEvent('drop', { dataTransfer: dt });
    await card.dispatchEvent('dragend', { dataTransfer: dt });
    assert.equal((await saved).status(), 200);
    await page.reload();
    assert.equal(
      await page
        .locator(`.board-column[data-column="${cols[0]}"] .board-card[data-issue="${issueIds[0]}"]`)
        .count(),
      1,
    );
    assert.deepEqual(await accessibilityViolations(page), []);

    // A column from the toolbar, then an issue and a note through that column's "+". Each form
    // redirects back to the board: what follows waits for that page (waitForURL would not, the
    // URL being the same).
    const reloaded = async (click: Promise<void>) => {
      await Promise.all([
        page.waitForResponse(
          (r) => new URL(r.url()).pathname === projectUrl && r.request().method() === 'GET',
        ),
        click,
      ]);
      await page.waitForLoadState();
    };
    await page.click('.board-toolbar summary');
    await page.fill('#new-column', 'Review');
    await reloaded(page.click('.board-pop-body button[type=submit]'));
    const review = page.locator('.board-column', { has: page.locator('h3', { hasText: 'Review' }) });
    const id = await review.getAttribute('data-column');
    assert.ok(id);
    await review.locator('.column-add > summary').click();
    // The menu's script moves the focus on its toggle event, which comes after the click.
    await page.waitForFunction((f) => document.activeElement?.id === f, `add-issue-${id}`, {
      timeout: 10_000,
    });
    await page.keyboard.type('3');
    await reloaded(page.click(`#add-issue-${id} + button`));
    await review.locator('.column-add > summary').click();
    await page.fill(`#add-note-${id}`, 'Ask the docs team to review');
    await reloaded(
      review
        .locator('.column-form', { has: page.locator(`#add-note-${id}`) })
        .locator('button')
        .click(),
    );
    assert.equal(await review.locator('.board-card .card-title').textContent(), 'Write the board guide');
    assert.equal(await review.locator('.board-card .label-pill').textContent(), 'docs');
    assert.equal(
      await review.locator('.board-card.note .note-text').textContent(),
      'Ask the docs team to review',
    );
    await screenshots(page, 'project-board');

    // Selecting the note's text in its edit field with the mouse selects text; it does not drag
    // the card (a card is draggable, and so was everything in it); closing the menu makes the
    // card draggable again.
    const noteCard = review.locator('.board-card.note');
    await noteCard.locator('.card-menu > summary').click();
    const field = noteCard.locator('textarea[name=note]');
    const box = (await field.boundingBox())!;
    let moves = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/move')) moves++;
    });
    await page.evaluate(() => {
      (window as unknown as { dragged: number }).dragged = 0;
      document.addEventListener('dragstart', () => (window as unknown as { dragged: number }).dragged++);
    });
    await page.mouse.move(box.x + 6, box.y + 10);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y + 12, { steps: 8 });
    await page.mouse.move(box.x + box.width - 6, box.y + 14, { steps: 8 });
    await page.mouse.up();
    assert.equal(await page.evaluate(() => (window as unknown as { dragged: number }).dragged), 0);
    const selected = await field.evaluate((t: HTMLTextAreaElement) => t.selectionEnd - t.selectionStart);
    assert.ok(selected > 0, 'the mouse selected text in the field');
    assert.equal(moves, 0);
    await noteCard.locator('.card-menu > summary').click();
    await page.waitForFunction(
      () => document.querySelector('.board-card.note')?.getAttribute('draggable') === 'true',
    );

    // On a phone the board scrolls sideways, not the page; the open menus pass axe.
    await page.setViewportSize({ width: 375, height: 800 });
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      view: window.innerWidth,
      board: document.querySelector('.board')!.scrollWidth,
      shown: document.querySelector('.board')!.clientWidth,
    }));
    assert.ok(widths.page <= widths.view, JSON.stringify(widths));
    assert.ok(widths.board > widths.shown, JSON.stringify(widths));
    const first = page.locator('.board-column').first();
    await first.locator('.column-add > summary').click();
    await first.locator('.card-menu > summary').first().click();
    assert.equal(await first.locator('details[open]').count(), 1, 'a click elsewhere closes a menu');
    await first.locator('.column-add > summary').evaluate((e) => e.parentElement!.setAttribute('open', ''));
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
    await screenshots(page, 'project-board-menus');
    assert.deepEqual(await accessibilityViolations(page), []);
    await context.close();
  });
});
