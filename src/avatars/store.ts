// Queries on the avatars recorded in `user` and `repository` rows. No HTTP here.
import type { Db, Tx } from '../db/database.js';

type Q = Db | Tx;

export async function setUserAvatar(q: Q, uid: number, hash: string, now: number): Promise<void> {
  await q.updateTable('user').set({ avatar: hash, updated_unix: now }).where('id', '=', uid).execute();
}

export async function setRepoAvatar(q: Q, repoId: number, hash: string): Promise<void> {
  await q.updateTable('repository').set({ avatar: hash }).where('id', '=', repoId).execute();
}

/** Which of `hashes` an account or a repository still shows. */
export async function referenced(q: Q, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await q
    .selectFrom('user')
    .select('avatar')
    .where('avatar', 'in', hashes)
    .union(q.selectFrom('repository').select('avatar').where('avatar', 'in', hashes))
    .execute();
  return new Set(rows.map((r) => r.avatar));
}
