// Benchmark for the v4 artifact service (manual): a 256 MiB artifact uploaded with the real
// @actions/artifact client (zip, Azure-style blocks of 8 MiB, up to 4 in flight, block list,
// finalize) to an Anvil server started as `npm start` starts it (node --max-semi-space-size=16 ...
// web), side by side with a raw HTTP PUT of the same bytes into a file by a bare node:http server
// on the same machine. Also the same client against a null sink (a bare server that answers the
// Twirp calls and throws the blocks away): the most the client itself can do here, whatever the
// server. Each is run BENCH_ROUNDS times, interleaved; medians are reported, with the throughput
// ratios (target >= 0.7), the Anvil server's CPU time and its peak resident memory during the
// uploads, sampled from /proc/<pid>/status every 20 ms (target < 200 MB).
//
// Run: npm run build && node dist/bench/artifacts.js
// Settings: BENCH_MIB (default 256), BENCH_ROUNDS (default 3), BENCH_COMPRESSION (the client's zip
// level, default 0: the bytes are random, so compressing only measures the client's zlib),
// BENCH_NODE_ARGS (extra node flags for the Anvil server, such as --cpu-prof), BENCH_LOG_LEVEL.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { mintRuntimeToken } from '../src/actions/runtime-token.js';
import {
  children,
  cpuSeconds,
  median,
  rssMb,
  runNode,
  sampleRss,
  startNode as server,
  uploadArtifact,
  waitForListening as waitFor,
} from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
/** Node in the project's root (where @actions/artifact resolves). */
const run = (args: string[], env: NodeJS.ProcessEnv) => runNode(args, env, root);
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 256);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const COMPRESSION = Number(process.env['BENCH_COMPRESSION'] ?? 0);
const SECRET = 'bench-secret-key';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-artifacts-'));
try {
  // The bytes: MIB MiB of random data.
  const srcDir = path.join(dir, 'src');
  fs.mkdirSync(srcDir);
  const file = path.join(srcDir, 'payload.bin');
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < MIB; i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
  fs.closeSync(fd);
  const bytes = MIB * 1024 * 1024;

  // The baseline: a bare node:http server writing a PUT body into a file.
  const rawPort = await freePort();
  const rawFile = path.join(dir, 'raw.bin');
  server([
    '-e',
    `require('http').createServer((q, s) => { const w = require('fs').createWriteStream(${JSON.stringify(rawFile)});` +
      ` q.pipe(w); w.on('finish', () => { s.writeHead(201); s.end(); }); }).listen(${rawPort}, '127.0.0.1')`,
  ]);
  await waitFor(`http://127.0.0.1:${rawPort}/`);
  const rawPut = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: rawPort,
          method: 'PUT',
          path: '/',
          headers: { 'content-length': String(bytes) },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 201 ? resolve() : reject(new Error(`raw PUT: ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
    });
    fs.rmSync(rawFile, { force: true });
    return Number(process.hrtime.bigint() - start) / 1e9;
  };

  // The null sink: the Twirp calls answered, the blocks read and dropped.
  const nullPort = await freePort();
  server([
    '-e',
    `require('http').createServer((q, s) => { let body = ''; q.on('data', (c) => { if (q.url.startsWith('/twirp/')) body += c; });` +
      ` q.on('end', () => { const json = (o) => { s.writeHead(200, { 'content-type': 'application/json' }); s.end(JSON.stringify(o)); };` +
      ` if (q.url.endsWith('/CreateArtifact')) return json({ ok: true, signed_upload_url: 'http://127.0.0.1:${nullPort}/api/actions/artifacts/1/upload?sig=x' });` +
      ` if (q.url.endsWith('/FinalizeArtifact')) return json({ ok: true, artifact_id: '1' });` +
      ` s.writeHead(201, { 'x-ms-request-id': '1', 'x-ms-version': '2025-11-05' }); s.end(); }); }).listen(${nullPort}, '127.0.0.1')`,
  ]);
  await waitFor(`http://127.0.0.1:${nullPort}/`);

  // Anvil, as `npm start` runs it.
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: path.join(dir, 'anvil'),
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SECURITY__SECRET_KEY: SECRET,
    ANVIL__ACTIONS__ENABLED: 'true',
    ANVIL__LOG__LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const admin = ['--username', 'bench', '--password', 'password-1', '--email', 'b@example.com', '--admin'];
  await run([cli, 'admin', 'user', 'create', ...admin], env);
  const token = await run(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    env,
  );
  const extra = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const anvil = server(['--max-semi-space-size=16', ...extra, cli, 'web'], env);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/v1/version`);
  const repo = await fetch(`${url}/api/v1/user/repos`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const repoId = ((await repo.json()) as { id: number }).id;
  const idleRss = rssMb(anvil.pid!);
  let runId = 0;

  /** One upload by @actions/artifact in a child process (a workflow step); its own timing, in seconds. */
  const clientUpload = async (resultsUrl: string): Promise<number> => {
    runId++;
    const code = `
      import { DefaultArtifactClient } from '@actions/artifact';
      const client = new DefaultArtifactClient();
      const t0 = process.hrtime.bigint();
      await client.uploadArtifact('bench', [${JSON.stringify(file)}], ${JSON.stringify(srcDir)}, { compressionLevel: ${COMPRESSION} });
      process.stdout.write('\\nSECONDS ' + Number(process.hrtime.bigint() - t0) / 1e9 + '\\n');
    `;
    const out = await run(['--input-type=module', '-e', code], {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      GITHUB_SERVER_URL: 'https://github.com',
      ACTIONS_RUNTIME_TOKEN: mintRuntimeToken({ secretKey: SECRET, repoId, runId, jobId: runId }),
      ACTIONS_RESULTS_URL: `${resultsUrl}/`,
      GITHUB_WORKSPACE: dir,
      RUNNER_TEMP: dir,
    });
    const line = out.split('\n').find((l) => l.startsWith('SECONDS '));
    if (!line) throw new Error(`the upload failed:\n${out}`);
    return Number(line.slice(8));
  };

  /** The same bytes in one plain PUT to an Anvil upload URL (Twirp create and finalize around it). */
  const anvilPut = () => uploadArtifact(url, SECRET, repoId, ++runId, file, bytes);

  const raw: number[] = [];
  const plain: number[] = [];
  const sink: number[] = [];
  const anvilTimes: number[] = [];
  const cpu: number[] = [];
  let peak = 0;
  for (let round = 0; round < ROUNDS; round++) {
    raw.push(await rawPut());
    plain.push(await anvilPut());
    sink.push(await clientUpload(`http://127.0.0.1:${nullPort}`));
    const rss = sampleRss(anvil.pid!);
    const cpuBefore = cpuSeconds(anvil.pid!);
    anvilTimes.push(await clientUpload(url));
    cpu.push(cpuSeconds(anvil.pid!) - cpuBefore);
    peak = Math.max(peak, rss.stop());
  }

  const rate = (s: number) => MIB / s;
  const line = (label: string, times: number[]) =>
    console.log(
      `${label.padEnd(44)} ${median(times).toFixed(2)} s  ${rate(median(times)).toFixed(0).padStart(4)} MiB/s   (runs: ${times.map((t) => t.toFixed(2)).join(', ')})`,
    );
  console.log(
    `${MIB} MiB of random bytes, zip level ${COMPRESSION}, ${ROUNDS} rounds, medians; ${os.cpus().length} cores`,
  );
  line('raw HTTP PUT into a file (bare node:http)', raw);
  line('raw HTTP PUT to an Anvil upload URL', plain);
  line('@actions/artifact -> null sink (ceiling)', sink);
  line('@actions/artifact -> Anvil', anvilTimes);
  console.log(
    `throughput ratio Anvil / raw PUT:      ${(median(raw) / median(anvilTimes)).toFixed(2)}  (target >= 0.7)`,
  );
  console.log(`throughput ratio Anvil plain PUT / raw PUT: ${(median(raw) / median(plain)).toFixed(2)}`);
  console.log(
    `throughput ratio null sink / raw PUT:  ${(median(raw) / median(sink)).toFixed(2)}  (the client's own ceiling)`,
  );
  console.log(`throughput ratio Anvil / null sink:    ${(median(sink) / median(anvilTimes)).toFixed(2)}`);
  console.log(`Anvil server CPU per upload: ${median(cpu).toFixed(2)} s`);
  console.log(
    `Anvil server RSS: idle ${idleRss.toFixed(0)} MB, peak during the uploads ${peak.toFixed(0)} MB  (target < 200 MB)`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(dir, { recursive: true, force: true });
}
