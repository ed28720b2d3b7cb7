// Writing the wiki from the web interface at Forgejo's addresses and field names (title, content,
// message): the start page, a new page (?action=_new and /wiki/_new), bad input kept beside its
// field (422), an edit with a stale version refused (409) and a Forgejo form without it saved, the
// _Sidebar and _Footer around every page, a page's history (?action=_revision) and a revision
// (/wiki/commit/{sha}), names that cannot leave the wiki, deletion, readers refused, anonymous
// visitors sent to sign in, a wiki turned off answering 404, CSRF, valid HTML; then the whole in
// Chromium with the preview.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HtmlValidate } from 'html-validate';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

type User = { name: string; password: string; token: string };

const validator = new HtmlValidate({
  extends: ['html-validate:recommended'],
  rules: { 'doctype-style': 'off', 'void-style': 'off', 'no-inline-style': 'off', 'long-title': 'off' },
});

describe('web interface: writing the wiki', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let a: WebClient;
  let b: WebClient;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const name of ['proj', 'off']) {
      const r = await s.api('POST', '/user/repos', { token: alice.token, body: { name, auto_init: true } });
      assert.equal(r.status, 201, r.text);
    }
    const off = await s.api('PATCH', '/repos/alice/off', { token: alice.token, body: { has_wiki: false } });
    assert.equal(off.status, 200, off.text);
    a = new WebClient(s.url);
    await a.signIn(alice.name, alice.password);
    b = new WebClient(s.url);
    await b.signIn(bob.name, bob.password);
  });
  after(async () => s.close());

  const content = async (page: string) => {
    const r = await s.api<{ content_base64: string }>('GET', `/repos/alice/proj/wiki/page/${page}`, {
      token: alice.token,
    });
    return r.status === 200 ? Buffer.from(r.body.content_base64, 'base64').toString('utf8') : r.status;
  };
  const valid = async (web: WebClient, p: string) => {
    const r = await web.get(p);
    assert.equal(r.status, 200, `${p}: ${r.status}`);
    const report = await validator.validateString(r.text, p);
    const problems = report.results.flatMap((x) => x.messages).map((m) => `${p} ${m.ruleId}: ${m.message}`);
    assert.deepEqual(problems, []);
    return r;
  };

  it('creates, edits, shows history and deletes pages with the forms', async () => {
    const start = await a.get('/alice/proj/wiki');
    assert.equal(start.status, 200);
    assert.match(start.text, /href="\/alice\/proj\/wiki\/\?action=_new&amp;title=Home"/);
    assert.doesNotMatch((await b.get('/alice/proj/wiki')).text, /action=_new/);

    const form = await valid(a, '/alice/proj/wiki/?action=_new');
    assert.match(form.text, /name="title" [^>]*value="Home"/);
    assert.match(form.text, /name="content"/);
    assert.match(form.text, /name="message"/);
    assert.match(form.text, /action="\/alice\/proj\/wiki\/\?action=_new"/);
    assert.equal((await a.get('/alice/proj/wiki/_new')).status, 200);

    // Bad input: back beside its field, what was typed kept.
    const noTitle = await a.post('/alice/proj/wiki/?action=_new', { title: ' ', content: 'Kept text' });
    assert.equal(noTitle.status, 422);
    assert.match(noTitle.text, /id="f-title-error"/);
    assert.match(noTitle.text, /Kept text/);
    const noContent = await a.post('/alice/proj/wiki/?action=_new', { title: 'Kept title', content: '' });
    assert.equal(noContent.status, 422);
    assert.match(noContent.text, /id="f-content-error"/);
    assert.match(noContent.text, /value="Kept title"/);
    const reserved = await a.post('/alice/proj/wiki/?action=_new', { title: '_pages', content: 'x' });
    assert.equal(reserved.status, 422);
    assert.match(reserved.text, /id="f-title-error"[^>]*>[^<]*reserved/);

    const home = await a.post('/alice/proj/wiki/?action=_new', { title: 'Home', content: '# Welcome\n' });
    assert.equal(home.status, 303, home.text);
    assert.equal(home.location, '/alice/proj/wiki/Home');
    assert.equal(await content('Home'), '# Welcome\n');
    await a.get('/alice/proj/wiki/_new');
    const dup = await a.post('/alice/proj/wiki/_new', { title: 'Home', content: 'again' });
    assert.equal(dup.status, 422);
    assert.match(dup.text, /id="f-title-error"[^>]*>[^<]*already exists/);

    // An edit, then a save from the stale version refused with the text kept, then Forgejo's form.
    const edit = await valid(a, '/alice/proj/wiki/Home?action=_edit');
    assert.match(edit.text, /# Welcome/);
    const stale = /name="last_commit" value="([0-9a-f]{40})"/.exec(edit.text)![1]!;
    const saved = await a.post('/alice/proj/wiki/Home?action=_edit', {
      title: 'Home',
      content: '# Welcome\n\nSecond version.\n',
      message: 'Say more',
      last_commit: stale,
    });
    assert.equal(saved.status, 303, saved.text);
    assert.equal(saved.location, '/alice/proj/wiki/Home');
    assert.equal(await content('Home'), '# Welcome\n\nSecond version.\n');
    await a.get('/alice/proj/wiki/Home?action=_edit');
    const conflict = await a.post('/alice/proj/wiki/Home?action=_edit', {
      title: 'Home',
      content: 'My late change',
      last_commit: stale,
    });
    assert.equal(conflict.status, 409);
    assert.match(conflict.text, /id="f-content-error"[^>]*>[^<]*changed by someone else/);
    assert.match(conflict.text, /My late change/);
    assert.equal(await content('Home'), '# Welcome\n\nSecond version.\n');
    const forgejoForm = await a.post('/alice/proj/wiki/Home?action=_edit', {
      title: 'Home',
      content: '# Welcome\n\nThird version.\n',
    });
    assert.equal(forgejoForm.status, 303);
    assert.equal(await content('Home'), '# Welcome\n\nThird version.\n');

    // _Sidebar and _Footer beside and under every page; the page list names them all.
    for (const [title, text] of [
      ['_Sidebar', '**Sidebar links**'],
      ['_Footer', 'Footer note'],
    ] as const) {
      await a.get('/alice/proj/wiki/?action=_new');
      const r = await a.post('/alice/proj/wiki/?action=_new', { title, content: text });
      assert.equal(r.status, 303, r.text);
    }
    const view = await valid(a, '/alice/proj/wiki/Home');
    assert.match(view.text, /<aside class="card wiki-sidebar"[^>]*>.*<strong>Sidebar links<\/strong>/s);
    assert.match(view.text, /<footer class="card wiki-footer">.*Footer note/s);
    assert.match(view.text, /href="\/alice\/proj\/wiki\/Home\?action=_edit"/);
    assert.match(view.text, /3 revisions/);
    const pages = await valid(a, '/alice/proj/wiki/?action=_pages');
    for (const p of ['Home', '_Sidebar', '_Footer']) assert.match(pages.text, new RegExp(`wiki/${p}"`));

    // History and one revision with its diff.
    const history = await valid(a, '/alice/proj/wiki/Home?action=_revision');
    const shas = [...history.text.matchAll(/href="\/alice\/proj\/wiki\/commit\/([0-9a-f]{40})"/g)].map(
      (m) => m[1]!,
    );
    assert.equal(shas.length, 3);
    assert.match(history.text, /Say more/);
    const rev = await valid(a, `/alice/proj/wiki/commit/${shas[1]}`);
    assert.match(rev.text, /Say more/);
    assert.match(rev.text, /Second version\./);
    assert.equal((await a.get(`/alice/proj/wiki/commit/${shas[1]!.slice(0, 8)}`)).status, 200);
    assert.equal((await a.get('/alice/proj/wiki/commit/0123456789abcdef')).status, 404);
    assert.equal((await a.get('/alice/proj/wiki/Nope?action=_revision')).status, 404);

    // Names never leave the wiki: a title with dots and slashes is one page at its top.
    await a.get('/alice/proj/wiki/?action=_new');
    const dotted = await a.post('/alice/proj/wiki/?action=_new', {
      title: '../../escape',
      content: 'inside',
    });
    assert.equal(dotted.status, 303, dotted.text);
    assert.equal(dotted.location, '/alice/proj/wiki/..%2F..%2Fescape');
    assert.equal(await content('..%2F..%2Fescape'), 'inside');
    for (const p of ['..%2F..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f%2e%2e%2fconfig', '..%5c..%5cHEAD']) {
      assert.equal((await a.get(`/alice/proj/wiki/${p}`)).status, 404, p);
      assert.equal((await a.get(`/alice/proj/wiki/${p}?action=_edit`)).status, 404, p);
    }
    const list = await s.api<Array<{ title: string }>>('GET', '/repos/alice/proj/wiki/pages', {
      token: alice.token,
    });
    assert.deepEqual(list.body.map((p) => p.title).sort(), ['../../escape', 'Home', '_Footer', '_Sidebar']);

    // A reader sees, without the buttons, and is refused every form.
    const readerView = await b.get('/alice/proj/wiki/Home');
    assert.equal(readerView.status, 200);
    assert.doesNotMatch(readerView.text, /action=_edit|action=_delete|action=_new/);
    assert.equal((await b.get('/alice/proj/wiki/Home?action=_revision')).status, 200);
    assert.equal((await b.get('/alice/proj/wiki/?action=_new')).status, 403);
    assert.equal((await b.get('/alice/proj/wiki/Home?action=_edit')).status, 403);
    for (const [p, form] of [
      ['/alice/proj/wiki/?action=_new', { title: 'Evil', content: 'x' }],
      ['/alice/proj/wiki/Home?action=_edit', { title: 'Home', content: 'x' }],
      ['/alice/proj/wiki/Home?action=_delete', {}],
    ] as const) {
      assert.equal((await b.post(p, form)).status, 403, p);
    }
    assert.equal(await content('Home'), '# Welcome\n\nThird version.\n');

    // An anonymous visitor reads and is sent to sign in for the forms.
    const anon = new WebClient(s.url);
    assert.equal((await anon.get('/alice/proj/wiki/Home')).status, 200);
    const signIn = await anon.get('/alice/proj/wiki/?action=_new');
    assert.equal(signIn.status, 303);
    assert.match(
      signIn.location ?? '',
      /^\/user\/login\?redirect_to=%2Falice%2Fproj%2Fwiki%2F%3Faction%3D_new/,
    );
    const anonPost = await anon.post('/alice/proj/wiki/Home?action=_delete', {});
    assert.equal(anonPost.status, 303);
    assert.match(anonPost.location ?? '', /^\/user\/login/);

    // A wiki turned off is not there, for its owner too.
    assert.equal((await a.get('/alice/off/wiki')).status, 404);
    assert.equal((await a.get('/alice/off/wiki/?action=_new')).status, 404);
    assert.equal((await a.post('/alice/off/wiki/?action=_new', { title: 'X', content: 'x' })).status, 404);

    // Deleting: refused without the CSRF token, done with it.
    await a.get('/alice/proj/wiki/Home');
    const noCsrf = await a.post('/alice/proj/wiki/..%2F..%2Fescape?action=_delete', { _csrf: null });
    assert.equal(noCsrf.status, 403);
    assert.equal(await content('..%2F..%2Fescape'), 'inside');
    const deleted = await a.post('/alice/proj/wiki/..%2F..%2Fescape?action=_delete', {});
    assert.equal(deleted.status, 303, deleted.text);
    assert.equal(deleted.location, '/alice/proj/wiki/');
    assert.equal(await content('..%2F..%2Fescape'), 404);
    assert.equal((await a.post('/alice/proj/wiki/Nope?action=_delete', {})).status, 404);
  });

  it('writes a page in Chromium: preview, history, a revision, a sidebar, deletion', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', 'alice');
      await page.fill('#f-password', alice.password);
      await page.click('main button[type=submit]');
      await page.waitForURL((u) => !u.pathname.startsWith('/user/login'));

      await page.goto(`${s.url}/alice/proj/wiki/?action=_pages`);
      await page.click('main a:text-is("New page")');
      await page.fill('#f-title', 'Getting started');
      await page.fill('#f-content', '## Install\n\nRun `make`.\n');
      await page.click('main button[type=submit]');
      await page.waitForURL(/\/wiki\/Getting-started$/);

      await page.click('main a:text-is("Edit")');
      await page.fill('#f-content', '## Install\n\nRun `make install` as **root**.\n');
      await page.fill('#f-message', 'Explain the install');
      await page.click('button[data-preview="f-content"]');
      await page.waitForSelector('#f-content-preview strong');
      assert.equal(await page.textContent('#f-content-preview strong'), 'root');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'web-wiki-edit');
      await page.click('main button[type=submit]');
      await page.waitForURL(/\/wiki\/Getting-started$/);

      await page.click('main a:text-is("Edit sidebar")');
      await page.fill('#f-content', '### Contents\n\n- [[Home]]\n- [[Getting started]]\n');
      await page.click('main button[type=submit]');
      await page.waitForURL(/\/wiki\/_Sidebar$/);
      await page.goto(`${s.url}/alice/proj/wiki/Getting-started`);
      assert.match((await page.textContent('aside.wiki-sidebar')) ?? '', /Contents/);
      assert.equal(
        await page.getAttribute('aside.wiki-sidebar a:text-is("Getting started")', 'href'),
        '/alice/proj/wiki/Getting-started',
      );
      assert.match((await page.textContent('.wiki-page')) ?? '', /make install/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'web-wiki-page');

      await page.click('text=2 revisions');
      await page.waitForURL(/action=_revision/);
      assert.match((await page.textContent('main')) ?? '', /Explain the install/);
      await page.click('.wiki-revisions li:first-child a.sha');
      await page.waitForURL(/\/wiki\/commit\/[0-9a-f]{40}$/);
      assert.match((await page.textContent('main')) ?? '', /make install/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'web-wiki-revision');

      await page.goto(`${s.url}/alice/proj/wiki/Getting-started`);
      await page.click('main button:text-is("Delete")');
      await page.waitForURL(/\/wiki\/$/);
      assert.equal(await content('Getting-started'), 404);
    } finally {
      await browser.close();
    }
  });
});
