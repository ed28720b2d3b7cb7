// Benchmark for several nodes (manual, not a test): `anvil web` processes on one PostgreSQL
// database and one data directory.
//   1. API read throughput: CONCURRENCY kept-alive connections loop over a few GET endpoints for
//      SECONDS against one node, then split evenly across two nodes (target: the pair within 10%
//      of the single node on 2 cores: the pair shares the same CPUs, so this measures the cost of
//      being two, not a gain).
//   2. Hand-offs between nodes, each from the start of the API request on A that causes it to its
//      arrival (so A's own write is included; target: p99 < 200 ms each):
//      (a) an issue opened through A's API, its webhook delivered (by whichever node claims it)
//          to a local receiver;
//      (b) a workflow dispatched through A's API, a runner long-polling FetchTask on B handed the
//          job.
//      For context, the same for a commit written through A's contents API (a push event: the
//      webhook and a push-triggered job); that write itself takes a few hundred ms of git work,
//      which the times include.
// Run: npm run build && node dist/bench/multinode.js
// (PostgreSQL from ANVIL__DATABASE__* or 127.0.0.1:5432, user postgres; BENCH_SECONDS, BENCH_CONCURRENCY,
// BENCH_HANDOFFS; BENCH_REDIS=1 for the Redis channel.)
import { spawn, type ChildProcess, execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createAdminWithToken, freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { RunnerClient } from '../src/actions/runner-client.js';
import { Result } from '../src/actions/gen/runner/v1/messages_pb.js';
import { percentile, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const exec = promisify(execFile);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const HANDOFFS = Number(process.env['BENCH_HANDOFFS'] ?? 40);

const WORKFLOW = `on:
  push:
    branches: [main]
  workflow_dispatch:
jobs:
  bench:
    runs-on: self-hosted
    steps:
      - run: "true"
`;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-multinode-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ANVIL')) env[k] = v;
  Object.assign(env, {
    ANVIL__DATABASE__DB_TYPE: 'postgres',
    ANVIL__DATABASE__HOST: process.env['ANVIL__DATABASE__HOST'] ?? '127.0.0.1:5432',
    ANVIL__DATABASE__USER: process.env['ANVIL__DATABASE__USER'] ?? 'postgres',
    ANVIL__DATABASE__NAME: process.env['ANVIL__DATABASE__NAME'] ?? 'anvil_bench',
    ANVIL__SERVER__APP_DATA_PATH: dataDir,
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SECURITY__SECRET_KEY: 'bench-multinode-secret',
    ANVIL__LOG__LEVEL: 'warn',
    ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
    ANVIL__ACTIONS__ENABLED: 'true',
    ANVIL__ACTIONS__FETCH_TASK_WAIT: '30s',
    ANVIL__SERVER__START_SSH_SERVER: 'false',
    ...(process.env['BENCH_REDIS']
      ? { ANVIL__QUEUE__TYPE: 'redis', ANVIL__QUEUE__CONN_STR: 'redis://127.0.0.1:6379/0' }
      : {}),
  });
  const fresh = await freshPostgresDatabase(loadConfig({ env, cwd: dataDir }).database);
  env['ANVIL__DATABASE__NAME'] = fresh.name;
  const children: ChildProcess[] = [];
  const [portA, portB] = [await freePort(), await freePort()];
  env['ANVIL__SERVER__ROOT_URL'] = `http://127.0.0.1:${portA}/`;
  const start = async (name: string, port: number): Promise<string> => {
    const child = spawn(process.execPath, [cli, 'web'], {
      cwd: dataDir,
      env: { ...env, ANVIL__SERVER__HTTP_PORT: String(port), ANVIL__CLUSTER__NODE_NAME: name },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitFor200(`${url}/api/v1/version`, 30_000);
    return url;
  };
  const receiver = http.createServer();
  try {
    const run = (...args: string[]) => exec(process.execPath, [cli, ...args], { env, cwd: dataDir });
    const token = await createAdminWithToken(async (...args) => (await run(...args)).stdout);
    const auth = { authorization: `token ${token}`, 'content-type': 'application/json' };
    const a = await start('bench-a', portA);
    const api = async (base: string, method: string, p: string, body?: unknown) => {
      const res = await fetch(`${base}/api/v1${p}`, {
        method,
        headers: auth,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    for (let i = 0; i < 5; i++) await api(a, 'POST', '/user/repos', { name: `r${i}`, auto_init: true });
    const paths = [
      '/api/v1/repos/root/r1',
      '/api/v1/user',
      '/api/v1/users/root/repos?limit=10',
      '/api/v1/repos/root/r2/branches',
      '/api/v1/repos/search?q=r&limit=10',
    ];

    /** Requests per second of CONCURRENCY loops, spread over `bases` round-robin. */
    const throughput = async (bases: string[]): Promise<number> => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      let done = 0;
      let failed = 0;
      const get = (url: string) =>
        new Promise<void>((resolve) => {
          http
            .get(url, { agent, headers: { authorization: `token ${token}` } }, (res) => {
              res.resume();
              res.on('end', () => {
                if (res.statusCode === 200) done++;
                else failed++;
                resolve();
              });
            })
            .on('error', () => {
              failed++;
              resolve();
            });
        });
      // Warm-up, then the measured window.
      const loop = async (i: number, until: number) => {
        let k = i;
        while (Date.now() < until) await get(`${bases[i % bases.length]}${paths[k++ % paths.length]}`);
      };
      const warm = Date.now() + 2000;
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => loop(i, warm)));
      done = 0;
      failed = 0;
      const t0 = Date.now();
      const until = t0 + SECONDS * 1000;
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => loop(i, until)));
      agent.destroy();
      if (failed) console.log(`  (${failed} requests failed)`);
      return done / ((Date.now() - t0) / 1000);
    };

    const one = await throughput([a]);
    const b = await start('bench-b', portB);
    const two = await throughput([a, b]);
    console.log(`API reads, ${CONCURRENCY} connections, ${SECONDS} s:`);
    console.log(`  one node:  ${one.toFixed(0)} req/s`);
    console.log(
      `  two nodes: ${two.toFixed(0)} req/s (${((two / one) * 100).toFixed(1)}% of one; target >= 90%)`,
    );

    // Hand-offs
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const arrivals = new Map<string, number>();
    const waiters = new Map<string, () => void>();
    receiver.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (text += d));
      req.on('end', () => {
        res.end('ok');
        const body = JSON.parse(text) as { after?: string; issue?: { number: number } };
        const key = body.after ?? `issue-${body.issue?.number ?? ''}`;
        arrivals.set(key, performance.now());
        waiters.get(key)?.();
      });
    });
    const arrival = (key: string) =>
      arrivals.has(key) ? Promise.resolve() : new Promise<void>((r) => waiters.set(key, r));
    await api(a, 'POST', '/user/repos', { name: 'handoff', auto_init: true });
    await api(a, 'POST', '/repos/root/handoff/hooks', {
      type: 'gitea',
      active: true,
      events: ['push', 'issues'],
      config: { url: hookUrl, content_type: 'json' },
    });
    const reg = (await api(b, 'GET', '/repos/root/handoff/actions/runners/registration-token')) as {
      token: string;
    };
    const anon = new RunnerClient(b);
    const registered = await anon.register({
      name: 'bench',
      token: reg.token,
      version: 'bench',
      labels: ['self-hosted'],
    });
    const runner = new RunnerClient(b, { uuid: registered.runner!.uuid, token: registered.runner!.token });
    await runner.declare({ version: 'bench', labels: ['self-hosted'] });
    // The workflow first (its own run is taken and finished here).
    const writeFile = async (base: string, file: string, content: string, sha?: string) =>
      (await api(base, sha ? 'PUT' : 'POST', `/repos/root/handoff/contents/${file}`, {
        content: Buffer.from(content).toString('base64'),
        message: `write ${file}`,
        branch: 'main',
        ...(sha ? { sha } : {}),
      })) as { commit: { sha: string }; content: { sha: string } };
    let pending = runner.fetchTask({ tasksVersion: 0n });
    await writeFile(a, '.forgejo/workflows/bench.yml', WORKFLOW);
    const finish = async (p: typeof pending) => {
      const got = await p;
      if (got.task) await runner.updateTask({ state: { id: got.task.id, result: Result.SUCCESS } });
      else console.log('  (a FetchTask came back without a task)');
    };
    await finish(pending);
    const hooks: number[] = [];
    const tasks: number[] = [];
    const commitWrites: number[] = [];
    const commitHooks: number[] = [];
    const commitTasks: number[] = [];
    let blobSha: string | undefined;
    for (let i = 0; i < HANDOFFS; i++) {
      // (a) an issue through A, its webhook.
      let t0 = performance.now();
      const issue = (await api(a, 'POST', '/repos/root/handoff/issues', { title: `issue ${i}` })) as {
        number: number;
      };
      await arrival(`issue-${issue.number}`);
      hooks.push(arrivals.get(`issue-${issue.number}`)! - t0);

      // (b) a dispatch through A, the job handed to the runner waiting on B.
      pending = runner.fetchTask({ tasksVersion: 0n });
      // Let the FetchTask reach B and wait there.
      await new Promise((r) => setTimeout(r, 30));
      t0 = performance.now();
      await api(a, 'POST', '/repos/root/handoff/actions/workflows/bench.yml/dispatches', { ref: 'main' });
      const got = await pending;
      tasks.push(performance.now() - t0);
      await finish(Promise.resolve(got));

      // A commit through A's contents API (a push event): both hand-offs at once.
      pending = runner.fetchTask({ tasksVersion: 0n });
      await new Promise((r) => setTimeout(r, 30));
      t0 = performance.now();
      const written = await writeFile(a, 'counter.txt', `${i}\n`, blobSha);
      commitWrites.push(performance.now() - t0);
      blobSha = written.content.sha;
      const sha = written.commit.sha;
      const delivered = arrival(sha);
      const task = await pending;
      commitTasks.push(performance.now() - t0);
      await finish(Promise.resolve(task));
      await delivered;
      commitHooks.push(arrivals.get(sha)! - t0);
    }
    const show = (what: string, l: number[]) =>
      console.log(
        `  ${what}: p50 ${percentile(l, 50)} ms, p99 ${percentile(l, 99)} ms, max ${percentile(l, 100)} ms`,
      );
    console.log(`Hand-offs, ${HANDOFFS} of each, times from the start of the request on A that causes it:`);
    show('issue opened on A, its webhook delivered', hooks);
    show('workflow dispatched on A, the runner on B given the job', tasks);
    console.log("For context, a commit through A's contents API (git work included):");
    show('the API write itself (A answering)', commitWrites);
    show('its push webhook delivered', commitHooks);
    show('its push-triggered job given to the runner on B', commitTasks);
    console.log(`load: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
  } finally {
    receiver.close();
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
    );
    await fresh.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
