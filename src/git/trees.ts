// Trees and blobs: directory listings, the entries along a path, streamed blobs and archives (with
// a peek at their first bytes), the last commit of each entry, submodule URLs and blame.
import { LRUCache } from 'lru-cache';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { git, gitEnv } from './git.js';
import { LITERAL, objectInfo, rfc3339 } from './data.js';

export interface TreeEntry {
  /** Octal mode as git prints it: 100644, 100755, 120000, 040000, 160000. */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  oid: string;
  /** Bytes of a blob; 0 for trees and submodules. */
  size: number;
  /** Path from the root of the tree listed. */
  path: string;
}

function parseLsTree(out: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const rec of out.toString('utf8').split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode, type, oid, size] = rec.slice(0, tab).split(/ +/);
    entries.push({
      mode: mode!,
      type: type as TreeEntry['type'],
      oid: oid!,
      size: size === '-' || size === undefined ? 0 : Number(size),
      path: rec.slice(tab + 1),
    });
  }
  return entries;
}

/** The entries of the tree-ish `oid` at `dirPath` ('' for the root), recursively when asked. */
export async function listTree(
  dir: string,
  oid: string,
  dirPath = '',
  recursive = false,
): Promise<TreeEntry[]> {
  const args = ['ls-tree', '-l', '-z'];
  if (recursive) args.push('-r', '-t');
  args.push('--end-of-options', oid);
  if (dirPath) args.push('--', `${dirPath}/`);
  return parseLsTree((await git(args, { gitDir: dir, env: LITERAL })).stdout);
}

/**
 * The entry at `p` in commit (or tree) `oid`; for '' the root tree itself. Undefined when there
 * is nothing at that path.
 */
export async function entryAt(dir: string, oid: string, p: string): Promise<TreeEntry | undefined> {
  if (p === '') {
    const info = await objectInfo(dir, `${oid}^{tree}`);
    return info ? { mode: '040000', type: 'tree', oid: info.oid, size: 0, path: '' } : undefined;
  }
  const out = await git(['ls-tree', '-l', '-z', '--end-of-options', oid, '--', p], {
    gitDir: dir,
    env: LITERAL,
  });
  return parseLsTree(out.stdout).find((e) => e.path === p);
}

/**
 * The entries at `p` and at each of its leading directories that exist in commit `oid`, by path,
 * in one `git ls-tree -t`.
 */
export async function entriesAlong(dir: string, oid: string, p: string): Promise<Map<string, TreeEntry>> {
  const parts = p.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  const out = await git(['ls-tree', '-t', '-l', '-z', '--end-of-options', oid, '--', ...prefixes], {
    gitDir: dir,
    env: LITERAL,
  });
  return new Map(parseLsTree(out.stdout).map((e) => [e.path, e]));
}

/** A tree (or the tree of a commit or tag) by object id: its full id, or undefined. */
export async function resolveTree(dir: string, oid: string): Promise<string | undefined> {
  return (await objectInfo(dir, `${oid}^{tree}`))?.oid;
}

/** A running git process whose output is streamed to the client. */
export interface GitStream {
  stdout: Readable;
  /** Ends the process (when the client goes away). */
  kill(): void;
  /** Resolves with the exit code once the process has ended. */
  done: Promise<number | null>;
}

function spawnGit(dir: string, args: string[]): GitStream {
  const child = spawn('git', ['--git-dir', dir, ...args], {
    env: gitEnv(LITERAL),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.resume();
  const done = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', () => resolve(null));
  });
  return {
    stdout: child.stdout,
    kill: () => {
      if (child.exitCode === null && !child.killed) child.kill();
    },
    done,
  };
}

/** Streams the content of a blob. */
export function streamBlob(dir: string, oid: string): GitStream {
  return spawnGit(dir, ['cat-file', 'blob', oid]);
}

export type ArchiveFormat = 'zip' | 'tar.gz';

/** Streams `git archive` of a commit, every path under `prefix/`. */
export function streamArchive(dir: string, oid: string, format: ArchiveFormat, prefix: string): GitStream {
  return spawnGit(dir, ['archive', `--format=${format}`, `--prefix=${prefix}/`, '--end-of-options', oid]);
}

/**
 * Reads the first `n` bytes of a stream (fewer when it ends sooner) and returns them with a stream
 * of the whole content (those bytes, then the rest), without buffering more than the head.
 */
export async function peek(stream: Readable, n: number): Promise<{ head: Buffer; whole: Readable }> {
  const head = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let len = 0;
    const finish = () => {
      stream.off('data', onData);
      stream.off('end', finish);
      stream.off('error', reject);
      stream.pause();
      resolve(Buffer.concat(chunks));
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      len += c.length;
      if (len >= n) finish();
    };
    stream.on('data', onData);
    stream.once('end', finish);
    stream.once('error', reject);
  });
  const whole = Readable.from(
    (async function* () {
      if (head.length) yield head;
      if (!stream.readableEnded) for await (const chunk of stream) yield chunk as Buffer;
    })(),
    { objectMode: false },
  );
  return { head, whole };
}

/**
 * For each entry name directly under `dirPath` in `names`, the newest commit (from `from` back)
 * that changed it, in one streamed `git log` that stops once all are found.
 */
export async function lastCommits(
  dir: string,
  from: string,
  dirPath: string,
  names: string[],
): Promise<Map<string, { oid: string; date: string }>> {
  // History below a commit never changes: what was found from `from` stays true.
  const key = `${dir}\0${from}\0${dirPath}`;
  const known = /^[0-9a-f]{40,64}$/.test(from) ? lastCommitCache.get(key) : undefined;
  if (known && names.every((n) => known.has(n))) {
    return new Map(names.map((n) => [n, known.get(n)!]));
  }
  const found = await walkLastCommits(dir, from, dirPath, names);
  if (/^[0-9a-f]{40,64}$/.test(from)) lastCommitCache.set(key, new Map([...(known ?? []), ...found]));
  return found;
}

