// Renaming accounts (POST /admin/users/{u}/rename, POST /orgs/{org}/rename) and repositories
// (PATCH name, transfer): the former names keep leading to them with 307 redirects, as Forgejo's
// user_redirect and repo_redirect do, for the API, git over HTTP and the web pages, until another
// account or repository takes the name; private repositories redirect only readers. Also
// /users/{u}/orgs/{org}/permissions.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface Msg {
  message: string;
}

describe('renames and the redirects of former names', () => {
  let s: TestServer;
  let git: GitClient;
  let alice: { name: string; password: string; token: string; id: number };
  let bob: { name: string; password: string; token: string; id: number };
  let carol: { name: string; password: string; token: string; id: number };

  /** A request that does not follow redirects. */
  const raw = (path: string, token?: string, method = 'GET') =>
    fetch(`${s.url}${path}`, {
      method,
      redirect: 'manual',
      headers: token ? { authorization: `token ${token}` } : {},
    });

  before(async () => {
    s = await startServer();
    git = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'tool', auto_init: true } });
    await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', auto_init: true, private: true },
    });
  });
  after(async () => {
    await s.close();
    git.cleanup();
  });

  it('renames a user; the former name redirects the API, git and web pages', async () => {
    const r = await s.api('POST', '/admin/users/alice/rename', {
      token: s.admin.token,
      body: { new_username: 'alicia' },
    });
    assert.equal(r.status, 204, r.text);
    assert.equal(
      (await s.api<{ login: string }>('GET', '/user', { token: alice.token })).body.login,
      'alicia',
    );

    let res = await raw('/api/v1/repos/alice/tool/branches?page=1&limit=5', bob.token);
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/repos/alicia/tool/branches?page=1&limit=5');
    res = await raw('/api/v1/users/Alice');
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/users/alicia');
    // A client following the redirect gets the repository under its new name.
    const followed = await s.api<{ full_name: string }>('GET', '/repos/alice/tool', { token: bob.token });
    assert.equal(followed.status, 200);
    assert.equal(followed.body.full_name, 'alicia/tool');
    // The web page and git over HTTP too.
    res = await raw('/alice/tool/src/branch/main');
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/alicia/tool/src/branch/main');
    const refs = await git.lsRemote(repoUrl(s.url, 'alice', 'tool'));
    assert.ok(refs.has('refs/heads/main'));
    // Pushing to the former URL lands in the repository.
    const dir = await git.workTree();
    await git.git(
      ['clone', '--quiet', repoUrl(s.url, 'alice', 'tool', ['alicia', alice.password]), 'c'],
      dir,
    );
    await git.commit(`${dir}/c`, 'new.txt', 'pushed through the old name\n');
    await git.git(['push', '--quiet', 'origin', 'main'], `${dir}/c`);
    const file = await s.api('GET', '/repos/alicia/tool/contents/new.txt', { token: bob.token });
    assert.equal(file.status, 200);
  });

  it('redirects a private repository only for those who may read it', async () => {
    let res = await raw('/api/v1/repos/alice/secret', alice.token);
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/repos/alicia/secret');
    res = await raw('/api/v1/repos/alice/secret', bob.token);
    assert.equal(res.status, 404);
    res = await raw('/api/v1/repos/alice/secret');
    assert.equal(res.status, 404);
  });

  it('renames and transfers repositories; the former names redirect until taken', async () => {
    let r = await s.api('PATCH', '/repos/alicia/tool', { token: alice.token, body: { name: 'hammer' } });
    assert.equal(r.status, 200);
    let res = await raw('/api/v1/repos/alicia/tool/issues?state=all', bob.token);
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/repos/alicia/hammer/issues?state=all');
    // Both former names chain to the current one: the user's old name and the repository's.
    res = await raw('/api/v1/repos/alice/tool', bob.token);
    assert.equal(res.headers.get('location'), '/api/v1/repos/alicia/hammer');
    res = await raw('/alice/tool.git/info/refs?service=git-upload-pack');
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/alicia/hammer.git/info/refs?service=git-upload-pack');

    // (Moving a repository to another person takes an administrator here.)
    r = await s.api('POST', '/repos/alicia/hammer/transfer', {
      token: s.admin.token,
      body: { new_owner: 'bob' },
    });
    assert.ok(r.status === 202 || r.status === 200, r.text);
    res = await raw('/api/v1/repos/alicia/hammer', carol.token);
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/repos/bob/hammer');

    // A new repository with the former name takes it: no redirect any more.
    r = await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'hammer' } });
    assert.equal(r.status, 201);
    res = await raw('/api/v1/repos/alicia/hammer', carol.token);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { full_name: string }).full_name, 'alicia/hammer');
    // Names never in use are still 404.
    assert.equal((await raw('/api/v1/repos/alicia/never', carol.token)).status, 404);
    assert.equal((await raw('/api/v1/repos/nobody/never', carol.token)).status, 404);
  });

  it('frees a former user name when another account takes it', async () => {
    const created = await s.api('POST', '/admin/users', {
      token: s.admin.token,
      body: { username: 'alice', email: 'new-alice@example.com', password: 'new-alice-password-1' },
    });
    assert.equal(created.status, 201, created.text);
    const res = await raw('/api/v1/users/alice');
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { email: string; login: string }).login, 'alice');
    assert.equal((await raw('/api/v1/repos/alice/secret', alice.token)).status, 404);
  });

  it('refuses bad renames', async () => {
    const rename = (name: string, body: unknown, token = s.admin.token) =>
      s.api<Msg>('POST', `/admin/users/${name}/rename`, { token, body });
    let r = await rename('carol', { new_username: 'bob' });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /already exists/);
    r = await rename('carol', { new_username: 'BOB' });
    assert.equal(r.status, 422);
    r = await rename('carol', { new_username: 'bad name!' });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /NewUsername/);
    r = await rename('carol', { new_username: 'api' });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /reserved/);
    r = await rename('carol', {});
    assert.equal(r.status, 422);
    r = await rename('nobody', { new_username: 'somebody' });
    assert.equal(r.status, 404);
    r = await rename('carol', { new_username: 'caroline' }, bob.token);
    assert.equal(r.status, 403);
    // A change of case only is a rename without a redirect.
    r = await rename('carol', { new_username: 'Carol' });
    assert.equal(r.status, 204);
    assert.equal((await s.api<{ login: string }>('GET', '/users/carol')).body.login, 'Carol');
  });

  it('renames organizations for their owners only', async () => {
    let r = await s.api('POST', '/orgs', { token: bob.token, body: { username: 'guild' } });
    assert.equal(r.status, 201);
    await s.api('POST', '/orgs/guild/repos', { token: bob.token, body: { name: 'anvil' } });
    const team = await s.api<{ id: number }>('POST', '/orgs/guild/teams', {
      token: bob.token,
      body: { name: 'readers', permission: 'read', units: ['repo.code'] },
    });
    await s.api('PUT', `/teams/${team.body.id}/members/Carol`, { token: bob.token });
    r = await s.api('POST', '/admin/users/guild/rename', {
      token: s.admin.token,
      body: { new_username: 'x' },
    });
    assert.equal(r.status, 422);
    r = await s.api('POST', '/orgs/guild/rename', { token: carol.token, body: { new_name: 'hall' } });
    assert.equal(r.status, 403);
    r = await s.api('POST', '/orgs/guild/rename', { token: bob.token, body: { new_name: 'bob' } });
    assert.equal(r.status, 422);
    r = await s.api('POST', '/orgs/guild/rename', { token: bob.token, body: { new_name: 'hall' } });
    assert.equal(r.status, 204);
    let res = await raw('/api/v1/orgs/guild/repos', carol.token);
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/v1/orgs/hall/repos');
    res = await raw('/api/v1/repos/guild/anvil', carol.token);
    assert.equal(res.headers.get('location'), '/api/v1/repos/hall/anvil');
  });

  it("answers a user's permissions in an organization", async () => {
    const perms = (user: string, org: string, token?: string) =>
      s.api<Record<string, boolean>>('GET', `/users/${user}/orgs/${org}/permissions`, token ? { token } : {});
    let r = await perms('bob', 'hall', carol.token);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      can_read: true,
      can_write: true,
      is_admin: true,
      is_owner: true,
      can_create_repository: true,
    });
    r = await perms('Carol', 'hall', carol.token);
    assert.deepEqual(r.body, {
      can_read: true,
      can_write: false,
      is_admin: false,
      is_owner: false,
      can_create_repository: false,
    });
    r = await perms('alicia', 'hall', carol.token);
    assert.deepEqual(Object.values(r.body), [false, false, false, false, false]);
    assert.equal((await perms('nobody', 'hall', carol.token)).status, 404);
    assert.equal((await perms('bob', 'nothere', carol.token)).status, 404);
    await s.api('PATCH', '/orgs/hall', { token: bob.token, body: { visibility: 'private' } });
    assert.equal((await perms('bob', 'hall', alice.token)).status, 403);
    assert.equal((await perms('bob', 'hall', carol.token)).status, 200);
  });
});
