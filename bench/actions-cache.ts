// Benchmark for the actions cache (manual, not a test): save and restore of one 100 MiB entry
// through Anvil's cache service, speaking the v1 protocol actions/cache@v4 uses (reserve; PATCH
// chunks of 32 MiB, 4 in flight, with Content-Range; commit; lookup; GET of the signed archive
// URL), side by side with the same bytes copied by a raw loopback HTTP PUT (into a file) and GET
// (from it) to a bare node:http server. Both servers run in this process, as the client does.
// The restore is also set beside the anchor: the same blob read from Anvil's storage
// directly, in this process. Each is run BENCH_ROUNDS times, interleaved (the reads take turns
// going first); medians in MiB/s and the ratios are printed.
//
// Run: npm run build && node dist/bench/actions-cache.js
// Settings: BENCH_MIB (default 100), BENCH_ROUNDS (default 4).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { mintRuntimeToken } from '../src/actions/runtime-token.js';
import { drained } from '../src/storage/storage.js';
import { startServer } from '../test/helpers/server.js';
import { median } from './common.js';

const MIB = Number(process.env['BENCH_MIB'] ?? 100);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 4);
const CHUNK = 32 * 1024 * 1024;
const IN_FLIGHT = 4;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-cache-'));
const data = crypto.randomBytes(MIB * 1024 * 1024);
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const mibps = (s: number) => MIB / s;

/** Reads a response body to its end, counting the bytes. */
async function drain(body: ReadableStream<Uint8Array> | null): Promise<number> {
  let n = 0;
  if (!body) return 0;
  const reader = body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.byteLength;
  return n;
}

// The anchor: a bare node:http server, PUT into a file and GET from it.
const rawFile = path.join(dir, 'raw.bin');
const raw = http.createServer((req, res) => {
  if (req.method === 'PUT') {
    pipeline(req, fs.createWriteStream(rawFile + (req.url === '/' ? '' : req.url!.replace(/\W/g, '-')))).then(
      () => res.writeHead(201).end(),
      () => res.writeHead(500).end(),
    );
  } else {
    res.writeHead(200, { 'content-length': String(fs.statSync(rawFile).size) });
    fs.createReadStream(rawFile).pipe(res);
  }
});
await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;

