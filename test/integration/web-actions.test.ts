// The Actions pages of a repository with a real `anvil runner` (the bundled CLI) for the whole file:
// runs of a push listed and filtered, status badges, commit statuses per job, a workflow dispatched
// from the web form with typed inputs, its log followed through the job's JSON and downloaded, an
// artifact uploaded by the workflow and downloaded from the run page, re-runs (failed only, one job,
// all), cancelling, disabling a workflow, permissions and CSRF, and one pass in Chromium.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { startRunner, type TestRunner } from '../helpers/runner.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';
import { accessibilityViolations, launchBrowser, screenshots, WebClient } from '../helpers/web.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'dist', 'bundle', 'cli.js');

interface User {
  name: string;
  password: string;
  token: string;
}
interface Run {
  id: number;
  run_number: number;
  status: string;
  workflow_id: string;
  head_sha: string;
}
interface Job {
  id: number;
  name: string;
  status: string;
}

const UPLOAD_ACTION = `name: Upload
inputs:
  name: { required: true }
  path: { required: true }
runs:
  using: node20
  main: dist/index.js
`;
const UPLOAD_SRC = `import * as core from '@actions/core';
import { DefaultArtifactClient } from '@actions/artifact';
await new DefaultArtifactClient().uploadArtifact(core.getInput('name'),
  [process.env.GITHUB_WORKSPACE + '/' + core.getInput('path')], process.env.GITHUB_WORKSPACE);
`;

const WORKFLOWS: Record<string, string> = {
  '.forgejo/workflows/pass.yml': `name: Pass
on: push
jobs:
  ok:
    runs-on: self-hosted
    steps:
      - run: echo fine
`,
  '.forgejo/workflows/fail.yml': `name: Fail
on: push
jobs:
  good:
    runs-on: self-hosted
    steps:
      - run: echo good
  bad:
    runs-on: self-hosted
    steps:
      - run: exit 3
  after:
    needs: bad
    runs-on: self-hosted
    steps:
      - run: echo after
`,
  '.forgejo/workflows/dispatch.yml': `name: Dispatch
on:
  workflow_dispatch:
    inputs:
      greeting:
        description: Whom to greet
        required: true
      loud:
        type: boolean
        default: false
      colour:
        type: choice
        options: [red, green]
        default: red
      count:
        type: number
        default: 2
jobs:
  build:
    runs-on: self-hosted
    steps:
      - name: greet
        run: |
          echo "hello \${{ inputs.greeting }} loud=\${{ inputs.loud }} colour=\${{ inputs.colour }} count=\${{ inputs.count }}"
          printf '\\033[31mred <b>text</b>\\033[0m\\n'
          echo "report of \${{ inputs.greeting }}" > report.txt
      - name: upload
        uses: alice/upload-artifact@v1
        with:
          name: report
          path: report.txt
`,
  '.forgejo/workflows/slow.yml': `name: Slow
on: workflow_dispatch
jobs:
  wait:
    runs-on: self-hosted
    steps:
      # exec: the runner stops the step's process (a shell would leave its sleep running).
      - run: exec sleep 120
`,
};

