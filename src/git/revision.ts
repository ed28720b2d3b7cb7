// Revisions as git reads them (`main~1`, `v1^2`, abbreviated commit ids), for the endpoints where
// Forgejo hands a name from the URL to `git rev-parse`: compare's base and head, and statuses by
// ref. A name reaches git as a single argument after --end-of-options, and one that starts with
// '-' or holds a control character never reaches it, so no name becomes an option.
import { invalidField, notFound } from '../errors.js';
import { isValidRefName, resolveRef, type ResolvedRef } from './data.js';
import { git } from './git.js';

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Whether `rev` may be given to git at all: not empty, not an option, no control characters. */
export function isSafeRevision(rev: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  return rev.length > 0 && rev.length <= 1024 && !rev.startsWith('-') && !/[\x00-\x1f\x7f]/.test(rev);
}

/** The commit `rev` names (a tag peeled to its commit), or undefined when it names none. */
export async function revParseCommit(dir: string, rev: string): Promise<string | undefined> {
  if (!isSafeRevision(rev)) return undefined;
  const r = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    gitDir: dir,
    okCodes: [1, 128],
  });
  const oid = r.stdout.toString('utf8').trim();
  return r.code === 0 && OID.test(oid) ? oid : undefined;
}

/**
 * The commit `name` names: a branch, a tag or a commit id as `resolveRef` finds them (branches
 * first, as Forgejo does), else any revision git reads. 422 naming `field` for a name git must
 * not see (an option), 404 when it names nothing.
 */
export async function resolveRevision(dir: string, name: string, field: string): Promise<ResolvedRef> {
  if (!isSafeRevision(name)) throw invalidField(field, `invalid ref or commit name [name: ${name}]`);
  const ref = isValidRefName(name) ? await resolveRef(dir, name) : undefined;
  if (ref) return ref;
  const oid = await revParseCommit(dir, name);
  if (!oid) throw notFound(`no commit found for the ref [ref: ${name}]`);
  return { oid, kind: 'commit', name: oid };
}
