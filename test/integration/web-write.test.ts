// Writing from the web interface, over HTTP with a browser-like client: opening an issue with a
// label, commenting, closing and reopening, renaming, setting labels; comparing two branches and
// opening a pull request from the compare page; its commits, files (unified and split), .diff and
// .patch; a review; merging with the merge box. Permission denials (a reader setting labels or
// closing someone else's issue, merging without write access, an outsider on a private
// repository), forms without their CSRF token, and XSS payloads in titles and branch names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

const XSS = '<img src=x onerror=alert(1)>';

describe('web interface: writing issues and pull requests', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  let labelId: number;
  let scopedId: number;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', private: true, auto_init: true },
    });
    const l = await s.api<{ id: number }>('POST', '/repos/alice/proj/labels', {
      token: alice.token,
      body: { name: 'bug', color: '#ee0701' },
    });
    labelId = l.body.id;
    const scoped = await s.api<{ id: number }>('POST', '/repos/alice/proj/labels', {
      token: alice.token,
      body: { name: 'priority/high', color: '#123456', exclusive: true },
    });
    scopedId = scoped.body.id;
  });
  after(async () => s.close());

  it('opens an issue with labels, comments, closes and reopens it, renames it', async () => {
    const c = new WebClient(s.url);
    await c.signIn('alice', alice.password);
    const form = await c.get('/alice/proj/issues/new');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="label" value=/);
    const created = await c.post('/alice/proj/issues/new', {
      title: `Crash ${XSS}`,
      content: 'It **breaks** <script>alert(1)</script>',
      label: String(labelId),
    });
    assert.equal(created.status, 303, created.text);
    assert.match(created.location ?? '', /^\/alice\/proj\/issues\/\d+$/);
    const index = Number(created.location!.split('/').pop());
    const api = await s.api<{ title: string; labels: Array<{ name: string }>; state: string }>(
      'GET',
      `/repos/alice/proj/issues/${index}`,
      { token: alice.token },
    );
    assert.equal(api.body.title, `Crash ${XSS}`);
    assert.deepEqual(
      api.body.labels.map((l) => l.name),
      ['bug'],
    );

    let page = await c.get(created.location!);
    assert.equal(page.status, 200);
    assert.match(page.text, /Crash &lt;img src=x onerror=alert\(1\)>/);
    assert.match(page.text, /<strong>breaks<\/strong>/);
    assert.doesNotMatch(page.text, /<script>alert/);
    assert.match(page.text, /class="pill label-pill"[^>]*>.*bug/);

    const commented = await c.post(`/alice/proj/issues/${index}/comments`, { content: `Seen ${XSS} again` });
    assert.equal(commented.status, 303);
    assert.match(commented.location ?? '', new RegExp(`/alice/proj/issues/${index}#issuecomment-\\d+$`));
    const closed = await c.post(`/alice/proj/issues/${index}/comments`, { content: '', status: 'close' });
    assert.equal(closed.status, 303);
    const state = await s.api<{ state: string; comments: number }>(
      'GET',
      `/repos/alice/proj/issues/${index}`,
      {
        token: alice.token,
      },
    );
    assert.equal(state.body.state, 'closed');
    assert.equal(state.body.comments, 1);
    page = await c.get(`/alice/proj/issues/${index}`);
    assert.match(page.text, /Seen &lt;img src=x onerror=alert\(1\)&gt; again/);
    assert.match(page.text, /closed this/);
    assert.match(page.text, /name="status" value="reopen"/);

    await c.post(`/alice/proj/issues/${index}/comments`, { content: 'Back again', status: 'reopen' });
    assert.equal(
      (await s.api<{ state: string }>('GET', `/repos/alice/proj/issues/${index}`, { token: alice.token }))
        .body.state,
      'open',
    );
    // Reactions toggle; the issue's text and a comment are edited in place.
    await c.get(`/alice/proj/issues/${index}`);
    await c.post(`/alice/proj/issues/${index}/reactions`, { content: '+1', comment_id: '0' });
    const reactions = await s.api<Array<{ content: string }>>(
      'GET',
      `/repos/alice/proj/issues/${index}/reactions`,
      {
        token: alice.token,
      },
    );
    assert.deepEqual(
      reactions.body.map((r) => r.content),
      ['+1'],
    );
    assert.match(
      (await c.get(`/alice/proj/issues/${index}`)).text,
      /aria-pressed="true" aria-label="\+1 reaction: 1"><svg[^>]*>(?:(?!<\/button>).)*<\/svg> 1</,
    );
    await c.post(`/alice/proj/issues/${index}/reactions`, { content: '+1', comment_id: '0' });
    assert.equal(
      (await s.api<unknown[]>('GET', `/repos/alice/proj/issues/${index}/reactions`, { token: alice.token }))
        .body.length,
      0,
    );
    await c.post(`/alice/proj/issues/${index}/reactions`, { content: 'not-an-emoji', comment_id: '0' });
    assert.match(decodeURIComponent(c.cookies.get('anvil_flash') ?? ''), /^error:.*not an allowed reaction/);
    const firstComment = Number(commented.location!.split('#issuecomment-')[1]);
    await c.get(`/alice/proj/issues/${index}`);
    await c.post(`/alice/proj/issues/${index}/reactions`, {
      content: 'heart',
      comment_id: String(firstComment),
    });
    const onComment = await s.api<Array<{ content: string }>>(
      'GET',
      `/repos/alice/proj/issues/comments/${firstComment}/reactions`,
      { token: alice.token },
    );
    assert.deepEqual(
      onComment.body.map((r) => r.content),
      ['heart'],
    );
    await c.post(`/alice/proj/comments/${firstComment}`, { content: 'Seen *twice*' });
    await c.post(`/alice/proj/issues/${index}/content`, { content: 'Edited **body**' });
    page = await c.get(`/alice/proj/issues/${index}`);
    assert.match(page.text, /Seen <em>twice<\/em>/);
    assert.match(page.text, /Edited <strong>body<\/strong>/);

    // Files attached to a comment from the form, listed under it and downloadable.
    const files = new FormData();
    files.set('content', 'Logs attached');
    files.append('files', new Blob([Buffer.from('log line 1\n') as Buffer<ArrayBuffer>]), 'crash.log');
    files.append('files', new Blob([Buffer.from('second') as Buffer<ArrayBuffer>]), `b${XSS}.txt`);
    const uploaded = await c.postMultipart(`/alice/proj/issues/${index}/comments`, files);
    assert.equal(uploaded.status, 303, uploaded.text);
    const attached = await c.get(`/alice/proj/issues/${index}`);
    const link = /<a href="([^"]+)">crash\.log<\/a>/.exec(attached.text);
    assert.ok(link, 'the attachment is listed');
    assert.equal(await (await fetch(link[1]!)).text(), 'log line 1\n');
    assert.match(attached.text, /b&lt;img src=x onerror=alert\(1\)>\.txt/);
    // Without the CSRF token, a multipart form is refused like any other.
    const forgedUpload = new FormData();
    forgedUpload.set('_csrf', 'nope');
    forgedUpload.set('content', 'forged');
    assert.equal((await c.postMultipart(`/alice/proj/issues/${index}/comments`, forgedUpload)).status, 403);

    // The markdown preview: the same sanitizing renderer, behind the CSRF token.
    const preview = await fetch(`${s.url}/-/markup`, {
      method: 'POST',
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'x-csrf-token': c.csrf,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ text: '**bold** <script>alert(1)</script>' }),
    });
    assert.equal(preview.status, 200);
    const html = await preview.text();
    assert.match(html, /<strong>bold<\/strong>/);
    assert.doesNotMatch(html, /<script>/);
    const noToken = await fetch(`${s.url}/-/markup`, {
      method: 'POST',
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'text=x',
    });
    assert.equal(noToken.status, 403);

    await c.post(`/alice/proj/issues/${index}/title`, { title: 'Crash on start' });
    await c.post(`/alice/proj/issues/${index}/labels`, { label: String(scopedId) });
    const after = await s.api<{ title: string; labels: Array<{ name: string }> }>(
      'GET',
      `/repos/alice/proj/issues/${index}`,
      { token: alice.token },
    );
    assert.equal(after.body.title, 'Crash on start');
    assert.deepEqual(
      after.body.labels.map((l) => l.name),
      ['priority/high'],
    );
    page = await c.get(`/alice/proj/issues/${index}`);
    assert.match(page.text, /changed the title from <del>Crash &lt;img/);
    assert.match(page.text, /removed the <span class="pill label-pill"[^>]*>.*?bug<\/span> label/);
    assert.match(page.text, /added the <span class="pill label-pill scoped"/);
    // A scoped label is shown as scope and name.
    assert.match(page.text, /class="pill label-pill scoped"[^>]*>.*<span class="scope">priority<\/span>high/);
    // The list filters by label.
    const byLabel = await c.get('/alice/proj/issues?labels=priority%2Fhigh');
    assert.match(byLabel.text, /Crash on start/);
    assert.doesNotMatch((await c.get('/alice/proj/issues?labels=bug')).text, /Crash on start/);
    assert.match((await c.get('/alice/proj/issues?poster=alice')).text, /Crash on start/);
    assert.doesNotMatch((await c.get('/alice/proj/issues?poster=bob')).text, /Crash on start/);
    assert.equal((await c.get('/alice/proj/issues?poster=nobody-at-all')).status, 200);
    assert.match((await c.get('/alice/proj/labels')).text, /priority/);

    // Milestone and assignees from the sidebar; the milestones page shows the progress.
    const ms = await s.api<{ id: number }>('POST', '/repos/alice/proj/milestones', {
      token: alice.token,
      body: { title: `v1 ${XSS}` },
    });
    await s.api('PUT', '/repos/alice/proj/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
    page = await c.get(`/alice/proj/issues/${index}`);
    assert.match(page.text, /name="milestone"/);
    assert.match(page.text, /name="assignee" value="bob"/);
    await c.post(`/alice/proj/issues/${index}/milestone`, { milestone: String(ms.body.id) });
    await c.post(`/alice/proj/issues/${index}/assignees`, { assignee: 'bob' });
    const meta = await s.api<{
      milestone: { id: number } | null;
      assignees: Array<{ login: string }> | null;
    }>('GET', `/repos/alice/proj/issues/${index}`, { token: alice.token });
    assert.equal(meta.body.milestone?.id, ms.body.id);
    assert.deepEqual(
      meta.body.assignees?.map((u) => u.login),
      ['bob'],
    );
    const milestones = await c.get('/alice/proj/milestones');
    assert.match(milestones.text, /v1 &lt;img src=x onerror=alert\(1\)>/);
    assert.match(milestones.text, /1 open · 0 closed/);
    const msPage = await c.get(`/alice/proj/milestone/${ms.body.id}`);
    assert.equal(msPage.status, 303);
    assert.match((await c.get(msPage.location!)).text, /Crash on start/);
    await c.get(`/alice/proj/issues/${index}`);
    await c.post(`/alice/proj/issues/${index}/milestone`, { milestone: '0' });
    await c.post(`/alice/proj/issues/${index}/assignees`, {});
    const cleared = await s.api<{ milestone: unknown; assignees: unknown[] | null }>(
      'GET',
      `/repos/alice/proj/issues/${index}`,
      { token: alice.token },
    );
    assert.equal(cleared.body.milestone, null);
    assert.deepEqual(cleared.body.assignees ?? [], []);
    await s.api('DELETE', '/repos/alice/proj/collaborators/bob', { token: alice.token });

    // The dashboard's feed shows what happened.
    const dash = await c.get('/');
    assert.match(
      dash.text,
      new RegExp(`opened issue <a href="/alice/proj/issues/${index}">alice/proj#${index}</a>`),
    );
    assert.match(dash.text, /closed issue/);

    // An empty title is refused with the form shown again (422), nothing written.
    const before = await s.api<unknown[]>('GET', '/repos/alice/proj/issues?state=all', {
      token: alice.token,
    });
    await c.get('/alice/proj/issues/new');
    const bad = await c.post('/alice/proj/issues/new', { title: '  ', content: 'x' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /role="alert"/);
    const later = await s.api<unknown[]>('GET', '/repos/alice/proj/issues?state=all', { token: alice.token });
    assert.equal(later.body.length, before.body.length);
  });

  it('refuses readers what only writers may do, forms without CSRF, and outsiders', async () => {
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'Alice owns this' },
    });
    const n = issue.body.number;
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    const page = await b.get(`/alice/proj/issues/${n}`);
    assert.doesNotMatch(page.text, /Apply labels/);
    assert.doesNotMatch(page.text, /name="status"/);
    // Posting anyway is refused with a message, and changes nothing.
    const labels = await b.post(`/alice/proj/issues/${n}/labels`, { label: String(labelId) });
    assert.equal(labels.status, 303);
    assert.match(decodeURIComponent(b.cookies.get('anvil_flash') ?? ''), /^error:/);
    await b.post(`/alice/proj/issues/${n}/assignees`, { assignee: 'bob' });
    assert.match(decodeURIComponent(b.cookies.get('anvil_flash') ?? ''), /^error:.*only writers/);
    await b.post(`/alice/proj/issues/${n}/milestone`, { milestone: '1' });
    assert.match(decodeURIComponent(b.cookies.get('anvil_flash') ?? ''), /^error:.*only writers/);
    const close = await b.post(`/alice/proj/issues/${n}/comments`, { content: '', status: 'close' });
    assert.equal(close.status, 303);
    const now = await s.api<{ state: string; labels: unknown[] }>('GET', `/repos/alice/proj/issues/${n}`, {
      token: alice.token,
    });
    assert.equal(now.body.state, 'open');
    assert.deepEqual(now.body.labels, []);
    // Labels set by a reader on a new issue are ignored, as the API does.
    await b.get('/alice/proj/issues/new');
    const mine = await b.post('/alice/proj/issues/new', { title: 'From bob', label: String(labelId) });
    assert.equal(mine.status, 303);
    const bobs = await s.api<{ labels: unknown[] }>(
      'GET',
      `/repos/alice/proj/issues/${mine.location!.split('/').pop()}`,
      {
        token: alice.token,
      },
    );
    assert.deepEqual(bobs.body.labels, []);
    // Bob may comment.
    await b.get(`/alice/proj/issues/${n}`);
    assert.equal((await b.post(`/alice/proj/issues/${n}/comments`, { content: 'Hello' })).status, 303);
    // Not edit Alice's text.
    await b.get(`/alice/proj/issues/${n}`);
    await b.post(`/alice/proj/issues/${n}/content`, { content: 'Defaced' });
    assert.match(decodeURIComponent(b.cookies.get('anvil_flash') ?? ''), /^error:/);
    assert.notEqual(
      (await s.api<{ body: string }>('GET', `/repos/alice/proj/issues/${n}`, { token: alice.token })).body
        .body,
      'Defaced',
    );

    // Without the CSRF token: 403 and nothing written.
    const forged = await b.post(`/alice/proj/issues/${n}/comments`, { _csrf: null, content: 'forged' });
    assert.equal(forged.status, 403);
    const comments = await s.api<Array<{ body: string }>>('GET', `/repos/alice/proj/issues/${n}/comments`, {
      token: alice.token,
    });
    assert.deepEqual(
      comments.body.map((c) => c.body),
      ['Hello'],
    );

    // Bad addresses and values are 404 pages, never a 500, and write nothing.
    await b.get(`/alice/proj/issues/${n}`);
    for (const [p, form] of [
      ['/alice/proj/issues/abc/comments', { content: 'x' }],
      ['/alice/proj/issues/99999/comments', { content: 'x' }],
      ['/alice/proj/comments/abc', { content: 'x' }],
      ['/alice/proj/comments/99999', { content: 'x' }],
      [`/alice/proj/issues/${n}/reactions`, { content: '+1', comment_id: 'abc' }],
      [`/alice/proj/issues/${n}/reactions`, { content: '+1', comment_id: '99999' }],
      [`/alice/proj/pulls/${n}/merge`, { do: 'merge' }],
      ['/alice/proj/compare/no-dots-here', { title: 'x' }],
      ['/alice/nope/issues/new', { title: 'x' }],
    ] as const) {
      const r = await b.post(p, form);
      assert.equal(r.status, 404, `${p} ${JSON.stringify(form)}: ${r.status}`);
      assert.match(r.text, /Page not found/);
    }
    assert.equal(
      (await s.api<unknown[]>('GET', `/repos/alice/proj/issues/${n}/reactions`, { token: alice.token })).body
        .length,
      0,
    );

    // Signed out: the forms send to sign in.
    const anon = new WebClient(s.url);
    const to = await anon.get('/alice/proj/issues/new');
    assert.equal(to.status, 303);
    assert.match(to.location ?? '', /^\/user\/login\?redirect_to=/);
    // A private repository is 404 to outsiders, for reading and writing.
    assert.equal((await b.get('/alice/secret/issues/new')).status, 404);
    assert.equal((await b.post('/alice/secret/issues/new', { title: 'x' })).status, 404);
    assert.equal((await b.get('/alice/secret/compare/main...main')).status, 404);
  });

  it('compares branches, opens a pull request, reviews and merges it', async () => {
    // A branch name git accepts that would be markup if it were not escaped.
    const branch = 'feat<script>alert(1)<%';
    const enc = encodeURIComponent(branch);
    const file = await s.api('POST', '/repos/alice/proj/contents/lib.txt', {
      token: alice.token,
      body: {
        content: Buffer.from('one\ntwo\nthree\n').toString('base64'),
        message: `Add lib ${XSS}`,
        new_branch: branch,
      },
    });
    assert.equal(file.status, 201, file.text);
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    const cmp = await a.get(`/alice/proj/compare/main...${enc}`);
    assert.equal(cmp.status, 200);
    assert.match(cmp.text, /1 commit</);
    assert.match(cmp.text, /Add lib &lt;img src=x/);
    assert.match(cmp.text, /<td class="code"><span class="sign">\+<\/span>two<\/td>/);
    assert.match(cmp.text, /Create pull request/);
    assert.doesNotMatch(cmp.text, /<script>alert/);
    assert.match(cmp.text, /feat&lt;script>alert\(1\)&lt;%/);
    assert.equal(
      (await a.get(`/alice/proj/compare?base=main&head=${enc}`)).location,
      `/alice/proj/compare/main...${enc}`,
    );
    assert.equal((await a.get('/alice/proj/compare/main...no-such-branch')).status, 404);
    // An issue the pull request's description closes when it is merged ("Fixes #N").
    const bug = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'The lib is missing' },
    });
    const opened = await a.post(`/alice/proj/compare/main...${enc}`, {
      title: 'Add the lib',
      content: `Please.\n\nFixes #${bug.body.number}`,
    });
    assert.equal(opened.status, 303, opened.text);
    const index = Number(opened.location!.split('/').pop());
    assert.match(opened.location!, /^\/alice\/proj\/pulls\/\d+$/);
    // The compare page now points at it.
    assert.match(
      (await a.get(`/alice/proj/compare/main...${enc}`)).text,
      new RegExp(`already open:.*#${index}`),
    );

    const commits = await a.get(`/alice/proj/pulls/${index}/commits`);
    assert.match(commits.text, /Add lib &lt;img/);
    const files = await a.get(`/alice/proj/pulls/${index}/files`);
    assert.equal(files.status, 200);
    assert.match(files.text, /lib\.txt/);
    assert.match(files.text, /data-path="lib.txt" data-line="2"/);
    assert.match((await a.get(`/alice/proj/pulls/${index}/files?style=split`)).text, /diff-table split/);
    const diff = await fetch(`${s.url}/alice/proj/pulls/${index}.diff`);
    assert.equal(diff.status, 200);
    assert.match(await diff.text(), /^\+two$/m);
    const patch = await fetch(`${s.url}/alice/proj/pulls/${index}.patch`);
    assert.match(await patch.text(), /^Subject: \[PATCH\] Add lib/m);
    const json = await s.api<{ diff_url: string; patch_url: string; html_url: string }>(
      'GET',
      `/repos/alice/proj/pulls/${index}`,
      { token: alice.token },
    );
    for (const url of [json.body.diff_url, json.body.patch_url, json.body.html_url])
      assert.equal((await fetch(url)).status, 200, url);

    // Bob (a reader) reviews: approve; he cannot merge.
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    const bobFiles = await b.get(`/alice/proj/pulls/${index}/files`);
    assert.match(bobFiles.text, /value="approve"/);
    // A line comment on a file the pull request does not change is refused, nothing written.
    await b.post(`/alice/proj/pulls/${index}/files/reviews/submit`, {
      type: 'comment',
      path: 'README.md',
      line: '1',
      line_content: 'Not here',
    });
    assert.match(decodeURIComponent(b.cookies.get('anvil_flash') ?? ''), /^error:/);
    const reviewed = await b.post(`/alice/proj/pulls/${index}/files/reviews/submit`, {
      type: 'approve',
      content: 'Looks good',
      path: 'lib.txt',
      line: '2',
      line_content: `Why two? ${XSS}`,
    });
    assert.equal(reviewed.status, 303);
    const withNote = await b.get(`/alice/proj/pulls/${index}/files`);
    assert.match(
      withNote.text,
      /<tr class="note"><td colSpan="3"><article class="line-note"[^>]*>.*Why two\? &lt;img/is,
    );
    const reviews = await s.api<Array<{ state: string; user: { login: string } }>>(
      'GET',
      `/repos/alice/proj/pulls/${index}/reviews`,
      { token: alice.token },
    );
    assert.deepEqual(
      reviews.body.map((r) => [r.user.login, r.state]),
      [['bob', 'APPROVED']],
    );
    const conv = await b.get(`/alice/proj/pulls/${index}`);
    assert.match(conv.text, /approved these changes/);
    assert.doesNotMatch(conv.text, /name="do"/);
    const refused = await b.post(`/alice/proj/pulls/${index}/merge`, { do: 'merge' });
    assert.equal(refused.status, 303);
    assert.equal(
      (await s.api<{ merged: boolean }>('GET', `/repos/alice/proj/pulls/${index}`, { token: alice.token }))
        .body.merged,
      false,
    );
    // The poster cannot approve their own pull request: refused with a message.
    await a.get(`/alice/proj/pulls/${index}/files`);
    await a.post(`/alice/proj/pulls/${index}/files/reviews/submit`, { type: 'approve', content: '' });
    assert.match(decodeURIComponent(a.cookies.get('anvil_flash') ?? ''), /^error:.*own pull request/);

    // Alice merges with the merge box, deleting the branch.
    const box = await a.get(`/alice/proj/pulls/${index}`);
    assert.match(box.text, /name="do"/);
    for (const style of ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'])
      assert.match(box.text, new RegExp(`<option value="${style}"`));
    const merged = await a.post(`/alice/proj/pulls/${index}/merge`, {
      do: 'squash',
      merge_title_field: 'Squashed lib',
      delete_branch_after_merge: 'true',
    });
    assert.equal(merged.status, 303);
    const pr = await s.api<{ merged: boolean; merge_commit_sha: string }>(
      'GET',
      `/repos/alice/proj/pulls/${index}`,
      {
        token: alice.token,
      },
    );
    assert.equal(pr.body.merged, true);
    const head = await s.api<{ commit: { message: string } }>('GET', '/repos/alice/proj/git/commits/main', {
      token: alice.token,
    });
    assert.match(head.body.commit.message, /^Squashed lib/);
    assert.equal(
      (await s.api('GET', `/repos/alice/proj/branches/${enc}`, { token: alice.token })).status,
      404,
    );
    const done = await a.get(`/alice/proj/pulls/${index}`);
    assert.match(done.text, /Merged in/);
    assert.doesNotMatch(done.text, /name="do"/);
    // "Merged", not "Closed"; the approval before the merge it allowed, the merge not repeated as a close.
    assert.match(done.text, /<span class="pill state merged">.*Merged<\/span>/s);
    assert.doesNotMatch(done.text, /pill state closed/);
    const approvedAt = done.text.indexOf('approved these changes');
    const mergedAt = done.text.indexOf(
      `merged commit <a href="/alice/proj/commit/${pr.body.merge_commit_sha}">`,
    );
    assert.ok(approvedAt > 0 && mergedAt > approvedAt, `approval at ${approvedAt}, merge at ${mergedAt}`);
    assert.doesNotMatch(done.text, /closed this/);
    // The description's "Fixes #N" closed the issue, the merge commit named as the cause.
    const closed = await s.api<{ state: string }>('GET', `/repos/alice/proj/issues/${bug.body.number}`, {
      token: alice.token,
    });
    assert.equal(closed.body.state, 'closed');
    const bugPage = await a.get(`/alice/proj/issues/${bug.body.number}`);
    assert.match(
      bugPage.text,
      new RegExp(`closed this in <a href="/alice/proj/commit/${pr.body.merge_commit_sha}">`),
    );
    assert.match(bugPage.text, /<span class="pill state closed">/);
  });
  it('stars, watches and forks from the repository home; switches branches and tags', async () => {
    await s.api('POST', '/repos/alice/proj/tags', {
      token: alice.token,
      body: { tag_name: 'v0.1', target: 'main' },
    });
    const b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
    let home = await b.get('/alice/proj');
    assert.match(home.text, /action="\/alice\/proj\/action\/star"/);
    assert.match(home.text, /<a href="\/alice\/proj\/src\/tag\/v0\.1"/);
    assert.match(home.text, /<a href="\/alice\/proj\/src\/branch\/main" aria-current="page">main<\/a>/);
    assert.equal((await b.post('/alice/proj/action/star', {})).status, 303);
    await b.get('/alice/proj');
    await b.post('/alice/proj/action/watch', {});
    const starred = await s.api<Array<{ full_name: string }>>('GET', '/user/starred', { token: bob.token });
    assert.deepEqual(
      starred.body.map((r) => r.full_name),
      ['alice/proj'],
    );
    assert.equal((await s.api('GET', '/repos/alice/proj/subscription', { token: bob.token })).status, 200);
    home = await b.get('/alice/proj');
    assert.match(home.text, /action="\/alice\/proj\/action\/unstar"/);
    await b.post('/alice/proj/action/unstar', {});
    assert.equal((await s.api<unknown[]>('GET', '/user/starred', { token: bob.token })).body.length, 0);
    assert.equal((await b.post('/alice/proj/action/explode', {})).status, 404);
    // The file view keeps its path when switching to the tag.
    const file = await b.get('/alice/proj/src/branch/main/README.md');
    assert.match(file.text, /href="\/alice\/proj\/src\/tag\/v0\.1\/README\.md"/);

    // Fork into bob's account from the form the Fork button leads to (Forgejo's /repo/fork/{id}).
    const forkUrl = /<a class="button" href="(\/repo\/fork\/\d+)">/.exec(home.text)![1]!;
    const form = await b.get(forkUrl);
    assert.equal(form.status, 200);
    const forked = await b.post(forkUrl, {
      uid: form.text.match(/<option value="(\d+)"/)![1]!,
      repo_name: 'proj-fork',
    });
    assert.equal(forked.status, 303);
    assert.equal(forked.location, '/bob/proj-fork');
    const fork = await s.api<{ fork: boolean; parent: { full_name: string } }>(
      'GET',
      '/repos/bob/proj-fork',
      {
        token: bob.token,
      },
    );
    assert.equal(fork.body.fork, true);
    assert.equal(fork.body.parent.full_name, 'alice/proj');
    // Again into the same account: the form comes back with the reason (422), no second fork.
    await b.get(forkUrl);
    const again = await b.post(forkUrl, {
      uid: form.text.match(/<option value="(\d+)"/)![1]!,
      repo_name: 'proj-fork',
    });
    assert.equal(again.status, 422);
    assert.match(again.text, /id="f-uid-error"/);
    // Signed out: counts, no forms; the fork page sends to sign in; a private repository is 404.
    const anon = new WebClient(s.url);
    const seen = await anon.get('/alice/proj');
    assert.doesNotMatch(seen.text, /action\/star/);
    assert.match(seen.text, /<a href="\/alice\/proj\/stars">\d+ stars<\/a>/);
    assert.equal((await anon.get(forkUrl)).status, 303);
    const secret = await s.api<{ id: number }>('GET', '/repos/alice/secret', { token: alice.token });
    assert.equal((await b.get(`/repo/fork/${secret.body.id}`)).status, 404);
    assert.equal((await b.post('/alice/secret/action/star', {})).status, 404);
  });
  it('offers issue templates: markdown ones filled in, issue forms turned into the text', async () => {
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'tpl', auto_init: true } });
    await s.api('POST', '/repos/alice/tpl/labels', {
      token: alice.token,
      body: { name: 'bug', color: '#ee0701' },
    });
    const put = (p: string, text: string) =>
      s.api('POST', `/repos/alice/tpl/contents/${p}`, {
        token: alice.token,
        body: { content: Buffer.from(text).toString('base64'), message: `Add ${p}` },
      });
    await put(
      '.forgejo/ISSUE_TEMPLATE/bug.md',
      '---\nname: Bug report\nabout: Something is broken\ntitle: "[Bug] "\nlabels: [bug]\n---\n\n## Steps\n',
    );
    await put(
      '.forgejo/ISSUE_TEMPLATE/form.yaml',
      [
        'name: Feature form',
        'about: Ask for a feature',
        'title: "[Feature] "',
        'body:',
        '  - type: markdown',
        '    attributes:',
        '      value: "Thanks for **asking**."',
        '  - type: textarea',
        '    id: what',
        '    attributes:',
        '      label: What do you want?',
        '    validations:',
        '      required: true',
        '  - type: dropdown',
        '    id: area',
        '    attributes:',
        '      label: Area',
        '      options: [API, Web]',
        '  - type: checkboxes',
        '    id: terms',
        '    attributes:',
        '      label: Checks',
        '      options:',
        '        - label: I searched first',
        '',
      ].join('\n'),
    );
    const c = new WebClient(s.url);
    await c.signIn('alice', alice.password);
    const start = await c.get('/alice/tpl/issues/new');
    assert.equal(start.status, 303);
    assert.equal(start.location, '/alice/tpl/issues/new/choose');
    const choose = await c.get('/alice/tpl/issues/new/choose');
    assert.match(choose.text, /Bug report/);
    assert.match(choose.text, /Feature form/);
    assert.match(choose.text, /Open a blank issue/);
    assert.match(
      choose.text,
      /href="\/alice\/tpl\/issues\/new\?template=\.forgejo%2FISSUE_TEMPLATE%2Fbug\.md"/,
    );
    const bug = await c.get(
      `/alice/tpl/issues/new?template=${encodeURIComponent('.forgejo/ISSUE_TEMPLATE/bug.md')}`,
    );
    assert.match(bug.text, /value="\[Bug\] "/);
    assert.match(bug.text, /## Steps/);
    assert.match(bug.text, /name="label" value="\d+" checked/);
    const form = await c.get(
      `/alice/tpl/issues/new?template=${encodeURIComponent('.forgejo/ISSUE_TEMPLATE/form.yaml')}`,
    );
    assert.match(form.text, /Thanks for <strong>asking<\/strong>/);
    assert.match(form.text, /name="form-field-what" required/);
    // A required field left empty: the form again (422), nothing created.
    const missing = await c.post('/alice/tpl/issues/new', {
      template: '.forgejo/ISSUE_TEMPLATE/form.yaml',
      title: '[Feature] x',
    });
    assert.equal(missing.status, 422);
    assert.match(missing.text, /Required: What do you want\?/);
    const made = await c.post('/alice/tpl/issues/new', {
      template: '.forgejo/ISSUE_TEMPLATE/form.yaml',
      title: '[Feature] Dark mode',
      'form-field-what': 'A dark theme',
      'form-field-area': '1',
      'form-field-terms-0': 'on',
    });
    assert.equal(made.status, 303, made.text);
    const issue = await s.api<{ body: string; title: string }>(
      'GET',
      `/repos/alice/tpl/issues/${made.location!.split('/').pop()}`,
      {
        token: alice.token,
      },
    );
    assert.equal(issue.body.title, '[Feature] Dark mode');
    assert.equal(
      issue.body.body,
      '### What do you want?\n\nA dark theme\n\n### Area\n\nWeb\n\n### Checks\n\n- [x] I searched first',
    );
    // A blank issue stays possible.
    const blank = await c.get('/alice/tpl/issues/new?blank=1');
    assert.equal(blank.status, 200);
    assert.match(blank.text, /name="content"/);
  });
});
