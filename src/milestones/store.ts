// Queries on milestones. No HTTP here.
import { sql, type Insertable, type Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { MilestoneTable } from './tables.js';
import type { MilestoneRow } from './tables.js';
import { MILESTONE_SORTS, type MilestoneSort } from './tables.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<MilestoneTable>): Promise<MilestoneRow> {
  return q.insertInto('milestone').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function update(q: Q, id: number, patch: Updateable<MilestoneTable>): Promise<MilestoneRow> {
  return q.updateTable('milestone').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('milestone').where('id', '=', id).execute();
}

export function getInRepo(q: Q, repoId: number, id: number): Promise<MilestoneRow | undefined> {
  return q
    .selectFrom('milestone')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The first milestone of the repository with this exact title. */
export function getByName(q: Q, repoId: number, name: string): Promise<MilestoneRow | undefined> {
  return q
    .selectFrom('milestone')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('name', '=', name)
    .orderBy('id')
    .executeTakeFirst();
}

export async function getByIds(q: Q, ids: number[]): Promise<Map<number, MilestoneRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('milestone').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** Milestones of a repository with one of these titles or ids, oldest first. */
export function byNamesOrIds(q: Q, repoId: number, names: string[], ids: number[]): Promise<MilestoneRow[]> {
  if (names.length === 0 && ids.length === 0) return Promise.resolve([]);
  return q
    .selectFrom('milestone')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where((eb) =>
      eb.or([
        ...(names.length ? [eb('name', 'in', names)] : []),
        ...(ids.length ? [eb('id', 'in', ids)] : []),
      ]),
    )
    .orderBy('id')
    .execute();
}

/** Milestones of the repositories `repoIds` with any of these titles. */
export async function idsByNamesIn(q: Q, repoIds: number[], names: string[]): Promise<number[]> {
  if (repoIds.length === 0 || names.length === 0) return [];
  const rows = await q
    .selectFrom('milestone')
    .select('id')
    .where('repo_id', 'in', repoIds)
    .where('name', 'in', names)
    .execute();
  return rows.map((r) => r.id);
}

export function list(
  q: Q,
  repoId: number | number[],
  f: { isClosed?: boolean | undefined; name?: string | undefined; sort?: MilestoneSort | undefined },
  limit: number,
  offset: number,
): Promise<[MilestoneRow[], number]> {
  let s = q.selectFrom('milestone').selectAll();
  s =
    typeof repoId === 'number'
      ? s.where('repo_id', '=', repoId)
      : s.where('repo_id', 'in', repoId.length ? repoId : [-1]);
  if (f.isClosed !== undefined) s = s.where('is_closed', '=', f.isClosed ? 1 : 0);
  if (f.name) {
    // Case-insensitive substring, as in Forgejo; % and _ stay wildcards, backslashes are dropped.
    const like = `%${f.name.toLowerCase().replace(/\\/g, '')}%`;
    s = s.where(sql<string>`lower(name)`, 'like', like);
  }
  for (const [column, direction] of MILESTONE_SORTS[f.sort ?? 'closestduedate']) {
    s = s.orderBy(column, direction);
  }
  return paged(s.orderBy('id', 'asc'), limit, offset);
}

/**
 * Recounts the issues of each milestone in `ids` (all of them, and the closed ones) and its
 * completeness, from the issue table: always right, whatever changed.
 */
export async function recount(q: Q, ids: Iterable<number | null | undefined>): Promise<void> {
  for (const id of new Set([...ids].filter((i): i is number => typeof i === 'number' && i > 0))) {
    const r = await q
      .selectFrom('issue')
      .select([
        (eb) => eb.fn.countAll<number>().as('total'),
        (eb) => eb.fn.sum<number>('is_closed').as('closed'),
      ])
      .where('milestone_id', '=', id)
      .executeTakeFirstOrThrow();
    const total = Number(r.total);
    const closed = Number(r.closed ?? 0);
    await q
      .updateTable('milestone')
      .set({
        num_issues: total,
        num_closed_issues: closed,
        completeness: total ? Math.floor((closed * 100) / total) : 0,
      })
      .where('id', '=', id)
      .execute();
  }
}
