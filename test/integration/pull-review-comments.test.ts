// Pull request reviews by id and their line comments over HTTP, on a pull request pushed with the
// real git client: a review with comments on both sides of the diff (diff hunks checked), pending
// reviews (visible to their author only, comments added, then submitted), deletion and its
// permissions, dismissals by writers, 422 for comments the diff cannot hold, 404 across pulls.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Review {
  id: number;
  state: string;
  body: string;
  dismissed: boolean;
  comments_count: number;
  user: { login: string } | null;
}

interface ReviewComment {
  id: number;
  body: string;
  user: { login: string } | null;
  resolver: unknown;
  pull_request_review_id: number;
  path: string;
  commit_id: string;
  original_commit_id: string;
  diff_hunk: string;
  position: number;
  original_position: number;
  html_url: string;
  pull_request_url: string;
}

const OLD = Array.from({ length: 10 }, (_, i) => `l${i + 1}`);
// l3 removed (old line 3), NEW added after l6 (new line 6).
const NEW = [...OLD.slice(0, 2), ...OLD.slice(3, 6), 'NEW', ...OLD.slice(6)];

describe('pull request review comments', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let bob: U;
  let carol: U;
  let dave: U;
  let wt: string;
  let pr: number;
  let other: number;
  let head: string;

  const reviews = (n = pr) => `/repos/alice/proj/pulls/${n}/reviews`;

  async function branch(name: string, files: Record<string, string>): Promise<string> {
    await g.git(['fetch', '--quiet', 'origin'], wt);
    await g.git(['checkout', '--quiet', '-B', name, 'origin/main'], wt);
    let tip = '';
    for (const [f, content] of Object.entries(files)) tip = await g.commit(wt, f, content, `change ${f}`);
    await g.git(['push', '--quiet', '--force', 'origin', name], wt);
    return tip;
  }

  async function openPull(headBranch: string, token: string): Promise<number> {
    const r = await s.api<{ number: number }>('POST', '/repos/alice/proj/pulls', {
      token,
      body: { head: headBranch, base: 'main', title: headBranch },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.number;
  }

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    for (const [name, priv] of [
      ['proj', false],
      ['secret', true],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: true, private: priv },
      });
      assert.equal(r.status, 201, r.text);
    }
    for (const [u, permission] of [
      [bob, 'read'],
      [dave, 'write'],
    ] as const) {
      const r = await s.api('PUT', `/repos/alice/proj/collaborators/${u.name}`, {
        token: alice.token,
        body: { permission },
      });
      assert.equal(r.status, 204, r.text);
    }
    wt = path.join(await g.workTree(), 'proj');
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'proj', [alice.name, alice.password]), wt]);
    await g.commit(wt, 'lib.txt', `${OLD.join('\n')}\n`, 'add lib');
    await g.git(['push', '--quiet', 'origin', 'HEAD:main'], wt);
    head = await branch('feat', { 'lib.txt': `${NEW.join('\n')}\n` });
    pr = await openPull('feat', dave.token);
    await branch('other', { 'other.txt': 'x\n' });
    other = await openPull('other', dave.token);
  });

  after(async () => {
    await s?.ctx.pulls.idle();
    await s?.close();
    g?.cleanup();
  });

  let commented: Review;
  let comments: ReviewComment[];

  it('creates a review with line comments on the new and the old side', async () => {
    const r = await s.api<Review>('POST', reviews(), {
      token: bob.token,
      body: {
        event: 'COMMENT',
        comments: [
          { path: 'lib.txt', body: 'why NEW?', new_position: 6 },
          { path: 'lib.txt', body: 'keep l3', old_position: 3 },
        ],
      },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.state, 'COMMENT');
    assert.equal(r.body.body, '');
    assert.equal(r.body.comments_count, 2);
    commented = r.body;

    const list = await s.api<ReviewComment[]>('GET', `${reviews()}/${commented.id}/comments`, {
      token: carol.token,
    });
    assert.equal(list.status, 200, list.text);
    comments = list.body;
    assert.equal(comments.length, 2);
    const [n, o] = comments as [ReviewComment, ReviewComment];
    assert.equal(n.body, 'why NEW?');
    assert.equal(n.user?.login, 'bob');
    assert.equal(n.resolver, null);
    assert.equal(n.path, 'lib.txt');
    assert.equal(n.position, 6);
    assert.equal(n.original_position, 0);
    assert.equal(n.pull_request_review_id, commented.id);
    assert.equal(n.commit_id, head);
    assert.equal(n.original_commit_id, head);
    assert.match(n.diff_hunk, /^@@ -1,\d+ \+1,\d+ @@/);
    assert.ok(n.diff_hunk.endsWith('\n+NEW'), n.diff_hunk);
    assert.ok(n.diff_hunk.includes('\n-l3\n'), n.diff_hunk);
    assert.ok(n.html_url.endsWith(`/alice/proj/pulls/${pr}#issuecomment-${n.id}`), n.html_url);
    assert.ok(n.pull_request_url.endsWith(`/alice/proj/pulls/${pr}`), n.pull_request_url);
    assert.equal(o.position, 0);
    assert.equal(o.original_position, 3);
    assert.match(o.diff_hunk, /^@@ .* @@\n l1\n l2\n-l3$/);

    const one = await s.api<ReviewComment>('GET', `${reviews()}/${commented.id}/comments/${o.id}`, {
      token: alice.token,
    });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, o);

    const got = await s.api<Review>('GET', `${reviews()}/${commented.id}`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.comments_count, 2);
    assert.equal(got.body.user?.login, 'bob');
    const all = await s.api<Review[]>('GET', reviews());
    assert.deepEqual(
      all.body.map((x) => [x.id, x.comments_count]),
      [[commented.id, 2]],
    );
  });

  it('refuses comments the diff cannot hold: 422 naming comments, nothing written', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ path: 'nope.txt', body: 'x', new_position: 1 }, /\[Comments\]/],
      [{ path: 'lib.txt', body: 'x' }, /\[Comments\]/],
      [{ path: 'lib.txt', body: 'x', new_position: 0, old_position: 0 }, /\[Comments\]/],
      [{ path: 'lib.txt', body: '  ', new_position: 1 }, /\[Comments\]/],
    ];
    for (const [c, message] of bad) {
      const r = await s.api<{ message: string }>('POST', reviews(), {
        token: bob.token,
        body: {
          event: 'COMMENT',
          body: 'see',
          comments: [{ path: 'lib.txt', body: 'ok', new_position: 1 }, c],
        },
      });
      assert.equal(r.status, 422, `${JSON.stringify(c)}: ${r.text}`);
      assert.match(r.body.message, message);
    }
    const empty = await s.api('POST', reviews(), { token: bob.token, body: { event: 'COMMENT' } });
    assert.equal(empty.status, 422, empty.text);
    const all = await s.api<Review[]>('GET', reviews());
    assert.equal(all.body.length, 1);
  });

  it('pending reviews: hidden from others, comments added by the author, then submitted', async () => {
    const p = await s.api<Review>('POST', reviews(), {
      token: bob.token,
      body: { comments: [{ path: 'lib.txt', body: 'first', new_position: 1 }] },
    });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.state, 'PENDING');
    assert.equal(p.body.comments_count, 1);
    const id = p.body.id;

    for (const token of [carol.token, alice.token, undefined]) {
      for (const url of [`${reviews()}/${id}`, `${reviews()}/${id}/comments`]) {
        const r = await s.api('GET', url, token ? { token } : {});
        assert.equal(r.status, 404, `${url}: ${r.text}`);
      }
      const list = await s.api<Review[]>('GET', reviews(), token ? { token } : {});
      assert.ok(!list.body.some((x) => x.id === id));
    }
    const mine = await s.api<Review[]>('GET', reviews(), { token: bob.token });
    assert.ok(mine.body.some((x) => x.id === id && x.state === 'PENDING'));

    const foreign = await s.api('POST', `${reviews()}/${id}/comments`, {
      token: alice.token,
      body: { path: 'lib.txt', body: 'mine', new_position: 2 },
    });
    assert.equal(foreign.status, 404, foreign.text);
    const added = await s.api<ReviewComment>('POST', `${reviews()}/${id}/comments`, {
      token: bob.token,
      body: { path: 'lib.txt', body: 'second', old_position: 10 },
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.original_position, 10);
    assert.equal(added.body.pull_request_review_id, id);
    const noPos = await s.api('POST', `${reviews()}/${id}/comments`, {
      token: bob.token,
      body: { path: 'lib.txt', body: 'third' },
    });
    assert.equal(noPos.status, 422, noPos.text);

    const stay = await s.api('POST', `${reviews()}/${id}`, { token: bob.token, body: { event: 'PENDING' } });
    assert.equal(stay.status, 422, stay.text);
    const sub = await s.api<Review>('POST', `${reviews()}/${id}`, {
      token: bob.token,
      body: { event: 'COMMENT', body: 'done' },
    });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.body.state, 'COMMENT');
    assert.equal(sub.body.body, 'done');
    assert.equal(sub.body.comments_count, 2);
    const again = await s.api('POST', `${reviews()}/${id}`, {
      token: bob.token,
      body: { event: 'COMMENT', body: 'again' },
    });
    assert.equal(again.status, 422, again.text);
    const late = await s.api('POST', `${reviews()}/${id}/comments`, {
      token: bob.token,
      body: { path: 'lib.txt', body: 'late', new_position: 2 },
    });
    assert.equal(late.status, 422, late.text);

    const seen = await s.api<ReviewComment[]>('GET', `${reviews()}/${id}/comments`, { token: carol.token });
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(
      seen.body.map((c) => c.body),
      ['first', 'second'],
    );
  });

  it('deletes comments and reviews: the poster, the reviewer or an administrator; 403 otherwise', async () => {
    const [n] = comments as [ReviewComment];
    let r = await s.api('DELETE', `${reviews()}/${commented.id}/comments/${n.id}`, { token: carol.token });
    assert.equal(r.status, 403, r.text);
    r = await s.api('DELETE', `${reviews()}/${commented.id}/comments/${n.id}`, { token: bob.token });
    assert.equal(r.status, 204, r.text);
    r = await s.api('GET', `${reviews()}/${commented.id}/comments/${n.id}`);
    assert.equal(r.status, 404, r.text);
    const got = await s.api<Review>('GET', `${reviews()}/${commented.id}`);
    assert.equal(got.body.comments_count, 1);

    for (const u of [carol, dave]) {
      r = await s.api('DELETE', `${reviews()}/${commented.id}`, { token: u.token });
      assert.equal(r.status, 403, `${u.name}: ${r.text}`);
    }
    r = await s.api('DELETE', `${reviews()}/${commented.id}`);
    assert.equal(r.status, 401, r.text);
    r = await s.api('DELETE', `${reviews()}/${commented.id}`, { token: alice.token });
    assert.equal(r.status, 204, r.text);
    r = await s.api('GET', `${reviews()}/${commented.id}`);
    assert.equal(r.status, 404, r.text);
    r = await s.api('GET', `${reviews()}/${commented.id}/comments`);
    assert.equal(r.status, 404, r.text);

    const own = await s.api<Review>('POST', reviews(), {
      token: carol.token,
      body: { event: 'COMMENT', body: 'mine' },
    });
    assert.equal(own.status, 200, own.text);
    r = await s.api('DELETE', `${reviews()}/${own.body.id}`, { token: carol.token });
    assert.equal(r.status, 204, r.text);
  });

  it('dismisses and restores approvals: writers only; not comment reviews', async () => {
    const a = await s.api<Review>('POST', reviews(), {
      token: alice.token,
      body: { event: 'APPROVED', body: 'lgtm' },
    });
    assert.equal(a.status, 200, a.text);
    const url = `${reviews()}/${a.body.id}`;
    for (const u of [bob, carol]) {
      const r = await s.api('POST', `${url}/dismissals`, { token: u.token, body: { message: 'no' } });
      assert.equal(r.status, 403, `${u.name}: ${r.text}`);
    }
    let r = await s.api<Review>('POST', `${url}/dismissals`, {
      token: dave.token,
      body: { message: 'outdated' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.dismissed, true);
    r = await s.api<Review>('GET', url);
    assert.equal(r.body.dismissed, true);
    const timeline = await s.api<Array<{ type: string; body: string; user: { login: string } }>>(
      'GET',
      `/repos/alice/proj/issues/${pr}/timeline`,
    );
    assert.equal(timeline.status, 200, timeline.text);
    const event = timeline.body.find((e) => e.type === 'dismiss_review');
    assert.equal(event?.body, 'outdated');
    assert.equal(event?.user.login, 'dave');
    r = await s.api<Review>('POST', `${url}/undismissals`, { token: dave.token });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.dismissed, false);
    r = await s.api<Review>('POST', `${url}/undismissals`, { token: bob.token });
    assert.equal(r.status, 403, r.text);

    // priors: the reviewer's earlier approval goes with the later one.
    const later = await s.api<Review>('POST', reviews(), {
      token: alice.token,
      body: { event: 'APPROVED', body: 'still lgtm' },
    });
    r = await s.api<Review>('POST', `${reviews()}/${later.body.id}/dismissals`, {
      token: dave.token,
      body: { message: 'both', priors: true },
    });
    assert.equal(r.status, 200, r.text);
    r = await s.api<Review>('GET', url);
    assert.equal(r.body.dismissed, true);

    const c = await s.api<Review>('POST', reviews(), {
      token: bob.token,
      body: { event: 'COMMENT', body: 'hm' },
    });
    const bad = await s.api('POST', `${reviews()}/${c.body.id}/dismissals`, {
      token: dave.token,
      body: { message: 'x' },
    });
    assert.equal(bad.status, 422, bad.text);
  });

  it('404 for a review of another pull request and for hidden repositories', async () => {
    const c = await s.api<Review>('POST', reviews(), {
      token: bob.token,
      body: { event: 'COMMENT', comments: [{ path: 'lib.txt', body: 'here', new_position: 6 }] },
    });
    assert.equal(c.status, 200, c.text);
    const list = await s.api<ReviewComment[]>('GET', `${reviews()}/${c.body.id}/comments`);
    const cid = list.body[0]!.id;
    for (const [method, url] of [
      ['GET', `${reviews(other)}/${c.body.id}`],
      ['GET', `${reviews(other)}/${c.body.id}/comments`],
      ['GET', `${reviews(other)}/${c.body.id}/comments/${cid}`],
      ['DELETE', `${reviews(other)}/${c.body.id}`],
      ['GET', `${reviews()}/999999`],
    ] as const) {
      const r = await s.api(method, url, { token: alice.token });
      assert.equal(r.status, 404, `${method} ${url}: ${r.text}`);
    }
    const odd = await s.api('POST', `${reviews(other)}/${c.body.id}/comments`, {
      token: bob.token,
      body: { path: 'other.txt', body: 'x', new_position: 1 },
    });
    assert.equal(odd.status, 404, odd.text);
    const hidden = await s.api('GET', '/repos/alice/secret/pulls/1/reviews/1', { token: carol.token });
    assert.equal(hidden.status, 404, hidden.text);
  });
});
