// Unadopted repositories (GET /admin/unadopted, POST and DELETE /admin/unadopted/{owner}/{repo}):
// bare repositories laid out as Forgejo keeps them under the repositories root, listed with
// patterns and pages, adopted as repositories of their owners, deleted; only for site
// administrators, and never with a name that could leave the repositories root.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface RepoJson {
  full_name: string;
  private: boolean;
  empty: boolean;
  default_branch: string;
}

describe('unadopted repositories', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let root: string;
  let source: string;
  let head: string;
  const admin = () => ({ token: s.admin.token });

  /** A bare repository at `<root>/<owner>/<name>.git`, cloned from `source`. */
  async function plant(owner: string, name: string): Promise<string> {
    const dir = path.join(root, owner, `${name}.git`);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await g.git(['clone', '--bare', '--quiet', source, dir]);
    return dir;
  }

  const list = (query = '', auth: { token?: string } = admin()) =>
    s.api<string[]>('GET', `/admin/unadopted${query}`, auth);

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    assert.equal(
      (await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } })).status,
      201,
    );
    const made = await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'existing' } });
    assert.equal(made.status, 201, made.text);
    root = s.config.repository.root;
    source = await g.workTree('trunk');
    await g.commit(source, 'README.md', '# old\n');
    await g.git(['checkout', '--quiet', '-b', 'topic'], source);
    head = await g.commit(source, 'topic.txt', 'topic\n');
    await g.git(['checkout', '--quiet', 'trunk'], source);
    await g.git(['tag', 'v1'], source);
    await plant('alice', 'old');
    await plant('acme', 'lib');
    await plant('ghost-user', 'x'); // no such account: not listed
    await plant('alice', 'existing'); // a repository of that name exists: not listed
    fs.mkdirSync(path.join(root, 'alice', 'notgit.git'), { recursive: true }); // not a repository
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
  });

  it('lists the bare repositories no repository refers to, with patterns and pages', async () => {
    const r = await list();
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, ['acme/lib', 'alice/old']);
    assert.equal(r.headers.get('x-total-count'), '2');
    assert.deepEqual((await list('?pattern=alice/*')).body, ['alice/old']);
    assert.deepEqual((await list('?pattern=ALICE/o*')).body, ['alice/old']);
    assert.deepEqual((await list('?pattern=lib')).body, ['acme/lib']);
    assert.deepEqual((await list('?pattern=acme')).body, ['acme/lib']);
    assert.deepEqual((await list('?pattern=nothing*')).body, []);
    const paged = await list('?limit=1&page=2');
    assert.deepEqual(paged.body, ['alice/old']);
    assert.equal(paged.headers.get('x-total-count'), '2');
  });

  it('is for site administrators only', async () => {
    assert.equal((await list('', { token: alice.token })).status, 403);
    assert.equal((await list('', {})).status, 401);
    assert.equal((await s.api('POST', '/admin/unadopted/alice/old', { token: alice.token })).status, 403);
    assert.equal((await s.api('DELETE', '/admin/unadopted/alice/old', { token: alice.token })).status, 403);
    assert.equal((await s.api('POST', '/admin/unadopted/alice/old')).status, 401);
    assert.ok(fs.existsSync(path.join(root, 'alice', 'old.git')));
  });

  it('adopts one as a private repository of its owner, with its branches and tags', async () => {
    const r = await s.api('POST', '/admin/unadopted/alice/old', admin());
    assert.equal(r.status, 204, r.text);
    assert.ok(!fs.existsSync(path.join(root, 'alice', 'old.git')));
    const repo = await s.api<RepoJson>('GET', '/repos/alice/old', { token: alice.token });
    assert.equal(repo.status, 200, repo.text);
    assert.equal(repo.body.private, true);
    assert.equal(repo.body.empty, false);
    assert.equal(repo.body.default_branch, 'trunk');
    const branches = await s.api<Array<{ name: string; commit: { id: string } }>>(
      'GET',
      '/repos/alice/old/branches',
      { token: alice.token },
    );
    assert.deepEqual(branches.body.map((b) => b.name).sort(), ['topic', 'trunk']);
    assert.equal(branches.body.find((b) => b.name === 'topic')!.commit.id, head);
    const tags = await s.api<Array<{ name: string }>>('GET', '/repos/alice/old/tags', { token: alice.token });
    assert.deepEqual(
      tags.body.map((t) => t.name),
      ['v1'],
    );
    // It clones and takes pushes like any repository.
    const wt = await g.workTree();
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'old', [alice.name, alice.password]), 'c'], wt);
    await g.commit(path.join(wt, 'c'), 'new.txt', 'new\n');
    await g.git(['push', '--quiet', 'origin', 'trunk'], path.join(wt, 'c'));
    assert.deepEqual((await list()).body, ['acme/lib']);
    // Gone from the list, and not adoptable twice.
    assert.equal((await s.api('POST', '/admin/unadopted/alice/old', admin())).status, 404);
  });

  it('refuses what cannot be adopted: 404, 409, 422', async () => {
    const cases: Array<[string, number]> = [
      ['ghost-user/x', 404], // no such owner
      ['alice/missing', 404], // no such directory
      ['alice/notgit', 404], // not a repository
      ['alice/existing', 409], // the owner has a repository of that name
      ['alice/bad%20name', 422],
      ['alice/-', 422],
      ['alice/x.git', 422],
      ['..x/old', 422],
      ['a%2Fb/old', 422],
      ['alice/..%2F..%2Fetc', 422],
    ];
    for (const [target, status] of cases) {
      const r = await s.api('POST', `/admin/unadopted/${target}`, admin());
      assert.equal(r.status, status, `${target}: ${r.text}`);
    }
    assert.ok(fs.existsSync(path.join(root, 'ghost-user', 'x.git')));
    assert.ok(fs.existsSync(path.join(root, 'alice', 'existing.git')));
    // Nothing half-made is left behind.
    const tmp = path.join(root, '.tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], []);
  });

  it('adopts into organizations', async () => {
    const r = await s.api('POST', '/admin/unadopted/acme/lib', admin());
    assert.equal(r.status, 204, r.text);
    const repo = await s.api<RepoJson>('GET', '/repos/acme/lib', { token: alice.token });
    assert.equal(repo.status, 200, repo.text);
    assert.equal(repo.body.full_name, 'acme/lib');
    assert.deepEqual((await list()).body, []);
  });

  it('deletes the directory of one', async () => {
    await plant('acme', 'junk');
    assert.deepEqual((await list()).body, ['acme/junk']);
    const r = await s.api('DELETE', '/admin/unadopted/acme/junk', admin());
    assert.equal(r.status, 204, r.text);
    assert.ok(!fs.existsSync(path.join(root, 'acme', 'junk.git')));
    assert.equal((await s.api('DELETE', '/admin/unadopted/acme/junk', admin())).status, 404);
    assert.equal((await s.api('DELETE', '/admin/unadopted/ghost-user/x', admin())).status, 404);
    assert.equal((await s.api('DELETE', '/admin/unadopted/alice/..%2Fx', admin())).status, 422);
    assert.equal((await s.api('DELETE', '/admin/unadopted/..x/alice', admin())).status, 422);
    // A directory left beside a repository of the same name goes; the repository stays.
    assert.equal((await s.api('DELETE', '/admin/unadopted/alice/existing', admin())).status, 204);
    assert.ok(!fs.existsSync(path.join(root, 'alice', 'existing.git')));
    assert.equal((await s.api('GET', '/repos/alice/existing', { token: alice.token })).status, 200);
    // Nothing outside the repositories root was touched.
    assert.ok(fs.existsSync(root));
  });
});
