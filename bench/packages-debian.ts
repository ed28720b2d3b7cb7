// Benchmark for the Debian registry (manual), against an Anvil server started as `npm start`
// starts it. BENCH_PACKAGES small .debs (made here: ar, control.tar.gz, data.tar.gz) are uploaded
// one after the other into one distribution, each upload rebuilding the distribution's repository
// files (Packages, .gz, .xz, Release, InRelease, Release.gpg) before it answers: upload latency
// while the distribution is small and once it is full, against generic-registry PUTs of the same
// bytes (the difference is reading the control file and the rebuild). Then BENCH_CONCURRENT
// uploads at once into a second distribution (all must end up in its Packages), and reads of the
// stored files (p50/p99 of Packages.xz and InRelease).
//
// Run: npm run build && node dist/bench/packages-debian.js
// Settings: BENCH_PACKAGES (default 300), BENCH_CONCURRENT (default 32), BENCH_REQUESTS (default 100).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { children, exec, percentile, startNode, waitFor200 } from './common.js';
import { deb } from './debs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const PACKAGES = Number(process.env['BENCH_PACKAGES'] ?? 300);
const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 32);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 100);

async function put(url: string, body: Buffer, token: string): Promise<number> {
  const start = process.hrtime.bigint();
  const r = await fetch(url, {
    method: 'PUT',
    headers: { authorization: `token ${token}` },
    body: new Uint8Array(body),
  });
  await r.arrayBuffer();
  if (r.status !== 201) throw new Error(`PUT ${url}: ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function timed(url: string): Promise<number> {
  const start = process.hrtime.bigint();
  const r = await fetch(url);
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-debian-'));
try {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: path.join(dir, 'anvil'),
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SECURITY__SECRET_KEY: 'bench-secret-key',
    ANVIL__LOG__LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const admin = ['--username', 'bench', '--password', 'password-1', '--email', 'b@example.com', '--admin'];
  await exec(process.execPath, [cli, 'admin', 'user', 'create', ...admin], { env });
  const token = await exec(
    process.execPath,
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    { env },
  );
  startNode(['--max-semi-space-size=16', cli, 'web'], env);
  const base = `http://127.0.0.1:${port}/api/packages/bench`;
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`);

  const debs: Buffer[] = [];
  for (let i = 0; i < PACKAGES; i++) debs.push(await deb(`pkg${i}`));
  const debian: number[] = [];
  const generic: number[] = [];
  const t0 = Date.now();
  for (let i = 0; i < PACKAGES; i++) {
    debian.push(await put(`${base}/debian/pool/bench/main/upload`, debs[i]!, token));
    generic.push(await put(`${base}/generic/pkg${i}/1.0/pkg${i}_1.0_amd64.deb`, debs[i]!, token));
  }
  const wall = (Date.now() - t0) / 1000;
  const tenth = Math.max(1, Math.floor(PACKAGES / 10));
  const report = (label: string, xs: number[]) =>
    `p50 ${percentile(xs, 50)} ms, p99 ${percentile(xs, 99)} ms`.replace(/^/, `${label}: `);
  console.log(
    `${PACKAGES} sequential uploads (${(debs[0]!.length / 1024).toFixed(1)} KiB each) plus as many generic PUTs: ${wall.toFixed(1)} s`,
  );
  console.log(report(`debian upload + rebuild, first ${tenth}`, debian.slice(0, tenth)));
  console.log(
    report(`debian upload + rebuild, last ${tenth} (${PACKAGES} in the distribution)`, debian.slice(-tenth)),
  );
  console.log(report(`generic upload of the same bytes, last ${tenth}`, generic.slice(-tenth)));

  const packages = await (await fetch(`${base}/debian/dists/bench/main/binary-amd64/Packages`)).text();
  const listed = (packages.match(/^Package: /gm) ?? []).length;
  if (listed !== PACKAGES) throw new Error(`Packages lists ${listed} of ${PACKAGES}`);

  const more: Buffer[] = [];
  for (let i = 0; i < CONCURRENT; i++) more.push(await deb(`conc${i}`));
  const c0 = Date.now();
  await Promise.all(more.map((b) => put(`${base}/debian/pool/concurrent/main/upload`, b, token)));
  const concurrentSecs = (Date.now() - c0) / 1000;
  const text = await (await fetch(`${base}/debian/dists/concurrent/main/binary-amd64/Packages`)).text();
  const got = (text.match(/^Package: /gm) ?? []).length;
  console.log(
    `${CONCURRENT} concurrent uploads into a new distribution: ${concurrentSecs.toFixed(2)} s; Packages lists ${got} of ${CONCURRENT}`,
  );
  if (got !== CONCURRENT) throw new Error('a concurrent upload is missing from Packages');

  for (const file of ['main/binary-amd64/Packages.xz', 'InRelease']) {
    const url = `${base}/debian/dists/bench/${file}`;
    const size = (await (await fetch(url)).arrayBuffer()).byteLength;
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) times.push(await timed(url));
    console.log(
      `GET ${file} (${PACKAGES} packages, ${(size / 1024).toFixed(1)} KiB): p50 ${percentile(times, 50)} ms, p99 ${percentile(times, 99)} ms`,
    );
  }
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(dir, { recursive: true, force: true });
}
