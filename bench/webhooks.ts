// Benchmark for webhooks (manual, not a test): one repository with 100 active webhooks (push
// events, each with a secret) delivering to a local receiver, on a separate Anvil process
// (`anvil web`, which runs the delivery worker). Measured with the real git client:
//   - the time of `git push` (one new commit) without any webhook and with the 100 hooks
//     (target: no slower with the hooks: enqueueing is an insert, delivering happens later);
//   - the time from the end of each push until all 100 deliveries of it have arrived
//     (target: all within 2 s).
// Run: npm run build && node dist/bench/webhooks.js
// On PostgreSQL: BENCH_DB=postgres (ANVIL__DATABASE__HOST/USER/NAME as for the tests).
// BENCH_HOOKS (100) and BENCH_PUSHES (10) change the sizes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { GitClient, repoUrl } from '../test/helpers/git.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { waitFor200 } from './common.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const HOOKS = Number(process.env['BENCH_HOOKS'] ?? 100);
const PUSHES = Number(process.env['BENCH_PUSHES'] ?? 10);
const TARGET_MS = 2_000;
const SETTLE_MS = 500;

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return `median ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms`;
}

/** Deliveries received, by the `after` of the push they announce. */
const arrivals = new Map<string, number[]>();
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = performance.now();
    try {
      const after = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { after?: string }).after ?? '';
      const list = arrivals.get(after) ?? [];
      list.push(now);
      arrivals.set(after, list);
    } catch {
      // not a push payload
    }
    res.writeHead(200);
    res.end('ok');
  });
});
receiver.keepAliveTimeout = 30_000;
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverPort = (receiver.address() as AddressInfo).port;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-webhooks-'));
const port = await freePort();
const postgres = process.env['BENCH_DB'] === 'postgres';
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__DATABASE__DB_TYPE: postgres ? 'postgres' : 'sqlite3',
  ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
};
let dropDb: (() => Promise<void>) | undefined;
if (postgres) {
  const fresh = await freshPostgresDatabase(loadConfig({ env, cwd: dir }).database);
  env['ANVIL__DATABASE__NAME'] = fresh.name;
  dropDb = fresh.drop;
}
let server: ChildProcess | undefined;
const g = new GitClient();

try {
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  const token = (await ctx.tokens.create(alice, 'bench', ['all'])).token;
  await ctx.repos.create(alice, alice, { name: 'app', autoInit: true });
  await ctx.close();

  server = spawn(process.execPath, ['--max-semi-space-size=16', cli, 'web'], { env, stdio: 'inherit' });
  const base = `http://127.0.0.1:${port}/api/v1`;
  await waitFor200(`${base}/version`, 20_000);
  const headers = { authorization: `token ${token}`, 'content-type': 'application/json' };

  const wt = path.join(g.home, 'app');
  await g.git([
    'clone',
    '--quiet',
    repoUrl(`http://127.0.0.1:${port}`, 'alice', 'app', ['alice', 'password-1']),
    wt,
  ]);
  let n = 0;
  /**
   * One commit pushed; returns the push time (ms) and the new head. Each push starts after a
   * pause, so that the server has recorded the previous push's deliveries (the receiver sees
   * them a moment before the worker writes their outcome) and pushes are measured alike.
   */
  const push = async (): Promise<{ ms: number; sha: string; end: number }> => {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    n++;
    fs.writeFileSync(path.join(wt, `f${n}.txt`), `change ${n}\n`);
    await g.git(['add', '.'], wt);
    await g.git(['commit', '--quiet', '-m', `change ${n}`], wt);
    const sha = (await g.git(['rev-parse', 'HEAD'], wt)).trim();
    const t = performance.now();
    await run('git', ['push', '--quiet', 'origin', 'main'], { cwd: wt, env: g.env() });
    const end = performance.now();
    return { ms: end - t, sha, end };
  };

  // Warm-up, then pushes without webhooks.
  for (let i = 0; i < 3; i++) await push();
  const without: number[] = [];
  for (let i = 0; i < PUSHES; i++) without.push((await push()).ms);

  const created = performance.now();
  for (let i = 0; i < HOOKS; i++) {
    const r = await fetch(`${base}/repos/alice/app/hooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        type: 'forgejo',
        config: { url: `http://127.0.0.1:${receiverPort}/hook/${i}`, content_type: 'json', secret: `s${i}` },
        events: ['push'],
        active: true,
      }),
    });
    if (r.status !== 201) throw new Error(`creating hook ${i}: ${r.status} ${await r.text()}`);
  }
  const createMs = performance.now() - created;

  const withHooks: number[] = [];
  const allDelivered: number[] = [];
  const firstDelivered: number[] = [];
  for (let i = 0; i < PUSHES; i++) {
    const p = await push();
    withHooks.push(p.ms);
    const deadline = performance.now() + 30_000;
    while ((arrivals.get(p.sha)?.length ?? 0) < HOOKS) {
      if (performance.now() > deadline) {
        throw new Error(
          `push ${p.sha}: ${arrivals.get(p.sha)?.length ?? 0} of ${HOOKS} deliveries after 30 s`,
        );
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const times = arrivals.get(p.sha)!;
    firstDelivered.push(Math.min(...times) - p.end);
    allDelivered.push(Math.max(...times) - p.end);
  }

  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  console.log(
    `\nwebhooks benchmark (${postgres ? 'PostgreSQL' : 'SQLite'}; ${HOOKS} hooks, ${PUSHES} pushes each way)`,
  );
  console.log(`  creating ${HOOKS} hooks over the API:      ${createMs.toFixed(0)} ms`);
  console.log(`  git push, no webhooks:                   ${stats(without)}`);
  console.log(`  git push, ${HOOKS} webhooks:                 ${stats(withHooks)}`);
  console.log(`  push end → first delivery:               ${stats(firstDelivered)}`);
  console.log(`  push end → all ${HOOKS} deliveries:          ${stats(allDelivered)}`);
  const slower = median(withHooks) - median(without);
  console.log(
    `  push slowdown (median): ${slower.toFixed(1)} ms; all deliveries within ${TARGET_MS} ms: ${
      Math.max(...allDelivered) <= TARGET_MS ? 'yes' : 'NO'
    }`,
  );
} finally {
  server?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  receiver.closeAllConnections();
  receiver.close();
  g.cleanup();
  if (dropDb) await dropDb();
  fs.rmSync(dir, { recursive: true, force: true });
}
