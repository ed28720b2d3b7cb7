// The web interface in a real browser (Debian's Chromium driven by playwright-core): registering,
// signing in and out, creating a repository, with axe-core checking each main page for serious or
// critical accessibility violations and screenshots saved at 1280 and 375 px.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { GitClient } from '../helpers/git.js';

describe('web interface in a browser', () => {
  let s: TestServer;
  let browser: Browser;
  before(async () => {
    s = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  it('registers, signs out and in, creates a repository', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // Statuses the test provokes on purpose (a failed sign-in) are not script errors.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });

    await page.goto(`${s.url}/`);
    assert.equal(await page.title(), 'Explore - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'explore');

    await page.click('text=Register');
    assert.equal(await page.title(), 'Register - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-user_name', 'browsy');
    await page.fill('#f-email', 'browsy@example.com');
    await page.fill('#f-password', 'browser-pass-1');
    await page.fill('#f-retype', 'browser-pass-1');
    await screenshots(page, 'sign-up');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    assert.match((await page.textContent('main')) ?? '', /Welcome back, browsy/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'dashboard');

    await page.click('.user-menu summary');
    await page.click('text=Sign out');
    await page.waitForURL(`${s.url}/`);
    await page.click('text=Sign in');
    assert.equal(await page.title(), 'Sign in - Anvil');
    await page.fill('#f-user_name', 'browsy');
    await page.fill('#f-password', 'wrong-password');
    await page.click('main button[type=submit]');
    assert.match((await page.textContent('[role=alert]')) ?? '', /incorrect/);
    await screenshots(page, 'sign-in-failed');
    await page.fill('#f-password', 'browser-pass-1');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.click('.create-menu summary');
    await page.click('text=New repository');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-repo_name', 'hello');
    await page.check('#f-init');
    await screenshots(page, 'new-repository');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/browsy/hello`);
    const repo = await s.api<{ full_name: string }>('GET', '/repos/browsy/hello');
    assert.equal(repo.body.full_name, 'browsy/hello');

    // The repository home: files and the README, then the README file itself.
    assert.match((await page.textContent('main')) ?? '', /README\.md/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repository-home');
    await page.click('table.files >> text=README.md');
    await page.waitForURL(`${s.url}/browsy/hello/src/branch/main/README.md`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'file');
    await page.click('text=History');
    await page.click('ul.commits a.title');
    assert.match(page.url(), /\/browsy\/hello\/commit\/[0-9a-f]{40}$/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'commit');

    await page.goto(`${s.url}/browsy`);
    assert.match((await page.textContent('main')) ?? '', /browsy\/hello/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'profile');
    assert.deepEqual(errors, [], 'no script errors or CSP refusals in the console');
    await context.close();
  });
  it('pushes with git, then works an issue and a pull request through to the merge in the browser', async () => {
    const dev = await s.createUser('devon');
    await s.api('POST', '/user/repos', { token: dev.token, body: { name: 'tool', auto_init: true } });
    await s.api('POST', '/repos/devon/tool/labels', {
      token: dev.token,
      body: { name: 'bug', color: '#ee0701' },
    });
    // A branch pushed with git.
    const client = new GitClient();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-browser-'));
    const remote = `http://devon:${dev.token}@127.0.0.1:${new URL(s.url).port}/devon/tool.git`;
    await client.git(['clone', '-q', remote, work]);
    await client.git(['checkout', '-q', '-b', 'feature'], work);
    fs.writeFileSync(path.join(work, 'main.txt'), 'alpha\nbeta\ngamma\n');
    await client.git(['add', '.'], work);
    await client.git(['commit', '-q', '-m', 'Add main.txt'], work);
    await client.git(['push', '-q', 'origin', 'feature'], work);

    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'devon');
    await page.fill('#f-password', dev.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    // An issue with a label, a comment, closed.
    await page.goto(`${s.url}/devon/tool/issues`);
    await page.click('text=New issue');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-title', 'Crashes <b>on</b> start');
    await page.fill('#f-content', 'Steps:\n\n1. *start*');
    await page.check('input[name=label]');
    await screenshots(page, 'new-issue');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/devon/tool/issues/1`);
    assert.equal(await page.title(), 'Crashes <b>on</b> start · Issues · devon/tool - Anvil');
    assert.match((await page.textContent('aside')) ?? '', /bug/);
    await page.fill('#comment-content', 'Reproduced **twice**.');
    await page.click('[data-preview="comment-content"]');
    await page.waitForSelector('#comment-content-preview strong');
    assert.equal(await page.textContent('#comment-content-preview strong'), 'twice');
    await page.setInputFiles('#comment-files', {
      name: 'trace.log',
      mimeType: 'text/plain',
      buffer: Buffer.from('stack trace\n'),
    });
    await page.click('button:text-is("Comment")');
    await page.waitForURL(/\/devon\/tool\/issues\/1#issuecomment-\d+$/);
    assert.equal(await page.textContent('.attachments a'), 'trace.log');
    await page.click('summary[aria-label="Add a reaction"] >> nth=0');
    await page.click('button[aria-label="+1 reaction"] >> nth=0');
    await page.waitForSelector('button[aria-pressed="true"]');
    await page.click('button:text-is("Close")');
    await page.waitForURL(`${s.url}/devon/tool/issues/1`);
    assert.equal(await page.textContent('.pill.state'), 'Closed');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'issue');
    const issue = await s.api<{ state: string; html_url: string; labels: unknown[] }>(
      'GET',
      '/repos/devon/tool/issues/1',
    );
    assert.equal(issue.body.state, 'closed');
    assert.equal(issue.body.labels.length, 1);

    // A pull request from the pushed branch, opened on the compare page.
    await page.goto(`${s.url}/devon/tool/pulls`);
    await page.click('text=New pull request');
    await page.selectOption('#cmp-head', 'feature');
    await page.click('button:text-is("Compare")');
    await page.waitForURL(`${s.url}/devon/tool/compare/main...feature`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'compare');
    await page.fill('#f-title', 'Add main.txt');
    await page.click('button:text-is("Create pull request")');
    await page.waitForURL(`${s.url}/devon/tool/pulls/2`);

    // A line reviewed: the "+" of line 2 fills the review form.
    await page.click('text=Files changed');
    await page.waitForURL(`${s.url}/devon/tool/pulls/2/files`);
    await page.click('button.line-comment[data-line="2"]');
    assert.equal(await page.inputValue('#review-path'), 'main.txt');
    assert.equal(await page.inputValue('#review-line'), '2');
    await page.fill('#review-line-body', 'Should beta be here?');
    await page.fill('#review-content', 'One question.');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'pull-files');
    await page.click('button:text-is("Submit review")');
    await page.waitForURL(`${s.url}/devon/tool/pulls/2`);
    const reviews = await s.api<Array<{ id: number; comments_count: number }>>(
      'GET',
      '/repos/devon/tool/pulls/2/reviews',
    );
    assert.equal(reviews.body.length, 1);
    const comments = await s.api<Array<{ path: string; position: number; body: string }>>(
      'GET',
      `/repos/devon/tool/pulls/2/reviews/${reviews.body[0]!.id}/comments`,
    );
    assert.deepEqual(
      comments.body.map((c) => [c.path, c.position, c.body]),
      [['main.txt', 2, 'Should beta be here?']],
    );
    await page.goto(`${s.url}/devon/tool/pulls/2/files`);
    assert.match((await page.textContent('tr.note')) ?? '', /Should beta be here\?/);

    // Merged with the button.
    await page.goto(`${s.url}/devon/tool/pulls/2`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'pull-request');
    await page.selectOption('#merge-style', 'merge');
    await page.click('button:text-is("Merge")');
    await page.waitForURL(`${s.url}/devon/tool/pulls/2`);
    assert.match((await page.textContent('.merge-box')) ?? '', /Merged in/);
    const pr = await s.api<{ merged: boolean; html_url: string; diff_url: string; patch_url: string }>(
      'GET',
      '/repos/devon/tool/pulls/2',
    );
    assert.equal(pr.body.merged, true);

    // An archive and a release asset downloaded from their pages.
    await page.goto(`${s.url}/devon/tool`);
    const [zip] = await Promise.all([page.waitForEvent('download'), page.click('text=ZIP')]);
    const zipPath = await zip.path();
    assert.equal(fs.readFileSync(zipPath!).subarray(0, 2).toString(), 'PK');
    const rel = await s.api<{ id: number; html_url: string }>('POST', '/repos/devon/tool/releases', {
      token: dev.token,
      body: { tag_name: 'v1.0', name: 'One' },
    });
    const form = new FormData();
    form.set('attachment', new Blob([Buffer.from('tool bytes') as Buffer<ArrayBuffer>]), 'tool.bin');
    const up = await fetch(`${s.url}/api/v1/repos/devon/tool/releases/${rel.body.id}/assets`, {
      method: 'POST',
      body: form,
      headers: { authorization: `token ${dev.token}` },
    });
    assert.equal(up.status, 201);
    await page.goto(`${s.url}/devon/tool/releases`);
    const [asset] = await Promise.all([page.waitForEvent('download'), page.click('text=tool.bin')]);
    assert.equal(fs.readFileSync((await asset.path())!).toString(), 'tool bytes');

    // Two wiki pages (written through the API), for the wiki's pages below.
    for (const [title, text] of [
      [
        'Home',
        '# Welcome\n\nRead **Install** first. <script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |',
      ],
      ['Install', 'Run `make install`.\n\n```sh\nmake install\n```'],
    ] as const) {
      const w = await s.api('POST', '/repos/devon/tool/wiki/new', {
        token: dev.token,
        body: { title, content_base64: Buffer.from(text).toString('base64') },
      });
      assert.equal(w.status, 201, title);
    }

    // The other main pages: no serious accessibility violation, a screenshot of each.
    for (const [name, p] of [
      ['issues', '/devon/tool/issues?state=closed'],
      ['pulls', '/devon/tool/pulls?state=closed'],
      ['releases', '/devon/tool/releases'],
      ['labels', '/devon/tool/labels'],
      ['milestones', '/devon/tool/milestones'],
      ['branches', '/devon/tool/branches'],
      ['blame', '/devon/tool/blame/branch/main/main.txt'],
      ['commit-split', `/devon/tool/pulls/2/files?style=split`],
      ['explore-users', '/explore/users'],
      ['wiki', '/devon/tool/wiki'],
      ['wiki-pages', '/devon/tool/wiki/_pages'],
      ['wiki-page', '/devon/tool/wiki/Install'],
    ] as const) {
      await page.goto(`${s.url}${p}`);
      assert.ok((await page.title()).endsWith(' - Anvil'), `${p} has a title`);
      assert.deepEqual(await accessibilityViolations(page), [], p);
      await screenshots(page, name);
    }

    // The wiki's home page shows its markdown rendered (the table) and sanitized (no script).
    await page.goto(`${s.url}/devon/tool/wiki`);
    assert.equal(await page.locator('.wiki-page h1').textContent(), 'Welcome');
    assert.equal(await page.locator('.wiki-page table td').first().textContent(), '1');
    assert.equal(await page.locator('.wiki-page script').count(), 0);
    await page.click('.wiki-actions >> text=Pages');
    await page.click('.wiki-pages >> text=Install');
    await page.waitForURL(`${s.url}/devon/tool/wiki/Install`);
    assert.match((await page.textContent('.wiki-page pre')) ?? '', /make install/);

    // Every page the API links to answers.
    for (const url of [
      issue.body.html_url,
      pr.body.html_url,
      pr.body.diff_url,
      pr.body.patch_url,
      rel.body.html_url,
    ])
      assert.equal((await fetch(url)).status, 200, url);
    assert.deepEqual(errors, [], 'no script errors or CSP refusals in the console');
    await context.close();
  });
});
