// Branch protection over HTTP: the /repos/{owner}/{repo}/branch_protections API (who may use it,
// validation, the PATCH rule for status_check_contexts, allow-lists) and its enforcement on
// pushes made with the real git client over smart HTTP (refusals, allow-listed pushers, force
// pushes, glob rules, plain names over globs, deletion, file patterns, signed commits).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Msg {
  message: string;
}

interface BP {
  branch_name: string;
  rule_name: string;
  enable_push: boolean;
  enable_push_whitelist: boolean;
  push_whitelist_usernames: string[];
  push_whitelist_teams: string[];
  push_whitelist_deploy_keys: boolean;
  enable_merge_whitelist: boolean;
  merge_whitelist_usernames: string[];
  merge_whitelist_teams: string[];
  enable_status_check: boolean;
  status_check_contexts: string[];
  required_approvals: number;
  enable_approvals_whitelist: boolean;
  approvals_whitelist_username: string[];
  approvals_whitelist_teams: string[];
  block_on_rejected_reviews: boolean;
  block_on_official_review_requests: boolean;
  block_on_outdated_branch: boolean;
  dismiss_stale_approvals: boolean;
  ignore_stale_approvals: boolean;
  require_signed_commits: boolean;
  protected_file_patterns: string;
  unprotected_file_patterns: string;
  apply_to_admins: boolean;
  created_at: string;
  updated_at: string;
}

/** The properties of Forgejo's BranchProtection definition, and nothing else. */
const BP_KEYS = [
  'apply_to_admins',
  'approvals_whitelist_teams',
  'approvals_whitelist_username',
  'block_on_official_review_requests',
  'block_on_outdated_branch',
  'block_on_rejected_reviews',
  'branch_name',
  'created_at',
  'dismiss_stale_approvals',
  'enable_approvals_whitelist',
  'enable_merge_whitelist',
  'enable_push',
  'enable_push_whitelist',
  'enable_status_check',
  'ignore_stale_approvals',
  'merge_whitelist_teams',
  'merge_whitelist_usernames',
  'protected_file_patterns',
  'push_whitelist_deploy_keys',
  'push_whitelist_teams',
  'push_whitelist_usernames',
  'require_signed_commits',
  'required_approvals',
  'rule_name',
  'status_check_contexts',
  'unprotected_file_patterns',
  'updated_at',
];

let s: TestServer;
let alice: U; // owns the repositories
let bob: U; // write collaborator
let reader: U; // read collaborator
let stranger: U; // no access
let carol: U; // member of the org's pushers team
let dave: U; // write collaborator of the org repository, in no team
let work: string;
let home: string;

const bp = (repo: string, rest = '') => `/repos/alice/${repo}/branch_protections${rest}`;

async function createRepo(owner: U, name: string, opts: Record<string, unknown> = {}): Promise<void> {
  const r = await s.api('POST', '/user/repos', {
    token: owner.token,
    body: { name, auto_init: true, ...opts },
  });
  assert.equal(r.status, 201, r.text);
}

async function addCollaborator(repoPath: string, user: U, permission: string): Promise<void> {
  const r = await s.api('PUT', `/repos/${repoPath}/collaborators/${user.name}`, {
    token: alice.token,
    body: { permission },
  });
  assert.equal(r.status, 204, r.text);
}

