// Listing refs: branches with their head commits, tags (lightweight and annotated), annotated tag
// objects, and every ref by name, each in one git process.
import { git } from './git.js';
import { objectInfo, rfc3339, type CommitData, type Signature } from './data.js';

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
