// Repository operations over HTTP: the teams of an organization's repository (list, check, add,
// remove; 405 for other repositories), compare (base...head, base..head, head alone), the pull
// request of a commit, and a commit's or a pull request's diff and patch as text.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
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

interface TeamJson {
  id: number;
  name: string;
  permission: string;
  includes_all_repositories: boolean;
  organization: { username: string } | null;
}

interface CommitJson {
  sha: string;
  html_url: string;
  commit: { message: string };
  files: Array<{ filename: string; status: string }> | null;
  stats: { total: number; additions: number; deletions: number } | null;
}

interface CompareJson {
  total_commits: number;
  commits: CommitJson[];
  files: Array<{ filename: string; status: string }>;
}

interface PR {
  number: number;
  merged: boolean;
  merge_commit_sha: string | null;
  head: { sha: string };
}

let s: TestServer;
let alice: U; // owns alice/proj, alice/private and the organization cmp-org
let bob: U; // read collaborator of alice/proj and cmp-org/app
let carol: U; // admin collaborator of cmp-org/app
let stranger: U;

const b64 = (t: string) => Buffer.from(t).toString('base64');

/** Commits one new file through the contents API; returns the new commit id. */
async function addFile(repo: string, file: string, branch: string, newBranch?: string): Promise<string> {
  const r = await s.api<{ commit: { sha: string } }>('POST', `/repos/${repo}/contents/${file}`, {
    token: alice.token,
    body: { content: b64(`${file}\n`), branch, new_branch: newBranch, message: `add ${file}` },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.commit.sha;
}

async function createRepo(url: string, body: Record<string, unknown>): Promise<void> {
  const r = await s.api('POST', url, { token: alice.token, body: { auto_init: true, ...body } });
  assert.equal(r.status, 201, r.text);
}

async function collaborator(repo: string, user: U, permission: string): Promise<void> {
  const r = await s.api('PUT', `/repos/${repo}/collaborators/${user.name}`, {
    token: alice.token,
    body: { permission },
  });
  assert.equal(r.status, 204, r.text);
}

async function createTeam(body: Record<string, unknown>): Promise<TeamJson> {
  const r = await s.api<TeamJson>('POST', '/orgs/cmp-org/teams', {
    token: alice.token,
    body: { units: ['repo.code'], ...body },
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

before(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  carol = await s.createUser('carol');
  stranger = await s.createUser('stranger');
  await createRepo('/user/repos', { name: 'proj' });
  await createRepo('/user/repos', { name: 'private', private: true });
  await collaborator('alice/proj', bob, 'read');
  const o = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'cmp-org' } });
  assert.equal(o.status, 201, o.text);
  await createRepo('/orgs/cmp-org/repos', { name: 'app' });
  await collaborator('cmp-org/app', bob, 'read');
  await collaborator('cmp-org/app', carol, 'admin');
});

after(async () => {
  await s?.close();
});

describe('the teams of a repository', () => {
  let devs: TeamJson;
  before(async () => {
    devs = await createTeam({ name: 'devs', permission: 'write' });
    await createTeam({ name: 'everyone', permission: 'read', includes_all_repositories: true });
    await createTeam({ name: 'other', permission: 'read' });
  });

  const names = async (u: U = alice) => {
    const r = await s.api<TeamJson[]>('GET', '/repos/cmp-org/app/teams', { token: u.token });
    assert.equal(r.status, 200, r.text);
    return r.body.map((t) => t.name);
  };

  it('lists the teams with access: the owners team first, then by name', async () => {
    assert.deepEqual(await names(), ['Owners', 'everyone']);
    const r = await s.api<TeamJson[]>('GET', '/repos/cmp-org/app/teams', { token: bob.token });
    assert.equal(r.status, 200, 'repository readers may list');
    assert.equal(r.body[1]!.organization?.username, 'cmp-org');
    assert.equal(r.body[1]!.includes_all_repositories, true);
  });

  it('adds and removes a team (204), checks it (200 or 404), and refuses what is already so (422)', async () => {
    let r = await s.api<Msg>('GET', '/repos/cmp-org/app/teams/devs', { token: alice.token });
    assert.equal(r.status, 404, 'not added yet');
    r = await s.api<Msg>('PUT', '/repos/cmp-org/app/teams/devs', { token: alice.token });
    assert.equal(r.status, 204, r.text);
    const got = await s.api<TeamJson>('GET', '/repos/cmp-org/app/teams/DEVS', { token: bob.token });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.id, devs.id);
    assert.equal(got.body.permission, 'write');
    assert.deepEqual(await names(), ['Owners', 'devs', 'everyone']);

    r = await s.api<Msg>('PUT', '/repos/cmp-org/app/teams/devs', { token: alice.token });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /already added/);
    r = await s.api<Msg>('PUT', '/repos/cmp-org/app/teams/everyone', { token: alice.token });
    assert.equal(r.status, 422, 'a team with all repositories already has it');

    r = await s.api<Msg>('DELETE', '/repos/cmp-org/app/teams/devs', { token: alice.token });
    assert.equal(r.status, 204, r.text);
    assert.deepEqual(await names(), ['Owners', 'everyone']);
    r = await s.api<Msg>('DELETE', '/repos/cmp-org/app/teams/devs', { token: alice.token });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /was not added/);
    r = await s.api<Msg>('DELETE', '/repos/cmp-org/app/teams/everyone', { token: alice.token });
    assert.equal(r.status, 422, 'a team with all repositories keeps them');
    assert.deepEqual(await names(), ['Owners', 'everyone']);
  });

  it('answers 404 for teams the organization does not have', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await s.api('' + method, '/repos/cmp-org/app/teams/nope', { token: alice.token });
      assert.equal(r.status, 404, `${method}: ${r.text}`);
    }
  });

  it('lets only repository admins change teams, and those only when the organization allows it', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const r = await s.api(method, '/repos/cmp-org/app/teams/other', { token: bob.token });
      assert.equal(r.status, 403, `reader ${method}: ${r.text}`);
      const c = await s.api(method, '/repos/cmp-org/app/teams/other', { token: carol.token });
      assert.equal(c.status, 403, `admin collaborator ${method}: ${c.text}`);
      const x = await s.api(method, '/repos/cmp-org/app/teams/other', { token: stranger.token });
      assert.equal(x.status, 403, `public repository, no rights ${method}: ${x.text}`);
      const anon = await s.api(method, '/repos/cmp-org/app/teams/other');
      assert.equal(anon.status, 401);
    }
    const e = await s.api('PATCH', '/orgs/cmp-org', {
      token: alice.token,
      body: { repo_admin_change_team_access: true },
    });
    assert.equal(e.status, 200, e.text);
    let r = await s.api('PUT', '/repos/cmp-org/app/teams/other', { token: carol.token });
    assert.equal(r.status, 204, r.text);
    r = await s.api('DELETE', '/repos/cmp-org/app/teams/other', { token: carol.token });
    assert.equal(r.status, 204, r.text);
    r = await s.api('PUT', '/repos/cmp-org/app/teams/other', { token: bob.token });
    assert.equal(r.status, 403, 'still not for readers');
  });

  it('answers 405 for repositories of users, and 404 for what the caller may not see', async () => {
    for (const [method, path] of [
      ['GET', '/repos/alice/proj/teams'],
      ['GET', '/repos/alice/proj/teams/devs'],
      ['PUT', '/repos/alice/proj/teams/devs'],
      ['DELETE', '/repos/alice/proj/teams/devs'],
    ] as const) {
      const r = await s.api(method, path, { token: alice.token });
      assert.equal(r.status, 405, `${method} ${path}: ${r.text}`);
    }
    const hidden = await s.api('GET', '/repos/alice/private/teams', { token: stranger.token });
    assert.equal(hidden.status, 404);
    const none = await s.api('GET', '/repos/cmp-org/nothing/teams', { token: alice.token });
    assert.equal(none.status, 404);
    const anon = await s.api('GET', '/repos/cmp-org/app/teams');
    assert.equal(anon.status, 401);
  });
});

