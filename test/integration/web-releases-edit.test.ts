// Editing releases from the web interface at Forgejo's addresses and field names, over HTTP with
// multipart forms: a draft with an asset (its tag not created, the draft hidden from a reader),
// published later from the edit form with its tag made from the target, bad input kept beside its
// field, assets renamed, added and deleted, downloads counted, a reader refused, an anonymous
// visitor sent to sign in, a form without its CSRF token refused. Then in Chromium: a release
// created with an asset, edited, its asset downloaded, and deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

interface ReleaseJson {
  id: number;
  tag_name: string;
  name: string;
  body: string;
  draft: boolean;
  prerelease: boolean;
  assets: Array<{ name: string; size: number; uuid: string; download_count: number }>;
}

const file = (text: string, name: string) => new File([text], name, { type: 'application/octet-stream' });

describe('web interface: editing releases, drafts and assets', () => {
  let s: TestServer;
  let browser: Browser;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  let a: WebClient;
  let b: WebClient;

  before(async () => {
    [s, browser] = await Promise.all([startServer(), launchBrowser()]);
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  const releases = async (token = alice.token) =>
    (await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases', { token })).body;

  it('saves a draft with an asset, publishes it from the edit form, manages its assets', async () => {
    await a.get('/alice/proj/releases/new');
    const form = new FormData();
    form.append('tag_name', 'v0.9');
    form.append('tag_target', 'main');
    form.append('title', 'Beta');
    form.append('content', 'First *beta*');
    form.append('files', file('hello notes', 'notes.txt'));
    form.append('draft', '1');
    const draft = await a.postMultipart('/alice/proj/releases/new', form);
    assert.equal(draft.status, 303, draft.text);
    const [d] = await releases();
    assert.equal(d?.draft, true);
    assert.deepEqual(
      d?.assets.map((x) => [x.name, x.size]),
      [['notes.txt', 11]],
    );
    assert.equal((await s.api('GET', '/repos/alice/proj/tags/v0.9', { token: alice.token })).status, 404);

    // Drafts are for writers: bob reads the repository but sees no draft, and may not edit.
    assert.equal((await releases(bob.token)).length, 0);
    const bobList = await b.get('/alice/proj/releases');
    assert.equal(bobList.status, 200);
    assert.doesNotMatch(bobList.text, /Beta|releases\/edit/);
    const bobEdit = await b.get('/alice/proj/releases/edit/v0.9');
    assert.ok([403, 404].includes(bobEdit.status), String(bobEdit.status));
    const bobPost = await b.post('/alice/proj/releases/edit/v0.9', { title: 'evil' });
    assert.ok([403, 404].includes(bobPost.status), String(bobPost.status));
    // An anonymous visitor is sent to sign in.
    const anon = new WebClient(s.url);
    const anonForm = await anon.get('/alice/proj/releases/edit/v0.9');
    assert.equal(anonForm.status, 303);
    assert.match(anonForm.location ?? '', /^\/user\/login\?redirect_to=/);

    const list = await a.get('/alice/proj/releases');
    assert.match(list.text, /class="pill release-draft">Draft</);
    assert.match(list.text, /notes\.txt<\/a><span class="muted asset-info">11 B · 0 downloads/);
    assert.match(list.text, /href="\/alice\/proj\/releases\/edit\/v0\.9"/);

    const edit = await a.get('/alice/proj/releases/edit/v0.9');
    assert.equal(edit.status, 200);
    const uuid = d!.assets[0]!.uuid;
    assert.match(edit.text, new RegExp(`name="attachment-edit-${uuid}" value="notes.txt"`));
    assert.match(edit.text, /enctype="multipart\/form-data"/);

    // Bad input is kept, its field named.
    const bad = new FormData();
    bad.append('tag_name', 'v0.9');
    bad.append('tag_target', 'no-such-branch');
    bad.append('title', 'Kept title');
    const badReply = await a.postMultipart('/alice/proj/releases/edit/v0.9', bad);
    assert.equal(badReply.status, 422);
    assert.match(badReply.text, /id="f-tag_target-error"/);
    assert.match(badReply.text, /value="Kept title"/);
    assert.equal((await releases())[0]?.draft, true);
    const noTitle = await a.post('/alice/proj/releases/edit/v0.9', {
      tag_name: 'v0.9',
      title: ' ',
      content: 'Kept',
    });
    assert.equal(noTitle.status, 422);
    assert.match(noTitle.text, /id="f-title-error"/);
    assert.match(noTitle.text, />Kept<\/textarea>/);
    const badTag = await a.post('/alice/proj/releases/new', { tag_name: 'bad..tag', title: 'T' });
    assert.equal(badTag.status, 422);
    assert.match(badTag.text, /id="f-tag_name-error"/);
    const noCsrf = await a.post('/alice/proj/releases/edit/v0.9', { title: 'x', _csrf: 'wrong' });
    assert.equal(noCsrf.status, 403);

    // Published from the edit form: its tag made at the target, the asset renamed, one added.
    await a.get('/alice/proj/releases/edit/v0.9');
    const publish = new FormData();
    publish.append('tag_name', 'v0.9');
    publish.append('tag_target', 'main');
    publish.append('title', 'Beta 1');
    publish.append('content', 'Notes, edited');
    publish.append('prerelease', 'on');
    publish.append(`attachment-edit-${uuid}`, 'readme.txt');
    publish.append('files', file('\u0000binary', 'app.bin'));
    const published = await a.postMultipart('/alice/proj/releases/edit/v0.9', publish);
    assert.equal(published.status, 303, published.text);
    let [r] = await releases();
    assert.equal(r?.draft, false);
    assert.equal(r?.prerelease, true);
    assert.equal(r?.name, 'Beta 1');
    assert.equal(r?.body, 'Notes, edited');
    assert.deepEqual(r?.assets.map((x) => x.name).sort(), ['app.bin', 'readme.txt']);
    assert.equal((await s.api('GET', '/repos/alice/proj/tags/v0.9', { token: alice.token })).status, 200);
    assert.equal((await releases(bob.token)).length, 1);

    // The asset downloaded by name, and counted.
    const dl = await b.get('/alice/proj/releases/download/v0.9/readme.txt');
    assert.equal(dl.status, 302);
    const body = await fetch(dl.location!);
    assert.equal(await body.text(), 'hello notes');
    const bobView = await b.get('/alice/proj/releases');
    assert.match(bobView.text, /release-pre">Pre-release</);
    assert.match(bobView.text, /readme\.txt<\/a><span class="muted asset-info">11 B · 1 download</);
    assert.doesNotMatch(bobView.text, /releases\/edit/);

    // A published release keeps its tag; an asset deleted from the form.
    await a.get('/alice/proj/releases/edit/v0.9');
    const bin = r!.assets.find((x) => x.name === 'app.bin')!;
    const del = new FormData();
    del.append('tag_name', 'renamed');
    del.append('title', 'Beta 1');
    del.append('prerelease', 'on');
    del.append(`attachment-del-${bin.uuid}`, 'true');
    const deleted = await a.postMultipart('/alice/proj/releases/edit/v0.9', del);
    assert.equal(deleted.status, 303, deleted.text);
    [r] = await releases();
    assert.equal(r?.tag_name, 'v0.9');
    assert.equal(r?.body, '', 'the content emptied in the form empties the notes');
    assert.deepEqual(
      r?.assets.map((x) => x.name),
      ['readme.txt'],
    );
  });

  it('creates, edits, downloads and deletes a release in Chromium', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', alice.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.goto(`${s.url}/alice/proj/releases`);
    await page.click('text=New release');
    await page.fill('#f-tag_name', 'v1.0');
    await page.fill('#f-title', 'Version 1.0');
    await page.fill('#f-content', '## Highlights\n\n- Fast\n- **Small**');
    await page.click('[data-preview="f-content"]');
    await page.waitForSelector('#f-content-preview h2');
    await page.setInputFiles('#f-files', {
      name: 'anvil-linux-amd64.tar.gz',
      mimeType: 'application/gzip',
      buffer: Buffer.from('x'.repeat(2048)),
    });
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'release-new');
    await page.click('button.primary');
    await page.waitForURL(`${s.url}/alice/proj/releases`);
    assert.match((await page.textContent('main')) ?? '', /anvil-linux-amd64\.tar\.gz\s*2 KiB · 0 downloads/);

    await page.click(
      '#release-' + String((await releases()).find((x) => x.tag_name === 'v1.0')!.id) + ' a.release-edit',
    );
    await page.waitForURL(`${s.url}/alice/proj/releases/edit/v1.0`);
    await page.fill('#f-title', 'Version 1.0.0');
    await page.check('#f-prerelease');
    await page.click('button.primary');
    await page.waitForURL(`${s.url}/alice/proj/releases`);
    assert.match((await page.textContent('main')) ?? '', /Version 1\.0\.0/);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('text=anvil-linux-amd64.tar.gz'),
    ]);
    const saved = await download.path();
    assert.ok(saved);
    const { readFile } = await import('node:fs/promises');
    assert.equal((await readFile(saved)).length, 2048);
    await page.reload();
    assert.match((await page.textContent('main')) ?? '', /2 KiB · 1 download(?!s)/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'releases');

    await page.click(
      '#release-' + String((await releases()).find((x) => x.tag_name === 'v1.0')!.id) + ' a.release-edit',
    );
    await page.waitForURL(`${s.url}/alice/proj/releases/edit/v1.0`);
    assert.equal(await page.inputValue('#f-title'), 'Version 1.0.0');
    assert.ok(await page.isChecked('#f-prerelease'));
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'release-edit');
    await page.click('.release-danger button.danger');
    await page.waitForURL(`${s.url}/alice/proj/releases`);
    assert.match((await page.textContent('main')) ?? '', /The release Version 1\.0\.0 has been deleted/);
    assert.equal(await page.locator('article.release').count(), 1);
    assert.deepEqual(
      (await releases()).map((x) => x.tag_name),
      ['v0.9'],
    );
    assert.deepEqual(errors, []);
    await context.close();
  });
});
