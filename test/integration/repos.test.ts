// Repositories over HTTP: creation for users, organizations and by administrators (auto-init
// templates, names, conflicts, what a refused creation leaves behind), reading by name and id,
// editing, deletion, transfer, the lists (/user/repos, /users/{u}/repos, /orgs/{org}/repos,
// /repos/search) with their visibility rules and orderings, collaborators and team repositories.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Msg {
  message: string;
  url: string;
}

interface RepoJson {
  id: number;
  owner: { id: number; login: string };
  name: string;
  full_name: string;
  description: string;
  empty: boolean;
  private: boolean;
  fork: boolean;
  template: boolean;
  mirror: boolean;
  size: number;
  html_url: string;
  url: string;
  clone_url: string;
  ssh_url: string;
  website: string;
  default_branch: string;
  archived: boolean;
  archived_at: string;
  created_at: string;
  updated_at: string;
  internal: boolean;
  permissions: { admin: boolean; push: boolean; pull: boolean };
  has_issues: boolean;
  has_wiki: boolean;
  has_pull_requests: boolean;
  has_projects: boolean;
  has_releases: boolean;
  has_packages: boolean;
  has_actions: boolean;
  internal_tracker?: Record<string, boolean>;
  parent: RepoJson | null;
  repo_transfer: null;
  mirror_updated: string;
}

interface Search {
  ok: boolean;
  data: RepoJson[];
}

interface UserJson {
  id: number;
  login: string;
}

interface QuotaJson {
  used: { size: { repos: { public: number; private: number } } };
}

/** Forgejo's Repository definition; external_tracker and external_wiki are left out when unset. */
const REPO_KEYS = [
  'allow_fast_forward_only_merge',
  'allow_merge_commits',
  'allow_rebase',
  'allow_rebase_explicit',
  'allow_rebase_update',
  'allow_squash_merge',
  'archived',
  'archived_at',
  'avatar_url',
  'clone_url',
  'created_at',
  'default_allow_maintainer_edit',
  'default_branch',
  'default_delete_branch_after_merge',
  'default_merge_style',
  'default_update_style',
  'description',
  'empty',
  'fork',
  'forks_count',
  'full_name',
  'globally_editable_wiki',
  'has_actions',
  'has_issues',
  'has_packages',
  'has_projects',
  'has_pull_requests',
  'has_releases',
  'has_wiki',
  'html_url',
  'id',
  'ignore_whitespace_conflicts',
  'internal',
  'internal_tracker',
  'language',
  'languages_url',
  'link',
  'mirror',
  'mirror_interval',
  'mirror_updated',
  'name',
  'object_format_name',
  'open_issues_count',
  'open_pr_counter',
  'original_url',
  'owner',
  'parent',
  'permissions',
  'private',
  'release_counter',
  'repo_transfer',
  'size',
  'ssh_url',
  'stars_count',
  'template',
  'topics',
  'updated_at',
  'url',
  'watchers_count',
  'website',
  'wiki_branch',
];

const EPOCH = '1970-01-01T00:00:00Z';

