// Benchmark for issues (manual, not a test): one repository with 100,000 issues, 20 labels and
// 300,000 comments (1,000 of them on one issue), loaded through the stores in batches; then, on a
// separate Anvil process, the latency of
//   GET /repos/{owner}/{repo}/issues?state=open&labels=X&limit=50   (targets: p50 < 20 ms, p99 < 60 ms)
//   GET /repos/{owner}/{repo}/issues/{index}/comments (1,000 comments)  (target: < 50 ms)
// measured one request at a time (node:http, one kept-alive connection) over a few hundred
// requests, and the throughput of the first with 10 connections (autocannon).
// Run: npm run build && node dist/bench/issues.js
// On PostgreSQL: BENCH_DB=postgres (ANVIL__DATABASE__HOST/USER/NAME as for the tests).
// BENCH_NODE_ARGS: extra node flags for the Anvil server (such as --cpu-prof).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { sql } from 'kysely';
import { keepAliveClient } from './keepalive.js';
import { freePort, freshPostgresDatabase } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { nowUnix, transaction } from '../src/db/database.js';
import * as issueStore from '../src/issues/store.js';
import * as labelStore from '../src/labels/store.js';
import { waitFor200, percentile } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const ISSUES = Number(process.env['BENCH_ISSUES'] ?? 100_000);
const COMMENTS = Number(process.env['BENCH_COMMENTS'] ?? 300_000);
const LABELS = 20;
const HOT_COMMENTS = 1_000;
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 300);
const BATCH = 1_000;