describe('compare, the pull request of a commit, diffs and patches', () => {
  let base: string;
  let first: string;
  let second: string;

  before(async () => {
    const branch = await s.api<{ commit: { id: string } }>('GET', '/repos/alice/proj/branches/main', {
      token: alice.token,
    });
    base = branch.body.commit.id;
    first = await addFile('alice/proj', 'a.txt', 'main', 'feature');
    second = await addFile('alice/proj', 'dir/b.txt', 'feature');
    await addFile('alice/proj', 'c.txt', 'main', 'topic/slash');
  });

  const compare = (spec: string, u: U | null = alice) =>
    s.api<CompareJson>('GET', `/repos/alice/proj/compare/${spec}`, u ? { token: u.token } : {});

  it('lists the commits head adds to base, newest first, and the files of each in turn', async () => {
    const r = await compare('main...feature');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['commits', 'files', 'total_commits']);
    assert.equal(r.body.total_commits, 2);
    assert.deepEqual(
      r.body.commits.map((c) => c.sha),
      [second, first],
    );
    assert.equal(r.body.commits[0]!.commit.message.trim(), 'add dir/b.txt');
    assert.deepEqual(r.body.commits[0]!.files, [{ filename: 'dir/b.txt', status: 'added' }]);
    assert.equal(r.body.commits[0]!.stats?.additions, 1);
    assert.deepEqual(r.body.files, [
      { filename: 'dir/b.txt', status: 'added' },
      { filename: 'a.txt', status: 'added' },
    ]);
    for (const spec of ['main..feature', 'feature', `${base}...${second}`, `${base.slice(0, 10)}..feature`]) {
      const other = await compare(spec);
      assert.equal(other.status, 200, `${spec}: ${other.text}`);
      assert.deepEqual(other.body, r.body, spec);
    }
  });

  it('compares branches with slashes, and answers nothing added as empty lists', async () => {
    const r = await compare('feature...topic/slash');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.total_commits, 1);
    assert.deepEqual(r.body.files, [{ filename: 'c.txt', status: 'added' }]);
    const none = await compare('feature...main');
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(none.body, { total_commits: 0, commits: [], files: [] }, 'main is behind feature');
    const same = await compare('main...main');
    assert.deepEqual(same.body, { total_commits: 0, commits: [], files: [] });
  });

  it('answers 404 for refs that name nothing and for repositories the caller may not see', async () => {
    for (const spec of ['main...nope', 'nope...main', 'nope', `main...${'f'.repeat(40)}`, '...main']) {
      const r = await compare(spec);
      assert.equal(r.status, 404, `${spec}: ${r.text}`);
    }
    const hidden = await s.api('GET', '/repos/alice/private/compare/main...main', { token: stranger.token });
    assert.equal(hidden.status, 404);
    const anon = await compare('main...feature', null);
    assert.equal(anon.status, 200, 'public repositories compare for anyone');
  });

  it('finds the pull request of a head commit and, once merged, of its merge commit', async () => {
    const open = await s.api<PR>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { head: 'feature', base: 'main', title: 'feature' },
    });
    assert.equal(open.status, 201, open.text);
    for (const sha of [second, second.slice(0, 12)]) {
      const r = await s.api<PR>('GET', `/repos/alice/proj/commits/${sha}/pull`, { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.number, open.body.number);
      assert.equal(r.body.head.sha, second);
    }
    for (const sha of [first, base, 'f'.repeat(40), 'main', 'zz']) {
      const r = await s.api('GET', `/repos/alice/proj/commits/${sha}/pull`, { token: alice.token });
      assert.equal(r.status, 404, `${sha}: ${r.text}`);
    }

    await s.ctx.pulls.idle();
    const m = await s.api('POST', `/repos/alice/proj/pulls/${open.body.number}/merge`, {
      token: alice.token,
      body: { Do: 'merge' },
    });
    assert.equal(m.status, 200, m.text);
    const merged = await s.api<PR>('GET', `/repos/alice/proj/pulls/${open.body.number}`, {
      token: alice.token,
    });
    assert.ok(merged.body.merge_commit_sha);
    const r = await s.api<PR>('GET', `/repos/alice/proj/commits/${merged.body.merge_commit_sha}/pull`, {
      token: alice.token,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.number, open.body.number);
    assert.equal(r.body.merged, true);
    const hidden = await s.api('GET', `/repos/alice/private/commits/${second}/pull`, {
      token: stranger.token,
    });
    assert.equal(hidden.status, 404);
  });

  it("serves a commit's diff and patch as text, and the commit itself as JSON", async () => {
    const diff = await s.api('GET', `/repos/alice/proj/git/commits/${second}.diff`, { token: bob.token });
    assert.equal(diff.status, 200, diff.text);
    assert.match(diff.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(diff.text, /^diff --git a\/dir\/b\.txt b\/dir\/b\.txt$/m);
    assert.match(diff.text, /^\+dir\/b\.txt$/m);
    assert.doesNotMatch(diff.text, /a\.txt b\/a\.txt/, 'against the first parent only');

    const patch = await s.api('GET', `/repos/alice/proj/git/commits/feature.patch`, { token: bob.token });
    assert.equal(patch.status, 200, patch.text);
    assert.match(patch.headers.get('content-type') ?? '', /^text\/plain/);
    assert.ok(patch.text.startsWith(`From ${second} `), patch.text.slice(0, 80));
    assert.match(patch.text, /^Subject: \[PATCH\] add dir\/b\.txt$/m);

    const json = await s.api<CommitJson>('GET', `/repos/alice/proj/git/commits/${second}`, {
      token: bob.token,
    });
    assert.equal(json.status, 200);
    assert.equal(json.body.sha, second);

    for (const path of [`${'f'.repeat(40)}.diff`, 'nope.patch']) {
      const r = await s.api('GET', `/repos/alice/proj/git/commits/${path}`, { token: alice.token });
      assert.equal(r.status, 404, `${path}: ${r.text}`);
    }
    const other = await s.api('GET', `/repos/alice/proj/git/commits/${second}.txt`, { token: alice.token });
    assert.notEqual(other.status, 200, 'only .diff and .patch');
    const hidden = await s.api('GET', `/repos/alice/private/git/commits/main.diff`, {
      token: stranger.token,
    });
    assert.equal(hidden.status, 404);
  });

  it("serves a pull request's diff and patch as text", async () => {
    const diff = await s.api('GET', '/repos/alice/proj/pulls/1.diff', { token: bob.token });
    assert.equal(diff.status, 200, diff.text);
    assert.match(diff.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(diff.text, /^diff --git a\/a\.txt b\/a\.txt$/m);
    assert.match(diff.text, /^diff --git a\/dir\/b\.txt b\/dir\/b\.txt$/m);
    const patch = await s.api('GET', '/repos/alice/proj/pulls/1.patch', { token: bob.token });
    assert.equal(patch.status, 200, patch.text);
    assert.match(patch.text, /^From [0-9a-f]{40} /);
    assert.match(patch.text, /Subject: \[PATCH( 1\/2)?\] add a\.txt/);
    const missing = await s.api('GET', '/repos/alice/proj/pulls/99.diff', { token: alice.token });
    assert.equal(missing.status, 404);
    const bad = await s.api('GET', '/repos/alice/proj/pulls/1.zip', { token: alice.token });
    assert.equal(bad.status, 404);
  });

  it('reads base and head as git does (revisions, abbreviated SHAs, tags); 404 for none, 422 for an option', async () => {
    // main is now the merge of feature: main~1 is where feature started.
    const tag = await s.api('POST', '/repos/alice/proj/tags', {
      token: alice.token,
      body: { tag_name: 'v-first', target: first, message: 'first' },
    });
    assert.equal(tag.status, 201, tag.text);
    const main = await s.api<{ commit: { id: string } }>('GET', '/repos/alice/proj/branches/main', {
      token: alice.token,
    });
    const cases: Array<[string, string[]]> = [
      ['main~1...feature', [second, first]],
      ['main~1..feature', [second, first]],
      [`main~1...${second.slice(0, 7)}`, [second, first]],
      [`${base.slice(0, 8)}..feature%5E0`, [second, first]],
      ['v-first...feature', [second]],
      ['main~1...v-first', [first]],
      ['feature~1...feature', [second]],
      ['main%5E2...main', [main.body.commit.id]],
      ['feature~1', []],
    ];
    for (const [spec, want] of cases) {
      const r = await compare(spec);
      assert.equal(r.status, 200, `${spec}: ${r.text}`);
      assert.deepEqual(
        r.body.commits.map((c) => c.sha),
        want,
        spec,
      );
      assert.equal(r.body.total_commits, want.length, spec);
    }
    for (const spec of ['main...feature~9', 'nope~1...main', `main...${'0'.repeat(7)}`, 'main...main%5E3']) {
      const r = await compare(spec);
      assert.equal(r.status, 404, `${spec}: ${r.text}`);
    }
    for (const spec of ['--output=x...main', 'main...--output=x', '--output=x', 'main..-x']) {
      const r = await compare(spec);
      assert.equal(r.status, 422, `${spec}: ${r.text}`);
    }
  });
});