async function createRule(repo: string, body: Record<string, unknown>): Promise<BP> {
  const r = await s.api<BP>('POST', bp(repo), { token: alice.token, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

// The real git client

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the system git asynchronously (the server answering it runs in this same process). */
function git(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', '-c', 'init.defaultBranch=main', ...args], {
      cwd,
      env: {
        PATH: process.env['PATH'],
        HOME: home,
        LANG: 'C',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'Tester',
        GIT_AUTHOR_EMAIL: 'tester@example.com',
        GIT_COMMITTER_NAME: 'Tester',
        GIT_COMMITTER_EMAIL: 'tester@example.com',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

async function ok(run: Promise<Run>): Promise<string> {
  const r = await run;
  assert.equal(r.status, 0, `git failed: ${r.stderr}`);
  return r.stdout.trim();
}

function remoteUrl(user: U, repoPath: string): string {
  const u = new URL(`${s.url}/${repoPath}.git`);
  u.username = user.name;
  u.password = user.token;
  return u.toString();
}

/** A fresh clone of `repoPath` as `user`. */
async function clone(user: U, repoPath: string, dirName: string): Promise<string> {
  const dir = path.join(work, dirName);
  await ok(git(work, 'clone', '--quiet', remoteUrl(user, repoPath), dir));
  return dir;
}

/** Commits a change to `file` in the clone and returns the new commit. */
async function commit(dir: string, file: string, content = `${file} ${Math.random()}\n`): Promise<string> {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), content);
  await ok(git(dir, 'add', '--', file));
  await ok(git(dir, 'commit', '--quiet', '-m', `change ${file}`));
  return ok(git(dir, 'rev-parse', 'HEAD'));
}

/** The commit a branch points to on the server (empty when it does not exist), read with git. */
async function serverRef(repoPath: string, branch: string): Promise<string> {
  const out = await ok(git(work, 'ls-remote', remoteUrl(alice, repoPath), `refs/heads/${branch}`));
  return out.split(/\s+/)[0] ?? '';
}

/** Asserts that a push failed and git printed `message` from the server as a "remote:" line. */
async function assertRefused(run: Promise<Run>, message: string): Promise<void> {
  const r = await run;
  assert.notEqual(r.status, 0, `push should have failed:\n${r.stderr}`);
  assert.ok(r.stderr.includes(`remote: ${message}`), `expected "remote: ${message}" in:\n${r.stderr}`);
  assert.match(r.stderr, /pre-receive hook declined/);
}

before(async () => {
  s = await startServer();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-protect-'));
  home = path.join(work, 'home');
  fs.mkdirSync(home);
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  reader = await s.createUser('reader');
  stranger = await s.createUser('stranger');
  carol = await s.createUser('carol');
  dave = await s.createUser('dave');
  await createRepo(alice, 'rules');
  await addCollaborator('alice/rules', bob, 'write');
  await addCollaborator('alice/rules', reader, 'read');
  await createRepo(alice, 'secret', { private: true });
  await addCollaborator('alice/secret', reader, 'read');
});

after(async () => {
  await s?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('the branch protection API', () => {
  it('creates a rule with Forgejo defaults and shows it with exactly the BranchProtection fields', async () => {
    const r = await s.api<BP>('POST', bp('rules'), { token: alice.token, body: { rule_name: 'main' } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), BP_KEYS);
    const { created_at, updated_at, ...rest } = r.body;
    assert.match(created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(updated_at, created_at);
    assert.deepEqual(rest, {
      branch_name: 'main',
      rule_name: 'main',
      enable_push: false,
      enable_push_whitelist: false,
      push_whitelist_usernames: [],
      push_whitelist_teams: [],
      push_whitelist_deploy_keys: false,
      enable_merge_whitelist: false,
      merge_whitelist_usernames: [],
      merge_whitelist_teams: [],
      enable_status_check: false,
      status_check_contexts: [],
      required_approvals: 0,
      enable_approvals_whitelist: false,
      approvals_whitelist_username: [],
      approvals_whitelist_teams: [],
      block_on_rejected_reviews: false,
      block_on_official_review_requests: false,
      block_on_outdated_branch: false,
      dismiss_stale_approvals: false,
      ignore_stale_approvals: false,
      require_signed_commits: false,
      protected_file_patterns: '',
      unprotected_file_patterns: '',
      apply_to_admins: false,
    });
    const got = await s.api<BP>('GET', bp('rules', '/main'), { token: alice.token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, r.body);
  });

  it('stores every field it is given', async () => {
    const body = {
      rule_name: 'stable/*',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ['bob', 'ALICE'],
      push_whitelist_deploy_keys: true,
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ['bob'],
      enable_status_check: true,
      status_check_contexts: ['ci/build', 'ci/test'],
      required_approvals: 2,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: ['reader'],
      block_on_rejected_reviews: true,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      dismiss_stale_approvals: true,
      ignore_stale_approvals: true,
      require_signed_commits: true,
      protected_file_patterns: '*.lock',
      unprotected_file_patterns: 'docs/**',
      apply_to_admins: true,
    };
    const created = await createRule('rules', body);
    const { created_at: _c, updated_at: _u, ...rest } = created;
    assert.deepEqual(rest, {
      ...body,
      branch_name: 'stable/*',
      push_whitelist_usernames: ['bob', 'alice'],
      push_whitelist_teams: [],
      merge_whitelist_teams: [],
      approvals_whitelist_teams: [],
    });
  });

  it('drops the push allow-list (and deploy keys) when pushing is off, as Forgejo does', async () => {
    const r = await createRule('rules', {
      rule_name: 'frozen',
      enable_push: false,
      enable_push_whitelist: true,
      push_whitelist_deploy_keys: true,
      push_whitelist_usernames: ['bob'],
    });
    assert.equal(r.enable_push, false);
    assert.equal(r.enable_push_whitelist, false);
    assert.equal(r.push_whitelist_deploy_keys, false);
    assert.deepEqual(r.push_whitelist_usernames, ['bob']);
  });

  it('accepts the deprecated branch_name in place of rule_name', async () => {
    const r = await createRule('rules', { branch_name: 'legacy' });
    assert.equal(r.rule_name, 'legacy');
    assert.equal(r.branch_name, 'legacy');
  });

  it('answers 422 for a rule name that exists, and for no name at all', async () => {
    const dup = await s.api<Msg>('POST', bp('rules'), { token: alice.token, body: { rule_name: 'main' } });
    assert.equal(dup.status, 422);
    assert.match(dup.body.message, /already exists/);
    for (const body of [{}, { rule_name: '' }, { rule_name: '   ' }, { rule_name: null, branch_name: '' }]) {
      const r = await s.api<Msg>('POST', bp('rules'), { token: alice.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.match(r.body.message, /RuleName/);
    }
  });

  it('answers 422 for values of the wrong type, negative approvals and unknown users', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ rule_name: 'x1', enable_push: 'yes' }, /EnablePush/],
      [{ rule_name: 'x2', status_check_contexts: 'ci' }, /StatusCheckContexts/],
      [{ rule_name: 'x3', status_check_contexts: [1] }, /StatusCheckContexts/],
      [{ rule_name: 'x4', required_approvals: -1 }, /RequiredApprovals/],
      [{ rule_name: 'x5', required_approvals: 1.5 }, /RequiredApprovals/],
      [{ rule_name: 'x6', push_whitelist_usernames: ['nobody'] }, /user does not exist \[name: nobody\]/],
      [{ rule_name: 'x7', merge_whitelist_usernames: ['bob', 'ghost'] }, /ghost/],
      [{ rule_name: 'x8', approvals_whitelist_username: ['ghost'] }, /ghost/],
      [{ rule_name: 'x9', rule_name_: 1, protected_file_patterns: 5 }, /ProtectedFilePatterns/],
    ];
    for (const [body, message] of cases) {
      const r = await s.api<Msg>('POST', bp('rules'), { token: alice.token, body });
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.message, message);
    }
    const list = await s.api<BP[]>('GET', bp('rules'), { token: alice.token });
    assert.ok(!list.body.some((r) => /^x\d$/.test(r.rule_name)), 'nothing was created');
  });

  it('answers 422 for teams on a repository that does not belong to an organization', async () => {
    for (const field of ['push_whitelist_teams', 'merge_whitelist_teams', 'approvals_whitelist_teams']) {
      const r = await s.api<Msg>('POST', bp('rules'), {
        token: alice.token,
        body: { rule_name: `teams-${field}`, [field]: ['owners'] },
      });
      assert.equal(r.status, 422, field);
      assert.match(r.body.message, /organization/);
    }
    // An empty list of teams is no team at all.
    await createRule('rules', { rule_name: 'no-teams', push_whitelist_teams: [] });
  });

  it('leaves out allow-listed users without the access the list needs, as Forgejo does', async () => {
    const r = await createRule('rules', {
      rule_name: 'access-check',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ['bob', 'reader', 'stranger'],
      merge_whitelist_usernames: ['reader', 'bob'],
      approvals_whitelist_username: ['reader', 'stranger', 'bob'],
    });
    assert.deepEqual(r.push_whitelist_usernames, ['bob']);
    assert.deepEqual(r.merge_whitelist_usernames, ['bob']);
    // Approvals need read access only.
    assert.deepEqual(r.approvals_whitelist_username, ['reader', 'bob']);
  });

  it('gets, edits and deletes rules whose names contain / and glob characters', async () => {
    await createRule('rules', { rule_name: 'release/**' });
    for (const p of ['/release/**', '/release%2F%2A%2A']) {
      const r = await s.api<BP>('GET', bp('rules', p), { token: alice.token });
      assert.equal(r.status, 200, p);
      assert.equal(r.body.rule_name, 'release/**');
    }
    const edited = await s.api<BP>('PATCH', bp('rules', '/release/**'), {
      token: alice.token,
      body: { enable_push: true },
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.enable_push, true);
    const del = await s.api('DELETE', bp('rules', '/release/**'), { token: alice.token });
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await s.api('GET', bp('rules', '/release/**'), { token: alice.token })).status, 404);
    assert.equal((await s.api('DELETE', bp('rules', '/release/**'), { token: alice.token })).status, 404);
    assert.equal(
      (await s.api('PATCH', bp('rules', '/release/**'), { token: alice.token, body: {} })).status,
      404,
    );
    // Names are compared exactly: a prefix or another case is another rule.
    assert.equal((await s.api('GET', bp('rules', '/mai'), { token: alice.token })).status, 404);
    assert.equal((await s.api('GET', bp('rules', '/MAIN'), { token: alice.token })).status, 404);
    assert.equal((await s.api('GET', bp('rules', '/'), { token: alice.token })).status, 404);
  });

  it('lists rules plain names first, then globs, each in creation order', async () => {
    await createRule('rules', { rule_name: 'zz/*' });
    await createRule('rules', { rule_name: 'aa-plain' });
    const r = await s.api<BP[]>('GET', bp('rules'), { token: alice.token });
    assert.equal(r.status, 200);
    const names = r.body.map((x) => x.rule_name);
    assert.deepEqual(names, [
      'main',
      'frozen',
      'legacy',
      'no-teams',
      'access-check',
      'aa-plain',
      'stable/*',
      'zz/*',
    ]);
  });

  it('is for repository administrators only: 403 for writers and readers, 401 without a token', async () => {
    for (const u of [bob, reader, stranger]) {
      assert.equal((await s.api('GET', bp('rules'), { token: u.token })).status, 403, u.name);
      assert.equal((await s.api('GET', bp('rules', '/main'), { token: u.token })).status, 403, u.name);
      const post = await s.api('POST', bp('rules'), { token: u.token, body: { rule_name: 'mine' } });
      assert.equal(post.status, 403, u.name);
      const patch = await s.api('PATCH', bp('rules', '/main'), {
        token: u.token,
        body: { enable_push: true },
      });
      assert.equal(patch.status, 403, u.name);
      assert.equal((await s.api('DELETE', bp('rules', '/main'), { token: u.token })).status, 403, u.name);
    }
    assert.equal((await s.api('GET', bp('rules'))).status, 401);
    assert.equal((await s.api('POST', bp('rules'), { body: { rule_name: 'anon' } })).status, 401);
    assert.equal((await s.api('DELETE', bp('rules', '/main'))).status, 401);
    // A private repository the caller cannot see does not exist for them.
    assert.equal((await s.api('GET', bp('secret'), { token: stranger.token })).status, 404);
    assert.equal((await s.api('GET', bp('secret'), { token: reader.token })).status, 403);
    assert.equal(
      (await s.api('GET', '/repos/alice/nothing/branch_protections', { token: alice.token })).status,
      404,
    );
    // Site administrators and the token scope: a read-only token cannot create.
    assert.equal((await s.api('GET', bp('rules'), { token: s.admin.token })).status, 200);
    const readOnly = await s.createUser('readonly', { scopes: ['read:repository'] });
    await addCollaborator('alice/rules', readOnly, 'admin');
    assert.equal((await s.api('GET', bp('rules'), { token: readOnly.token })).status, 200);
    const post = await s.api('POST', bp('rules'), { token: readOnly.token, body: { rule_name: 'scoped' } });
    assert.equal(post.status, 403);
    assert.equal((await s.api('GET', bp('rules', '/scoped'), { token: alice.token })).status, 404);
    const list = await s.api<BP[]>('GET', bp('rules'), { token: bob.token });
    assert.equal(list.status, 403);
  });
});

describe('PATCH and status_check_contexts', () => {
  const contexts = async () =>
    (await s.api<BP>('GET', bp('rules', '/main'), { token: alice.token })).body.status_check_contexts;
  const patch = async (body: Record<string, unknown>) => {
    const r = await s.api<BP>('PATCH', bp('rules', '/main'), { token: alice.token, body });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  it('replaces the contexts when the field is present, even with enable_status_check absent', async () => {
    const r = await patch({ status_check_contexts: ['ci/a'] });
    assert.deepEqual(r.status_check_contexts, ['ci/a']);
    assert.equal(r.enable_status_check, false);
    assert.deepEqual(await contexts(), ['ci/a']);
  });

  it('replaces the contexts even when enable_status_check is false', async () => {
    const r = await patch({ enable_status_check: false, status_check_contexts: ['ci/b', 'ci/c'] });
    assert.deepEqual(r.status_check_contexts, ['ci/b', 'ci/c']);
    assert.equal(r.enable_status_check, false);
  });

  it('replaces them with enable_status_check true as well', async () => {
    const r = await patch({ enable_status_check: true, status_check_contexts: ['ci/d'] });
    assert.deepEqual(r.status_check_contexts, ['ci/d']);
    assert.equal(r.enable_status_check, true);
  });

  it('leaves them unchanged when the field is null or absent', async () => {
    assert.deepEqual((await patch({ status_check_contexts: null })).status_check_contexts, ['ci/d']);
    assert.deepEqual((await patch({})).status_check_contexts, ['ci/d']);
    const r = await patch({ enable_status_check: false });
    assert.deepEqual(r.status_check_contexts, ['ci/d']);
    assert.equal(r.enable_status_check, false);
    assert.deepEqual(await contexts(), ['ci/d']);
  });

  it('empties them with an empty list', async () => {
    assert.deepEqual((await patch({ status_check_contexts: [] })).status_check_contexts, []);
    assert.deepEqual(await contexts(), []);
  });

  it('changes only the fields that are present and not null', async () => {
    const before = (await s.api<BP>('GET', bp('rules', '/stable/*'), { token: alice.token })).body;
    const r = await s.api<BP>('PATCH', bp('rules', '/stable/*'), {
      token: alice.token,
      body: { required_approvals: 0, apply_to_admins: null, protected_file_patterns: '' },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      { ...r.body, updated_at: before.updated_at },
      { ...before, required_approvals: 0, protected_file_patterns: '' },
    );
  });

  it('changes the push allow-list only together with enable_push=true, as Forgejo does', async () => {
    await patch({ enable_push: true, enable_push_whitelist: false });
    let r = await patch({ enable_push_whitelist: true });
    assert.equal(r.enable_push_whitelist, false, 'ignored without enable_push');
    r = await patch({ enable_push: true, enable_push_whitelist: true, push_whitelist_deploy_keys: true });
    assert.equal(r.enable_push_whitelist, true);
    assert.equal(r.push_whitelist_deploy_keys, true);
    r = await patch({ enable_push: false });
    assert.equal(r.enable_push, false);
    assert.equal(r.enable_push_whitelist, false);
    assert.equal(r.push_whitelist_deploy_keys, false);
  });

  it('replaces an allow-list when given, keeps it when null, and checks its names', async () => {
    let r = await patch({ push_whitelist_usernames: ['bob'], merge_whitelist_usernames: ['bob'] });
    assert.deepEqual(r.push_whitelist_usernames, ['bob']);
    r = await patch({ push_whitelist_usernames: null, merge_whitelist_usernames: [] });
    assert.deepEqual(r.push_whitelist_usernames, ['bob']);
    assert.deepEqual(r.merge_whitelist_usernames, []);
    const bad = await s.api<Msg>('PATCH', bp('rules', '/main'), {
      token: alice.token,
      body: { push_whitelist_usernames: ['nobody'], enable_push: true },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /nobody/);
    const teams = await s.api<Msg>('PATCH', bp('rules', '/main'), {
      token: alice.token,
      body: { push_whitelist_teams: ['owners'] },
    });
    assert.equal(teams.status, 422);
    for (const body of [{ required_approvals: -2 }, { enable_push: 1 }, { status_check_contexts: [''] }]) {
      const r2 = await s.api('PATCH', bp('rules', '/main'), { token: alice.token, body });
      assert.equal(r2.status, 422, JSON.stringify(body));
    }
    // Nothing of the refused edits stuck.
    const now = (await s.api<BP>('GET', bp('rules', '/main'), { token: alice.token })).body;
    assert.deepEqual(now.push_whitelist_usernames, ['bob']);
    assert.equal(now.enable_push, false);
    assert.equal(now.required_approvals, 0);
  });
});

describe('organization repositories: team allow-lists', () => {
  let teamId: number;

  before(async () => {
    assert.equal(
      (await s.api('POST', '/orgs', { token: alice.token, body: { username: 'forge' } })).status,
      201,
    );
    const t = await s.api<{ id: number }>('POST', '/orgs/forge/teams', {
      token: alice.token,
      body: { name: 'pushers', permission: 'write', units: ['repo.code'], includes_all_repositories: false },
    });
    assert.equal(t.status, 201, t.text);
    teamId = t.body.id;
    const other = await s.api('POST', '/orgs/forge/teams', {
      token: alice.token,
      body: {
        name: 'outsiders',
        permission: 'write',
        units: ['repo.code'],
        includes_all_repositories: false,
      },
    });
    assert.equal(other.status, 201);
    const r = await s.api('POST', '/orgs/forge/repos', {
      token: alice.token,
      body: { name: 'tool', auto_init: true },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal((await s.api('PUT', `/teams/${teamId}/members/carol`, { token: alice.token })).status, 204);
    assert.equal(
      (await s.api('PUT', `/teams/${teamId}/repos/forge/tool`, { token: alice.token })).status,
      204,
    );
    await addCollaborator('forge/tool', dave, 'write');
  });

  it('allow-lists teams of the organization by name, leaving out teams without the repository', async () => {
    const r = await s.api<BP>('POST', '/repos/forge/tool/branch_protections', {
      token: alice.token,
      body: {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_teams: ['Pushers', 'outsiders'],
        merge_whitelist_teams: ['pushers'],
        approvals_whitelist_teams: ['pushers'],
      },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.push_whitelist_teams, ['pushers']);
    assert.deepEqual(r.body.merge_whitelist_teams, ['pushers']);
    assert.deepEqual(r.body.approvals_whitelist_teams, ['pushers']);
    const bad = await s.api<Msg>('PATCH', '/repos/forge/tool/branch_protections/main', {
      token: alice.token,
      body: { push_whitelist_teams: ['pushers', 'ghosts'] },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /team does not exist \[name: ghosts\]/);
  });

  it('lets members of an allow-listed team push and refuses other writers', async () => {
    const carolDir = await clone(carol, 'forge/tool', 'tool-carol');
    const sha = await commit(carolDir, 'carol.txt');
    await ok(git(carolDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('forge/tool', 'main'), sha);

    const daveDir = await clone(dave, 'forge/tool', 'tool-dave');
    await commit(daveDir, 'dave.txt');
    await assertRefused(
      git(daveDir, 'push', 'origin', 'main'),
      'Not allowed to push to protected branch main',
    );
    assert.equal(await serverRef('forge/tool', 'main'), sha);
  });

  it('no longer allows a team that left the list', async () => {
    const r = await s.api<BP>('PATCH', '/repos/forge/tool/branch_protections/main', {
      token: alice.token,
      body: { push_whitelist_teams: [] },
    });
    assert.equal(r.status, 200);
    const dir = path.join(work, 'tool-carol');
    await ok(git(dir, 'pull', '--quiet', '--rebase', 'origin', 'main'));
    const before = await serverRef('forge/tool', 'main');
    await commit(dir, 'carol2.txt');
    await assertRefused(git(dir, 'push', 'origin', 'main'), 'Not allowed to push to protected branch main');
    assert.equal(await serverRef('forge/tool', 'main'), before);
  });
  it("keeps only the new owner's teams when the repository is transferred", async () => {
    const before = await s.api<BP>('GET', '/repos/forge/tool/branch_protections/main', {
      token: alice.token,
    });
    assert.deepEqual(before.body.merge_whitelist_teams, ['pushers']);
    const t = await s.api('POST', '/repos/forge/tool/transfer', {
      token: alice.token,
      body: { new_owner: 'alice' },
    });
    assert.equal(t.status, 202, t.text);
    const r = await s.api<BP>('GET', '/repos/alice/tool/branch_protections/main', { token: alice.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.merge_whitelist_teams, []);
    assert.deepEqual(r.body.approvals_whitelist_teams, []);
    assert.deepEqual(r.body.push_whitelist_teams, []);
    assert.equal(r.body.enable_push_whitelist, true);
  });
});

describe('enforcement on git push', () => {
  let aliceDir: string;
  let bobDir: string;
  const patchMain = async (body: Record<string, unknown>) => {
    const r = await s.api('PATCH', '/repos/alice/pushy/branch_protections/main', {
      token: alice.token,
      body,
    });
    assert.equal(r.status, 200, r.text);
  };

  before(async () => {
    await createRepo(alice, 'pushy');
    await addCollaborator('alice/pushy', bob, 'write');
    aliceDir = await clone(alice, 'alice/pushy', 'pushy-alice');
    // Branches that exist before any rule does.
    await ok(git(aliceDir, 'branch', 'keep'));
    await ok(git(aliceDir, 'branch', 'release/v1/x'));
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'keep', 'release/v1/x'));
    bobDir = await clone(bob, 'alice/pushy', 'pushy-bob');
  });

  it('pushes freely while no rule exists', async () => {
    const sha = await commit(aliceDir, 'free.txt');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), sha);
  });

  it('refuses a push to a protected branch, naming it, and leaves the branch unchanged', async () => {
    await createRule('pushy', { rule_name: 'main' });
    const before = await serverRef('alice/pushy', 'main');
    await commit(aliceDir, 'blocked.txt');
    // The owner is refused too: pushing is off for everyone (repository admins do not bypass it).
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'main'),
      'Not allowed to push to protected branch main',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    await ok(git(bobDir, 'pull', '--quiet', 'origin', 'main'));
    await commit(bobDir, 'bob-blocked.txt');
    await assertRefused(
      git(bobDir, 'push', 'origin', 'main'),
      'Not allowed to push to protected branch main',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    // The other branches stay open.
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/side'));
    assert.equal(await serverRef('alice/pushy', 'side'), await ok(git(aliceDir, 'rev-parse', 'HEAD')));
  });

  it('refuses the whole push when one of its branches is protected', async () => {
    await ok(git(aliceDir, 'branch', '-f', 'other', 'HEAD'));
    const r = git(aliceDir, 'push', '--atomic', 'origin', 'main', 'other');
    await assertRefused(r, 'Not allowed to push to protected branch main');
    assert.equal(await serverRef('alice/pushy', 'other'), '');
  });

  it('lets allow-listed pushers push and refuses the others, the owner included', async () => {
    await patchMain({ enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['bob'] });
    const before = await serverRef('alice/pushy', 'main');
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'main'),
      'Not allowed to push to protected branch main',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    await ok(git(bobDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), await ok(git(bobDir, 'rev-parse', 'HEAD')));
  });

  it('lets every writer push when pushing is on without an allow-list', async () => {
    await patchMain({ enable_push: true, enable_push_whitelist: false });
    await ok(git(aliceDir, 'pull', '--quiet', '--rebase', 'origin', 'main'));
    const sha = await commit(aliceDir, 'open.txt');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), sha);
  });

  it('refuses a force push and accepts a fast-forward', async () => {
    const before = await serverRef('alice/pushy', 'main');
    await ok(git(aliceDir, 'reset', '--quiet', '--hard', 'HEAD~1'));
    await commit(aliceDir, 'rewritten.txt');
    await assertRefused(
      git(aliceDir, 'push', '--force', 'origin', 'main'),
      'branch main is protected from force push',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    // Back on top of the server's branch, a fast-forward goes through.
    await ok(git(aliceDir, 'reset', '--quiet', '--hard', before));
    const ff = await commit(aliceDir, 'fast-forward.txt');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), ff);
  });

  it('refuses deleting a protected branch, even for the owner with pushing allowed', async () => {
    await createRule('pushy', { rule_name: 'keep', enable_push: true });
    const before = await serverRef('alice/pushy', 'keep');
    assert.notEqual(before, '');
    await assertRefused(
      git(aliceDir, 'push', 'origin', '--delete', 'keep'),
      'branch keep is protected from deletion',
    );
    assert.equal(await serverRef('alice/pushy', 'keep'), before);
    // Unprotected branches can be deleted.
    await ok(git(aliceDir, 'push', '--quiet', 'origin', '--delete', 'side'));
    assert.equal(await serverRef('alice/pushy', 'side'), '');
  });

  it('protects every branch a glob rule matches: release/** covers release/v1/x', async () => {
    await createRule('pushy', { rule_name: 'release/**' });
    const before = await serverRef('alice/pushy', 'release/v1/x');
    await ok(git(aliceDir, 'checkout', '--quiet', '-B', 'release/v1/x', 'origin/release/v1/x'));
    await commit(aliceDir, 'release.txt');
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'release/v1/x'),
      'Not allowed to push to protected branch release/v1/x',
    );
    assert.equal(await serverRef('alice/pushy', 'release/v1/x'), before);
    // Creating a branch under the glob is refused too; names outside it are not protected.
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'HEAD:refs/heads/release/v2'),
      'Not allowed to push to protected branch release/v2',
    );
    assert.equal(await serverRef('alice/pushy', 'release/v2'), '');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/releases/v2'));
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/release-v2'));
    assert.equal(await serverRef('alice/pushy', 'release-v2'), await ok(git(aliceDir, 'rev-parse', 'HEAD')));
    await ok(git(aliceDir, 'checkout', '--quiet', 'main'));
  });

  it('gives a plain rule for the branch priority over a glob created before it', async () => {
    await createRule('pushy', { rule_name: 'hotfix/*' });
    await createRule('pushy', { rule_name: 'hotfix/urgent', enable_push: true });
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/hotfix/urgent'));
    assert.equal(
      await serverRef('alice/pushy', 'hotfix/urgent'),
      await ok(git(aliceDir, 'rev-parse', 'HEAD')),
    );
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'HEAD:refs/heads/hotfix/other'),
      'Not allowed to push to protected branch hotfix/other',
    );
    assert.equal(await serverRef('alice/pushy', 'hotfix/other'), '');
    // `*` stays within one segment: hotfix/a/b is not covered by hotfix/*.
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/hotfix/a/b'));
  });

  it('stops protecting a branch once its rule is deleted', async () => {
    assert.equal((await s.api('DELETE', bp('pushy', '/keep'), { token: alice.token })).status, 204);
    await ok(git(aliceDir, 'push', '--quiet', 'origin', '--delete', 'keep'));
    assert.equal(await serverRef('alice/pushy', 'keep'), '');
  });

  it('refuses changes to protected files, naming the file', async () => {
    await patchMain({ protected_file_patterns: '*.lock;ci/**' });
    await ok(git(aliceDir, 'pull', '--quiet', '--rebase', 'origin', 'main'));
    const before = await serverRef('alice/pushy', 'main');
    await commit(aliceDir, 'ci/build.yml');
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'main'),
      'branch main is protected from changing file ci/build.yml',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    await ok(git(aliceDir, 'reset', '--quiet', '--hard', before));
    const sha = await commit(aliceDir, 'src/app.txt');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), sha);
    await patchMain({ protected_file_patterns: '' });
  });

  it('lets anyone with write access push changes that touch only unprotected files', async () => {
    await patchMain({ enable_push: false, unprotected_file_patterns: 'docs/**' });
    const before = await serverRef('alice/pushy', 'main');
    await commit(aliceDir, 'src/code.txt');
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'main'),
      'Not allowed to push to protected branch main',
    );
    assert.equal(await serverRef('alice/pushy', 'main'), before);
    await ok(git(aliceDir, 'reset', '--quiet', '--hard', before));
    const sha = await commit(aliceDir, 'docs/guide/intro.md');
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'main'));
    assert.equal(await serverRef('alice/pushy', 'main'), sha);
  });

  it('refuses new commits on a branch that requires signed commits (none can be verified yet)', async () => {
    await createRule('pushy', { rule_name: 'signed', enable_push: true, require_signed_commits: true });
    const head = await ok(git(aliceDir, 'rev-parse', 'HEAD'));
    // Pointing a new protected branch at a commit the server already has brings no new commit.
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/signed'));
    assert.equal(await serverRef('alice/pushy', 'signed'), head);
    const sha = await commit(aliceDir, 'unsigned.txt');
    await assertRefused(
      git(aliceDir, 'push', 'origin', 'HEAD:refs/heads/signed'),
      `branch signed is protected from unverified commit ${sha}`,
    );
    assert.equal(await serverRef('alice/pushy', 'signed'), head);
  });

  it('does not protect tags with branch rules', async () => {
    await ok(git(aliceDir, 'tag', 'main'));
    await ok(git(aliceDir, 'push', '--quiet', 'origin', 'refs/tags/main'));
    const tags = await ok(git(work, 'ls-remote', '--tags', remoteUrl(alice, 'alice/pushy')));
    assert.match(tags, /refs\/tags\/main/);
  });
});

describe('deleting a repository', () => {
  it('deletes its rules and their allow-lists', async () => {
    await createRepo(alice, 'doomed');
    await addCollaborator('alice/doomed', bob, 'write');
    await createRule('doomed', { rule_name: 'main', push_whitelist_usernames: ['bob'], enable_push: true });
    await createRule('doomed', { rule_name: 'dev/*' });
    const repo = await s.ctx.repos.getById(
      (await s.api<{ id: number }>('GET', '/repos/alice/doomed', { token: alice.token })).body.id,
    );
    assert.ok(repo);
    const count = async () =>
      Number(
        (
          await s.ctx.db
            .selectFrom('protected_branch')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('repo_id', '=', repo.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const lists = async () =>
      Number(
        (
          await s.ctx.db
            .selectFrom('protected_branch_whitelist')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count(), 2);
    const listsBefore = await lists();
    assert.equal((await s.api('DELETE', '/repos/alice/doomed', { token: alice.token })).status, 204);
    assert.equal(await count(), 0);
    assert.equal(await lists(), listsBefore - 1);
    // A new repository of the same name starts without rules.
    await createRepo(alice, 'doomed');
    const r = await s.api<BP[]>('GET', bp('doomed'), { token: alice.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, []);
  });
});
