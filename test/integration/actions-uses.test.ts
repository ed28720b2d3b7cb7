// Actions that `anvil runner` fetches and runs (uses:), end to end: action repositories made on
// the instance itself and pushed with git ([actions] DEFAULT_ACTIONS_URL = self), one runner
// daemon (the bundled CLI, two tasks at a time) for the whole file, and one pushed workflow of two jobs:
// - a JavaScript action bundled with esbuild from @actions/core as published actions are (ESM,
//   node20), with pre, main and post, pre-if, state, outputs, exported variables, masks, a group
//   and an annotation; used directly by full URL and inside a composite action;
// - a composite action (owner/repo/path@ref) with inputs, defaults and outputs from its steps;
// - a local JavaScript action (./.forgejo/actions/local, node24) with a post-if;
// - an artifact action (@actions/artifact bundled) reaching Anvil's artifact service;
// - a job whose action does not exist: a failed step with a clear line, the run finishes, and the
//   posts of the actions that ran still run (per post-if), last first;
// - a cache action bundled from @actions/cache: saved by one run, restored by prefix in the next;
// - matrices with fail-fast and max-parallel.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startRunner, type TestRunner } from '../helpers/runner.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

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
  head_branch?: string;
}
interface Job {
  id: number;
  name: string;
  status: string;
}

const JS_ACTION = {
  'action.yml': `name: Greeter
description: greets, with pre and post
inputs:
  who:
    description: whom to greet
    required: true
  greeting:
    default: Hello
  secret-value:
    default: ''
outputs:
  greeting:
    description: the greeting
runs:
  using: node20
  pre: dist/pre.js
  pre-if: runner.os == 'Linux'
  main: dist/main.js
  post: dist/post.js
`,
  'src/pre.js': `import * as core from '@actions/core';
core.saveState('from-pre', 'pre-' + core.getInput('who'));
core.info('pre ran for ' + core.getInput('who'));
`,
  'src/main.js': `import * as core from '@actions/core';
const who = core.getInput('who', { required: true });
const secret = core.getInput('secret-value');
if (secret) core.setSecret(secret);
core.startGroup('details');
core.info('state from pre: ' + (core.getState('from-pre') || '(none)'));
const vars = ['GITHUB_WORKSPACE', 'GITHUB_REPOSITORY', 'GITHUB_SHA', 'RUNNER_TEMP', 'RUNNER_TOOL_CACHE',
  'ACTIONS_RUNTIME_TOKEN', 'ACTIONS_RESULTS_URL', 'ACTIONS_RUNTIME_URL', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY'];
core.info('environment: ' + vars.map((k) => k + (process.env[k] ? ' set' : ' unset')).join(', '));
core.endGroup();
core.saveState('from-main', 'main-' + who);
const greeting = core.getInput('greeting') + ', ' + who + '!';
core.setOutput('greeting', greeting);
core.exportVariable('GREETED', who);
core.warning('greeting ' + who, { file: 'src/main.js', startLine: 7 });
await core.summary.addRaw('greeted ' + who).write();
core.info('the secret is ' + secret);
`,
  'src/post.js': `import * as core from '@actions/core';
core.info('post for ' + core.getInput('who') + ': ' + core.getState('from-pre') + ' ' + core.getState('from-main'));
`,
};

const COMPOSITE = `name: Greet
inputs:
  name:
    required: true
  punctuation:
    default: '?'
outputs:
  greeting:
    value: \${{ steps.js.outputs.greeting }}
  shout:
    value: \${{ steps.up.outputs.shout }}
runs:
  using: composite
  steps:
    - id: js
      uses: alice/js-action@v1
      with:
        who: \${{ inputs.name }}
    - id: up
      shell: bash
      run: |
        echo "composite sees \${{ inputs.name }}\${{ inputs.punctuation }} GREETED=$GREETED in $(basename "$GITHUB_ACTION_PATH")"
        echo "shout=$(echo '\${{ steps.js.outputs.greeting }}' | tr a-z A-Z)" >> "$GITHUB_OUTPUT"
`;

const ARTIFACT_ACTION = {
  'action.yml': `name: Upload
inputs:
  name: { required: true }
  path: { required: true }
outputs:
  artifact-id: { description: the id }
runs:
  using: node20
  main: dist/index.js
`,
  'src/index.js': `import * as core from '@actions/core';
import { DefaultArtifactClient } from '@actions/artifact';
core.info('server for the artifact client: ' + process.env.GITHUB_SERVER_URL);
const r = await new DefaultArtifactClient().uploadArtifact(core.getInput('name'),
  [process.env.GITHUB_WORKSPACE + '/' + core.getInput('path')], process.env.GITHUB_WORKSPACE);
core.setOutput('artifact-id', String(r.id));
`,
};

