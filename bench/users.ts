// Benchmark for the foundation: GET /api/v1/users/{username} with a token on one Anvil process,
// side by side with a bare Fastify handler doing the same indexed SQLite lookup; start-up time to
// the first 200; idle resident memory. Run: npm run build && node dist/bench/users.js
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from '../test/helpers/server.js';
import {
  cpuSeconds,
  createAlice,
  waitFor200,
  median,
  rssMb as rssMbExact,
  runNodeQuiet as run,
} from './common.js';

/** Resident memory in whole MB. */
const rssMb = (pid: number) => Math.round(rssMbExact(pid));

const here = path.dirname(fileURLToPath(import.meta.url));
// BENCH_CLI=<bundle> measures another build (e.g. a copy of main's dist/bundle/cli.js).
const cli = process.env['BENCH_CLI'] ?? path.join(here, '..', 'bundle', 'cli.js');
/** The flags `npm start` uses (package.json); BENCH_NODE_FLAGS='' runs without. */
const NODE_FLAGS = (process.env['BENCH_NODE_FLAGS'] ?? '--max-semi-space-size=16').split(' ').filter(Boolean);
const DURATION = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

const CONNECTIONS = 10;

/** CPU microseconds the server at `pid` spent per request, run by run (a busy machine sways it less). */
const cpuPerRequest: Record<number, number[]> = {};

async function load(url: string, headers: Record<string, string>, pid: number): Promise<number> {
  const cpu = cpuSeconds(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  (cpuPerRequest[pid] ??= []).push(((cpuSeconds(pid) - cpu) * 1e6) / result.requests.total);
  return result.requests.average;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  // BENCH_LOG_LEVEL=info measures the default level, which logs a line per request.
  ANVIL__LOG__LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
  ANVIL__DATABASE__DB_TYPE: 'sqlite3',
};
const children: ChildProcess[] = [];
try {
  await createAlice(cli, env, true);
  const token = await run(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'alice', '--raw'],
    env,
  );
  const started = process.hrtime.bigint();
  const anvil = spawn(process.execPath, [...NODE_FLAGS, cli, 'web'], { env, stdio: 'inherit' });
  children.push(anvil);
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 10_000);
  const startupMs = Number(process.hrtime.bigint() - started) / 1e6;
  await new Promise((r) => setTimeout(r, 1000));
  const idleRss = rssMb(anvil.pid!);

  // Some more accounts so the lookup is an index seek among many rows.
  const adminAuth = { authorization: `token ${token}`, 'content-type': 'application/json' };
  for (let i = 0; i < 300; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        fetch(`http://127.0.0.1:${port}/api/v1/admin/users`, {
          method: 'POST',
          headers: adminAuth,
          body: JSON.stringify({
            username: `user${i + j}`,
            email: `u${i + j}@example.com`,
            password: 'password-1',
          }),
        }).then((r) => {
          if (r.status !== 201) throw new Error(`create user: ${r.status}`);
        }),
      ),
    );
  }

  const barePort = await freePort();
  const bare = fork(path.join(here, 'bare-server.js'), [path.join(dir, 'anvil.db'), String(barePort)], {
    stdio: 'inherit',
  });
  children.push(bare);
  await new Promise((r) => bare.once('message', r));

  const target = '/api/v1/users/user150';
  // Warm both up, then measure each on its own.
  await autocannon({
    url: `http://127.0.0.1:${port}${target}`,
    connections: CONNECTIONS,
    duration: 2,
    headers: { authorization: `token ${token}` },
  });
  await autocannon({ url: `http://127.0.0.1:${barePort}${target}`, connections: CONNECTIONS, duration: 2 });
  // Rounds alternate between the two, so that a passing disturbance weighs on both; medians.
  const anvilRuns: number[] = [];
  const bareRuns: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    anvilRuns.push(
      await load(`http://127.0.0.1:${port}${target}`, { authorization: `token ${token}` }, anvil.pid!),
    );
    bareRuns.push(await load(`http://127.0.0.1:${barePort}${target}`, {}, bare.pid!));
  }
  const anvilRps = median(anvilRuns);
  const bareRps = median(bareRuns);
  const loadedRss = rssMb(anvil.pid!);

  const ratio = anvilRps / bareRps;
  console.log(
    JSON.stringify(
      {
        anvilRps: Math.round(anvilRps),
        bareRps: Math.round(bareRps),
        ratio: Number(ratio.toFixed(3)),
        anvilCpuUsPerRequest: Math.round(median(cpuPerRequest[anvil.pid!]!)),
        bareCpuUsPerRequest: Math.round(median(cpuPerRequest[bare.pid!]!)),
        cpuRatio: Number((median(cpuPerRequest[bare.pid!]!) / median(cpuPerRequest[anvil.pid!]!)).toFixed(3)),
        anvilRuns: anvilRuns.map(Math.round),
        bareRuns: bareRuns.map(Math.round),
        startupMs: Math.round(startupMs),
        idleRssMb: idleRss,
        rssAfterLoadMb: loadedRss,
      },
      null,
      2,
    ),
  );
  console.log(
    `GET ${target} with a token: Anvil ${Math.round(anvilRps)} req/s, bare Fastify+SQLite ${Math.round(bareRps)} req/s, ratio ${ratio.toFixed(2)} (target >= 0.6)`,
  );
  console.log(
    `start-up to first 200: ${Math.round(startupMs)} ms (target < 1500); idle RSS ${idleRss} MB (target < 120)`,
  );
} finally {
  for (const c of children) c.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
