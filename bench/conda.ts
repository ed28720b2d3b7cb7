// Benchmark for the Conda registry (manual), against an Anvil server started as `npm start`
// starts it. First a large .tar.bz2 and a .conda of the same random payload are uploaded (PUT),
// side by side with a generic-registry PUT of the same bytes (the cost of reading the metadata
// back from the stored file is the difference), with the server's peak resident memory. Then
// BENCH_FILES small packages are uploaded into one channel's subdir and its repodata.json is
// fetched sequentially: p50/p99 of the JSON, of the .bz2 form (compressed once, then cached by
// content) and of a revalidation (If-None-Match, 304).
//
// Run: npm run build && node dist/bench/conda.js
// Settings: BENCH_MIB (default 64), BENCH_ROUNDS (default 3), BENCH_FILES (default 1000),
// BENCH_REQUESTS (default 100).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { percentile, waitFor200, children, exec, rssMb, startNode } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 64);
const FILES = Number(process.env['BENCH_FILES'] ?? 1000);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 100);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

/** A package's directory: info/index.json, info/about.json and a payload of `bytes` random bytes. */
function layout(dir: string, name: string, version: string, bytes: number): void {
  fs.mkdirSync(path.join(dir, 'info'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'lib'), { recursive: true });
  const index = {
    name,
    version,
    build: '0',
    build_number: 0,
    depends: ['python >=3.8'],
    license: 'MIT',
    subdir: 'linux-64',
    timestamp: 1700000000000,
  };
  fs.writeFileSync(path.join(dir, 'info', 'index.json'), JSON.stringify(index));
  fs.writeFileSync(path.join(dir, 'info', 'about.json'), JSON.stringify({ summary: name }));
  const fd = fs.openSync(path.join(dir, 'lib', 'payload.bin'), 'w');
  for (let left = bytes; left > 0; left -= 1 << 20)
    fs.writeSync(fd, crypto.randomBytes(Math.min(left, 1 << 20)));
  fs.closeSync(fd);
}

function put(url: string, file: string, token: string): Promise<number> {
  const bytes = fs.statSync(file).size;
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: u.pathname,
        headers: { 'content-length': String(bytes), authorization: `token ${token}` },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 201
            ? resolve(Number(process.hrtime.bigint() - start) / 1e9)
            : reject(new Error(`PUT ${url}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
  });
}

async function timed(url: string, headers: Record<string, string>, status: number): Promise<number> {
  const start = process.hrtime.bigint();
  const r = await fetch(url, { headers });
  await r.arrayBuffer();
  if (r.status !== status) throw new Error(`GET ${url}: ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-conda-'));
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
  const srv = startNode(['--max-semi-space-size=16', cli, 'web'], env);
  const base = `http://127.0.0.1:${port}/api/packages/bench`;
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`);

  // One large package, as .tar.bz2 and .conda, and the same bytes through the generic registry.
  const big = path.join(dir, 'big');
  layout(big, 'big', '1.0', MIB << 20);
  await exec('tar', ['-cjf', path.join(dir, 'big-1.0-0.tar.bz2'), '-C', big, 'info', 'lib']);
  await exec('tar', ['--zstd', '-cf', path.join(big, 'info-big-1.0-0.tar.zst'), '-C', big, 'info']);
  await exec('tar', ['--zstd', '-cf', path.join(big, 'pkg-big-1.0-0.tar.zst'), '-C', big, 'lib']);
  fs.writeFileSync(path.join(big, 'metadata.json'), '{"conda_pkg_format_version": 2}');
  await exec(
    'python3',
    [
      '-c',
      'import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],"w") as z:\n  [z.write(n,n) for n in ("metadata.json","pkg-big-1.0-0.tar.zst","info-big-1.0-0.tar.zst")]',
      path.join(dir, 'big-1.0-0.conda'),
    ],
    { cwd: big },
  );
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(srv.pid!))), 20);
  // Interleaved rounds (each conda round in a channel of its own: the same file is another
  // package there), medians reported.
  const results = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, file, url] of [
      ['generic .tar.bz2', 'big-1.0-0.tar.bz2', `${base}/generic/big/1.${round}/big-1.0-0.tar.bz2`],
      ['conda .tar.bz2', 'big-1.0-0.tar.bz2', `${base}/conda/r${round}/big-1.0-0.tar.bz2`],
      ['generic .conda', 'big-1.0-0.conda', `${base}/generic/big/1.${round}/big-1.0-0.conda`],
      ['conda .conda', 'big-1.0-0.conda', `${base}/conda/r${round}/big-1.0-0.conda`],
    ] as const) {
      const size = fs.statSync(path.join(dir, file)).size;
      const secs = await put(url, path.join(dir, file), token);
      results.set(label, [...(results.get(label) ?? []), size / 2 ** 20 / secs]);
    }
  }
  for (const [label, speeds] of results) {
    const sorted = [...speeds].sort((x, y) => x - y);
    console.log(
      `upload ${label} (${MIB} MiB payload): median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} MiB/s over ${ROUNDS} rounds`,
    );
  }
  clearInterval(sampler);
  console.log(`server peak RSS during uploads: ${peak.toFixed(0)} MB`);

  // Many small packages in one subdir.
  const small = path.join(dir, 'small');
  const t0 = Date.now();
  for (let i = 0; i < FILES; i++) {
    const d = path.join(small, String(i));
    layout(d, `pkg${i}`, '1.0', 256);
    const f = path.join(d, `pkg${i}-1.0-0.tar.bz2`);
    await exec('tar', ['-cjf', f, '-C', d, 'info', 'lib']);
    await put(`${base}/conda/many/pkg${i}-1.0-0.tar.bz2`, f, token);
    fs.rmSync(path.join(d, 'lib'), { recursive: true });
  }
  console.log(`${FILES} small packages built and uploaded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const url = `${base}/conda/many/linux-64/repodata.json`;
  const first = await fetch(url);
  const etag = first.headers.get('etag')!;
  const size = (await first.arrayBuffer()).byteLength;
  for (const [label, u, headers, status] of [
    ['repodata.json', url, {}, 200],
    ['repodata.json.bz2', `${url}.bz2`, {}, 200],
    ['repodata.json If-None-Match', url, { 'if-none-match': etag }, 304],
  ] as const) {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) times.push(await timed(u, headers, status));
    console.log(
      `${label} (${FILES} files, ${(size / 1024).toFixed(0)} KiB JSON): p50 ${percentile(times, 50)} ms, p99 ${percentile(times, 99)} ms`,
    );
  }
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(dir, { recursive: true, force: true });
}
