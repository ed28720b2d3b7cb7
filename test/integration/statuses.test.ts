// Commit statuses over HTTP: creating them for a full commit SHA (abbreviated and unknown SHAs
// refused), who may write and read them, listing with sort, state filter and pages, lookups by
// branch, tag or SHA, and the combined status (newest per context, the worst state wins).
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

interface StatusJson {
  id: number;
  status: string;
  target_url: string;
  description: string;
  url: string;
  context: string;
  creator: { id: number; login: string } | null;
  created_at: string;
  updated_at: string;
}

interface CombinedJson {
  state: string;
  sha: string;
  total_count: number;
  statuses: StatusJson[];
  repository: { id: number; full_name: string } | null;
  commit_url: string;
  url: string;
}

const STATUS_KEYS = [
  'context',
  'created_at',
  'creator',
  'description',
  'id',
  'status',
  'target_url',
  'updated_at',
  'url',
];
const COMBINED_KEYS = ['commit_url', 'repository', 'sha', 'state', 'statuses', 'total_count', 'url'];

let s: TestServer;
let alice: U;
let writer: U;
let reader: U;
let stranger: U;
let work: string;
/** The first commit of alice/ci (its main branch when the tests start). */
let sha: string;
/** A second commit, on the branch feature/x and tagged v1. */
let sha2: string;
/** A commit of alice/hidden, a private repository. */
let hiddenSha: string;

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the system git asynchronously (the server answering it runs in this same process). */
function git(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], {
      cwd,
      env: {
        PATH: process.env['PATH'],
        HOME: work,
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

function remoteUrl(repoPath: string): string {
  const u = new URL(`${s.url}/${repoPath}.git`);
  u.username = alice.name;
  u.password = alice.token;
  return u.toString();
}

async function createRepo(name: string, opts: Record<string, unknown> = {}): Promise<void> {
  const r = await s.api('POST', '/user/repos', {
    token: alice.token,
    body: { name, auto_init: true, ...opts },
  });
  assert.equal(r.status, 201, r.text);
}

async function collaborator(repo: string, user: U, permission: string): Promise<void> {
  const r = await s.api('PUT', `/repos/alice/${repo}/collaborators/${user.name}`, {
    token: alice.token,
    body: { permission },
  });
  assert.equal(r.status, 204, r.text);
}

async function post(
  commit: string,
  body: Record<string, unknown>,
  token = alice.token,
  repo = 'ci',
): Promise<StatusJson> {
  const r = await s.api<StatusJson>('POST', `/repos/alice/${repo}/statuses/${commit}`, { token, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

before(async () => {
  s = await startServer();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-statuses-'));
  alice = await s.createUser('alice');
  writer = await s.createUser('writer');
  reader = await s.createUser('reader');
  stranger = await s.createUser('stranger');
  await createRepo('ci');
  await collaborator('ci', writer, 'write');
  await collaborator('ci', reader, 'read');
  await createRepo('hidden', { private: true });
  await collaborator('hidden', reader, 'read');

  // The commits, read and made with the real git client over HTTP.
  const dir = path.join(work, 'ci');
  await ok(git(work, 'clone', '--quiet', remoteUrl('alice/ci'), dir));
  sha = await ok(git(dir, 'rev-parse', 'HEAD'));
  fs.writeFileSync(path.join(dir, 'feature.txt'), 'feature\n');
  await ok(git(dir, 'add', 'feature.txt'));
  await ok(git(dir, 'commit', '--quiet', '-m', 'feature'));
  sha2 = await ok(git(dir, 'rev-parse', 'HEAD'));
  await ok(git(dir, 'tag', '-a', '-m', 'version 1', 'v1'));
  await ok(git(dir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/feature/x', 'refs/tags/v1'));
  const hidden = await ok(git(work, 'ls-remote', remoteUrl('alice/hidden'), 'refs/heads/main'));
  hiddenSha = hidden.split(/\s+/)[0]!;
  assert.match(sha, /^[0-9a-f]{40}$/);
  assert.match(hiddenSha, /^[0-9a-f]{40}$/);
});

after(async () => {
  await s?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('creating a status', () => {
  it('answers 201 with the CommitStatus, numbered per commit, with its creator', async () => {
    const r = await s.api<StatusJson>('POST', `/repos/alice/ci/statuses/${sha}`, {
      token: alice.token,
      body: {
        state: 'pending',
        target_url: 'https://ci.example.com/build/1',
        description: '  Build started  ',
        context: 'ci/build',
      },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), STATUS_KEYS);
    assert.equal(r.body.id, 1);
    assert.equal(r.body.status, 'pending');
    assert.equal(r.body.target_url, 'https://ci.example.com/build/1');
    assert.equal(r.body.description, 'Build started');
    assert.equal(r.body.context, 'ci/build');
    assert.equal(r.body.url, `${s.url}/api/v1/repos/alice/ci/statuses/${sha}`);
    assert.equal(r.body.creator?.login, 'alice');
    assert.equal(r.body.creator?.id, alice.id);
    assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(r.body.updated_at, r.body.created_at);

    const second = await post(sha, { state: 'success', context: 'ci/build' }, writer.token);
    assert.equal(second.id, 2);
    assert.equal(second.creator?.login, 'writer');
    assert.equal(second.target_url, '');
    assert.equal(second.description, '');
    // Another commit counts from 1 again.
    assert.equal((await post(sha2, { state: 'failure', context: 'ci/build' })).id, 1);
  });

  it('accepts every state and an upper-case SHA (stored in lower case)', async () => {
    for (const state of ['pending', 'success', 'error', 'failure', 'warning']) {
      const r = await post(sha2.toUpperCase(), { state, context: `state/${state}` });
      assert.equal(r.status, state);
      assert.equal(r.url, `${s.url}/api/v1/repos/alice/ci/statuses/${sha2}`);
    }
  });

  it('answers 422 for an abbreviated SHA, saying the full SHA is required', async () => {
    for (const short of [sha.slice(0, 7), sha.slice(0, 12), sha.slice(0, 39)]) {
      const r = await s.api<Msg>('POST', `/repos/alice/ci/statuses/${short}`, {
        token: alice.token,
        body: { state: 'success' },
      });
      assert.equal(r.status, 422, short);
      assert.match(r.body.message, /full commit SHA/);
      assert.match(r.body.message, /40/);
    }
  });

  it('answers 422 for what is not a SHA at all, and 404 for an unknown commit', async () => {
    for (const bad of ['main', `${sha}0`, 'z'.repeat(40), `${sha.slice(0, 39)}g`]) {
      const r = await s.api<Msg>('POST', `/repos/alice/ci/statuses/${bad}`, {
        token: alice.token,
        body: { state: 'success' },
      });
      assert.equal(r.status, 422, bad);
      assert.match(r.body.message, /full commit SHA/);
    }
    const unknown = await s.api<Msg>(
      'POST',
      `/repos/alice/ci/statuses/${'0123456789abcdef'.repeat(2)}01234567`,
      {
        token: alice.token,
        body: { state: 'success' },
      },
    );
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.message, /commit does not exist/);
    // The commit of another repository is unknown here.
    const elsewhere = await s.api('POST', `/repos/alice/ci/statuses/${hiddenSha}`, {
      token: alice.token,
      body: { state: 'success' },
    });
    assert.equal(elsewhere.status, 404);
  });

  it('answers 422 for a missing or unknown state and for fields of the wrong type', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /State/],
      [{ state: 'done' }, /State/],
      [{ state: 'SUCCESS' }, /State/],
      [{ state: 'success', context: 5 }, /Context/],
      [{ state: 'success', target_url: ['x'] }, /TargetURL|TargetUrl/],
    ];
    for (const [body, message] of cases) {
      const r = await s.api<Msg>('POST', `/repos/alice/ci/statuses/${sha}`, { token: alice.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.match(r.body.message, message);
    }
    const broken = await s.api('POST', `/repos/alice/ci/statuses/${sha}`, {
      token: alice.token,
      raw: '{"state":',
    });
    assert.equal(broken.status, 400);
  });

  it('needs write access: 403 for readers and others, 401 without a token, 404 when unseen', async () => {
    const body = { state: 'success', context: 'denied' };
    for (const u of [reader, stranger]) {
      const r = await s.api('POST', `/repos/alice/ci/statuses/${sha}`, { token: u.token, body });
      assert.equal(r.status, 403, u.name);
    }
    assert.equal((await s.api('POST', `/repos/alice/ci/statuses/${sha}`, { body })).status, 401);
    assert.equal(
      (await s.api('POST', `/repos/alice/hidden/statuses/${hiddenSha}`, { token: stranger.token, body }))
        .status,
      404,
    );
    assert.equal(
      (await s.api('POST', `/repos/alice/hidden/statuses/${hiddenSha}`, { token: reader.token, body }))
        .status,
      403,
    );
    // A token limited to reading cannot write, even for the owner.
    const t = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: [alice.name, alice.password],
      body: { name: 'read-only', scopes: ['read:repository'] },
    });
    assert.equal(t.status, 201);
    assert.equal(
      (await s.api('POST', `/repos/alice/ci/statuses/${sha}`, { token: t.body.sha1, body })).status,
      403,
    );
    const list = await s.api<StatusJson[]>('GET', `/repos/alice/ci/statuses/${sha}`, { token: alice.token });
    assert.ok(!list.body.some((x) => x.context === 'denied'), 'no refused status was stored');
    assert.equal(
      (await s.api('POST', `/repos/alice/nope/statuses/${sha}`, { token: alice.token, body })).status,
      404,
    );
  });
});

describe('listing statuses', () => {
  // The commit of the private repository, with five statuses.
  before(async () => {
    for (const [state, context] of [
      ['pending', 'a'],
      ['success', 'a'],
      ['failure', 'b'],
      ['success', 'c'],
      ['failure', 'a'],
    ]) {
      await post(hiddenSha, { state, context }, alice.token, 'hidden');
    }
  });

  const list = (query = '', token: string | null = reader.token) =>
    s.api<StatusJson[]>('GET', `/repos/alice/hidden/statuses/${hiddenSha}${query}`, token ? { token } : {});

  it('lists newest first by default, with X-Total-Count', async () => {
    const r = await list();
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((x) => x.id),
      [5, 4, 3, 2, 1],
    );
    assert.equal(r.headers.get('x-total-count'), '5');
    assert.deepEqual(Object.keys(r.body[0]!).sort(), STATUS_KEYS);
  });

  it('sorts as Forgejo does', async () => {
    const ids = async (sort: string) => (await list(`?sort=${sort}`)).body.map((x) => x.id);
    assert.deepEqual(await ids('oldest'), [1, 2, 3, 4, 5]);
    assert.deepEqual(await ids('highestindex'), [1, 2, 3, 4, 5]);
    assert.deepEqual(await ids('leastindex'), [5, 4, 3, 2, 1]);
    assert.deepEqual(await ids('recentupdate'), [5, 4, 3, 2, 1]);
    assert.deepEqual(await ids('leastupdate'), [1, 2, 3, 4, 5]);
    assert.equal((await list('?sort=sideways')).status, 422);
  });

  it('filters by state', async () => {
    const r = await list('?state=failure');
    assert.deepEqual(
      r.body.map((x) => x.id),
      [5, 3],
    );
    assert.equal(r.headers.get('x-total-count'), '2');
    assert.deepEqual((await list('?state=warning')).body, []);
    assert.equal((await list('?state=broken')).status, 422);
  });

  it('pages with page and limit, and Link headers', async () => {
    const first = await list('?limit=2');
    assert.deepEqual(
      first.body.map((x) => x.id),
      [5, 4],
    );
    assert.equal(first.headers.get('x-total-count'), '5');
    assert.match(first.headers.get('link') ?? '', /rel="next"/);
    const last = await list('?limit=2&page=3');
    assert.deepEqual(
      last.body.map((x) => x.id),
      [1],
    );
    assert.deepEqual((await list('?limit=2&page=4')).body, []);
  });

  it('follows the repository visibility for reading', async () => {
    assert.equal((await list('', stranger.token)).status, 404);
    assert.equal((await list('', null)).status, 404);
    assert.equal((await list('', alice.token)).status, 200);
    // A public repository's statuses can be read by anyone.
    const pub = await s.api<StatusJson[]>('GET', `/repos/alice/ci/statuses/${sha}`);
    assert.equal(pub.status, 200);
    assert.deepEqual(
      pub.body.map((x) => x.id),
      [2, 1],
    );
  });

  it('answers 422 for an abbreviated SHA and 404 for an unknown commit', async () => {
    const short = await s.api<Msg>('GET', `/repos/alice/ci/statuses/${sha.slice(0, 10)}`);
    assert.equal(short.status, 422);
    assert.match(short.body.message, /full commit SHA/);
    const unknown = await s.api('GET', `/repos/alice/ci/statuses/${'f'.repeat(40)}`);
    assert.equal(unknown.status, 404);
  });
});

describe('statuses by branch, tag or SHA, and the combined status', () => {
  // feature/x and v1 (sha2) have so far: ci/build failure, then one status for each state/<state>.
  const combined = (ref: string, query = '', token: string | null = alice.token) =>
    s.api<CombinedJson>('GET', `/repos/alice/ci/commits/${ref}/status${query}`, token ? { token } : {});

  it('finds the statuses of a commit by branch (with / as %2F), tag and full SHA alike', async () => {
    const byBranch = await s.api<StatusJson[]>('GET', '/repos/alice/ci/commits/feature%2Fx/statuses', {
      token: alice.token,
    });
    assert.equal(byBranch.status, 200);
    assert.equal(byBranch.body.length, 6);
    assert.equal(byBranch.headers.get('x-total-count'), '6');
    const byTag = await s.api<StatusJson[]>('GET', '/repos/alice/ci/commits/v1/statuses', {
      token: alice.token,
    });
    assert.deepEqual(byTag.body, byBranch.body);
    const bySha = await s.api<StatusJson[]>('GET', `/repos/alice/ci/commits/${sha2}/statuses?state=failure`, {
      token: alice.token,
    });
    assert.deepEqual(
      bySha.body.map((x) => x.context),
      ['state/failure', 'ci/build'],
    );
    const main = await s.api<StatusJson[]>('GET', '/repos/alice/ci/commits/main/statuses?sort=oldest', {
      token: alice.token,
    });
    assert.deepEqual(
      main.body.map((x) => [x.id, x.status]),
      [
        [1, 'pending'],
        [2, 'success'],
      ],
    );
  });

  it('answers no statuses for a ref that names nothing, as Forgejo does (Renovate takes a 404 for a deleted branch)', async () => {
    const refs = ['nope', 'renovate%2Fgone', 'main~1', 'a'.repeat(40), 'abcdef1', '--output=x', 'x%0Ay'];
    for (const ref of refs) {
      const list = await s.api<StatusJson[]>('GET', `/repos/alice/ci/commits/${ref}/statuses`);
      assert.equal(list.status, 200, `${ref}: ${list.text}`);
      assert.deepEqual(list.body, [], ref);
      assert.equal(list.headers.get('x-total-count'), '0', ref);
      const c = await combined(ref);
      assert.equal(c.status, 200, `${ref}: ${c.text}`);
      // Forgejo's empty CombinedStatus: nothing is known of the ref, not even a commit.
      assert.deepEqual(
        c.body,
        { state: '', sha: '', total_count: 0, statuses: [], repository: null, commit_url: '', url: '' },
        ref,
      );
    }
    // A repository the caller may not see is still not found.
    assert.equal((await s.api('GET', '/repos/alice/hidden/commits/nope/statuses')).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/hidden/commits/nope/status')).status, 404);
  });

  it('finds a commit by abbreviated SHA and by revision, as git reads them', async () => {
    const byBranch = await combined('main');
    assert.equal(byBranch.body.sha, sha);
    for (const ref of [sha.slice(0, 8), sha.slice(0, 12).toUpperCase(), 'feature%2Fx~1', 'v1%5E']) {
      const c = await combined(ref);
      assert.equal(c.status, 200, `${ref}: ${c.text}`);
      assert.deepEqual(c.body, byBranch.body, ref);
      const list = await s.api<StatusJson[]>('GET', `/repos/alice/ci/commits/${ref}/statuses`);
      assert.deepEqual(
        list.body.map((x) => [x.id, x.status]),
        [
          [2, 'success'],
          [1, 'pending'],
        ],
        ref,
      );
    }
  });

  it('combines the newest status of each context; the worst state wins', async () => {
    const r = await combined('feature%2Fx');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), COMBINED_KEYS);
    assert.equal(r.body.sha, sha2);
    assert.equal(r.body.state, 'error');
    assert.equal(r.body.total_count, 6);
    assert.equal(r.headers.get('x-total-count'), '6');
    assert.equal(r.body.statuses.length, 6);
    assert.equal(r.body.repository?.full_name, 'alice/ci');
    assert.equal(r.body.commit_url, `${s.url}/api/v1/repos/alice/ci/commits/${sha2}`);
    assert.equal(r.body.url, `${s.url}/api/v1/repos/alice/ci/commits/${sha2}/status`);
    // Newest first.
    assert.deepEqual(
      r.body.statuses.map((x) => x.context),
      ['state/warning', 'state/failure', 'state/error', 'state/success', 'state/pending', 'ci/build'],
    );
  });

  it('counts only the newest status of a context', async () => {
    // main: ci/build was pending, then success.
    const r = await combined('main');
    assert.equal(r.body.state, 'success');
    assert.equal(r.body.total_count, 1);
    assert.deepEqual(
      r.body.statuses.map((x) => [x.id, x.context, x.status]),
      [[2, 'ci/build', 'success']],
    );
    await post(sha, { state: 'pending', context: 'ci/test' });
    assert.equal((await combined('main')).body.state, 'pending', 'pending beats success');
    await post(sha, { state: 'warning', context: 'ci/lint' });
    assert.equal((await combined('main')).body.state, 'warning', 'warning beats pending');
    await post(sha, { state: 'failure', context: 'ci/test' });
    assert.equal((await combined('main')).body.state, 'failure', 'failure beats warning');
    await post(sha, { state: 'error', context: 'ci/build' });
    assert.equal((await combined(sha)).body.state, 'error', 'error beats failure');
    await post(sha, { state: 'success', context: 'ci/build' });
    await post(sha, { state: 'success', context: 'ci/test' });
    await post(sha, { state: 'success', context: 'ci/lint' });
    const done = await combined('main');
    assert.equal(done.body.state, 'success');
    assert.equal(done.body.total_count, 3);
    assert.deepEqual(
      done.body.statuses.map((x) => [x.context, x.status]),
      [
        ['ci/lint', 'success'],
        ['ci/test', 'success'],
        ['ci/build', 'success'],
      ],
    );
  });

  it('pages the contexts but combines them all', async () => {
    const r = await combined('feature%2Fx', '?limit=2&page=2');
    assert.equal(r.body.state, 'error');
    assert.equal(r.body.total_count, 6);
    assert.deepEqual(
      r.body.statuses.map((x) => x.context),
      ['state/error', 'state/success'],
    );
  });

  it('answers an empty combined status for a commit without statuses', async () => {
    const dir = path.join(work, 'ci');
    fs.writeFileSync(path.join(dir, 'bare.txt'), 'nothing\n');
    await ok(git(dir, 'add', 'bare.txt'));
    await ok(git(dir, 'commit', '--quiet', '-m', 'no statuses'));
    const bare = await ok(git(dir, 'rev-parse', 'HEAD'));
    await ok(git(dir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/bare'));
    const r = await combined('bare');
    assert.equal(r.status, 200);
    assert.equal(r.body.state, '');
    assert.equal(r.body.total_count, 0);
    assert.deepEqual(r.body.statuses, []);
    assert.equal(r.body.sha, bare);
    const list = await s.api<StatusJson[]>('GET', `/repos/alice/ci/statuses/${bare}`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, []);
  });

  it('follows the repository visibility', async () => {
    assert.equal((await s.api('GET', `/repos/alice/hidden/commits/main/status`)).status, 404);
    assert.equal(
      (await s.api('GET', `/repos/alice/hidden/commits/main/status`, { token: stranger.token })).status,
      404,
    );
    const r = await s.api<CombinedJson>('GET', `/repos/alice/hidden/commits/main/status`, {
      token: reader.token,
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.state, 'failure');
    assert.deepEqual(
      r.body.statuses.map((x) => [x.context, x.status]),
      [
        ['a', 'failure'],
        ['c', 'success'],
        ['b', 'failure'],
      ],
    );
  });

  it('gives other code the combined state and the state of each context', async () => {
    const repo = await s.ctx.repos.getById(
      (await s.api<{ id: number }>('GET', '/repos/alice/hidden', { token: alice.token })).body.id,
    );
    const c = await s.ctx.statuses.combinedState(repo!, hiddenSha);
    assert.equal(c.state, 'failure');
    assert.deepEqual([...c.contexts.entries()].sort(), [
      ['a', 'failure'],
      ['b', 'failure'],
      ['c', 'success'],
    ]);
    const none = await s.ctx.statuses.combinedState(repo!, 'f'.repeat(40));
    assert.equal(none.state, null);
    assert.equal(none.contexts.size, 0);
  });
});

describe('deleting a repository', () => {
  it('deletes its statuses', async () => {
    await createRepo('gone');
    const r = await s.api<{ id: number }>('GET', '/repos/alice/gone', { token: alice.token });
    const commitSha = (await ok(git(work, 'ls-remote', remoteUrl('alice/gone'), 'refs/heads/main'))).split(
      /\s+/,
    )[0]!;
    await post(commitSha, { state: 'success', context: 'x' }, alice.token, 'gone');
    await post(commitSha, { state: 'failure', context: 'y' }, alice.token, 'gone');
    const count = async (table: 'commit_status' | 'commit_status_index') =>
      Number(
        (
          await s.ctx.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('repo_id', '=', r.body.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count('commit_status'), 2);
    assert.equal(await count('commit_status_index'), 1);
    assert.equal((await s.api('DELETE', '/repos/alice/gone', { token: alice.token })).status, 204);
    assert.equal(await count('commit_status'), 0);
    assert.equal(await count('commit_status_index'), 0);
  });
});