/** A cache action bundled from @actions/cache (as actions/cache is): restore by key or prefix, then save. */
const CACHE_ACTION = {
  'action.yml': `name: Cache
inputs:
  key: { required: true }
runs:
  using: node20
  main: dist/index.js
`,
  'src/index.js': `import fs from 'node:fs';
import * as core from '@actions/core';
import * as cache from '@actions/cache';
const key = core.getInput('key');
process.chdir(process.env.GITHUB_WORKSPACE);
const hit = await cache.restoreCache(['cached'], key, ['deps-']);
core.info('restored: ' + (hit ?? 'nothing'));
if (hit) core.info('cached content: ' + fs.readFileSync('cached/data.txt', 'utf8'));
fs.mkdirSync('cached', { recursive: true });
fs.writeFileSync('cached/data.txt', 'saved by ' + key);
core.info('saved ' + key + ' as ' + (await cache.saveCache(['cached'], key)));
`,
};

/** One run per push to the cache branch: the second restores what the first saved. */
const CACHE_WORKFLOW = `on:
  push:
    branches: [cache]
jobs:
  cache:
    runs-on: self-hosted
    steps:
      - uses: alice/cache-action@v1
        with:
          key: deps-\${{ github.run_number }}
`;

const LOCAL_ACTION = {
  '.forgejo/actions/local/action.yml': `name: Local
inputs:
  word:
    required: true
runs:
  using: node24
  main: main.js
  post: post.js
  post-if: success()
`,
  '.forgejo/actions/local/main.js': `const fs = require('node:fs');
fs.appendFileSync(process.env.GITHUB_OUTPUT, 'echoed=' + process.env.INPUT_WORD + '\\n');
console.log('::notice file=main.js,line=2::local action ran with ' + process.env.INPUT_WORD);
`,
  '.forgejo/actions/local/post.js': `console.log('local post ran');
`,
};

const workflow = (url: string) => `on: push
jobs:
  main:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - id: greet
        name: greet with the composite
        uses: alice/tools/greet@main
        with:
          name: World
          colour: red
      - id: legacy
        run: |
          echo "composite said: \${{ steps.greet.outputs.greeting }} / \${{ steps.greet.outputs.shout }}"
          echo "GREETED=$GREETED"
          echo "::set-output name=old::legacy-out"
      - id: local
        uses: ./.forgejo/actions/local
        with:
          word: local-word
      - name: direct
        uses: ${url}/alice/js-action@v1
        with:
          who: direct
          secret-value: hunter2-secret
      - name: masks and outputs
        run: |
          echo "::add-mask::sw0rdfish-value"
          echo "the value is sw0rdfish-value"
          echo "again hunter2-secret"
          echo "local said \${{ steps.local.outputs.echoed }}, legacy said \${{ steps.legacy.outputs.old }}"
          echo "report" > report.txt
      - id: upload
        uses: alice/upload-artifact@v1
        with:
          name: report
          path: report.txt
      - run: echo "artifact id \${{ steps.upload.outputs.artifact-id }}"
  broken:
    runs-on: self-hosted
    steps:
      - uses: alice/js-action@v1
        with:
          who: broken
      - uses: actions/checkout@v4
      - uses: ./.forgejo/actions/local
        with:
          word: w
      - name: no inputs
        uses: alice/tools/greet@main
        continue-on-error: true
      - uses: alice/no-such-action@v1
      - run: echo "never printed"
`;

/** Writes files into a fresh working copy, commits them, tags and pushes them to alice/<repo>. */
/** Two matrices: one without fail-fast (a failed leg lets the others finish), one with it and one leg at a time. */
const MATRIX = `on: push
jobs:
  legs:
    runs-on: self-hosted
    strategy:
      fail-fast: false
      matrix:
        a: [1, 2]
        b: [x, y]
    steps:
      - run: |
          echo "leg \${{ matrix.a }}\${{ matrix.b }}"
          test "\${{ matrix.a }}\${{ matrix.b }}" != 2y
  fast:
    runs-on: self-hosted
    strategy:
      max-parallel: 1
      matrix:
        n: [1, 2, 3]
    steps:
      - run: test "\${{ matrix.n }}" != 1
`;

