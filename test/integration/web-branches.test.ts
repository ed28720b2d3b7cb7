// The branches and tags pages (/{o}/{r}/branches, /{o}/{r}/tags) through the form client: a branch
// created from a branch, a tag and a commit and deleted; a tag created (lightweight and annotated)
// and deleted; bad names and unknown refs answered 422 with the message beside the field; the
// default and a protected branch not deleted; readers without the forms and refused; CSRF; and
// in Chromium, a branch and an annotated tag made with the forms.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

type User = { name: string; password: string; token: string; id: number };

describe('web: branches and tags', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let a: WebClient;

  const branch = async (name: string) =>
    s.api<{ commit: { id: string } }>('GET', `/repos/alice/proj/branches/${name}`, { token: alice.token });
  const tag = async (name: string) =>
    s.api<{ id: string; commit: { sha: string }; message: string }>('GET', `/repos/alice/proj/tags/${name}`, {
      token: alice.token,
    });

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const r = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', auto_init: true, default_branch: 'main' },
    });
    assert.equal(r.status, 201, r.text);
    a = new WebClient(s.url);
    await a.signIn(alice.name, alice.password);
  });
  after(async () => s.close());

  it('creates branches from a branch, a tag and a commit, and deletes one', async () => {
    const main = (await branch('main')).body.commit.id;
    let page = await a.get('/alice/proj/branches');
    assert.equal(page.status, 200);
    assert.match(page.text, /action="\/alice\/proj\/branches\/_new\/branch\/main"/);
    let r = await a.post('/alice/proj/branches/_new/branch/main', { new_branch_name: 'feature/one' });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/src/branch/feature/one');
    assert.equal((await branch('feature/one')).body.commit.id, main);

    const t = await s.api('POST', '/repos/alice/proj/tags', { token: alice.token, body: { tag_name: 'v1' } });
    assert.equal(t.status, 201, t.text);
    r = await a.post('/alice/proj/branches/_new/tag/v1', { new_branch_name: 'from-tag' });
    assert.equal(r.status, 303, r.text);
    assert.equal((await branch('from-tag')).body.commit.id, main);
    r = await a.post(`/alice/proj/branches/_new/commit/${main}`, { new_branch_name: 'from-commit' });
    assert.equal(r.status, 303, r.text);
    assert.equal((await branch('from-commit')).body.commit.id, main);

    page = await a.get('/alice/proj/branches');
    assert.match(page.text, /feature\/one/);
    assert.match(page.text, /action="\/alice\/proj\/branches\/delete\?name=feature%2Fone"/);
    assert.doesNotMatch(page.text, /branches\/delete\?name=main"/);
    r = await a.post('/alice/proj/branches/delete?name=feature%2Fone', {});
    assert.equal(r.status, 303);
    assert.equal(r.location, '/alice/proj/branches');
    assert.equal((await branch('feature/one')).status, 404);
    page = await a.get('/alice/proj/branches');
    assert.match(page.text, /Branch feature\/one has been deleted/);
  });

  it('answers bad names and unknown refs with the message beside the field', async () => {
    await a.get('/alice/proj/branches');
    let r = await a.post('/alice/proj/branches/_new/branch/main', { new_branch_name: 'bad..name' });
    assert.equal(r.status, 422);
    assert.match(r.text, /invalid branch name \[name: bad\.\.name\]/);
    assert.match(r.text, /name="new_branch_name" [^>]*value="bad\.\.name"/);
    r = await a.post('/alice/proj/branches/_new/branch/main', { new_branch_name: 'from-tag' });
    assert.equal(r.status, 422);
    assert.match(r.text, /The branch already exists/);
    r = await a.post('/alice/proj/branches/_new/branch/nope', { new_branch_name: 'x' });
    assert.equal(r.status, 422);
    assert.match(r.text, /role="alert"[^>]*>[^<]*old branch does not exist/);
    r = await a.post('/alice/proj/branches/_new/branch/main', { new_branch_name: '' });
    assert.equal(r.status, 422);
    assert.match(r.text, /The new branch name is required/);
    assert.equal((await branch('x')).status, 404);

    await a.get('/alice/proj/tags');
    r = await a.post('/alice/proj/tags', { tag_name: 'bad tag', tag_target: 'main', content: '' });
    assert.equal(r.status, 422);
    assert.match(r.text, /invalid tag name/);
    assert.match(r.text, /name="tag_name" [^>]*value="bad tag"/);
    r = await a.post('/alice/proj/tags', { tag_name: 'v9', tag_target: 'nowhere', content: '' });
    assert.equal(r.status, 422);
    assert.match(r.text, /target not found/);
    assert.equal((await tag('v9')).status, 404);
  });

  it('refuses to delete the default or a protected branch', async () => {
    const p = await s.api('POST', '/repos/alice/proj/branch_protections', {
      token: alice.token,
      body: { rule_name: 'from-commit' },
    });
    assert.equal(p.status, 201, p.text);
    await a.get('/alice/proj/branches');
    let r = await a.post('/alice/proj/branches/delete?name=from-commit', {});
    assert.equal(r.status, 303);
    assert.equal((await branch('from-commit')).status, 200);
    let page = await a.get('/alice/proj/branches');
    assert.match(page.text, /from-commit: [^<]*protected/i);
    r = await a.post('/alice/proj/branches/delete?name=main', {});
    assert.equal(r.status, 303);
    page = await a.get('/alice/proj/branches');
    assert.match(page.text, /can not delete default branch/);
    assert.equal((await branch('main')).status, 200);
  });

  it('creates lightweight and annotated tags and deletes one', async () => {
    await a.get('/alice/proj/tags');
    let r = await a.post('/alice/proj/tags', { tag_name: 'v2', tag_target: 'from-tag', content: '' });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/tags');
    const light = await tag('v2');
    assert.equal(light.status, 200);
    assert.equal(light.body.id, light.body.commit.sha);
    r = await a.post('/alice/proj/tags', { tag_name: 'v3', tag_target: '', content: 'Release three' });
    assert.equal(r.status, 303, r.text);
    const annotated = await tag('v3');
    assert.notEqual(annotated.body.id, annotated.body.commit.sha);
    assert.match(annotated.body.message, /Release three/);
    const page = await a.get('/alice/proj/tags');
    assert.match(page.text, /Tag v3 has been created/);
    assert.match(page.text, /action="\/alice\/proj\/tags\/delete\?name=v2"/);
    r = await a.post('/alice/proj/tags/delete?name=v2', {});
    assert.equal(r.status, 303);
    assert.equal((await tag('v2')).status, 404);
  });

  it('keeps readers and strangers out and checks CSRF', async () => {
    const b = new WebClient(s.url);
    await b.signIn(bob.name, bob.password);
    const page = await b.get('/alice/proj/branches');
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /branches\/_new|branches\/delete/);
    assert.doesNotMatch((await b.get('/alice/proj/tags')).text, /tags\/delete|name="tag_name"/);
    assert.equal(
      (await b.post('/alice/proj/branches/_new/branch/main', { new_branch_name: 'bob' })).status,
      403,
    );
    assert.equal((await b.post('/alice/proj/branches/delete?name=from-tag', {})).status, 403);
    assert.equal((await b.post('/alice/proj/tags', { tag_name: 'bob' })).status, 403);
    assert.equal((await b.post('/alice/proj/tags/delete?name=v3', {})).status, 403);
    const anon = new WebClient(s.url);
    await anon.get('/alice/proj/branches');
    const r = await anon.post('/alice/proj/branches/_new/branch/main', { new_branch_name: 'anon' });
    assert.ok([303, 403].includes(r.status), String(r.status));
    assert.equal((await branch('bob')).status, 404);
    assert.equal((await branch('anon')).status, 404);
    assert.equal((await branch('from-tag')).status, 200);
    assert.equal((await tag('v3')).status, 200);

    await a.get('/alice/proj/branches');
    const c = await a.post('/alice/proj/branches/_new/branch/main', {
      _csrf: 'wrong',
      new_branch_name: 'csrf',
    });
    assert.equal(c.status, 403);
    const d = await a.post('/alice/proj/branches/delete?name=from-tag', { _csrf: 'wrong' });
    assert.equal(d.status, 403);
    assert.equal((await branch('csrf')).status, 404);
    assert.equal((await branch('from-tag')).status, 200);
  });
  it('restores a deleted branch at its last commit, for writers only', async () => {
    const made = await s.api('POST', '/repos/alice/proj/branches', {
      token: alice.token,
      body: { new_branch_name: 'gone-soon', old_branch_name: 'main' },
    });
    assert.equal(made.status, 201, made.text);
    const head = (await branch('gone-soon')).body.commit.id;
    // Deleted through the API (as a push would): kept as a deleted branch.
    assert.equal(
      (await s.api('DELETE', '/repos/alice/proj/branches/gone-soon', { token: alice.token })).status,
      204,
    );
    let page = await a.get('/alice/proj/branches');
    assert.match(page.text, /<h3 id="deleted-heading">Deleted branches<\/h3>/);
    assert.match(page.text, /<del class="title">gone-soon<\/del>/);
    const id =
      /name="branch_id" value="(\d+)"[^>]*>\s*<input type="hidden" name="name" value="gone-soon"/.exec(
        page.text,
      )?.[1];
    assert.ok(id, 'a restore form');
    // A reader sees it but cannot restore it; a forged form and a wrong name are refused.
    const b = new WebClient(s.url);
    await b.signIn(bob.name, bob.password);
    const seen = await b.get('/alice/proj/branches');
    assert.match(seen.text, /gone-soon/);
    assert.doesNotMatch(seen.text, /branches\/restore/);
    assert.equal(
      (await b.post('/alice/proj/branches/restore', { branch_id: id, name: 'gone-soon' })).status,
      403,
    );
    assert.equal(
      (await a.post('/alice/proj/branches/restore', { branch_id: id, name: 'gone-soon', _csrf: 'forged' }))
        .status,
      403,
    );
    await a.get('/alice/proj/branches');
    const wrong = await a.post('/alice/proj/branches/restore', { branch_id: id, name: 'other' });
    assert.equal(wrong.status, 303);
    assert.equal((await branch('gone-soon')).status, 404);

    await a.get('/alice/proj/branches');
    const r = await a.post('/alice/proj/branches/restore', { branch_id: id, name: 'gone-soon' });
    assert.equal(r.status, 303);
    const back = await branch('gone-soon');
    assert.equal(back.status, 200);
    assert.equal(back.body.commit.id, head);
    page = await a.get('/alice/proj/branches');
    assert.match(page.text, /Branch gone-soon has been restored/);
    assert.doesNotMatch(page.text, /<del class="title">gone-soon<\/del>/, 'no longer a deleted branch');
  });

  it('creates a branch and a tag with the forms in Chromium', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', 'alice');
      await page.fill('#f-password', alice.password);
      await page.click('main button[type=submit]');
      await page.goto(`${s.url}/alice/proj/branches`);
      await page.fill('#f-new_branch_name', 'in browser');
      await page.click('main button.primary');
      assert.match((await page.textContent('main')) ?? '', /invalid branch name/);
      await page.fill('#f-new_branch_name', 'browser/work');
      await page.click('main button.primary');
      await page.waitForURL(/\/src\/branch\/browser\/work$/);
      await page.goto(`${s.url}/alice/proj/branches`);
      assert.match((await page.textContent('main')) ?? '', /browser\/work/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'web-branches');
      await page.goto(`${s.url}/alice/proj/tags`);
      await page.fill('#f-tag_name', 'v4');
      await page.fill('#f-tag_target', 'browser/work');
      await page.fill('#f-content', 'Made in the browser');
      await page.click('main button.primary');
      await page.waitForURL(/\/tags$/);
      assert.match((await page.textContent('main')) ?? '', /v4/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'web-tags');
      assert.match((await tag('v4')).body.message, /Made in the browser/);
    } finally {
      await browser.close();
    }
  });
});
