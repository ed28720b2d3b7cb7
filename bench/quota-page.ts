// Benchmark of the storage overview page (/user/settings/storage_overview) for an owner with
// 10,000 repositories, 1,000,000 attachments and a year of daily usage history, in a quota group
// (target: p99 under 150 ms on SQLite and PostgreSQL): the overview with its first page of
// repositories, the attachments drill-down (largest first) and a page deep in the repositories.
// The rows are written with set-based SQL through the application's database; the server runs as
// its own process, as `npm start` does. Run: npm run build && node dist/bench/quota-page.js
// (BENCH_DB=postgres for PostgreSQL; BENCH_REPOS, BENCH_ATTACHMENTS, BENCH_REQUESTS to scale).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { createContext } from '../src/app/context.js';
import { loadConfig } from '../src/config/config.js';
import { freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { WebClient } from '../test/helpers/web.js';
import { percentile, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const REPOS = Number(process.env['BENCH_REPOS'] ?? 10_000);
const ATTACHMENTS = Number(process.env['BENCH_ATTACHMENTS'] ?? 1_000_000);
const DAYS = 365;
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);
const postgres = process.env['BENCH_DB'] === 'postgres';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-quota-page-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__QUOTA__ENABLED: 'true',
  ANVIL__DATABASE__DB_TYPE: postgres ? 'postgres' : 'sqlite3',
};
let dropDb: (() => Promise<void>) | undefined;
if (postgres) {
  const fresh = await freshPostgresDatabase(loadConfig({ env, cwd: dir }).database);
  env['ANVIL__DATABASE__NAME'] = fresh.name;
  dropDb = fresh.drop;
}
let server: ChildProcess | undefined;

/** `n` sequential page loads of `path`; their latencies in ms. */
async function load(client: WebClient, p: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const r = await client.get(p);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.status !== 200) throw new Error(`${p}: ${r.status}`);
  }
  return out;
}

try {
  const loadStarted = Date.now();
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  const now = Math.floor(Date.now() / 1000);
  const series = (n: number) =>
    sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${n})`;
  await sql`${series(REPOS)}
    insert into repository (owner_id, name, lower_name, default_branch, size, created_unix, updated_unix, is_empty)
    select ${alice.id}, 'r' || i, 'r' || i, 'main', 1000 + (i * 37) % 100000, ${now}, ${now}, 0 from s`.execute(
    ctx.db,
  );
  const first = await sql<{
    id: number;
  }>`select min(id) as id from repository where owner_id = ${alice.id}`.execute(ctx.db);
  const firstRepo = Number(first.rows[0]!.id);
  await sql`${series(ATTACHMENTS)}
    insert into attachment (uuid, repo_id, release_id, uploader_id, name, size, created_unix)
    select 'u' || i, ${firstRepo} + (i % ${REPOS}), 1, ${alice.id}, 'f' || i || '.bin', 100 + ((i % 12345) * 7919) % 100000, ${now}
    from s`.execute(ctx.db);
  await ctx.quota.recalculate(alice.id);
  // A year of daily samples of every stored subject, growing.
  const today = Math.floor(Date.now() / 86_400_000);
  await sql`${series(DAYS)}
    insert into quota_usage_daily (owner_id, subject, day, size)
    select ${alice.id}, u.subject, ${today} - i, u.size * (${DAYS} - i) / ${DAYS}
    from s cross join quota_usage u where u.owner_id = ${alice.id}`.execute(ctx.db);
  await ctx.quota.createGroup('standard', [
    { name: 'all', limit: 10 ** 12, subjects: ['size:all'] },
    { name: 'assets', limit: 10 ** 10, subjects: ['size:assets:all'] },
    { name: 'repos', limit: 10 ** 8, subjects: ['size:repos:all', 'size:git:lfs'] },
  ]);
  await ctx.quota.addUserToGroup('standard', alice);
  if (postgres) await sql`vacuum analyze`.execute(ctx.db);
  await ctx.close();
  const loadSeconds = (Date.now() - loadStarted) / 1000;

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: 'inherit' });
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 30_000);
  const client = new WebClient(`http://127.0.0.1:${port}`);
  const signed = await client.signIn('alice', 'password-1');
  if (signed.status !== 303) throw new Error(`sign-in: ${signed.status}`);

  const pages = {
    overviewPage: '/user/settings/storage_overview',
    attachmentsPage: '/user/settings/storage_overview?tab=attachments',
    attachmentsPage10: '/user/settings/storage_overview?tab=attachments&page=10',
    deepReposPage: `/user/settings/storage_overview?tab=repos&page=${Math.floor(REPOS / 20 / 2)}`,
  };
  const results: Record<string, { p50: number; p99: number }> = {};
  for (const [name, p] of Object.entries(pages)) {
    await load(client, p, 10);
    const times = await load(client, p, REQUESTS);
    results[name] = { p50: percentile(times, 50), p99: percentile(times, 99) };
  }
  const body = (await client.get(pages.overviewPage)).text;
  console.log(
    JSON.stringify(
      {
        db: postgres ? 'postgres' : 'sqlite',
        repos: REPOS,
        attachments: ATTACHMENTS,
        historyDays: DAYS,
        loadSeconds,
        htmlBytes: body.length,
        chartDrawn: body.includes('class="chart-line chart-total"'),
        ...results,
      },
      null,
      2,
    ),
  );
  console.log(
    `storage overview (${postgres ? 'PostgreSQL' : 'SQLite'}, ${REPOS} repositories, ${ATTACHMENTS} attachments, ` +
      `${DAYS} days of history): ` +
      Object.entries(results)
        .map(([k, v]) => `${k} p50 ${v.p50} ms, p99 ${v.p99} ms`)
        .join('; ') +
      ' (target: p99 < 150 ms)',
  );
} finally {
  server?.kill('SIGTERM');
  await dropDb?.();
  fs.rmSync(dir, { recursive: true, force: true });
}