/** A small deterministic generator, so every run loads the same data. */
function rng(seed: number) {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Latencies (ms) of `n` requests made one after the other (see keepalive.ts). */
async function sequential(url: string, headers: Record<string, string>, n: number): Promise<number[]> {
  const client = keepAliveClient(url);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const { status } = await client.get(headers);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (status !== 200) throw new Error(`${url}: ${status}`);
  }
  client.close();
  return out;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-issues-'));
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
  // Load the data in-process, through the stores.
  const loadStarted = Date.now();
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  const token = (await ctx.tokens.create(alice, 'bench', ['all'])).token;
  const repo = await ctx.repos.create(alice, alice, { name: 'big' });
  const random = rng(42);
  const now = nowUnix();
  const labelIds: number[] = [];
  for (let l = 0; l < LABELS; l++) {
    const row = await labelStore.insert(ctx.db, {
      repo_id: repo.id,
      org_id: null,
      name: l < 5 ? `priority/p${l}` : `label-${l}`,
      exclusive: l < 5 ? 1 : 0,
      color: '#336699',
      created_unix: now,
      updated_unix: now,
    });
    labelIds.push(row.id);
  }
  const first = await issueStore.reserveIndexes(ctx.db, repo.id, ISSUES);
  const issueIds: number[] = [];
  // Comments per issue: HOT_COMMENTS on issue #1, the rest spread at random.
  const commentsPer = new Map<number, number>([[0, HOT_COMMENTS]]);
  for (let c = 0; c < COMMENTS - HOT_COMMENTS; c++) {
    const k = 1 + Math.floor(random() * (ISSUES - 1));
    commentsPer.set(k, (commentsPer.get(k) ?? 0) + 1);
  }
  for (let start = 0; start < ISSUES; start += BATCH) {
    await transaction(ctx.db, async (tx) => {
      const rows: Parameters<typeof issueStore.insertMany>[1] = [];
      for (let k = start; k < Math.min(ISSUES, start + BATCH); k++) {
        const closed = k > 0 && random() < 0.5;
        const created = now - (ISSUES - k) * 60;
        rows.push({
          repo_id: repo.id,
          index: first + k,
          poster_id: alice.id,
          title: `Issue ${k}: something ${random() < 0.1 ? 'crashes' : 'is slow'}`,
          content: `Body of issue ${k}`,
          milestone_id: null,
          is_closed: closed ? 1 : 0,
          num_comments: commentsPer.get(k) ?? 0,
          created_unix: created,
          updated_unix: created,
          closed_unix: closed ? created + 30 : 0,
        });
      }
      const ids = await issueStore.insertMany(tx, rows);
      issueIds.push(...ids);
      // One to three labels each, distinct.
      const links: Parameters<typeof labelStore.addMany>[1] = [];
      ids.forEach((id, j) => {
        const issue = rows[j]!;
        const picked = new Set<number>();
        const n = 1 + Math.floor(random() * 3);
        while (picked.size < n) picked.add(labelIds[Math.floor(random() * LABELS)]!);
        for (const label_id of picked) {
          links.push({
            issue_id: id,
            label_id,
            repo_id: repo.id,
            is_pull: 0,
            is_closed: issue.is_closed,
            created_unix: issue.created_unix,
          });
        }
      });
      for (let i = 0; i < links.length; i += BATCH) await labelStore.addMany(tx, links.slice(i, i + BATCH));
    });
  }
  let pending: Parameters<typeof issueStore.insertComments>[1] = [];
  const flush = async () => {
    const rows = pending;
    pending = [];
    await transaction(ctx.db, (tx) => issueStore.insertComments(tx, rows));
  };
  for (const [k, n] of commentsPer) {
    for (let c = 0; c < n; c++) {
      const t = now - (ISSUES - k) * 60 + c;
      pending.push({
        repo_id: repo.id,
        issue_id: issueIds[k]!,
        poster_id: alice.id,
        content: `Comment ${c} on issue ${k}`,
        created_unix: t,
        updated_unix: t,
      });
      if (pending.length >= BATCH) await flush();
    }
  }
  await flush();
  // What autovacuum does soon after a bulk load: statistics, and the visibility map that lets
  // counts be index-only scans.
  if (postgres) await sql`vacuum analyze`.execute(ctx.db);
  await ctx.close();
  const loadSeconds = (Date.now() - loadStarted) / 1000;

  // Serve from a separate process, as `npm start` does.
  const extra = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  server = spawn(process.execPath, ['--max-semi-space-size=16', ...extra, cli, 'web'], {
    env,
    stdio: 'inherit',
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  await waitFor200(`${base}/version`, 20_000);
  const headers = { authorization: `token ${token}` };
  // A label on about a tenth of the issues: the typical filter.
  const label = 'label-7';
  const listUrl = `${base}/repos/alice/big/issues?state=open&labels=${label}&limit=50`;
  const commentsUrl = `${base}/repos/alice/big/issues/${first}/comments`;

  const check = await fetch(listUrl, { headers });
  const page = (await check.json()) as Array<{ labels: Array<{ name: string }>; state: string }>;
  if (
    page.length !== 50 ||
    !page.every((i) => i.state === 'open' && i.labels.some((l) => l.name === label))
  ) {
    throw new Error('the list answered something else than 50 open issues with the label');
  }
  const total = Number(check.headers.get('x-total-count'));
  const comments = (await (await fetch(commentsUrl, { headers })).json()) as unknown[];
  if (comments.length !== HOT_COMMENTS)
    throw new Error(`expected ${HOT_COMMENTS} comments, got ${comments.length}`);

  await sequential(listUrl, headers, 50); // warm-up
  const list = await sequential(listUrl, headers, SAMPLES);
  await sequential(commentsUrl, headers, 10);
  const hot = await sequential(commentsUrl, headers, Math.max(50, Math.floor(SAMPLES / 3)));
  const loaded = await autocannon({ url: listUrl, connections: 10, duration: 5, headers });
  if (loaded.non2xx > 0 || loaded.errors > 0)
    throw new Error(`autocannon: ${loaded.non2xx} non-2xx, ${loaded.errors} errors`);

  const result = {
    database: postgres ? 'postgres' : 'sqlite',
    issues: ISSUES,
    comments: COMMENTS,
    labels: LABELS,
    loadSeconds,
    list: {
      url: listUrl.replace(base, ''),
      matching: total,
      p50: percentile(list, 50),
      p99: percentile(list, 99),
      targets: 'p50 < 20 ms, p99 < 60 ms',
    },
    comments1000: {
      url: commentsUrl.replace(base, ''),
      p50: percentile(hot, 50),
      p99: percentile(hot, 99),
      target: '< 50 ms',
    },
    listThroughput10Connections: {
      requestsPerSecond: Math.round(loaded.requests.average),
      latencyP50: loaded.latency.p50,
      latencyP99: loaded.latency.p99,
    },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  // Let the last in-flight requests finish before stopping the server.
  await new Promise((r) => setTimeout(r, 500));
  server?.kill('SIGTERM');
  if (server) await new Promise((r) => server!.once('exit', r));
  if (dropDb && !process.env['BENCH_KEEP']) await dropDb();
  else if (dropDb) console.log(`database kept: ${env['ANVIL__DATABASE__NAME']}`);
  if (process.env['BENCH_KEEP']) console.log(`data kept in ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}
