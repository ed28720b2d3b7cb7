// Benchmark (manual): a 256 MiB generic package upload against a raw loopback PUT of the same
// bytes. The raw side is a bare node:http server piping the body into a file; the Anvil side is
// `anvil web` (the bundle, as `npm start` runs it) storing the file as a package: streamed to
// storage while MD5, SHA-1, SHA-256 and SHA-512 are computed in the same pass (src/packages/
// hashing.ts). BENCH_ROUNDS rounds, interleaved (raw, Anvil with Content-Length, Anvil chunked),
// each a fresh version so that nothing is deduplicated; medians, the ratio (target >= 0.7), and
// the CPU seconds each server spent per upload (the client, both servers and the hashing share
// the machine's cores). Also the digests alone over the same bytes in this process (one thread,
// one after the other, then as the upload path computes them), for scale.
//
// Also the server's resident memory: its RSS once idle (after a warm-up upload), and its peak
// during each upload and download (VmRSS sampled every 50 ms; target: within 64 MB above idle);
// and downloads: a GET of the stored 256 MiB file against a raw GET of the same bytes from a file
// (target >= 0.9).
//
// Run: npm run build && node dist/bench/package-upload.js
// Settings: BENCH_MIB (default 256), BENCH_ROUNDS (default 5).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { hashingStream, stopHashWorkers } from '../src/packages/hashing.js';
import {
  children,
  cpuSeconds,
  median,
  rssMb,
  runNode as run,
  startNode as server,
  waitForListening as waitFor,
} from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 256);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

/** A PUT of `file` to `url` (chunked when `bytes` is undefined), expecting 201; seconds. */
function put(
  url: string,
  file: string,
  bytes: number | undefined,
  headers: Record<string, string> = {},
): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: u.pathname,
        headers: { ...(bytes === undefined ? {} : { 'content-length': String(bytes) }), ...headers },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          res.statusCode === 201
            ? resolve(Number(process.hrtime.bigint() - start) / 1e9)
            : reject(new Error(`PUT ${url}: ${res.statusCode} ${body}`)),
        );
      },
    );
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
  });
}

/** A GET of `url`, its body read and dropped (expecting 200 and `bytes` bytes); seconds. */
function get(url: string, bytes: number, headers: Record<string, string> = {}): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () =>
          res.statusCode === 200 && n === bytes
            ? resolve(Number(process.hrtime.bigint() - start) / 1e9)
            : reject(new Error(`GET ${url}: ${res.statusCode}, ${n} bytes`)),
        );
      })
      .on('error', reject);
  });
}

/** Samples `pid`'s VmRSS every 50 ms while `fn` runs; its result and the peak in MB. */
async function peakRss<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  try {
    const value = await fn();
    return { value, peak: Math.max(peak, rssMb(pid)) };
  } finally {
    clearInterval(timer);
  }
}

