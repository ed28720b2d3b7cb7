// The packages web pages with a browser-like client: an owner's list (type filter, search), a
// version's page with its install commands and files, a private owner's packages hidden from
// others, and deleting a version refused to others and without the CSRF token.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

describe('web interface: packages', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  let a: WebClient;
  let b: WebClient;
  const put = (owner: string, rest: string, token: string, body: string) =>
    fetch(`${s.url}/api/packages/${owner}/generic/${rest}`, {
      method: 'PUT',
      body,
      headers: { authorization: `token ${token}` },
    });

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.createUser('carol');
    assert.equal((await put('alice', 'tool/1.0.0/tool.bin', alice.token, 'hello tool')).status, 201);
    assert.equal((await put('alice', 'other/2.0.0/o.txt', alice.token, 'x')).status, 201);
    assert.equal((await put('alice', 'tool/1.1.0/tool.bin', alice.token, 'newer tool')).status, 201);
    for (const name of ['app', 'site'])
      assert.equal((await s.api('POST', '/user/repos', { token: alice.token, body: { name } })).status, 201);
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
  });
  after(async () => s.close());

  it('lists, filters and shows a version with its install command and files', async () => {
    const list = await new WebClient(s.url).get('/alice/-/packages');
    assert.equal(list.status, 200);
    // One row per package (as Forgejo): its latest version, and a link to all its versions.
    const titles = [...list.text.matchAll(/class="title" href="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(titles, [
      '/alice/-/packages/generic/tool/1.1.0',
      '/alice/-/packages/generic/other/2.0.0',
    ]);
    assert.match(list.text, /Packages of[\s\S]*\(2\)/);
    assert.match(list.text, /<a href="\/alice\/-\/packages\/generic\/tool\/versions">2 versions<\/a>/);
    assert.match(list.text, /<a href="\/alice\/-\/packages\/generic\/other\/versions">1 version<\/a>/);
    assert.doesNotMatch(list.text, /generic\/tool\/1\.0\.0/);
    const searched = await a.get('/alice/-/packages?q=too&type=generic');
    assert.match(searched.text, /generic\/tool\/1\.1\.0/);
    assert.match(searched.text, /\(1\)/);
    assert.doesNotMatch(searched.text, /generic\/other\//);
    const none = await a.get('/alice/-/packages?type=npm');
    assert.match(none.text, /No packages\./);
    const beyond = await a.get('/alice/-/packages?page=2');
    assert.equal(beyond.status, 200);
    assert.match(beyond.text, /No packages\./);
    assert.match(beyond.text, /\(2\)/);

    const page = await a.get('/alice/-/packages/generic/tool/1.0.0');
    assert.equal(page.status, 200);
    assert.match(page.text, /curl -OJ http:\/\/[^<]*\/api\/packages\/alice\/generic\/tool\/1\.0\.0\//);
    assert.match(page.text, /tool\.bin/);
    // sha256 of "hello tool"
    const sha = (await import('node:crypto')).createHash('sha256').update('hello tool').digest('hex');
    assert.match(page.text, new RegExp(sha));
    assert.match(page.text, /Delete this version/);
    assert.doesNotMatch((await b.get('/alice/-/packages/generic/tool/1.0.0')).text, /Delete this version/);
    assert.equal((await a.get('/alice/-/packages/generic/tool/9.9.9')).status, 404);
  });

  it("hides a private owner's packages from others", async () => {
    await s.api('PATCH', '/admin/users/carol', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await b.get('/carol/-/packages')).status, 404);
    assert.equal((await new WebClient(s.url).get('/carol/-/packages')).status, 404);
    assert.equal((await b.get('/carol/-/packages/generic/tool/1.0.0')).status, 404);
    assert.equal((await a.get('/nobody-here/-/packages')).status, 404);
  });

  it('deletes a version for its owner only, with the CSRF token', async () => {
    const url = '/alice/-/packages/generic/other/2.0.0/settings';
    await b.get('/alice/-/packages/generic/other/2.0.0');
    assert.equal((await b.post(url, { action: 'delete' })).status, 403);
    await a.get('/alice/-/packages/generic/other/2.0.0');
    assert.equal((await a.post(url, { action: 'delete', _csrf: null })).status, 403);
    assert.equal((await a.get('/alice/-/packages/generic/other/2.0.0')).status, 200);
    const done = await a.post(url, { action: 'delete' });
    assert.equal(done.status, 303, done.text);
    assert.equal((await a.get('/alice/-/packages/generic/other/2.0.0')).status, 404);
    assert.equal((await a.get('/alice/-/packages/generic/tool/1.0.0')).status, 200);
  });

  it("lists a package's versions, newest first", async () => {
    const page = await new WebClient(s.url).get('/alice/-/packages/generic/tool/versions');
    assert.equal(page.status, 200, page.text);
    const versions = [
      ...page.text.matchAll(/class="title" href="\/alice\/-\/packages\/generic\/tool\/([^"]+)"/g),
    ];
    assert.deepEqual(
      versions.map((m) => m[1]),
      ['1.1.0', '1.0.0'],
    );
    assert.doesNotMatch(page.text, /\/settings"/, 'no settings link for a visitor');
    assert.match(
      (await a.get('/alice/-/packages/generic/tool/versions')).text,
      /href="\/alice\/-\/packages\/generic\/tool\/settings"/,
    );
    assert.equal((await a.get('/alice/-/packages/generic/nothing/versions')).status, 404);
    assert.equal((await b.get('/carol/-/packages/generic/tool/versions')).status, 404);
  });

  it("links a package to one of its owner's repositories, listed on the repository's Packages tab", async () => {
    const settings = '/alice/-/packages/generic/tool/settings';
    assert.equal((await b.get(settings)).status, 403);
    assert.equal((await new WebClient(s.url).get(settings)).status, 303, 'a visitor signs in first');
    const form = await a.get(settings);
    assert.equal(form.status, 200);
    const id = /<option value="(\d+)">app<\/option>/.exec(form.text)?.[1];
    assert.ok(id, "the owner's repositories to choose from");
    // Refused: another user, a forged form, a repository that is not the owner's.
    await b.get('/alice/-/packages/generic/tool/versions');
    assert.equal((await b.post(settings, { action: 'link', repo_id: id })).status, 403);
    assert.equal((await a.post(settings, { action: 'link', repo_id: id, _csrf: null })).status, 403);
    const bobRepo = await s.api<{ id: number }>('POST', '/user/repos', {
      token: bob.token,
      body: { name: 'theirs' },
    });
    await a.get(settings);
    const wrong = await a.post(settings, { action: 'link', repo_id: String(bobRepo.body.id) });
    assert.equal(wrong.status, 422);
    assert.match(wrong.text, /id="f-repo_id-error"/);
    assert.equal((await a.get('/alice/app/packages')).text.includes('generic/tool/'), false);

    const linked = await a.post(settings, { action: 'link', repo_id: id });
    assert.equal(linked.status, 303, linked.text);
    const tab = await new WebClient(s.url).get('/alice/app/packages');
    assert.equal(tab.status, 200);
    assert.match(tab.text, /href="\/alice\/-\/packages\/generic\/tool\/1\.1\.0"/);
    assert.doesNotMatch(tab.text, /generic\/tool\/1\.0\.0/);
    assert.match(tab.text, /aria-current="page"[^>]*>Packages</);
    assert.doesNotMatch((await a.get('/alice/site/packages')).text, /generic\/tool\//);
    assert.match(
      (await a.get('/alice/-/packages/generic/tool/versions')).text,
      /Linked to <a href="\/alice\/app">/,
    );
    const api = await s.api<{ repository: { full_name: string } | null }>(
      'GET',
      '/packages/alice/generic/tool/1.1.0',
      { token: alice.token },
    );
    assert.equal(api.body.repository?.full_name, 'alice/app');

    await a.get(settings);
    assert.equal((await a.post(settings, { action: 'unlink' })).status, 303);
    assert.doesNotMatch((await a.get('/alice/app/packages')).text, /generic\/tool\//);
    assert.equal((await a.post(settings, { action: 'explode' })).status, 422);
  });
});
