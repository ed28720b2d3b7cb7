// Benchmark for git over smart HTTP: a repository of 10,000 commits and about 50 MB of objects
// (made by git fast-import from deterministic pseudo-random content), cloned from and pushed
// (the whole history into an empty repository) to one Anvil process, side by side with
// `git http-backend` behind a minimal Node HTTP server (CGI) serving the same kind of bare
// repository. Prints the times and the ratios (target: Anvil within 1.15x of http-backend).
// Run (not a test): npm run build && node dist/bench/git.js
// Settings: BENCH_COMMITS (10000), BENCH_BYTES (50 MB), BENCH_ROUNDS (5).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/server.js';
import { waitFor200, median } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const COMMITS = Number(process.env['BENCH_COMMITS'] ?? 10_000);
const TOTAL_BYTES = Number(process.env['BENCH_BYTES'] ?? 50 * 1024 * 1024);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const FILES = 200;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runProcess(
  cmd: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    input?: (stdin: NodeJS.WritableStream) => Promise<void>;
  } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    if (opts.input) opts.input(child.stdin).then(() => child.stdin.end(), reject);
    else child.stdin.end();
  });
}

const gitEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: process.env['PATH'],
  HOME: home,
  LANG: 'C',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
});

async function git(home: string, args: string[], cwd?: string): Promise<string> {
  const r = await runProcess('git', args, { cwd: cwd ?? home, env: gitEnv(home) });
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Writes `data` and waits for the pipe to drain when it is full. */
function write(stream: NodeJS.WritableStream, data: string | Buffer): Promise<void> {
  return stream.write(data) ? Promise.resolve() : new Promise((r) => stream.once('drain', () => r()));
}

/**
 * The source repository: COMMITS commits on main, each rewriting one of FILES files with new
 * pseudo-random (incompressible) content, about TOTAL_BYTES in all. AES-CTR over zeros with a
 * fixed key is the deterministic random stream: the same bytes on every run.
 */
async function makeSource(home: string, dir: string): Promise<void> {
  await git(home, ['init', '--bare', '--quiet', '--initial-branch=main', dir]);
  const random = crypto.createCipheriv('aes-256-ctr', Buffer.alloc(32, 7), Buffer.alloc(16, 1));
  const perCommit = Math.max(1, Math.floor(TOTAL_BYTES / COMMITS));
  const zeros = Buffer.alloc(perCommit);
  const r = await runProcess('git', ['--git-dir', dir, 'fast-import', '--quiet'], {
    env: gitEnv(home),
    input: async (stdin) => {
      for (let i = 0; i < COMMITS; i++) {
        const content = random.update(zeros);
        await write(stdin, `blob\nmark :${2 * i + 1}\ndata ${content.length}\n`);
        await write(stdin, content);
        const message = `commit ${i}\n`;
        const when = 1_700_000_000 + i * 60;
        await write(
          stdin,
          `\ncommit refs/heads/main\nmark :${2 * i + 2}\n` +
            `author Bench <bench@example.com> ${when} +0000\n` +
            `committer Bench <bench@example.com> ${when} +0000\n` +
            `data ${message.length}\n${message}` +
            (i > 0 ? `from :${2 * i}\n` : '') +
            `M 100644 :${2 * i + 1} data/f${String(i % FILES).padStart(3, '0')}.bin\n\n`,
        );
      }
    },
  });
  if (r.code !== 0) throw new Error(`fast-import: ${r.stderr}`);
  await git(home, ['--git-dir', dir, 'repack', '-a', '-d', '-q']);
}

function objectBytes(dir: string): number {
  let total = 0;
  const walk = (p: string) => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) {
      const full = path.join(p, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) total += fs.statSync(full).size;
    }
  };
  walk(path.join(dir, 'objects'));
  return total;
}

/**
 * `git http-backend` as CGI behind a minimal Node HTTP server: request bodies stream to its
 * stdin, its stdout streams back once the CGI headers are parsed.
 */
function startHttpBackend(root: string, port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: 'bench',
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
      GIT_CONFIG_NOSYSTEM: '1',
    };
    if (req.headers['content-length']) env['CONTENT_LENGTH'] = req.headers['content-length'];
    if (req.headers['content-encoding']) env['HTTP_CONTENT_ENCODING'] = req.headers['content-encoding'];
    // http-backend hands the Git-Protocol header (protocol v2) to the services itself.
    if (req.headers['git-protocol']) env['HTTP_GIT_PROTOCOL'] = String(req.headers['git-protocol']);
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let parsed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (parsed) {
        if (!res.write(chunk)) {
          child.stdout.pause();
          res.once('drain', () => child.stdout.resume());
        }
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf('\r\n\r\n');
      let sep = 4;
      if (end < 0) {
        end = head.indexOf('\n\n');
        sep = 2;
      }
      if (end < 0) return;
      parsed = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      const rest = head.subarray(end + sep);
      if (rest.length) res.write(rest);
    });
    child.stdout.on('end', () => res.end());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const best = (xs: number[]) => Math.min(...xs);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-git-'));
