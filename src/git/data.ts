// The git data layer: reads commits (with their changed files and line counts), trees, blobs and
// refs of a bare repository, and writes to it without a work tree (hash-object, a temporary index,
// commit-tree, update-ref with the expected old value). Nothing here knows about HTTP or the
// database. Every revision handed to git is an object id resolved here first, or a full ref name
// built by Anvil from a validated name; paths go through pathspecs taken literally; nothing from a
// URL is ever an option or reaches a shell.
import { LRUCache } from 'lru-cache';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { invalidField } from '../errors.js';
import { git, gitEnv, ZERO_OID } from './git.js';

export { ZERO_OID };

/** The object id of the empty tree (SHA-1). */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Pathspecs are literal: no `:(glob)` magic or wildcards from user input. */
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

const FULL_OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const HEX = /^[0-9a-f]{4,64}$/i;

// Names and paths

/**
 * Whether `name` can be a branch, tag or commit name from a request: what `git check-ref-format`
 * accepts for a (possibly one-level) ref, and never something git would read as an option.
 */
export function isValidRefName(name: string): boolean {
  if (!name || name.length > 1024 || name === '@') return false;
  if (name.startsWith('-') || name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  // eslint-disable-next-line no-control-regex -- control characters are what git refuses
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  if (name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  return !name.split('/').some((c) => c.startsWith('.') || c.endsWith('.lock'));
}

/** Throws a 422 naming `field` when `name` is not a usable ref or commit name. */
export function checkRefName(name: string, field = 'ref'): void {
  if (!isValidRefName(name)) throw invalidField(field, `invalid ref or commit name [name: ${name}]`);
}

/**
 * A path inside a repository as given in a URL or a body: surrounding slashes are dropped; an
 * empty, `.`, `..` or `.git` component (or a NUL byte) is refused with a 422. '' is the root.
 */
export function cleanTreePath(p: string, field = 'filepath'): string {
  const trimmed = p.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  const parts = trimmed.split('/');
  for (const part of parts) {
    if (
      part === '' ||
      part === '.' ||
      part === '..' ||
      part.toLowerCase() === '.git' ||
      part.includes('\0')
    ) {
      throw invalidField(field, `path contains a malformed path component [path: ${p}]`);
    }
  }
  return parts.join('/');
}

// Ref resolution

export type RefKind = 'branch' | 'tag' | 'commit';

export interface ResolvedRef {
  /** The commit the ref points to (tags peeled). */
  oid: string;
  kind: RefKind;
  /** The short name (branch or tag name), or the full commit id for a commit. */
  name: string;
}

/**
 * Resolves the first of `candidates` (full ref names or object names, already validated) that
 * names a commit, in one `git cat-file --batch-check` whose input comes on stdin.
 */
async function firstCommit(
  dir: string,
  candidates: string[],
): Promise<{ index: number; oid: string } | null> {
  if (candidates.length === 0) return null;
  const input = candidates.map((c) => `${c}^{commit}`).join('\n') + '\n';
  const out = await git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { gitDir: dir, input });
  const lines = out.stdout.toString('utf8').split('\n');
  for (let i = 0; i < candidates.length; i++) {
    const [oid, type] = (lines[i] ?? '').split(' ');
    if (type === 'commit' && oid && FULL_OID.test(oid)) return { index: i, oid };
  }
  return null;
}

function candidatesFor(name: string): Array<{ ref: string; kind: RefKind; name: string }> {
  if (name.startsWith('refs/heads/')) return [{ ref: name, kind: 'branch', name: name.slice(11) }];
  if (name.startsWith('refs/tags/')) return [{ ref: name, kind: 'tag', name: name.slice(10) }];
  const out: Array<{ ref: string; kind: RefKind; name: string }> = [
    { ref: `refs/heads/${name}`, kind: 'branch', name },
    { ref: `refs/tags/${name}`, kind: 'tag', name },
  ];
  if (HEX.test(name)) out.push({ ref: name.toLowerCase(), kind: 'commit', name });
  return out;
}

/**
 * The commit a branch, tag or commit id (full or abbreviated) names, branches first as Forgejo
 * does; undefined when nothing matches. The name must have passed `checkRefName`.
 */
export async function resolveRef(dir: string, name: string): Promise<ResolvedRef | undefined> {
  const cands = candidatesFor(name);
  const hit = await firstCommit(
    dir,
    cands.map((c) => c.ref),
  );
  if (!hit) return undefined;
  const c = cands[hit.index]!;
  return { oid: hit.oid, kind: c.kind, name: c.kind === 'commit' ? hit.oid : c.name };
}

/**
 * For /raw/{ref}/{path} without ?ref= (Forgejo's legacy form): the shortest leading part of `p`
 * that is a branch, else a tag, else a full commit id as the first segment; the rest is the path.
 */
export async function resolveRefPrefix(
  dir: string,
  p: string,
): Promise<{ ref: ResolvedRef; rest: string } | undefined> {
  const parts = p.split('/');
  const cands: Array<{ ref: string; kind: RefKind; name: string; rest: string }> = [];
  for (const kind of ['branch', 'tag'] as const) {
    for (let i = 1; i <= parts.length; i++) {
      const name = parts.slice(0, i).join('/');
      if (!isValidRefName(name)) continue;
      cands.push({
        ref: `refs/${kind === 'branch' ? 'heads' : 'tags'}/${name}`,
        kind,
        name,
        rest: parts.slice(i).join('/'),
      });
    }
  }
  if (parts[0] && FULL_OID.test(parts[0])) {
    cands.push({ ref: parts[0], kind: 'commit', name: parts[0], rest: parts.slice(1).join('/') });
  }
  const hit = await firstCommit(
    dir,
    cands.map((c) => c.ref),
  );
  if (!hit) return undefined;
  const c = cands[hit.index]!;
  return { ref: { oid: hit.oid, kind: c.kind, name: c.kind === 'commit' ? hit.oid : c.name }, rest: c.rest };
}

/** The type and size of an object, or undefined when it does not exist. `oid` must be hexadecimal. */
export async function objectInfo(
  dir: string,
  oid: string,
): Promise<{ oid: string; type: string; size: number } | undefined> {
  const out = await git(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], {
    gitDir: dir,
    input: `${oid}\n`,
  });
  const [full, type, size] = out.stdout.toString('utf8').trim().split(' ');
  if (!full || !type || size === undefined || !FULL_OID.test(full)) return undefined;
  return { oid: full, type, size: Number(size) };
}

