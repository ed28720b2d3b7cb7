// Queries on activities. Feeds are pages of rows newest first, always limited to repositories the
// viewer may read (through the repositories' own visibility filter).
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { idsMatching, type ListFilter } from '../repos/store.js';
import type { ActionTable } from './tables.js';
import type { ActionRow } from './tables.js';

type Q = Db | Tx;

export async function insert(q: Q, rows: Insertable<ActionTable>[]): Promise<void> {
  if (!rows.length) return;
  await q.insertInto('action').values(rows).execute();
  // The actor's own row counts to the actor's heatmap.
  for (const r of rows) {
    if (r.user_id !== r.act_user_id) continue;
    const bucket = Math.floor(Number(r.created_unix) / 900) * 900;
    await q
      .insertInto('action_bucket')
      .values({ user_id: r.user_id, bucket, is_private: Number(r.is_private ?? 0), contributions: 1 })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'bucket', 'is_private'])
          .doUpdateSet((eb) => ({ contributions: eb('action_bucket.contributions', '+', 1) })),
      )
      .execute();
  }
}

export interface FeedFilter {
  /** The rows of this user's (or organization's) feed. */
  userId?: number;
  /** Only what the feed's user did. */
  onlyPerformed?: boolean;
  /** A repository's feed: its owner's rows of it. */
  repoId?: number;
  teamId?: number;
  /** Rows marked private are left out unless this is set. */
  includePrivate: boolean;
  /** Only repositories this filter selects (the viewer's); undefined: no filter (administrators). */
  readable?: ListFilter;
  /** Only rows created in [from, to). */
  from?: number;
  to?: number;
}

/** Totals are counted up to here; a feed longer than that reports this many. */
export const COUNT_CAP = 10_000;

export async function feed(
  q: Q,
  f: FeedFilter,
  limit: number,
  offset: number,
): Promise<[ActionRow[], number]> {
  let s = q.selectFrom('action');
  if (f.userId !== undefined) {
    s = s.where('user_id', '=', f.userId);
    if (f.onlyPerformed) s = s.where('act_user_id', '=', f.userId);
  }
  if (f.repoId !== undefined) s = s.where('repo_id', '=', f.repoId).whereRef('user_id', '=', 'owner_id');
  if (f.teamId !== undefined) {
    s = s.where('repo_id', 'in', idsMatching(q, { teamId: f.teamId })).whereRef('user_id', '=', 'owner_id');
  }
  if (!f.includePrivate) s = s.where('is_private', '=', 0);
  if (f.readable) s = s.where('repo_id', 'in', idsMatching(q, f.readable));
  if (f.from !== undefined) s = s.where('created_unix', '>=', f.from);
  if (f.to !== undefined) s = s.where('created_unix', '<', f.to);
  const [rows, counted] = await Promise.all([
    s.selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    q
      .selectFrom(s.select('id').limit(COUNT_CAP).as('capped'))
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return [rows, Number(counted.n)];
}

/** What a user did since `since`, per 15 minutes (Forgejo's heatmap). */
export async function heatmap(
  q: Q,
  userId: number,
  since: number,
  includePrivate: boolean,
): Promise<Array<{ timestamp: number; contributions: number }>> {
  let s = q
    .selectFrom('action_bucket')
    .where('user_id', '=', userId)
    .where('bucket', '>=', Math.floor(since / 900) * 900);
  if (!includePrivate) s = s.where('is_private', '=', 0);
  const rows = includePrivate
    ? await s
        .select(['bucket', (eb) => eb.fn.sum<number | string>('contributions').as('n')])
        .groupBy('bucket')
        .orderBy('bucket')
        .execute()
    : await s.select(['bucket', 'contributions as n']).orderBy('bucket').execute();
  return rows.map((r) => ({ timestamp: Number(r.bucket), contributions: Number(r.n) }));
}