const home = path.join(work, 'home');
fs.mkdirSync(home);
const children: ChildProcess[] = [];
let backend: http.Server | undefined;
try {
  const source = path.join(work, 'source.git');
  const made = await timed(() => makeSource(home, source));
  const sourceBytes = objectBytes(source);
  console.log(
    `source: ${COMMITS} commits, ${(sourceBytes / 1024 / 1024).toFixed(1)} MB of objects (built in ${(made / 1000).toFixed(1)} s)`,
  );

  // Anvil in its own process, as `npm start` runs it.
  const anvilDir = path.join(work, 'anvil');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: anvilDir,
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__LOG__LEVEL: 'warn',
    ANVIL__DATABASE__DB_TYPE: 'sqlite3',
  };
  const node = (args: string[]) => runProcess(process.execPath, args, { env });
  const created = await node([
    cli,
    'admin',
    'user',
    'create',
    '--username',
    'bench',
    '--password',
    'bench-password-1',
    '--email',
    'bench@example.com',
  ]);
  if (created.code !== 0) throw new Error(`create user: ${created.stderr}`);
  const tokenRun = await node([
    cli,
    'admin',
    'user',
    'generate-access-token',
    '--username',
    'bench',
    '--raw',
  ]);
  if (tokenRun.code !== 0) throw new Error(`token: ${tokenRun.stderr}`);
  const token = tokenRun.stdout.trim();
  const anvil = spawn(process.execPath, ['--max-semi-space-size=16', cli, 'web'], { env, stdio: 'inherit' });
  children.push(anvil);
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 15_000);

  const backendRoot = path.join(work, 'backend');
  fs.mkdirSync(backendRoot);
  const backendPort = await freePort();
  backend = await startHttpBackend(backendRoot, backendPort);

  async function anvilRepo(name: string): Promise<string> {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1/user/repos`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${await r.text()}`);
    // The token as the password, as git users do.
    return `http://bench:${token}@127.0.0.1:${port}/bench/${name}.git`;
  }

  async function backendRepo(name: string): Promise<string> {
    const dir = path.join(backendRoot, `${name}.git`);
    await git(home, ['init', '--bare', '--quiet', '--initial-branch=main', dir]);
    await git(home, ['--git-dir', dir, 'config', 'http.receivepack', 'true']);
    return `http://127.0.0.1:${backendPort}/${name}.git`;
  }

  const push = (to: string) => git(home, ['--git-dir', source, 'push', '--quiet', to, 'main']);
  const clone = (from: string, dest: string) => git(home, ['clone', '--quiet', from, dest]);

  const times = {
    anvilPush: [] as number[],
    backendPush: [] as number[],
    anvilClone: [] as number[],
    backendClone: [] as number[],
  };
  let anvilUrl = '';
  let backendUrl = '';
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first so neither always meets a warm or a cold page cache.
    const order = round % 2 === 0 ? ['anvil', 'backend'] : ['backend', 'anvil'];
    for (const who of order) {
      if (who === 'anvil') {
        const url = await anvilRepo(`pushed-${round}`);
        times.anvilPush.push(await timed(() => push(url)));
        anvilUrl = url;
      } else {
        const url = await backendRepo(`pushed-${round}`);
        times.backendPush.push(await timed(() => push(url)));
        backendUrl = url;
      }
    }
  }
  // Anvil's repository is public: clone anonymously, as from http-backend.
  const anvilCloneUrl = anvilUrl.replace(/\/\/bench:[^@]+@/, '//');
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['anvil', 'backend'] : ['backend', 'anvil'];
    for (const who of order) {
      const dest = path.join(work, `clone-${who}-${round}`);
      if (who === 'anvil') times.anvilClone.push(await timed(() => clone(anvilCloneUrl, dest)));
      else times.backendClone.push(await timed(() => clone(backendUrl, dest)));
      fs.rmSync(dest, { recursive: true, force: true });
    }
  }
  const result = {
    commits: COMMITS,
    objectsMb: Number((sourceBytes / 1024 / 1024).toFixed(1)),
    rounds: ROUNDS,
    cloneMs: {
      anvil: Math.round(median(times.anvilClone)),
      httpBackend: Math.round(median(times.backendClone)),
    },
    pushMs: {
      anvil: Math.round(median(times.anvilPush)),
      httpBackend: Math.round(median(times.backendPush)),
    },
    cloneRatio: Number((median(times.anvilClone) / median(times.backendClone)).toFixed(3)),
    pushRatio: Number((median(times.anvilPush) / median(times.backendPush)).toFixed(3)),
    // The fastest of the rounds: what each costs when nothing else on the machine interferes.
    bestCloneRatio: Number((best(times.anvilClone) / best(times.backendClone)).toFixed(3)),
    bestPushRatio: Number((best(times.anvilPush) / best(times.backendPush)).toFixed(3)),
    all: times,
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `git clone (median of ${ROUNDS}): Anvil ${result.cloneMs.anvil} ms, http-backend ${result.cloneMs.httpBackend} ms, ratio ${result.cloneRatio.toFixed(2)}, best-of ratio ${result.bestCloneRatio.toFixed(2)} (target <= 1.15)`,
  );
  console.log(
    `git push of the whole history into an empty repository (median of ${ROUNDS}): Anvil ${result.pushMs.anvil} ms, http-backend ${result.pushMs.httpBackend} ms, ratio ${result.pushRatio.toFixed(2)}, best-of ratio ${result.bestPushRatio.toFixed(2)} (target <= 1.15)`,
  );
} finally {
  for (const c of children) c.kill('SIGTERM');
  backend?.close();
  fs.rmSync(work, { recursive: true, force: true });
}