/** Whether `s` may be an object id (full or abbreviated hexadecimal). */
export const isHexOid = (s: string): boolean => HEX.test(s);

// Commits

export interface Signature {
  name: string;
  email: string;
  /** RFC 3339 in the signature's own zone ('Z' for UTC), as Forgejo prints it. */
  date: string;
  unix: number;
}

export interface FileChange {
  filename: string;
  status: 'added' | 'modified' | 'removed';
}

export interface CommitData {
  oid: string;
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
  /** Files the commit changed against its first parent (all files for a root commit). */
  files?: FileChange[];
  /** Lines added and deleted against its first parent (binary files count none). */
  stats?: { additions: number; deletions: number };
}

/** RFC 3339 as Go's time.RFC3339 prints it: '+00:00' becomes 'Z'. */
const rfc3339 = (iso: string) => iso.replace(/\+00:00$/, 'Z');

const LOG_FORMAT =
  '%x1e' +
  ['%H', '%T', '%P', '%an', '%ae', '%aI', '%at', '%cn', '%ce', '%cI', '%ct'].join('%x00') +
  '%x00%B%x1f';

function parseHeader(text: string): CommitData {
  const f = text.split('\0');
  const [oid, tree, parents, an, ae, ad, at, cn, ce, cd, ct] = f;
  return {
    oid: oid!,
    tree: tree!,
    parents: parents ? parents.split(' ') : [],
    author: { name: an!, email: ae!, date: rfc3339(ad!), unix: Number(at) },
    committer: { name: cn!, email: ce!, date: rfc3339(cd!), unix: Number(ct) },
    message: f.slice(11).join('\0'),
  };
}

const STATUS: Record<string, FileChange['status']> = {
  A: 'added',
  D: 'removed',
  M: 'modified',
  T: 'modified',
};

