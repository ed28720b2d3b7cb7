// Actions end to end with [actions] ENABLED: workflows pushed with the real git client start runs
// (branch, tag and path filters; needs; matrix), `anvil runner register` and `anvil runner daemon
// --once` (the compiled CLI in a child process) run their jobs on the host (checkout over HTTP
// with the job token, secrets, outputs between jobs, a failing step failing the run), logs are
// stored and never show secrets; the runner protocol (connect-rpc, JSON and binary); job tokens
// act as the anvil-actions bot on their own repository only, only while the task runs, and what
// the bot pushes never triggers workflows; dispatches; runners and registration tokens.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
const SECRET = 'pa55-w0rd-never-to-be-seen';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}
interface Run {
  id: number;
  name: string;
  event: string;
  head_branch: string;
  head_sha: string;
  run_number: number;
  status: string;
  triggering_actor: { id: number; login: string } | null;
  url: string;
  workflow_id: string;
}
interface Job {
  id: number;
  name: string;
  needs: string[];
  runs_on: string[];
  status: string;
  task_id: number;
  repo_id: number;
  owner_id: number;
}
interface Connect {
  code: string;
  message: string;
}

const CI = `name: CI
on:
  push:
    branches: [main]
jobs:
  build:
    runs-on: self-hosted
    outputs:
      answer: \${{ steps.compute.outputs.result }}
    steps:
      - uses: actions/checkout@v4
      - name: show the checkout
        run: |
          echo "hello from $GITHUB_REPOSITORY at $GITHUB_SHA on $GITHUB_REF_NAME"
          cat README.md
      - name: use the secret
        env:
          MY: \${{ secrets.MY_SECRET }}
        run: |
          test "$MY" = "${SECRET}"
          echo "the secret is $MY and \${{ secrets.MY_SECRET }}"
          echo "variable \${{ vars.STAGE }}"
      - id: compute
        run: echo "result=42" >> "$GITHUB_OUTPUT"
      - name: push as the bot
        run: |
          git -c user.name=bot -c user.email=bot@example.com commit -q --allow-empty -m "from the job"
          git push -q origin HEAD:refs/heads/main
  after:
    needs: build
    runs-on: [self-hosted, host]
    steps:
      - run: echo "the answer is \${{ needs.build.outputs.answer }}"
`;

const FAIL = `on:
  push:
    branches: ['fail/**']
jobs:
  broken:
    runs-on: host
    steps:
      - run: echo "about to fail"
      - run: exit 3
      - run: echo "never printed"
`;

/** Workflows on a label no runner has: their runs wait, so filters can be checked. */
const FILTERS = {
  'tags.yml': `on:
  push:
    tags: ['v*']
jobs:
  t:
    runs-on: nowhere
    steps: [{ run: 'true' }]
`,
  'docs.yml': `on:
  push:
    branches: [main, 'feature/**']
    branches-ignore: ['feature/skip-*']
    paths: ['docs/**']
jobs:
  d:
    runs-on: nowhere
    steps: [{ run: 'true' }]
`,
  'matrix.yml': `name: Matrix
on:
  push:
    branches: [matrix]
  workflow_dispatch:
    inputs:
      who:
        required: true
      level:
        type: choice
        options: [low, high]
        default: low
jobs:
  build:
    runs-on: nowhere-\${{ matrix.os }}
    strategy:
      matrix:
        os: [linux, bsd]
        v: [1, 2]
        exclude:
          - os: bsd
            v: 2
        include:
          - os: linux
            extra: yes
          - os: plan9
            v: 9
  report:
    needs: [build]
    runs-on: nowhere
    steps: [{ run: 'true' }]
`,
  'pick.yml': `name: Pick
on:
  workflow_dispatch:
    inputs:
      os:
        type: choice
        options: [linux, bsd]
        default: linux
      versions:
        default: '[1, 2, 3]'
      stage:
        required: false
      parallel:
        default: '1'
jobs:
  test:
    name: test \${{ inputs.os }} \${{ matrix.v }}
    runs-on: nowhere-\${{ inputs.os }}\${{ inputs.stage }}
    strategy:
      max-parallel: \${{ inputs.parallel }}
      matrix:
        v: \${{ fromJSON(inputs.versions) }}
    concurrency: pick-\${{ inputs.os }}
    steps: [{ run: 'true' }]
`,
  'bot.yml': `on:
  push:
    branches: [bot-test]
jobs:
  b:
    runs-on: fake
    steps: [{ run: 'true' }]
`,
  'pr.yml': `on:
  pull_request:
    branches: [main]
jobs:
  check:
    runs-on: nowhere
    steps: [{ run: 'true' }]
`,
};

