// Benchmark for the container registry (manual): `skopeo copy` of a single-layer image of
// BENCH_MIB MiB (default 200; an already-compressed layer, so skopeo passes it through) from an
// OCI layout into Anvil (`anvil web` started here as a child process, SQLite), against the same
// copy into a plain OCI layout directory in the same run; then pulling it back from Anvil into a
// fresh layout, against the layout-to-layout copy again. BENCH_ROUNDS rounds, interleaved; medians
// and the ratios (baseline time / Anvil time; targets: push >= 0.6, pull >= 0.7) and the server's
// peak resident memory (target < 200 MB).
//
// Run: npm run build && node dist/bench/container.js
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import {
  children,
  exec,
  median,
  rssMb,
  runNode,
  sampleRss,
  startNode,
  timedSeconds as timed,
  waitForListening as waitFor,
} from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const MIB = Number(process.env['BENCH_MIB'] ?? 200);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-container-'));
try {
  // The source layout: one layer of random bytes wrapped as a gzip stream of stored blocks (so it
  // is gzip, as skopeo expects, without compressing anything).
  const src = path.join(dir, 'src');
  const blobs = path.join(src, 'blobs', 'sha256');
  fs.mkdirSync(blobs, { recursive: true });
  fs.writeFileSync(path.join(src, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const layerTmp = path.join(dir, 'layer.gz');
  {
    const zlib = await import('node:zlib');
    const gz = zlib.createGzip({ level: 0 });
    const out = fs.createWriteStream(layerTmp);
    const done = new Promise<void>((r) => out.on('finish', () => r()));
    gz.pipe(out);
    for (let i = 0; i < MIB; i++) {
      if (!gz.write(crypto.randomBytes(1 << 20))) await new Promise<void>((r) => gz.once('drain', () => r()));
    }
    gz.end();
    await done;
  }
  const layerHash = crypto.createHash('sha256');
  for await (const c of fs.createReadStream(layerTmp)) layerHash.update(c as Buffer);
  const layerSha = layerHash.digest('hex');
  const layerSize = fs.statSync(layerTmp).size;
  fs.renameSync(layerTmp, path.join(blobs, layerSha));
  const config = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers' } }),
  );
  fs.writeFileSync(path.join(blobs, sha(config)), config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: `sha256:${sha(config)}`,
        size: config.length,
      },
      layers: [
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
          digest: `sha256:${layerSha}`,
          size: layerSize,
        },
      ],
    }),
  );
  fs.writeFileSync(path.join(blobs, sha(manifest)), manifest);
  fs.writeFileSync(
    path.join(src, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: `sha256:${sha(manifest)}`,
          size: manifest.length,
          annotations: { 'org.opencontainers.image.ref.name': 'bench' },
        },
      ],
    }),
  );

  const home = path.join(dir, 'home');
  for (const d of ['run', 'config', 'registries.d', 'tmp'])
    fs.mkdirSync(path.join(home, d), { recursive: true });
  fs.writeFileSync(path.join(home, 'registries.conf'), 'unqualified-search-registries = []\n');
  const skopeoEnv: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: home,
    XDG_RUNTIME_DIR: path.join(home, 'run'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    CONTAINERS_REGISTRIES_CONF: path.join(home, 'registries.conf'),
    REGISTRY_AUTH_FILE: path.join(home, 'auth.json'),
  };
  const skopeo = (args: string[]) =>
    exec(
      'skopeo',
      [
        '--insecure-policy',
        '--registries.d',
        path.join(home, 'registries.d'),
        '--tmpdir',
        path.join(home, 'tmp'),
        ...args,
      ],
      { env: skopeoEnv },
    );

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
  await runNode([cli, 'admin', 'user', 'create', ...admin], env);
  const token = await runNode(
    [cli, 'admin', 'user', 'generate-access-token', '--username', 'bench', '--raw'],
    env,
  );
  const anvil = startNode(['--max-semi-space-size=16', cli, 'web'], env);
  await waitFor(`http://127.0.0.1:${port}/api/v1/version`);
  const idleRss = rssMb(anvil.pid!);

  const host = `127.0.0.1:${port}`;
  const base = { push: [] as number[], pull: [] as number[] };
  const anv = { push: [] as number[], pull: [] as number[] };
  let peak = 0;
  let peakPush = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const fresh = () => path.join(dir, `out-${crypto.randomBytes(4).toString('hex')}`);
    let out = fresh();
    base.push.push(await timed(() => skopeo(['copy', `oci:${src}:bench`, `oci:${out}:bench`])));
    fs.rmSync(out, { recursive: true, force: true });
    // Each round a new image name, the previous one deleted (skopeo's blob cache, which root keeps
    // in /var/lib/containers/cache, would have it mount the layer from there): every byte is sent.
    const ref = `docker://${host}/bench/image${round}:bench`;
    let rss = sampleRss(anvil.pid!);
    anv.push.push(
      await timed(() =>
        skopeo([
          'copy',
          '--dest-tls-verify=false',
          '--dest-creds',
          `bench:${token}`,
          `oci:${src}:bench`,
          ref,
        ]),
      ),
    );
    peakPush = Math.max(peakPush, rss.stop());
    out = fresh();
    base.pull.push(await timed(() => skopeo(['copy', `oci:${src}:bench`, `oci:${out}:bench`])));
    fs.rmSync(out, { recursive: true, force: true });
    out = fresh();
    rss = sampleRss(anvil.pid!);
    anv.pull.push(
      await timed(() =>
        skopeo(['copy', '--src-tls-verify=false', '--src-creds', `bench:${token}`, ref, `oci:${out}:bench`]),
      ),
    );
    peak = Math.max(peak, rss.stop());
    if (!fs.existsSync(path.join(out, 'blobs', 'sha256', layerSha)))
      throw new Error('the pulled layer is missing');
    fs.rmSync(out, { recursive: true, force: true });
    await skopeo(['delete', '--tls-verify=false', '--creds', `bench:${token}`, ref]);
  }
  const s = (x: number) => `${x.toFixed(2)} s`;
  console.log(`container image of one ${MIB} MiB layer, ${ROUNDS} rounds (medians):`);
  console.log(`  oci: -> oci: ${s(median(base.push))} (before push), ${s(median(base.pull))} (before pull)`);
  console.log(`  push into Anvil ${s(median(anv.push))}, pull from Anvil ${s(median(anv.pull))}`);
  console.log(
    `  ratio push ${(median(base.push) / median(anv.push)).toFixed(2)} (target >= 0.6), pull ${(median(base.pull) / median(anv.pull)).toFixed(2)} (target >= 0.7)`,
  );
  console.log(`  each round: push ${anv.push.map(s).join(', ')}; pull ${anv.pull.map(s).join(', ')}`);
  console.log(
    `  server RSS idle ${idleRss.toFixed(0)} MB, peak ${Math.max(peak, peakPush).toFixed(0)} MB (push ${peakPush.toFixed(0)}, pull ${peak.toFixed(0)}; target < 200)`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  fs.rmSync(dir, { recursive: true, force: true });
}