/**
 * The diff part of one `git log -z --raw --numstat` record: `--raw` gives each file's status
 * (a rename counts as the old path removed and the new one added, as Forgejo lists it without
 * rename detection), `--numstat` the lines added and deleted ('-' for binary files).
 */
function parseDiff(text: string, c: CommitData): void {
  const tokens = text.split('\0');
  const files: FileChange[] = [];
  let additions = 0;
  let deletions = 0;
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!.replace(/^\n+/, '');
    if (t === '') {
      i++;
      continue;
    }
    if (t.startsWith(':')) {
      const letter = t.slice(t.lastIndexOf(' ') + 1).charAt(0);
      if (letter === 'R' || letter === 'C') {
        const from = tokens[i + 1]!;
        const to = tokens[i + 2]!;
        if (letter === 'R') files.push({ filename: from, status: 'removed' });
        files.push({ filename: to, status: 'added' });
        i += 3;
      } else {
        files.push({ filename: tokens[i + 1]!, status: STATUS[letter] ?? 'modified' });
        i += 2;
      }
    } else {
      const tab1 = t.indexOf('\t');
      const tab2 = t.indexOf('\t', tab1 + 1);
      const a = t.slice(0, tab1);
      const d = t.slice(tab1 + 1, tab2);
      if (a !== '-') additions += Number(a) || 0;
      if (d !== '-') deletions += Number(d) || 0;
      // A rename's numstat line has an empty path followed by the old and new paths.
      i += t.slice(tab2 + 1) === '' ? 3 : 1;
    }
  }
  files.sort((x, y) => (x.filename < y.filename ? -1 : x.filename > y.filename ? 1 : 0));
  c.files = files;
  c.stats = { additions, deletions };
}

export interface LogOptions {
  /** Commit to start from (an object id). */
  from: string;
  /** Commit whose history is left out (an object id). */
  not?: string | undefined;
  /** Only commits touching this path. */
  path?: string | undefined;
  skip?: number;
  limit?: number;
  /** Also compute each commit's changed files and line counts (in the same git process). */
  diff?: boolean;
}

/** One page of history, newest first, in one `git log` process (with the diffs when asked). */
export async function log(dir: string, o: LogOptions): Promise<CommitData[]> {
  const args = ['log', `--format=${LOG_FORMAT}`, '-z', '--no-color', '--no-show-signature'];
  if (o.diff) {
    args.push('--raw', '--numstat', '-M', '--diff-merges=first-parent', '--no-ext-diff', '--no-textconv');
  }
  if (o.skip) args.push(`--skip=${o.skip}`);
  if (o.limit !== undefined) args.push(`--max-count=${o.limit}`);
  args.push('--end-of-options', o.from);
  if (o.not) args.push(`^${o.not}`);
  args.push('--');
  if (o.path) args.push(o.path);
  const out = await git(args, { gitDir: dir, env: LITERAL });
  const commits: CommitData[] = [];
  for (const rec of out.stdout.toString('utf8').split('\x1e')) {
    const end = rec.indexOf('\x1f');
    if (end < 0) continue;
    const c = parseHeader(rec.slice(0, end));
    if (o.diff) parseDiff(rec.slice(end + 1), c);
    commits.push(c);
  }
  return commits;
}

/** One commit (an object id), with its changed files and line counts when asked. */
export async function getCommit(dir: string, oid: string, diff = true): Promise<CommitData | undefined> {
  const [c] = await log(dir, { from: oid, limit: 1, diff });
  return c;
}

