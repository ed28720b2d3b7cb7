// Queries on pending repository transfers (`repo_transfer`). No HTTP here.
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { RepoTransferTable } from './tables.js';
import type { RepoTransferRow } from './tables.js';

type Q = Db | Tx;

export function getPending(q: Q, repoId: number): Promise<RepoTransferRow | undefined> {
  return q.selectFrom('repo_transfer').selectAll().where('repo_id', '=', repoId).executeTakeFirst();
}

/** The pending transfers of `repoIds`, by repository id (one query). */
export async function pendingOf(q: Q, repoIds: number[]): Promise<Map<number, RepoTransferRow>> {
  if (repoIds.length === 0) return new Map();
  const rows = await q.selectFrom('repo_transfer').selectAll().where('repo_id', 'in', repoIds).execute();
  return new Map(rows.map((r) => [r.repo_id, r]));
}

export async function insert(q: Q, row: Insertable<RepoTransferTable>): Promise<void> {
  await q.insertInto('repo_transfer').values(row).execute();
}

/** Removes the repository's pending transfer; whether there was one. */
export async function remove(q: Q, repoId: number): Promise<boolean> {
  const r = await q.deleteFrom('repo_transfer').where('repo_id', '=', repoId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The team ids a transfer carries. */
export function teamIdsOf(row: RepoTransferRow): number[] {
  try {
    const ids = JSON.parse(row.team_ids) as unknown;
    return Array.isArray(ids) ? ids.filter((i): i is number => Number.isInteger(i)) : [];
  } catch {
    return [];
  }
}
