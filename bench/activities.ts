// Benchmark for activity feeds (manual, not a test): a user with 100,000 activity rows over the
// last year in 50 repositories (10 of them private), loaded through the store in batches; then, on
// a separate Anvil process, the latency of
//   GET /users/{u}/activities/feeds            as the user itself   (target: p99 < 20 ms)
//   GET /users/{u}/activities/feeds            anonymously          (target: p99 < 20 ms)
//   GET /users/{u}/heatmap                     as the user itself   (target: p99 < 30 ms)
// measured one request at a time over one kept-alive connection.
// Run: npm run build && node dist/bench/activities.js   (BENCH_DB=postgres for PostgreSQL)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { keepAliveClient } from './keepalive.js';
import { freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { nowUnix, transaction } from '../src/db/database.js';
import * as activityStore from '../src/activities/store.js';
import type { OpType } from '../src/activities/tables.js';
import { percentile } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const ROWS = Number(process.env['BENCH_ROWS'] ?? 100_000);
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 300);
const REPOS = 50;
const PRIVATE = 10;
const OPS: OpType[] = ['commit_repo', 'create_issue', 'comment_issue', 'close_issue', 'create_pull_request'];

async function latencies(
  url: string,
  headers: Record<string, string>,
): Promise<{ first: number; l: number[] }> {
  const client = keepAliveClient(url);
  const t0 = process.hrtime.bigint();
  await client.get(headers);
  const first = Number(process.hrtime.bigint() - t0) / 1e6;
  for (let i = 0; i < 20; i++) await client.get(headers); // warm
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = process.hrtime.bigint();
    const { status } = await client.get(headers);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (status !== 200) throw new Error(`${url}: ${status}`);
  }
  client.close();
  return { first, l: out };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-activities-'));
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
};
let dropDb: (() => Promise<void>) | undefined;
if (postgres) {
  const fresh = await freshPostgresDatabase(loadConfig({ env, cwd: dir }).database);
  env['ANVIL__DATABASE__NAME'] = fresh.name;
  dropDb = fresh.drop;
}
let server: ChildProcess | undefined;
try {
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
  });
  const token = (await ctx.tokens.create(alice, 'bench', ['all'])).token;
  const repos: Awaited<ReturnType<typeof ctx.repos.create>>[] = [];
  for (let r = 0; r < REPOS; r++) {
    repos.push(await ctx.repos.create(alice, alice, { name: `repo-${r}`, private: r < PRIVATE }));
  }
  const now = nowUnix();
  const started = Date.now();
  for (let start = 0; start < ROWS; start += 1000) {
    await transaction(ctx.db, async (tx) => {
      for (let i = start; i < Math.min(ROWS, start + 1000); i++) {
        const repo = repos[i % REPOS]!;
        await activityStore.insert(tx, [
          {
            user_id: alice.id,
            act_user_id: alice.id,
            op_type: OPS[i % OPS.length]!,
            repo_id: repo.id,
            owner_id: alice.id,
            is_private: repo.is_private,
            comment_id: null,
            ref_name: '',
            content: `${i}|something happened`,
            created_unix: now - Math.floor(((ROWS - i) / ROWS) * 365 * 86400),
          },
        ]);
      }
    });
  }
  console.log(`loaded ${ROWS} activity rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await ctx.close();

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const base = `http://127.0.0.1:${port}/api/v1`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/version`)).ok) break;
    } catch {
      // not yet listening
    }
    if (i > 500) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  const auth = { authorization: `token ${token}` };
  const cases: Array<[string, string, Record<string, string>, number]> = [
    ['feed page (self)', `${base}/users/alice/activities/feeds`, auth, 20],
    ['feed page (anonymous)', `${base}/users/alice/activities/feeds`, {}, 20],
    ['feed page 50 (self)', `${base}/users/alice/activities/feeds?page=50`, auth, 20],
    ['heatmap (self)', `${base}/users/alice/heatmap`, auth, 30],
    ['heatmap (anonymous)', `${base}/users/alice/heatmap`, {}, 30],
  ];
  console.log(`${postgres ? 'PostgreSQL' : 'SQLite'}, ${ROWS} rows, ${SAMPLES} sequential requests each`);
  for (const [name, url, headers, target] of cases) {
    const { first, l } = await latencies(url, headers);
    const p99 = percentile(l, 99);
    console.log(
      `${name.padEnd(24)} p50 ${percentile(l, 50).toFixed(2)} ms  p99 ${p99.toFixed(2)} ms  (target < ${target} ms: ${p99 < target ? 'met' : 'MISSED'}); first request ${first.toFixed(2)} ms`,
    );
  }
} finally {
  server?.kill();
  if (dropDb) await dropDb();
  fs.rmSync(dir, { recursive: true, force: true });
}
