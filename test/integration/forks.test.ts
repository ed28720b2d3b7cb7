// Forks over HTTP (POST/GET /repos/{owner}/{repo}/forks) checked with the real git client, and the
// repository creation limit: [repository] MAX_CREATION_LIMIT, the per-user max_repo_creation
// override, organizations' own limit, site administrators, and ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT in
// all four combinations with being at or below the limit.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface RepoJson {
  id: number;
  name: string;
  full_name: string;
  owner: { login: string };
  fork: boolean;
  private: boolean;
  empty: boolean;
  default_branch: string;
  forks_count: number;
  description: string;
  permissions: { admin: boolean; push: boolean; pull: boolean };
  parent: RepoJson | null;
}

interface Msg {
  message: string;
}

async function createRepo(s: TestServer, u: User, name: string, extra: Record<string, unknown> = {}) {
  const r = await s.api<RepoJson>('POST', '/user/repos', {
    token: u.token,
    body: { name, auto_init: true, description: `${name} repo`, ...extra },
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

describe('forks', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let carol: User;

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await createRepo(s, alice, 'src');
    // A second branch and a tag, pushed with git, so the fork has more than the initial commit.
    const wt = await g.workTree();
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'src', [alice.name, alice.password]), 'c'], wt);
    await g.git(['checkout', '--quiet', '-b', 'feature'], `${wt}/c`);
    await g.commit(`${wt}/c`, 'feature.txt', 'feature\n');
    await g.git(['tag', 'v1'], `${wt}/c`);
    await g.git(['push', '--quiet', 'origin', 'feature', 'v1'], `${wt}/c`);
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
  });

  describe('POST /repos/{owner}/{repo}/forks', () => {
    it('forks into the signed-in account: 202, fork with its parent, same refs', async () => {
      const r = await s.api<RepoJson>('POST', '/repos/alice/src/forks', { token: bob.token, body: {} });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'bob/src');
      assert.equal(r.body.owner.login, 'bob');
      assert.equal(r.body.fork, true);
      assert.equal(r.body.private, false);
      assert.equal(r.body.empty, false);
      assert.equal(r.body.default_branch, 'main');
      assert.equal(r.body.description, 'src repo');
      assert.deepEqual(r.body.permissions, { admin: true, push: true, pull: true });
      assert.ok(r.body.parent);
      assert.equal(r.body.parent.full_name, 'alice/src');
      assert.equal(r.body.parent.forks_count, 1);
      assert.equal(r.body.parent.parent, undefined);

      const parentRefs = await g.lsRemote(repoUrl(s.url, 'alice', 'src'));
      const forkRefs = await g.lsRemote(repoUrl(s.url, 'bob', 'src'));
      assert.equal(parentRefs.size, 3);
      assert.deepEqual(forkRefs, parentRefs);

      const got = await s.api<RepoJson>('GET', '/repos/bob/src', { token: carol.token });
      assert.equal(got.status, 200);
      assert.equal(got.body.fork, true);
      assert.equal(got.body.parent?.full_name, 'alice/src');
      assert.deepEqual(got.body.parent?.permissions, { admin: false, push: false, pull: true });
      const base = await s.api<RepoJson>('GET', '/repos/alice/src', { token: carol.token });
      assert.equal(base.body.forks_count, 1);
      assert.equal(base.body.fork, false);
      assert.equal(base.body.parent, null);

      const branches = await s.ctx.db
        .selectFrom('branch')
        .select(['name', 'commit_id'])
        .where('repo_id', '=', r.body.id)
        .orderBy('name')
        .execute();
      assert.deepEqual(
        branches.map((b) => [b.name, b.commit_id]),
        [
          ['feature', parentRefs.get('refs/heads/feature')],
          ['main', parentRefs.get('refs/heads/main')],
        ],
      );
      const row = await s.ctx.db
        .selectFrom('repository')
        .select(['fork_id', 'is_fork', 'size'])
        .where('id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.is_fork), 1);
      assert.equal(Number(row.fork_id), base.body.id);
      assert.ok(Number(row.size) > 0);
    });

    it('the fork is an independent repository: pushing to it leaves the parent alone', async () => {
      const wt = await g.workTree();
      await g.git(['clone', '--quiet', repoUrl(s.url, 'bob', 'src', [bob.name, bob.password]), 'c'], wt);
      const oid = await g.commit(`${wt}/c`, 'bob.txt', 'bob was here\n');
      await g.git(['push', '--quiet', 'origin', 'main'], `${wt}/c`);
      assert.equal((await g.lsRemote(repoUrl(s.url, 'bob', 'src'))).get('refs/heads/main'), oid);
      assert.notEqual((await g.lsRemote(repoUrl(s.url, 'alice', 'src'))).get('refs/heads/main'), oid);
    });

    it("forks an empty repository; the fork follows its parent's default branch", async () => {
      const made = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'blank', default_branch: 'trunk' },
      });
      assert.equal(made.status, 201, made.text);
      const r = await s.api<RepoJson>('POST', '/repos/alice/blank/forks', { token: bob.token });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.empty, true);
      assert.equal(r.body.default_branch, 'trunk');
      assert.equal(
        fs.readFileSync(path.join(s.ctx.repos.pathOf(r.body), 'HEAD'), 'utf8'),
        'ref: refs/heads/trunk\n',
      );
      const wt = await g.workTree('trunk');
      const oid = await g.commit(wt, 'a.txt', 'a\n');
      await g.git(['push', '--quiet', repoUrl(s.url, 'bob', 'blank', [bob.name, bob.password]), 'trunk'], wt);
      const refs = await g.lsRemote(repoUrl(s.url, 'bob', 'blank'));
      assert.deepEqual([...refs], [['refs/heads/trunk', oid]]);
      const after = await s.api<RepoJson>('GET', '/repos/bob/blank');
      assert.equal(after.body.empty, false);
      assert.equal(after.body.default_branch, 'trunk');
    });

    it('409 when the account already has a fork of the repository, whatever the name', async () => {
      for (const body of [{}, { name: 'another' }]) {
        const r = await s.api<Msg>('POST', '/repos/alice/src/forks', { token: bob.token, body });
        assert.equal(r.status, 409, r.text);
        assert.match(r.body.message, /already forked by user \[uname: bob/);
      }
    });

    it("409 when the name is taken; another name forks even one's own repository", async () => {
      const same = await s.api<Msg>('POST', '/repos/alice/src/forks', { token: alice.token });
      assert.equal(same.status, 409, same.text);
      assert.match(same.body.message, /same name already exists/);
      const renamed = await s.api<RepoJson>('POST', '/repos/alice/src/forks', {
        token: alice.token,
        body: { name: 'src-copy' },
      });
      assert.equal(renamed.status, 202, renamed.text);
      assert.equal(renamed.body.full_name, 'alice/src-copy');
      assert.equal(renamed.body.parent?.forks_count, 2);
    });

    it('needs a signed-in caller with a write:repository scope', async () => {
      const anon = await s.api('POST', '/repos/alice/src/forks', { body: {} });
      assert.equal(anon.status, 401);
      const reader = await s.createUser('reader', { scopes: ['read:repository', 'read:user'] });
      const r = await s.api<Msg>('POST', '/repos/alice/src/forks', { token: reader.token, body: {} });
      assert.equal(r.status, 403, r.text);
      assert.match(r.body.message, /write:repository/);
    });

    it('404 for a repository that does not exist', async () => {
      const r = await s.api('POST', '/repos/alice/nope/forks', { token: bob.token, body: {} });
      assert.equal(r.status, 404);
    });

    it('422 for a bad name or a badly typed field, and nothing is created', async () => {
      for (const body of [{ name: 'bad name!' }, { name: 'x.git' }, { organization: 7 }, { name: '' }]) {
        const r = await s.api<Msg>('POST', '/repos/alice/src/forks', { token: carol.token, body });
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      const list = await s.api<RepoJson[]>('GET', '/users/carol/repos', { token: carol.token });
      assert.equal(list.body.length, 0);
    });

    it('a private repository is forked only by those who can read it, and the fork is private', async () => {
      await createRepo(s, alice, 'secret', { private: true });
      const denied = await s.api('POST', '/repos/alice/secret/forks', { token: carol.token, body: {} });
      assert.equal(denied.status, 404);
      const add = await s.api('PUT', '/repos/alice/secret/collaborators/carol', {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal(add.status, 204, add.text);
      const r = await s.api<RepoJson>('POST', '/repos/alice/secret/forks', { token: carol.token, body: {} });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.private, true);
      assert.equal(r.body.parent?.full_name, 'alice/secret');

      // The fork is carol's private repository: the parent's owner does not see it in the list.
      const asAlice = await s.api<RepoJson[]>('GET', '/repos/alice/secret/forks', { token: alice.token });
      assert.equal(asAlice.status, 200);
      assert.equal(asAlice.headers.get('x-total-count'), '0');
      assert.deepEqual(asAlice.body, []);
      const asCarol = await s.api<RepoJson[]>('GET', '/repos/alice/secret/forks', { token: carol.token });
      assert.deepEqual(
        asCarol.body.map((x) => x.full_name),
        ['carol/secret'],
      );
      const anon = await s.api('GET', '/repos/alice/secret/forks');
      assert.equal(anon.status, 404);
    });

    it('forks into an organization only for those who may create repositories there', async () => {
      const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
      assert.equal(org.status, 201, org.text);
      const notMember = await s.api<Msg>('POST', '/repos/alice/src/forks', {
        token: bob.token,
        body: { organization: 'acme' },
      });
      assert.equal(notMember.status, 403, notMember.text);
      const missing = await s.api<Msg>('POST', '/repos/alice/src/forks', {
        token: bob.token,
        body: { organization: 'no-such-org' },
      });
      assert.equal(missing.status, 422, missing.text);
      assert.match(missing.body.message, /organization does not exist/);
      const user = await s.api<Msg>('POST', '/repos/alice/src/forks', {
        token: bob.token,
        body: { organization: 'carol' },
      });
      assert.equal(user.status, 422, user.text);

      const r = await s.api<RepoJson>('POST', '/repos/alice/src/forks', {
        token: alice.token,
        body: { organization: 'acme' },
      });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'acme/src');
      assert.equal(r.body.parent?.full_name, 'alice/src');
    });
  });

  describe('GET /repos/{owner}/{repo}/forks', () => {
    it('lists the forks, oldest first, with paging headers', async () => {
      const all = await s.api<RepoJson[]>('GET', '/repos/alice/src/forks');
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(
        all.body.map((r) => r.full_name),
        ['bob/src', 'alice/src-copy', 'acme/src'],
      );
      assert.ok(all.body.every((r) => r.fork && r.parent?.full_name === 'alice/src'));
      assert.equal(all.headers.get('x-total-count'), '3');
      const page = await s.api<RepoJson[]>('GET', '/repos/alice/src/forks?limit=1&page=2');
      assert.deepEqual(
        page.body.map((r) => r.full_name),
        ['alice/src-copy'],
      );
      assert.match(page.headers.get('link') ?? '', /rel="next"/);
    });

    it('404 for a repository that does not exist', async () => {
      const r = await s.api('GET', '/repos/alice/nope/forks');
      assert.equal(r.status, 404);
    });
  });

  describe('deletion', () => {
    it("deleting a fork lowers its parent's forks_count", async () => {
      const before = (await s.api<RepoJson>('GET', '/repos/alice/src')).body.forks_count;
      const del = await s.api('DELETE', '/repos/acme/src', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      const afterCount = (await s.api<RepoJson>('GET', '/repos/alice/src')).body.forks_count;
      assert.equal(afterCount, before - 1);
    });

    it('deleting a parent leaves its forks standing on their own', async () => {
      await createRepo(s, alice, 'base');
      const f = await s.api<RepoJson>('POST', '/repos/alice/base/forks', { token: bob.token });
      assert.equal(f.status, 202, f.text);
      const del = await s.api('DELETE', '/repos/alice/base', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      const r = await s.api<RepoJson>('GET', '/repos/bob/base', { token: bob.token });
      assert.equal(r.status, 200);
      assert.equal(r.body.fork, false);
      assert.equal(r.body.parent, null);
      assert.equal((await g.lsRemote(repoUrl(s.url, 'bob', 'base', [bob.name, bob.password]))).size, 1);
    });
  });
});

