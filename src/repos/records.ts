// What the database records of a repository's git data: branch rows read from its refs, and the
// quota subject its size counts under. Shared by creation (RepoService) and ref changes (RefChanges).
import { nowUnix, type Tx } from '../db/database.js';
import { getCommit, listRefs, logCommits, type CommitInfo } from '../git/git.js';
import * as store from './store.js';

/** The quota subject of a repository's git objects. */
export const sizeSubject = (isPrivate: number): 'size:repos:private' | 'size:repos:public' =>
  isPrivate ? 'size:repos:private' : 'size:repos:public';

/** Writes the branch row of `name` at `oid` (its head commit `c`, when read). */
export async function recordBranch(
  tx: Tx,
  repoId: number,
  name: string,
  oid: string,
  pusherId: number,
  c: CommitInfo | undefined,
) {
  await store.upsertBranch(tx, {
    repo_id: repoId,
    name,
    commit_id: oid,
    commit_message: c?.message.split('\n')[0] ?? '',
    commit_time: c?.committerTime ?? 0,
    pusher_id: pusherId,
    updated_unix: nowUnix(),
  });
  await store.forgetDeletedBranch(tx, repoId, name);
}

/** Writes the branch rows of every branch of the bare repository `dir`. */
export async function recordBranches(tx: Tx, repoId: number, dir: string, pusherId: number) {
  const heads = await listRefs(dir, 'refs/heads/');
  const commits = await commitsOf(
    dir,
    heads.map((r) => r.oid),
  );
  for (const r of heads) {
    await recordBranch(tx, repoId, r.name.slice(11), r.oid, pusherId, commits.get(r.oid));
  }
}

/** The commits `oids` (branch tips) by id, read by one git process. */
export async function commitsOf(dir: string, oids: string[]): Promise<Map<string, CommitInfo>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return new Map();
  try {
    const list = await logCommits(dir, ['--no-walk=unsorted', ...unique]);
    return new Map(list.map((c) => [c.oid, c]));
  } catch {
    // Something that is not a commit among them: one by one, skipping what git cannot read.
    const out = new Map<string, CommitInfo>();
    for (const oid of unique) {
      const c = await getCommit(dir, oid);
      if (c) out.set(oid, c);
    }
    return out;
  }
}
