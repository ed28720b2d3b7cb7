// Queries on the fork relation between repositories (repository.fork_id, num_forks). No HTTP here.
import { sql } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { RepoRow } from './tables.js';

type Q = Db | Tx;

/** The fork of repository `baseId` that `ownerId` owns, if any (indexed by repository_fork). */
export function userFork(q: Q, baseId: number, ownerId: number): Promise<RepoRow | undefined> {
  return q
    .selectFrom('repository')
    .selectAll()
    .where('fork_id', '=', baseId)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
}

/** The forks of repository `baseId` that any of `ownerIds` own. */
export function forksOwnedBy(q: Q, baseId: number, ownerIds: number[]): Promise<RepoRow[]> {
  if (ownerIds.length === 0) return Promise.resolve([]);
  return q
    .selectFrom('repository')
    .selectAll()
    .where('fork_id', '=', baseId)
    .where('owner_id', 'in', ownerIds)
    .execute();
}

export async function addFork(q: Q, baseId: number, delta: 1 | -1): Promise<void> {
  let u = q
    .updateTable('repository')
    .set({ num_forks: sql<number>`num_forks + ${delta}` })
    .where('id', '=', baseId);
  if (delta < 0) u = u.where('num_forks', '>', 0);
  await u.execute();
}

/** A deleted repository's forks stand on their own from now on (as in Forgejo). */
export async function detachForks(q: Q, baseId: number): Promise<void> {
  await q
    .updateTable('repository')
    .set({ fork_id: null, is_fork: 0 })
    .where('fork_id', '=', baseId)
    .execute();
}
