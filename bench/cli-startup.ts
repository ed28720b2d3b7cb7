// Benchmark of the `anvil` command's start-up (manual, not a test): the three commands run per
// operation (`anvil admin user create`, `anvil keys`, sshd's AuthorizedKeysCommand, and `anvil serv`,
// its forced command in OpenSSH mode) are each spawned BENCH_RUNS times (default 7) as sshd and
// operators run them, `node bin/anvil.js ...` (so bin/anvil.js's staleness check counts), against a
// fresh SQLite site served by `anvil web`; process spawn to exit, median and p90, side by side with
// the 300 ms target and with the numbers measured before the CLI was split into chunks.
// `node -e 0` is timed alongside: the floor any command pays on this machine at this moment.
// Run: npm run build && node dist/bench/cli-startup.js
//   BENCH_BEFORE=<checkout>/bin/anvil.js: also run that checkout's (built) anvil, in turn with this one.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { children, median, quantile, startNode, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', '..', 'bin', 'anvil.js');
const RUNS = Number(process.env['BENCH_RUNS'] ?? 7);
const TARGET_MS = 300;

/**
 * Median / p90 in ms before the change (main at 188ae81: one 6 MB bundle), measured with this
 * script and BENCH_BEFORE, in turn with the change, on the shared 2-core machine the work was done
 * on (load average 8: `node -e 0` alone took 121 ms).
 */
const BEFORE: Record<string, { median: number; p90: number }> = {
  'node -e 0 (floor)': { median: 121, p90: 195 },
  'admin user create': { median: 877, p90: 1337 },
  keys: { median: 775, p90: 917 },
  serv: { median: 852, p90: 1025 },
};

interface Timed {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawn to exit of `node args...`, in ms. */
function timed(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, code, stdout, stderr }),
    );
  });
}

/** An OpenSSH ed25519 public key line and its base64 blob. */
function ed25519Key(): { line: string; blob: string } {
  const der = crypto.generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
  const raw = der.subarray(der.length - 32);
  const field = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64');
  return { line: `ssh-ed25519 ${blob} bench`, blob };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-cli-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__SERVER__START_SSH_SERVER: 'false',
};
try {
  startNode([bin, 'web'], env);
  await waitFor200(`http://127.0.0.1:${port}/api/healthz`, 60_000);
  const cli = async (b: string, ...args: string[]) => {
    const r = await timed([b, ...args], env, dir);
    if (r.code !== 0) throw new Error(`anvil ${args.join(' ')}: ${r.code}\n${r.stderr}`);
    return r;
  };
  await cli(
    bin,
    'admin',
    'user',
    'create',
    '--username',
    'root',
    '--password',
    'root-pass-1',
    '--email',
    'r@x.org',
    '--admin',
  );
  const token = (
    await cli(bin, 'admin', 'user', 'generate-access-token', '--username', 'root', '--raw')
  ).stdout.trim();
  const key = ed25519Key();
  const added = await fetch(`http://127.0.0.1:${port}/api/v1/user/keys`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'bench', key: key.line }),
  });
  if (added.status !== 201) throw new Error(`adding the key: ${added.status} ${await added.text()}`);
  const keyId = ((await added.json()) as { id: number }).id;

  // Each command is run by this checkout's bin/anvil.js and, given BENCH_BEFORE (the bin/anvil.js
  // of a built checkout of the code before), by that one too, in turn: both see the same load.
  const bins: [string, string][] = [['after', bin]];
  const beforeBin = process.env['BENCH_BEFORE'];
  if (beforeBin) bins.push(['before', path.resolve(beforeBin)]);
  let users = 0;
  const cases: [string, (b: string) => Promise<Timed>][] = [
    ['node -e 0 (floor)', () => timed(['-e', '0'], env, dir)],
    [
      'admin user create',
      (b) => {
        const name = `u${++users}`;
        return cli(
          b,
          'admin',
          'user',
          'create',
          '--username',
          name,
          '--password',
          'user-pass-1',
          '--email',
          `${name}@x.org`,
        );
      },
    ],
    [
      'keys',
      async (b) => {
        const r = await cli(b, 'keys', '-e', 'git', '-u', 'git', '-t', 'ssh-ed25519', '-k', key.blob);
        if (!r.stdout.includes(' serv key-')) throw new Error(`anvil keys printed ${r.stdout}`);
        return r;
      },
    ],
    [
      'serv',
      // A clone of a repository that does not exist: the server's answer, then exit 1.
      async (b) => {
        const r = await timed(
          [b, 'serv', `key-${keyId}`],
          { ...env, SSH_ORIGINAL_COMMAND: "git-upload-pack 'root/none.git'" },
          dir,
        );
        if (r.code !== 1 || !/^Anvil: /.test(r.stderr)) throw new Error(`anvil serv: ${r.code} ${r.stderr}`);
        return r;
      },
    ],
  ];
  const ms = new Map<string, number[]>();
  // One run of each first, to warm the page cache; then RUNS rounds, each command and bin in turn.
  for (let round = -1; round < RUNS; round++) {
    for (const [name, run] of cases) {
      for (const [variant, b] of name.includes('floor') ? bins.slice(0, 1) : bins) {
        const r = await run(b);
        if (round < 0) continue;
        const key = `${name}/${variant}`;
        ms.set(key, [...(ms.get(key) ?? []), r.ms]);
      }
    }
  }
  console.log(
    `anvil start-up, spawn to exit, ${RUNS} runs each, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const fmt = (xs: number[] | undefined) =>
    xs
      ? `median ${median(xs).toFixed(0).padStart(5)} ms  p90 ${quantile(xs, 0.9).toFixed(0).padStart(5)} ms`
      : '';
  const floor = median(ms.get('node -e 0 (floor)/after')!);
  for (const [name] of cases) {
    const after = ms.get(`${name}/after`)!;
    const measuredBefore = ms.get(`${name}/before`);
    const recorded = BEFORE[name]!;
    const before = measuredBefore
      ? `before (measured now): ${fmt(measuredBefore)}`
      : `before (recorded): median ${String(recorded.median).padStart(5)} ms  p90 ${String(recorded.p90).padStart(5)} ms`;
    const verdict = name.includes('floor') ? '' : median(after) < TARGET_MS ? 'target met' : 'target NOT met';
    // What the command costs above node's own start, which a loaded machine inflates.
    const above = name.includes('floor') ? '' : `, ${(median(after) - floor).toFixed(0)} ms above the floor`;
    console.log(`${name.padEnd(18)} ${fmt(after)}   ${before}   (target ${TARGET_MS} ms) ${verdict}${above}`);
    console.log(`${''.padEnd(18)} after: [${after.map((x) => x.toFixed(0)).join(' ')}]`);
    if (measuredBefore)
      console.log(`${''.padEnd(18)} before: [${measuredBefore.map((x) => x.toFixed(0)).join(' ')}]`);
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(dir, { recursive: true, force: true });
}
