// Queries on pull mirrors and push mirrors. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { MirrorTable, PushMirrorTable } from './tables.js';
import type { MirrorRow, PushMirrorRow } from './tables.js';

type Q = Db | Tx;

// Pull mirrors

export async function insertMirror(q: Q, row: Insertable<MirrorTable>): Promise<void> {
  await q.insertInto('mirror').values(row).execute();
}

export function mirrorOf(q: Q, repoId: number): Promise<MirrorRow | undefined> {
  return q.selectFrom('mirror').selectAll().where('repo_id', '=', repoId).executeTakeFirst();
}

export async function updateMirror(q: Q, repoId: number, patch: Updateable<MirrorTable>): Promise<void> {
  await q.updateTable('mirror').set(patch).where('repo_id', '=', repoId).execute();
}

/**
 * Takes a due pull mirror for one process: its next update moves to `until` only if nobody moved
 * it since it was read as `seen` (another process claiming it, or a sync finishing). True when won.
 */
export async function claimPullMirror(q: Q, repoId: number, seen: number, until: number): Promise<boolean> {
  const r = await q
    .updateTable('mirror')
    .set({ next_update_unix: until })
    .where('repo_id', '=', repoId)
    .where('next_update_unix', '=', seen)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** As claimPullMirror, for a push mirror. */
export async function claimPushMirror(q: Q, id: number, seen: number, until: number): Promise<boolean> {
  const r = await q
    .updateTable('push_mirror')
    .set({ next_update_unix: until })
    .where('id', '=', id)
    .where('next_update_unix', '=', seen)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Pull mirrors whose time has come (interval 0 keeps next_update_unix at 0: never due). */
export function duePullMirrors(q: Q, now: number, limit: number): Promise<MirrorRow[]> {
  return q
    .selectFrom('mirror')
    .selectAll()
    .where('next_update_unix', '>', 0)
    .where('next_update_unix', '<=', now)
    .orderBy('next_update_unix')
    .limit(limit)
    .execute();
}

// Push mirrors

export async function insertPushMirror(q: Q, row: Insertable<PushMirrorTable>): Promise<number> {
  return (await q.insertInto('push_mirror').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function pushMirrorById(q: Q, id: number): Promise<PushMirrorRow | undefined> {
  return q.selectFrom('push_mirror').selectAll().where('id', '=', id).executeTakeFirst();
}

export function pushMirrorByName(q: Q, repoId: number, name: string): Promise<PushMirrorRow | undefined> {
  return q
    .selectFrom('push_mirror')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('remote_name', '=', name)
    .executeTakeFirst();
}

export function listPushMirrors(
  q: Q,
  repoId: number,
  limit: number,
  offset: number,
): Promise<[PushMirrorRow[], number]> {
  return paged(
    q.selectFrom('push_mirror').selectAll().where('repo_id', '=', repoId).orderBy('id'),
    limit,
    offset,
  );
}

/** All push mirrors of a repository, or only those that follow every push. */
export function pushMirrorsOf(q: Q, repoId: number, onCommitOnly = false): Promise<PushMirrorRow[]> {
  let s = q.selectFrom('push_mirror').selectAll().where('repo_id', '=', repoId);
  if (onCommitOnly) s = s.where('sync_on_commit', '=', 1);
  return s.orderBy('id').execute();
}

export async function updatePushMirror(q: Q, id: number, patch: Updateable<PushMirrorTable>): Promise<void> {
  await q.updateTable('push_mirror').set(patch).where('id', '=', id).execute();
}

export async function deletePushMirror(q: Q, repoId: number, name: string): Promise<boolean> {
  const r = await q
    .deleteFrom('push_mirror')
    .where('repo_id', '=', repoId)
    .where('remote_name', '=', name)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export function duePushMirrors(q: Q, now: number, limit: number): Promise<PushMirrorRow[]> {
  return q
    .selectFrom('push_mirror')
    .selectAll()
    .where('next_update_unix', '>', 0)
    .where('next_update_unix', '<=', now)
    .orderBy('next_update_unix')
    .limit(limit)
    .execute();
}
