// Pull requests over HTTP with the real git client: creation from a branch and from a fork, the
// JSON, diff, files and commits (files and stats checked against git), editing (empty assignees),
// merging in every style with the base branch checked with git, closing issues by commit,
// force_merge over a failing required status check, permissions and background refresh.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface PR {
  number: number;
  state: string;
  title: string;
  merged: boolean;
  mergeable: boolean;
  merge_commit_sha: string | null;
  merge_base: string;
  assignees: Array<{ login: string }> | null;
  labels: Array<{ name: string }>;
  head: { ref: string; sha: string; label: string; repo_id: number };
  base: { ref: string; sha: string; repo_id: number };
  additions: number;
  deletions: number;
  changed_files: number;
}

interface CommitEntry {
  sha: string;
  files: Array<{ filename: string; status: string }> | null;
  stats: { total: number; additions: number; deletions: number } | null;
}

describe('pull requests', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let bob: U;
  let carol: U;
  let dave: U;
  let wt: string;

  const url = (u: U, owner = 'alice', repo = 'proj') => repoUrl(s.url, owner, repo, [u.name, u.password]);

  /** A new branch from origin/main with one commit per file; pushed; returns the tip. */
  async function branch(name: string, files: Record<string, string>, from = 'origin/main'): Promise<string> {
    await g.git(['fetch', '--quiet', 'origin'], wt);
    await g.git(['checkout', '--quiet', '-B', name, from], wt);
    let tip = '';
    for (const [f, content] of Object.entries(files)) tip = await g.commit(wt, f, content, `add ${f}`);
    await g.git(['push', '--quiet', '--force', 'origin', name], wt);
    return tip;
  }

  async function openPull(head: string, title = head, token = alice.token, repo = 'alice/proj'): Promise<PR> {
    const r = await s.api<PR>('POST', `/repos/${repo}/pulls`, { token, body: { head, base: 'main', title } });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function remoteMain(): Promise<string> {
    await g.git(['fetch', '--quiet', 'origin'], wt);
    return (await g.git(['rev-parse', 'origin/main'], wt)).trim();
  }

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    let r = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', auto_init: true },
    });
    assert.equal(r.status, 201, r.text);
    r = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', auto_init: true, private: true },
    });
    assert.equal(r.status, 201, r.text);
    for (const [u, permission] of [
      [bob, 'read'],
      [dave, 'write'],
    ] as const) {
      r = await s.api('PUT', `/repos/alice/proj/collaborators/${u.name}`, {
        token: alice.token,
        body: { permission },
      });
      assert.equal(r.status, 204, r.text);
    }
    const parent = await g.workTree();
    wt = path.join(parent, 'proj');
    await g.git(['clone', '--quiet', url(alice), wt]);
  });

  after(async () => {
    await s?.ctx.pulls.idle();
    await s?.close();
    g?.cleanup();
  });

  it('opens a pull request from a branch: 201, refs/pull/N/head, files, diff, commits with files and stats', async () => {
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'a bug' },
    });
    assert.equal(issue.status, 201, issue.text);
    await g.git(['fetch', '--quiet', 'origin'], wt);
    await g.git(['checkout', '--quiet', '-B', 'feat', 'origin/main'], wt);
    await g.commit(wt, 'a.txt', 'one\ntwo\nthree\n', 'add a');
    await g.commit(wt, 'README.md', 'rewritten\n', `fix the readme\n\nfixes #${issue.body.number}`);
    const tip = await g.commit(wt, 'a.txt', 'one\n2\nthree\nfour\n', 'change a');
    await g.git(['push', '--quiet', 'origin', 'feat'], wt);

    const pr = await openPull('feat', 'Feature');
    assert.equal(pr.number, issue.body.number + 1);
    assert.equal(pr.state, 'open');
    assert.equal(pr.head.sha, tip);
    assert.equal(pr.head.ref, 'feat');
    assert.equal(pr.base.ref, 'main');
    assert.equal(pr.mergeable, true);
    assert.equal(pr.merge_base, await remoteMain());
    assert.equal(pr.changed_files, 2);

    const refs = await g.git(['ls-remote', url(alice)]);
    assert.match(refs, new RegExp(`${tip}\trefs/pull/${pr.number}/head`));

    // The pull request is also an issue of the repository, with the shared number.
    const asIssue = await s.api<{ pull_request: unknown }>('GET', `/repos/alice/proj/issues/${pr.number}`, {
      token: alice.token,
    });
    assert.equal(asIssue.status, 200, asIssue.text);
    assert.ok(asIssue.body.pull_request);

    const dup = await s.api('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { head: 'feat', base: 'main', title: 'again' },
    });
    assert.equal(dup.status, 409, dup.text);
    const missing = await s.api('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { head: 'nope', base: 'main', title: 'x' },
    });
    assert.equal(missing.status, 404, missing.text);

    const files = await s.api<Array<{ filename: string; status: string; additions: number }>>(
      'GET',
      `/repos/alice/proj/pulls/${pr.number}/files`,
      { token: alice.token },
    );
    assert.equal(files.status, 200, files.text);
    assert.deepEqual(
      files.body.map((f) => [f.filename, f.status]),
      [
        ['README.md', 'modified'],
        ['a.txt', 'added'],
      ],
    );

    const diff = await s.api('GET', `/repos/alice/proj/pulls/${pr.number}.diff`, { token: alice.token });
    assert.equal(diff.status, 200);
    assert.match(diff.text, /diff --git a\/a\.txt b\/a\.txt/);
    const patch = await s.api('GET', `/repos/alice/proj/pulls/${pr.number}.patch`, { token: alice.token });
    assert.equal(patch.status, 200);
    assert.match(patch.text, /Subject: \[PATCH 1\/3\] add a/);

    const commits = await s.api<CommitEntry[]>('GET', `/repos/alice/proj/pulls/${pr.number}/commits`, {
      token: alice.token,
    });
    assert.equal(commits.status, 200, commits.text);
    assert.equal(commits.body.length, 3);
    assert.equal(commits.headers.get('x-total-count'), '3');
    for (const c of commits.body) {
      const out = await g.git(['show', '--numstat', '--format=', c.sha], wt);
      let additions = 0;
      let deletions = 0;
      const names: string[] = [];
      for (const line of out.split('\n').filter(Boolean)) {
        const [a, d, f] = line.split('\t');
        additions += Number(a);
        deletions += Number(d);
        names.push(f!);
      }
      assert.ok(c.files, 'every entry carries files');
      assert.ok(c.stats, 'every entry carries stats');
      assert.deepEqual(c.files.map((f) => f.filename).sort(), names.sort());
      assert.deepEqual(c.stats, { total: additions + deletions, additions, deletions });
    }
    assert.deepEqual(commits.body[2]!.files, [{ filename: 'a.txt', status: 'added' }]);
    assert.deepEqual(commits.body[0]!.files, [{ filename: 'a.txt', status: 'modified' }]);
  });

  it('edits: title, assignees, and an empty assignees list clears them', async () => {
    let r = await s.api<PR>('PATCH', '/repos/alice/proj/pulls/2', {
      token: alice.token,
      body: { title: 'Feature!', assignees: ['alice', 'dave'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.title, 'Feature!');
    assert.deepEqual(r.body.assignees?.map((a) => a.login).sort(), ['alice', 'dave']);
    r = await s.api<PR>('PATCH', '/repos/alice/proj/pulls/2', {
      token: alice.token,
      body: { assignees: [] },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.assignees, null);
    const got = await s.api<PR>('GET', '/repos/alice/proj/pulls/2', { token: alice.token });
    assert.equal(got.body.assignees, null);
    assert.equal(got.body.title, 'Feature!');
    r = await s.api<PR>('PATCH', '/repos/alice/proj/pulls/2', { token: alice.token, body: { base: 'nope' } });
    assert.equal(r.status, 404, r.text);
  });

  it('lists pull requests with state filters', async () => {
    const open = await s.api<PR[]>('GET', '/repos/alice/proj/pulls', { token: alice.token });
    assert.equal(open.status, 200, open.text);
    assert.deepEqual(
      open.body.map((p) => p.number),
      [2],
    );
    const closed = await s.api<PR[]>('GET', '/repos/alice/proj/pulls?state=closed', { token: alice.token });
    assert.deepEqual(closed.body, []);
  });

  it('permissions: readers cannot merge (403); a private repository is 404 to outsiders', async () => {
    const r = await s.api('POST', '/repos/alice/proj/pulls/2/merge', {
      token: bob.token,
      body: { Do: 'merge' },
    });
    assert.equal(r.status, 403, r.text);
    const anon = await s.api('POST', '/repos/alice/proj/pulls/2/merge', { body: { Do: 'merge' } });
    assert.equal(anon.status, 401, anon.text);
    for (const p of ['/repos/alice/secret/pulls', '/repos/alice/secret/pulls/1']) {
      const x = await s.api('GET', p, { token: carol.token });
      assert.equal(x.status, 404, x.text);
    }
    const bad = await s.api('POST', '/repos/alice/proj/pulls/2/merge', {
      token: alice.token,
      body: { Do: 'octopus' },
    });
    assert.equal(bad.status, 422, bad.text);
    const notMerged = await s.api('GET', '/repos/alice/proj/pulls/2/merge', { token: alice.token });
    assert.equal(notMerged.status, 404);
  });

  it('merges with a merge commit: base branch checked with git, merged state, issue closed by commit', async () => {
    const before = await remoteMain();
    const pr = (await s.api<PR>('GET', '/repos/alice/proj/pulls/2', { token: alice.token })).body;
    const r = await s.api('POST', '/repos/alice/proj/pulls/2/merge', {
      token: alice.token,
      body: { Do: 'merge', MergeTitleField: 'Merge feat' },
    });
    assert.equal(r.status, 200, r.text);
    const main = await remoteMain();
    const parents = (await g.git(['log', '-1', '--format=%P', main], wt)).trim().split(' ');
    assert.deepEqual(parents, [before, pr.head.sha]);
    assert.equal((await g.git(['log', '-1', '--format=%s', main], wt)).trim(), 'Merge feat');
    const got = await s.api<PR>('GET', '/repos/alice/proj/pulls/2', { token: alice.token });
    assert.equal(got.body.merged, true);
    assert.equal(got.body.state, 'closed');
    assert.equal(got.body.merge_commit_sha, main);
    assert.equal((await s.api('GET', '/repos/alice/proj/pulls/2/merge', { token: alice.token })).status, 204);
    const issue = await s.api<{ state: string }>('GET', '/repos/alice/proj/issues/1', { token: alice.token });
    assert.equal(issue.body.state, 'closed');
    const again = await s.api('POST', '/repos/alice/proj/pulls/2/merge', {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(again.status, 405, again.text);
    // The commits of a merged pull request stay listed.
    const commits = await s.api<CommitEntry[]>('GET', '/repos/alice/proj/pulls/2/commits', {
      token: alice.token,
    });
    assert.equal(commits.body.length, 3);
  });

  it('merges by rebase: the commits replayed on the moved base, one parent each', async () => {
    const tip = await branch('rb', { 'rb1.txt': 'x\n', 'rb2.txt': 'y\n' });
    const pr = await openPull('rb');
    await branch('main', { 'moved.txt': 'moved\n' });
    const base = await remoteMain();
    assert.ok(
      await waitFor(async () => {
        const p = await s.api<PR>('GET', `/repos/alice/proj/pulls/${pr.number}`, { token: alice.token });
        return p.body.merge_base === base || p.body.mergeable;
      }),
    );
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'rebase', delete_branch_after_merge: true },
    });
    assert.equal(r.status, 200, r.text);
    const main = await remoteMain();
    assert.notEqual(main, tip);
    const log = (await g.git(['log', '--format=%s|%P', `${base}..${main}`], wt)).trim().split('\n');
    assert.equal(log.length, 2);
    assert.equal(log[0]!.split('|')[0], 'add rb2.txt');
    assert.equal(log[1]!, `add rb1.txt|${base}`);
    const heads = await g.lsRemote(url(alice));
    assert.equal(heads.has('refs/heads/rb'), false, 'head branch deleted after merge');
  });

  it('merges by squash: one commit with all the changes', async () => {
    await branch('sq', { 'sq1.txt': '1\n', 'sq2.txt': '2\n' });
    const pr = await openPull('sq', 'Squash me');
    const base = await remoteMain();
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'squash' },
    });
    assert.equal(r.status, 200, r.text);
    const main = await remoteMain();
    assert.equal((await g.git(['log', '-1', '--format=%P', main], wt)).trim(), base);
    assert.equal((await g.git(['log', '-1', '--format=%s', main], wt)).trim(), `Squash me (#${pr.number})`);
    const files = (await g.git(['diff', '--name-only', base, main], wt)).trim().split('\n');
    assert.deepEqual(files, ['sq1.txt', 'sq2.txt']);
  });

  it('merges fast-forward only: the base becomes the head; refused when the base moved', async () => {
    const tip = await branch('ff', { 'ff.txt': 'ff\n' });
    const pr = await openPull('ff');
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'fast-forward-only', head_commit_id: tip },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(await remoteMain(), tip);

    await branch('ff2', { 'ff2.txt': 'ff2\n' });
    const pr2 = await openPull('ff2');
    await branch('main', { 'moved2.txt': 'moved\n' });
    const base = await remoteMain();
    const refused = await s.api('POST', `/repos/alice/proj/pulls/${pr2.number}/merge`, {
      token: alice.token,
      body: { Do: 'fast-forward-only' },
    });
    assert.equal(refused.status, 405, refused.text);
    assert.equal(await remoteMain(), base);
    const r2 = await s.api('POST', `/repos/alice/proj/pulls/${pr2.number}/merge`, {
      token: alice.token,
      body: { Do: 'rebase-merge' },
    });
    assert.equal(r2.status, 200, r2.text);
    const main = await remoteMain();
    const parents = (await g.git(['log', '-1', '--format=%P', main], wt)).trim().split(' ');
    assert.equal(parents.length, 2);
    assert.equal(parents[0], base);
  });

  it('marks a pull request manually merged when its head is in the base', async () => {
    const tip = await branch('manual', { 'manual.txt': 'm\n' });
    const pr = await openPull('manual');
    await g.git(['push', '--quiet', 'origin', 'manual:main'], wt);
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'manually-merged', MergeCommitID: tip },
    });
    assert.equal(r.status, 200, r.text);
    const got = await s.api<PR>('GET', `/repos/alice/proj/pulls/${pr.number}`, { token: alice.token });
    assert.equal(got.body.merged, true);
    assert.equal(got.body.merge_commit_sha, tip);
    assert.equal(await remoteMain(), tip);
  });

  it('refuses a conflicting merge with 409', async () => {
    await branch('c1', { 'conflict.txt': 'one\n' });
    const pr = await openPull('c1');
    await branch('main', { 'conflict.txt': 'two\n' });
    const base = await remoteMain();
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(r.status, 409, r.text);
    assert.equal(await remoteMain(), base);
    const got = await s.api<PR>('GET', `/repos/alice/proj/pulls/${pr.number}`, { token: alice.token });
    assert.equal(got.body.mergeable, false);
    const closed = await s.api<PR>('PATCH', `/repos/alice/proj/pulls/${pr.number}`, {
      token: alice.token,
      body: { state: 'closed' },
    });
    assert.equal(closed.status, 201, closed.text);
    assert.equal(closed.body.state, 'closed');
  });

  it('refreshes the head in the background when the head branch moves', async () => {
    await branch('sync', { 'sync.txt': '1\n' });
    const pr = await openPull('sync');
    const tip = await branch('sync', { 'sync2.txt': '2\n' }, 'sync');
    assert.ok(
      await waitFor(async () => {
        const p = await s.api<PR>('GET', `/repos/alice/proj/pulls/${pr.number}`, { token: alice.token });
        return p.body.head.sha === tip;
      }),
      'head follows the branch',
    );
    const refs = await g.git(['ls-remote', url(alice)]);
    assert.match(refs, new RegExp(`${tip}\trefs/pull/${pr.number}/head`));
    await s.api('PATCH', `/repos/alice/proj/pulls/${pr.number}`, {
      token: alice.token,
      body: { state: 'closed' },
    });
  });

  it('opens and merges a pull request from a fork', async () => {
    const f = await s.api('POST', '/repos/alice/proj/forks', { token: carol.token, body: {} });
    assert.equal(f.status, 202, f.text);
    const fwt = path.join(g.home, 'fork');
    await g.git(['clone', '--quiet', url(carol, 'carol', 'proj'), fwt]);
    await g.git(['checkout', '--quiet', '-b', 'topic'], fwt);
    const tip = await g.commit(fwt, 'fork.txt', 'from the fork\n', 'fork change');
    await g.git(['push', '--quiet', 'origin', 'topic'], fwt);
    const pr = await openPull('carol:topic', 'From the fork', carol.token);
    assert.equal(pr.head.sha, tip);
    assert.equal(pr.head.label, 'carol:topic');
    assert.notEqual(pr.head.repo_id, pr.base.repo_id);
    const refs = await g.git(['ls-remote', url(alice)]);
    assert.match(refs, new RegExp(`${tip}\trefs/pull/${pr.number}/head`));
    const byCarol = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: carol.token,
      body: { Do: 'merge' },
    });
    assert.equal(byCarol.status, 403, byCarol.text);
    const r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(r.status, 200, r.text);
    const main = await remoteMain();
    assert.equal((await g.git(['log', '-1', '--format=%P', main], wt)).trim().split(' ')[1], tip);
    assert.equal((await g.git(['show', `${main}:fork.txt`], wt)).trim(), 'from the fork');
  });

  it('force_merge: refused without it and for a non-admin, allowed to an admin over a failing check', async () => {
    const bp = await s.api('POST', '/repos/alice/proj/branch_protections', {
      token: alice.token,
      body: {
        rule_name: 'main',
        enable_push: true,
        enable_status_check: true,
        status_check_contexts: ['ci'],
      },
    });
    assert.equal(bp.status, 201, bp.text);
    const tip = await branch('guarded', { 'guarded.txt': 'g\n' });
    const pr = await openPull('guarded');
    const st = await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'failure', context: 'ci' },
    });
    assert.equal(st.status, 201, st.text);
    const base = await remoteMain();
    const merge = (token: string, force?: boolean) =>
      s.api<{ message: string }>('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
        token,
        body: { Do: 'merge', ...(force === undefined ? {} : { force_merge: force }) },
      });
    let r = await merge(alice.token);
    assert.equal(r.status, 405, r.text);
    assert.match(r.body.message, /ci/);
    r = await merge(dave.token, true);
    assert.equal(r.status, 405, r.text);
    assert.equal(await remoteMain(), base);
    r = await merge(alice.token, true);
    assert.equal(r.status, 200, r.text);
    const main = await remoteMain();
    assert.equal((await g.git(['log', '-1', '--format=%P', main], wt)).trim(), `${base} ${tip}`);
  });

  it('reviews: approvals count toward required approvals; review requests', async () => {
    const e = await s.api('PATCH', '/repos/alice/proj/branch_protections/main', {
      token: alice.token,
      body: { enable_status_check: false, status_check_contexts: [], required_approvals: 1 },
    });
    assert.equal(e.status, 200, e.text);
    await branch('rev', { 'rev.txt': 'r\n' });
    const pr = await openPull('rev', 'Review me', dave.token);
    const req = await s.api<Array<{ state: string }>>(
      'POST',
      `/repos/alice/proj/pulls/${pr.number}/requested_reviewers`,
      { token: dave.token, body: { reviewers: ['alice'] } },
    );
    assert.equal(req.status, 201, req.text);
    assert.equal(req.body[0]!.state, 'REQUEST_REVIEW');
    let r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(r.status, 405, r.text);
    const own = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/reviews`, {
      token: dave.token,
      body: { event: 'APPROVED' },
    });
    assert.equal(own.status, 422, own.text);
    const rv = await s.api<{ state: string; official: boolean }>(
      'POST',
      `/repos/alice/proj/pulls/${pr.number}/reviews`,
      { token: alice.token, body: { event: 'APPROVED', body: 'lgtm' } },
    );
    assert.equal(rv.status, 200, rv.text);
    assert.equal(rv.body.state, 'APPROVED');
    assert.equal(rv.body.official, true);
    const list = await s.api<Array<{ state: string }>>(
      'GET',
      `/repos/alice/proj/pulls/${pr.number}/reviews`,
      {
        token: alice.token,
      },
    );
    assert.deepEqual(
      list.body.map((x) => x.state),
      ['APPROVED'],
    );
    r = await s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(r.status, 200, r.text);
  });

  it('a push that changes the pull request makes its reviews stale; the rule ignores or dismisses them', async () => {
    type Review = { id: number; state: string; stale: boolean; dismissed: boolean; commit_id: string };
    const rule = (body: Record<string, unknown>) =>
      s.api('PATCH', '/repos/alice/proj/branch_protections/main', { token: alice.token, body });
    assert.equal((await rule({ required_approvals: 1, ignore_stale_approvals: true })).status, 200);
    const first = await branch('stale', { 'stale.txt': '1\n' });
    const pr = await openPull('stale', 'Stale reviews', dave.token);
    const reviews = async () =>
      (await s.api<Review[]>('GET', `/repos/alice/proj/pulls/${pr.number}/reviews`, { token: alice.token }))
        .body;
    const approve = async () => {
      const r = await s.api<Review>('POST', `/repos/alice/proj/pulls/${pr.number}/reviews`, {
        token: alice.token,
        body: { event: 'APPROVED' },
      });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    /** Pushes the work tree's branch and waits until the pull request's head is `tip`. */
    const pushed = async (tip: string) => {
      await g.git(['push', '--quiet', '--force', 'origin', 'stale'], wt);
      assert.ok(
        await waitFor(async () => {
          const p = await s.api<PR>('GET', `/repos/alice/proj/pulls/${pr.number}`, { token: alice.token });
          return p.body.head.sha === tip;
        }),
      );
      await s.ctx.pulls.idle();
    };
    const merge = () =>
      s.api('POST', `/repos/alice/proj/pulls/${pr.number}/merge`, {
        token: alice.token,
        body: { Do: 'merge' },
      });

    const a1 = await approve();
    assert.equal(a1.commit_id, first);
    assert.equal(a1.stale, false);

    // A new commit: the approval is stale (not dismissed), and the rule no longer counts it.
    const second = await g.commit(wt, 'stale2.txt', '2\n');
    await pushed(second);
    assert.deepEqual(
      (await reviews()).map((r) => [r.id, r.stale, r.dismissed]),
      [[a1.id, true, false]],
    );
    assert.equal((await merge()).status, 405);
    // A review given for the earlier commit is stale from the start.
    const late = await s.api<Review>('POST', `/repos/alice/proj/pulls/${pr.number}/reviews`, {
      token: alice.token,
      body: { event: 'COMMENT', body: 'about the first commit', commit_id: first },
    });
    assert.equal(late.status, 200, late.text);
    assert.equal(late.body.stale, true);

    // A fresh approval; then a push that changes nothing the pull request proposes (the same tree
    // under a new commit) leaves it current.
    const a2 = await approve();
    assert.equal(a2.stale, false);
    await g.git(['commit', '--quiet', '--amend', '-m', 'reworded'], wt);
    const reworded = (await g.git(['rev-parse', 'HEAD'], wt)).trim();
    await pushed(reworded);
    assert.equal((await reviews()).find((r) => r.id === a2.id)?.stale, false);

    // With dismiss_stale_approvals, a changing push dismisses the approval, and the timeline says so.
    assert.equal((await rule({ dismiss_stale_approvals: true, ignore_stale_approvals: false })).status, 200);
    const third = await g.commit(wt, 'stale3.txt', '3\n');
    await pushed(third);
    const after = (await reviews()).find((r) => r.id === a2.id)!;
    assert.deepEqual([after.stale, after.dismissed], [true, true]);
    const timeline = await s.api<Array<{ type: string; body: string }>>(
      'GET',
      `/repos/alice/proj/issues/${pr.number}/timeline`,
      { token: alice.token },
    );
    assert.ok(
      timeline.body.some(
        (c) => c.type === 'dismiss_review' && /approval review dismissed automatically/.test(c.body),
      ),
      JSON.stringify(timeline.body.map((c) => c.type)),
    );
    assert.equal((await merge()).status, 405);
    await approve();
    assert.equal((await merge()).status, 200);
  });
});