/** How many commits `log` would list in all. */
export async function countCommits(
  dir: string,
  o: Pick<LogOptions, 'from' | 'not' | 'path'>,
): Promise<number> {
  const args = ['rev-list', '--count', '--end-of-options', o.from];
  if (o.not) args.push(`^${o.not}`);
  args.push('--');
  if (o.path) args.push(o.path);
  return Number((await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8').trim());
}

// Refs

export interface RefCommit {
  /** Full ref name. */
  ref: string;
  commit: CommitData;
}

const REF_COMMIT_FORMAT =
  [
    '%(refname)',
    '%(objectname)',
    '%(tree)',
    '%(parent)',
    '%(authorname)',
    '%(authoremail:trim)',
    '%(authordate:iso-strict)',
    '%(authordate:unix)',
    '%(committername)',
    '%(committeremail:trim)',
    '%(committerdate:iso-strict)',
    '%(committerdate:unix)',
    '%(contents)',
  ].join('%00') + '%1e';

/**
 * Branches with their head commits, in one `git for-each-ref`: all of them (sorted by commit date,
 * newest first, then by name, as Forgejo lists them) or the one named `name`.
 */
export async function branches(dir: string, name?: string): Promise<RefCommit[]> {
  const args = ['for-each-ref', `--format=${REF_COMMIT_FORMAT}`, '--sort=refname', '--sort=-committerdate'];
  args.push(name === undefined ? 'refs/heads/' : `refs/heads/${name}`);
  const out = await git(args, { gitDir: dir });
  const result: RefCommit[] = [];
  for (const rec of out.stdout.toString('utf8').split('\x1e\n')) {
    if (!rec) continue;
    const f = rec.split('\0');
    const [ref, oid, tree, parents, an, ae, ad, at, cn, ce, cd, ct] = f;
    if (name !== undefined && ref !== `refs/heads/${name}`) continue;
    result.push({
      ref: ref!,
      commit: {
        oid: oid!,
        tree: tree!,
        parents: parents ? parents.split(' ') : [],
        author: { name: an!, email: ae!, date: rfc3339(ad!), unix: Number(at) },
        committer: { name: cn!, email: ce!, date: rfc3339(cd!), unix: Number(ct) },
        message: f.slice(12).join('\0'),
      },
    });
  }
  return result;
}

export interface TagData {
  name: string;
  /** The tag object for an annotated tag, the commit for a lightweight one. */
  id: string;
  annotated: boolean;
  /** The commit the tag points to. */
  commit: string;
  /** The tag's message (annotated) or its commit's message (lightweight). */
  message: string;
  /** The tagger's date (annotated) or the commit's committer date (lightweight). */
  created: string;
  tagger?: Signature;
}

const TAG_FORMAT =
  [
    '%(refname)',
    '%(objecttype)',
    '%(objectname)',
    '%(*objecttype)',
    '%(*objectname)',
    '%(creatordate:iso-strict)',
    '%(creatordate:unix)',
    '%(taggername)',
    '%(taggeremail:trim)',
    '%(contents:subject)',
    '%(contents:body)',
  ].join('%00') + '%1e';

function parseTag(rec: string): TagData | undefined {
  const [ref, type, oid, peeledType, peeled, cd, cu, tn, te, subject, ...body] = rec.split('\0');
  const annotated = type === 'tag';
  const target = annotated ? peeled : oid;
  if (!ref || !target || (annotated ? peeledType : type) !== 'commit') return undefined;
  const bodyText = body.join('\0');
  const message = bodyText ? `${subject}\n\n${bodyText}` : `${subject}\n`;
  const created = rfc3339(cd!);
  return {
    name: ref.slice(10),
    id: oid!,
    annotated,
    commit: target,
    message,
    created,
    ...(annotated ? { tagger: { name: tn!, email: te!, date: created, unix: Number(cu) } } : {}),
  };
}

/** Tags pointing at commits, newest first, or the one named `name`, in one `git for-each-ref`. */
export async function tags(dir: string, name?: string): Promise<TagData[]> {
  const args = ['for-each-ref', `--format=${TAG_FORMAT}`, '--sort=refname', '--sort=-creatordate'];
  args.push(name === undefined ? 'refs/tags/' : `refs/tags/${name}`);
  const out = await git(args, { gitDir: dir });
  const result: TagData[] = [];
  for (const rec of out.stdout.toString('utf8').split('\x1e\n')) {
    if (!rec) continue;
    const t = parseTag(rec);
    if (t && (name === undefined || t.name === name)) result.push(t);
  }
  return result;
}

export interface AnnotatedTagData {
  oid: string;
  name: string;
  message: string;
  tagger: Signature;
  object: { oid: string; type: string };
}

/** The annotated tag object `oid` (a full or abbreviated id), or undefined when it is not one. */
export async function annotatedTag(dir: string, oid: string): Promise<AnnotatedTagData | undefined> {
  const info = await objectInfo(dir, oid);
  if (!info || info.type !== 'tag') return undefined;
  const raw = (await git(['cat-file', 'tag', info.oid], { gitDir: dir })).stdout.toString('utf8');
  const split = raw.indexOf('\n\n');
  const headers = split < 0 ? raw : raw.slice(0, split);
  let message = split < 0 ? '' : raw.slice(split + 2);
  const sig = message.indexOf('-----BEGIN ');
  if (sig >= 0) message = message.slice(0, sig);
  const h = new Map<string, string>();
  for (const line of headers.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0 && !h.has(line.slice(0, sp))) h.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return {
    oid: info.oid,
    name: h.get('tag') ?? '',
    message,
    tagger: parseIdent(h.get('tagger') ?? ''),
    object: { oid: h.get('object') ?? '', type: h.get('type') ?? '' },
  };
}

/** "Name <email> 1700000000 +0200" as a signature. */
function parseIdent(s: string): Signature {
  const m = /^(.*?) ?<([^>]*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(s);
  if (!m) return { name: s, email: '', date: new Date(0).toISOString().slice(0, 19) + 'Z', unix: 0 };
  const unix = Number(m[3]);
  const offsetMin = (m[4] === '-' ? -1 : 1) * (Number(m[5]) * 60 + Number(m[6]));
  const local = new Date((unix + offsetMin * 60) * 1000).toISOString().slice(0, 19);
  const zone = offsetMin === 0 ? 'Z' : `${m[4]}${m[5]}:${m[6]}`;
  return { name: m[1]!, email: m[2]!, date: local + zone, unix };
}

export interface RefEntry {
  ref: string;
  oid: string;
  type: string;
}

/** Every ref (or those whose name starts with `prefix`), sorted by name. */
export async function refs(dir: string, prefix = ''): Promise<RefEntry[]> {
  const out = await git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(objecttype)'], {
    gitDir: dir,
  });
  const result: RefEntry[] = [];
  for (const line of out.stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const [ref, oid, type] = line.split('\0');
    if (ref && ref.startsWith(prefix)) result.push({ ref, oid: oid!, type: type! });
  }
  return result;
}

/** Full names of the refs under refs/heads/ and refs/tags/. */
export async function branchAndTagNames(dir: string): Promise<Set<string>> {
  const out = await git(['for-each-ref', '--format=%(refname)', 'refs/heads/', 'refs/tags/'], {
    gitDir: dir,
  });
  return new Set(out.stdout.toString('utf8').split('\n').filter(Boolean));
}

/** Whether the repository has at least one branch. */
export async function hasBranches(dir: string): Promise<boolean> {
  const out = await git(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir: dir });
  return out.stdout.length > 0;
}

