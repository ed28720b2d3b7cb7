// Reusable workflows (`on: workflow_call`, `jobs.<id>.uses`) end to end, with one runner daemon
// (the bundled CLI) for the whole file: a push runs a workflow whose jobs call a local reusable
// workflow (inputs from a needed job's output, a named secret; a matrix of calls with inherited
// secrets; a call the caller's `if` skips), a nested one, and one of another (private, same
// owner) repository at a tag; the called workflows' outputs and results reach a later job, and a
// workflow whose only trigger is workflow_call starts nothing. Then calls that cannot be made
// (missing file, no workflow_call trigger, missing or unknown input, a cycle, nesting deeper than
// four levels, another user's private repository, an unknown ref) fail their run with the reason.
// A matrix of calls keeps its strategy (max-parallel: one call at a time; fail-fast: a failed call
// cancels the others), and `inputs` is an expression context of the called jobs (runs-on, matrix,
// env, if, run; typed: a false boolean is falsy), github.event_name the caller's event.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRunner, type TestRunner } from '../helpers/runner.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'dist', 'bundle', 'cli.js');

interface User {
  name: string;
  password: string;
  token: string;
}
interface Run {
  id: number;
  status: string;
  run_number: number;
}
interface Job {
  id: number;
  name: string;
  status: string;
}

/** The reusable workflow of both repositories: greets, proves its inputs, secrets and event. */
const GREET = `on:
  workflow_call:
    inputs:
      who: { type: string, required: true }
      times: { type: number, default: 2 }
      loud: { type: boolean, default: false }
    secrets:
      token: { required: false }
    outputs:
      greeting:
        value: \${{ jobs.greet.outputs.text }}
jobs:
  greet:
    runs-on: self-hosted
    outputs:
      text: \${{ steps.s.outputs.text }}
    steps:
      - id: s
        run: |
          echo "text=hi \${{ inputs.who }} x\${{ inputs.times }} loud=\${{ inputs.loud }} ev=\${{ github.event_name }} token=\${{ secrets.token == 's3cret' }} other=\${{ secrets.OTHER != '' }}" >> "$GITHUB_OUTPUT"
      - if: \${{ inputs.loud }}
        run: echo LOUD
`;

const OUTER = `on:
  workflow_call:
    inputs:
      who: { type: string, required: true }
    outputs:
      greeting:
        value: \${{ jobs.inner.outputs.greeting }}
jobs:
  inner:
    uses: ./.forgejo/workflows/greet.yml
    with:
      who: \${{ inputs.who }}-inner
    secrets: inherit
`;

const CI = `on: push
jobs:
  setup:
    runs-on: self-hosted
    outputs:
      who: \${{ steps.o.outputs.who }}
    steps:
      - id: o
        run: echo "who=world" >> "$GITHUB_OUTPUT"
  call:
    needs: setup
    uses: ./.forgejo/workflows/greet.yml
    with:
      who: \${{ needs.setup.outputs.who }}
      times: 3
      loud: true
    secrets:
      token: \${{ secrets.DEPLOY }}
  legs:
    strategy:
      matrix:
        n: [1, 2]
    uses: ./.forgejo/workflows/greet.yml
    with:
      who: leg\${{ matrix.n }}
      times: \${{ matrix.n }}
    secrets: inherit
  nested:
    uses: ./.forgejo/workflows/outer.yml
    with:
      who: n
    secrets: inherit
  remote:
    uses: alice/lib/.forgejo/workflows/greet.yml@v1
    with:
      who: remote
  never:
    if: github.ref == 'refs/heads/nope'
    uses: ./.forgejo/workflows/greet.yml
    with:
      who: never
  after:
    needs: [call, legs, nested, remote]
    runs-on: self-hosted
    steps:
      - run: |
          set -e
          test "\${{ needs.call.outputs.greeting }}" = "hi world x3 loud=true ev=push token=true other=false"
          test "\${{ needs.call.result }}" = success
          case "\${{ needs.legs.outputs.greeting }}" in "hi leg1 x1 loud=false ev=push token=true other=true"|"hi leg2 x2 loud=false ev=push token=true other=true") ;; *) exit 1 ;; esac
          test "\${{ needs.nested.outputs.greeting }}" = "hi n-inner x2 loud=false ev=push token=true other=true"
          test "\${{ needs.remote.outputs.greeting }}" = "hi remote x2 loud=false ev=push token=false other=false"
          echo ALL-GOOD
`;

