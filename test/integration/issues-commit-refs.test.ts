// Commits that refer to issues, pushed with the real git client: a closing keyword on the default
// branch closes the issue (timeline entry and `issues` webhook whose commit_id is the commit),
// `reopens` reopens it, any mention adds one "referenced in commit" entry (never twice for the same
// commit), other branches only reference, another repository's issue closes only when the pusher
// may write it, private repositories the pusher cannot read are left alone, and pull requests are
// never closed by a commit message.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface Issue {
  number: number;
  state: string;
}
interface TimelineEntry {
  type: string;
  ref_commit_sha: string;
  body: string;
  user: { login: string } | null;
}
type User = { name: string; password: string; token: string };

describe('commits that refer to issues', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let work: string;
  const hooks: Array<Record<string, unknown>> = [];
  let receiver: http.Server;

  const issue = (repo: string, n: number, token = alice.token) =>
    s.api<Issue>('GET', `/repos/${repo}/issues/${n}`, { token }).then((r) => r.body);
  const timeline = (repo: string, n: number) =>
    s
      .api<TimelineEntry[]>('GET', `/repos/${repo}/issues/${n}/timeline`, { token: alice.token })
      .then((r) => r.body);
  const refs = async (repo: string, n: number) =>
    (await timeline(repo, n)).filter((e) => e.type === 'commit_ref');
  /** The issue's state once the push's listeners are done (they run as the push ends). */
  /** Waits for the reference a push adds, and a moment more: what else the push does is done. */
  const referenced = async (repo: string, n: number, count = 1) => {
    assert.ok(await waitFor(async () => (await refs(repo, n)).length >= count, 5000, 50));
    await new Promise((r) => setTimeout(r, 300));
  };
  const stateOf = async (repo: string, n: number, expected: string) => {
    await waitFor(async () => (await issue(repo, n)).state === expected, 5000, 50);
    return (await issue(repo, n)).state;
  };

  /** Commits `message` in the working copy and pushes `branch` as `who`; returns the commit id. */
  async function push(message: string, branch = 'main', who: User = alice): Promise<string> {
    await g.git(['checkout', '--quiet', '-B', branch], work);
    const sha = await g.commit(work, `f-${Date.now()}-${Math.random()}.txt`, message, message);
    const url = repoUrl(s.url, 'alice', 'app', [who.name, who.password]);
    await g.git(['push', '--quiet', url, `HEAD:refs/heads/${branch}`], work);
    return sha;
  }

  before(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.headers['x-forgejo-event'] === 'issues')
          hooks.push(JSON.parse(body) as Record<string, unknown>);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    s = await startServer({ ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback' });
    s.ctx.webhooks.start();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const [name, priv] of [
      ['app', false],
      ['lib', false],
      ['vault', true],
    ] as const) {
      await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: true, private: priv },
      });
    }
    for (let i = 1; i <= 6; i++)
      await s.api('POST', '/repos/alice/app/issues', { token: alice.token, body: { title: `app ${i}` } });
    for (let i = 1; i <= 2; i++)
      await s.api('POST', '/repos/alice/lib/issues', { token: alice.token, body: { title: `lib ${i}` } });
    await s.api('POST', '/repos/alice/vault/issues', { token: alice.token, body: { title: 'secret' } });
    // Bob writes app, only reads lib, and cannot see vault.
    await s.api('PUT', '/repos/alice/app/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
    await s.api('PUT', '/repos/alice/lib/collaborators/bob', {
      token: alice.token,
      body: { permission: 'read' },
    });
    const port = (receiver.address() as AddressInfo).port;
    const hook = await s.api('POST', '/repos/alice/app/hooks', {
      token: alice.token,
      body: {
        type: 'forgejo',
        config: { url: `http://127.0.0.1:${port}/`, content_type: 'json' },
        events: ['issues'],
        active: true,
      },
    });
    assert.equal(hook.status, 201, hook.text);
    work = path.join(g.home, 'app');
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), work]);
  });
  after(async () => {
    await s.close();
    g.cleanup();
    receiver.close();
  });

  it('closes issues of this and another repository from the default branch, with the commit as cause', async () => {
    const sha = await push('Fix the crash\n\nCloses #1, fixes alice/lib#1; see #3');
    assert.equal(await stateOf('alice/app', 1, 'closed'), 'closed');
    assert.equal(await stateOf('alice/lib', 1, 'closed'), 'closed');
    assert.equal(await stateOf('alice/app', 3, 'open'), 'open');
    const closing = (await timeline('alice/app', 1)).find((e) => e.type === 'close')!;
    assert.equal(closing.ref_commit_sha, sha);
    assert.equal(closing.user?.login, 'alice');
    const ref = await refs('alice/app', 3);
    assert.equal(ref.length, 1);
    assert.equal(ref[0]!.ref_commit_sha, sha);
    assert.match(ref[0]!.body, /Fix the crash/);
    assert.equal((await refs('alice/lib', 1)).length, 1);
    // The issues webhook names the commit.
    assert.ok(await waitFor(async () => hooks.some((h) => h['action'] === 'closed')));
    const closed = hooks.find((h) => h['action'] === 'closed')!;
    assert.equal(closed['commit_id'], sha);
    assert.equal((closed['issue'] as { number: number }).number, 1);
  });

  it('reopens with a reopening keyword', async () => {
    const sha = await push('Reopens #1: the crash is back');
    assert.equal(await stateOf('alice/app', 1, 'open'), 'open');
    const reopened = (await timeline('alice/app', 1)).filter((e) => e.type === 'reopen');
    assert.equal(reopened.at(-1)!.ref_commit_sha, sha);
    assert.ok(
      await waitFor(async () => hooks.some((h) => h['action'] === 'reopened' && h['commit_id'] === sha)),
    );
  });

  it('only references from other branches, and never twice for the same commit', async () => {
    const sha = await push('closes #2 on a branch', 'feature');
    await referenced('alice/app', 2);
    assert.equal((await issue('alice/app', 2)).state, 'open');
    assert.deepEqual(
      (await refs('alice/app', 2)).map((e) => e.ref_commit_sha),
      [sha],
    );
    // The same commit reaching the default branch closes it, with no second reference.
    await g.git(
      [
        'push',
        '--quiet',
        repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]),
        `${sha}:refs/heads/main`,
      ],
      work,
    );
    assert.equal(await stateOf('alice/app', 2, 'closed'), 'closed');
    assert.equal((await refs('alice/app', 2)).length, 1);
    // And pushed to yet another branch: still one.
    await g.git(
      [
        'push',
        '--quiet',
        repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]),
        `${sha}:refs/heads/copy`,
      ],
      work,
    );
    assert.equal((await refs('alice/app', 2)).length, 1);
  });

  it('closes another repository’s issue only for a pusher who may write it; skips what they cannot see', async () => {
    await g.git(['checkout', '--quiet', 'main'], work);
    await g.git(
      ['pull', '--quiet', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), 'main'],
      work,
    );
    await push('fixes alice/lib#2 and closes alice/vault#1 and closes #4', 'main', bob);
    // Bob may write app (#4 closes), only read lib (#2 referenced, still open), not see vault.
    assert.equal(await stateOf('alice/app', 4, 'closed'), 'closed');
    assert.equal(await stateOf('alice/lib', 2, 'open'), 'open');
    assert.equal((await refs('alice/lib', 2)).length, 1);
    assert.equal(await stateOf('alice/vault', 1, 'open'), 'open');
    assert.equal((await refs('alice/vault', 1)).length, 0);
  });

  it('never closes a pull request by a commit message', async () => {
    await g.git(['checkout', '--quiet', '-B', 'topic'], work);
    await g.commit(work, 'topic.txt', 'topic\n', 'topic work');
    await g.git(
      [
        'push',
        '--quiet',
        repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]),
        'HEAD:refs/heads/topic',
      ],
      work,
    );
    const pr = await s.api<{ number: number }>('POST', '/repos/alice/app/pulls', {
      token: alice.token,
      body: { head: 'topic', base: 'main', title: 'topic' },
    });
    assert.equal(pr.status, 201, pr.text);
    await g.git(['checkout', '--quiet', 'main'], work);
    await g.git(
      ['pull', '--quiet', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), 'main'],
      work,
    );
    await push(`closes #${pr.body.number}`);
    await referenced('alice/app', pr.body.number);
    assert.equal((await issue('alice/app', pr.body.number)).state, 'open');
    assert.equal((await refs('alice/app', pr.body.number)).length, 1);
  });

  it('closes issues named by the commits of a merged pull request', async () => {
    await g.git(['checkout', '--quiet', '-B', 'fix5'], work);
    await g.commit(work, 'fix5.txt', 'fix\n', 'Resolves #5');
    await g.git(
      [
        'push',
        '--quiet',
        repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]),
        'HEAD:refs/heads/fix5',
      ],
      work,
    );
    const pr = await s.api<{ number: number }>('POST', '/repos/alice/app/pulls', {
      token: alice.token,
      body: { head: 'fix5', base: 'main', title: 'fix five' },
    });
    const merged = await s.api('POST', `/repos/alice/app/pulls/${pr.body.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(merged.status, 200, merged.text);
    assert.ok(await waitFor(async () => (await issue('alice/app', 5)).state === 'closed'));
    assert.equal(await stateOf('alice/app', 6, 'open'), 'open');
  });
});
