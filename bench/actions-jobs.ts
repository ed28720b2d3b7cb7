// Benchmark for actions (manual, not a test), on an in-process Anvil server with actions on:
//   1. A workflow of 20 jobs of one `run: true` step each, pushed with the real git client, run by
//      one `anvil runner daemon --capacity 4` (the bundled CLI): seconds from the push to the
//      last job's result, in a bubblewrap sandbox when bwrap is installed and on the host
//      (target: under 10 s).
//   2. The server's overhead per job, measured by a runner made of protocol calls alone (no
//      step runs): a FetchTask that returns a job (queue to start) and the UpdateTask that gives
//      its result (end to result); median and p99 over 200 jobs (target: p99 under 100 ms).
// Run: npm run build && node dist/bench/actions-jobs.js
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Result } from '../src/actions/gen/runner/v1/messages_pb.js';
import { RunnerClient } from '../src/actions/runner-client.js';
import { startServer, type TestServer } from '../test/helpers/server.js';
import { GitClient, repoUrl } from '../test/helpers/git.js';
import { percentile } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '..', 'bundle', 'cli.js');
const JOBS = Number(process.env['BENCH_JOBS'] ?? 20);
const PROTOCOL_JOBS = Number(process.env['BENCH_PROTOCOL_JOBS'] ?? 200);

const workflow = (n: number, branch: string, label: string) =>
  `on:\n  push:\n    branches: [${branch}]\njobs:\n` +
  Array.from(
    { length: n },
    (_, i) => `  j${i}:\n    runs-on: ${label}\n    steps:\n      - run: 'true'\n`,
  ).join('');

async function registerRunner(s: TestServer, token: string, dir: string, labels: string): Promise<void> {
  const reg = await s.api<{ token: string }>('GET', '/repos/bench/ci/actions/runners/registration-token', {
    token,
  });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'runner', 'register', '--instance', s.url, '--token', reg.body.token, '--labels', labels],
      { cwd: dir, env: { PATH: process.env['PATH'], HOME: dir, LANG: 'C' }, stdio: 'ignore' },
    );
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`register exited ${code}`))));
  });
}

/** Seconds from a push of JOBS jobs to the last one's result, one daemon of capacity 4. */
async function daemonRun(
  s: TestServer,
  git: GitClient,
  wt: string,
  token: string,
  sandbox: 'bwrap' | 'none',
): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `anvil-bench-runner-${sandbox}-`));
  // The runner runs jobs on `self-hosted` (or `host`): one daemon at a time takes them.
  const label = 'self-hosted';
  await registerRunner(s, token, dir, label);
  const daemon = spawn(
    process.execPath,
    [CLI, 'runner', 'daemon', '--capacity', '4', '--interval', '0.2', '--sandbox', sandbox],
    {
      cwd: dir,
      env: { PATH: process.env['PATH'], HOME: dir, LANG: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  daemon.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const branch = `b-${sandbox}`;
    fs.mkdirSync(path.join(wt, '.forgejo/workflows'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.forgejo/workflows/many.yml'), workflow(JOBS, branch, label));
    await git.git(['add', '.'], wt);
    await git.git(['commit', '-q', '-m', `jobs on ${sandbox}`], wt);
    const started = performance.now();
    await git.git(
      ['push', '-q', repoUrl(s.url, 'bench', 'ci', ['bench', token]), `HEAD:refs/heads/${branch}`],
      wt,
    );
    for (;;) {
      const runs = await s.api<{ workflow_runs: Array<{ head_branch: string; id: number }> }>(
        'GET',
        '/repos/bench/ci/actions/runs',
        { token },
      );
      const run = runs.body.workflow_runs.find((r) => r.head_branch === branch);
      if (run) {
        const jobs = await s.api<Array<{ status: string }>>(
          'GET',
          `/repos/bench/ci/actions/runs/${run.id}/jobs`,
          {
            token,
          },
        );
        if (jobs.body.length === JOBS && jobs.body.every((j) => ['success', 'failure'].includes(j.status))) {
          const failed = jobs.body.find((j) => j.status !== 'success') as { id?: number } | undefined;
          if (failed) {
            const log = await s.api('GET', `/repos/bench/ci/actions/jobs/${failed.id}/logs`, { token });
            throw new Error(`a job failed:\n${log.text}\n${err}`);
          }
          return (performance.now() - started) / 1000;
        }
      }
      if (performance.now() - started > 60_000) {
        throw new Error(`the run did not end:\n${JSON.stringify(runs.body).slice(0, 2000)}\n${err}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    daemon.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The server's part of each job: FetchTask returning it, and UpdateTask taking its result. */
async function protocolOverhead(s: TestServer, git: GitClient, wt: string, token: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-proto-'));
  try {
    await registerRunner(s, token, dir, 'self-hosted');
    const reg = JSON.parse(fs.readFileSync(path.join(dir, '.runner'), 'utf8')) as {
      uuid: string;
      token: string;
    };
    const client = new RunnerClient(s.url, { uuid: reg.uuid, token: reg.token });
    fs.writeFileSync(
      path.join(wt, '.forgejo/workflows/many.yml'),
      workflow(PROTOCOL_JOBS, 'proto', 'self-hosted'),
    );
    await git.git(['add', '.'], wt);
    await git.git(['commit', '-q', '-m', 'protocol jobs'], wt);
    await git.git(
      ['push', '-q', repoUrl(s.url, 'bench', 'ci', ['bench', token]), 'HEAD:refs/heads/proto'],
      wt,
    );
    const fetches: number[] = [];
    const results: number[] = [];
    let version = 0n;
    while (results.length < PROTOCOL_JOBS) {
      const t0 = performance.now();
      const res = await client.fetchTask({ tasksVersion: version });
      const t1 = performance.now();
      if (res.tasksVersion > version) version = res.tasksVersion;
      if (!res.task) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      version = 0n;
      fetches.push(t1 - t0);
      const t2 = performance.now();
      await client.updateTask({ state: { id: res.task.id, result: Result.SUCCESS } });
      results.push(performance.now() - t2);
    }
    return { fetches, results };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true', ANVIL__LOG__LEVEL: 'error' });
const git = new GitClient();
try {
  const bench = await s.createUser('bench');
  await s.api('POST', '/user/repos', { token: bench.token, body: { name: 'ci' } });
  const wt = await git.workTree('main');
  await git.commit(wt, 'README.md', '# bench\n');
  await git.git(['push', '-q', repoUrl(s.url, 'bench', 'ci', ['bench', bench.token]), 'main'], wt);
  const bwrap = fs.existsSync('/usr/bin/bwrap');
  console.log(`${JOBS} jobs of one \`run: true\` step, one runner of capacity 4 (target: under 10 s):`);
  if (bwrap)
    console.log(
      `  in the bwrap sandbox: ${(await daemonRun(s, git, wt, bench.token, 'bwrap')).toFixed(2)} s`,
    );
  console.log(`  on the host:          ${(await daemonRun(s, git, wt, bench.token, 'none')).toFixed(2)} s`);
  const { fetches, results } = await protocolOverhead(s, git, wt, bench.token);
  console.log(`server overhead per job over ${PROTOCOL_JOBS} jobs (target: p99 under 100 ms):`);
  console.log(
    `  queue to start (FetchTask with a job): median ${percentile(fetches, 50)} ms, p99 ${percentile(fetches, 99)} ms`,
  );
  console.log(
    `  end to result (UpdateTask):            median ${percentile(results, 50)} ms, p99 ${percentile(results, 99)} ms`,
  );
} finally {
  git.cleanup();
  await s.close();
}
