// Queries on issue dependencies, tracked times and stopwatches. No HTTP here.
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { IssueRow } from './tables.js';
import type { StopwatchTable, TrackedTimeTable } from './tables.js';
import type { TrackedTimeRow, StopwatchRow } from './tables.js';

type Q = Db | Tx;

// Dependencies

/** Records that `issueId` depends on `dependencyId`; false when it already did. */
export async function addDependency(
  q: Q,
  issueId: number,
  dependencyId: number,
  now: number,
): Promise<boolean> {
  const row = await q
    .insertInto('issue_dependency')
    .values({ issue_id: issueId, dependency_id: dependencyId, created_unix: now })
    .onConflict((oc) => oc.columns(['issue_id', 'dependency_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes the dependency of `issueId` on `dependencyId`; false when there was none. */
export async function removeDependency(q: Q, issueId: number, dependencyId: number): Promise<boolean> {
  const r = await q
    .deleteFrom('issue_dependency')
    .where('issue_id', '=', issueId)
    .where('dependency_id', '=', dependencyId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function hasDependency(q: Q, issueId: number, dependencyId: number): Promise<boolean> {
  const row = await q
    .selectFrom('issue_dependency')
    .select('id')
    .where('issue_id', '=', issueId)
    .where('dependency_id', '=', dependencyId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One page of the issues `issueId` depends on (`side` 'dependencies') or of those that depend on
 * it ('blocks'), in the order the dependencies were made.
 */
export function related(
  q: Q,
  issueId: number,
  side: 'dependencies' | 'blocks',
  limit: number,
  offset: number,
): Promise<[IssueRow[], number]> {
  const [mine, other] =
    side === 'dependencies' ? ['issue_id', 'dependency_id'] : ['dependency_id', 'issue_id'];
  return paged(
    q
      .selectFrom('issue_dependency as d')
      .innerJoin('issue', 'issue.id', `d.${other as 'issue_id'}`)
      .selectAll('issue')
      .where(`d.${mine as 'issue_id'}`, '=', issueId)
      .orderBy('d.id'),
    limit,
    offset,
  );
}

/** How many of the issues `issueId` depends on are still open. */
export async function openDependencyCount(q: Q, issueId: number): Promise<number> {
  const row = await q
    .selectFrom('issue_dependency as d')
    .innerJoin('issue', 'issue.id', 'd.dependency_id')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('d.issue_id', '=', issueId)
    .where('issue.is_closed', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// Tracked times

export function insertTime(q: Q, row: Insertable<TrackedTimeTable>): Promise<TrackedTimeRow> {
  return q.insertInto('tracked_time').values(row).returningAll().executeTakeFirstOrThrow();
}

export function getTime(q: Q, id: number): Promise<TrackedTimeRow | undefined> {
  return q.selectFrom('tracked_time').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Tracked times by id (deleted ones included: the timeline still shows them). */
export async function getTimes(q: Q, ids: number[]): Promise<TrackedTimeRow[]> {
  if (ids.length === 0) return [];
  return q.selectFrom('tracked_time').selectAll().where('id', 'in', ids).execute();
}

export async function markTimeDeleted(q: Q, id: number): Promise<void> {
  await q.updateTable('tracked_time').set({ deleted: 1 }).where('id', '=', id).execute();
}

/** Marks every time of `userId` on `issueId` deleted; returns the seconds removed. */
export async function deleteUserTimes(q: Q, issueId: number, userId: number): Promise<number> {
  const rows = await q
    .updateTable('tracked_time')
    .set({ deleted: 1 })
    .where('issue_id', '=', issueId)
    .where('user_id', '=', userId)
    .where('deleted', '=', 0)
    .returning('time')
    .execute();
  return rows.reduce((sum, r) => sum + Number(r.time), 0);
}

export interface TimeFilter {
  issueId?: number | undefined;
  repoId?: number | undefined;
  userId?: number | undefined;
  /** Unix seconds: created at or after. */
  since?: number | undefined;
  /** Unix seconds: created at or before. */
  before?: number | undefined;
}

/** The times (not deleted) matching `f`, oldest first; one page of them when `page` is given. */
export function listTimes(
  q: Q,
  f: TimeFilter,
  page?: { limit: number; offset: number },
): Promise<[TrackedTimeRow[], number]> {
  let s = q
    .selectFrom('tracked_time')
    .selectAll('tracked_time')
    .where('tracked_time.deleted', '=', 0)
    .orderBy('tracked_time.created_unix')
    .orderBy('tracked_time.id');
  if (f.repoId !== undefined) {
    const repoId = f.repoId;
    s = s.where((eb) =>
      eb(
        'tracked_time.issue_id',
        'in',
        eb.selectFrom('issue').select('issue.id').where('issue.repo_id', '=', repoId),
      ),
    );
  }
  if (f.issueId !== undefined) s = s.where('tracked_time.issue_id', '=', f.issueId);
  if (f.userId !== undefined) s = s.where('tracked_time.user_id', '=', f.userId);
  if (f.since !== undefined) s = s.where('tracked_time.created_unix', '>=', f.since);
  if (f.before !== undefined) s = s.where('tracked_time.created_unix', '<=', f.before);
  if (page) return paged(s, page.limit, page.offset);
  return s.execute().then((rows) => [rows, rows.length]);
}

// Stopwatches

export function getStopwatch(q: Q, issueId: number, userId: number): Promise<StopwatchRow | undefined> {
  return q
    .selectFrom('stopwatch')
    .selectAll()
    .where('issue_id', '=', issueId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The user's running stopwatches (Forgejo keeps at most one). */
export function stopwatchesOf(q: Q, userId: number): Promise<StopwatchRow[]> {
  return q.selectFrom('stopwatch').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

export function userStopwatches(q: Q, userId: number, limit: number, offset: number) {
  return paged(
    q.selectFrom('stopwatch').selectAll().where('user_id', '=', userId).orderBy('id'),
    limit,
    offset,
  );
}

export async function insertStopwatch(q: Q, row: Insertable<StopwatchTable>): Promise<void> {
  await q.insertInto('stopwatch').values(row).execute();
}

export async function removeStopwatch(q: Q, id: number): Promise<boolean> {
  const r = await q.deleteFrom('stopwatch').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
