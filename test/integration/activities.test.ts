// Activity feeds and heatmaps through the API: rows written from the event bus for repositories
// created, pushes, issues opened, commented and closed; feeds of a user (with and without
// only-performed-by), an organization, a team and a repository, newest first, paged, filtered by
// date; private repositories' activity shown only to those who may read it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface Act {
  op_type: string;
  act_user: { login: string };
  repo: { full_name: string };
  content: string;
  ref_name: string;
  is_private: boolean;
  comment_id: number;
  comment: { id: number; body: string; user: { login: string }; html_url: string; issue_url: string } | null;
  created: string;
}

describe('activity feeds', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };
  let carol: { name: string; token: string };
  const ops = (acts: Act[]) => acts.map((a) => `${a.op_type}:${a.repo.full_name}`);

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'pub', auto_init: true } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'priv', private: true } });
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/pub/issues', {
      token: alice.token,
      body: { title: 'First <b>issue</b>' },
    });
    await s.api('POST', `/repos/alice/pub/issues/${issue.body.number}/comments`, {
      token: bob.token,
      body: { body: 'a comment from bob' },
    });
    await s.api('PATCH', `/repos/alice/pub/issues/${issue.body.number}`, {
      token: alice.token,
      body: { state: 'closed' },
    });
    await s.api('POST', '/repos/alice/priv/issues', { token: alice.token, body: { title: 'secret plans' } });
    const file = await s.api('POST', '/repos/alice/pub/contents/notes.txt', {
      token: alice.token,
      body: { content: Buffer.from('hi').toString('base64'), message: 'add notes' },
    });
    assert.equal(file.status, 201, file.text);
  });
  after(async () => s.close());

  it('lists what happened in a repository, newest first', async () => {
    const r = await s.api<Act[]>('GET', '/repos/alice/pub/activities/feeds');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ops(r.body), [
      'commit_repo:alice/pub',
      'close_issue:alice/pub',
      'comment_issue:alice/pub',
      'create_issue:alice/pub',
      'create_repo:alice/pub',
    ]);
    const [push, closed, comment, opened] = r.body as [Act, Act, Act, Act];
    assert.equal(push.ref_name, 'refs/heads/main');
    assert.equal(opened.content, '1|First <b>issue</b>');
    assert.equal(comment.act_user.login, 'bob');
    assert.equal(comment.content, '1|a comment from bob');
    assert.ok(comment.comment_id > 0);
    // Forgejo's Activity.comment: the Comment itself, for comment entries.
    assert.equal(comment.comment?.id, comment.comment_id);
    assert.equal(comment.comment?.body, 'a comment from bob');
    assert.equal(comment.comment?.user.login, 'bob');
    assert.equal(comment.comment?.html_url, `${s.url}/alice/pub/issues/1#issuecomment-${comment.comment_id}`);
    assert.equal(comment.comment?.issue_url, `${s.url}/alice/pub/issues/1`);
    assert.equal(push.comment, null);
    assert.equal(push.comment_id, 0);
    for (const feed of ['/users/bob/activities/feeds', '/users/alice/activities/feeds']) {
      const r = await s.api<Act[]>('GET', feed);
      const c = r.body.find((a) => a.op_type === 'comment_issue');
      assert.deepEqual(c?.comment, comment.comment, feed);
    }
    assert.equal(closed.is_private, false);
    const paged = await s.api<Act[]>('GET', '/repos/alice/pub/activities/feeds?limit=2&page=2');
    assert.deepEqual(ops(paged.body), ['comment_issue:alice/pub', 'create_issue:alice/pub']);
    assert.equal(paged.headers.get('x-total-count'), '5');
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(
      (await s.api<Act[]>('GET', `/repos/alice/pub/activities/feeds?date=${today}`)).body.length,
      5,
    );
    assert.equal(
      (await s.api<Act[]>('GET', '/repos/alice/pub/activities/feeds?date=2001-02-03')).body.length,
      0,
    );
    assert.equal((await s.api('GET', '/repos/alice/pub/activities/feeds?date=yesterday')).status, 422);
  });

  it('shows private activity only to those who can read it', async () => {
    assert.equal(
      (await s.api('GET', '/repos/alice/priv/activities/feeds', { token: bob.token })).status,
      404,
    );
    const own = await s.api<Act[]>('GET', '/repos/alice/priv/activities/feeds', { token: alice.token });
    assert.deepEqual(ops(own.body), ['create_issue:alice/priv', 'create_repo:alice/priv']);
    assert.ok(own.body.every((a) => a.is_private));

    const anon = await s.api<Act[]>('GET', '/users/alice/activities/feeds');
    assert.ok(!ops(anon.body).some((o) => o.endsWith('alice/priv')), 'anonymous callers see no private rows');
    const self = await s.api<Act[]>('GET', '/users/alice/activities/feeds', { token: alice.token });
    assert.ok(ops(self.body).includes('create_issue:alice/priv'));
    const admin = await s.api<Act[]>('GET', '/users/alice/activities/feeds', { token: s.admin.token });
    assert.equal(admin.body.length, self.body.length);
    // A collaborator reads the private repository's feed, but not as part of alice's own feed.
    await s.api('PUT', '/repos/alice/priv/collaborators/carol', {
      token: alice.token,
      body: { permission: 'read' },
    });
    assert.equal(
      (await s.api('GET', '/repos/alice/priv/activities/feeds', { token: carol.token })).status,
      200,
    );
    const fromCarol = await s.api<Act[]>('GET', '/users/alice/activities/feeds', { token: carol.token });
    assert.ok(!ops(fromCarol.body).some((o) => o.endsWith('alice/priv')));
  });

  it('separates what a user did from what happened in their repositories', async () => {
    const all = await s.api<Act[]>('GET', '/users/alice/activities/feeds');
    assert.ok(
      all.body.some((a) => a.act_user.login === 'bob'),
      "bob's comment in alice's repository",
    );
    const mine = await s.api<Act[]>('GET', '/users/alice/activities/feeds?only-performed-by=true');
    assert.ok(mine.body.length > 0);
    assert.ok(mine.body.every((a) => a.act_user.login === 'alice'));
    const bobs = await s.api<Act[]>('GET', '/users/bob/activities/feeds');
    assert.deepEqual(ops(bobs.body), ['comment_issue:alice/pub']);
    assert.equal((await s.api('GET', '/users/nobody/activities/feeds')).status, 404);
  });

  it('counts contributions per 15 minutes in the heatmap, private ones for the user only', async () => {
    type Cell = { timestamp: number; contributions: number };
    const total = (cells: Cell[]) => cells.reduce((n, c) => n + c.contributions, 0);
    const anon = await s.api<Cell[]>('GET', '/users/alice/heatmap');
    assert.equal(anon.status, 200);
    assert.ok(anon.body.every((c) => c.timestamp % 900 === 0));
    const self = await s.api<Cell[]>('GET', '/users/alice/heatmap', { token: alice.token });
    // alice: pub created, issue opened, closed, file pushed (4 public); priv created, issue (2 private).
    assert.equal(total(anon.body), 4);
    assert.equal(total(self.body), 6);
  });

  it('feeds an organization and its teams', async () => {
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'guild' } });
    assert.equal(org.status, 201, org.text);
    await s.api('POST', '/orgs/guild/repos', { token: alice.token, body: { name: 'open' } });
    await s.api('POST', '/orgs/guild/repos', { token: alice.token, body: { name: 'closed', private: true } });
    const anon = await s.api<Act[]>('GET', '/orgs/guild/activities/feeds');
    assert.deepEqual(ops(anon.body), ['create_repo:guild/open']);
    const member = await s.api<Act[]>('GET', '/orgs/guild/activities/feeds', { token: alice.token });
    assert.deepEqual(ops(member.body), ['create_repo:guild/closed', 'create_repo:guild/open']);

    const team = await s.api<{ id: number }>('POST', '/orgs/guild/teams', {
      token: alice.token,
      body: { name: 'devs', permission: 'write', units: ['repo.code'], includes_all_repositories: false },
    });
    assert.equal(team.status, 201, team.text);
    await s.api('PUT', `/teams/${team.body.id}/repos/guild/closed`, { token: alice.token });
    await s.api('PUT', `/teams/${team.body.id}/members/bob`, { token: alice.token });
    const teamFeed = await s.api<Act[]>('GET', `/teams/${team.body.id}/activities/feeds`, {
      token: bob.token,
    });
    assert.equal(teamFeed.status, 200, teamFeed.text);
    assert.deepEqual(ops(teamFeed.body), ['create_repo:guild/closed']);
    // A comment in a repository whose issues the reader may not read (the team has the code
    // unit only) is left out of the entry; members who may read it get it.
    const issue = await s.api<{ number: number }>('POST', '/repos/guild/closed/issues', {
      token: alice.token,
      body: { title: 'internal' },
    });
    const said = await s.api<{ id: number }>(
      'POST',
      `/repos/guild/closed/issues/${issue.body.number}/comments`,
      {
        token: alice.token,
        body: { body: 'members only' },
      },
    );
    assert.equal(said.status, 201, said.text);
    const commentOf = (acts: Act[]) => acts.find((a) => a.op_type === 'comment_issue');
    const forBob = commentOf(
      (await s.api<Act[]>('GET', `/teams/${team.body.id}/activities/feeds`, { token: bob.token })).body,
    );
    assert.ok(forBob, 'the entry itself is in the feed');
    assert.equal(forBob.comment, null);
    assert.equal(forBob.comment_id, 0);
    const forAlice = commentOf(
      (await s.api<Act[]>('GET', '/orgs/guild/activities/feeds', { token: alice.token })).body,
    );
    assert.equal(forAlice?.comment?.id, said.body.id);
    assert.equal(forAlice?.comment?.body, 'members only');
    assert.equal(
      (await s.api('GET', `/teams/${team.body.id}/activities/feeds`, { token: carol.token })).status,
      404,
    );
    assert.equal((await s.api('GET', `/teams/${team.body.id}/activities/feeds`)).status, 401);
  });
});
