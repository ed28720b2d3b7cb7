// Blocking users (/user/block, /user/unblock, /user/list_blocked and the organization ones):
// Forgejo's statuses, the ties a block undoes (follows both ways, the blocked user's stars, watches
// and collaborations in the blocker's repositories), every action a blocked user is refused with
// 403 in the blocker's repositories (star, watch, follow, issue, pull request, comment, reaction)
// and allowed again after unblocking, organization blocks for owners only, and scopes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

type User = { name: string; password: string; token: string; id: number };
interface Msg {
  message: string;
}

describe('blocking users', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let carol: User;

  const counts = async (full: string) =>
    (
      await s.api<{ stars_count: number; watchers_count: number }>('GET', `/repos/${full}`, {
        token: alice.token,
      })
    ).body;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'garden', auto_init: true } });
    await s.api('POST', '/repos/alice/garden/issues', { token: alice.token, body: { title: 'existing' } });
    await s.api('PUT', '/repos/alice/garden/collaborators/bob', {
      token: alice.token,
      body: { permission: 'read' },
    });
    // Bob stars, watches and follows; Alice follows Bob.
    assert.equal((await s.api('PUT', '/user/starred/alice/garden', { token: bob.token })).status, 204);
    assert.equal((await s.api('PUT', '/repos/alice/garden/subscription', { token: bob.token })).status, 200);
    assert.equal((await s.api('PUT', '/user/following/alice', { token: bob.token })).status, 204);
    assert.equal((await s.api('PUT', '/user/following/bob', { token: alice.token })).status, 204);
  });
  after(() => s.close());

  it('blocks: 204, listed, and the ties between the two undone', async () => {
    const before = await counts('alice/garden');
    assert.equal(before.stars_count, 1);
    const r = await s.api('PUT', '/user/block/bob', { token: alice.token });
    assert.equal(r.status, 204, r.text);
    const list = await s.api<Array<{ block_id: number; created_at: string }>>('GET', '/user/list_blocked', {
      token: alice.token,
    });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((b) => b.block_id),
      [bob.id],
    );
    assert.ok(!Number.isNaN(Date.parse(list.body[0]!.created_at)));
    const after = await counts('alice/garden');
    assert.equal(after.stars_count, 0);
    assert.equal(after.watchers_count, before.watchers_count - 1);
    assert.equal((await s.api('GET', '/users/bob/following/alice', { token: alice.token })).status, 404);
    assert.equal((await s.api('GET', '/users/alice/following/bob', { token: alice.token })).status, 404);
    assert.equal(
      (await s.api('GET', '/repos/alice/garden/collaborators/bob', { token: alice.token })).status,
      404,
    );
    // Blocking again, or oneself, changes nothing (Forgejo answers 204).
    assert.equal((await s.api('PUT', '/user/block/bob', { token: alice.token })).status, 204);
    assert.equal((await s.api('PUT', '/user/block/alice', { token: alice.token })).status, 204);
    assert.equal(
      (await s.api<unknown[]>('GET', '/user/list_blocked', { token: alice.token })).body.length,
      1,
    );
    assert.equal((await s.api('PUT', '/user/block/nobody', { token: alice.token })).status, 404);
  });

  it("refuses everything a blocked user tries in the blocker's repositories, with 403", async () => {
    const expect403 = async (what: string, r: Promise<{ status: number; body: unknown }>) => {
      const got = await r;
      assert.equal(got.status, 403, `${what}: ${JSON.stringify(got.body)}`);
      assert.match((got.body as Msg).message, /blocked/i, what);
    };
    await expect403('star', s.api('PUT', '/user/starred/alice/garden', { token: bob.token }));
    await expect403('watch', s.api('PUT', '/repos/alice/garden/subscription', { token: bob.token }));
    await expect403('follow', s.api('PUT', '/user/following/alice', { token: bob.token }));
    await expect403(
      'issue',
      s.api('POST', '/repos/alice/garden/issues', { token: bob.token, body: { title: 'x' } }),
    );
    await expect403(
      'comment',
      s.api('POST', '/repos/alice/garden/issues/1/comments', { token: bob.token, body: { body: 'x' } }),
    );
    await expect403(
      'reaction',
      s.api('POST', '/repos/alice/garden/issues/1/reactions', { token: bob.token, body: { content: '+1' } }),
    );
    // A pull request from Bob's fork.
    const fork = await s.api('POST', '/repos/alice/garden/forks', { token: bob.token, body: {} });
    assert.equal(fork.status, 202, JSON.stringify(fork.body));
    await expect403(
      'pull request',
      s.api('POST', '/repos/alice/garden/pulls', {
        token: bob.token,
        body: { head: 'bob:main', base: 'main', title: 'x' },
      }),
    );
    // Others are not affected, and Bob may still read.
    assert.equal((await s.api('PUT', '/user/starred/alice/garden', { token: carol.token })).status, 204);
    assert.equal((await s.api('GET', '/repos/alice/garden/issues/1', { token: bob.token })).status, 200);
  });

  it('unblocks: allowed again', async () => {
    assert.equal((await s.api('PUT', '/user/unblock/bob', { token: alice.token })).status, 204);
    assert.equal((await s.api('PUT', '/user/unblock/bob', { token: alice.token })).status, 204);
    assert.deepEqual((await s.api('GET', '/user/list_blocked', { token: alice.token })).body, []);
    assert.equal((await s.api('PUT', '/user/starred/alice/garden', { token: bob.token })).status, 204);
    const issue = await s.api('POST', '/repos/alice/garden/issues', {
      token: bob.token,
      body: { title: 'back' },
    });
    assert.equal(issue.status, 201);
  });

  it('lets organization owners block for the organization, and nobody else', async () => {
    await s.api('POST', '/orgs', { token: alice.token, body: { username: 'guild' } });
    await s.api('POST', '/orgs/guild/repos', { token: alice.token, body: { name: 'hall', auto_init: true } });
    const team = await s.api<{ id: number }>('POST', '/orgs/guild/teams', {
      token: alice.token,
      body: { name: 'members', permission: 'read', units: ['repo.code', 'repo.issues'] },
    });
    await s.api('PUT', `/teams/${team.body.id}/members/carol`, { token: alice.token });
    assert.equal((await s.api('PUT', '/orgs/guild/block/bob', { token: carol.token })).status, 403);
    assert.equal((await s.api('GET', '/orgs/guild/list_blocked', { token: carol.token })).status, 403);
    assert.equal((await s.api('PUT', '/orgs/guild/block/bob', { token: alice.token })).status, 204);
    const list = await s.api<Array<{ block_id: number }>>('GET', '/orgs/guild/list_blocked', {
      token: alice.token,
    });
    assert.deepEqual(
      list.body.map((b) => b.block_id),
      [bob.id],
    );
    const refused = await s.api<Msg>('POST', '/repos/guild/hall/issues', {
      token: bob.token,
      body: { title: 'x' },
    });
    assert.equal(refused.status, 403);
    assert.equal((await s.api('PUT', '/user/starred/guild/hall', { token: bob.token })).status, 403);
    assert.equal((await s.api('PUT', '/orgs/guild/unblock/bob', { token: alice.token })).status, 204);
    assert.equal((await s.api('PUT', '/user/starred/guild/hall', { token: bob.token })).status, 204);
    assert.equal((await s.api('PUT', '/orgs/nothere/block/bob', { token: alice.token })).status, 404);
  });

  it('asks for a signed-in caller and a write scope', async () => {
    assert.equal((await s.api('PUT', '/user/block/bob')).status, 401);
    assert.equal((await s.api('GET', '/user/list_blocked')).status, 401);
    const t = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: [alice.name, alice.password],
      body: { name: 'ro', scopes: ['read:user', 'read:organization'] },
    });
    assert.equal((await s.api('GET', '/user/list_blocked', { token: t.body.sha1 })).status, 200);
    assert.equal((await s.api('PUT', '/user/block/bob', { token: t.body.sha1 })).status, 403);
    assert.equal((await s.api('PUT', '/orgs/guild/block/bob', { token: t.body.sha1 })).status, 403);
  });
});