function cli(
  args: string[],
  cwd: string,
  timeoutMs = 60_000,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env['PATH'], HOME: cwd, LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('actions', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let wt: string;
  let runnerDir: string;
  const seen: string[] = [];

  const api = async <T>(method: string, p: string, token = alice.token, body?: unknown) => {
    const r = await s.api<T>(method, p, { token, body });
    seen.push(r.text);
    return r;
  };
  const runs = async (repo = 'ci') =>
    (
      await api<{ workflow_runs: Run[]; total_count: number }>(
        'GET',
        `/repos/alice/${repo}/actions/runs?limit=50`,
      )
    ).body;
  const jobsOf = async (runId: number) =>
    (await api<Job[]>('GET', `/repos/alice/ci/actions/runs/${runId}/jobs`)).body;
  const runOf = async (workflow: string, branch: string) =>
    (await runs()).workflow_runs.find((r) => r.workflow_id === workflow && r.head_branch === branch);
  const push = (...args: string[]) => g.git(['push', '-q', 'origin', ...args], wt);
  const daemonOnce = () =>
    cli(['runner', 'daemon', '--once', '--wait', '30', '--interval', '0.2'], runnerDir, 90_000);

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true' });
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const name of ['ci', 'other']) {
      const r = await s.api('POST', '/user/repos', { token: alice.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
    runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-runner-test-'));
    wt = await g.workTree('main');
    await g.git(['remote', 'add', 'origin', repoUrl(s.url, 'alice', 'ci', [alice.name, alice.password])], wt);
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
    if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
  });

  it('registers a runner with a registration token (anvil runner register)', async () => {
    const t = await api<{ token: string }>('GET', '/repos/alice/ci/actions/runners/registration-token');
    assert.equal(t.status, 200, t.text);
    assert.match(t.body.token, /^[0-9a-f]{40}$/);
    const again = await api<{ token: string }>('GET', '/repos/alice/ci/actions/runners/registration-token');
    assert.equal(again.body.token, t.body.token, 'the same token until replaced');
    assert.equal(
      (await api('GET', '/repos/alice/ci/actions/runners/registration-token', bob.token)).status,
      403,
    );

    const bad = await cli(['runner', 'register', '--instance', s.url, '--token', 'f'.repeat(40)], runnerDir);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /registration token not found/);

    const r = await cli(
      [
        'runner',
        'register',
        '--instance',
        s.url,
        '--token',
        t.body.token,
        '--name',
        'test-runner',
        '--labels',
        'self-hosted,host',
      ],
      runnerDir,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /registered/);
    const file = JSON.parse(fs.readFileSync(path.join(runnerDir, '.runner'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(file['name'], 'test-runner');
    assert.match(String(file['uuid']), /^[0-9a-f-]{36}$/);
    assert.deepEqual(file['labels'], ['self-hosted', 'host']);
    assert.equal(fs.statSync(path.join(runnerDir, '.runner')).mode & 0o777, 0o600);

    const list = await api<{
      runners: Array<{ name: string; status: string; busy: boolean; labels: Array<{ name: string }> }>;
      total_count: number;
    }>('GET', '/repos/alice/ci/actions/runners');
    assert.equal(list.status, 200);
    assert.equal(list.body.total_count, 1);
    assert.equal(list.body.runners[0]!.name, 'test-runner');
    assert.equal(list.body.runners[0]!.status, 'idle');
    assert.deepEqual(
      list.body.runners[0]!.labels.map((l) => l.name),
      ['self-hosted', 'host'],
    );
    // Registered for alice/ci only: not an organization's, a user's or the instance's runner.
    assert.equal((await api<{ total_count: number }>('GET', '/user/actions/runners')).body.total_count, 0);
    assert.equal(
      (await api<{ total_count: number }>('GET', '/admin/actions/runners', s.admin.token)).body.total_count,
      0,
    );
  });

  it('runs a pushed workflow end to end with the runner daemon', async () => {
    let r = await api('PUT', '/repos/alice/ci/actions/secrets/MY_SECRET', alice.token, { data: SECRET });
    assert.equal(r.status, 201);
    r = await api('POST', '/repos/alice/ci/actions/variables/STAGE', alice.token, { value: 'staging' });
    assert.equal(r.status, 201);
    await g.commit(wt, 'README.md', 'the readme of ci\n');
    fs.mkdirSync(path.join(wt, '.forgejo/workflows'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.forgejo/workflows/ci.yml'), CI);
    fs.writeFileSync(path.join(wt, '.forgejo/workflows/fail.yml'), FAIL);
    for (const [name, content] of Object.entries(FILTERS)) {
      fs.writeFileSync(path.join(wt, '.forgejo/workflows', name), content);
    }
    // Workflows elsewhere are ignored when .forgejo/workflows exists.
    fs.mkdirSync(path.join(wt, '.github/workflows'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.github/workflows/ignored.yml'), CI);
    await g.git(['add', '.'], wt);
    await g.git(['commit', '-q', '-m', 'Add workflows'], wt);
    const sha = (await g.git(['rev-parse', 'HEAD'], wt)).trim();
    await push('main');

    assert.ok(
      await waitFor(async () => (await runs()).total_count === 1),
      'one run: ci.yml (docs.yml: no docs change)',
    );
    const run = (await runs()).workflow_runs[0]!;
    assert.equal(run.workflow_id, 'ci.yml');
    assert.equal(run.event, 'push');
    assert.equal(run.head_branch, 'main');
    assert.equal(run.head_sha, sha);
    assert.equal(run.name, 'Add workflows');
    assert.equal(run.run_number, 1);
    assert.equal(run.status, 'waiting');
    assert.equal(run.triggering_actor?.login, 'alice');
    assert.equal(run.url, `${s.url}/alice/ci/actions/runs/1`);
    const one = await api<Run>('GET', `/repos/alice/ci/actions/runs/${run.id}`);
    assert.deepEqual(one.body, run);
    let jobs = await jobsOf(run.id);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.status, j.needs, j.runs_on]),
      [
        ['build', 'waiting', [], ['self-hosted']],
        ['after', 'blocked', ['build'], ['self-hosted', 'host']],
      ],
    );
    const waiting = await api<Job[]>('GET', '/repos/alice/ci/actions/runners/jobs?labels=self-hosted');
    assert.deepEqual(
      waiting.body.map((j) => j.name),
      ['build'],
    );

    const first = await daemonOnce();
    assert.equal(first.code, 0, first.err);
    jobs = await jobsOf(run.id);
    assert.deepEqual(
      jobs.map((j) => j.status),
      ['success', 'waiting'],
    );
    assert.equal((await api<Run>('GET', `/repos/alice/ci/actions/runs/${run.id}`)).body.status, 'running');

    const log = await s.api('GET', `/api/v1/repos/alice/ci/actions/jobs/${jobs[0]!.id}/logs`, {
      token: alice.token,
    });
    seen.push(log.text);
    assert.equal(log.status, 200);
    assert.match(log.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(log.text, /hello from alice\/ci at [0-9a-f]{40} on main/);
    assert.match(log.text, /the readme of ci/);
    assert.match(log.text, /the secret is \*\*\* and \*\*\*/);
    assert.match(log.text, /variable staging/);
    assert.ok(!log.text.includes(SECRET), 'the secret is masked in the log');

    const second = await daemonOnce();
    assert.equal(second.code, 0, second.err);
    jobs = await jobsOf(run.id);
    assert.deepEqual(
      jobs.map((j) => j.status),
      ['success', 'success'],
    );
    const done = await api<Run>('GET', `/repos/alice/ci/actions/runs/${run.id}`);
    assert.equal(done.body.status, 'success');
    const log2 = await s.api('GET', `/api/v1/repos/alice/ci/actions/jobs/${jobs[1]!.id}/logs`, {
      token: alice.token,
    });
    assert.match(log2.text, /the answer is 42/);

    const stored = await s.ctx.db.selectFrom('action_task_log').select('content').execute();
    assert.ok(stored.length > 5, 'log rows are stored per task');
    assert.ok(stored.every((row) => !row.content.includes(SECRET)));
  });

  it('never triggers workflows for what the bot pushes', async () => {
    // The build job pushed a commit to main with its job token (the checkout's credentials).
    const branch = await api<{ commit: { id: string; message: string } }>(
      'GET',
      '/repos/alice/ci/branches/main',
    );
    assert.equal(branch.status, 200);
    assert.match(branch.body.commit.message, /from the job/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await runs()).total_count, 1, 'no run for the push of the bot');
  });

  it('fails the run when a step fails', async () => {
    await g.git(['fetch', '-q', 'origin'], wt);
    await g.git(['reset', '-q', '--hard', 'origin/main'], wt);
    await g.git(['checkout', '-q', '-b', 'fail/one'], wt);
    await push('fail/one');
    assert.ok(await waitFor(async () => (await runOf('fail.yml', 'fail/one')) !== undefined));
    const r = await daemonOnce();
    assert.equal(r.code, 1, r.err);
    const run = (await runOf('fail.yml', 'fail/one'))!;
    assert.equal(run.status, 'failure');
    const [job] = await jobsOf(run.id);
    assert.equal(job!.status, 'failure');
    const log = await s.api('GET', `/api/v1/repos/alice/ci/actions/jobs/${job!.id}/logs`, {
      token: alice.token,
    });
    assert.match(log.text, /about to fail/);
    assert.match(log.text, /exit code 3/);
    assert.match(log.text, /Skipping step echo "never printed"/);
    assert.doesNotMatch(log.text, /Z never printed\n/);
    await g.git(['checkout', '-q', 'main'], wt);
  });

  it('applies branch, tag and path filters', async () => {
    const before = (await runs()).total_count;
    await g.git(['checkout', '-q', '-b', 'other'], wt);
    await g.commit(wt, 'x.txt', 'x');
    await push('other');
    await g.git(['tag', 'release-1'], wt);
    await push('release-1');
    await g.git(['checkout', '-q', '-b', 'feature/skip-me'], wt);
    await g.commit(wt, 'docs/a.md', 'docs');
    await push('feature/skip-me');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await runs()).total_count, before, 'other, release-1 and feature/skip-me start nothing');

    await g.git(['checkout', '-q', '-b', 'feature/docs'], wt);
    await push('feature/docs');
    assert.ok(
      await waitFor(async () => (await runOf('docs.yml', 'feature/docs')) !== undefined),
      'docs change',
    );
    await g.git(['tag', 'v1.0'], wt);
    await push('v1.0');
    assert.ok(await waitFor(async () => (await runOf('tags.yml', 'v1.0')) !== undefined), 'v* tag');
    const tagRun = (await runOf('tags.yml', 'v1.0'))!;
    assert.equal(tagRun.event, 'push');
    // Branch filters only: tags never start ci.yml; tag filters only: branches never start tags.yml.
    assert.equal((await runs()).total_count, before + 2);
    const filtered = await api<{ workflow_runs: Run[] }>(
      'GET',
      '/repos/alice/ci/actions/runs?event=push&status=waiting',
    );
    assert.ok(filtered.body.workflow_runs.every((x) => x.status === 'waiting'));
    const byNumber = await api<{ workflow_runs: Run[] }>(
      'GET',
      `/repos/alice/ci/actions/runs?run_number=${tagRun.run_number}`,
    );
    assert.deepEqual(
      byNumber.body.workflow_runs.map((x) => x.id),
      [tagRun.id],
    );
    await g.git(['checkout', '-q', 'main'], wt);
  });

  it('expands matrices and orders jobs by needs', async () => {
    await g.git(['checkout', '-q', '-b', 'matrix'], wt);
    await push('matrix');
    assert.ok(await waitFor(async () => (await runOf('matrix.yml', 'matrix')) !== undefined));
    const run = (await runOf('matrix.yml', 'matrix'))!;
    const jobs = await jobsOf(run.id);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.runs_on, j.status]),
      [
        ['build (linux, 1, yes)', ['nowhere-linux'], 'waiting'],
        ['build (linux, 2, yes)', ['nowhere-linux'], 'waiting'],
        ['build (bsd, 1)', ['nowhere-bsd'], 'waiting'],
        ['build (plan9, 9)', ['nowhere-plan9'], 'waiting'],
        ['report', ['nowhere'], 'blocked'],
      ],
    );
    await g.git(['checkout', '-q', 'main'], wt);
  });

  it('runs pull_request workflows on opened and synchronized pull requests', async () => {
    await g.git(['checkout', '-q', '-b', 'pr-branch'], wt);
    await g.commit(wt, 'pr.txt', 'one');
    await push('pr-branch');
    const before = (await runs()).total_count;
    const pr = await api<{ number: number }>('POST', '/repos/alice/ci/pulls', alice.token, {
      head: 'pr-branch',
      base: 'main',
      title: 'My change',
    });
    assert.equal(pr.status, 201, pr.text);
    assert.ok(
      await waitFor(async () => (await runs()).total_count === before + 1),
      'a run for the opened pull request',
    );
    let run = (await runs()).workflow_runs[0]!;
    assert.equal(run.event, 'pull_request');
    assert.equal(run.workflow_id, 'pr.yml');
    assert.equal(run.name, 'My change');
    assert.equal(run.head_sha, (await g.git(['rev-parse', 'HEAD'], wt)).trim());
    await g.commit(wt, 'pr.txt', 'two');
    await push('pr-branch');
    assert.ok(await waitFor(async () => (await runs()).total_count === before + 2), 'synchronized');
    run = (await runs()).workflow_runs[0]!;
    assert.equal(run.head_sha, (await g.git(['rev-parse', 'HEAD'], wt)).trim());
    // Closed and reopened through the issue endpoint: reopened is a default pull_request type.
    for (const state of ['closed', 'open']) {
      const r = await api('PATCH', `/repos/alice/ci/issues/${pr.body.number}`, alice.token, { state });
      assert.equal(r.status, 201, r.text);
    }
    assert.ok(await waitFor(async () => (await runs()).total_count === before + 3), 'reopened');
    // A pull request into another base branch does not match branches: [main].
    const other = await api('POST', '/repos/alice/ci/pulls', alice.token, {
      head: 'pr-branch',
      base: 'other',
      title: 'x',
    });
    assert.equal(other.status, 201, other.text);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await runs()).total_count, before + 3);
    await g.git(['checkout', '-q', 'main'], wt);
  });

  it('dispatches workflows (workflow_dispatch)', async () => {
    const url = '/repos/alice/ci/actions/workflows/matrix.yml/dispatches';
    let r = await api<{ message: string }>('POST', url, alice.token, { ref: 'main' });
    assert.equal(r.status, 400);
    assert.match(r.body.message, /required input "who"/);
    r = await api('POST', url, alice.token, { ref: 'main', inputs: { who: 'me', level: 'extreme' } });
    assert.equal(r.status, 400);
    r = await api('POST', url, alice.token, { ref: 'main', inputs: { who: 'me' } });
    assert.equal(r.status, 204, r.text);
    const info = await api<{ id: number; run_number: number; jobs: string[] }>('POST', url, alice.token, {
      ref: 'refs/heads/main',
      inputs: { who: 'you' },
      return_run_info: true,
    });
    assert.equal(info.status, 201, info.text);
    assert.equal(info.body.jobs.length, 5);
    const run = (await api<Run>('GET', `/repos/alice/ci/actions/runs/${info.body.id}`)).body;
    assert.equal(run.event, 'workflow_dispatch');
    assert.equal(run.run_number, info.body.run_number);
    assert.equal(run.head_branch, 'main');
    const payload = await s.ctx.db
      .selectFrom('action_run')
      .select('event_payload')
      .where('id', '=', info.body.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual((JSON.parse(payload.event_payload) as { inputs: unknown }).inputs, {
      who: 'you',
      level: 'low',
    });

    // A dispatch's inputs shape its jobs when the run is created: runs-on, the matrix (a list from
    // fromJSON), the job's name and its concurrency group.
    const pick = '/repos/alice/ci/actions/workflows/pick.yml/dispatches';
    const picked = await api<{ id: number; jobs: string[] }>('POST', pick, alice.token, {
      ref: 'main',
      inputs: { os: 'bsd', versions: '[7, 8]' },
      return_run_info: true,
    });
    assert.equal(picked.status, 201, picked.text);
    assert.deepEqual(picked.body.jobs, ['test bsd 7', 'test bsd 8']);
    const pickedJobs = (await api<Job[]>('GET', `/repos/alice/ci/actions/runs/${picked.body.id}/jobs`)).body;
    assert.deepEqual(
      pickedJobs.map((j) => j.runs_on),
      [['nowhere-bsd'], ['nowhere-bsd']],
    );
    const groups = await s.ctx.db
      .selectFrom('action_run_job')
      .select(['concurrency_group', 'max_parallel'])
      .where('run_id', '=', picked.body.id)
      .execute();
    assert.deepEqual(
      groups.map((g) => [g.concurrency_group, Number(g.max_parallel)]),
      [
        ['pick-bsd', 1],
        ['pick-bsd', 1],
      ],
    );
    // The defaults when not given; a list that is not JSON is refused, naming where it is read.
    const byDefault = await api<{ jobs: string[] }>('POST', pick, alice.token, {
      ref: 'main',
      return_run_info: true,
    });
    assert.deepEqual(byDefault.body.jobs, ['test linux 1', 'test linux 2', 'test linux 3']);
    const bad = await api<{ message: string }>('POST', pick, alice.token, {
      ref: 'main',
      inputs: { versions: 'seven' },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.body.message, /^jobs\.test\.strategy: fromJSON: not JSON/);
    const badMax = await api<{ message: string }>('POST', pick, alice.token, {
      ref: 'main',
      inputs: { parallel: 'two' },
    });
    assert.equal(badMax.status, 400, badMax.text);
    assert.match(badMax.body.message, /max-parallel must be a positive whole number/);

    assert.equal(
      (await api('POST', '/repos/alice/ci/actions/workflows/ci.yml/dispatches', alice.token, { ref: 'main' }))
        .status,
      400,
    );
    assert.equal(
      (
        await api('POST', '/repos/alice/ci/actions/workflows/nope.yml/dispatches', alice.token, {
          ref: 'main',
        })
      ).status,
      404,
    );
    assert.equal(
      (await api('POST', url, alice.token, { ref: 'no-such-branch', inputs: { who: 'x' } })).status,
      404,
    );
    assert.equal((await api('POST', url, alice.token, { ref: 'bad..ref' })).status, 422);
    assert.equal((await api('POST', url, alice.token, {})).status, 422);
    assert.equal((await api('POST', url, bob.token, { ref: 'main', inputs: { who: 'x' } })).status, 403);
    assert.equal((await s.api('POST', url, { body: { ref: 'main' } })).status, 401);
  });

  it('speaks the runner protocol (connect-rpc, JSON and binary)', async () => {
    const call = (method: string, body: unknown, headers: Record<string, string> = {}) =>
      s.api<Connect & Record<string, unknown>>('POST', `/api/actions/runner.v1.RunnerService/${method}`, {
        body,
        headers,
      });
    const ping = await s.api<{ data: string }>('POST', '/api/actions/ping.v1.PingService/Ping', {
      body: { data: 'anvil' },
    });
    assert.equal(ping.status, 200);
    assert.deepEqual(ping.body, { data: 'Hello, anvil!' });

    let r = await call('Register', { name: 'x', token: 'nope' });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid_argument');
    r = await call('Register', { token: 'nope' });
    assert.equal(r.status, 400);
    r = await call('FetchTask', {});
    assert.equal(r.status, 401);
    assert.equal(r.body.code, 'unauthenticated');
    r = await call(
      'FetchTask',
      {},
      { 'x-runner-uuid': '00000000-0000-0000-0000-000000000000', 'x-runner-token': 'x' },
    );
    assert.equal(r.status, 401);
    const malformed = await s.api<Connect>('POST', '/api/actions/runner.v1.RunnerService/Register', {
      raw: '{"name":',
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.code, 'invalid_argument');
    const unknown = await call('Explode', {});
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'unimplemented', "an unknown method is connect-rpc's unimplemented");
    const plain = await s.api('POST', '/api/actions/runner.v1.RunnerService/FetchTask', {
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(plain.status, 415);
    const wrongType = await call('UpdateLog', { taskId: 'not a number' });
    assert.ok([400, 401].includes(wrongType.status));
  });

  it('gives the job token to the task: the bot on its repository, only while the task runs', async () => {
    const token = (await api<{ token: string }>('GET', '/repos/alice/ci/actions/runners/registration-token'))
      .body.token;
    const reg = await s.api<{ runner: { uuid: string; token: string; labels: string[] } }>(
      'POST',
      '/api/actions/runner.v1.RunnerService/Register',
      { body: { name: 'fake', token, labels: ['fake:docker://none'], version: 'test' } },
    );
    assert.equal(reg.status, 200, reg.text);
    assert.deepEqual(reg.body.runner.labels, ['fake:docker://none']);
    const headers = { 'x-runner-uuid': reg.body.runner.uuid, 'x-runner-token': reg.body.runner.token };
    const declared = await s.api<{ runner: { labels: string[]; version: string } }>(
      'POST',
      '/api/actions/runner.v1.RunnerService/Declare',
      { body: { version: 'v2', labels: ['fake'] }, headers },
    );
    assert.equal(declared.status, 200);
    assert.equal(declared.body.runner.version, 'v2');

    await g.git(['checkout', '-q', '-b', 'bot-test'], wt);
    await push('bot-test');
    await g.git(['checkout', '-q', 'main'], wt);
    assert.ok(await waitFor(async () => (await runOf('bot.yml', 'bot-test')) !== undefined));
    const fetched = await s.api<{
      task?: {
        id: string;
        workflowPayload: string;
        secrets: Record<string, string>;
        context: Record<string, unknown>;
        vars: Record<string, string>;
      };
      tasksVersion: string;
    }>('POST', '/api/actions/runner.v1.RunnerService/FetchTask', { body: { tasksVersion: '0' }, headers });
    assert.equal(fetched.status, 200, fetched.text);
    const task = fetched.body.task!;
    assert.ok(task, 'a task for the fake label');
    assert.match(Buffer.from(task.workflowPayload, 'base64').toString(), /runs-on:\s*\n?\s*- fake/);
    assert.equal(task.secrets['MY_SECRET'], SECRET, 'the task carries the decrypted secret');
    assert.equal(task.vars['STAGE'], 'staging');
    const jobToken = task.secrets['GITEA_TOKEN']!;
    assert.match(jobToken, /^[0-9a-f]{40}$/);
    assert.equal(task.secrets['GITHUB_TOKEN'], jobToken);
    assert.equal(task.context['repository'], 'alice/ci');
    assert.equal(task.context['ref'], 'refs/heads/bot-test');
    assert.equal(task.context['ACTIONS_RESULTS_URL'], `${s.url}/`);
    const runtime = String(task.context['ACTIONS_RUNTIME_TOKEN']);
    assert.equal(runtime.split('.').length, 3, 'a runtime token (JWT) for the artifact service');

    // The job token is the bot, on alice/ci.
    const me = await s.api<{ id: number; login: string }>('GET', '/user', { token: jobToken });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id, -2);
    assert.equal(me.body.login, 'anvil-actions');
    const before = (await runs()).total_count;
    const bg = new GitClient();
    try {
      const clone = path.join(bg.home, 'clone');
      await bg.git(['clone', '-q', repoUrl(s.url, 'alice', 'ci', ['anvil-actions', jobToken]), clone]);
      await bg.commit(clone, 'bot.txt', 'pushed by the bot');
      await bg.git(['push', '-q', 'origin', 'HEAD:refs/heads/main'], clone);
      await bg.git(['push', '-q', 'origin', 'HEAD:refs/heads/bot-test'], clone);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await runs()).total_count, before, 'pushes of the bot start no run');
      const branch = await api<{ commit: { id: string } }>('GET', '/repos/alice/ci/branches/main');
      assert.equal(branch.body.commit.id, (await bg.git(['rev-parse', 'HEAD'], clone)).trim());
      // Only its own repository: alice/other is read-only to it.
      const other = await bg.tryGit(
        ['push', '-q', repoUrl(s.url, 'alice', 'other', ['x', jobToken]), 'HEAD:refs/heads/main'],
        clone,
      );
      assert.equal(other.ok, false);
      assert.match(other.out, /403|no write access/);
      assert.equal(
        (await s.api('PUT', '/repos/alice/ci/actions/secrets/X', { token: jobToken, body: { data: 'x' } }))
          .status,
        403,
      );
      assert.equal(
        (await s.api('POST', '/user/repos', { token: jobToken, body: { name: 'botrepo' } })).status,
        403,
      );
      assert.equal(
        (await s.api('POST', '/repos/alice/other/forks', { token: jobToken, body: {} })).status,
        403,
      );

      const id = task.id;
      let u = await s.api<{ state: { id: string; result: string }; sentOutputs: string[] }>(
        'POST',
        '/api/actions/runner.v1.RunnerService/UpdateTask',
        { body: { state: { id }, outputs: { a: '1' } }, headers },
      );
      assert.equal(u.status, 200, u.text);
      assert.deepEqual(u.body.sentOutputs, ['a']);
      const l = await s.api<{ ackIndex: string }>('POST', '/api/actions/runner.v1.RunnerService/UpdateLog', {
        body: { taskId: id, index: '0', rows: [{ content: 'line 0' }, { content: `leak ${SECRET}` }] },
        headers,
      });
      assert.equal(l.status, 200, l.text);
      assert.equal(l.body.ackIndex, '2');
      const dup = await s.api<{ ackIndex: string }>(
        'POST',
        '/api/actions/runner.v1.RunnerService/UpdateLog',
        {
          body: { taskId: id, index: '1', rows: [{ content: 'again' }, { content: 'line 2' }] },
          headers,
        },
      );
      assert.equal(dup.body.ackIndex, '3', 'rows the server has are not appended twice');
      u = await s.api('POST', '/api/actions/runner.v1.RunnerService/UpdateTask', {
        body: { state: { id, result: 'RESULT_SUCCESS' }, outputs: { a: 'changed', b: '2' } },
        headers,
      });
      assert.equal(u.body.state.result, 'RESULT_SUCCESS');
      assert.deepEqual(u.body.sentOutputs, ['a', 'b']);
      const rows = await s.ctx.db
        .selectFrom('action_task_log')
        .select('content')
        .where('task_id', '=', Number(id))
        .orderBy('idx')
        .execute();
      assert.deepEqual(
        rows.map((x) => x.content),
        ['line 0', 'leak ***', 'line 2'],
      );

      // The task has ended: the token no longer works, for git or the API.
      assert.equal((await s.api('GET', '/user', { token: jobToken })).status, 401);
      const late = await bg.tryGit(['push', '-q', 'origin', 'HEAD:refs/heads/late'], clone);
      assert.equal(late.ok, false);
      // Another runner's task is not this runner's to update.
      const foreign = await s.api<Connect>('POST', '/api/actions/runner.v1.RunnerService/UpdateTask', {
        body: { state: { id: '1', result: 'RESULT_FAILURE' } },
        headers,
      });
      assert.equal(foreign.status, 404);
    } finally {
      bg.cleanup();
    }
  });

  it('lists tasks and never shows secrets in any response', async () => {
    const t = await api<{
      total_count: number;
      workflow_runs: Array<{ id: number; name: string; status: string; run_number: number }>;
    }>('GET', '/repos/alice/ci/actions/tasks');
    assert.equal(t.status, 200);
    assert.equal(t.body.total_count, 4);
    assert.deepEqual(
      t.body.workflow_runs.map((x) => [x.name, x.status]),
      [
        ['b', 'success'],
        ['broken', 'failure'],
        ['after', 'success'],
        ['build', 'success'],
      ],
    );
    for (const p of [
      '/repos/alice/ci/actions/runs',
      '/repos/alice/ci/actions/secrets',
      '/repos/alice/ci/actions/runners',
    ]) {
      await api('GET', p);
    }
    for (const text of seen) assert.ok(!text.includes(SECRET), 'no response shows the secret');
  });

  it('deletes runners, whose token then stops working', async () => {
    const list = await api<{ runners: Array<{ id: number; name: string }> }>(
      'GET',
      '/repos/alice/ci/actions/runners',
    );
    const runner = list.body.runners.find((x) => x.name === 'test-runner')!;
    const got = await api<{ id: number; name: string }>(
      'GET',
      `/repos/alice/ci/actions/runners/${runner.id}`,
    );
    assert.equal(got.body.name, 'test-runner');
    assert.equal(
      (await api('DELETE', `/repos/alice/ci/actions/runners/${runner.id}`, bob.token)).status,
      403,
    );
    assert.equal((await api('DELETE', `/repos/alice/ci/actions/runners/${runner.id}`)).status, 204);
    assert.equal((await api('GET', `/repos/alice/ci/actions/runners/${runner.id}`)).status, 404);
    assert.equal((await api('DELETE', `/repos/alice/other/actions/runners/${runner.id}`)).status, 404);
    const r = await cli(['runner', 'daemon', '--once', '--wait', '2'], runnerDir);
    assert.equal(r.code, 1);
    assert.match(r.err, /unregistered runner|register it again/);
    const token = await api<{ token: string }>('GET', '/admin/runners/registration-token', s.admin.token);
    assert.equal(token.status, 200);
    assert.equal((await api('GET', '/admin/runners/registration-token', alice.token)).status, 403);
  });
});