describe('reusable workflows (workflow_call)', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let runnerDir: string;
  let runner: TestRunner | undefined;
  /** One work tree per repository, so that later pushes add commits. */
  const trees = new Map<string, string>();

  const api = <T>(method: string, p: string, body?: unknown) =>
    s.api<T>(method, p, { token: alice.token, ...(body === undefined ? {} : { body }) });
  const runs = async (repo: string) =>
    (await api<{ workflow_runs: Run[] }>('GET', `/repos/alice/${repo}/actions/runs?limit=50`)).body
      .workflow_runs;
  const runError = async (id: number) =>
    (await s.ctx.db.selectFrom('action_run').select('error').where('id', '=', id).executeTakeFirstOrThrow())
      .error;

  async function push(user: User, repo: string, files: Record<string, string>, tag?: string): Promise<void> {
    const key = `${user.name}/${repo}`;
    const wt = trees.get(key) ?? (await g.workTree('main'));
    trees.set(key, wt);
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(wt, name)), { recursive: true });
      fs.writeFileSync(path.join(wt, name), content);
    }
    await g.git(['add', '.'], wt);
    await g.git(['commit', '-q', '-m', `${repo}`], wt);
    if (tag) await g.git(['tag', '-a', tag, '-m', tag], wt);
    const url = repoUrl(s.url, user.name, repo, [user.name, user.token]);
    await g.git(['push', '-q', url, 'main', ...(tag ? [tag] : [])], wt);
  }

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true' });
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const [user, name, priv] of [
      [alice, 'app', false],
      [alice, 'lib', true],
      [alice, 'errs', false],
      [bob, 'hidden', true],
    ] as const) {
      const r = await s.api('POST', '/user/repos', { token: user.token, body: { name, private: priv } });
      assert.equal(r.status, 201, r.text);
    }
    for (const [name, data] of [
      ['DEPLOY', 's3cret'],
      ['TOKEN', 's3cret'],
      ['OTHER', 'other-value'],
    ]) {
      const r = await api('PUT', `/repos/alice/app/actions/secrets/${name}`, { data });
      assert.equal(r.status, 201, r.text);
    }
    await push(alice, 'lib', { '.forgejo/workflows/greet.yml': GREET }, 'v1');
    await push(bob, 'hidden', { '.forgejo/workflows/greet.yml': GREET });

    runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-reusable-runner-'));
    const token = await api<{ token: string }>('GET', '/repos/alice/app/actions/runners/registration-token');
    runner = await startRunner({
      cli: CLI,
      instance: s.url,
      token: token.body.token,
      name: 'wfcall',
      dir: runnerDir,
      daemonArgs: ['--capacity', '2', '--sandbox', 'none'],
    });
  });

  after(async () => {
    await runner?.stop();
    await s?.close();
    g?.cleanup();
    if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
  });

  it('runs called workflows in the caller run; their outputs and results reach later jobs', async () => {
    await push(alice, 'app', {
      '.forgejo/workflows/ci.yml': CI,
      '.forgejo/workflows/greet.yml': GREET,
      '.forgejo/workflows/outer.yml': OUTER,
    });
    let run: Run | undefined;
    let jobs: Job[] = [];
    const done = await waitFor(async () => {
      run = (await runs('app'))[0];
      if (!run || !['success', 'failure', 'cancelled'].includes(run.status)) return false;
      jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
      return (
        jobs.length > 0 &&
        jobs.every((j) => ['success', 'failure', 'cancelled', 'skipped'].includes(j.status))
      );
    }, 60_000);
    assert.ok(done, `the run ended: ${JSON.stringify(jobs)} ${runner?.stderr}`);
    // Only ci.yml ran: greet.yml and outer.yml are only called.
    assert.equal((await runs('app')).length, 1);
    const byName = Object.fromEntries(jobs.map((j) => [j.name, j.status]));
    assert.deepEqual(byName, {
      setup: 'success',
      'call / greet': 'success',
      'legs (1) / greet': 'success',
      'legs (2) / greet': 'success',
      'nested / inner / greet': 'success',
      'remote / greet': 'success',
      'never / greet': 'skipped',
      after: 'success',
    });
    assert.equal(run!.status, 'success');
    const afterJob = jobs.find((j) => j.name === 'after')!;
    const log = await api<string>('GET', `/repos/alice/app/actions/jobs/${afterJob.id}/logs`);
    assert.match(String(log.text), /ALL-GOOD/);
    // The secret passed in is masked in the called job's log like any other.
    const call = jobs.find((j) => j.name === 'call / greet')!;
    const callLog = String((await api('GET', `/repos/alice/app/actions/jobs/${call.id}/logs`)).text);
    assert.match(callLog, /LOUD/);
    assert.doesNotMatch(callLog, /s3cret/);
    // The run's page lists the called jobs as GitHub names them.
    const web = new WebClient(s.url);
    await web.signIn(alice.name, alice.password);
    const page = await web.get(`/alice/app/actions/runs/${run!.run_number}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /nested \/ inner \/ greet/);
  });

  it('applies the strategy of a matrix of calls, and inputs are a context of the called jobs', async () => {
    // A call holds a lock directory while it runs: two calls at once would fail one of them.
    const leg = `on:
  workflow_call:
    inputs:
      n: { type: number, required: true }
      lock: { type: string, required: true }
      fail: { type: boolean, default: false }
jobs:
  leg:
    runs-on: self-hosted
    steps:
      - run: |
          mkdir "${runnerDir}/lock-\${{ inputs.lock }}" || { echo "ANOTHER-CALL-RUNS"; exit 1; }
          sleep 0.5
          rmdir "${runnerDir}/lock-\${{ inputs.lock }}"
          if \${{ inputs.fail && inputs.n == 1 }}; then exit 1; fi
`;
    const ctxWf = `on:
  workflow_call:
    inputs:
      name: { type: string, required: true }
      flag: { type: boolean, default: false }
      label: { type: string, default: self-hosted }
      list: { type: string, default: '["a"]' }
jobs:
  check:
    runs-on: \${{ inputs.label }}
    if: \${{ !inputs.flag }}
    strategy:
      matrix:
        v: \${{ fromJSON(inputs.list) }}
    env:
      GREETING: hello-\${{ inputs.name }}
    steps:
      - if: inputs.flag
        run: exit 1
      - run: |
          set -e
          test "$GREETING" = "hello-\${{ inputs.name }}"
          test "\${{ format('{0}-x', inputs.name) }}" = "n-main-x"
          test "\${{ inputs.flag && 'a' || 'b' }}" = b
          test "\${{ github.event_name }}" = push
          echo "CTX-OK \${{ matrix.v }} \${{ inputs.name }}"
`;
    const mx = `on: push
jobs:
  serial:
    strategy:
      max-parallel: 1
      fail-fast: false
      matrix:
        n: [1, 2]
    uses: ./.forgejo/workflows/leg.yml
    with: { n: '\${{ matrix.n }}', lock: serial, fail: false }
  ff:
    strategy:
      max-parallel: 1
      matrix:
        n: [1, 2]
    uses: ./.forgejo/workflows/leg.yml
    with: { n: '\${{ matrix.n }}', lock: ff, fail: true }
  ctx:
    uses: ./.forgejo/workflows/ctx.yml
    with:
      name: n-\${{ github.ref_name }}
      label: self-hosted
      list: '["a", "b"]'
  ctxskip:
    uses: ./.forgejo/workflows/ctx.yml
    with: { name: s, flag: true }
`;
    await push(alice, 'app', {
      '.forgejo/workflows/leg.yml': leg,
      '.forgejo/workflows/ctx.yml': ctxWf,
      '.forgejo/workflows/mx.yml': mx,
    });
    let jobs: Job[] = [];
    let runId = 0;
    assert.ok(
      await waitFor(async () => {
        const row = await s.ctx.db
          .selectFrom('action_run')
          .select(['id', 'status'])
          .where('workflow_id', '=', 'mx.yml')
          .executeTakeFirst();
        if (!row || !['success', 'failure', 'cancelled'].includes(row.status)) return false;
        runId = row.id;
        jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${row.id}/jobs`)).body;
        return jobs.every((j) => ['success', 'failure', 'cancelled', 'skipped'].includes(j.status));
      }, 60_000),
      `${JSON.stringify(jobs)} ${runner?.stderr}`,
    );
    assert.deepEqual(Object.fromEntries(jobs.map((j) => [j.name, j.status])), {
      // max-parallel 1: one call at a time, so both got the lock.
      'serial (1) / leg': 'success',
      'serial (2) / leg': 'success',
      // fail-fast: the first call failed, the second (held by max-parallel) was cancelled.
      'ff (1) / leg': 'failure',
      'ff (2) / leg': 'cancelled',
      // runs-on and the matrix from inputs; a true input makes the job's if false.
      'ctx / check (a)': 'success',
      'ctx / check (b)': 'success',
      'ctxskip / check (a)': 'skipped',
    });
    const logOf = async (name: string) =>
      String(
        (await api('GET', `/repos/alice/app/actions/jobs/${jobs.find((j) => j.name === name)!.id}/logs`))
          .text,
      );
    assert.match(await logOf('ctx / check (b)'), /CTX-OK b n-main/);
    // The second call started after the first had ended (the times its runner logged).
    const times = (log: string) => [...log.matchAll(/^(\S+Z) /gm)].map((m) => Date.parse(m[1]!));
    const [first, second] = [await logOf('serial (1) / leg'), await logOf('serial (2) / leg')];
    assert.ok(Math.min(...times(second)) >= Math.max(...times(first)), `${first}\n${second}`);
    const rows = await s.ctx.db
      .selectFrom('action_run_job')
      .select(['name', 'runs_on'])
      .where('run_id', '=', runId)
      .where('name', '=', 'ctx / check (a)')
      .execute();
    assert.deepEqual(
      rows.map((r) => JSON.parse(r.runs_on) as unknown),
      [['self-hosted']],
    );
  });

  it('fails a called job whose input cannot be had when it runs, its log saying why', async () => {
    await push(alice, 'app', {
      '.forgejo/workflows/typed.yml': `on: push
jobs:
  typed:
    uses: ./.forgejo/workflows/greet.yml
    with:
      who: x
      times: \${{ github.ref }}
`,
    });
    let jobs: Job[] = [];
    assert.ok(
      await waitFor(async () => {
        const row = await s.ctx.db
          .selectFrom('action_run')
          .select(['id', 'status'])
          .where('workflow_id', '=', 'typed.yml')
          .executeTakeFirst();
        if (!row || row.status !== 'failure') return false;
        const run = { id: row.id };
        jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
        return true;
      }, 30_000),
      runner?.stderr ?? '',
    );
    assert.deepEqual(
      jobs.map((j) => [j.name, j.status]),
      [['typed / greet', 'failure']],
    );
    const log = String((await api('GET', `/repos/alice/app/actions/jobs/${jobs[0]!.id}/logs`)).text);
    assert.match(
      log,
      /the call of job typed failed: input "times" must be a number, not "refs\/heads\/main"/,
    );
  });

  it('fails a run whose calls cannot be made, saying why on its page', async () => {
    const call = (uses: string, extra = '') => `on: push\njobs:\n  c:\n    uses: ${uses}\n${extra}`;
    const callable = (to: string) =>
      `on: workflow_call\njobs:\n  c:\n    uses: ./.forgejo/workflows/${to}.yml\n`;
    const cases: Record<string, [string, RegExp]> = {
      missing: [call('./.forgejo/workflows/nope.yml'), /nope\.yml: the workflow file does not exist/],
      'not-callable': [call('./.forgejo/workflows/plain.yml'), /plain\.yml has no workflow_call trigger/],
      'no-input': [
        call('./.forgejo/workflows/greet.yml'),
        /required input "who" of .*greet\.yml was not given/,
      ],
      'bad-input': [
        call('./.forgejo/workflows/greet.yml', '    with: { who: x, bogus: 1 }\n'),
        /input "bogus" is not an input/,
      ],
      'bad-type': [
        call('./.forgejo/workflows/greet.yml', '    with: { who: x, times: many }\n'),
        /input "times" of .*greet\.yml must be a number/,
      ],
      cycle: [call('./.forgejo/workflows/c1.yml'), /called in a cycle/],
      deep: [call('./.forgejo/workflows/d2.yml'), /nest at most 4 levels/],
      private: [
        call('bob/hidden/.forgejo/workflows/greet.yml@main', '    with: { who: x }\n'),
        /cannot be read/,
      ],
      'no-ref': [
        call('alice/lib/.forgejo/workflows/greet.yml@v9', '    with: { who: x }\n'),
        /ref v9 does not exist/,
      ],
      'not-workflow': [call('actions/checkout@v4'), /is not a reusable workflow/],
      // Not a call, but read at the same point: a max-parallel that is not known at creation.
      'late-max': [
        "on: push\njobs:\n  j:\n    runs-on: x\n    strategy: { max-parallel: '${{ github.run_number }}', matrix: { n: [1, 2] } }\n    steps: []\n",
        /jobs\.j\.strategy\.max-parallel \(\$\{\{ github\.run_number \}\}\) may read only inputs/,
      ],
    };
    const files: Record<string, string> = {
      '.forgejo/workflows/greet.yml': GREET,
      '.forgejo/workflows/plain.yml': 'on: workflow_dispatch\njobs: { j: { runs-on: x, steps: [] } }\n',
      '.forgejo/workflows/c1.yml': callable('c2'),
      '.forgejo/workflows/c2.yml': callable('c1'),
      '.forgejo/workflows/d2.yml': callable('d3'),
      '.forgejo/workflows/d3.yml': callable('d4'),
      '.forgejo/workflows/d4.yml': callable('d5'),
      '.forgejo/workflows/d5.yml': 'on: workflow_call\njobs: { j: { runs-on: x, steps: [] } }\n',
    };
    for (const [name, [content]] of Object.entries(cases)) files[`.forgejo/workflows/${name}.yml`] = content;
    await push(alice, 'errs', files);
    let list: Run[] = [];
    assert.ok(
      await waitFor(async () => (list = await runs('errs')).length >= Object.keys(cases).length),
      `runs: ${list.length}`,
    );
    // One run per pushed workflow with a push trigger; the called-only files start nothing.
    assert.equal(list.length, Object.keys(cases).length);
    const byFile = new Map<string, Run>();
    for (const r of list) {
      const row = await s.ctx.db
        .selectFrom('action_run')
        .select('workflow_id')
        .where('id', '=', r.id)
        .executeTakeFirstOrThrow();
      byFile.set(row.workflow_id, r);
    }
    for (const [name, [, reason]] of Object.entries(cases)) {
      const r = byFile.get(`${name}.yml`);
      assert.ok(r, name);
      assert.equal(r.status, 'failure', name);
      assert.match(await runError(r.id), reason, name);
    }
    const web = new WebClient(s.url);
    await web.signIn(alice.name, alice.password);
    const page = await web.get(`/alice/errs/actions/runs/${byFile.get('cycle.yml')!.run_number}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /Invalid workflow file <code>\.forgejo\/workflows\/cycle\.yml<\/code>: .*cycle/);
    // A workflow_call-only file cannot be dispatched either.
    const d = await api('POST', '/repos/alice/errs/actions/workflows/d5.yml/dispatches', { ref: 'main' });
    assert.equal(d.status, 400, d.text);
  });
});