async function pushRepo(
  s: TestServer,
  g: GitClient,
  alice: User,
  repo: string,
  files: Record<string, string | Buffer>,
  tag?: string,
): Promise<void> {
  const wt = await g.workTree('main');
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(wt, name)), { recursive: true });
    fs.writeFileSync(path.join(wt, name), content);
  }
  await g.git(['add', '.'], wt);
  await g.git(['commit', '-q', '-m', `${repo}`], wt);
  if (tag) await g.git(['tag', '-a', tag, '-m', tag], wt);
  const url = repoUrl(s.url, 'alice', repo, [alice.name, alice.password]);
  await g.git(['push', '-q', url, 'main', ...(tag ? [tag] : [])], wt);
}

/** Bundles an action's sources as published actions are: ESM, dependencies inlined. */
async function bundle(dir: string, entries: string[]): Promise<Record<string, Buffer>> {
  const outdir = path.join(dir, 'dist');
  await build({
    entryPoints: entries.map((e) => path.join(dir, 'src', e)),
    outdir,
    bundle: true,
    splitting: entries.length > 1,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    nodePaths: [path.join(ROOT, 'node_modules')],
    banner: {
      js: "import { createRequire as __req } from 'node:module'; const require = __req(import.meta.url);",
    },
    logLevel: 'error',
  });
  const out: Record<string, Buffer> = { 'package.json': Buffer.from('{"type":"module"}\n') };
  for (const f of fs.readdirSync(outdir)) out[`dist/${f}`] = fs.readFileSync(path.join(outdir, f));
  return out;
}

