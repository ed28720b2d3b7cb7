// What the benchmarks share: starting and waiting for servers, running commands, a process's
// memory and CPU, and medians and percentiles of timings.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { mintRuntimeToken } from '../src/actions/runtime-token.js';

/** Resolves once `url` answers 200; throws after `deadlineMs`. */
export async function waitFor200(url: string, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`no 200 from ${url}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The `p`th percentile of `values` (ms), to two decimals. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2));
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The value at fraction `q` (0..1) of `xs` sorted, unrounded. */
export const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** Seconds `fn` takes. */
export async function timedSeconds(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/** A process's resident memory in MB (0 once it is gone). */
export function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** RSS split into anonymous memory (heaps, buffers) and mapped files (the node binary, ICU). */
export function rssParts(pid: number): string {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
    return `anon ${kb('RssAnon').toFixed(0)} MB, files ${kb('RssFile').toFixed(0)} MB, shared ${kb('RssShmem').toFixed(0)} MB`;
  } catch {
    return '?';
  }
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Samples a process's resident memory every 20 ms until stopped; the peak in MB. */
export function sampleRss(pid: number): { stop(): number } {
  let peak = rssMb(pid);
  const t = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
  return {
    stop() {
      clearInterval(t);
      return Math.max(peak, rssMb(pid));
    },
  };
}

/** Resolves once anything answers at `url` (any status); throws after 30 s. */
export async function waitForListening(url: string): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`nothing answers at ${url}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs `cmd` to completion: its output (stdout and stderr together, trimmed), or an error with it
 * on a non-zero exit.
 */
export function exec(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`${cmd}: exit ${code}: ${out}`)),
    );
  });
}

/** `node args...` to completion (see `exec`). */
export function runNode(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<string> {
  return exec(process.execPath, args, { env, ...(cwd === undefined ? {} : { cwd }) });
}

/** `node args...` with its stderr passed through: its stdout, trimmed. */
export function runNodeQuiet(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`${args.join(' ')}: exit ${code}`)),
    );
  });
}

/** Runs `cmd` with `input` on its stdin: its stdout, or an error with its stderr. */
export function runWithInput(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: ${err}`)),
    );
    child.stdin.end(opts.input ?? '');
  });
}

/** Servers a benchmark started (`node args...`, output inherited), stopped together at the end. */
export const children: ChildProcess[] = [];

export function startNode(args: string[], env?: NodeJS.ProcessEnv): ChildProcess {
  const p = spawn(process.execPath, args, { env: env ?? process.env, stdio: 'inherit' });
  children.push(p);
  return p;
}

/** A PUT of the whole of `file` (`bytes` long) to `target`, expecting status `ok`; seconds. */
export function putFile(
  target: URL,
  file: string,
  bytes: number,
  headers: Record<string, string> = {},
  ok = 200,
): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise<number>((resolve, reject) => {
    const req = http.request(
      target,
      { method: 'PUT', headers: { 'content-length': String(bytes), ...headers } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          res.statusCode === ok
            ? resolve(Number(process.hrtime.bigint() - start) / 1e9)
            : reject(new Error(`PUT ${target.pathname}: ${res.statusCode} ${body}`)),
        );
      },
    );
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
  });
}

/**
 * An artifact as the v4 client's plain upload makes it, for job `runId` of repository `repoId`:
 * CreateArtifact, one PUT of `file` to its signed URL, FinalizeArtifact; seconds.
 */
export async function uploadArtifact(
  url: string,
  secretKey: string,
  repoId: number,
  runId: number,
  file: string,
  bytes: number,
): Promise<number> {
  const job = mintRuntimeToken({ secretKey, repoId, runId, jobId: runId });
  const twirp = async (method: string, body: object) => {
    const r = await fetch(`${url}/twirp/github.actions.results.api.v1.ArtifactService/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${job}` },
      body: JSON.stringify({
        workflow_run_backend_id: String(runId),
        workflow_job_run_backend_id: String(runId),
        ...body,
      }),
    });
    return (await r.json()) as Record<string, string | boolean>;
  };
  const start = process.hrtime.bigint();
  const created = await twirp('CreateArtifact', { name: 'plain', version: 4 });
  await putFile(new URL(created['signed_upload_url'] as string), file, bytes, {}, 201);
  const done = await twirp('FinalizeArtifact', { name: 'plain', size: String(bytes) });
  if (done['ok'] !== true) throw new Error(`artifact not finalized: ${JSON.stringify(done)}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Migrates the database of `env` and makes the account `alice` (an administrator when asked) with the CLI. */
export function createAlice(cli: string, env: NodeJS.ProcessEnv, admin = false): Promise<string> {
  const args = ['admin', 'user', 'create', '--username', 'alice', '--password', 'password-1'];
  return runNodeQuiet([cli, ...args, '--email', 'a@example.com', ...(admin ? ['--admin'] : [])], env);
}