// Trees and blobs

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

/** The whole content of a blob (callers check its size first). */
export async function readBlob(dir: string, oid: string): Promise<Buffer> {
  return (await git(['cat-file', 'blob', oid], { gitDir: dir })).stdout;
}

/** The content of several small blobs in one `git cat-file --batch`. */
export async function readBlobs(dir: string, oids: string[]): Promise<Map<string, Buffer>> {
  const result = new Map<string, Buffer>();
  if (oids.length === 0) return result;
  const out = (await git(['cat-file', '--batch'], { gitDir: dir, input: oids.join('\n') + '\n' })).stdout;
  let pos = 0;
  while (pos < out.length) {
    const nl = out.indexOf(0x0a, pos);
    if (nl < 0) break;
    const [oid, type, size] = out.subarray(pos, nl).toString('utf8').split(' ');
    pos = nl + 1;
    if (type === 'missing' || size === undefined) continue;
    const n = Number(size);
    result.set(oid!, out.subarray(pos, pos + n));
    pos += n + 1;
  }
  return result;
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

/** A commit's unified diff against its first parent (`git show`), or its `git format-patch` mail. */
export async function diffText(dir: string, oid: string, patch: boolean): Promise<string> {
  const args = patch
    ? ['format-patch', '--stdout', '-1', '--no-signature', '--end-of-options', oid]
    : ['show', '--format=', '--patch', '--no-color', '--end-of-options', oid];
  return (await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8');
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

// Writing

export interface Ident {
  name: string;
  email: string;
  /** Unix seconds and zone, as git takes them ("1700000000 +0000"); now when absent. */
  date?: string | undefined;
}

/** Stores `content` as a blob; returns its id. */
export async function hashBlob(dir: string, content: Buffer): Promise<string> {
  return (await git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: content })).stdout
    .toString('utf8')
    .trim();
}

export type TreeChange = { path: string; mode: string; oid: string } | { path: string; remove: true };

/**
 * The tree `base` (or an empty one) with `changes` applied, written through a temporary index
 * file (GIT_INDEX_FILE): read-tree, update-index --index-info, write-tree.
 */
export async function writeTree(dir: string, base: string | null, changes: TreeChange[]): Promise<string> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-index-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    if (base) await git(['read-tree', base], { gitDir: dir, env });
    const input = changes
      .map((c) => ('remove' in c ? `0 ${ZERO_OID}\t${c.path}\0` : `${c.mode} ${c.oid}\t${c.path}\0`))
      .join('');
    await git(['update-index', '-z', '--index-info'], { gitDir: dir, env, input });
    return (await git(['write-tree'], { gitDir: dir, env })).stdout.toString('utf8').trim();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The tree `base` with the unified diff `patch` applied (`git apply --cached`, three-way where the
 * blobs allow, as Forgejo does) through a temporary index; `{ error }` when it does not apply.
 */
export async function applyPatch(
  dir: string,
  base: string,
  patch: string,
): Promise<{ tree: string } | { error: string }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-index-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    await git(['read-tree', base], { gitDir: dir, env });
    const args = ['apply', '--cached', '--recount', '--binary', '--3way', '-'];
    // An empty directory of our own as the work tree: --3way may write there, never elsewhere.
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    const r = await git(args, {
      gitDir: dir,
      cwd: work,
      env: { ...env, GIT_WORK_TREE: work },
      input: patch,
      okCodes: [1, 128],
    });
    if (r.code !== 0) return { error: r.stderr.trim().split('\n').filter(Boolean).pop() ?? 'patch failed' };
    return { tree: (await git(['write-tree'], { gitDir: dir, env })).stdout.toString('utf8').trim() };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function identEnv(author: Ident, committer: Ident): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
  if (author.date) env['GIT_AUTHOR_DATE'] = author.date;
  if (committer.date) env['GIT_COMMITTER_DATE'] = committer.date;
  return env;
}