describe('actions from repositories (uses:)', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let runnerDir: string;
  let runner: TestRunner | undefined;
  const logs = new Map<string, string>();

  const api = <T>(method: string, p: string) => s.api<T>(method, p, { token: alice.token });

  before(async () => {
    s = await startServer({
      ANVIL__ACTIONS__ENABLED: 'true',
      ANVIL__ACTIONS__DEFAULT_ACTIONS_URL: 'self',
    });
    g = new GitClient();
    alice = await s.createUser('alice');
    for (const name of ['js-action', 'tools', 'upload-artifact', 'cache-action', 'app']) {
      const r = await s.api('POST', '/user/repos', { token: alice.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
    runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-uses-runner-'));
    const src = fs.mkdtempSync(path.join(runnerDir, 'src-'));
    const files = (set: Record<string, string>, dir: string) => {
      for (const [name, content] of Object.entries(set)) {
        fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        fs.writeFileSync(path.join(dir, name), content);
      }
      return set;
    };
    const jsDir = path.join(src, 'js');
    const js = files(JS_ACTION, jsDir);
    await pushRepo(
      s,
      g,
      alice,
      'js-action',
      { ...js, ...(await bundle(jsDir, ['pre.js', 'main.js', 'post.js'])) },
      'v1',
    );
    const artDir = path.join(src, 'artifact');
    const art = files(ARTIFACT_ACTION, artDir);
    await pushRepo(s, g, alice, 'upload-artifact', { ...art, ...(await bundle(artDir, ['index.js'])) }, 'v1');
    await pushRepo(s, g, alice, 'tools', { 'greet/action.yml': COMPOSITE, 'README.md': 'tools\n' });
    const cacheDir = path.join(src, 'cache');
    const cacheAction = files(CACHE_ACTION, cacheDir);
    await pushRepo(
      s,
      g,
      alice,
      'cache-action',
      { ...cacheAction, ...(await bundle(cacheDir, ['index.js'])) },
      'v1',
    );

    const token = await api<{ token: string }>('GET', '/repos/alice/app/actions/runners/registration-token');
    runner = await startRunner({
      cli: CLI,
      instance: s.url,
      token: token.body.token,
      name: 'uses-runner',
      dir: runnerDir,
      daemonArgs: ['--capacity', '2'],
    });
  });

  after(async () => {
    await runner?.stop();
    await s?.close();
    g?.cleanup();
    if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
  });

  it('runs a workflow of JavaScript, composite, local and artifact actions to its end', async () => {
    await pushRepo(s, g, alice, 'app', {
      '.forgejo/workflows/ci.yml': workflow(s.url),
      ...LOCAL_ACTION,
    });
    let run: Run | undefined;
    const finished = await waitFor(
      async () => {
        const r = await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs');
        run = r.body.workflow_runs[0];
        if (!run) return false;
        // Every job ended: the jobs run side by side, and a failed one makes the run's status
        // final (Forgejo's aggregation) while the other may still run.
        const jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
        return jobs.length === 2 && jobs.every((j) => ['success', 'failure', 'cancelled'].includes(j.status));
      },
      180_000,
      250,
    );
    assert.ok(finished, `the run finished (runner said: ${runner?.stderr})`);
    assert.equal(run!.status, 'failure', 'the broken job fails the run');
    const jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run!.id}/jobs`)).body;
    assert.deepEqual(
      jobs.map((j) => [j.name, j.status]),
      [
        ['main', 'success'],
        ['broken', 'failure'],
      ],
    );
    for (const j of jobs) {
      const log = await s.api('GET', `/api/v1/repos/alice/app/actions/jobs/${j.id}/logs`, {
        token: alice.token,
      });
      assert.equal(log.status, 200);
      logs.set(j.name, log.text);
    }
  });

  it('fetches each action once into the runner cache, by DEFAULT_ACTIONS_URL or full URL', () => {
    const all = [...logs.values()].join('\n');
    assert.equal(all.match(/Getting the action alice\/js-action@v1 from/g)?.length, 1, all);
    assert.match(all, /Using the action alice\/js-action@v1 \([0-9a-f]{12}\) from the runner's cache/);
    assert.match(all, /Getting the action alice\/tools@main from http:\/\/127\.0\.0\.1:\d+\/alice\/tools/);
    const cache = path.join(runnerDir, '.cache', 'anvil-runner', 'actions');
    assert.ok(fs.readdirSync(cache).some((d) => d.includes('alice-js-action')));
  });

  it('runs JavaScript actions with pre, main and post, inputs, state and the runner environment', () => {
    const log = logs.get('main')!;
    assert.match(log, /pre ran for direct/);
    assert.doesNotMatch(log, /pre ran for World/, 'no pre for an action inside a composite action');
    assert.match(log, /state from pre: pre-direct/);
    assert.match(log, /state from pre: \(none\)/);
    assert.match(
      log,
      /environment: GITHUB_WORKSPACE set, GITHUB_REPOSITORY set, GITHUB_SHA set, RUNNER_TEMP set, RUNNER_TOOL_CACHE set, ACTIONS_RUNTIME_TOKEN set, ACTIONS_RESULTS_URL set, ACTIONS_RUNTIME_URL set, GITHUB_STATE set, GITHUB_STEP_SUMMARY set/,
    );
    assert.match(log, /::group::details/);
    assert.match(log, /::endgroup::/);
    assert.match(log, /::warning::src\/main\.js:7: greeting World/);
    assert.match(
      log,
      /::warning::Unexpected input\(s\) 'colour', valid inputs are \['name', 'punctuation'\]/,
    );
    // Posts run after the steps, last registered first, with the state of pre and main.
    const direct = log.indexOf('post for direct: pre-direct main-direct');
    const local = log.indexOf('local post ran');
    const nested = log.indexOf('post for World:  main-World');
    assert.ok(direct > log.indexOf('artifact id'), 'posts come after the steps');
    assert.ok(direct >= 0 && local > direct && nested > local, log);
  });

  it('runs composite and local actions, their inputs and outputs, and masks values', () => {
    const log = logs.get('main')!;
    assert.match(log, /composite sees World\? GREETED=World in greet/);
    assert.match(log, /composite said: Hello, World! \/ HELLO, WORLD!/);
    assert.match(log, /GREETED=World/, 'GITHUB_ENV of an action inside a composite reaches the job');
    assert.match(log, /::notice::main\.js:2: local action ran with local-word/);
    assert.match(log, /local said local-word, legacy said legacy-out/);
    assert.match(log, /the value is \*\*\*/);
    assert.match(log, /again \*\*\*/);
    assert.match(log, /the secret is \*\*\*/);
    assert.ok(
      !log.includes('sw0rdfish-value') && !log.includes('hunter2-secret'),
      'masked values never show',
    );
  });

  it("uploads an artifact with @actions/artifact through Anvil's artifact service", async () => {
    const log = logs.get('main')!;
    assert.match(log, /server for the artifact client: https:\/\/github\.com/);
    const id = /artifact id (\d+)/.exec(log)?.[1];
    assert.ok(id, log);
    const runs = await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs');
    const arts = await api<{ artifacts: Array<{ id: number; name: string; size_in_bytes: number }> }>(
      'GET',
      `/repos/alice/app/actions/runs/${runs.body.workflow_runs[0]!.id}/artifacts`,
    );
    assert.deepEqual(
      arts.body.artifacts.map((a) => [a.id, a.name]),
      [[Number(id), 'report']],
    );
  });

  it('fails the step of a missing action with a clear line and still runs the posts', () => {
    const log = logs.get('broken')!;
    assert.match(
      log,
      /::error::cannot read the action alice\/no-such-action@v1 at http:\/\/127\.0\.0\.1:\d+\/alice\/no-such-action: .*not found/,
    );
    assert.match(log, /::error::uses: alice\/tools\/greet@main: input required and not supplied: name/);
    assert.match(log, /Skipping step echo "never printed"/);
    assert.match(log, /post for broken: pre-broken main-broken/);
    assert.match(log, /Skipping Post \.\/\.forgejo\/actions\/local/, 'post-if: success() after a failure');
  });

  it('runs matrices: fail-fast false lets the other legs finish; fail-fast cancels the rest', async () => {
    const before = new Set(
      (await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs')).body.workflow_runs.map(
        (r) => r.id,
      ),
    );
    const wt = await g.workTree('matrix');
    fs.mkdirSync(path.join(wt, '.forgejo/workflows'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.forgejo/workflows/matrix.yml'), MATRIX);
    await g.git(['add', '.'], wt);
    await g.git(['commit', '-q', '-m', 'matrices'], wt);
    await g.git(['push', '-q', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), 'matrix'], wt);
    let run: Run | undefined;
    const finished = await waitFor(
      async () => {
        const r = await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs');
        run = r.body.workflow_runs.find((x) => !before.has(x.id));
        if (!run) return false;
        // Every job ended (a cancelled leg makes the run's status final before the others end).
        const jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
        return jobs.length === 7 && jobs.every((j) => ['success', 'failure', 'cancelled'].includes(j.status));
      },
      120_000,
      250,
    );
    assert.ok(finished, `the run finished (runner said: ${runner?.stderr})`);
    const jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run!.id}/jobs`)).body;
    assert.deepEqual(
      jobs.map((j) => [j.name, j.status]),
      [
        ['legs (1, x)', 'success'],
        ['legs (1, y)', 'success'],
        ['legs (2, x)', 'success'],
        ['legs (2, y)', 'failure'],
        ['fast (1)', 'failure'],
        ['fast (2)', 'cancelled'],
        ['fast (3)', 'cancelled'],
      ],
    );
    // max-parallel 1: the later legs were never started (cancelled while held back).
    const fast = await s.ctx.db
      .selectFrom('action_run_job')
      .select(['name', 'task_id', 'max_parallel'])
      .where('run_id', '=', run!.id)
      .where('job_id', '=', 'fast')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      fast.map((j) => [j.max_parallel, j.task_id === null]),
      [
        [1, false],
        [1, true],
        [1, true],
      ],
    );
  });

  it('saves a cache with @actions/cache in one run and restores it by prefix in the next', async () => {
    const wt = await g.workTree('cache');
    fs.mkdirSync(path.join(wt, '.forgejo/workflows'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.forgejo/workflows/cache.yml'), CACHE_WORKFLOW);
    await g.git(['add', '.'], wt);
    const url = repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]);
    const logsOf = async (): Promise<string[]> => {
      const r = await api<{ workflow_runs: Run[] }>(
        'GET',
        '/repos/alice/app/actions/runs?event=push&limit=50',
      );
      const mine = r.body.workflow_runs.filter((x) => x.head_branch === 'cache');
      const out: string[] = [];
      for (const run of mine) {
        if (!['success', 'failure', 'cancelled'].includes(run.status)) return [];
        const jobs = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
        const log = await s.api('GET', `/api/v1/repos/alice/app/actions/jobs/${jobs[0]!.id}/logs`, {
          token: alice.token,
        });
        out.push(`${run.status}\n${log.text}`);
      }
      return out;
    };
    for (const n of [1, 2]) {
      await g.git(['commit', '-q', '--allow-empty', '-m', `cache ${n}`], wt);
      await g.git(['push', '-q', url, 'cache'], wt);
      assert.ok(
        await waitFor(async () => (await logsOf()).length === n, 120_000, 250),
        `run ${n} finished (runner said: ${runner?.stderr})`,
      );
    }
    const [second, first] = await logsOf();
    assert.match(first!, /^success/, first);
    assert.match(first!, /restored: nothing/);
    assert.match(first!, /saved deps-\d+ as \d+/);
    assert.match(second!, /^success/, second);
    assert.match(second!, /restored: deps-\d+/);
    assert.match(second!, /cached content: saved by deps-\d+/);
  });
});
