// Benchmark for the site administration's user list (manual, not a test): 100,000 accounts inserted
// straight through the database, then, on a separate Anvil process (`anvil web`, as `npm start` runs
// it), an administrator's /admin/users pages measured one request at a time over one kept-alive
// connection after a warm-up: the first page (newest), a page in the middle, the last page, the
// first page by name, a search, the update-time sorts and status filters (target: one page p99 < 100 ms).
// Run: npm run build && node dist/bench/admin-users.js     (BENCH_USERS, BENCH_SAMPLES to change sizes)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { keepAliveClient } from './keepalive.js';
import { freePort } from '../test/helpers/server.js';
import { WebClient } from '../test/helpers/web.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { transaction } from '../src/db/database.js';
import { waitFor200, percentile } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const USERS = Number(process.env['BENCH_USERS'] ?? 100_000);
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 200);
const TARGET_MS = 100;
const CHUNK = 500;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-admin-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
};
let server: ChildProcess | undefined;
try {
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  await ctx.users.create({
    username: 'root',
    email: 'root@example.com',
    password: 'password-1',
    isAdmin: true,
  });
  const perPage = ctx.config.api.defaultPagingNum;
  const made = Date.now();
  const now = Math.floor(Date.now() / 1000);
  for (let start = 0; start < USERS; start += CHUNK) {
    const rows = Array.from({ length: Math.min(CHUNK, USERS - start) }, (_, j) => {
      const i = start + j;
      return {
        name: `user${i}`,
        lower_name: `user${i}`,
        full_name: `User Number ${i}`,
        email: `user${i}@example.com`,
        lower_email: `user${i}@example.com`,
        created_unix: now - USERS + i,
        updated_unix: now - USERS + i,
      };
    });
    await transaction(ctx.db, (tx) => tx.insertInto('user').values(rows).execute());
  }
  console.log(`${USERS} users inserted in ${((Date.now() - made) / 1000).toFixed(1)} s`);
  await ctx.close();

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: 'inherit' });
  const root = `http://127.0.0.1:${port}`;
  await waitFor200(`${root}/api/v1/version`, 20_000);
  const web = new WebClient(root);
  const signed = await web.signIn('root', 'password-1');
  if (signed.status !== 303) throw new Error(`sign-in: ${signed.status}`);
  const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  const lastPage = Math.ceil((USERS + 1) / perPage);
  const pages = [
    { name: 'first page (newest)', path: '/admin/users' },
    { name: 'a middle page', path: `/admin/users?page=${Math.floor(lastPage / 2)}` },
    { name: 'the last page', path: `/admin/users?sort=newest&page=${lastPage}` },
    { name: 'first page by name', path: '/admin/users?sort=alphabetically' },
    { name: 'a search (q=user4242)', path: '/admin/users?q=user4242' },
    { name: 'recently updated', path: '/admin/users?sort=recentupdate' },
    { name: 'administrators only', path: '/admin/users?status_filter%5Bis_admin%5D=1' },
    { name: 'inactive, least updated', path: '/admin/users?status_filter%5Bis_active%5D=0&sort=leastupdate' },
    { name: 'without 2FA, page 2', path: '/admin/users?status_filter%5Bis_2fa_enabled%5D=0&page=2' },
  ];
  const results: Array<{ page: string; p50: number; p99: number; met: boolean }> = [];
  for (const p of pages) {
    const client = keepAliveClient(root + p.path);
    const headers = { cookie, accept: 'text/html' };
    for (let i = 0; i < 20; i++) {
      const r = await client.get(headers);
      if (r.status !== 200) throw new Error(`${p.path}: ${r.status}`);
    }
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = process.hrtime.bigint();
      await client.get(headers);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    client.close();
    const p99 = percentile(times, 99);
    results.push({ page: p.name, p50: percentile(times, 50), p99, met: p99 < TARGET_MS });
  }
  console.log(`\n/admin/users over ${USERS} users, ${SAMPLES} requests each (target: p99 < ${TARGET_MS} ms)`);
  console.table(results);
  if (!results.every((r) => r.met)) process.exitCode = 1;
} finally {
  server?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