/** The last commits of directories' entries by (repository, commit, directory): see lastCommits. */
const lastCommitCache = new LRUCache<string, Map<string, { oid: string; date: string }>>({
  maxSize: 200_000,
  sizeCalculation: (m) => m.size + 1,
});

async function walkLastCommits(
  dir: string,
  from: string,
  dirPath: string,
  names: string[],
): Promise<Map<string, { oid: string; date: string }>> {
  const found = new Map<string, { oid: string; date: string }>();
  const wanted = new Set(names);
  if (wanted.size === 0) return found;
  const prefix = dirPath ? `${dirPath}/` : '';
  const args = [
    'log',
    '--format=%x1e%H %cI',
    '--name-only',
    '-z',
    '--no-renames',
    '--end-of-options',
    from,
    '--',
  ];
  if (dirPath) args.push(dirPath);
  const proc = spawnGit(dir, args);
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let current: { oid: string; date: string } | undefined;
  const take = (token: string) => {
    let t = token;
    const rs = t.lastIndexOf('\x1e');
    if (rs >= 0) {
      const [oid, date] = t.slice(rs + 1).split(' ');
      current = { oid: oid!, date: rfc3339(date!) };
      return;
    }
    t = t.replace(/^\n/, '');
    if (!current || !t.startsWith(prefix)) return;
    const rest = t.slice(prefix.length);
    const slash = rest.indexOf('/');
    const name = slash < 0 ? rest : rest.slice(0, slash);
    if (wanted.has(name) && !found.has(name)) found.set(name, current);
  };
  try {
    for await (const chunk of proc.stdout) {
      pending += decoder.write(chunk as Buffer);
      const parts = pending.split('\0');
      pending = parts.pop()!;
      for (const p of parts) take(p);
      if (found.size === wanted.size) break;
    }
    if (found.size < wanted.size && pending) take(pending);
  } finally {
    proc.kill();
  }
  return found;
}

/** The newest commit from `from` back that changed `p`. */
export async function lastCommitOf(
  dir: string,
  from: string,
  p: string,
): Promise<{ oid: string; date: string } | undefined> {
  const args = ['log', '-1', '--format=%H %cI', '--end-of-options', from, '--'];
  if (p) args.push(p);
  const out = (await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8').trim();
  if (!out) return undefined;
  const [oid, date] = out.split(' ');
  return { oid: oid!, date: rfc3339(date!) };
}

/** Submodule URLs by path from the commit's .gitmodules (empty when there is none). */
export async function submoduleUrls(dir: string, commit: string): Promise<Map<string, string>> {
  const out = await git(
    ['config', '-z', '--blob', `${commit}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.(path|url)$'],
    { gitDir: dir, okCodes: [1, 128] },
  );
  const byName = new Map<string, { path?: string; url?: string }>();
  if (out.code !== 0) return new Map();
  for (const rec of out.stdout.toString('utf8').split('\0')) {
    const nl = rec.indexOf('\n');
    if (nl < 0) continue;
    const key = rec.slice(0, nl);
    const value = rec.slice(nl + 1);
    const m = /^submodule\.(.*)\.(path|url)$/.exec(key);
    if (!m) continue;
    const s = byName.get(m[1]!) ?? {};
    s[m[2] as 'path' | 'url'] = value;
    byName.set(m[1]!, s);
  }
  const result = new Map<string, string>();
  for (const s of byName.values()) if (s.path && s.url) result.set(s.path, s.url);
  return result;
}

/** One run of lines that a commit last changed, as `git blame` reports it. */
export interface BlameRun {
  oid: string;
  summary: string;
  author: string;
  /** Author time, Unix seconds. */
  time: number;
  /** First line of the run (1-based) in the file as it is at the blamed commit. */
  start: number;
  count: number;
}

/** Who last changed each line of `p` at commit `oid`: runs of lines in file order. */
export async function blame(dir: string, oid: string, p: string): Promise<BlameRun[]> {
  // blame takes no --end-of-options: the commit is checked to be an object id instead.
  if (!/^[0-9a-f]{40,64}$/.test(oid)) throw new Error(`blame needs a commit id, not ${oid}`);
  const out = await git(['blame', '--porcelain', oid, '--', p], {
    gitDir: dir,
    env: LITERAL,
  });
  const runs: BlameRun[] = [];
  const info = new Map<string, { summary: string; author: string; time: number }>();
  let cur: BlameRun | undefined;
  for (const line of out.stdout.toString('utf8').split('\n')) {
    const head = /^([0-9a-f]{40,64}) \d+ (\d+)(?: (\d+))?$/.exec(line);
    if (head) {
      const [, sha, final, count] = head;
      if (count !== undefined) {
        const known = info.get(sha!) ?? { summary: '', author: '', time: 0 };
        info.set(sha!, known);
        cur = { oid: sha!, start: Number(final), count: Number(count), ...known };
        runs.push(cur);
      }
      continue;
    }
    if (!cur) continue;
    const meta = info.get(cur.oid)!;
    if (line.startsWith('author ')) meta.author = cur.author = line.slice(7);
    else if (line.startsWith('author-time ')) meta.time = cur.time = Number(line.slice(12));
    else if (line.startsWith('summary ')) meta.summary = cur.summary = line.slice(8);
  }
  return runs;
}