describe('repositories', () => {
  let s: TestServer;
  let home: string;
  let admin: U;
  /** Owns most repositories and the organizations. */
  let alice: U;
  /** Member of acme's "makers" team (write, may create repositories). */
  let bob: U;
  /** Member of acme's "viewers" team (read, may not create repositories). */
  let carol: U;
  /** Collaborator on some of alice's repositories. */
  let dave: U;
  /** Nobody: no membership, no collaboration. */
  let eve: U;
  let makersId: number;
  let viewersId: number;

  const tok = (u: U | null) => (u ? { token: u.token } : {});
  const names = (list: RepoJson[]) => list.map((r) => r.full_name);
  const dirOf = (id: number) => path.join(s.config.repository.root, `${id}.git`);
  const repoDirs = () =>
    fs.existsSync(s.config.repository.root) ? fs.readdirSync(s.config.repository.root).sort() : [];

  async function create(u: U, body: Record<string, unknown>, where = '/user/repos'): Promise<RepoJson> {
    const r = await s.api<RepoJson>('POST', where, { token: u.token, body });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function getRepo(u: U | null, full: string) {
    return s.api<RepoJson>('GET', `/repos/${full}`, tok(u));
  }

  async function gitIn(dir: string, args: string[]): Promise<string> {
    const r = await run('git', ['--git-dir', dir, ...args], {
      env: { PATH: process.env['PATH'], HOME: home },
    });
    return r.stdout;
  }

  /** Pushes a new commit on `branch` (a new history) to owner/repo as `u`. */
  async function pushBranch(u: U, full: string, branch: string): Promise<string> {
    const dir = fs.mkdtempSync(path.join(home, 'wt-'));
    const env = {
      PATH: process.env['PATH'],
      HOME: home,
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@example.com',
    };
    const g = (args: string[]) => run('git', args, { cwd: dir, env });
    await g(['init', '--quiet', `--initial-branch=${branch}`]);
    fs.writeFileSync(path.join(dir, `${branch}.txt`), `${branch}\n`);
    await g(['add', '.']);
    await g(['commit', '--quiet', '-m', `on ${branch}`]);
    const target = new URL(`${s.url}/${full}.git`);
    target.username = u.name;
    target.password = u.password;
    await g(['push', '--quiet', target.toString(), `HEAD:refs/heads/${branch}`]);
    return (await g(['rev-parse', 'HEAD'])).stdout.trim();
  }

  function objectBytes(id: number): number {
    let total = 0;
    const walk = (p: string) => {
      for (const e of fs.readdirSync(p, { withFileTypes: true })) {
        const full = path.join(p, e.name);
        if (e.isDirectory()) walk(full);
        else if (e.isFile()) total += fs.statSync(full).size;
      }
    };
    walk(path.join(dirOf(id), 'objects'));
    return total;
  }

  async function usage(u: U, org?: string) {
    const r = await s.api<QuotaJson>('GET', org ? `/orgs/${org}/quota` : '/user/quota', { token: u.token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.repos;
  }

  before(async () => {
    s = await startServer();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-repos-'));
    admin = { ...s.admin, id: 1 };
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    eve = await s.createUser('eve');
    for (const [org, visibility] of [
      ['acme', 'public'],
      ['hidden', 'private'],
    ]) {
      const r = await s.api('POST', '/orgs', { token: alice.token, body: { username: org, visibility } });
      assert.equal(r.status, 201, r.text);
    }
    const makers = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'makers', permission: 'write', units: ['repo.code'], can_create_org_repo: true },
    });
    assert.equal(makers.status, 201, makers.text);
    makersId = makers.body.id;
    const viewers = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'viewers', permission: 'read', units: ['repo.code'] },
    });
    assert.equal(viewers.status, 201, viewers.text);
    viewersId = viewers.body.id;
    assert.equal((await s.api('PUT', `/teams/${makersId}/members/bob`, tok(alice))).status, 204);
    assert.equal((await s.api('PUT', `/teams/${viewersId}/members/carol`, tok(alice))).status, 204);
  });

  after(async () => {
    await s.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  describe('POST /user/repos', () => {
    it('creates an empty repository with Forgejo’s Repository fields and a bare directory', async () => {
      const r = await s.api<RepoJson>('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'Plain', description: 'just a repo' },
      });
      assert.equal(r.status, 201, r.text);
      const repo = r.body;
      assert.deepEqual(Object.keys(repo).sort(), REPO_KEYS);
      assert.equal(repo.name, 'Plain');
      assert.equal(repo.full_name, 'alice/Plain');
      assert.equal(repo.owner.login, 'alice');
      assert.equal(repo.description, 'just a repo');
      assert.equal(repo.empty, true);
      assert.equal(repo.private, false);
      assert.equal(repo.fork, false);
      assert.equal(repo.mirror, false);
      assert.equal(repo.template, false);
      assert.equal(repo.size, 0);
      assert.equal(repo.default_branch, 'main');
      assert.equal(repo.archived, false);
      assert.equal(repo.archived_at, EPOCH);
      assert.equal(repo.internal, false);
      assert.equal(repo.parent, null);
      assert.equal(repo.repo_transfer, null);
      assert.deepEqual(repo.permissions, { admin: true, push: true, pull: true });
      assert.deepEqual(repo.internal_tracker, {
        enable_time_tracker: true,
        allow_only_contributors_to_track_time: true,
        enable_issue_dependencies: true,
      });
      assert.equal(repo.html_url, `${s.url}/alice/Plain`);
      assert.equal(repo.clone_url, `${s.url}/alice/Plain.git`);
      assert.equal(repo.url, `${s.url}/api/v1/repos/alice/Plain`);
      // [server] SSH_PORT follows SSH_LISTEN_PORT (2222): an ssh:// URL; port 22 gives the scp-like form.
      assert.equal(repo.ssh_url, 'ssh://git@127.0.0.1:2222/alice/Plain.git');
      assert.match(repo.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const dir = dirOf(repo.id);
      assert.equal((await gitIn(dir, ['rev-parse', '--is-bare-repository'])).trim(), 'true');
      assert.equal((await gitIn(dir, ['symbolic-ref', 'HEAD'])).trim(), 'refs/heads/main');
      assert.equal((await gitIn(dir, ['for-each-ref'])).trim(), '');
    });

    it('auto_init writes README (name and description), .gitignore and LICENSE on default_branch', async () => {
      const before = await usage(alice);
      const repo = await create(alice, {
        name: 'inited',
        description: 'Hello there',
        auto_init: true,
        readme: 'Default',
        gitignores: 'Node,Go',
        license: 'MIT',
        default_branch: 'trunk',
      });
      assert.equal(repo.empty, false);
      assert.equal(repo.default_branch, 'trunk');
      const dir = dirOf(repo.id);
      assert.equal((await gitIn(dir, ['symbolic-ref', 'HEAD'])).trim(), 'refs/heads/trunk');
      assert.equal((await gitIn(dir, ['rev-list', '--count', 'trunk'])).trim(), '1');
      assert.equal(
        (await gitIn(dir, ['ls-tree', '--name-only', 'trunk'])).trim().split('\n').sort().join(','),
        '.gitignore,LICENSE,README.md',
      );
      assert.equal(await gitIn(dir, ['show', 'trunk:README.md']), '# inited\n\nHello there\n');
      const ignore = await gitIn(dir, ['show', 'trunk:.gitignore']);
      assert.match(ignore, /node_modules\//);
      assert.match(ignore, /\/vendor\//);
      const license = await gitIn(dir, ['show', 'trunk:LICENSE']);
      assert.match(license, /^MIT License/);
      assert.match(license, new RegExp(`Copyright \\(c\\) ${new Date().getUTCFullYear()} alice`));
      assert.equal((await gitIn(dir, ['log', '-1', '--format=%s', 'trunk'])).trim(), 'Initial commit');
      // Its size is in the repository and in the owner's usage.
      const bytes = objectBytes(repo.id);
      assert.ok(bytes > 0);
      assert.equal(repo.size, Math.floor(bytes / 1024));
      const now = await usage(alice);
      assert.deepEqual(now, { public: before.public + bytes, private: before.private });
    });

    it('auto_init without readme uses the Default template; a readme without auto_init is ignored', async () => {
      const a = await create(alice, { name: 'default-readme', auto_init: true });
      assert.equal(a.default_branch, 'main');
      assert.equal(await gitIn(dirOf(a.id), ['show', 'main:README.md']), '# default-readme\n\n\n');
      const b = await create(alice, { name: 'no-init', readme: 'DoesNotExist' });
      assert.equal(b.empty, true);
    });

    it('a readme template that does not exist answers 400 and creates nothing', async () => {
      const dirs = repoDirs();
      const r = await s.api<Msg>('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'bad-readme', auto_init: true, readme: 'Fancy' },
      });
      assert.equal(r.status, 400);
      assert.match(r.body.message, /readme template does not exist/);
      assert.equal((await getRepo(alice, 'alice/bad-readme')).status, 404);
      assert.deepEqual(repoDirs(), dirs);
      const rows = await s.ctx.db
        .selectFrom('repository')
        .select('id')
        .where('lower_name', '=', 'bad-readme')
        .execute();
      assert.equal(rows.length, 0);
      // The name is still free.
      await create(alice, { name: 'bad-readme', auto_init: true });
    });

    it('unknown gitignore or license templates answer 422 and create nothing', async () => {
      const dirs = repoDirs();
      for (const body of [
        { name: 'bad-ignore', auto_init: true, gitignores: 'Node,Cobol' },
        { name: 'bad-license', auto_init: true, license: 'WTFPL-9' },
      ]) {
        const r = await s.api<Msg>('POST', '/user/repos', { token: alice.token, body });
        assert.equal(r.status, 422, r.text);
        assert.match(r.body.message, /template does not exist/);
        assert.equal((await getRepo(alice, `alice/${body.name}`)).status, 404);
      }
      assert.deepEqual(repoDirs(), dirs);
    });

    it('a duplicate name (in any case) is a 409', async () => {
      await create(alice, { name: 'twice' });
      for (const name of ['twice', 'TWICE']) {
        const r = await s.api<Msg>('POST', '/user/repos', { token: alice.token, body: { name } });
        assert.equal(r.status, 409);
        assert.equal(r.body.message, 'The repository with the same name already exists.');
      }
      // Another owner may use the name.
      await create(bob, { name: 'twice' });
    });

    it('refuses invalid names with 422', async () => {
      const dirs = repoDirs();
      for (const name of [
        '',
        '.',
        '..',
        '-',
        'repo.git',
        'Repo.GIT',
        'x.wiki',
        'a/b',
        '../escape',
        'a b',
        'naïve',
        'semi;colon',
        'x'.repeat(101),
      ]) {
        const r = await s.api<Msg>('POST', '/user/repos', { token: alice.token, body: { name } });
        assert.equal(r.status, 422, `${JSON.stringify(name)}: ${r.text}`);
        assert.match(r.body.message, /^\[Name\]: /);
      }
      assert.deepEqual(repoDirs(), dirs);
      await create(alice, { name: 'y'.repeat(100) });
      await create(alice, { name: 'dots.and-dashes_ok' });
    });

    it('validates the body: types, description length, default branch name; bad JSON is a 400', async () => {
      for (const body of [
        {},
        { name: 5 },
        { name: 'typed', private: 'yes' },
        { name: 'typed', auto_init: 1 },
        { name: 'typed', description: 'd'.repeat(2049) },
        { name: 'typed', default_branch: 'bad..branch' },
        { name: 'typed', default_branch: 'has space' },
        { name: 'typed', object_format_name: 'md5' },
      ]) {
        const r = await s.api('POST', '/user/repos', { token: alice.token, body });
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      const raw = await s.api('POST', '/user/repos', { token: alice.token, raw: '{"name": ' });
      assert.equal(raw.status, 400);
      assert.equal((await getRepo(alice, 'alice/typed')).status, 404);
    });

    it('needs a signed-in caller with the write:repository scope', async () => {
      assert.equal((await s.api('POST', '/user/repos', { body: { name: 'anon' } })).status, 401);
      const read = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'read-repo', scopes: ['read:repository'] },
      });
      assert.equal(read.status, 201);
      const r = await s.api('POST', '/user/repos', { token: read.body.sha1, body: { name: 'scoped' } });
      assert.equal(r.status, 403);
      const write = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'write-repo', scopes: ['write:repository'] },
      });
      await create({ ...alice, token: write.body.sha1 }, { name: 'scoped' });
      // Basic authentication works as well.
      const b = await s.api('POST', '/user/repos', {
        basic: [alice.name, alice.password],
        body: { name: 'basic' },
      });
      assert.equal(b.status, 201);
    });
  });

  describe('POST /orgs/{org}/repos and /admin/users/{username}/repos', () => {
    it('lets organization owners and teams with can_create_org_repo create', async () => {
      const byOwner = await create(alice, { name: 'org-one', private: true }, '/orgs/acme/repos');
      assert.equal(byOwner.owner.login, 'acme');
      assert.equal(byOwner.full_name, 'acme/org-one');
      const byMaker = await create(bob, { name: 'org-two' }, '/orgs/acme/repos');
      assert.equal(byMaker.owner.login, 'acme');
    });

    it('makes a team creator who is no admin of the new repository its admin collaborator', async () => {
      await create(bob, { name: 'makers-private', private: true }, '/orgs/acme/repos');
      const mine = await getRepo(bob, 'acme/makers-private');
      assert.equal(mine.status, 200, mine.text);
      assert.deepEqual(mine.body.permissions, { admin: true, push: true, pull: true });
      await pushBranch(bob, 'acme/makers-private', 'main');
      assert.equal((await getRepo(bob, 'acme/makers-private')).body.empty, false);
      const collaborators = (full: string) =>
        s.api<UserJson[]>('GET', `/repos/${full}/collaborators`, tok(alice)).then((r) => {
          assert.equal(r.status, 200, r.text);
          return r.body.map((u) => u.login);
        });
      assert.deepEqual(await collaborators('acme/makers-private'), ['bob']);
      const perm = await s.api<{ permission: string }>(
        'GET',
        '/repos/acme/makers-private/collaborators/bob/permission',
        tok(bob),
      );
      assert.equal(perm.body.permission, 'admin');
      // Another member of the organization, outside the creating team, still sees nothing.
      assert.equal((await getRepo(carol, 'acme/makers-private')).status, 404);
      assert.equal((await getRepo(eve, 'acme/makers-private')).status, 404);
      // An owner is admin already: no collaboration.
      await create(alice, { name: 'owners-private', private: true }, '/orgs/acme/repos');
      assert.deepEqual(await collaborators('acme/owners-private'), []);
      // A fork into the organization follows the same rule.
      await create(alice, { name: 'to-fork', auto_init: true });
      const fork = await s.api<RepoJson>('POST', '/repos/alice/to-fork/forks', {
        token: bob.token,
        body: { organization: 'acme', name: 'forked-by-bob' },
      });
      assert.equal(fork.status, 202, fork.text);
      assert.deepEqual(await collaborators('acme/forked-by-bob'), ['bob']);
    });

    it('refuses other members and outsiders with 403, hides private organizations with 404', async () => {
      for (const u of [carol, eve]) {
        const r = await s.api('POST', '/orgs/acme/repos', { token: u.token, body: { name: `by-${u.name}` } });
        assert.equal(r.status, 403, u.name);
      }
      // The permission is checked before the templates.
      const bad = await s.api('POST', '/orgs/acme/repos', {
        token: carol.token,
        body: { name: 'x', auto_init: true, readme: 'Nope' },
      });
      assert.equal(bad.status, 403);
      assert.equal(
        (await s.api('POST', '/orgs/hidden/repos', { token: eve.token, body: { name: 'x' } })).status,
        404,
      );
      assert.equal(
        (await s.api('POST', '/orgs/no-such-org/repos', { token: alice.token, body: { name: 'x' } })).status,
        404,
      );
      assert.equal((await s.api('POST', '/orgs/acme/repos', { body: { name: 'x' } })).status, 401);
      await create(alice, { name: 'secret-org-repo', private: true }, '/orgs/hidden/repos');
    });

    it('lets site administrators create for any user, and nobody else', async () => {
      const r = await s.api<RepoJson>('POST', '/admin/users/dave/repos', {
        token: admin.token,
        body: { name: 'made-for-dave', auto_init: true },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.owner.login, 'dave');
      assert.equal((await getRepo(dave, 'dave/made-for-dave')).body.permissions.admin, true);
      const denied = await s.api('POST', '/admin/users/dave/repos', {
        token: alice.token,
        body: { name: 'x' },
      });
      assert.equal(denied.status, 403);
      assert.equal((await s.api('POST', '/admin/users/dave/repos', { body: { name: 'x' } })).status, 401);
      const missing = await s.api('POST', '/admin/users/nobody-here/repos', {
        token: admin.token,
        body: { name: 'x' },
      });
      assert.equal(missing.status, 404);
      const dup = await s.api('POST', '/admin/users/dave/repos', {
        token: admin.token,
        body: { name: 'made-for-dave' },
      });
      assert.equal(dup.status, 409);
    });
  });

  describe('reading a repository', () => {
    before(async () => {
      await create(alice, { name: 'open', auto_init: true });
      await create(alice, { name: 'closed', private: true, auto_init: true });
    });

    it('shows public repositories to everyone, with permissions for the caller', async () => {
      const anon = await getRepo(null, 'alice/open');
      assert.equal(anon.status, 200);
      assert.deepEqual(anon.body.permissions, { admin: false, push: false, pull: true });
      assert.deepEqual((await getRepo(eve, 'alice/open')).body.permissions, {
        admin: false,
        push: false,
        pull: true,
      });
      assert.deepEqual((await getRepo(alice, 'alice/open')).body.permissions, {
        admin: true,
        push: true,
        pull: true,
      });
      assert.deepEqual((await getRepo(admin, 'alice/open')).body.permissions, {
        admin: true,
        push: true,
        pull: true,
      });
      const cased = await getRepo(null, 'ALICE/Open');
      assert.equal(cased.status, 200);
      assert.equal(cased.body.full_name, 'alice/open');
    });

    it('hides private repositories (404) from anonymous callers and outsiders', async () => {
      assert.equal((await getRepo(null, 'alice/closed')).status, 404);
      const r = await getRepo(eve, 'alice/closed');
      assert.equal(r.status, 404);
      assert.equal((r.body as unknown as Msg).message.includes('closed'), true);
      assert.equal((await getRepo(alice, 'alice/closed')).status, 200);
      assert.equal((await getRepo(admin, 'alice/closed')).status, 200);
      assert.equal((await getRepo(alice, 'alice/never-was')).status, 404);
      assert.equal((await getRepo(alice, 'nobody-at-all/open')).status, 404);
    });

    it('GET /repositories/{id} follows the same rules', async () => {
      const open = (await getRepo(alice, 'alice/open')).body;
      const closed = (await getRepo(alice, 'alice/closed')).body;
      const r = await s.api<RepoJson>('GET', `/repositories/${open.id}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.full_name, 'alice/open');
      assert.equal((await s.api('GET', `/repositories/${closed.id}`)).status, 404);
      assert.equal((await s.api('GET', `/repositories/${closed.id}`, tok(eve))).status, 404);
      assert.equal(
        (await s.api<RepoJson>('GET', `/repositories/${closed.id}`, tok(alice))).body.name,
        'closed',
      );
      assert.equal((await s.api('GET', '/repositories/999999')).status, 404);
      assert.equal((await s.api('GET', '/repositories/abc')).status, 422);
    });

    it('public repositories of a private organization are internal: members only', async () => {
      const repo = await create(alice, { name: 'inside' }, '/orgs/hidden/repos');
      assert.equal(repo.internal, true);
      assert.equal(repo.private, false);
      assert.equal((await getRepo(null, 'hidden/inside')).status, 404);
      assert.equal((await getRepo(eve, 'hidden/inside')).status, 404);
      assert.equal((await getRepo(alice, 'hidden/inside')).status, 200);
    });
  });

  describe('restricted users and public-only tokens', () => {
    it('a restricted user sees only what was given to them, not every public repository', async () => {
      const rita = await s.createUser('rita');
      const made = await s.api('PATCH', '/admin/users/rita', {
        token: admin.token,
        body: { restricted: true },
      });
      assert.equal(made.status, 200, made.text);
      assert.equal((await getRepo(null, 'alice/open')).status, 200);
      assert.equal((await getRepo(rita, 'alice/open')).status, 404);
      const listed = await s.api<RepoJson[]>('GET', '/users/alice/repos?limit=50', tok(rita));
      assert.equal(listed.status, 200);
      assert.deepEqual(names(listed.body), []);
      const found = await s.api<Search>('GET', '/repos/search?q=open', tok(rita));
      assert.deepEqual(names(found.body.data), []);
      // Given access, they see it; their own repositories as always.
      await s.api('PUT', '/repos/alice/open/collaborators/rita', {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal((await getRepo(rita, 'alice/open')).status, 200);
      const again = await s.api<RepoJson[]>('GET', '/users/alice/repos?limit=50', tok(rita));
      assert.deepEqual(names(again.body), ['alice/open']);
      await create(rita, { name: 'ritas' });
      assert.equal((await getRepo(rita, 'rita/ritas')).status, 200);
      const mine = await s.api<RepoJson[]>('GET', '/user/repos', tok(rita));
      assert.deepEqual(names(mine.body), ['alice/open', 'rita/ritas']);
    });

    it('a public-only token sees public repositories only, its owner’s private ones included', async () => {
      const t = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'public-only', scopes: ['public-only', 'read:repository'] },
      });
      assert.equal(t.status, 201, t.text);
      const publicOnly = { ...alice, token: t.body.sha1 };
      assert.equal((await getRepo(publicOnly, 'alice/closed')).status, 404);
      assert.equal((await getRepo(publicOnly, 'alice/open')).status, 200);
      const mine = await s.api<RepoJson[]>('GET', '/user/repos?limit=50', tok(publicOnly));
      assert.equal(mine.status, 200);
      assert.ok(names(mine.body).includes('alice/open'));
      assert.ok(
        mine.body.every((r) => !r.private),
        names(mine.body).join(),
      );
      const theirs = await s.api<RepoJson[]>('GET', '/users/alice/repos?limit=50', tok(publicOnly));
      assert.ok(theirs.body.every((r) => !r.private));
      const found = await s.api<Search>('GET', '/repos/search?q=closed', tok(publicOnly));
      assert.deepEqual(names(found.body.data), []);
      const full = await s.api<Search>('GET', '/repos/search?q=closed', tok(alice));
      assert.deepEqual(names(full.body.data), ['alice/closed']);
    });
  });

  describe('PATCH /repos/{owner}/{repo}', () => {
    it('edits the basic properties and the units', async () => {
      await create(alice, { name: 'editable', auto_init: true });
      const r = await s.api<RepoJson>('PATCH', '/repos/alice/editable', {
        token: alice.token,
        body: {
          description: 'new words',
          website: 'https://example.com',
          template: true,
          has_issues: false,
          has_wiki: false,
          has_pull_requests: false,
          has_projects: false,
          has_releases: false,
          has_packages: false,
          has_actions: false,
        },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.description, 'new words');
      assert.equal(r.body.website, 'https://example.com');
      assert.equal(r.body.template, true);
      for (const k of [
        'has_issues',
        'has_wiki',
        'has_pull_requests',
        'has_projects',
        'has_releases',
        'has_packages',
        'has_actions',
      ] as const) {
        assert.equal(r.body[k], false, k);
      }
      assert.equal('internal_tracker' in r.body, false);
      const again = await getRepo(null, 'alice/editable');
      assert.equal(again.body.description, 'new words');
      assert.equal(again.body.has_issues, false);
      // Only the fields sent change.
      const partial = await s.api<RepoJson>('PATCH', '/repos/alice/editable', {
        token: alice.token,
        body: { has_issues: true },
      });
      assert.equal(partial.body.has_issues, true);
      assert.equal(partial.body.description, 'new words');
    });

    it('renames: the new name answers, the old redirects to it, the directory stays', async () => {
      const repo = await create(alice, { name: 'before-name', auto_init: true });
      const r = await s.api<RepoJson>('PATCH', '/repos/alice/before-name', {
        token: alice.token,
        body: { name: 'after-name' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.full_name, 'alice/after-name');
      assert.equal(r.body.id, repo.id);
      // The former name redirects, as Forgejo's repo_redirect does.
      const moved = await fetch(`${s.url}/api/v1/repos/alice/before-name`, {
        redirect: 'manual',
        headers: { authorization: `token ${alice.token}` },
      });
      assert.equal(moved.status, 307);
      assert.equal(moved.headers.get('location'), '/api/v1/repos/alice/after-name');
      assert.equal((await getRepo(alice, 'alice/after-name')).status, 200);
      assert.ok(fs.existsSync(dirOf(repo.id)));
      // A case change of its own name is fine; another repository's name or a bad one is a 422.
      const cased = await s.api<RepoJson>('PATCH', '/repos/alice/after-name', {
        token: alice.token,
        body: { name: 'After-Name' },
      });
      assert.equal(cased.status, 200);
      assert.equal(cased.body.name, 'After-Name');
      for (const name of ['open', 'OPEN', '..', 'x.git', 'a/b', '']) {
        const bad = await s.api('PATCH', '/repos/alice/after-name', { token: alice.token, body: { name } });
        assert.equal(bad.status, 422, `${name}: ${bad.text}`);
      }
      assert.equal((await getRepo(alice, 'alice/After-Name')).status, 200);
    });

    it('default_branch must exist on a non-empty repository; on an empty one anything valid goes', async () => {
      const repo = await create(alice, { name: 'branchy', auto_init: true });
      await pushBranch(alice, 'alice/branchy', 'develop');
      const missing = await s.api<Msg>('PATCH', '/repos/alice/branchy', {
        token: alice.token,
        body: { default_branch: 'nope' },
      });
      assert.equal(missing.status, 422);
      assert.match(missing.body.message, /DefaultBranch/);
      const okay = await s.api<RepoJson>('PATCH', '/repos/alice/branchy', {
        token: alice.token,
        body: { default_branch: 'develop' },
      });
      assert.equal(okay.status, 200);
      assert.equal(okay.body.default_branch, 'develop');
      assert.equal((await gitIn(dirOf(repo.id), ['symbolic-ref', 'HEAD'])).trim(), 'refs/heads/develop');

      const empty = await create(alice, { name: 'branchless' });
      const e = await s.api<RepoJson>('PATCH', '/repos/alice/branchless', {
        token: alice.token,
        body: { default_branch: 'future' },
      });
      assert.equal(e.status, 200);
      assert.equal(e.body.default_branch, 'future');
      assert.equal((await gitIn(dirOf(empty.id), ['symbolic-ref', 'HEAD'])).trim(), 'refs/heads/future');
      const invalid = await s.api('PATCH', '/repos/alice/branchless', {
        token: alice.token,
        body: { default_branch: 'bad..name' },
      });
      assert.equal(invalid.status, 422);
    });

    it('private moves the size between public and private usage and hides the repository', async () => {
      const repo = await create(alice, { name: 'flip', auto_init: true, license: 'MIT' });
      const bytes = objectBytes(repo.id);
      const before = await usage(alice);
      const r = await s.api<RepoJson>('PATCH', '/repos/alice/flip', {
        token: alice.token,
        body: { private: true },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.private, true);
      assert.deepEqual(await usage(alice), {
        public: before.public - bytes,
        private: before.private + bytes,
      });
      assert.equal((await getRepo(null, 'alice/flip')).status, 404);
      await s.api('PATCH', '/repos/alice/flip', { token: alice.token, body: { private: false } });
      assert.deepEqual(await usage(alice), before);
      assert.equal((await getRepo(null, 'alice/flip')).status, 200);
    });

    it('archives and unarchives, with archived_at', async () => {
      await create(alice, { name: 'attic' });
      const a = await s.api<RepoJson>('PATCH', '/repos/alice/attic', {
        token: alice.token,
        body: { archived: true },
      });
      assert.equal(a.status, 200);
      assert.equal(a.body.archived, true);
      assert.notEqual(a.body.archived_at, EPOCH);
      assert.ok(Math.abs(Date.parse(a.body.archived_at) - Date.now()) < 60_000);
      const u = await s.api<RepoJson>('PATCH', '/repos/alice/attic', {
        token: alice.token,
        body: { archived: false },
      });
      assert.equal(u.body.archived, false);
      assert.equal(u.body.archived_at, EPOCH);
    });

    it('is for repository administrators: 403 for writers and readers, 404 when hidden, 401 anonymous', async () => {
      await create(alice, { name: 'guarded', private: true });
      for (const [u, permission] of [
        [dave, 'write'],
        [carol, 'read'],
      ] as const) {
        const put = await s.api('PUT', `/repos/alice/guarded/collaborators/${u.name}`, {
          token: alice.token,
          body: { permission },
        });
        assert.equal(put.status, 204);
        const r = await s.api('PATCH', '/repos/alice/guarded', {
          token: u.token,
          body: { description: 'x' },
        });
        assert.equal(r.status, 403, u.name);
      }
      assert.equal(
        (await s.api('PATCH', '/repos/alice/guarded', { token: eve.token, body: { description: 'x' } }))
          .status,
        404,
      );
      assert.equal(
        (await s.api('PATCH', '/repos/alice/open', { token: eve.token, body: { description: 'x' } })).status,
        403,
      );
      assert.equal(
        (await s.api('PATCH', '/repos/alice/guarded', { body: { description: 'x' } })).status,
        401,
      );
      // An admin collaborator may edit.
      await s.api('PUT', '/repos/alice/guarded/collaborators/dave', {
        token: alice.token,
        body: { permission: 'admin' },
      });
      const r = await s.api<RepoJson>('PATCH', '/repos/alice/guarded', {
        token: dave.token,
        body: { description: 'by dave' },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.description, 'by dave');
      assert.equal((await getRepo(alice, 'alice/guarded')).body.description, 'by dave');
    });

    it('rejects wrong types and over-long fields with 422', async () => {
      for (const body of [
        { private: 'yes' },
        { archived: 1 },
        { description: 'd'.repeat(2049) },
        { website: 'w'.repeat(1025) },
        { name: 7 },
      ]) {
        const r = await s.api('PATCH', '/repos/alice/open', { token: alice.token, body });
        assert.equal(r.status, 422, JSON.stringify(body));
      }
    });
  });

  describe('DELETE /repos/{owner}/{repo}', () => {
    it('is for the owner only: 403 for admin collaborators, 404 when hidden', async () => {
      await create(alice, { name: 'doomed', private: true, auto_init: true });
      await s.api('PUT', '/repos/alice/doomed/collaborators/dave', {
        token: alice.token,
        body: { permission: 'admin' },
      });
      await s.api('PUT', '/repos/alice/doomed/collaborators/carol', {
        token: alice.token,
        body: { permission: 'write' },
      });
      assert.equal((await s.api('DELETE', '/repos/alice/doomed', tok(dave))).status, 403);
      assert.equal((await s.api('DELETE', '/repos/alice/doomed', tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', '/repos/alice/doomed', tok(eve))).status, 404);
      assert.equal((await s.api('DELETE', '/repos/alice/open', tok(eve))).status, 403);
      assert.equal((await s.api('DELETE', '/repos/alice/doomed')).status, 401);
      assert.equal((await getRepo(alice, 'alice/doomed')).status, 200);
    });

    it('removes the row, the collaborations, the bare directory and the usage', async () => {
      const repo = await create(alice, { name: 'goner', private: true, auto_init: true, license: 'MIT' });
      await s.api('PUT', '/repos/alice/goner/collaborators/dave', { token: alice.token });
      const bytes = objectBytes(repo.id);
      const before = await usage(alice);
      const r = await s.api('DELETE', '/repos/alice/goner', tok(alice));
      assert.equal(r.status, 204);
      assert.equal(r.text, '');
      assert.equal((await getRepo(alice, 'alice/goner')).status, 404);
      assert.equal(fs.existsSync(dirOf(repo.id)), false);
      assert.deepEqual(await usage(alice), { public: before.public, private: before.private - bytes });
      const collabs = await s.ctx.db
        .selectFrom('collaboration')
        .select('id')
        .where('repo_id', '=', repo.id)
        .execute();
      assert.equal(collabs.length, 0);
      assert.equal((await s.api('DELETE', '/repos/alice/goner', tok(alice))).status, 404);
      // The name can be used again.
      await create(alice, { name: 'goner' });
    });

    it('organization owners and site administrators delete; team members do not', async () => {
      const repo = await create(alice, { name: 'org-doomed' }, '/orgs/acme/repos');
      assert.equal((await s.api('DELETE', '/repos/acme/org-doomed', tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', '/repos/acme/org-doomed', tok(alice))).status, 204);
      assert.equal(fs.existsSync(dirOf(repo.id)), false);
      await create(eve, { name: 'eves' });
      assert.equal((await s.api('DELETE', '/repos/eve/eves', tok(admin))).status, 204);
    });
  });

  describe('POST /repos/{owner}/{repo}/transfer', () => {
    it('moves a repository to an organization the owner may create in; usage moves along', async () => {
      const repo = await create(alice, { name: 'mover', auto_init: true, license: 'MIT' });
      const bytes = objectBytes(repo.id);
      const aliceBefore = await usage(alice);
      const orgBefore = await usage(alice, 'acme');
      const r = await s.api<RepoJson>('POST', '/repos/alice/mover/transfer', {
        token: alice.token,
        body: { new_owner: 'acme', team_ids: [makersId] },
      });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'acme/mover');
      assert.equal(r.body.owner.login, 'acme');
      assert.equal(r.body.id, repo.id);
      const moved = await fetch(`${s.url}/api/v1/repos/alice/mover`, {
        redirect: 'manual',
        headers: { authorization: `token ${alice.token}` },
      });
      assert.equal(moved.status, 307);
      assert.equal((await getRepo(alice, 'acme/mover')).status, 200);
      assert.deepEqual(await usage(alice), {
        public: aliceBefore.public - bytes,
        private: aliceBefore.private,
      });
      assert.deepEqual(await usage(alice, 'acme'), {
        public: orgBefore.public + bytes,
        private: orgBefore.private,
      });
      // The team given in team_ids has it.
      const teamRepos = await s.api<RepoJson[]>('GET', `/teams/${makersId}/repos`, tok(bob));
      assert.ok(names(teamRepos.body).includes('acme/mover'));
      assert.deepEqual((await getRepo(bob, 'acme/mover')).body.permissions, {
        admin: false,
        push: true,
        pull: true,
      });
    });

    it('site administrators move repositories to users', async () => {
      const repo = await create(dave, { name: 'gift', auto_init: true });
      const bytes = objectBytes(repo.id);
      const eveBefore = await usage(eve);
      const r = await s.api<RepoJson>('POST', '/repos/dave/gift/transfer', {
        token: admin.token,
        body: { new_owner: 'eve' },
      });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'eve/gift');
      assert.deepEqual(await usage(eve), { public: eveBefore.public + bytes, private: eveBefore.private });
      assert.equal((await getRepo(eve, 'eve/gift')).body.permissions.admin, true);
    });

    it('refuses what cannot be done', async () => {
      await create(alice, { name: 'stay', private: true });
      await create(bob, { name: 'stay' });
      await s.api('PUT', '/repos/alice/stay/collaborators/dave', {
        token: alice.token,
        body: { permission: 'admin' },
      });
      const teams = await s.api<Array<{ id: number; permission: string }>>(
        'GET',
        '/orgs/hidden/teams',
        tok(alice),
      );
      const hiddenOwners = teams.body.find((t) => t.permission === 'owner')!.id;
      const cases: Array<[U | null, Record<string, unknown>, number]> = [
        [dave, { new_owner: 'acme' }, 403], // an admin collaborator is not the owner
        [eve, { new_owner: 'eve' }, 404], // cannot see it
        [null, { new_owner: 'eve' }, 401],
        [alice, { new_owner: 'nobody-here' }, 404],
        [alice, { new_owner: 'alice' }, 422], // already there
        [alice, { new_owner: 'bob', team_ids: [makersId] }, 422], // teams only for organizations
        [alice, { new_owner: 'acme', team_ids: [999999] }, 422],
        [alice, { new_owner: 'acme', team_ids: [hiddenOwners] }, 403], // another organization's team
        [alice, {}, 422],
        [alice, { new_owner: 5 }, 422],
      ];
      for (const [u, body, status] of cases) {
        const r = await s.api('POST', '/repos/alice/stay/transfer', { ...tok(u), body });
        assert.equal(r.status, status, `${u?.name ?? 'anonymous'} ${JSON.stringify(body)}: ${r.text}`);
      }
      // bob already has a repository of that name.
      const clash = await s.api('POST', '/repos/alice/stay/transfer', {
        token: admin.token,
        body: { new_owner: 'bob' },
      });
      assert.equal(clash.status, 422);
      // eve may not create in acme: the transfer waits for acme to accept it (as Forgejo); a
      // private organization she cannot see does not exist for her.
      await create(eve, { name: 'eve-stuff' });
      const pending = await s.api<{ full_name: string; repo_transfer: { recipient: { login: string } } }>(
        'POST',
        '/repos/eve/eve-stuff/transfer',
        { token: eve.token, body: { new_owner: 'acme' } },
      );
      assert.equal(pending.status, 202, pending.text);
      assert.equal(pending.body.full_name, 'eve/eve-stuff');
      assert.equal(pending.body.repo_transfer.recipient.login, 'acme');
      assert.equal((await s.api('POST', '/repos/eve/eve-stuff/transfer/reject', tok(alice))).status, 200);
      assert.equal(
        (
          await s.api('POST', '/repos/eve/eve-stuff/transfer', {
            token: eve.token,
            body: { new_owner: 'hidden' },
          })
        ).status,
        404,
      );
      assert.equal((await getRepo(alice, 'alice/stay')).status, 200);
    });
  });

  describe('GET /user/repos', () => {
    let sizer: U;

    before(async () => {
      sizer = await s.createUser('sizer');
      await create(sizer, {
        name: 'a-large',
        auto_init: true,
        license: 'MIT',
        gitignores: 'Node,Python,Java',
      });
      await create(sizer, { name: 'b-empty', private: true });
      await create(sizer, { name: 'c-small', auto_init: true });
    });

    it('orders by size with order_by=size, reversed with reversesize, by name by default', async () => {
      const bySize = await s.api<RepoJson[]>('GET', '/user/repos?order_by=size', tok(sizer));
      assert.equal(bySize.status, 200);
      assert.deepEqual(names(bySize.body), ['sizer/b-empty', 'sizer/c-small', 'sizer/a-large']);
      const sizes = bySize.body.map((r) => r.size);
      assert.ok(sizes[0]! <= sizes[1]! && sizes[1]! <= sizes[2]!);
      const reversed = await s.api<RepoJson[]>('GET', '/user/repos?order_by=reversesize', tok(sizer));
      assert.deepEqual(names(reversed.body), ['sizer/a-large', 'sizer/c-small', 'sizer/b-empty']);
      const byDefault = await s.api<RepoJson[]>('GET', '/user/repos', tok(sizer));
      assert.deepEqual(names(byDefault.body), ['sizer/a-large', 'sizer/b-empty', 'sizer/c-small']);
      const byName = await s.api<RepoJson[]>('GET', '/user/repos?order_by=reversealphabetically', tok(sizer));
      assert.deepEqual(names(byName.body), ['sizer/c-small', 'sizer/b-empty', 'sizer/a-large']);
      const newest = await s.api<RepoJson[]>('GET', '/user/repos?order_by=id', tok(sizer));
      assert.deepEqual(names(newest.body), ['sizer/a-large', 'sizer/b-empty', 'sizer/c-small']);
    });

    it('answers 422 to an unknown order_by and 401 without credentials', async () => {
      const r = await s.api<Msg>('GET', '/user/repos?order_by=biggest', tok(sizer));
      assert.equal(r.status, 422);
      assert.match(r.body.message, /order_by/i);
      assert.equal((await s.api('GET', '/user/repos')).status, 401);
    });

    it('pages with X-Total-Count and Link', async () => {
      const r = await s.api<RepoJson[]>('GET', '/user/repos?limit=1&page=2', tok(sizer));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-total-count'), '3');
      assert.deepEqual(names(r.body), ['sizer/b-empty']);
      assert.match(r.headers.get('link') ?? '', /rel="next"/);
      assert.match(r.headers.get('link') ?? '', /rel="prev"/);
    });

    it('includes owned repositories, collaborations and team access, nothing else', async () => {
      const gina = await s.createUser('gina');
      await create(gina, { name: 'own' });
      await create(alice, { name: 'for-gina', private: true });
      await s.api('PUT', '/repos/alice/for-gina/collaborators/gina', {
        token: alice.token,
        body: { permission: 'read' },
      });
      const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
        token: alice.token,
        body: { name: 'gina-team', permission: 'read', units: ['repo.code'] },
      });
      await s.api('PUT', `/teams/${team.body.id}/members/gina`, tok(alice));
      await create(alice, { name: 'via-team', private: true }, '/orgs/acme/repos');
      await create(alice, { name: 'not-via-team', private: true }, '/orgs/acme/repos');
      assert.equal(
        (await s.api('PUT', `/teams/${team.body.id}/repos/acme/via-team`, tok(alice))).status,
        204,
      );
      const r = await s.api<RepoJson[]>('GET', '/user/repos?limit=50', tok(gina));
      assert.deepEqual(names(r.body).sort(), ['acme/via-team', 'alice/for-gina', 'gina/own']);
      const perms = Object.fromEntries(r.body.map((x) => [x.full_name, x.permissions]));
      assert.deepEqual(perms['alice/for-gina'], { admin: false, push: false, pull: true });
      assert.deepEqual(perms['gina/own'], { admin: true, push: true, pull: true });
    });
  });

  describe('GET /users/{username}/repos and /orgs/{org}/repos', () => {
    it('show private repositories only to those who may read them', async () => {
      const ivan = await s.createUser('ivan');
      await create(ivan, { name: 'i-public' });
      await create(ivan, { name: 'i-private', private: true });
      await create(ivan, { name: 'i-shared', private: true });
      await s.api('PUT', '/repos/ivan/i-shared/collaborators/dave', {
        token: ivan.token,
        body: { permission: 'read' },
      });
      const list = async (u: U | null) => {
        const r = await s.api<RepoJson[]>('GET', '/users/ivan/repos', tok(u));
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('x-total-count'), String(r.body.length));
        return names(r.body);
      };
      assert.deepEqual(await list(null), ['ivan/i-public']);
      assert.deepEqual(await list(eve), ['ivan/i-public']);
      assert.deepEqual(await list(dave), ['ivan/i-public', 'ivan/i-shared']);
      assert.deepEqual(await list(ivan), ['ivan/i-public', 'ivan/i-private', 'ivan/i-shared']);
      assert.deepEqual(await list(admin), ['ivan/i-public', 'ivan/i-private', 'ivan/i-shared']);
      assert.equal((await s.api('GET', '/users/nobody-here/repos')).status, 404);
    });

    it('list an organization’s repositories for members, public ones for others; private organizations 404', async () => {
      const all = await s.api<RepoJson[]>('GET', '/orgs/acme/repos?limit=50', tok(alice));
      assert.equal(all.status, 200);
      const everything = names(all.body);
      assert.ok(everything.includes('acme/org-one'));
      assert.ok(everything.includes('acme/org-two'));
      const outside = await s.api<RepoJson[]>('GET', '/orgs/acme/repos?limit=50', tok(eve));
      assert.ok(!names(outside.body).includes('acme/org-one'));
      assert.ok(names(outside.body).includes('acme/org-two'));
      assert.ok(outside.body.every((r) => !r.private));
      const anon = await s.api<RepoJson[]>('GET', '/orgs/acme/repos?limit=50');
      assert.deepEqual(names(anon.body), names(outside.body));
      assert.equal((await s.api('GET', '/orgs/hidden/repos', tok(eve))).status, 404);
      assert.equal((await s.api('GET', '/orgs/hidden/repos')).status, 404);
      const inside = await s.api<RepoJson[]>('GET', '/orgs/hidden/repos', tok(alice));
      assert.deepEqual(names(inside.body).sort(), ['hidden/inside', 'hidden/secret-org-repo']);
      // /users/{org}/repos answers for organizations as well.
      const viaUsers = await s.api<RepoJson[]>('GET', '/users/acme/repos?limit=50', tok(eve));
      assert.deepEqual(names(viaUsers.body), names(outside.body));
      assert.equal((await s.api('GET', '/users/hidden/repos', tok(eve))).status, 404);
    });
  });

  describe('GET /repos/search', () => {
    before(async () => {
      const finder = await s.createUser('finder');
      await create(finder, { name: 'needle-public', description: 'a haystack item' });
      await create(finder, { name: 'needle-private', private: true });
      await create(finder, { name: 'needle_under' });
      await create(finder, { name: 'other', description: 'contains needle in description' });
      await s.api('PUT', '/repos/finder/needle-private/collaborators/dave', { token: finder.token });
    });

    const search = async (u: U | null, query: string) => {
      const r = await s.api<Search>('GET', `/repos/search?${query}`, tok(u));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.ok, true);
      return r;
    };

    it('answers {ok, data} and finds by name; descriptions only with includeDesc', async () => {
      const r = await search(null, 'q=needle&limit=50');
      assert.deepEqual(Object.keys(r.body).sort(), ['data', 'ok']);
      assert.deepEqual(names(r.body.data), ['finder/needle-public', 'finder/needle_under']);
      assert.equal(r.headers.get('x-total-count'), '2');
      const desc = await search(null, 'q=needle&includeDesc=true&limit=50');
      assert.deepEqual(names(desc.body.data), [
        'finder/needle-public',
        'finder/needle_under',
        'finder/other',
      ]);
      // LIKE wildcards in the keyword match themselves.
      assert.deepEqual(names((await search(null, 'q=needle_&limit=50')).body.data), ['finder/needle_under']);
      assert.deepEqual(names((await search(null, 'q=%25&limit=50')).body.data), []);
      // Several keywords separated by commas.
      const two = await search(null, 'q=needle-pub,other&limit=50');
      assert.deepEqual(names(two.body.data), ['finder/needle-public', 'finder/other']);
    });

    it('shows private repositories only to those who may read them', async () => {
      const q = 'q=needle&limit=50';
      assert.ok(!names((await search(null, q)).body.data).includes('finder/needle-private'));
      assert.ok(!names((await search(eve, q)).body.data).includes('finder/needle-private'));
      assert.ok(names((await search(dave, q)).body.data).includes('finder/needle-private'));
      assert.ok(names((await search(admin, q)).body.data).includes('finder/needle-private'));
      // private=false leaves them out even for those who could see them; is_private=true keeps only them.
      assert.ok(
        !names((await search(admin, `${q}&private=false`)).body.data).includes('finder/needle-private'),
      );
      assert.deepEqual(names((await search(dave, `${q}&is_private=true`)).body.data), [
        'finder/needle-private',
      ]);
      assert.deepEqual(names((await search(eve, `${q}&is_private=true`)).body.data), []);
      // Internal repositories of private organizations stay with their members.
      assert.ok(!names((await search(eve, 'q=inside')).body.data).includes('hidden/inside'));
      assert.ok(names((await search(alice, 'q=inside')).body.data).includes('hidden/inside'));
    });

    it('filters by owner (uid, exclusive), by mode and sorts', async () => {
      const finder = (await s.api<UserJson>('GET', '/users/finder')).body;
      const own = await search(dave, `uid=${finder.id}&exclusive=true&limit=50`);
      assert.deepEqual(names(own.body.data), [
        'finder/needle-private',
        'finder/needle-public',
        'finder/needle_under',
        'finder/other',
      ]);
      const daves = (await s.api<UserJson>('GET', '/users/dave')).body;
      const collab = await search(dave, `uid=${daves.id}&mode=collaborative&limit=50`);
      assert.ok(names(collab.body.data).includes('finder/needle-private'));
      assert.ok(collab.body.data.every((r) => r.owner.login !== 'dave'));
      const desc = await search(null, 'q=needle&sort=alpha&order=desc');
      assert.deepEqual(names(desc.body.data), ['finder/needle_under', 'finder/needle-public']);
      const bySize = await search(null, 'q=needle&sort=size');
      assert.equal(bySize.body.data.length, 2);
      assert.equal((await search(null, 'mode=fork&q=needle')).body.data.length, 0);
      assert.equal((await search(null, 'mode=source&q=needle')).body.data.length, 2);
    });

    it('answers 422 to unknown sort, order and mode', async () => {
      for (const q of ['sort=weight', 'sort=alpha&order=sideways', 'mode=mine']) {
        const r = await s.api<Msg>('GET', `/repos/search?${q}`);
        assert.equal(r.status, 422, q);
      }
      assert.equal((await s.api('GET', '/repos/search?uid=abc')).status, 422);
    });
  });

  describe('collaborators', () => {
    before(async () => {
      await create(alice, { name: 'team-work', private: true, auto_init: true });
    });

    it('PUT adds with a permission, GET lists and checks, /permission tells, DELETE removes', async () => {
      const put = await s.api('PUT', '/repos/alice/team-work/collaborators/dave', {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal(put.status, 204, put.text);
      assert.equal((await getRepo(dave, 'alice/team-work')).status, 200);
      assert.deepEqual((await getRepo(dave, 'alice/team-work')).body.permissions, {
        admin: false,
        push: false,
        pull: true,
      });
      const list = await s.api<UserJson[]>('GET', '/repos/alice/team-work/collaborators', tok(alice));
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.map((u) => u.login),
        ['dave'],
      );
      assert.equal(list.headers.get('x-total-count'), '1');
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators/dave', tok(alice))).status, 204);
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators/DAVE', tok(dave))).status, 204);
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators/eve', tok(alice))).status, 404);
      const perm = await s.api<{ permission: string; role_name: string; user: UserJson }>(
        'GET',
        '/repos/alice/team-work/collaborators/dave/permission',
        tok(alice),
      );
      assert.equal(perm.status, 200);
      assert.deepEqual(
        { permission: perm.body.permission, role_name: perm.body.role_name, login: perm.body.user.login },
        { permission: 'read', role_name: 'read', login: 'dave' },
      );

      // PUT again changes the permission; no body means write.
      await s.api('PUT', '/repos/alice/team-work/collaborators/dave', {
        token: alice.token,
        body: { permission: 'admin' },
      });
      const adminPerm = await s.api<{ permission: string }>(
        'GET',
        '/repos/alice/team-work/collaborators/dave/permission',
        tok(dave),
      );
      assert.equal(adminPerm.body.permission, 'admin');
      assert.equal((await s.api('PUT', '/repos/alice/team-work/collaborators/dave', tok(alice))).status, 204);
      assert.deepEqual((await getRepo(dave, 'alice/team-work')).body.permissions, {
        admin: false,
        push: true,
        pull: true,
      });

      const del = await s.api('DELETE', '/repos/alice/team-work/collaborators/dave', tok(alice));
      assert.equal(del.status, 204);
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators/dave', tok(alice))).status, 404);
      assert.equal((await getRepo(dave, 'alice/team-work')).status, 404);
      // Removing someone who is not a collaborator is fine, as in Forgejo.
      assert.equal(
        (await s.api('DELETE', '/repos/alice/team-work/collaborators/dave', tok(alice))).status,
        204,
      );
    });

    it('/permission: owner, none for outsiders of private repositories, and only admins ask about others', async () => {
      const perm = (u: U, who: string, repo = 'alice/team-work') =>
        s.api<{ permission: string }>('GET', `/repos/${repo}/collaborators/${who}/permission`, tok(u));
      assert.equal((await perm(alice, 'alice')).body.permission, 'owner');
      assert.equal((await perm(alice, 'eve')).body.permission, 'none');
      assert.equal((await perm(alice, 'eve', 'alice/open')).body.permission, 'read');
      assert.equal((await perm(admin, 'eve', 'alice/open')).body.permission, 'read');
      assert.equal((await perm(eve, 'eve', 'alice/open')).body.permission, 'read');
      assert.equal((await perm(eve, 'alice', 'alice/open')).status, 403);
      assert.equal((await perm(eve, 'alice')).status, 404);
      assert.equal((await perm(alice, 'nobody-here')).status, 404);
    });

    it('only repository administrators change collaborators', async () => {
      await s.api('PUT', '/repos/alice/team-work/collaborators/carol', {
        token: alice.token,
        body: { permission: 'write' },
      });
      assert.equal((await s.api('PUT', '/repos/alice/team-work/collaborators/eve', tok(carol))).status, 403);
      assert.equal(
        (await s.api('DELETE', '/repos/alice/team-work/collaborators/carol', tok(carol))).status,
        403,
      );
      assert.equal((await s.api('PUT', '/repos/alice/team-work/collaborators/carol', tok(eve))).status, 404);
      assert.equal((await s.api('PUT', '/repos/alice/open/collaborators/eve', tok(eve))).status, 403);
      assert.equal((await s.api('PUT', '/repos/alice/team-work/collaborators/eve')).status, 401);
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators')).status, 401);
      assert.equal((await s.api('GET', '/repos/alice/team-work/collaborators', tok(eve))).status, 404);
      // Readers list them.
      const list = await s.api<UserJson[]>('GET', '/repos/alice/team-work/collaborators', tok(carol));
      assert.equal(list.status, 200);
    });

    it('refuses unknown users, organizations, the owner and bad permissions with 422', async () => {
      for (const [who, body] of [
        ['nobody-here', undefined],
        ['acme', undefined],
        ['alice', undefined],
        ['eve', { permission: 'owner' }],
        ['eve', { permission: 'superuser' }],
        ['eve', { permission: 3 }],
      ] as const) {
        const r = await s.api('PUT', `/repos/alice/team-work/collaborators/${who}`, {
          token: alice.token,
          ...(body ? { body } : {}),
        });
        assert.equal(r.status, 422, `${who} ${JSON.stringify(body)}: ${r.text}`);
      }
      assert.equal(
        (await s.api('GET', '/repos/alice/team-work/collaborators/nobody-here', tok(alice))).status,
        422,
      );
      assert.equal(
        (await s.api('DELETE', '/repos/alice/team-work/collaborators/nobody-here', tok(alice))).status,
        422,
      );
    });
  });

  describe('team repositories', () => {
    before(async () => {
      await create(alice, { name: 'tooling', private: true, auto_init: true }, '/orgs/acme/repos');
    });

    it('PUT gives the team access, GET lists and checks it, DELETE takes it away', async () => {
      assert.equal((await getRepo(bob, 'acme/tooling')).status, 404);
      const put = await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`, tok(alice));
      assert.equal(put.status, 204, put.text);
      assert.deepEqual((await getRepo(bob, 'acme/tooling')).body.permissions, {
        admin: false,
        push: true,
        pull: true,
      });
      const list = await s.api<RepoJson[]>('GET', `/teams/${makersId}/repos?limit=50`, tok(bob));
      assert.equal(list.status, 200);
      assert.ok(names(list.body).includes('acme/tooling'));
      const one = await s.api<RepoJson>('GET', `/teams/${makersId}/repos/acme/tooling`, tok(bob));
      assert.equal(one.status, 200);
      assert.equal(one.body.full_name, 'acme/tooling');
      assert.equal((await s.api('GET', `/teams/${viewersId}/repos/acme/tooling`, tok(alice))).status, 404);
      // Adding twice is fine.
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`, tok(alice))).status, 204);

      assert.equal((await s.api('PUT', `/teams/${viewersId}/repos/acme/tooling`, tok(alice))).status, 204);
      assert.deepEqual((await getRepo(carol, 'acme/tooling')).body.permissions, {
        admin: false,
        push: false,
        pull: true,
      });

      const del = await s.api('DELETE', `/teams/${makersId}/repos/acme/tooling`, tok(alice));
      assert.equal(del.status, 204);
      assert.equal((await getRepo(bob, 'acme/tooling')).status, 404);
      assert.equal((await s.api('GET', `/teams/${makersId}/repos/acme/tooling`, tok(alice))).status, 404);
    });

    it('needs team membership and admin access to the repository', async () => {
      // bob is in makers but only writes to repositories: not enough to change a team's repositories.
      await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`, tok(alice));
      assert.equal((await s.api('DELETE', `/teams/${makersId}/repos/acme/tooling`, tok(bob))).status, 403);
      // carol is an organization member but not in makers: 403; eve is not a member: 404.
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`, tok(carol))).status, 403);
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`, tok(eve))).status, 404);
      assert.equal((await s.api('GET', `/teams/${makersId}/repos`, tok(eve))).status, 404);
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/acme/tooling`)).status, 401);
      assert.equal((await s.api('PUT', '/teams/999999/repos/acme/tooling', tok(alice))).status, 404);
      // A repository of another owner, or that does not exist, is not found in the team's organization.
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/alice/open`, tok(alice))).status, 404);
      assert.equal((await s.api('PUT', `/teams/${makersId}/repos/acme/nothing`, tok(alice))).status, 404);
      assert.equal((await s.api('PUT', `/teams/abc/repos/acme/tooling`, tok(alice))).status, 422);
    });

    it('a team that includes all repositories lists all of them', async () => {
      const everything = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
        token: alice.token,
        body: {
          name: 'everything',
          permission: 'read',
          units: ['repo.code'],
          includes_all_repositories: true,
        },
      });
      assert.equal(everything.status, 201, everything.text);
      const list = await s.api<RepoJson[]>('GET', `/teams/${everything.body.id}/repos?limit=50`, tok(alice));
      const org = await s.api<RepoJson[]>('GET', '/orgs/acme/repos?limit=50', tok(alice));
      assert.deepEqual(names(list.body).sort(), names(org.body).sort());
      assert.equal(
        (await s.api('GET', `/teams/${everything.body.id}/repos/acme/tooling`, tok(alice))).status,
        200,
      );
    });
  });
});
