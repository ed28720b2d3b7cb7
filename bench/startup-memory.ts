// Start-up and idle memory of `anvil web` as `npm start` runs it (SQLite, default config): the time
// from spawn to the first 200 of GET /api/v1/version, and the resident memory once idle, median of
// SPAWNS spawns on an already migrated database. With BEFORE_CLI=<bundle> (e.g. a copy of main's
// dist/bundle/cli.js) the same is measured for it, spawns alternating, and printed side by side.
// Run: npm run build && node dist/bench/startup-memory.js
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { cpuSeconds, createAlice, median, rssMb, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = process.env['AFTER_CLI'] ?? path.join(here, '..', 'bundle', 'cli.js');
const before = process.env['BEFORE_CLI'];
const SPAWNS = Number(process.env['BENCH_SPAWNS'] ?? 5);
/** How long after the first 200 the idle memory is read (bench/users.ts reads it after 1 s). */
const IDLE_MS = Number(process.env['BENCH_IDLE_MS'] ?? 1000);
/**
 * And again this long after the first 200: V8's memory reducer gives back the young generation a
 * start-up grew once the process has been idle for some seconds, as a server that waits for
 * requests is most of its life (0: not measured).
 */
const SETTLE_MS = Number(process.env['BENCH_SETTLE_MS'] ?? 30_000);
/** The flags of `npm start` (package.json). */
const FLAGS = (process.env['BENCH_NODE_FLAGS'] ?? '--max-semi-space-size=16').split(' ').filter(Boolean);

const TARGET_STARTUP_MS = 500;
const TARGET_RSS_MB = 90;

interface Spawn {
  startupMs: number;
  /** CPU time (user + system) the server had used by its first 200: less swayed by a busy machine. */
  cpuMs: number;
  rssMb: number;
  anonMb: number;
  settledRssMb: number;
}

function anonMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function once(bundle: string, env: NodeJS.ProcessEnv, port: number): Promise<Spawn> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...FLAGS, bundle, 'web'], { env, stdio: 'inherit' });
  try {
    await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 30_000);
    const startupMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpuMs = cpuSeconds(child.pid!) * 1000;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = { rssMb: rssMb(child.pid!), anonMb: anonMb(child.pid!) };
    if (SETTLE_MS > IDLE_MS) await new Promise((r) => setTimeout(r, SETTLE_MS - IDLE_MS));
    return { startupMs, cpuMs, ...idle, settledRssMb: SETTLE_MS > IDLE_MS ? rssMb(child.pid!) : idle.rssMb };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-startup-'));
try {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: dir,
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__LOG__LEVEL: 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  // Migrates the database and makes an account, so that each spawn only opens it.
  await createAlice(cli, env);
  const bundles = before === undefined ? { after: cli } : { before, after: cli };
  const runs: Record<string, Spawn[]> = {};
  for (let i = 0; i < SPAWNS; i++)
    for (const [name, bundle] of Object.entries(bundles))
      (runs[name] ??= []).push(await once(bundle, env, port));

  const summary = Object.fromEntries(
    Object.entries(runs).map(([name, r]) => [
      name,
      {
        startupMs: Math.round(median(r.map((s) => s.startupMs))),
        cpuMs: Math.round(median(r.map((s) => s.cpuMs))),
        idleRssMb: Math.round(median(r.map((s) => s.rssMb))),
        idleAnonMb: Math.round(median(r.map((s) => s.anonMb))),
        settledRssMb: Math.round(median(r.map((s) => s.settledRssMb))),
        startupRuns: r.map((s) => Math.round(s.startupMs)),
        rssRuns: r.map((s) => Math.round(s.rssMb)),
      },
    ]),
  );
  console.log(
    JSON.stringify(
      { flags: FLAGS, idleAfterMs: IDLE_MS, settledAfterMs: SETTLE_MS, spawns: SPAWNS, ...summary },
      null,
      2,
    ),
  );
  const row = (
    label: string,
    key: 'startupMs' | 'cpuMs' | 'idleRssMb' | 'settledRssMb',
    unit: string,
    target?: number,
  ) =>
    `${label.padEnd(22)}${Object.values(summary)
      .map((s) => `${s[key]} ${unit}`.padStart(10))
      .join('')}${target === undefined ? '' : `< ${target} ${unit}`.padStart(12)}`;
  console.log(
    `${''.padEnd(22)}${Object.keys(summary)
      .map((k) => k.padStart(10))
      .join('')}${'target'.padStart(12)}`,
  );
  console.log(row('first 200 after spawn', 'startupMs', 'ms', TARGET_STARTUP_MS));
  console.log(row('CPU by first 200', 'cpuMs', 'ms'));
  console.log(row(`idle RSS after ${IDLE_MS / 1000} s`, 'idleRssMb', 'MB', TARGET_RSS_MB));
  console.log(row(`idle RSS after ${SETTLE_MS / 1000} s`, 'settledRssMb', 'MB', TARGET_RSS_MB));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
