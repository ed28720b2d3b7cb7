// Running the system `git`. Arguments are always passed as an array (never through a shell), and
// every path comes from Anvil (repository ids), never from names in a URL.
import { spawn, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  /** Repository (bare) directory: passed as --git-dir. */
  gitDir?: string;
  cwd?: string;
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not errors (for example 1 for `merge-base --is-ancestor`). */
  okCodes?: number[];
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** Environment for every git process: no prompts, no user or system configuration leaking in. */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
}

export function git(args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const full = opts.gitDir ? ['--git-dir', opts.gitDir, ...args] : args;
  const spawnOpts: SpawnOptions = { cwd: opts.cwd, env: gitEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] };
  return new Promise((resolve, reject) => {
    const child = spawn('git', full, spawnOpts);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      const result = { stdout: Buffer.concat(out), stderr, code: code ?? -1 };
      if (code === 0 || (code !== null && opts.okCodes?.includes(code))) resolve(result);
      else reject(new GitError(`git ${args[0]} failed (${code}): ${stderr.trim()}`, code, stderr));
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.input ?? '');
  });
}

/** `git ...` and its standard output as trimmed text. */
export async function gitText(args: string[], opts: GitOptions = {}): Promise<string> {
  return (await git(args, opts)).stdout.toString('utf8').trim();
}

export const ZERO_OID = '0000000000000000000000000000000000000000';

/** Creates a bare repository with `branch` as its HEAD and Anvil's hooks installed. */
export async function initBare(dir: string, branch: string): Promise<void> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await git(['init', '--bare', '--quiet', `--initial-branch=${branch}`, dir]);
  await git(['config', 'uploadpack.allowFilter', 'true'], { gitDir: dir });
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], { gitDir: dir });
  await git(['config', 'receive.denyNonFastForwards', 'false'], { gitDir: dir });
  installHooks(dir);
}

/**
 * The pre-receive hook hands the pushed ref updates to Anvil (which checks branch protection and
 * remembers them for after the push). It does nothing when git runs outside Anvil.
 */
const PRE_RECEIVE = `#!/bin/sh
# Installed by Anvil: passes the pushed ref updates to Anvil for checking.
[ -n "$ANVIL_HOOK" ] || exit 0
eval "exec $ANVIL_HOOK pre-receive"
`;

/** Writes Anvil's hooks into a repository (again, when they differ from this version's). */
export function installHooks(dir: string): void {
  const hooks = path.join(dir, 'hooks');
  const file = path.join(hooks, 'pre-receive');
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === PRE_RECEIVE) return;
  fs.mkdirSync(hooks, { recursive: true });
  for (const f of fs.readdirSync(hooks)) if (f.endsWith('.sample')) fs.rmSync(path.join(hooks, f));
  fs.writeFileSync(file, PRE_RECEIVE, { mode: 0o755 });
}

/** Bytes of git objects (loose and packed) in a bare repository; LFS objects live elsewhere. */
export function objectsSize(dir: string): number {
  let total = 0;
  const walk = (p: string) => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) {
      const full = path.join(p, e.name);
      if (e.isDirectory()) {
        if (!e.name.startsWith('incoming-') && !e.name.startsWith('tmp_objdir')) walk(full);
      } else if (e.isFile()) {
        total += fs.statSync(full).size;
      }
    }
  };
  const objects = path.join(dir, 'objects');
  if (fs.existsSync(objects)) walk(objects);
  return total;
}

export interface Ref {
  name: string;
  oid: string;
}

export async function listRefs(dir: string, prefix = 'refs/'): Promise<Ref[]> {
  const text = await gitText(['for-each-ref', '--format=%(objectname) %(refname)', prefix], { gitDir: dir });
  if (!text) return [];
  return text.split('\n').map((l) => {
    const i = l.indexOf(' ');
    return { oid: l.slice(0, i), name: l.slice(i + 1) };
  });
}

export interface CommitInfo {
  oid: string;
  message: string;
  authorName: string;
  authorEmail: string;
  authorTime: number;
  committerName: string;
  committerEmail: string;
  committerTime: number;
  parents: string[];
  tree: string;
}

const COMMIT_FORMAT = ['%H', '%T', '%P', '%an', '%ae', '%at', '%cn', '%ce', '%ct', '%B'].join('%x00');

function parseCommit(record: string): CommitInfo {
  const [oid, tree, parents, an, ae, at, cn, ce, ct, ...msg] = record.split('\0');
  return {
    oid: oid!,
    tree: tree!,
    parents: parents ? parents.split(' ') : [],
    authorName: an!,
    authorEmail: ae!,
    authorTime: Number(at),
    committerName: cn!,
    committerEmail: ce!,
    committerTime: Number(ct),
    message: msg.join('\0'),
  };
}

/** Commits by revision arguments, newest first. */
export async function logCommits(
  dir: string,
  revArgs: string[],
  env?: NodeJS.ProcessEnv,
): Promise<CommitInfo[]> {
  const out = await git(['log', `--format=${COMMIT_FORMAT}%x1e`, ...revArgs, '--'], { gitDir: dir, env });
  return out.stdout
    .toString('utf8')
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.length > 0)
    .map(parseCommit);
}

export async function getCommit(
  dir: string,
  rev: string,
  env?: NodeJS.ProcessEnv,
): Promise<CommitInfo | undefined> {
  const r = await git(['log', '-1', `--format=${COMMIT_FORMAT}`, rev, '--'], {
    gitDir: dir,
    env,
    okCodes: [128],
  });
  if (r.code !== 0) return undefined;
  return parseCommit(r.stdout.toString('utf8').replace(/\n$/, ''));
}

/** Whether `ancestor` is an ancestor of (or equal to) `descendant`. */
/** The best common ancestor of two commits; '' when they share none. */
export async function mergeBase(dir: string, a: string, b: string): Promise<string> {
  const r = await git(['merge-base', '--end-of-options', a, b], { gitDir: dir, okCodes: [1] });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : '';
}

export async function isAncestor(
  dir: string,
  ancestor: string,
  descendant: string,
  env?: NodeJS.ProcessEnv,
): Promise<boolean> {
  const r = await git(['merge-base', '--is-ancestor', ancestor, descendant], {
    gitDir: dir,
    env,
    okCodes: [1],
  });
  return r.code === 0;
}
