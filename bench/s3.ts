// Benchmark for the S3 backend (manual): a 256 MiB LFS object (basic transfer PUT) and a 256 MiB
// artifact (one plain PUT to its signed upload URL, between CreateArtifact and FinalizeArtifact)
// through an Anvil server started as `npm start` starts it, with [storage] STORAGE_TYPE = minio
// pointing at s3rver (a child process), against the same bytes PUT straight to that S3 server
// (one PutObject) in the same run. Reports the times, the ratios direct / Anvil (target >= 0.7)
// and the Anvil server's peak resident memory, sampled from /proc/<pid>/status every 20 ms
// (target < 200 MB). s3rver writes every object to its own disk, so it is the bottleneck of both.
//
// Run: npm run build && node dist/bench/s3.js
// Settings: BENCH_MIB (default 256), BENCH_ROUNDS (default 1), BENCH_LOG_LEVEL.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CLI_ADMIN, createAdminWithToken, freePort, startS3rver } from '../test/helpers/server.js';
import { S3BlobStore } from '../src/storage/s3.js';
import { blobKey } from '../src/lfs/service.js';
import { median, putFile, rssMb, runNode, sampleRss, uploadArtifact, waitForListening } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 256);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 1);
const SECRET = 'bench-secret-key';
const BUCKET = 'bench';

const run = (args: string[], env: NodeJS.ProcessEnv) => runNode(args, env, root);

const children: ChildProcess[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-s3-'));
const s3 = await startS3rver();
try {
  const file = path.join(dir, 'payload.bin');
  const fd = fs.openSync(file, 'w');
  const hash = crypto.createHash('sha256');
  for (let i = 0; i < MIB; i++) {
    const chunk = crypto.randomBytes(1 << 20);
    hash.update(chunk);
    fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
  const oid = hash.digest('hex');
  const bytes = MIB * 1024 * 1024;

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...s3.settings(BUCKET),
    ANVIL__SERVER__APP_DATA_PATH: path.join(dir, 'anvil'),
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SECURITY__SECRET_KEY: SECRET,
    ANVIL__ACTIONS__ENABLED: 'true',
    ANVIL__SERVER__START_SSH_SERVER: 'false',
    ANVIL__LOG__LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const token = await createAdminWithToken((...args) => run([cli, ...args], env));
  const anvil = spawn(process.execPath, ['--max-semi-space-size=16', cli, 'web'], { env, stdio: 'inherit' });
  children.push(anvil);
  const url = `http://127.0.0.1:${port}`;
  await waitForListening(`${url}/api/v1/version`);
  const repo = await fetch(`${url}/api/v1/user/repos`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const repoId = ((await repo.json()) as { id: number }).id;
  const idleRss = rssMb(anvil.pid!);

  const direct = new S3BlobStore({
    endpoint: s3.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    bucket: BUCKET,
    location: 'us-east-1',
    useSsl: false,
    basePath: 'direct/',
    bucketLookup: 'path',
    serveDirect: false,
  });
  let n = 0;
  const directPut = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    await direct.client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `direct/${++n}`,
        Body: fs.createReadStream(file, { highWaterMark: 1 << 20 }),
        ContentLength: bytes,
      }),
    );
    return Number(process.hrtime.bigint() - start) / 1e9;
  };

  /** The same bytes through the backend's own `put` (lib-storage multipart upload), no Anvil HTTP. */
  const directMultipart = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    await direct.put(`multipart/${++n}`, fs.createReadStream(file, { highWaterMark: 1 << 20 }));
    return Number(process.hrtime.bigint() - start) / 1e9;
  };

  const basic = `Basic ${Buffer.from(`${CLI_ADMIN.name}:${CLI_ADMIN.password}`).toString('base64')}`;
  const lfsPut = async (): Promise<number> => {
    // A new repository each round, so the object is uploaded again rather than found.
    const name = `lfs${++n}`;
    await fetch(`${url}/api/v1/user/repos`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    const r = await fetch(`${url}/api/v1/repos/${CLI_ADMIN.name}/${name}`, {
      headers: { authorization: `token ${token}` },
    });
    if (r.status !== 200) throw new Error('repository not created');
    // The object is shared by oid across repositories: remove the stored one first.
    await direct.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `lfs/${blobKey(oid)}` }));
    return putFile(
      new URL(`${url}/${CLI_ADMIN.name}/${name}.git/info/lfs/objects/${oid}`),
      file,
      bytes,
      {
        authorization: basic,
        accept: 'application/vnd.git-lfs+json',
        'content-type': 'application/octet-stream',
      },
      200,
    );
  };

  let runId = 0;
  const artifactPut = () => uploadArtifact(url, SECRET, repoId, ++runId, file, bytes);

  const directTimes: number[] = [];
  const multipartTimes: number[] = [];
  const lfsTimes: number[] = [];
  const artifactTimes: number[] = [];
  let peak = 0;
  for (let round = 0; round < ROUNDS; round++) {
    directTimes.push(await directPut());
    multipartTimes.push(await directMultipart());
    const rss = sampleRss(anvil.pid!);
    lfsTimes.push(await lfsPut());
    artifactTimes.push(await artifactPut());
    peak = Math.max(peak, rss.stop());
  }
  direct.close();

  const line = (label: string, times: number[]) =>
    console.log(
      `${label.padEnd(40)} ${median(times).toFixed(2)} s  ${(MIB / median(times)).toFixed(0).padStart(4)} MiB/s   (runs: ${times.map((t) => t.toFixed(2)).join(', ')})`,
    );
  console.log(
    `${MIB} MiB of random bytes into s3rver, ${ROUNDS} round(s), medians; load ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`,
  );
  line('PutObject straight to the S3 server', directTimes);
  line('S3BlobStore.put straight (multipart)', multipartTimes);
  line('LFS basic transfer PUT through Anvil', lfsTimes);
  line('artifact upload through Anvil', artifactTimes);
  console.log(
    `ratio direct / Anvil LFS:      ${(median(directTimes) / median(lfsTimes)).toFixed(2)}  (target >= 0.7)`,
  );
  console.log(
    `ratio direct / Anvil artifact: ${(median(directTimes) / median(artifactTimes)).toFixed(2)}  (target >= 0.7)`,
  );
  console.log(
    `ratio multipart put / Anvil LFS: ${(median(multipartTimes) / median(lfsTimes)).toFixed(2)}, artifact: ${(median(multipartTimes) / median(artifactTimes)).toFixed(2)}  (Anvil's HTTP path alone)`,
  );
  console.log(
    `Anvil server RSS: idle ${idleRss.toFixed(0)} MB, peak during the uploads ${peak.toFixed(0)} MB  (target < 200 MB)`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  await s3.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