describe('repository creation limit, forks allowed at the limit (the default)', () => {
  let s: TestServer;
  let owner: User;
  let u1: User;
  let u2: User;

  before(async () => {
    s = await startServer({ ANVIL__REPOSITORY__MAX_CREATION_LIMIT: '1' });
    owner = await s.createUser('owner');
    u1 = await s.createUser('u1');
    u2 = await s.createUser('u2');
    await createRepo(s, owner, 'upstream');
  });

  after(async () => {
    await s?.close();
  });

  it('creation at the limit is refused with 403 and the limit in the message', async () => {
    const first = await s.api('POST', '/user/repos', { token: u1.token, body: { name: 'one' } });
    assert.equal(first.status, 201, first.text);
    const second = await s.api<Msg>('POST', '/user/repos', { token: u1.token, body: { name: 'two' } });
    assert.equal(second.status, 403, second.text);
    assert.equal(second.body.message, 'user has already reached maximum limit of repositories [limit: 1]');
    const list = await s.api<RepoJson[]>('GET', '/users/u1/repos');
    assert.deepEqual(
      list.body.map((r) => r.name),
      ['one'],
    );
  });

  it('at the limit, forking is still allowed', async () => {
    const r = await s.api<RepoJson>('POST', '/repos/owner/upstream/forks', { token: u1.token });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.full_name, 'u1/upstream');
  });

  it("a user's own max_repo_creation overrides the global limit, both ways", async () => {
    const raise = await s.api('PATCH', '/admin/users/u2', {
      token: s.admin.token,
      body: { max_repo_creation: 3 },
    });
    assert.equal(raise.status, 200, raise.text);
    for (const name of ['a', 'b', 'c']) {
      const r = await s.api('POST', '/user/repos', { token: u2.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
    const fourth = await s.api<Msg>('POST', '/user/repos', { token: u2.token, body: { name: 'd' } });
    assert.equal(fourth.status, 403, fourth.text);
    assert.match(fourth.body.message, /\[limit: 3\]/);

    const zero = await s.createUser('zero');
    await s.api('PATCH', '/admin/users/zero', { token: s.admin.token, body: { max_repo_creation: 0 } });
    const none = await s.api<Msg>('POST', '/user/repos', { token: zero.token, body: { name: 'x' } });
    assert.equal(none.status, 403, none.text);
    assert.match(none.body.message, /\[limit: 0\]/);
  });

  it('an organization has its own count against the limit', async () => {
    const org = await s.api('POST', '/orgs', { token: u2.token, body: { username: 'team' } });
    assert.equal(org.status, 201, org.text);
    const first = await s.api('POST', '/orgs/team/repos', { token: u2.token, body: { name: 'one' } });
    assert.equal(first.status, 201, first.text);
    const second = await s.api<Msg>('POST', '/orgs/team/repos', { token: u2.token, body: { name: 'two' } });
    assert.equal(second.status, 403, second.text);
    assert.match(second.body.message, /maximum limit of repositories/);
  });

  it('site administrators are not limited, also when creating for a limited user', async () => {
    for (const name of ['r1', 'r2', 'r3']) {
      const r = await s.api('POST', '/user/repos', { token: s.admin.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
    const forUser = await s.api('POST', '/admin/users/u1/repos', {
      token: s.admin.token,
      body: { name: 'given' },
    });
    assert.equal(forUser.status, 201, forUser.text);
  });
});

describe('repository creation limit with ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT = false', () => {
  let s: TestServer;
  let owner: User;
  let full: User;
  let fresh: User;

  before(async () => {
    s = await startServer({
      ANVIL__REPOSITORY__MAX_CREATION_LIMIT: '1',
      ANVIL__REPOSITORY__ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT: 'false',
    });
    owner = await s.createUser('owner');
    full = await s.createUser('full');
    fresh = await s.createUser('fresh');
    await createRepo(s, owner, 'upstream');
    const r = await s.api('POST', '/user/repos', { token: full.token, body: { name: 'mine' } });
    assert.equal(r.status, 201, r.text);
  });

  after(async () => {
    await s?.close();
  });

  it('at the limit, forking is refused with 409 and creation with 403', async () => {
    const fork = await s.api<Msg>('POST', '/repos/owner/upstream/forks', { token: full.token });
    assert.equal(fork.status, 409, fork.text);
    assert.equal(fork.body.message, 'user has already reached maximum limit of repositories [limit: 1]');
    const create = await s.api('POST', '/user/repos', { token: full.token, body: { name: 'more' } });
    assert.equal(create.status, 403, create.text);
    const list = await s.api<RepoJson[]>('GET', '/users/full/repos');
    assert.deepEqual(
      list.body.map((r) => r.name),
      ['mine'],
    );
  });

  it('below the limit, forking works, and then the account is at the limit', async () => {
    const fork = await s.api<RepoJson>('POST', '/repos/owner/upstream/forks', { token: fresh.token });
    assert.equal(fork.status, 202, fork.text);
    const create = await s.api('POST', '/user/repos', { token: fresh.token, body: { name: 'more' } });
    assert.equal(create.status, 403, create.text);
  });

  it('a raised per-user limit lets the user fork again', async () => {
    await s.api('PATCH', '/admin/users/full', { token: s.admin.token, body: { max_repo_creation: 2 } });
    const fork = await s.api<RepoJson>('POST', '/repos/owner/upstream/forks', { token: full.token });
    assert.equal(fork.status, 202, fork.text);
  });

  it('a site administrator forks whatever the limit', async () => {
    await createRepo(s, { ...owner, token: s.admin.token }, 'admins-own');
    const fork = await s.api<RepoJson>('POST', '/repos/owner/upstream/forks', { token: s.admin.token });
    assert.equal(fork.status, 202, fork.text);
  });
});
