// Benchmark for git over SSH (manual, not a test). A repository of 10,000 commits and ~50 MB (made
// by git fast-import: 100 files rewritten in turn, each with ~5 KB of incompressible text) is pushed
// and cloned over Anvil's built-in SSH server (`anvil web`, as `npm start` runs it) and over
// OpenSSH's sshd serving the same bare repositories in the same run, alternately:
//   push of the whole history into an empty repository   (target: within 1.2x of sshd)
//   clone of it                                         (target: within 1.2x of sshd)
// then 20 clones over Anvil's SSH server at once (all must complete; the time is reported).
// Needs root (sshd) and /usr/sbin/sshd.
// Run: npm run build && node dist/bench/ssh.js     (BENCH_COMMITS, BENCH_RUNS, BENCH_PARALLEL to change sizes)
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { waitFor200, median, runWithInput as run } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const COMMITS = Number(process.env['BENCH_COMMITS'] ?? 10_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const PARALLEL = Number(process.env['BENCH_PARALLEL'] ?? 20);
const FILES = 100;

/** The fast-import stream: COMMITS commits on main, each rewriting one file with ~5 KB of random text. */
function history(): string {
  const parts: string[] = [];
  const blob = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const t0 = 1_700_000_000;
  for (let c = 1; c <= COMMITS; c++) {
    parts.push(
      `commit refs/heads/main\nmark :${c}\ncommitter Bench <bench@example.com> ${t0 + c * 60} +0000\n`,
    );
    parts.push(blob(`Commit ${c}: change file ${c % FILES}`));
    if (c > 1) parts.push(`from :${c - 1}\n`);
    const noise = crypto.randomBytes(4700).toString('base64');
    parts.push(`M 100644 inline data/file${c % FILES}.txt\n${blob(`${c}\n${noise}\n`)}\n`);
  }
  return parts.join('');
}

const seconds = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e9;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-ssh-'));
// sshd's files live where sshd accepts their modes (not under /tmp).
const sshdDir = fs.mkdtempSync(path.join(os.homedir(), '.anvil-bench-sshd-'));
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-ssh-home-'));
const port = await freePort();
const sshPort = await freePort();
const sshdPort = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
  ANVIL__SERVER__SSH_LISTEN_HOST: '127.0.0.1',
  ANVIL__SERVER__SSH_LISTEN_PORT: String(sshPort),
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
};
let server: ChildProcess | undefined;
let sshd: ChildProcess | undefined;
try {
  const key = path.join(home, 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key], {});
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim();
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  await ctx.sshKeys.addUserKey(alice, 'bench', pub);
  const anvilRepos = [];
  for (let i = 0; i < RUNS; i++) anvilRepos.push(await ctx.repos.create(alice, alice, { name: `big${i}` }));
  const bare = anvilRepos.map((r) => ctx.repos.pathOf(r));
  await ctx.close();

  // The history, made once.
  const gitEnv = {
    PATH: process.env['PATH'],
    HOME: home,
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_SSH_COMMAND:
      `ssh -i ${key} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null ` +
      '-o LogLevel=ERROR -o BatchMode=yes',
  };
  const src = path.join(home, 'src.git');
  await run('git', ['init', '--bare', '-q', '--initial-branch=main', src], { env: gitEnv });
  await run('git', ['fast-import', '--quiet'], { cwd: src, env: gitEnv, input: history() });
  const packBytes = fs
    .readdirSync(path.join(src, 'objects', 'pack'))
    .reduce((n, f) => n + fs.statSync(path.join(src, 'objects', 'pack', f)).size, 0);

  // OpenSSH's sshd with the same key, running git directly on the bare repositories.
  const hostKey = path.join(sshdDir, 'host_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey], {});
  fs.writeFileSync(path.join(sshdDir, 'authorized_keys'), `${pub}\n`, { mode: 0o600 });
  const sshdConfig = path.join(sshdDir, 'sshd_config');
  fs.writeFileSync(
    sshdConfig,
    [
      `Port ${sshdPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(sshdDir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(sshdDir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'PermitRootLogin prohibit-password',
      'MaxStartups 100',
      'AcceptEnv GIT_PROTOCOL',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', sshdConfig], { stdio: 'inherit' });
  server = spawn(process.execPath, ['--max-semi-space-size=16', cli, 'web'], { env, stdio: 'inherit' });
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 30_000);
  // The SSH server follows HTTP (host keys are made on first start).
  for (let tries = 0; ; tries++) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(sshPort, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (up) break;
    if (tries > 600) throw new Error('the SSH server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const user = os.userInfo().username;
  const anvilUrl = (i: number) => `ssh://git@127.0.0.1:${sshPort}/alice/big${i}.git`;
  const sshdUrl = (p: string) => `ssh://${user}@127.0.0.1:${sshdPort}${p}`;

  const push = { anvil: [] as number[], sshd: [] as number[] };
  const clone = { anvil: [] as number[], sshd: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    let t = process.hrtime.bigint();
    await run('git', ['push', '-q', anvilUrl(i), 'main'], { cwd: src, env: gitEnv });
    push.anvil.push(seconds(t));
    const target = path.join(home, `sshd-push-${i}.git`);
    await run('git', ['init', '--bare', '-q', target], { env: gitEnv });
    t = process.hrtime.bigint();
    await run('git', ['push', '-q', sshdUrl(target), 'main'], { cwd: src, env: gitEnv });
    push.sshd.push(seconds(t));
  }
  for (let i = 0; i < RUNS; i++) {
    let t = process.hrtime.bigint();
    await run('git', ['clone', '-q', '--bare', anvilUrl(i), path.join(home, `c-anvil-${i}`)], {
      env: gitEnv,
    });
    clone.anvil.push(seconds(t));
    // The same bare repository Anvil serves, through sshd.
    t = process.hrtime.bigint();
    await run('git', ['clone', '-q', '--bare', sshdUrl(bare[i]!), path.join(home, `c-sshd-${i}`)], {
      env: gitEnv,
    });
    clone.sshd.push(seconds(t));
  }

  const t = process.hrtime.bigint();
  const results = await Promise.allSettled(
    Array.from({ length: PARALLEL }, (_, i) =>
      run('git', ['clone', '-q', '--bare', anvilUrl(0), path.join(home, `p-${i}`)], { env: gitEnv }),
    ),
  );
  const parallelSeconds = seconds(t);
  const failed = results.filter((r) => r.status === 'rejected');

  const ratio = (a: number[], b: number[]) => Number((median(a) / median(b)).toFixed(2));
  const report = {
    machine: `${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (shared)`,
    commits: COMMITS,
    packMiB: Number((packBytes / 1048576).toFixed(1)),
    runs: RUNS,
    pushSeconds: {
      anvil: push.anvil.map((x) => Number(x.toFixed(2))),
      sshd: push.sshd.map((x) => Number(x.toFixed(2))),
      ratioOfMedians: ratio(push.anvil, push.sshd),
      target: 1.2,
    },
    cloneSeconds: {
      anvil: clone.anvil.map((x) => Number(x.toFixed(2))),
      sshd: clone.sshd.map((x) => Number(x.toFixed(2))),
      ratioOfMedians: ratio(clone.anvil, clone.sshd),
      target: 1.2,
    },
    parallelClones: {
      count: PARALLEL,
      completed: PARALLEL - failed.length,
      seconds: Number(parallelSeconds.toFixed(2)),
      errors: failed.map((r) => String((r as PromiseRejectedResult).reason).slice(0, 300)),
    },
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  server?.kill();
  sshd?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(sshdDir, { recursive: true, force: true });
}