/** Seconds and CPU seconds of `pid` that `fn` takes. */
async function measured(pid: number, fn: () => Promise<number>): Promise<{ s: number; cpu: number }> {
  const cpu0 = cpuSeconds(pid);
  const s = await fn();
  return { s, cpu: cpuSeconds(pid) - cpu0 };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-upload-'));
try {
  const file = path.join(dir, 'payload.bin');
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < MIB; i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
  fs.closeSync(fd);
  const bytes = MIB * 1024 * 1024;

  // The digests alone, in this process: one after the other on one thread, then the upload path's stream.
  {
    let t = process.hrtime.bigint();
    const hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((a) => crypto.createHash(a));
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
      for (const h of hashes) h.update(chunk as Buffer);
    }
    hashes.forEach((h) => h.digest());
    const serial = Number(process.hrtime.bigint() - t) / 1e9;
    t = process.hrtime.bigint();
    const hasher = hashingStream(-1, bytes);
    await pipeline(
      fs.createReadStream(file, { highWaterMark: 1 << 20 }),
      hasher,
      new Writable({ write: (_c, _e, done) => done() }),
    );
    hasher.digests();
    const streamed = Number(process.hrtime.bigint() - t) / 1e9;
    await stopHashWorkers();
    console.log(
      `digests of ${MIB} MiB read from disk: one thread, one after the other ${(MIB / serial).toFixed(0)} MiB/s; ` +
        `the upload path's hashing stream ${(MIB / streamed).toFixed(0)} MiB/s`,
    );
  }

  const rawPort = await freePort();
  const rawFile = path.join(dir, 'raw.bin');
  const raw = server([
    '-e',
    `const fs = require('fs'); require('http').createServer((q, s) => {` +
      ` if (q.method === 'GET') { s.writeHead(200, { 'content-length': fs.statSync(${JSON.stringify(file)}).size });` +
      ` fs.createReadStream(${JSON.stringify(file)}).pipe(s); return; }` +
      ` const w = fs.createWriteStream(${JSON.stringify(rawFile)}); q.pipe(w);` +
      ` w.on('finish', () => { s.writeHead(201); s.end(); }); }).listen(${rawPort}, '127.0.0.1')`,
  ]);
  await waitFor(`http://127.0.0.1:${rawPort}/`);

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: path.join(dir, 'anvil'),
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SECURITY__SECRET_KEY: 'bench-secret-key',
    ANVIL__LOG__LEVEL: 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const admin = ['--username', 'bench', '--password', 'password-1', '--email', 'b@example.com', '--admin'];
  await run([cli, 'admin', 'user', 'create', ...admin], env);
  const token = await run(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    env,
  );
  const anvil = server(['--max-semi-space-size=16', cli, 'web'], env);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/v1/version`);
  const auth = { authorization: `token ${token}` };
  // One small upload first, so that the hashing workers and the routes are warm.
  fs.writeFileSync(path.join(dir, 'small.bin'), crypto.randomBytes(8 << 20));
  await put(`${url}/api/packages/bench/generic/warm/1/a.bin`, path.join(dir, 'small.bin'), 8 << 20, auth);

  // Idle: after the warm-up, a moment for the collector.
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rssMb(anvil.pid!);
  const peaks = { upload: [] as number[], download: [] as number[] };
  const downloads = { raw: [] as number[], anvil: [] as number[] };
  const results = { raw: [] as number[], anvil: [] as number[], chunked: [] as number[] };
  const cpu = { raw: [] as number[], anvil: [] as number[], chunked: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    let m = await measured(raw.pid!, () => put(`http://127.0.0.1:${rawPort}/`, file, bytes));
    results.raw.push(m.s);
    cpu.raw.push(m.cpu);
    fs.rmSync(rawFile, { force: true });
    for (const kind of ['anvil', 'chunked'] as const) {
      const target = `${url}/api/packages/bench/generic/${kind}/${round}/payload.bin`;
      const sampled = await peakRss(anvil.pid!, () =>
        measured(anvil.pid!, () => put(target, file, kind === 'anvil' ? bytes : undefined, auth)),
      );
      m = sampled.value;
      peaks.upload.push(sampled.peak - idle);
      results[kind].push(m.s);
      cpu[kind].push(m.cpu);
      if (kind === 'anvil') {
        downloads.raw.push(await get(`http://127.0.0.1:${rawPort}/`, bytes));
        const got = await peakRss(anvil.pid!, () => get(target, bytes, auth));
        downloads.anvil.push(got.value);
        peaks.download.push(got.peak - idle);
      }
      // Removed again, so that every round stores its blob anew (no deduplication).
      const del = await fetch(`${url}/api/packages/bench/generic/${kind}/${round}`, {
        method: 'DELETE',
        headers: auth,
      });
      if (del.status !== 204) throw new Error(`DELETE: ${del.status}`);
    }
  }
  const rate = (xs: number[]) => `${(MIB / median(xs)).toFixed(0)} MiB/s`;
  const cpuOf = (xs: number[]) => `${median(xs).toFixed(2)} CPU s`;
  console.log(`${MIB} MiB PUT over loopback, ${ROUNDS} rounds, medians (${os.cpus().length} cores):`);
  console.log(`  raw PUT into a file                  ${rate(results.raw)}  (server ${cpuOf(cpu.raw)})`);
  console.log(
    `  Anvil generic upload                 ${rate(results.anvil)}  (server ${cpuOf(cpu.anvil)}), ratio ${(median(results.raw) / median(results.anvil)).toFixed(2)} (target >= 0.7)`,
  );
  console.log(
    `  Anvil generic upload, chunked        ${rate(results.chunked)}  (server ${cpuOf(cpu.chunked)}), ratio ${(median(results.raw) / median(results.chunked)).toFixed(2)}`,
  );
  console.log(
    `  GET of the ${MIB} MiB: raw ${rate(downloads.raw)}, Anvil ${rate(downloads.anvil)}, ratio ${(median(downloads.raw) / median(downloads.anvil)).toFixed(2)} (target >= 0.9)`,
  );
  const mb = (xs: number[]) => `median +${median(xs).toFixed(0)} MB, max +${Math.max(...xs).toFixed(0)} MB`;
  console.log(`  server RSS idle ${idle.toFixed(0)} MB; peak above idle (target <= 64 MB):`);
  console.log(`    during uploads   ${mb(peaks.upload)}`);
  console.log(`    during downloads ${mb(peaks.download)}`);
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  fs.rmSync(dir, { recursive: true, force: true });
}
