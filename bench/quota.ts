// Benchmark for the quota engine: GET /api/v1/user/quota/check for a user owning 10,000
// repositories and 1,000,000 attachment rows, against the same call for a user owning one
// repository (targets: p99 under 5 ms, and within 1.5x of the small user). The rows are inserted
// straight into SQLite; `anvil admin quota recalculate` then derives the usage totals from them
// (timed too). Run: npm run build && node dist/bench/quota.js
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SQLite } from '../src/db/sqlite-driver.js';
import { keepAliveClient } from './keepalive.js';
import { freePort } from '../test/helpers/server.js';
import { waitFor200, quantile, runNodeQuiet } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const REPOS = Number(process.env['BENCH_REPOS'] ?? 10_000);
const ATTACHMENTS = Number(process.env['BENCH_ATTACHMENTS'] ?? 1_000_000);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 3000);

const run = (args: string[], env: NodeJS.ProcessEnv) => runNodeQuiet([cli, ...args], env);
/** The `p`th percentile of `sorted`. */
const percentile = (sorted: number[], p: number) => quantile(sorted, p / 100);

interface Stats {
  p50: number;
  p99: number;
  mean: number;
}

function stats(times: number[]): Stats {
  times.sort((a, b) => a - b);
  return {
    p50: Number(percentile(times, 50).toFixed(2)),
    p99: Number(percentile(times, 99).toFixed(2)),
    mean: Number((times.reduce((a, b) => a + b, 0) / times.length).toFixed(2)),
  };
}

/** Latencies of the same request for several tokens, interleaved so load changes hit all alike. */
async function latencies(url: string, tokens: string[]): Promise<Stats[]> {
  const client = keepAliveClient(url);
  const once = async (token: string) => {
    const t = process.hrtime.bigint();
    const r = await client.get({ authorization: `token ${token}` });
    if (r.status !== 200 || (r.body !== 'true' && r.body !== 'false'))
      throw new Error(`${url}: ${r.status} ${r.body}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  for (let i = 0; i < 200; i++) for (const t of tokens) await once(t);
  const times = tokens.map(() => [] as number[]);
  for (let i = 0; i < REQUESTS; i++) {
    for (const [k, t] of tokens.entries()) times[k]!.push(await once(t));
  }
  client.close();
  return times.map(stats);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-quota-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SECURITY__SECRET_KEY: 'bench',
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__DATABASE__DB_TYPE: 'sqlite3',
};
let server: ChildProcess | undefined;
try {
  for (const name of ['big', 'small']) {
    await run(
      [
        'admin',
        'user',
        'create',
        '--username',
        name,
        '--password',
        'password-1',
        '--email',
        `${name}@example.com`,
        '--admin',
      ],
      env,
    );
  }
  const db = new SQLite(path.join(dir, 'anvil.db'));
  const ids = Object.fromEntries(
    (db.prepare('SELECT id, name FROM "user"').all() as Array<{ id: number; name: string }>).map((r) => [
      r.name,
      r.id,
    ]),
  ) as Record<string, number>;
  const now = Math.floor(Date.now() / 1000);
  const started = Date.now();
  const insertRepo = db.prepare(
    'INSERT INTO repository (owner_id, name, lower_name, default_branch, size, created_unix, updated_unix, is_empty) VALUES (?, ?, ?, ?, ?, ?, ?, 0)',
  );
  const insertAttachment = db.prepare(
    'INSERT INTO attachment (uuid, repo_id, release_id, uploader_id, name, size, created_unix) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const repoIds: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < REPOS; i++) {
      repoIds.push(
        Number(insertRepo.run(ids['big'], `r${i}`, `r${i}`, 'main', 1000 + i, now, now).lastInsertRowid),
      );
    }
    insertRepo.run(ids['small'], 'only', 'only', 'main', 5000, now, now);
  })();
  db.transaction(() => {
    for (let i = 0; i < ATTACHMENTS; i++) {
      insertAttachment.run(
        crypto.randomUUID(),
        repoIds[i % repoIds.length],
        1,
        ids['big'],
        `f${i}.bin`,
        100 + (i % 1000),
        now,
      );
    }
  })();
  db.close();
  const insertMs = Date.now() - started;

  const recalcStarted = Date.now();
  const recalc = await run(['admin', 'quota', 'recalculate'], env);
  const recalcMs = Date.now() - recalcStarted;

  const tokens: Record<string, string> = {};
  for (const name of ['big', 'small']) {
    tokens[name] = await run(['admin', 'user', 'generate-access-token', '--username', name, '--raw'], env);
  }
  server = spawn(process.execPath, ['--max-semi-space-size=16', cli, 'web'], { env, stdio: 'inherit' });
  const base = `http://127.0.0.1:${port}/api/v1`;
  await waitFor200(`${base}/version`);
  // One group with a rule per subject family, assigned to both users.
  const admin = { authorization: `token ${tokens['big']}`, 'content-type': 'application/json' };
  const group = await fetch(`${base}/admin/quota/groups`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({
      name: 'standard',
      rules: [
        { name: 'all', limit: 10 ** 12, subjects: ['size:all'] },
        { name: 'assets', limit: 10 ** 10, subjects: ['size:assets:all'] },
        { name: 'repos', limit: 10 ** 10, subjects: ['size:repos:all', 'size:git:lfs'] },
      ],
    }),
  });
  if (group.status !== 201) throw new Error(`create group: ${group.status}`);
  for (const name of ['big', 'small']) {
    const r = await fetch(`${base}/admin/users/${name}/quota/groups`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ groups: ['standard'] }),
    });
    if (r.status !== 204) throw new Error(`set groups: ${r.status}`);
  }
  const url = `${base}/user/quota/check?subject=size:assets:attachments:all`;
  const [big, small] = (await latencies(url, [tokens['big']!, tokens['small']!])) as [Stats, Stats];
  const used = (await (
    await fetch(`${base}/user/quota`, { headers: { authorization: `token ${tokens['big']}` } })
  ).json()) as {
    used: { size: { assets: { attachments: { releases: number } } } };
  };
  console.log(
    JSON.stringify(
      {
        repos: REPOS,
        attachments: ATTACHMENTS,
        insertMs,
        recalcMs,
        recalcReport: recalc.split('\n').slice(-1)[0],
        bigReleasesUsage: used.used.size.assets.attachments.releases,
        big,
        small,
        p99Ratio: Number((big.p99 / small.p99).toFixed(2)),
      },
      null,
      2,
    ),
  );
  console.log(
    `quota check, ${REPOS} repositories and ${ATTACHMENTS} attachments: p50 ${big.p50} ms, p99 ${big.p99} ms; ` +
      `one repository: p50 ${small.p50} ms, p99 ${small.p99} ms (target: p99 < 5 ms and within 1.5x)`,
  );
} finally {
  server?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