async function bundleUpload(dir: string): Promise<Record<string, Buffer | string>> {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'index.js'), UPLOAD_SRC);
  await build({
    entryPoints: [path.join(dir, 'src', 'index.js')],
    outdir: path.join(dir, 'dist'),
    bundle: true,
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
  return {
    'action.yml': UPLOAD_ACTION,
    'package.json': '{"type":"module"}\n',
    'dist/index.js': fs.readFileSync(path.join(dir, 'dist', 'index.js')),
  };
}

describe('actions pages', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let carol: User;
  let appTree: string;
  let runnerDir: string;
  let runner: TestRunner | undefined;
  let web: WebClient;
  let browser: Browser | undefined;

  const api = <T>(method: string, p: string, body?: unknown) =>
    s.api<T>(method, p, { token: alice.token, ...(body === undefined ? {} : { body }) });

  async function push(files: Record<string, string | Buffer>, message: string): Promise<void> {
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(appTree, name)), { recursive: true });
      fs.writeFileSync(path.join(appTree, name), content);
    }
    await g.git(['add', '.'], appTree);
    await g.git(['commit', '-q', '-m', message], appTree);
    await g.git(
      ['push', '-q', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), 'main'],
      appTree,
    );
  }

  const runs = async () =>
    (await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs?limit=50')).body.workflow_runs;
  const jobsOf = async (run: Run) =>
    (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
  /** Name, status and attempt of each job of a run (the API's jobs have no attempt). */
  const attempts = async (run: Run) =>
    (
      await s.ctx.db
        .selectFrom('action_run_job')
        .select(['name', 'status', 'attempt'])
        .where('run_id', '=', run.id)
        .orderBy('id')
        .execute()
    ).map((j) => [j.name, j.status, Number(j.attempt)]);
  const DONE = ['success', 'failure', 'cancelled', 'skipped'];

  async function waitRun(pred: (r: Run) => boolean, what: string, done = true): Promise<Run> {
    let found: Run | undefined;
    const ok = await waitFor(
      async () => {
        found = (await runs()).find(pred);
        return !!found && (!done || DONE.includes(found.status));
      },
      120_000,
      200,
    );
    assert.ok(ok, `${what} (last: ${JSON.stringify(found)}; runner said: ${runner?.stderr})`);
    return found!;
  }

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true', ANVIL__ACTIONS__DEFAULT_ACTIONS_URL: 'self' });
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    assert.equal((await api('POST', '/user/repos', { name: 'upload-artifact' })).status, 201);
    assert.equal((await api('POST', '/user/repos', { name: 'app', private: true })).status, 201);
    assert.equal(
      (await api('PUT', '/repos/alice/app/collaborators/bob', { permission: 'read' })).status,
      204,
    );
    runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-web-actions-'));
    const action = await g.workTree('main');
    for (const [name, content] of Object.entries(await bundleUpload(path.join(runnerDir, 'upload')))) {
      fs.mkdirSync(path.dirname(path.join(action, name)), { recursive: true });
      fs.writeFileSync(path.join(action, name), content);
    }
    await g.git(['add', '.'], action);
    await g.git(['commit', '-q', '-m', 'upload action'], action);
    await g.git(['tag', 'v1'], action);
    await g.git(
      ['push', '-q', repoUrl(s.url, 'alice', 'upload-artifact', [alice.name, alice.password]), 'main', 'v1'],
      action,
    );

    const token = await api<{ token: string }>('GET', '/repos/alice/app/actions/runners/registration-token');
    runner = await startRunner({
      cli: CLI,
      instance: s.url,
      token: token.body.token,
      name: 'web-runner',
      dir: runnerDir,
    });

    appTree = await g.workTree('main');
    await push(WORKFLOWS, 'workflows');
    web = new WebClient(s.url);
    assert.equal((await web.signIn('alice', alice.password)).status, 303);
  });

  after(async () => {
    await browser?.close();
    await runner?.stop();
    await s?.close();
    g?.cleanup();
    if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
  });

  it('lists the runs of a push with filters, badges and commit statuses per job', async () => {
    const pass = await waitRun((r) => r.workflow_id === 'pass.yml', 'the pass run finished');
    const fail = await waitRun((r) => r.workflow_id === 'fail.yml', 'the fail run finished');
    assert.equal(pass.status, 'success');
    assert.equal(fail.status, 'failure', 'the run fails with its failed job');
    assert.deepEqual(
      (await jobsOf(fail)).map((j) => [j.name, j.status]),
      [
        ['good', 'success'],
        ['bad', 'failure'],
        ['after', 'skipped'],
      ],
    );

    const list = await web.get('/alice/app/actions');
    assert.equal(list.status, 200);
    assert.match(list.text, /pass\.yml/);
    assert.match(list.text, /dispatch\.yml/);
    assert.match(list.text, /2 workflow runs/);
    const count = async (q: string) => {
      const r = await web.get(`/alice/app/actions?${q}`);
      assert.equal(r.status, 200, q);
      return Number(/(\d+) workflow runs?/.exec(r.text)?.[1]);
    };
    assert.equal(await count('workflow=pass.yml'), 1);
    assert.equal(await count('event=push'), 2);
    assert.equal(await count('event=workflow_dispatch'), 0);
    assert.equal(await count('status=failure'), 1);
    assert.equal(await count('status=1'), 1, "Forgejo's status numbers");
    assert.equal(await count('branch=main'), 2);
    assert.equal(await count('branch=other'), 0);
    assert.equal(await count('actor=alice'), 2);
    assert.equal(await count('actor=bob'), 0);
    assert.equal(await count('status=nonsense'), 0, 'a nonsense filter matches nothing');
    assert.equal((await web.get('/alice/app/actions?event=%00')).status, 422);
    assert.equal(await count(`branch=${'x'.repeat(300)}`), 0);

    const badge = async (q: string) => {
      const r = await fetch(`${s.url}/alice/app/actions/workflows/${q}`, {
        headers: { cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      assert.equal(r.status, 200, q);
      assert.match(r.headers.get('content-type') ?? '', /^image\/svg\+xml/);
      assert.match(r.headers.get('cache-control') ?? '', /max-age=60/);
      return r.text();
    };
    assert.match(await badge('pass.yml/badge.svg'), /<svg[^>]*aria-label="pass: passing"/);
    assert.match(await badge('fail.yml/badge.svg'), /fail: failing/);
    assert.match(await badge('fail.yml/badge.svg?branch=other'), /no status/);
    assert.match(await badge('fail.yml/badge.svg?event=workflow_dispatch'), /no status/);
    assert.ok([404, 422].includes((await web.get('/alice/app/actions/workflows/a%00.yml/badge.svg')).status));
    assert.match(await badge(`fail.yml/badge.svg?branch=${'b'.repeat(300)}`), /no status/);

    await s.ctx.jobStatuses.idle();
    const statuses = await api<
      Array<{ context: string; status: string; target_url: string; description: string }>
    >('GET', `/repos/alice/app/commits/${fail.head_sha}/statuses?limit=50`);
    const newest = new Map<string, { status: string; target_url: string; description: string }>();
    for (const st of [...statuses.body].reverse()) newest.set(st.context, st);
    assert.equal(newest.get('Pass / ok (push)')?.status, 'success');
    assert.match(newest.get('Pass / ok (push)')!.description, /^Successful in \d+s$/);
    assert.equal(newest.get('Fail / bad (push)')?.status, 'failure');
    assert.equal(newest.get('Fail / after (push)')?.status, 'success', 'skipped counts as success');
    assert.match(
      newest.get('Fail / bad (push)')!.target_url,
      new RegExp(`/alice/app/actions/runs/${fail.run_number}/jobs/1$`),
    );
  });

  it('dispatches a workflow from the web form with typed inputs, and refuses bad ones', async () => {
    const form = await web.get('/alice/app/actions?workflow=dispatch.yml');
    assert.equal(form.status, 200);
    assert.match(form.text, /action="\/alice\/app\/actions\/manual"/);
    assert.match(form.text, /name="inputs\[loud\]" value="true"/);
    assert.match(form.text, /<select id="dispatch-input-colour" name="inputs\[colour\]"/);
    assert.match(form.text, /type="number"/);

    const bad = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'main',
      'inputs[greeting]': 'x',
      'inputs[count]': 'many',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /input &quot;count&quot; must be a number|input "count" must be a number/);
    const missing = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'main',
      'inputs[greeting]': '',
    });
    assert.equal(missing.status, 422);
    assert.match(missing.text, /greeting/);
    const badChoice = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'main',
      'inputs[greeting]': 'x',
      'inputs[colour]': 'blue',
    });
    assert.equal(badChoice.status, 422);
    const badRef = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'no-such-branch',
      'inputs[greeting]': 'x',
    });
    assert.equal(badRef.status, 422);
    assert.equal(
      (await web.post('/alice/app/actions/manual', { workflow: 'nope.yml', ref: 'main' })).status,
      404,
    );
    assert.equal(
      (await web.post('/alice/app/actions/manual', { workflow: 'pass.yml', ref: 'main' })).status,
      404,
      'a workflow without workflow_dispatch has no form',
    );

    const ok = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'main',
      'inputs[greeting]': 'world',
      'inputs[loud]': 'true',
      'inputs[colour]': 'green',
      'inputs[count]': '3',
    });
    assert.equal(ok.status, 303, ok.text);
    const m = /\/alice\/app\/actions\/runs\/(\d+)$/.exec(ok.location ?? '');
    assert.ok(m, ok.location ?? '');
    const runPage = await web.get(ok.location!);
    assert.equal(runPage.status, 200);
    assert.match(runPage.text, /Workflow dispatch\.yml was started/);

    // The job's JSON, as the page's script polls it, until both steps' lines are there.
    const jobUrl = `/alice/app/actions/runs/${m[1]}/jobs/0`;
    let lines: string[] = [];
    let stepNames: string[] = [];
    const seen = await waitFor(
      async () => {
        const r = await web.request(
          'POST',
          jobUrl,
          JSON.stringify({
            logCursors: [0, 1, 2, 3].map((step) => ({ step, cursor: 0, expanded: true })),
          }),
          { 'content-type': 'application/json', 'x-csrf-token': web.csrf, accept: 'application/json' },
        );
        assert.equal(r.status, 200, r.text);
        const body = JSON.parse(r.text) as {
          state: { currentJob: { steps: Array<{ summary: string }> } };
          logs: {
            stepsLog: Array<{
              step: number;
              cursor: number;
              lines: Array<{ message: string; html: string }>;
            }>;
          };
        };
        stepNames = body.state.currentJob.steps.map((st) => st.summary);
        lines = body.logs.stepsLog.flatMap((sl) => sl.lines.map((l) => l.message));
        return (
          stepNames.includes('greet') &&
          stepNames.includes('upload') &&
          lines.some((l) => /Job succeeded/.test(l))
        );
      },
      120_000,
      300,
    );
    assert.ok(
      seen,
      `steps ${JSON.stringify(stepNames)} lines ${JSON.stringify(lines)} runner: ${runner?.stderr}`,
    );
    assert.ok(lines.includes('hello world loud=true colour=green count=3'), lines.join('\n'));

    const run = await waitRun((r) => r.run_number === Number(m[1]), 'the dispatched run finished');
    assert.equal(run.status, 'success');

    const job = await web.get(jobUrl);
    assert.equal(job.status, 200);
    assert.match(
      job.text,
      /<span class="ansi-fg-1">red &lt;b&gt;text&lt;\/b&gt;<\/span>/,
      'ANSI colours, escaped',
    );
    assert.match(job.text, /<summary>.*greet.*<\/summary>/s);
    assert.match(job.text, /<time class="log-time" datetime="\d{4}-/);

    const log = await web.get(`${jobUrl}/logs`);
    assert.equal(log.status, 200);
    assert.match(log.headers.get('content-disposition') ?? '', /attachment; filename="alice-app-\d+-0\.log"/);
    assert.match(log.text, /Z hello world loud=true/);

    const runHtml = (await web.get(`/alice/app/actions/runs/${m[1]}`)).text;
    assert.match(runHtml, new RegExp(`href="/alice/app/actions/runs/${m[1]}/artifacts/report"`));
    const art = await web.get(`/alice/app/actions/runs/${m[1]}/artifacts/report`);
    assert.equal(art.status, 302);
    const zip = await fetch(new URL(art.location!, s.url));
    assert.equal(zip.status, 200);
    assert.equal(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
      'PK',
    );
    assert.equal((await web.get(`/alice/app/actions/runs/${m[1]}/artifacts/nope`)).status, 404);
    assert.ok([404, 422].includes((await web.get(`/alice/app/actions/runs/${m[1]}/artifacts/a%00b`)).status));
  });

  it('re-runs failed jobs, one job and all jobs, and cancels a run', async () => {
    const fail = await waitRun((r) => r.workflow_id === 'fail.yml', 'the fail run');
    const runUrl = `/alice/app/actions/runs/${fail.run_number}`;
    const page = await web.get(runUrl);
    assert.match(page.text, /Re-run failed jobs/);
    const r = await web.post(`${runUrl}/rerun-failed`, {});
    assert.equal(r.status, 303);
    assert.equal(r.location, runUrl);
    await waitFor(async () => (await runs()).find((x) => x.id === fail.id)!.status !== 'failure', 5000, 50);
    const again = await waitRun((x) => x.id === fail.id, 'the re-run ended');
    assert.equal(again.status, 'failure');
    assert.deepEqual(await attempts(again), [
      ['good', 'success', 1],
      ['bad', 'failure', 2],
      ['after', 'skipped', 0],
    ]);

    const pass = await waitRun((x) => x.workflow_id === 'pass.yml', 'the pass run');
    const passUrl = `/alice/app/actions/runs/${pass.run_number}`;
    assert.equal((await web.post(`${passUrl}/jobs/0/rerun`, {})).location, `${passUrl}/jobs/0`);
    assert.equal((await web.post(`${passUrl}/jobs/9/rerun`, {})).status, 404);
    await waitFor(async () => (await attempts(pass))[0]![2] === 2, 60_000, 200);
    const passAgain = await waitRun((x) => x.id === pass.id, 'the pass run ran again');
    assert.equal(passAgain.status, 'success');
    assert.equal((await web.post(`${passUrl}/rerun`, {})).status, 303);
    await waitFor(async () => (await attempts(pass))[0]![2] === 3, 60_000, 200);

    // A slow run: cancelled while it runs (or waits); re-running it meanwhile is refused.
    const d = await api<{ run_number: number }>(
      'POST',
      '/repos/alice/app/actions/workflows/slow.yml/dispatches',
      {
        ref: 'main',
        return_run_info: true,
      },
    );
    assert.equal(d.status, 201, d.text);
    const slowUrl = `/alice/app/actions/runs/${d.body.run_number}`;
    await waitFor(
      async () => (await runs()).find((x) => x.run_number === d.body.run_number)?.status === 'running',
      60_000,
      200,
    );
    const busy = await web.post(`${slowUrl}/rerun`, {});
    assert.equal(busy.status, 303);
    assert.match((await web.get(slowUrl)).text, /still running/);
    const cancel = await web.post(`${slowUrl}/cancel`, {});
    assert.equal(cancel.status, 303);
    const slow = await waitRun((x) => x.run_number === d.body.run_number, 'the slow run was cancelled');
    assert.equal(slow.status, 'cancelled');
    assert.equal((await jobsOf(slow))[0]!.status, 'cancelled');
    assert.match((await web.get(slowUrl)).text, /Re-run all jobs/);
    const twice = await web.post(`${slowUrl}/cancel`, {});
    assert.equal(twice.status, 303, 'cancelling a finished run says so');
  });

  it('disables and enables a workflow: a disabled one is not triggered nor dispatched', async () => {
    const r = await web.post('/alice/app/actions/disable?workflow=pass.yml', {});
    assert.equal(r.status, 303);
    assert.match((await web.get('/alice/app/actions?workflow=pass.yml')).text, /Enable workflow/);
    assert.equal((await web.post('/alice/app/actions/disable?workflow=nope.yml', {})).status, 404);
    await web.post('/alice/app/actions/disable?workflow=dispatch.yml', {});
    const refused = await web.post('/alice/app/actions/manual', {
      workflow: 'dispatch.yml',
      ref: 'main',
      'inputs[greeting]': 'x',
    });
    assert.equal(refused.status, 422);
    assert.match(refused.text, /disabled/);
    const before = (await runs()).length;
    await push({ 'README.md': 'more\n' }, 'more');
    const failRun = await waitRun(
      (x) => x.workflow_id === 'fail.yml' && x.run_number > before,
      'a new fail run',
      false,
    );
    assert.ok(failRun);
    assert.equal(
      (await runs()).filter((x) => x.workflow_id === 'pass.yml').length,
      1,
      'pass.yml did not run',
    );
    assert.equal((await web.post('/alice/app/actions/enable?workflow=pass.yml', {})).status, 303);
    assert.equal((await web.post('/alice/app/actions/enable?workflow=dispatch.yml', {})).status, 303);
    assert.doesNotMatch((await web.get('/alice/app/actions?workflow=pass.yml')).text, /Enable workflow/);
    await waitRun((x) => x.id === failRun.id, 'the new fail run ended');
  });

  it('lets readers see and only writers act; strangers get 404; forms need their CSRF token', async () => {
    const reader = new WebClient(s.url);
    assert.equal((await reader.signIn('bob', bob.password)).status, 303);
    const fail = await waitRun((r) => r.workflow_id === 'fail.yml', 'a fail run');
    const runUrl = `/alice/app/actions/runs/${fail.run_number}`;
    const seen = await reader.get(runUrl);
    assert.equal(seen.status, 200);
    assert.doesNotMatch(seen.text, /Re-run/);
    assert.equal((await reader.get(`${runUrl}/jobs/0`)).status, 200);
    assert.equal((await reader.get(`${runUrl}/jobs/0/logs`)).status, 200);
    assert.doesNotMatch((await reader.get('/alice/app/actions?workflow=dispatch.yml')).text, /Run workflow/);
    assert.equal((await reader.post(`${runUrl}/rerun`, {})).status, 403);
    assert.equal((await reader.post(`${runUrl}/cancel`, {})).status, 403);
    assert.equal((await reader.post('/alice/app/actions/disable?workflow=pass.yml', {})).status, 403);
    assert.equal(
      (await reader.post('/alice/app/actions/manual', { workflow: 'dispatch.yml', ref: 'main' })).status,
      403,
    );

    const stranger = new WebClient(s.url);
    assert.equal((await stranger.signIn('carol', carol.password)).status, 303);
    for (const p of [
      '/alice/app/actions',
      runUrl,
      `${runUrl}/jobs/0`,
      `${runUrl}/jobs/0/logs`,
      '/alice/app/actions/workflows/pass.yml/badge.svg',
    ]) {
      assert.equal((await stranger.get(p)).status, 404, p);
    }
    assert.equal((await stranger.post(`${runUrl}/rerun`, {})).status, 404);
    const anonymous = new WebClient(s.url);
    assert.equal((await anonymous.get('/alice/app/actions')).status, 404);

    assert.equal((await web.post(`${runUrl}/rerun`, { _csrf: null })).status, 403, 'no CSRF token');
    assert.equal((await web.post(`${runUrl}/rerun`, { _csrf: 'forged' })).status, 403);
    const json = await web.request('POST', `${runUrl}/jobs/0`, JSON.stringify({ logCursors: [] }), {
      'content-type': 'application/json',
    });
    assert.equal(json.status, 403, 'the JSON needs the token too');
    const badJson = await web.request(
      'POST',
      `${runUrl}/jobs/0`,
      JSON.stringify({ logCursors: [{ step: -1 }] }),
      {
        'content-type': 'application/json',
        'x-csrf-token': web.csrf,
      },
    );
    assert.equal(badJson.status, 422);
    assert.equal((await web.get('/alice/app/actions/runs/999')).status, 404);
    assert.equal((await web.get('/alice/app/actions/runs/abc')).status, 404);
    assert.equal((await web.get(`${runUrl}/jobs/99`)).status, 404);
  });

  it('shows the list, a run and a job following its log live in Chromium', async () => {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', alice.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    // A workflow whose second step waits for a gate this test opens: the log of the first step
    // must reach the page while the job still runs.
    let open = false;
    const gate = http.createServer((_req, res) => res.writeHead(open ? 200 : 503).end());
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;
    try {
      await push(
        {
          '.forgejo/workflows/live.yml': `name: Live
on:
  workflow_dispatch:
    inputs:
      greeting: { required: true }
jobs:
  build:
    runs-on: self-hosted
    steps:
      - name: greet
        run: |
          echo "hello \${{ inputs.greeting }}"
          echo "report of \${{ inputs.greeting }}" > report.txt
      - name: gate
        run: |
          until node -e "fetch('${gateUrl}').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; do sleep 0.2; done
      - name: after
        run: echo "second step done"
      - name: upload
        uses: alice/upload-artifact@v1
        with:
          name: report
          path: report.txt
`,
        },
        'a live workflow',
      );
      await page.goto(`${s.url}/alice/app/actions?workflow=live.yml`);
      await page.click('.act-dispatch summary');
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'actions-list');

      // A dispatch from the form; its job's page follows the log step by step.
      await page.fill('#dispatch-input-greeting', 'browser');
      await page.click('.act-dispatch button[type=submit]');
      await page.waitForURL(/\/alice\/app\/actions\/runs\/\d+$/);
      const runUrl = page.url();
      await page.goto(`${runUrl}/jobs/0`);
      await page.waitForFunction(
        () => /hello browser/.test(document.getElementById('job-log')?.textContent ?? ''),
        undefined,
        { timeout: 120_000 },
      );
      // Still running (the gate is shut): the first step is on the page, the next ones are not.
      assert.notEqual(await page.getAttribute('#job-log', 'data-done'), '1');
      assert.doesNotMatch((await page.textContent('#job-log')) ?? '', /second step done/);
      open = true;
      await page.waitForFunction(
        () => /second step done/.test(document.getElementById('job-log')?.textContent ?? ''),
        undefined,
        { timeout: 120_000 },
      );
      await page.waitForSelector('#job-log[data-done="1"]', { timeout: 120_000 });
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'actions-job');

      // The artifact, downloaded from the run page as a zip holding the report.
      await page.goto(runUrl);
      assert.match((await page.textContent('.act-artifacts')) ?? '', /report/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'actions-run');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click('.act-artifacts a[href$="/artifacts/report"]'),
      ]);
      const zip = fs.readFileSync((await download.path())!);
      assert.equal(zip.subarray(0, 2).toString(), 'PK');
      assert.ok(zip.includes(Buffer.from('report.txt')), 'the zip holds report.txt');
    } finally {
      await new Promise((r) => gate.close(r));
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
});
