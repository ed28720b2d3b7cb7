// Queries on commit statuses. No HTTP here.
import { sql, type Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { CommitStatusTable } from './tables.js';
import type { StatusRow } from './tables.js';

type Q = Db | Tx;

/** Forgejo's sort values for status lists, with the order each gives (its quirks included). */
export const SORTS = {
  newest: ['created_unix', 'desc'],
  oldest: ['created_unix', 'asc'],
  recentupdate: ['updated_unix', 'desc'],
  leastupdate: ['updated_unix', 'asc'],
  // As in Forgejo: leastindex lists the highest numbers first, highestindex the lowest.
  leastindex: ['status_index', 'desc'],
  highestindex: ['status_index', 'asc'],
} as const;
export type StatusSort = keyof typeof SORTS;
/** The sort values a caller may ask for (newest first is the default). */
export const LIST_SORTS = ['oldest', 'recentupdate', 'leastupdate', 'leastindex', 'highestindex'] as const;

/** The next number for a status of (repository, commit): one atomic upsert, safe under concurrency. */
export async function nextIndex(q: Q, repoId: number, sha: string): Promise<number> {
  const r = await q
    .insertInto('commit_status_index')
    .values({ repo_id: repoId, sha, max_index: 1 })
    .onConflict((oc) =>
      oc.columns(['repo_id', 'sha']).doUpdateSet({ max_index: sql`commit_status_index.max_index + 1` }),
    )
    .returning('max_index')
    .executeTakeFirstOrThrow();
  return Number(r.max_index);
}

export async function insert(q: Q, row: Insertable<CommitStatusTable>): Promise<StatusRow> {
  return q.insertInto('commit_status').values(row).returningAll().executeTakeFirstOrThrow();
}

export function list(
  q: Q,
  repoId: number,
  sha: string,
  f: { sort?: StatusSort | undefined; state?: string | undefined },
  limit: number,
  offset: number,
): Promise<[StatusRow[], number]> {
  let s = q.selectFrom('commit_status').selectAll().where('repo_id', '=', repoId).where('sha', '=', sha);
  if (f.state) s = s.where('state', '=', f.state);
  const [column, direction] = SORTS[f.sort ?? 'newest'];
  return paged(s.orderBy(column, direction).orderBy('status_index', direction), limit, offset);
}

/** The newest status of each context of a commit, newest first. */
function latestQuery(q: Q, repoId: number, sha: string) {
  return q
    .selectFrom('commit_status')
    .where('repo_id', '=', repoId)
    .where('sha', '=', sha)
    .where('status_index', 'in', (eb) =>
      eb
        .selectFrom('commit_status as c')
        .select((e) => e.fn.max('c.status_index').as('m'))
        .where('c.repo_id', '=', repoId)
        .where('c.sha', '=', sha)
        .groupBy('c.context'),
    );
}

export function latest(
  q: Q,
  repoId: number,
  sha: string,
  limit: number,
  offset: number,
): Promise<[StatusRow[], number]> {
  return paged(latestQuery(q, repoId, sha).selectAll().orderBy('status_index', 'desc'), limit, offset);
}

/** Context and state of the newest status of every context of a commit. */
export function latestStates(
  q: Q,
  repoId: number,
  sha: string,
): Promise<Array<{ context: string; state: string }>> {
  return latestQuery(q, repoId, sha).select(['context', 'state']).orderBy('status_index', 'desc').execute();
}
