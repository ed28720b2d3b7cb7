// Benchmark for the Cargo registry (manual), against an Anvil server started as `npm start` starts
// it: the index file of a crate with 1,000 versions (each with dependencies and features, inserted
// through the service before the server starts), fetched sequentially over one kept-alive
// connection as cargo asks for it (gzip): warm (rendered once per revision), revalidated (304 on
// If-None-Match), and cold (the first request after a yank changed the revision: three queries,
// rendering and compression); then `cargo publish` bodies of small crates, one after another.
// p50 and p99 of each (target p99 < 50 ms for index requests).
//
// Run: npm run build && node dist/bench/cargo.js
// Settings: BENCH_VERSIONS (default 1000), BENCH_REQUESTS (default 200), BENCH_COLD (default 50),
// BENCH_PUBLISHES (default 100).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { PropertyRef } from '../src/packages/tables.js';
import * as store from '../src/packages/store.js';
import { YANKED } from '../src/packages/cargo/service.js';
import { percentile, waitFor200, runNode as run } from './common.js';
import { keepAliveClient } from './keepalive.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const VERSIONS = Number(process.env['BENCH_VERSIONS'] ?? 1000);
const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 200);
const COLD = Number(process.env['BENCH_COLD'] ?? 50);
const PUBLISHES = Number(process.env['BENCH_PUBLISHES'] ?? 100);

function publishBody(name: string, vers: string, crate: Buffer): Buffer {
  const json = Buffer.from(JSON.stringify({ name, vers, deps: [], features: {}, description: 'bench' }));
  const a = Buffer.alloc(4);
  a.writeUInt32LE(json.length);
  const b = Buffer.alloc(4);
  b.writeUInt32LE(crate.length);
  return Buffer.concat([a, json, b, crate]);
}

const line = (label: string, times: number[]) =>
  console.log(
    `${label}: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms (${times.length} requests)`,
  );

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-cargo-'));
let anvil: ChildProcess | undefined;
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
  await run([cli, 'admin', 'user', 'create', ...admin], env);
  const token = await run(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    env,
  );

  {
    const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
    const owner = (await ctx.users.getByName('bench'))!;
    const t0 = Date.now();
    for (let i = 0; i < VERSIONS; i++) {
      const deps = ['left', 'right', 'middle'].map((name) => ({
        name,
        req: '^1.0',
        features: [],
        optional: false,
        default_features: true,
        target: null,
        kind: 'normal',
        registry: null,
        package: null,
      }));
      await ctx.packages.addFile({
        owner,
        creator: owner,
        type: 'cargo',
        name: 'many_versions',
        version: `1.0.${i}`,
        fileName: `many_versions-1.0.${i}.crate`,
        isLead: true,
        data: Readable.from([crypto.randomBytes(512)]),
        newVersionOnly: true,
        metadata: JSON.stringify({
          name: 'many_versions',
          vers: `1.0.${i}`,
          deps,
          features: { default: ['std'], std: [] },
          description: 'a crate with many versions',
        }),
        inTransaction: (tx, _pkg, v) => store.addProperty(tx, PropertyRef.version, v.id, YANKED, 'false'),
      });
    }
    console.log(`inserted ${VERSIONS} cargo versions in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await ctx.close();
  }

  anvil = spawn(process.execPath, [cli, 'web'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitFor200(`${url}/api/v1/version`, 30_000);
  const indexUrl = `${url}/api/packages/bench/cargo/ma/ny/many_versions`;
  const auth = { authorization: `Bearer ${token}` };
  const gzip = { 'accept-encoding': 'deflate, gzip' };

  const client = keepAliveClient(indexUrl);
  const first = await client.get(gzip);
  if (first.status !== 200) throw new Error(`index: ${first.status}`);
  const lines = first.body.trim().split('\n').length;
  console.log(
    `index file: ${lines} lines, ${(first.body.length / 1024).toFixed(0)} KiB, ${(first.bytes / 1024).toFixed(0)} KiB gzip-compressed`,
  );

  const warm: number[] = [];
  for (let i = 0; i < REQUESTS + 20; i++) {
    const t = process.hrtime.bigint();
    const r = await client.get(gzip);
    if (r.status !== 200) throw new Error(`index: ${r.status}`);
    if (i >= 20) warm.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  line('index, warm (gzip, to the last byte)', warm);

  const etag = (await fetch(indexUrl)).headers.get('etag')!;
  const revalidated: number[] = [];
  for (let i = 0; i < REQUESTS + 20; i++) {
    const t = process.hrtime.bigint();
    const r = await client.get({ ...gzip, 'if-none-match': etag });
    if (r.status !== 304) throw new Error(`revalidation: ${r.status}`);
    if (i >= 20) revalidated.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  line('index, revalidated (304)', revalidated);

  const cold: number[] = [];
  for (let i = 0; i < COLD; i++) {
    const y = await fetch(`${url}/api/packages/bench/cargo/api/v1/crates/many_versions/1.0.${i}/yank`, {
      method: 'DELETE',
      headers: auth,
    });
    if (y.status !== 200) throw new Error(`yank: ${y.status}`);
    const t = process.hrtime.bigint();
    const r = await client.get(gzip);
    if (r.status !== 200) throw new Error(`index: ${r.status}`);
    cold.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  line(`index, cold after a yank (3 queries, ${VERSIONS} lines rendered, gzip)`, cold);
  client.close();

  const publish: number[] = [];
  for (let i = 0; i < PUBLISHES; i++) {
    const body = publishBody(`small_${i}`, '0.1.0', crypto.randomBytes(2048));
    const t = process.hrtime.bigint();
    const r = await fetch(`${url}/api/packages/bench/cargo/api/v1/crates/new`, {
      method: 'PUT',
      headers: auth,
      body: new Uint8Array(body),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`publish: ${r.status}`);
    publish.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  line('publish of a 2 KiB crate', publish);
} finally {
  anvil?.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  fs.rmSync(dir, { recursive: true, force: true });
}