/** A commit of `tree` with `parents`; returns its id. */
export async function commitTree(
  dir: string,
  tree: string,
  parents: string[],
  message: string,
  author: Ident,
  committer: Ident,
): Promise<string> {
  const args = ['commit-tree', ...parents.flatMap((p) => ['-p', p]), '-F', '-', tree];
  const input = message.endsWith('\n') ? message : `${message}\n`;
  return (await git(args, { gitDir: dir, env: identEnv(author, committer), input })).stdout
    .toString('utf8')
    .trim();
}

/** An annotated tag object named `name` on commit `target`; returns its id. */
export async function makeTag(
  dir: string,
  name: string,
  target: string,
  message: string,
  tagger: Ident,
): Promise<string> {
  const when = tagger.date ?? `${Math.floor(Date.now() / 1000)} +0000`;
  const body = message.endsWith('\n') ? message : `${message}\n`;
  const input = `object ${target}\ntype commit\ntag ${name}\ntagger ${tagger.name} <${tagger.email}> ${when}\n\n${body}`;
  return (await git(['mktag'], { gitDir: dir, input })).stdout.toString('utf8').trim();
}

/**
 * Moves `ref` (a full ref name) from `oldOid` (ZERO_OID: it must not exist) to `newOid`
 * (ZERO_OID: delete it), atomically; false when the ref was not at `oldOid`.
 */
export async function updateRef(dir: string, ref: string, oldOid: string, newOid: string): Promise<boolean> {
  const args = newOid === ZERO_OID ? ['update-ref', '-d', ref, oldOid] : ['update-ref', ref, newOid, oldOid];
  const r = await git(args, { gitDir: dir, okCodes: [1, 128] });
  return r.code === 0;
}

/**
 * Renames branch `from` (at `oid`) to `to` in one ref transaction, HEAD following when it named
 * `from`; false when `from` was not at `oid` or `to` could not be created.
 */
