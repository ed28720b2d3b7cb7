// Stars, watchers and follows through the API: check/put/delete with Forgejo's statuses, counts on
// the repository and user JSON kept with each change, lists paged and filtered to what the caller
// may see, private repositories and accounts hidden, scopes enforced, and a new repository watched
// by its creator unless [service] AUTO_WATCH_NEW_REPOS is off.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface RepoJson {
  full_name: string;
  stars_count: number;
  watchers_count: number;
}
interface UserJson {
  login: string;
  followers_count: number;
  following_count: number;
  starred_repos_count: number;
}

describe('stars, watchers and follows', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };
  let carol: { name: string; token: string };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'pub' } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'priv', private: true } });
  });
  after(async () => s.close());

  it('stars and unstars with counts kept on both sides', async () => {
    assert.equal((await s.api('GET', '/user/starred/alice/pub', { token: bob.token })).status, 404);
    assert.equal((await s.api('PUT', '/user/starred/alice/pub', { token: bob.token })).status, 204);
    assert.equal(
      (await s.api('PUT', '/user/starred/alice/pub', { token: bob.token })).status,
      204,
      'idempotent',
    );
    assert.equal((await s.api('PUT', '/user/starred/alice/pub', { token: carol.token })).status, 204);
    assert.equal((await s.api('GET', '/user/starred/alice/pub', { token: bob.token })).status, 204);
    const repo = await s.api<RepoJson>('GET', '/repos/alice/pub');
    assert.equal(repo.body.stars_count, 2);
    const me = await s.api<UserJson>('GET', '/user', { token: bob.token });
    assert.equal(me.body.starred_repos_count, 1);

    const gazers = await s.api<UserJson[]>('GET', '/repos/alice/pub/stargazers');
    assert.deepEqual(gazers.body.map((u) => u.login).sort(), ['bob', 'carol']);
    assert.equal(gazers.headers.get('x-total-count'), '2');
    const paged = await s.api<UserJson[]>('GET', '/repos/alice/pub/stargazers?limit=1&page=2');
    assert.equal(paged.body.length, 1);

    const starred = await s.api<RepoJson[]>('GET', '/user/starred', { token: bob.token });
    assert.deepEqual(
      starred.body.map((r) => r.full_name),
      ['alice/pub'],
    );
    const public_ = await s.api<RepoJson[]>('GET', '/users/bob/starred');
    assert.deepEqual(
      public_.body.map((r) => r.full_name),
      ['alice/pub'],
    );

    assert.equal((await s.api('DELETE', '/user/starred/alice/pub', { token: bob.token })).status, 204);
    assert.equal((await s.api('DELETE', '/user/starred/alice/pub', { token: bob.token })).status, 204);
    assert.equal((await s.api<RepoJson>('GET', '/repos/alice/pub')).body.stars_count, 1);
    assert.equal((await s.api<UserJson>('GET', '/user', { token: bob.token })).body.starred_repos_count, 0);
    assert.equal((await s.api('GET', '/user/starred/alice/pub', { token: bob.token })).status, 404);
  });

  it('hides private repositories and refuses what the caller may not do', async () => {
    assert.equal((await s.api('PUT', '/user/starred/alice/priv', { token: bob.token })).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/priv/stargazers', { token: bob.token })).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/priv/subscribers')).status, 404);
    assert.equal((await s.api('PUT', '/user/starred/alice/nope', { token: bob.token })).status, 404);
    assert.equal((await s.api('PUT', '/user/starred/alice/pub')).status, 401);
    assert.equal((await s.api('GET', '/user/starred')).status, 401);
    // The owner stars her private repository; others listing her stars do not see it.
    assert.equal((await s.api('PUT', '/user/starred/alice/priv', { token: alice.token })).status, 204);
    const own = await s.api<RepoJson[]>('GET', '/user/starred', { token: alice.token });
    assert.deepEqual(
      own.body.map((r) => r.full_name),
      ['alice/priv'],
    );
    const seen = await s.api<RepoJson[]>('GET', '/users/alice/starred', { token: bob.token });
    assert.deepEqual(seen.body, []);
    // A read-only token cannot star.
    const ro = await s.api<{ sha1: string }>('POST', '/users/carol/tokens', {
      basic: ['carol', 'carol-password-1'],
      body: { name: 'ro', scopes: ['read:user', 'read:repository'] },
    });
    assert.equal((await s.api('PUT', '/user/starred/alice/pub', { token: ro.body.sha1 })).status, 403);
    assert.equal((await s.api('GET', '/user/starred/alice/pub', { token: ro.body.sha1 })).status, 204);
  });

  it('has the creator watch a new repository, and lists watchers and subscriptions', async () => {
    const repo = await s.api<RepoJson>('GET', '/repos/alice/pub');
    assert.equal(repo.body.watchers_count, 1);
    const watchers = await s.api<UserJson[]>('GET', '/repos/alice/pub/subscribers');
    assert.deepEqual(
      watchers.body.map((u) => u.login),
      ['alice'],
    );
    assert.equal((await s.api('PUT', '/repos/alice/pub/subscription', { token: bob.token })).status, 200);
    assert.deepEqual(
      (await s.api<UserJson[]>('GET', '/repos/alice/pub/subscribers')).body.map((u) => u.login).sort(),
      ['alice', 'bob'],
    );
    const subs = await s.api<RepoJson[]>('GET', '/user/subscriptions', { token: alice.token });
    assert.deepEqual(
      subs.body.map((r) => r.full_name),
      ['alice/priv', 'alice/pub'],
    );
    const outside = await s.api<RepoJson[]>('GET', '/users/alice/subscriptions', { token: bob.token });
    assert.deepEqual(
      outside.body.map((r) => r.full_name),
      ['alice/pub'],
    );
    assert.equal((await s.api('GET', '/users/nobody/subscriptions')).status, 404);
  });

  it('follows and unfollows with counts, hides private accounts', async () => {
    assert.equal((await s.api('GET', '/user/following/alice', { token: bob.token })).status, 404);
    assert.equal((await s.api('PUT', '/user/following/alice', { token: bob.token })).status, 204);
    assert.equal((await s.api('PUT', '/user/following/alice', { token: carol.token })).status, 204);
    assert.equal(
      (await s.api('PUT', '/user/following/bob', { token: bob.token })).status,
      204,
      'self: nothing',
    );
    assert.equal((await s.api('GET', '/user/following/alice', { token: bob.token })).status, 204);
    assert.equal((await s.api('GET', '/users/bob/following/alice')).status, 204);
    assert.equal((await s.api('GET', '/users/alice/following/bob')).status, 404);
    const a = await s.api<UserJson>('GET', '/users/alice');
    assert.equal(a.body.followers_count, 2);
    assert.equal((await s.api<UserJson>('GET', '/users/bob')).body.following_count, 1);
    assert.deepEqual(
      (await s.api<UserJson[]>('GET', '/users/alice/followers')).body.map((u) => u.login).sort(),
      ['bob', 'carol'],
    );
    assert.deepEqual(
      (await s.api<UserJson[]>('GET', '/user/followers', { token: alice.token })).body
        .map((u) => u.login)
        .sort(),
      ['bob', 'carol'],
    );
    assert.deepEqual(
      (await s.api<UserJson[]>('GET', '/user/following', { token: bob.token })).body.map((u) => u.login),
      ['alice'],
    );
    assert.equal((await s.api('DELETE', '/user/following/alice', { token: bob.token })).status, 204);
    assert.equal((await s.api<UserJson>('GET', '/users/alice')).body.followers_count, 1);
    assert.equal((await s.api<UserJson>('GET', '/users/bob')).body.following_count, 0);
    assert.equal((await s.api('PUT', '/user/following/nobody', { token: bob.token })).status, 404);

    // A private account is not there for others: not followable, not listed.
    const hidden = await s.createUser('hidden');
    await s.api('PUT', '/user/following/alice', { token: hidden.token });
    await s.api('PATCH', '/admin/users/hidden', { token: s.admin.token, body: { visibility: 'private' } });
    assert.equal((await s.api('PUT', '/user/following/hidden', { token: bob.token })).status, 404);
    assert.equal((await s.api('GET', '/users/hidden/followers')).status, 404);
    const followers = await s.api<UserJson[]>('GET', '/users/alice/followers');
    assert.deepEqual(
      followers.body.map((u) => u.login),
      ['carol'],
    );
  });

  it('does not watch new repositories when AUTO_WATCH_NEW_REPOS is off', async () => {
    const off = await startServer({ ANVIL__SERVICE__AUTO_WATCH_NEW_REPOS: 'false' });
    try {
      const u = await off.createUser('quiet');
      await off.api('POST', '/user/repos', { token: u.token, body: { name: 'r' } });
      const repo = await off.api<RepoJson>('GET', '/repos/quiet/r');
      assert.equal(repo.body.watchers_count, 0);
    } finally {
      await off.close();
    }
  });
});
