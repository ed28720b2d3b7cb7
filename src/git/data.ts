// The git data layer's core: names and paths, resolving refs to commits, objects and blobs, commits
// (with their changed files and line counts) and their diffs, and moving a ref atomically. Listing
// refs is ref-lists.ts, trees, streams and blame trees.ts, writing objects write.ts, notes notes.ts.
// Nothing here knows about HTTP or the database. Every revision handed to git is an object id
// resolved here first, or a full ref name built by Anvil from a validated name; paths go through
// pathspecs taken literally; nothing from a URL is ever an option or reaches a shell.
import { invalidField } from '../errors.js';
import { git, ZERO_OID } from './git.js';

export { ZERO_OID };

/** The object id of the empty tree (SHA-1). */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Pathspecs are literal: no `:(glob)` magic or wildcards from user input. */
export const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

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
export const rfc3339 = (iso: string) => iso.replace(/\+00:00$/, 'Z');

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

/** A commit's unified diff against its first parent (`git show`), or its `git format-patch` mail. */
export async function diffText(dir: string, oid: string, patch: boolean): Promise<string> {
  const args = patch
    ? ['format-patch', '--stdout', '-1', '--no-signature', '--end-of-options', oid]
    : ['show', '--format=', '--patch', '--no-color', '--end-of-options', oid];
  return (await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8');
}

/** The unified diff between two commits (`git diff from to`). */
export async function rangeDiff(dir: string, from: string, to: string): Promise<string> {
  const args = ['diff', '--no-color', '--no-ext-diff', '-M', '--end-of-options', from, to, '--'];
  return (await git(args, { gitDir: dir, env: LITERAL })).stdout.toString('utf8');
}

// Objects

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

// Moving refs

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
