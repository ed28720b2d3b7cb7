// The web editor (/{o}/{r}/_new|_edit|_delete/{branch}/{path}) through the form client: a file
// created, edited and deleted with Forgejo's commit form, a commit to a new branch sent on to the
// compare page, bad input (a path with "..", an existing file, a stale last_commit, a bad branch
// name) answered 422 with the field named, a protected branch refused with the rule's message,
// readers without the buttons and refused, and CSRF; files uploaded into a directory (added or
// replacing, binary kept byte for byte), refused without files, with a bad directory, over quota.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

type User = { name: string; password: string; token: string; id: number };

describe('web: the file editor', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let a: WebClient;

  const raw = async (p: string) => (await fetch(`${s.url}/alice/proj/raw/branch/${p}`, {})).text();
  const head = async (branch = 'main') => {
    const r = await s.api<{ commit: { id: string } }>('GET', `/repos/alice/proj/branches/${branch}`, {
      token: alice.token,
    });
    return r.body.commit.id;
  };

  before(async () => {
    s = await startServer({ ANVIL__QUOTA__ENABLED: 'true' });
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

  it('creates, edits and deletes a file with direct commits', async () => {
    const form = await a.get('/alice/proj/_new/main/docs');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="tree_path" [^>]*value="docs\/"/);
    let r = await a.post('/alice/proj/_new/main/docs', {
      tree_path: 'docs/guide.md',
      content: 'line one\r\nline two\r\n',
      commit_summary: 'Add the guide',
      commit_message: 'With two lines.',
      commit_choice: 'direct',
      last_commit: await head(),
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/src/branch/main/docs/guide.md');
    assert.equal(await raw('main/docs/guide.md'), 'line one\nline two\n');
    const commits = await s.api<{ commit: { message: string } }[]>(
      'GET',
      '/repos/alice/proj/commits?limit=1',
      {
        token: alice.token,
      },
    );
    assert.equal(commits.body[0]!.commit.message.trim(), 'Add the guide\n\nWith two lines.');

    const view = await a.get('/alice/proj/src/branch/main/docs/guide.md');
    assert.match(view.text, /href="\/alice\/proj\/_edit\/main\/docs\/guide.md"/);
    assert.match(view.text, /href="\/alice\/proj\/_delete\/main\/docs\/guide.md"/);
    const tree = await a.get('/alice/proj/src/branch/main/docs');
    assert.match(tree.text, /href="\/alice\/proj\/_new\/main\/docs"/);

    const edit = await a.get('/alice/proj/_edit/main/docs/guide.md');
    assert.equal(edit.status, 200);
    assert.match(edit.text, /line one\nline two/);
    const last = /name="last_commit" value="([0-9a-f]+)"/.exec(edit.text)![1]!;
    r = await a.post('/alice/proj/_edit/main/docs/guide.md', {
      content: 'changed\n',
      commit_summary: '',
      commit_choice: 'direct',
      last_commit: last,
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(await raw('main/docs/guide.md'), 'changed\n');

    // The editor page from before the change is stale now.
    r = await a.post('/alice/proj/_edit/main/docs/guide.md', {
      content: 'again\n',
      commit_choice: 'direct',
      last_commit: last,
    });
    assert.equal(r.status, 422);
    assert.match(r.text, /has changed since you opened this page/);

    await a.get('/alice/proj/_delete/main/docs/guide.md');
    r = await a.post('/alice/proj/_delete/main/docs/guide.md', {
      commit_choice: 'direct',
      last_commit: await head(),
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/src/branch/main/docs');
    const gone = await fetch(`${s.url}/alice/proj/raw/branch/main/docs/guide.md`);
    assert.equal(gone.status, 404);
  });

  it('commits to a new branch and goes on to the compare page', async () => {
    await a.get('/alice/proj/_edit/main/README.md');
    const r = await a.post('/alice/proj/_edit/main/README.md', {
      content: '# proj\n\nBetter words.\n',
      commit_summary: 'Improve the README',
      commit_choice: 'commit-to-new-branch',
      new_branch_name: 'better-readme',
      last_commit: await head(),
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/compare/main...better-readme');
    assert.match(await raw('better-readme/README.md'), /Better words/);
    assert.doesNotMatch(await raw('main/README.md'), /Better words/);
  });

  it('answers bad input with the field named', async () => {
    await a.get('/alice/proj/_new/main');
    const base = { content: 'x\n', commit_choice: 'direct', last_commit: await head() };
    let r = await a.post('/alice/proj/_new/main', { ...base, tree_path: '../escape.txt' });
    assert.equal(r.status, 422);
    assert.match(r.text, /class="field invalid"[\s\S]*name="tree_path"/);
    assert.match(r.text, /not valid/);
    r = await a.post('/alice/proj/_new/main', { ...base, tree_path: 'README.md' });
    assert.equal(r.status, 422);
    assert.match(r.text, /repository file already exists/);
    r = await a.post('/alice/proj/_new/main', {
      ...base,
      tree_path: 'new.txt',
      commit_choice: 'commit-to-new-branch',
      new_branch_name: 'bad..name',
    });
    assert.equal(r.status, 422);
    assert.match(r.text, /class="field invalid"[\s\S]*name="new_branch_name"/);
    r = await a.post('/alice/proj/_new/main', {
      ...base,
      tree_path: 'new.txt',
      commit_choice: 'commit-to-new-branch',
      new_branch_name: 'better-readme',
    });
    assert.equal(r.status, 422);
    assert.match(r.text, /branch already exists/);
    assert.equal((await a.get('/alice/proj/_edit/main/missing.txt')).status, 404);
    assert.equal((await a.get('/alice/proj/_edit/nobranch/README.md')).status, 404);
  });

  it('refuses a commit to a protected branch with the rule’s message', async () => {
    const p = await s.api('POST', '/repos/alice/proj/branch_protections', {
      token: alice.token,
      body: { rule_name: 'main', enable_push: false },
    });
    assert.equal(p.status, 201, p.text);
    await a.get('/alice/proj/_edit/main/README.md');
    const r = await a.post('/alice/proj/_edit/main/README.md', {
      content: 'nope\n',
      commit_choice: 'direct',
      last_commit: await head(),
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.text, /role="alert"[^<]*[^<]*protected/i);
    assert.doesNotMatch(await raw('main/README.md'), /nope/);
    const del = await s.api('DELETE', '/repos/alice/proj/branch_protections/main', { token: alice.token });
    assert.equal(del.status, 204);
  });

  it('keeps readers out and checks CSRF', async () => {
    const b = new WebClient(s.url);
    await b.signIn(bob.name, bob.password);
    const view = await b.get('/alice/proj/src/branch/main/README.md');
    assert.equal(view.status, 200);
    assert.doesNotMatch(view.text, /_edit\//);
    assert.equal((await b.get('/alice/proj/_edit/main/README.md')).status, 403);
    const r = await b.post('/alice/proj/_new/main', {
      tree_path: 'x.txt',
      content: 'x',
      commit_choice: 'direct',
    });
    assert.equal(r.status, 403);
    assert.doesNotMatch(await raw('main/x.txt'), /^x$/);

    const anon = new WebClient(s.url);
    const g = await anon.get('/alice/proj/_new/main');
    assert.equal(g.status, 303);

    await a.get('/alice/proj/_new/main');
    const c = await a.post('/alice/proj/_new/main', {
      _csrf: 'wrong',
      tree_path: 'csrf.txt',
      content: 'x',
      commit_choice: 'direct',
    });
    assert.equal(c.status, 403);
    assert.equal((await fetch(`${s.url}/alice/proj/raw/branch/main/csrf.txt`)).status, 404);
  });

  it('uploads files into a directory in one commit, replacing a file of the same name', async () => {
    const page = await a.get('/alice/proj/_upload/main/docs');
    assert.equal(page.status, 200);
    assert.match(page.text, /enctype="multipart\/form-data"/);
    assert.match(page.text, /<input id="f-files" type="file" name="files" multiple/);
    assert.match((await a.get('/alice/proj/src/branch/main')).text, /href="\/alice\/proj\/_upload\/main\/"/);
    const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);
    const form = new FormData();
    form.append('tree_path', 'docs');
    form.append('files', new Blob(['alpha\n']), 'a.txt');
    form.append('files', new Blob([binary]), 'logo.bin');
    form.append('commit_choice', 'direct');
    const before = await head();
    const r = await a.postMultipart('/alice/proj/_upload/main/docs', form);
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/proj/src/branch/main/docs');
    assert.equal(await raw('main/docs/a.txt'), 'alpha\n');
    const bin = await fetch(`${s.url}/alice/proj/raw/branch/main/docs/logo.bin`);
    assert.ok(Buffer.from(await bin.arrayBuffer()).equals(binary), 'binary bytes kept');
    const commit = await s.api<{ parents: Array<{ sha: string }>; commit: { message: string } }>(
      'GET',
      `/repos/alice/proj/git/commits/${await head()}`,
      { token: alice.token },
    );
    assert.equal(commit.body.parents[0]?.sha, before, 'one commit for both files');
    assert.match(commit.body.commit.message, /^Upload files to 'docs'/);

    // A file of the same name is replaced.
    await a.get('/alice/proj/_upload/main/docs');
    const again = new FormData();
    again.append('tree_path', 'docs');
    again.append('files', new Blob(['beta\n']), 'a.txt');
    again.append('commit_summary', 'New alpha');
    assert.equal((await a.postMultipart('/alice/proj/_upload/main/docs', again)).status, 303);
    assert.equal(await raw('main/docs/a.txt'), 'beta\n');
  });

  it('refuses an upload without files, into a bad directory, from a reader, without CSRF, over quota', async () => {
    await a.get('/alice/proj/_upload/main');
    const none = new FormData();
    none.append('tree_path', '');
    let r = await a.postMultipart('/alice/proj/_upload/main', none);
    assert.equal(r.status, 422);
    assert.match(r.text, /id="f-files-error"[^>]*>Choose at least one file/);
    const bad = new FormData();
    bad.append('tree_path', '../up');
    bad.append('files', new Blob(['x']), 'x.txt');
    r = await a.postMultipart('/alice/proj/_upload/main', bad);
    assert.equal(r.status, 422);
    assert.match(r.text, /id="f-tree_path-error"/);
    assert.equal((await fetch(`${s.url}/alice/proj/raw/branch/main/x.txt`)).status, 404);

    const forged = new FormData();
    forged.append('_csrf', 'forged');
    forged.append('files', new Blob(['x']), 'forged.txt');
    assert.equal((await a.postMultipart('/alice/proj/_upload/main', forged)).status, 403);
    const b = new WebClient(s.url);
    await b.signIn(bob.name, bob.password);
    assert.equal((await b.get('/alice/proj/_upload/main')).status, 403);
    const theirs = new FormData();
    theirs.append('files', new Blob(['x']), 'bob.txt');
    assert.equal((await b.postMultipart('/alice/proj/_upload/main', theirs)).status, 403);
    for (const f of ['forged.txt', 'bob.txt'])
      assert.equal((await fetch(`${s.url}/alice/proj/raw/branch/main/${f}`)).status, 404);

    // Over quota: the commit is refused with the quota's message, nothing written.
    const carl = await s.createUser('carl');
    assert.equal(
      (await s.api('POST', '/user/repos', { token: carl.token, body: { name: 'small', auto_init: true } }))
        .status,
      201,
    );
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'editor-tiny', limit: 10, subjects: ['size:repos:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'editor-tiny', rules: [{ name: 'editor-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/editor-tiny/users/carl', { token: s.admin.token });
    const c = new WebClient(s.url);
    await c.signIn(carl.name, carl.password);
    await c.get('/carl/small/_upload/main');
    const big = new FormData();
    big.append('files', new Blob(['more bytes than the quota allows']), 'big.txt');
    r = await c.postMultipart('/carl/small/_upload/main', big);
    assert.equal(r.status, 422, r.text);
    assert.match(r.text, /quota/i);
    assert.equal((await fetch(`${s.url}/carl/small/raw/branch/main/big.txt`)).status, 404);
  });
});
