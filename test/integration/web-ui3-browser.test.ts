// Web UI III in a real browser (Debian's Chromium driven by playwright-core), one server and one
// signed-in browser context for the file, fixtures made through the API: the web editor (a commit to a
// new branch that goes on to open a pull request; refusals by a protected branch and by the quota,
// shown on the form), an npm package published with the real `npm` client whose page's install
// command, run as shown, installs it, code search from the repository's search box to the highlighted
// line, a pull request that "Fixes #N" merged from its page, and every page of issue 29 checked with
// axe-core (no serious or critical violation), for emoji in the text (icons are SVG) and photographed
// at 1280 and 375 px into the test's temporary directory.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/git.js';
import { accessibilityViolations, launchBrowser, WebClient } from '../helpers/web.js';

interface User {
  name: string;
  password: string;
  token: string;
}

const CODE = [
  'export function answer(): number {',
  '  const base = 6;',
  '  return base * 7; // the answer',
  '}',
  '',
].join('\n');

const WORKFLOW = `name: Check
on: push
jobs:
  test:
    runs-on: self-hosted
    steps:
      - run: echo checked
`;

describe('web UI III in a browser', () => {
  let s: TestServer;
  let alice: User;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let tmp: string;
  const errors: string[] = [];

  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const api = async <T = unknown>(method: string, p: string, body?: unknown) =>
    s.api<T>(method, p, { token: alice.token, body });

  /** Runs a command with nothing from the machine's npm configuration. */
  function run(cmd: string, args: string[], cwd: string) {
    return new Promise<{ code: number; out: string }>((resolve, reject) => {
      const home = path.join(tmp, 'npm-home');
      fs.mkdirSync(home, { recursive: true });
      const child = spawn(cmd, args, {
        cwd,
        env: {
          PATH: process.env['PATH'],
          HOME: home,
          npm_config_globalconfig: path.join(home, 'global-npmrc'),
          npm_config_cache: path.join(home, 'cache'),
          npm_config_update_notifier: 'false',
          npm_config_audit: 'false',
          npm_config_fund: 'false',
          npm_config_loglevel: 'warn',
        },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, out }));
    });
  }

  /** Text nodes of the page that hold an emoji (drawn as an empty box where no emoji font is). */
  const emojiIn = (p: Page) =>
    p.evaluate(() => {
      const found: string[] = [];
      const emoji = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F/u;
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode())
        if (emoji.test(n.textContent ?? '')) found.push((n.textContent ?? '').trim().slice(0, 60));
      return found;
    });

  /**
   * The page as loaded: no serious or critical axe violation, no emoji in its text, no sideways
   * scrolling of the page, and a full-page screenshot at 1280 and 375 px (the same load, the viewport
   * resized) under the test's directory.
   */
  async function check(name: string) {
    assert.ok((await page.title()).endsWith(' - Anvil'), `${name} has a title`);
    assert.deepEqual(await accessibilityViolations(page), [], name);
    assert.deepEqual(await emojiIn(page), [], `${name}: no emoji in the text`);
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 800 });
      // Nothing wider than the window (what scrolls sideways does so in its own box).
      assert.equal(
        await page.evaluate(() => document.documentElement.scrollWidth),
        width,
        `${name} fits ${width} px`,
      );
      await page.screenshot({ path: path.join(tmp, 'screenshots', `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ui3-'));
    fs.mkdirSync(path.join(tmp, 'screenshots'));
    [s, browser] = await Promise.all([
      startServer({
        ANVIL__QUOTA__ENABLED: 'true',
        ANVIL__ACTIONS__ENABLED: 'true',
      }),
      launchBrowser(),
    ]);
    alice = await s.createUser('alice');
    const r = await api('POST', '/user/repos', { name: 'tool', auto_init: true, default_branch: 'main' });
    assert.equal(r.status, 201, r.text);
    const c = await api('POST', '/repos/alice/tool/contents/src/answer.ts', {
      content: b64(CODE),
      message: 'Add the answer',
    });
    assert.equal(c.status, 201, c.text);

    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // The refusals the test provokes (422) are not script errors.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', alice.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await s?.close();
    // ANVIL_KEEP_SCREENSHOTS=1 keeps the directory, to look at the screenshots.
    if (process.env['ANVIL_KEEP_SCREENSHOTS']) console.log(`screenshots kept in ${tmp}/screenshots`);
    else if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('edits a file into a new branch and opens the pull request from the compare page', async () => {
    await page.goto(`${s.url}/alice/tool/src/branch/main/README.md`);
    await page.click('main a:text-is("Edit")');
    await page.waitForURL(`${s.url}/alice/tool/_edit/main/README.md`);
    await check('editor');
    await page.fill('textarea[name=content]', '# tool\n\nEdited in the browser.\n');
    await page.fill('input[name=commit_summary]', 'Say where it was edited');
    await page.check('input[name=commit_choice][value=commit-to-new-branch]');
    await page.fill('input[name=new_branch_name]', 'edit-readme');
    await page.click('button:text-is("Commit changes")');
    await page.waitForURL(`${s.url}/alice/tool/compare/main...edit-readme`);
    assert.match((await page.textContent('main')) ?? '', /Say where it was edited/);
    await check('editor-compare');
    await page.fill('#f-title', 'Edited README');
    await page.click('button:text-is("Create pull request")');
    await page.waitForURL(`${s.url}/alice/tool/pulls/1`);
    const pr = await api<{ head: { ref: string }; base: { ref: string }; title: string }>(
      'GET',
      '/repos/alice/tool/pulls/1',
    );
    assert.deepEqual(
      [pr.body.head.ref, pr.body.base.ref, pr.body.title],
      ['edit-readme', 'main', 'Edited README'],
    );
    const raw = await fetch(`${s.url}/alice/tool/raw/branch/edit-readme/README.md`);
    assert.equal(await raw.text(), '# tool\n\nEdited in the browser.\n');
  });

  it('refuses a commit to a protected branch and one over the quota, with the reason on the form', async () => {
    const readme = async () => (await fetch(`${s.url}/alice/tool/raw/branch/main/README.md`)).text();
    const before = await readme();
    const p = await api('POST', '/repos/alice/tool/branch_protections', {
      rule_name: 'main',
      enable_push: false,
    });
    assert.equal(p.status, 201, p.text);
    await page.goto(`${s.url}/alice/tool/_edit/main/README.md`);
    await page.fill('textarea[name=content]', 'protected?\n');
    await page.click('button:text-is("Commit changes")');
    await page.waitForSelector('.editor [role=alert]');
    assert.match((await page.textContent('.editor [role=alert]')) ?? '', /protected branch main/);
    assert.equal(await page.inputValue('textarea[name=content]'), 'protected?\n', 'what was typed is kept');
    await check('editor-protected');
    assert.equal(await readme(), before);
    assert.equal((await api('DELETE', '/repos/alice/tool/branch_protections/main')).status, 204);

    // A quota of 10 bytes for alice's repositories, for this commit only.
    const rule = await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'ui3-tiny', limit: 10, subjects: ['size:repos:all'] },
    });
    assert.equal(rule.status, 201, rule.text);
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'ui3-tiny', rules: [{ name: 'ui3-tiny' }] },
    });
    const join = await s.api('PUT', '/admin/quota/groups/ui3-tiny/users/alice', { token: s.admin.token });
    assert.equal(join.status, 204, join.text);
    await page.goto(`${s.url}/alice/tool/_edit/main/README.md`);
    await page.fill('textarea[name=content]', 'more bytes than the quota allows\n');
    await page.click('button:text-is("Commit changes")');
    await page.waitForSelector('.editor [role=alert]');
    assert.match((await page.textContent('.editor [role=alert]')) ?? '', /quota/i);
    await check('editor-quota');
    assert.equal(await readme(), before);
    const leave = await s.api('DELETE', '/admin/quota/groups/ui3-tiny/users/alice', { token: s.admin.token });
    assert.equal(leave.status, 204, leave.text);
  });

  it('installs an npm package with the command its page shows', async () => {
    const registry = `${s.url}/api/packages/alice/npm/`;
    const publisher = path.join(tmp, 'publisher');
    fs.mkdirSync(publisher);
    fs.writeFileSync(
      path.join(publisher, 'package.json'),
      JSON.stringify({ name: '@ui3/widget', version: '1.2.3', description: 'A widget', main: 'index.js' }),
    );
    fs.writeFileSync(path.join(publisher, 'index.js'), 'module.exports = "widget 1.2.3";\n');
    fs.writeFileSync(
      path.join(publisher, '.npmrc'),
      [`@ui3:registry=${registry}`, `${registry.replace(/^http:/, '')}:_authToken=${alice.token}`, ''].join(
        '\n',
      ),
    );
    const pub = await run('npm', ['publish', '--userconfig', path.join(publisher, '.npmrc')], publisher);
    assert.equal(pub.code, 0, pub.out);

    await page.goto(`${s.url}/alice/-/packages`);
    await check('packages');
    await page.click('main a:text-is("@ui3/widget")');
    await page.waitForURL(/\/alice\/-\/packages\/npm\/.*widget\/1\.2\.3$/);
    await check('package');
    const setup = await page.textContent('code[data-install="Registry setup (.npmrc)"]');
    const install = await page.textContent('code[data-install="Install"]');
    assert.equal(setup, `@ui3:registry=${registry}`);
    assert.equal(install, 'npm install @ui3/widget@1.2.3');

    // A fresh project with the .npmrc the page gives, the command run as shown (no shell).
    const consumer = path.join(tmp, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(
      path.join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0' }),
    );
    fs.writeFileSync(path.join(consumer, '.npmrc'), `${setup}\n`);
    const [cmd, ...args] = install!.split(' ');
    const got = await run(cmd!, [...args, '--userconfig', path.join(consumer, '.npmrc')], consumer);
    assert.equal(got.code, 0, got.out);
    assert.equal(
      fs.readFileSync(path.join(consumer, 'node_modules', '@ui3', 'widget', 'index.js'), 'utf8'),
      'module.exports = "widget 1.2.3";\n',
    );
  });

  it('searches the code from the search box and follows a result to the highlighted line', async () => {
    await page.goto(`${s.url}/alice/tool`);
    await page.fill('form.code-search input[name=q]', 'return base * 7;');
    await page.press('form.code-search input[name=q]', 'Enter');
    await page.waitForURL(/\/alice\/tool\/search\?q=/);
    assert.equal(await page.textContent('.code-hit mark'), 'return base * 7;');
    await check('code-search');
    await page.click('.code-hit .l a:text-is("3")');
    await page.waitForURL(`${s.url}/alice/tool/src/branch/main/src/answer.ts#L3`);
    const target = await page.evaluate(() => {
      const t = document.querySelector(':target');
      const other = document.getElementById('L2');
      return {
        id: t?.id,
        text: t?.textContent,
        background: t ? getComputedStyle(t).backgroundColor : '',
        plain: other ? getComputedStyle(other).backgroundColor : '',
      };
    });
    assert.equal(target.id, 'L3');
    assert.match(target.text ?? '', /return base \* 7;/);
    assert.notEqual(target.background, target.plain, 'the line is highlighted');
  });

  it('merges a pull request that fixes an issue, which closes the issue', async () => {
    const issue = await api<{ number: number }>('POST', '/repos/alice/tool/issues', {
      title: 'Wrong answer',
    });
    assert.equal(issue.status, 201, issue.text);
    const file = await api('POST', '/repos/alice/tool/contents/FIX.md', {
      content: b64('fixed\n'),
      message: 'Fix the answer',
      new_branch: 'fix',
    });
    assert.equal(file.status, 201, file.text);
    const pr = await api<{ number: number }>('POST', '/repos/alice/tool/pulls', {
      title: 'Fix the answer',
      head: 'fix',
      base: 'main',
      body: `Fixes #${issue.body.number}`,
    });
    assert.equal(pr.status, 201, pr.text);
    // A reaction, drawn (as an SVG) beside the description.
    const heart = await api('POST', `/repos/alice/tool/issues/${pr.body.number}/reactions`, {
      content: 'heart',
    });
    assert.equal(heart.status, 201, heart.text);
    await page.goto(`${s.url}/alice/tool/pulls/${pr.body.number}`);
    assert.equal(
      await page.locator('.reactions > form button[aria-label="heart reaction: 1"] svg').count(),
      1,
    );
    await check('pull-request');
    await page.selectOption('#merge-style', 'merge');
    await page.click('button:text-is("Merge")');
    await page.waitForURL(`${s.url}/alice/tool/pulls/${pr.body.number}`);
    assert.equal(await page.textContent('.pill.state'), 'Merged');
    assert.match((await page.textContent('.merge-box')) ?? '', /Merged in/);
    await page.goto(`${s.url}/alice/tool/issues/${issue.body.number}`);
    assert.equal(await page.textContent('.pill.state'), 'Closed');
    const closed = await api<{ state: string }>('GET', `/repos/alice/tool/issues/${issue.body.number}`);
    assert.equal(closed.body.state, 'closed');
  });

  it('shows the pages of issue 29 without accessibility violations or emoji', async () => {
    const label = await api('POST', '/repos/alice/tool/labels', { name: 'bug', color: '#ee0701' });
    assert.equal(label.status, 201, label.text);
    const ms = await api('POST', '/repos/alice/tool/milestones', { title: 'v1', description: 'The first' });
    assert.equal(ms.status, 201, ms.text);
    const rel = await api('POST', '/repos/alice/tool/releases', {
      tag_name: 'v1.0',
      name: 'One',
      body: 'The **first** release.',
    });
    assert.equal(rel.status, 201, rel.text);
    const wiki = await api('POST', '/repos/alice/tool/wiki/new', {
      title: 'Home',
      content_base64: b64('# Welcome\n\nRead the code.'),
    });
    assert.equal(wiki.status, 201, wiki.text);
    const wf = await api('POST', '/repos/alice/tool/contents/.forgejo/workflows/check.yml', {
      content: b64(WORKFLOW),
      message: 'Add a workflow',
    });
    assert.equal(wf.status, 201, wf.text);
    let runNumber = 0;
    assert.ok(
      await waitFor(async () => {
        const r = await api<{ workflow_runs: { run_number: number }[] }>(
          'GET',
          '/repos/alice/tool/actions/runs',
        );
        runNumber = r.body.workflow_runs?.[0]?.run_number ?? 0;
        return runNumber > 0;
      }),
      'the push made a run',
    );
    // A project board (there is no API for projects: its form, as a browser posts it).
    const w = new WebClient(s.url);
    await w.signIn('alice', alice.password);
    await w.get('/alice/tool/projects/new');
    const project = await w.post('/alice/tool/projects/new', {
      title: 'Roadmap',
      content: '',
      template_type: '1',
    });
    assert.equal(project.status, 303, project.text);
    const board = /\/alice\/tool\/projects\/\d+$/.exec(project.location ?? '')?.[0];
    assert.ok(board, `the project's address (${project.location})`);

    for (const [name, p] of [
      ['labels', '/alice/tool/labels'],
      ['milestones', '/alice/tool/milestones'],
      ['releases', '/alice/tool/releases'],
      ['wiki', '/alice/tool/wiki'],
      ['editor-new', '/alice/tool/_new/main/src'],
      ['editor-upload', '/alice/tool/_upload/main/src'],
      ['actions', '/alice/tool/actions'],
      ['actions-run', `/alice/tool/actions/runs/${runNumber}`],
      ['project-board', board],
      ['activity', '/alice/tool/activity'],
      ['contributors', '/alice/tool/activity/contributors'],
      ['graph', '/alice/tool/graph'],
      ['branches', '/alice/tool/branches'],
    ] as const) {
      const res = await page.goto(`${s.url}${p}`);
      assert.equal(res?.status(), 200, p);
      await check(name);
    }
    assert.deepEqual(errors, [], 'no script errors or CSP refusals in the console');
  });
});
