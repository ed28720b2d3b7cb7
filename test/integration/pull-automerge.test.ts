// Scheduled merges ("merge when checks succeed"): scheduling answers 201 without merging inside
// the request (as Forgejo does; Renovate aborts a repository whose branch vanishes under it); the
// queue merges once the required status check passes, at once when none is required, as the
// scheduler with their style (deleting the branch when asked); a second schedule is 409;
// cancelling (DELETE /pulls/{index}/merge) is for the scheduler or an administrator (403
// otherwise, 404 when nothing is scheduled); the timeline records both. Holding the queue's
// cluster lease (as another process would) shows that nothing merges outside the queue.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

describe('scheduled merges', () => {
  let s: TestServer;
  let alice: { token: string; password: string };
  let bob: { token: string };

  const branch = async (name: string) => {
    const r = await s.api<{ commit: { sha: string } }>('POST', `/repos/alice/proj/contents/${name}.txt`, {
      token: alice.token,
      body: {
        content: Buffer.from(`${name}\n`).toString('base64'),
        message: `Add ${name}`,
        new_branch: name,
      },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.commit.sha;
  };
  const open = async (head: string) => {
    const r = await s.api<{ number: number }>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { title: `Merge ${head}`, head, base: 'main' },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.number;
  };
  const pull = (n: number) =>
    s.api<{ merged: boolean; merge_commit_sha: string | null }>('GET', `/repos/alice/proj/pulls/${n}`, {
      token: alice.token,
    });
  const timeline = async (n: number) =>
    (
      await s.api<Array<{ type: string }>>('GET', `/repos/alice/proj/issues/${n}/timeline`, {
        token: alice.token,
      })
    ).body.map((e) => e.type);

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
  });
  after(async () => s.close());

  /** Holds the queue's lease, as another process working it would: nothing merges meanwhile. */
  const holdQueue = async () => {
    await s.ctx.pulls.idle();
    await s.ctx.autoMerge.idle();
    const lease = await s.ctx.cluster.leases.acquire('automerge');
    assert.ok(lease, 'the queue is idle');
    return () => s.ctx.cluster.leases.release(lease);
  };
  const mergeable = (n: number) =>
    waitFor(
      async () =>
        (await s.api<{ mergeable: boolean }>('GET', `/repos/alice/proj/pulls/${n}`, { token: alice.token }))
          .body.mergeable,
    );

  it('schedules with 201 and no body, then the queue merges at once when nothing is pending', async () => {
    await branch('quick');
    const n = await open('quick');
    await mergeable(n);
    const release = await holdQueue();
    const r = await s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
      token: alice.token,
      body: { Do: 'merge', merge_when_checks_succeed: true },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.text, '');
    assert.equal((await pull(n)).body.merged, false, 'not merged inside the request');
    assert.ok((await timeline(n)).includes('pull_scheduled_merge'));
    await release();
    assert.ok(await waitFor(async () => (await pull(n)).body.merged), 'merged by the queue');
  });

  it("answers Renovate's calls as Forgejo does: the branch outlives the request, then its statuses are empty", async () => {
    // Renovate (platform forgejo, automerge): open the pull request, schedule its merge with
    // delete_branch_after_merge, then read the branch's statuses. A 404 there aborts the repository.
    const tip = await branch('renovate/dep-1.x');
    const n = await open('renovate/dep-1.x');
    await mergeable(n);
    const release = await holdQueue();
    const r = await s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
      token: alice.token,
      body: { Do: 'merge', merge_when_checks_succeed: true, delete_branch_after_merge: true },
    });
    assert.equal(r.status, 201, r.text);
    const statuses = () =>
      s.api<Array<{ status: string }>>('GET', '/repos/alice/proj/commits/renovate%2Fdep-1.x/statuses', {
        token: alice.token,
      });
    const before = await statuses();
    assert.equal(before.status, 200, before.text);
    assert.deepEqual(before.body, []);
    const status = await s.api<{ sha: string }>(
      'GET',
      '/repos/alice/proj/commits/renovate%2Fdep-1.x/status',
      {
        token: alice.token,
      },
    );
    assert.equal(status.body.sha, tip, 'the branch is still there');
    await release();
    assert.ok(await waitFor(async () => (await pull(n)).body.merged), 'merged by the queue');
    assert.ok(
      await waitFor(
        async () =>
          (await s.api('GET', '/repos/alice/proj/branches/renovate%2Fdep-1.x', { token: alice.token }))
            .status === 404,
      ),
      'the branch deleted after the merge',
    );
    const after = await statuses();
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(after.body, []);
  });

  it('waits for the required check, then merges; a second schedule is 409', async () => {
    const bp = await s.api('POST', '/repos/alice/proj/branch_protections', {
      token: alice.token,
      body: { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci'] },
    });
    assert.equal(bp.status, 201, bp.text);
    const tip = await branch('waiting');
    const n = await open('waiting');
    const merge = () =>
      s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
        token: alice.token,
        body: { Do: 'squash', merge_when_checks_succeed: true, delete_branch_after_merge: true },
      });
    let r = await merge();
    assert.equal(r.status, 201, r.text);
    assert.equal((await pull(n)).body.merged, false);
    assert.ok((await timeline(n)).includes('pull_scheduled_merge'));
    r = await merge();
    assert.equal(r.status, 409, r.text);
    // Bob (no write access) may not cancel it; a failing check merges nothing.
    assert.equal(
      (await s.api('DELETE', `/repos/alice/proj/pulls/${n}/merge`, { token: bob.token })).status,
      403,
    );
    await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'pending', context: 'ci' },
    });
    await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'failure', context: 'ci' },
    });
    await s.ctx.autoMerge.idle();
    assert.equal((await pull(n)).body.merged, false);
    // The check passes: merged, squashed, and the branch deleted.
    await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'success', context: 'ci' },
    });
    assert.ok(await waitFor(async () => (await pull(n)).body.merged), 'merged once the check passed');
    const head = await s.api<{ commit: { message: string }; parents: unknown[] }>(
      'GET',
      '/repos/alice/proj/git/commits/main',
      {
        token: alice.token,
      },
    );
    assert.equal(head.body.parents.length, 1, 'a squash commit');
    assert.ok(
      await waitFor(
        async () =>
          (await s.api('GET', '/repos/alice/proj/branches/waiting', { token: alice.token })).status === 404,
      ),
    );
    // Nothing is left scheduled.
    assert.equal(
      (await s.api('DELETE', `/repos/alice/proj/pulls/${n}/merge`, { token: alice.token })).status,
      404,
    );
  });

  it('merges a scheduled pull request once a push to its base clears its conflict', async () => {
    const file = (branch: string, content: string, extra: Record<string, unknown> = {}) =>
      s.api<{ content: { sha: string } }>('POST', '/repos/alice/proj/contents/clash.txt', {
        token: alice.token,
        body: { content: Buffer.from(content).toString('base64'), branch, ...extra },
      });
    const dev = await s.api('POST', '/repos/alice/proj/branches', {
      token: alice.token,
      body: { new_branch_name: 'dev', old_branch_name: 'main' },
    });
    assert.equal(dev.status, 201, dev.text);
    assert.equal((await file('dev', 'head side\n', { new_branch: 'clash-head' })).status, 201);
    const base = await file('dev', 'base side\n');
    assert.equal(base.status, 201, base.text);
    const r = await s.api<{ number: number }>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { title: 'Clash', head: 'clash-head', base: 'dev' },
    });
    assert.equal(r.status, 201, r.text);
    const n = r.body.number;
    await s.ctx.pulls.idle();
    assert.equal(
      (await s.api<{ mergeable: boolean }>('GET', `/repos/alice/proj/pulls/${n}`)).body.mergeable,
      false,
    );
    const scheduled = await s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
      token: alice.token,
      body: { Do: 'merge', merge_when_checks_succeed: true },
    });
    assert.equal(scheduled.status, 201, scheduled.text);
    // The base drops its side of the conflict: the pull request becomes mergeable and is merged.
    const del = await s.api('DELETE', '/repos/alice/proj/contents/clash.txt', {
      token: alice.token,
      body: { branch: 'dev', sha: base.body.content.sha },
    });
    assert.equal(del.status, 200, del.text);
    assert.ok(await waitFor(async () => (await pull(n)).body.merged), 'merged once the conflict was gone');
  });

  it('cancels a scheduled merge; the check passing then merges nothing', async () => {
    const tip = await branch('cancelled');
    const n = await open('cancelled');
    const r = await s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
      token: alice.token,
      body: { Do: 'merge', merge_when_checks_succeed: true },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(
      (await s.api('DELETE', `/repos/alice/proj/pulls/${n}/merge`, { token: alice.token })).status,
      204,
    );
    assert.ok((await timeline(n)).includes('pull_cancel_scheduled_merge'));
    assert.equal(
      (await s.api('DELETE', `/repos/alice/proj/pulls/${n}/merge`, { token: alice.token })).status,
      404,
    );
    await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'success', context: 'ci' },
    });
    await s.ctx.autoMerge.idle();
    assert.equal((await pull(n)).body.merged, false);
    // Bob cannot schedule (no write access); an unknown pull request is 404.
    const denied = await s.api('POST', `/repos/alice/proj/pulls/${n}/merge`, {
      token: bob.token,
      body: { Do: 'merge', merge_when_checks_succeed: true },
    });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(
      (await s.api('DELETE', '/repos/alice/proj/pulls/999/merge', { token: alice.token })).status,
      404,
    );
  });
  it('schedules and cancels from the merge box on the web', async () => {
    const tip = await branch('webby');
    const n = await open('webby');
    const c = new WebClient(s.url);
    await c.signIn('alice', alice.password);
    let page = await c.get(`/alice/proj/pulls/${n}`);
    assert.match(page.text, /name="merge_when_checks_succeed" value="true"/);
    const scheduled = await c.post(`/alice/proj/pulls/${n}/merge`, {
      do: 'merge',
      merge_when_checks_succeed: 'true',
    });
    assert.equal(scheduled.status, 303);
    page = await c.get(`/alice/proj/pulls/${n}`);
    assert.match(page.text, /will be merged \(merge\) when the checks succeed/);
    assert.match(page.text, /scheduled this pull request to merge/);
    await c.post(`/alice/proj/pulls/${n}/merge/cancel`, {});
    page = await c.get(`/alice/proj/pulls/${n}`);
    assert.match(page.text, /cancelled the scheduled merge/);
    assert.doesNotMatch(page.text, /will be merged/);
    await c.post(`/alice/proj/pulls/${n}/merge`, { do: 'merge', merge_when_checks_succeed: 'true' });
    await s.api('POST', `/repos/alice/proj/statuses/${tip}`, {
      token: alice.token,
      body: { state: 'success', context: 'ci' },
    });
    assert.ok(await waitFor(async () => (await pull(n)).body.merged));
  });
  it('does not merge a pull request blocked by an open dependency, even by force', async () => {
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'deps', auto_init: true } });
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/deps/issues', {
      token: alice.token,
      body: { title: 'Do this first' },
    });
    await s.api('POST', '/repos/alice/deps/contents/x.txt', {
      token: alice.token,
      body: { content: Buffer.from('x\n').toString('base64'), message: 'x', new_branch: 'dep' },
    });
    const pr = await s.api<{ number: number }>('POST', '/repos/alice/deps/pulls', {
      token: alice.token,
      body: { title: 'Needs the issue', head: 'dep', base: 'main' },
    });
    const dep = await s.api('POST', `/repos/alice/deps/issues/${pr.body.number}/dependencies`, {
      token: alice.token,
      body: { owner: 'alice', repo: 'deps', index: issue.body.number },
    });
    assert.equal(dep.status, 201, dep.text);
    await waitFor(
      async () =>
        (
          await s.api<{ mergeable: boolean }>('GET', `/repos/alice/deps/pulls/${pr.body.number}`, {
            token: alice.token,
          })
        ).body.mergeable,
    );
    const merge = () =>
      s.api<{ message: string }>('POST', `/repos/alice/deps/pulls/${pr.body.number}/merge`, {
        token: alice.token,
        body: { Do: 'merge', force_merge: true },
      });
    const refused = await merge();
    assert.equal(refused.status, 405, refused.text);
    assert.match(refused.body.message, /blocked by an open dependency/);
    const c = new WebClient(s.url);
    await c.signIn('alice', alice.password);
    assert.match((await c.get(`/alice/deps/pulls/${pr.body.number}`)).text, /blocked by an open dependency/);
    await s.api('PATCH', `/repos/alice/deps/issues/${issue.body.number}`, {
      token: alice.token,
      body: { state: 'closed' },
    });
    assert.equal((await merge()).status, 200);
  });
});
