// The repository's activity page (Forgejo's /{owner}/{repo}/activity[/{period}]): counts of
// merged and proposed pull requests, opened and closed issues, releases and the default branch's
// commits; unknown periods and private repositories are 404 for others.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

const stat = (html: string, id: string): number => {
  const m = new RegExp(`data-stat="${id}"><strong>(\\d+)</strong>`).exec(html);
  assert.ok(m, `stat ${id} in page`);
  return Number(m[1]);
};

describe('web interface: repository activity', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let a: WebClient;
  let anon: WebClient;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    await s.createUser('bob');
    const token = alice.token;
    await s.api('POST', '/user/repos', { token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/user/repos', { token, body: { name: 'secret', auto_init: true, private: true } });
    for (const [file, branch] of [
      ['one.txt', 'feature'],
      ['two.txt', 'other'],
    ] as const) {
      const r = await s.api('POST', `/repos/alice/proj/contents/${file}`, {
        token,
        body: { content: Buffer.from('hi\n').toString('base64'), new_branch: branch, message: `add ${file}` },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    for (const head of ['feature', 'other']) {
      const r = await s.api('POST', '/repos/alice/proj/pulls', {
        token,
        body: { head, base: 'main', title: `PR ${head}` },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    const merged = await s.api('POST', '/repos/alice/proj/pulls/1/merge', { token, body: { Do: 'merge' } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    for (const title of ['bug', 'idea', 'chore']) {
      await s.api('POST', '/repos/alice/proj/issues', { token, body: { title } });
    }
    await s.api('PATCH', '/repos/alice/proj/issues/4', { token, body: { state: 'closed' } });
    const zed = await s.api('POST', '/repos/alice/proj/contents/zed.txt', {
      token,
      body: {
        content: Buffer.from('a\nb\nc\n').toString('base64'),
        message: 'add zed.txt',
        author: { name: 'Zed Outsider', email: 'zed@example.com' },
      },
    });
    assert.equal(zed.status, 201, JSON.stringify(zed.body));
    const rel = await s.api('POST', '/repos/alice/proj/releases', { token, body: { tag_name: 'v1.0' } });
    assert.equal(rel.status, 201, JSON.stringify(rel.body));
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    anon = new WebClient(s.url);
  });
  after(async () => s.close());

  it('counts the week’s pull requests, issues, releases and commits', async () => {
    const page = await anon.get('/alice/proj/activity');
    assert.equal(page.status, 200, page.text);
    assert.equal(stat(page.text, 'merged-pulls'), 1);
    assert.equal(stat(page.text, 'proposed-pulls'), 2);
    assert.equal(stat(page.text, 'opened-issues'), 3);
    assert.equal(stat(page.text, 'closed-issues'), 1);
    assert.equal(stat(page.text, 'releases'), 1);
    // The initial commit and the merged branch's commit (merge commits are not counted).
    assert.match(page.text, /3 commits by 2 authors\s+pushed to <code>main<\/code>, 3 files changed/);
    assert.match(page.text, /href="\/alice\/proj\/activity"[^>]*>Activity</);
    const monthly = await anon.get('/alice/proj/activity/monthly');
    assert.equal(monthly.status, 200);
    assert.match(monthly.text, /href="\/alice\/proj\/activity\/monthly" aria-current="page"/);
  });

  it('refuses unknown periods and hides private repositories', async () => {
    assert.equal((await anon.get('/alice/proj/activity/fortnightly')).status, 404);
    assert.equal((await anon.get('/alice/secret/activity')).status, 404);
    const own = await a.get('/alice/secret/activity');
    assert.equal(own.status, 200);
    assert.equal(stat(own.text, 'merged-pulls'), 0);
  });

  it('lists the contributors of the default branch with their commits, lines and weeks', async () => {
    const page = await anon.get('/alice/proj/activity/contributors');
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /href="\/alice\/proj\/activity\/contributors" aria-current="page"/);
    // Merge commits are left out: the initial commit and one.txt by alice, zed.txt by an address
    // no account has (shown by name, not linked).
    assert.match(page.text, /3 commits from/);
    const items = [...page.text.matchAll(/<li><div class="contributor">([\s\S]*?)<\/li>/g)].map((m) => m[1]!);
    assert.equal(items.length, 2);
    assert.match(items[0]!, /<a href="\/alice">alice<\/a>[\s\S]*2 commits/);
    assert.match(items[1]!, /<strong>Zed Outsider<\/strong>[\s\S]*1 commit[^s][\s\S]*\+3/);
    assert.match(page.text, /<svg class="commit-chart" role="img"/);
    assert.equal((await anon.get('/alice/secret/activity/contributors')).status, 404);
    assert.equal((await a.get('/alice/secret/activity/contributors')).status, 200);
  });

  it('draws the commit graph of every branch, a page at a time', async () => {
    const page = await anon.get('/alice/proj/graph');
    assert.equal(page.status, 200, page.text);
    // The merge of PR 1, the branch it merged and the unmerged one, each commit linked once.
    for (const subject of ['add one.txt', 'add two.txt', 'add zed.txt', 'Initial commit'])
      assert.match(page.text, new RegExp(`>${subject}</a>`));
    assert.match(page.text, /<span class="pill">other<\/span>/);
    assert.match(page.text, /<circle class="g\d" /);
    assert.match(page.text, /<tr class="lines">/, 'rows of lines where branches fork and join');
    assert.doesNotMatch(page.text, /aria-label="Pages"/, 'one page');
    assert.equal((await anon.get('/alice/secret/graph')).status, 404);
    assert.equal((await a.get('/alice/secret/graph')).status, 200);
    assert.match((await anon.get('/alice/proj/commits/branch/main')).text, /href="\/alice\/proj\/graph"/);
  });
});
