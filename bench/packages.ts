// Benchmark for the package registries (manual), against an Anvil server started as `npm start`
// starts it. First the npm packument of a package with 1,000 versions (inserted through the service
// before the server starts), fetched sequentially over one kept-alive connection, as `npm install`
// asks for it (abbreviated, gzip) and in full: p50 and p99 (target p99 < 50 ms). Then a 256 MiB
// generic package file uploaded (PUT) and downloaded (GET), side by side with a raw PUT into a file
// and a raw GET of that file by a bare node:http server on the same machine; BENCH_ROUNDS rounds,
// interleaved, medians reported with the throughput ratios (targets: upload >= 0.7, download >=
// 0.8) and the server's peak resident memory during uploads and downloads (target < 200 MB).
//
// Run: npm run build && node dist/bench/packages.js
// Settings: BENCH_MIB (default 256), BENCH_ROUNDS (default 3), BENCH_VERSIONS (default 1000),
// BENCH_REQUESTS (packument requests, default 200).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { keepAliveClient } from './keepalive.js';
import {
  children,
  median,
  quantile as pct,
  rssMb,
  rssParts,
  runNode as run,
  sampleRss,
  startNode as server,
  waitForListening as waitFor,
} from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 256);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const VERSIONS = Number(process.env['BENCH_VERSIONS'] ?? 1000);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);

