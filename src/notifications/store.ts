// Queries on notification threads and repository watches.
import { sql } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import { NotificationSource, NotificationStatus } from './tables.js';
import type { NotificationFilter, NotificationRow, WatchRow } from './tables.js';

type Q = Db | Tx;

function filtered(q: Q, f: NotificationFilter) {
  let s = q.selectFrom('notification').where('user_id', '=', f.userId);
  if (f.repoId !== undefined) s = s.where('repo_id', '=', f.repoId);
  if (f.statuses?.length) s = s.where('status', 'in', f.statuses);
  if (f.sources?.length) s = s.where('source', 'in', f.sources);
  if (f.since !== undefined) s = s.where('updated_unix', '>=', f.since);
  if (f.before !== undefined) s = s.where('updated_unix', '<=', f.before);
  return s;
}

export function list(q: Q, f: NotificationFilter, limit: number, offset: number) {
  return paged(
    filtered(q, f).selectAll().orderBy('updated_unix', 'desc').orderBy('id', 'desc'),
    limit,
    offset,
  );
}

export function all(q: Q, f: NotificationFilter): Promise<NotificationRow[]> {
  return filtered(q, f).selectAll().orderBy('updated_unix', 'desc').orderBy('id', 'desc').execute();
}

export function getById(q: Q, id: number): Promise<NotificationRow | undefined> {
  return q.selectFrom('notification').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getByIds(q: Q, ids: number[]): Promise<NotificationRow[]> {
  if (ids.length === 0) return [];
  return q
    .selectFrom('notification')
    .selectAll()
    .where('id', 'in', ids)
    .orderBy('updated_unix', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function countUnread(q: Q, userId: number): Promise<number> {
  const r = await q
    .selectFrom('notification')
    .select(sql<number>`count(*)`.as('n'))
    .where('user_id', '=', userId)
    .where('status', '=', NotificationStatus.unread)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function setStatus(q: Q, ids: number[], status: number): Promise<void> {
  if (ids.length === 0) return;
  await q.updateTable('notification').set({ status }).where('id', 'in', ids).execute();
}

export async function deleteByIds(q: Q, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await q.deleteFrom('notification').where('id', 'in', ids).execute();
}

export interface Bump {
  repoId: number;
  issueId: number;
  commentId: number | null;
  source: number;
  doerId: number;
  now: number;
}

/**
 * Creates the thread of each of `userIds` for the issue, or bumps an existing one: read threads
 * become unread again, pinned threads stay pinned. One statement for all users.
 */
export async function upsertThreads(q: Q, userIds: number[], b: Bump): Promise<void> {
  if (userIds.length === 0) return;
  await q
    .insertInto('notification')
    .values(
      userIds.map((user_id) => ({
        user_id,
        repo_id: b.repoId,
        issue_id: b.issueId,
        comment_id: b.commentId,
        status: NotificationStatus.unread,
        source: b.source,
        updated_by: b.doerId,
        updated_unix: b.now,
        created_unix: b.now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['user_id', 'issue_id']).doUpdateSet({
        status: sql<number>`case when notification.status = ${NotificationStatus.read} then ${NotificationStatus.unread} else notification.status end`,
        comment_id: (eb) => eb.ref('excluded.comment_id'),
        updated_by: (eb) => eb.ref('excluded.updated_by'),
        updated_unix: (eb) => eb.ref('excluded.updated_unix'),
      }),
    )
    .execute();
}

/** A notification about a repository itself (a pending transfer) for each of `userIds`. */
export async function insertRepoThreads(
  q: Q,
  userIds: number[],
  b: { repoId: number; doerId: number; now: number },
): Promise<void> {
  if (userIds.length === 0) return;
  await q
    .insertInto('notification')
    .values(
      userIds.map((user_id) => ({
        user_id,
        repo_id: b.repoId,
        issue_id: null,
        comment_id: null,
        status: NotificationStatus.unread,
        source: NotificationSource.repository,
        updated_by: b.doerId,
        updated_unix: b.now,
        created_unix: b.now,
      })),
    )
    .execute();
}

// Watches

export function getWatch(q: Q, repoId: number, userId: number): Promise<WatchRow | undefined> {
  return q
    .selectFrom('watch')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** One page of the repositories `userId` watches (ids, latest watch first), and their number. */
export function watchedRepoIds(q: Q, userId: number, limit: number, offset: number) {
  return paged(
    q.selectFrom('watch').select(['repo_id', 'id']).where('user_id', '=', userId).orderBy('id', 'desc'),
    limit,
    offset,
  );
}

export async function watcherIds(q: Q, repoId: number): Promise<number[]> {
  const rows = await q.selectFrom('watch').select('user_id').where('repo_id', '=', repoId).execute();
  return rows.map((r) => r.user_id);
}

export async function addWatch(q: Q, repoId: number, userId: number, now: number): Promise<void> {
  await q
    .insertInto('watch')
    .values({ repo_id: repoId, user_id: userId, created_unix: now })
    .onConflict((oc) => oc.columns(['user_id', 'repo_id']).doNothing())
    .execute();
}

export async function removeWatch(q: Q, repoId: number, userId: number): Promise<void> {
  await q.deleteFrom('watch').where('repo_id', '=', repoId).where('user_id', '=', userId).execute();
}

/** Recounts repository.num_watches from the watch table. */
export async function recountWatches(q: Q, repoId: number): Promise<void> {
  await q
    .updateTable('repository')
    .set({
      num_watches: (eb) =>
        eb.selectFrom('watch').select(eb.fn.countAll<number>().as('n')).where('watch.repo_id', '=', repoId),
    })
    .where('id', '=', repoId)
    .execute();
}

/** The issues among `issueIds` that are merged pull requests (a thread's subject state). */
export async function mergedIssueIds(q: Q, issueIds: number[]): Promise<Set<number>> {
  if (issueIds.length === 0) return new Set();
  const rows = await q
    .selectFrom('pull_request')
    .select('issue_id')
    .where('issue_id', 'in', issueIds)
    .where('has_merged', '=', 1)
    .execute();
  return new Set(rows.map((m) => m.issue_id));
}
