// Benchmark of the notifications inbox (/notifications) for a user with 10,000 notification threads
// (issues of 20 repositories; 8,000 unread, 2,000 read), target under 100 ms: the first page of
// the unread tab, the read tab and a deep page. The rows are written through the stores in batches;
// the server runs as its own process, as `npm start` does.
// Run: npm run build && node dist/bench/notifications-page.js   (BENCH_DB=postgres for PostgreSQL)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { createContext } from '../src/app/context.js';
import { loadConfig } from '../src/config/config.js';
import { transaction } from '../src/db/database.js';
import * as issueStore from '../src/issues/store.js';
import { freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { WebClient } from '../test/helpers/web.js';
import { percentile, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const THREADS = Number(process.env['BENCH_THREADS'] ?? 10_000);
const REPOS = 20;
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);
const postgres = process.env['BENCH_DB'] === 'postgres';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-notifications-'));
const port = await freePort();
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
  const make = (username: string) =>
    ctx.users.create({ username, email: `${username}@example.com`, password: 'password-1', isAdmin: false });
  const alice = await make('alice');
  const bob = await make('bob');
  const now = Math.floor(Date.now() / 1000);
  const perRepo = Math.ceil(THREADS / REPOS);
  for (let r = 0; r < REPOS; r++) {
    const repo = await ctx.repos.create(alice, alice, { name: `repo${r}` });
    const first = await issueStore.reserveIndexes(ctx.db, repo.id, perRepo);
    await transaction(ctx.db, async (tx) => {
      for (let start = 0; start < perRepo; start += 500) {
        const rows = [];
        for (let k = start; k < Math.min(perRepo, start + 500); k++) {
          rows.push({
            repo_id: repo.id,
            index: first + k,
            poster_id: bob.id,
            title: `Issue ${k} of repo${r}`,
            content: '',
            milestone_id: null,
            is_closed: k % 3 === 0 ? 1 : 0,
            num_comments: 0,
            created_unix: now - k * 60,
            updated_unix: now - k * 60,
            closed_unix: 0,
          });
        }
        await issueStore.insertMany(tx, rows);
      }
    });
  }
  // One thread per issue: 80% unread, the rest read.
  await sql`insert into notification (user_id, repo_id, issue_id, status, source, updated_by, updated_unix, created_unix)
    select ${alice.id}, repo_id, id, case when id % 5 = 0 then 2 else 1 end, 1, ${bob.id}, updated_unix, created_unix
    from issue`.execute(ctx.db);
  if (postgres) await sql`vacuum analyze`.execute(ctx.db);
  await ctx.close();
  const loadSeconds = (Date.now() - loadStarted) / 1000;

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: 'inherit' });
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 30_000);
  const client = new WebClient(`http://127.0.0.1:${port}`);
  const signed = await client.signIn('alice', 'password-1');
  if (signed.status !== 303) throw new Error(`sign-in: ${signed.status}`);
  const pages = {
    unread: '/notifications',
    read: '/notifications?type=read',
    deepUnread: '/notifications?type=unread&page=200',
  };
  const results: Record<string, { p50: number; p99: number }> = {};
  for (const [name, p] of Object.entries(pages)) {
    await load(client, p, 10);
    const times = await load(client, p, REQUESTS);
    results[name] = { p50: percentile(times, 50), p99: percentile(times, 99) };
  }
  const body = (await client.get(pages.unread)).text;
  console.log(
    JSON.stringify(
      {
        db: postgres ? 'postgres' : 'sqlite',
        threads: THREADS,
        loadSeconds,
        listed: (body.match(/id="notification_/g) ?? []).length,
        ...results,
      },
      null,
      2,
    ),
  );
  console.log(
    `notifications page (${postgres ? 'PostgreSQL' : 'SQLite'}, ${THREADS} threads): ` +
      Object.entries(results)
        .map(([k, v]) => `${k} p50 ${v.p50} ms, p99 ${v.p99} ms`)
        .join('; ') +
      ' (target: under 100 ms)',
  );
} finally {
  server?.kill('SIGTERM');
  await dropDb?.();
  fs.rmSync(dir, { recursive: true, force: true });
}