/** A PUT of `file` to `url`; seconds. */
function put(
  url: string,
  file: string,
  bytes: number,
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
        headers: { 'content-length': String(bytes), ...headers },
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

/** A GET of `url`, the body read and dropped; seconds. */
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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-packages-'));
try {
  const file = path.join(dir, 'payload.bin');
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < MIB; i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
  fs.closeSync(fd);
  const bytes = MIB * 1024 * 1024;

  // The baseline: a bare node:http server writing a PUT body into a file and serving it on GET.
  const rawPort = await freePort();
  const rawFile = path.join(dir, 'raw.bin');
  server([
    '-e',
    `const fs = require('fs'); require('http').createServer((q, s) => {` +
      ` if (q.method === 'GET') { if (!fs.existsSync(${JSON.stringify(rawFile)})) { s.writeHead(200); return s.end(); }` +
      ` s.writeHead(200, { 'content-length': fs.statSync(${JSON.stringify(rawFile)}).size });` +
      ` return fs.createReadStream(${JSON.stringify(rawFile)}, { highWaterMark: 1 << 20 }).pipe(s); }` +
      ` const w = fs.createWriteStream(${JSON.stringify(rawFile)}); q.pipe(w); w.on('finish', () => { s.writeHead(201); s.end(); }); })` +
      `.listen(${rawPort}, '127.0.0.1')`,
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
    ANVIL__LOG__LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const admin = ['--username', 'bench', '--password', 'password-1', '--email', 'b@example.com', '--admin'];
  await run([cli, 'admin', 'user', 'create', ...admin], env);
  const token = await run(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    env,
  );

  // 1,000 npm versions, inserted through the service before the server starts.
  {
    const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
    const owner = (await ctx.users.getByName('bench'))!;
    const t0 = Date.now();
    for (let i = 0; i < VERSIONS; i++) {
      await ctx.packages.addFile({
        owner,
        creator: owner,
        type: 'npm',
        name: '@bench/many',
        version: `1.0.${i}`,
        fileName: `many-1.0.${i}.tgz`,
        isLead: true,
        data: Readable.from([crypto.randomBytes(512)]),
        newVersionOnly: true,
        metadata: JSON.stringify({
          name: '@bench/many',
          version: `1.0.${i}`,
          description: 'a package with many versions',
          dependencies: { left: '^1.0.0', right: '^2.0.0' },
        }),
      });
    }
    console.log(`inserted ${VERSIONS} npm versions in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await ctx.close();
  }

  const anvil = server(
    [
      ...(process.env['BENCH_NODE_ARGS'] ?? '--max-semi-space-size=16').split(' ').filter(Boolean),
      cli,
      'web',
    ],
    env,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/v1/version`);
  const auth = { authorization: `token ${token}` };
  const idleRss = rssMb(anvil.pid!);
  const idleParts = rssParts(anvil.pid!);

  // As `npm install` asks (pacote's headers: the abbreviated document, gzip), then as a client
  // asking for the full JSON uncompressed.
  const clients = {
    'npm install (abbreviated, gzip)': {
      accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*',
      'accept-encoding': 'gzip,deflate',
    },
    'full JSON, uncompressed': { accept: 'application/json' },
  };
  for (const [label, headers] of Object.entries(clients)) {
    const client = keepAliveClient(`${url}/api/packages/bench/npm/@bench%2fmany`);
    const times: number[] = [];
    let size = 0;
    let wire = 0;
    for (let i = 0; i < REQUESTS + 20; i++) {
      const t = process.hrtime.bigint();
      const r = await client.get({ ...auth, ...headers });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (r.status !== 200) throw new Error(`packument: ${r.status} ${r.body.slice(0, 200)}`);
      // Decoded and parsed once (a valid document): decoding every one would fill the client's
      // heap, and its collections would land in the measured times.
      if (i === 0) size = (JSON.parse(r.body) as unknown, r.body.length);
      wire = r.bytes;
      if (i >= 20) times.push(ms);
    }
    client.close();
    console.log(
      `npm packument, ${VERSIONS} versions, ${label}, to the last byte (${(size / 1024).toFixed(0)} KiB, ${(wire / 1024).toFixed(0)} KiB sent), ${REQUESTS} requests: p50 ${pct(times, 0.5).toFixed(1)} ms, p99 ${pct(times, 0.99).toFixed(1)} ms (target < 50)`,
    );
  }

  const afterPackuments = rssParts(anvil.pid!);
  const raw = { up: [] as number[], down: [] as number[] };
  const anv = { up: [] as number[], down: [] as number[] };
  let peakUp = 0;
  let peakDown = 0;
  for (let round = 0; round < ROUNDS; round++) {
    raw.up.push(await put(`http://127.0.0.1:${rawPort}/`, file, bytes));
    raw.down.push(await get(`http://127.0.0.1:${rawPort}/`, bytes));
    fs.rmSync(rawFile, { force: true });
    const target = `${url}/api/packages/bench/generic/big/${round}/payload.bin`;
    let rss = sampleRss(anvil.pid!);
    anv.up.push(await put(target, file, bytes, auth));
    peakUp = Math.max(peakUp, rss.stop());
    rss = sampleRss(anvil.pid!);
    anv.down.push(await get(target, bytes, auth));
    peakDown = Math.max(peakDown, rss.stop());
    // Removed again, so that every round stores its blob anew (no deduplication).
    await fetch(`${url}/api/packages/bench/generic/big/${round}`, { method: 'DELETE', headers: auth });
  }
  const mibs = (s: number) => MIB / s;
  console.log(`generic ${MIB} MiB, ${ROUNDS} rounds (medians):`);
  console.log(
    `  raw upload   ${mibs(median(raw.up)).toFixed(0)} MiB/s, download ${mibs(median(raw.down)).toFixed(0)} MiB/s`,
  );
  console.log(
    `  anvil upload ${mibs(median(anv.up)).toFixed(0)} MiB/s, download ${mibs(median(anv.down)).toFixed(0)} MiB/s`,
  );
  console.log(
    `  ratio upload ${(median(raw.up) / median(anv.up)).toFixed(2)} (target >= 0.7), download ${(median(raw.down) / median(anv.down)).toFixed(2)} (target >= 0.8)`,
  );
  console.log(
    `  server RSS idle ${idleRss.toFixed(0)} MB (${idleParts}; after the packuments ${afterPackuments}; at the end ${rssParts(anvil.pid!)}), peak ${Math.max(peakUp, peakDown).toFixed(0)} MB (upload ${peakUp.toFixed(0)}, download ${peakDown.toFixed(0)}; target < 200)`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  fs.rmSync(dir, { recursive: true, force: true });
}
