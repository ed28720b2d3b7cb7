// Benchmark for JavaScript actions (manual, not a test): the time a job takes that runs a trivial
// JavaScript action (`uses: bench/hello@main`, an action repository on this instance with
// `runs: {using: node20, main: index.js}`), side by side with a job whose `run:` step does the
// same (`node -e "console.log(...)"`): what fetching (the first time), looking up (`git ls-remote`
// of the branch) and reading the action costs. Each job is dispatched (workflow_dispatch) and
// timed from the dispatch to the run's success, one `anvil runner daemon` on the host taking
// them; BENCH_ROUNDS rounds interleaved, medians printed. The first JavaScript job (the action not
// cached yet) is printed on its own.
//
// Run: npm run build && node dist/bench/actions-js.js
// Settings: BENCH_ROUNDS (default 7).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../test/helpers/server.js';
import { GitClient, repoUrl } from '../test/helpers/git.js';
import { median } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '..', 'bundle', 'cli.js');
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);

const s = await startServer({
  ANVIL__ACTIONS__ENABLED: 'true',
  ANVIL__LOG__LEVEL: 'error',
  ANVIL__ACTIONS__DEFAULT_ACTIONS_URL: 'self',
});
const git = new GitClient();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-js-'));
let daemon: ReturnType<typeof spawn> | undefined;
try {
  const bench = await s.createUser('bench');
  const token = bench.token;
  for (const name of ['ci', 'hello']) await s.api('POST', '/user/repos', { token, body: { name } });
  const push = async (repo: string, files: Record<string, string>) => {
    const wt = await git.workTree('main');
    for (const [f, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(wt, f)), { recursive: true });
      fs.writeFileSync(path.join(wt, f), content);
    }
    await git.git(['add', '.'], wt);
    await git.git(['commit', '-q', '-m', 'files'], wt);
    await git.git(
      ['push', '-q', repoUrl(s.url, 'bench', repo, ['bench', token]), 'HEAD:refs/heads/main'],
      wt,
    );
  };
  await push('hello', {
    'action.yml': 'name: hello\nruns:\n  using: node20\n  main: index.js\n',
    'index.js': "console.log('hello from an action');\n",
  });
  const job = (step: string) =>
    `on: workflow_dispatch\njobs:\n  j:\n    runs-on: self-hosted\n    steps:\n      - ${step}\n`;
  await push('ci', {
    '.forgejo/workflows/js.yml': job('uses: bench/hello@main'),
    '.forgejo/workflows/run.yml': job(`run: node -e "console.log('hello from a run step')"`),
  });

  const reg = await s.api<{ token: string }>('GET', '/repos/bench/ci/actions/runners/registration-token', {
    token,
  });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'runner', 'register', '--instance', s.url, '--token', reg.body.token, '--labels', 'self-hosted'],
      { cwd: dir, env: { PATH: process.env['PATH'], HOME: dir, LANG: 'C' }, stdio: 'ignore' },
    );
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`register exited ${code}`))));
  });
  daemon = spawn(
    process.execPath,
    [CLI, 'runner', 'daemon', '--capacity', '1', '--interval', '0.2', '--sandbox', 'none'],
    {
      cwd: dir,
      env: { PATH: process.env['PATH'], HOME: dir, LANG: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  daemon.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise((r) => setTimeout(r, 1000));

  type Runs = { workflow_runs: Array<{ id: number; path: string; status: string; conclusion?: string }> };
  const runIds = async () =>
    new Set(
      (await s.api<Runs>('GET', '/repos/bench/ci/actions/runs?limit=50', { token })).body.workflow_runs.map(
        (r) => r.id,
      ),
    );

  /** Seconds from dispatching `file` to its run's success. */
  async function timed(file: string): Promise<number> {
    const known = await runIds();
    const started = performance.now();
    const d = await s.api('POST', `/repos/bench/ci/actions/workflows/${file}/dispatches`, {
      token,
      body: { ref: 'main' },
    });
    if (d.status !== 204) throw new Error(`dispatch: ${d.status} ${d.text}`);
    for (;;) {
      const runs = (await s.api<Runs>('GET', '/repos/bench/ci/actions/runs?limit=50', { token })).body;
      const run = runs.workflow_runs.find((r) => !known.has(r.id));
      if (run && ['success', 'failure', 'cancelled'].includes(run.status)) {
        if (run.status !== 'success') throw new Error(`the ${file} run ended ${run.status}\n${err}`);
        return (performance.now() - started) / 1000;
      }
      if (performance.now() - started > 60_000) throw new Error(`the ${file} run did not end\n${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const cold = await timed('js.yml');
  // The action did run: its line is in the job's log.
  const last = (await s.api<Runs>('GET', '/repos/bench/ci/actions/runs?limit=1', { token })).body
    .workflow_runs[0]!;
  const jobs = await s.api<Array<{ id: number }>>('GET', `/repos/bench/ci/actions/runs/${last.id}/jobs`, {
    token,
  });
  const log = await s.api('GET', `/repos/bench/ci/actions/jobs/${jobs.body[0]!.id}/logs`, { token });
  if (!log.text.includes('hello from an action')) throw new Error(`the action did not run:\n${log.text}`);
  const js: number[] = [];
  const run: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    run.push(await timed('run.yml'));
    js.push(await timed('js.yml'));
  }
  const ms = (x: number) => `${(x * 1000).toFixed(0)} ms`;
  console.log(`dispatch to success of one job, one runner on the host, median of ${ROUNDS}:`);
  console.log(`  run: node -e ...        ${ms(median(run))}`);
  console.log(
    `  uses: bench/hello@main  ${ms(median(js))}   (+${ms(median(js) - median(run))}, ratio ${(median(js) / median(run)).toFixed(2)})`,
  );
  console.log(`  uses:, first job (action fetched into the runner's cache): ${ms(cold)}`);
} finally {
  daemon?.kill('SIGKILL');
  git.cleanup();
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