const s = await startServer({
  ANVIL__ACTIONS__ENABLED: 'true',
  ANVIL__LOG__LEVEL: 'error',
  ANVIL__ACTIONS__CACHE_MAX_SIZE: String(4 * MIB),
});
try {
  const user = await s.createUser('bench');
  const repo = await s.api<{ id: number }>('POST', '/user/repos', { token: user.token, body: { name: 'c' } });
  const now = Math.floor(Date.now() / 1000);
  const run = await s.ctx.db
    .insertInto('action_run')
    .values({
      repo_id: repo.body.id,
      run_number: 1,
      workflow_id: 'ci.yml',
      workflow_path: '.forgejo/workflows/ci.yml',
      title: 'bench',
      trigger_user_id: user.id,
      ref: 'refs/heads/main',
      commit_sha: '0'.repeat(40),
      event: 'push',
      event_payload: '{}',
      status: 'running',
      created_unix: now,
      updated_unix: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const token = mintRuntimeToken({
    secretKey: s.config.security.secretKey,
    repoId: repo.body.id,
    runId: run.id,
    jobId: run.id * 10,
    ttlSeconds: 3600,
  });
  const base = `${s.url}/api/actions_cache/_apis/artifactcache`;
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json;api-version=6.0-preview.1' };
  const json = { ...headers, 'content-type': 'application/json' };

  async function save(key: string): Promise<void> {
    const r = await fetch(`${base}/caches`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ key, version: 'v1', cacheSize: data.length }),
    });
    if (r.status !== 200 && r.status !== 201) throw new Error(`reserve: ${r.status} ${await r.text()}`);
    const { cacheId } = (await r.json()) as { cacheId: number };
    const starts: number[] = [];
    for (let a = 0; a < data.length; a += CHUNK) starts.push(a);
    const next = async (): Promise<void> => {
      for (let a = starts.shift(); a !== undefined; a = starts.shift()) {
        const b = Math.min(a + CHUNK, data.length) - 1;
        const p = await fetch(`${base}/caches/${cacheId}`, {
          method: 'PATCH',
          headers: {
            ...headers,
            'content-type': 'application/octet-stream',
            'content-range': `bytes ${a}-${b}/*`,
          },
          body: data.subarray(a, b + 1),
        });
        if (p.status !== 204) throw new Error(`chunk: ${p.status} ${await p.text()}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, next));
    const c = await fetch(`${base}/caches/${cacheId}`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ size: data.length }),
    });
    if (c.status !== 204) throw new Error(`commit: ${c.status} ${await c.text()}`);
  }

  async function restore(key: string): Promise<void> {
    const r = await fetch(`${base}/cache?keys=${encodeURIComponent(key)}&version=v1`, { headers });
    if (r.status !== 200) throw new Error(`lookup: ${r.status}`);
    const { archiveLocation } = (await r.json()) as { archiveLocation: string };
    const d = await fetch(archiveLocation);
    if ((await drain(d.body)) !== data.length) throw new Error('restore: short body');
  }

  async function rawPut(): Promise<void> {
    const r = await fetch(rawUrl, { method: 'PUT', body: data });
    if (r.status !== 201) throw new Error(`raw PUT: ${r.status}`);
  }
  /** The same chunks and parallelism as the cache save, each PUT into a file of its own. */
  async function rawPutChunks(): Promise<void> {
    const starts: number[] = [];
    for (let a = 0; a < data.length; a += CHUNK) starts.push(a);
    const next = async (): Promise<void> => {
      for (let a = starts.shift(); a !== undefined; a = starts.shift()) {
        const r = await fetch(`${rawUrl}part${a}`, { method: 'PUT', body: data.subarray(a, a + CHUNK) });
        if (r.status !== 201) throw new Error(`raw PUT: ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, next));
  }
  /** The anchor: the entry's blob read from Anvil's storage in this process, no HTTP. */
  async function directRead(key: string): Promise<void> {
    const row = await s.ctx.db
      .selectFrom('action_cache')
      .select('storage_key')
      .where('cache_key', '=', key)
      .executeTakeFirstOrThrow();
    const n = await drained(await s.ctx.storage.artifacts.open(row.storage_key));
    if (n !== data.length) throw new Error('direct read: short');
  }
  async function rawGet(): Promise<void> {
    if ((await drain((await fetch(rawUrl)).body)) !== data.length) throw new Error('raw GET: short body');
  }

  const t = {
    save: [] as number[],
    restore: [] as number[],
    put: [] as number[],
    chunks: [] as number[],
    get: [] as number[],
    direct: [] as number[],
  };
  for (let i = 0; i < ROUNDS; i++) {
    const key = `bench-${i}`;
    let start = process.hrtime.bigint();
    await save(key);
    t.save.push(seconds(start));
    start = process.hrtime.bigint();
    await rawPut();
    t.put.push(seconds(start));
    start = process.hrtime.bigint();
    await rawPutChunks();
    t.chunks.push(seconds(start));
    // The reads take turns going first: the one right after 300 MiB of writes pays for them.
    const reads = [
      async () => {
        const at = process.hrtime.bigint();
        await restore(key);
        t.restore.push(seconds(at));
      },
      async () => {
        const at = process.hrtime.bigint();
        await rawGet();
        t.get.push(seconds(at));
      },
      async () => {
        const at = process.hrtime.bigint();
        await directRead(key);
        t.direct.push(seconds(at));
      },
    ];
    // Each read goes first in turn.
    for (let k = 0; k < i % reads.length; k++) reads.push(reads.shift()!);
    for (const read of reads) await read();
  }
  const row = (what: string, anvil: number[], anchor: number[], anchorName = 'raw node:http') => {
    const a = mibps(median(anvil));
    const b = mibps(median(anchor));
    console.log(
      `${what.padEnd(8)} Anvil ${a.toFixed(0).padStart(6)} MiB/s   ${anchorName} ${b.toFixed(0).padStart(6)} MiB/s` +
        `   ratio ${(a / b).toFixed(2)}`,
    );
  };
  console.log(`actions cache, ${MIB} MiB entry, median of ${ROUNDS} rounds`);
  row('save', t.save, t.put);
  row('save', t.save, t.chunks);
  console.log('         (second save row: the anchor PUTs the same 32 MiB chunks, 4 in flight, as the save)');
  row('restore', t.restore, t.get);
  row('restore', t.restore, t.direct, 'storage read');
  console.log('         (second restore row: the same blob read from storage in this process, without HTTP)');
} finally {
  await s.close();
  raw.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