export async function renameBranchRef(dir: string, from: string, to: string, oid: string): Promise<boolean> {
  const input = `create refs/heads/${to} ${oid}\ndelete refs/heads/${from} ${oid}\n`;
  const r = await git(['update-ref', '--stdin'], { gitDir: dir, input, okCodes: [1, 128] });
  if (r.code !== 0) return false;
  const head = await git(['symbolic-ref', '--quiet', 'HEAD'], { gitDir: dir, okCodes: [1] });
  if (head.stdout.toString('utf8').trim() === `refs/heads/${from}`) {
    await git(['symbolic-ref', 'HEAD', `refs/heads/${to}`], { gitDir: dir });
  }
  return true;
}

// Notes

/** The ref git notes live under (git's default, as in Forgejo). */
export const NOTES_REF = 'refs/notes/commits';

/**
 * The note of commit `oid` and the commit of the notes ref that last wrote it (Forgejo's
 * GetNote); undefined when it has none.
 */
export async function readNote(
  dir: string,
  oid: string,
): Promise<{ message: Buffer; commit: string } | undefined> {
  const tip = await git(['rev-parse', '--verify', '--quiet', `${NOTES_REF}^{commit}`], {
    gitDir: dir,
    okCodes: [1],
  });
  if (tip.code !== 0) return undefined;
  const list = await git(['notes', `--ref=${NOTES_REF}`, 'list', oid], { gitDir: dir, okCodes: [1] });
  const blob = list.stdout.toString('utf8').trim();
  if (list.code !== 0 || !blob) return undefined;
  // The note's path in the notes tree (fanned out as aa/bbbb... in large trees).
  const tree = await git(['ls-tree', '-r', '-z', `${NOTES_REF}^{commit}`], { gitDir: dir });
  let notePath = oid;
  for (const rec of tree.stdout.toString('utf8').split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const p = rec.slice(tab + 1);
    if (p.replace(/\//g, '') === oid) notePath = p;
  }
  const last = await lastCommitOf(dir, NOTES_REF, notePath);
  return { message: await readBlob(dir, blob), commit: last?.oid ?? tip.stdout.toString('utf8').trim() };
}

/** Sets (replaces) the note of commit `oid`, written by `who`; an empty message removes it (git). */
export async function setNote(dir: string, oid: string, message: string, who: Ident): Promise<void> {
  await git(['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-F', '-', oid], {
    gitDir: dir,
    env: identEnv(who, who),
    input: message,
  });
}

/** Removes the note of commit `oid`; false when it had none. */
export async function removeNote(dir: string, oid: string, who: Ident): Promise<boolean> {
  const r = await git(['notes', `--ref=${NOTES_REF}`, 'remove', oid], {
    gitDir: dir,
    env: identEnv(who, who),
    okCodes: [1],
  });
  return r.code === 0;
}

/** The unified diff between two commits (`git diff from to`). */
export async function rangeDiff(dir: string, from: string, to: string): Promise<string> {
  const args = ['diff', '--no-color', '--no-ext-diff', '-M', '--end-of-options', from, to, '--'];
  return (await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8');
}

/** Several commits by id, in one git process (unknown ids are left out). */
export async function commitsByOids(dir: string, oids: string[]): Promise<Map<string, CommitData>> {
  const out = new Map<string, CommitData>();
  const wanted = [...new Set(oids)].filter((o) => /^[0-9a-f]{40,64}$/.test(o));
  if (wanted.length === 0) return out;
  const args = [
    'log',
    '--no-walk=unsorted',
    `--format=${LOG_FORMAT}`,
    '-z',
    '--no-color',
    '--no-show-signature',
  ];
  const r = await git([...args, '--end-of-options', ...wanted, '--'], {
    gitDir: dir,
    env: LITERAL,
    okCodes: [128],
  });
  if (r.code !== 0) {
    // An id that is not a commit spoils the batch: take them one by one.
    for (const oid of wanted) {
      const c = await getCommit(dir, oid, false);
      if (c) out.set(oid, c);
    }
    return out;
  }
  for (const rec of r.stdout.toString('utf8').split('\x1e')) {
    const end = rec.indexOf('\x1f');
    if (end < 0) continue;
    const c = parseHeader(rec.slice(0, end));
    out.set(c.oid, c);
  }
  return out;
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
