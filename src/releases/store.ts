// Queries on releases. No HTTP here. Rows with is_tag = 1 only record a tag and are never shown.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { ReleaseTable } from './tables.js';
import type { ReleaseRow } from './tables.js';

type Q = Db | Tx;

/** Inserts a release; undefined when the repository already has one for the tag (any case). */
export async function insert(q: Q, row: Insertable<ReleaseTable>): Promise<number | undefined> {
  const r = await q
    .insertInto('release')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'lower_tag_name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r?.id;
}

export async function update(q: Q, id: number, patch: Updateable<ReleaseTable>): Promise<void> {
  await q.updateTable('release').set(patch).where('id', '=', id).execute();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('release').where('id', '=', id).execute();
}

export function getById(q: Q, repoId: number, id: number): Promise<ReleaseRow | undefined> {
  return q
    .selectFrom('release')
    .selectAll()
    .where('id', '=', id)
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
}

/** The row for a tag, compared without case (also a tag-only row). */
export function getByTag(q: Q, repoId: number, tag: string): Promise<ReleaseRow | undefined> {
  return q
    .selectFrom('release')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('lower_tag_name', '=', tag.toLowerCase())
    .executeTakeFirst();
}

export async function isDraft(q: Q, id: number): Promise<boolean> {
  const r = await q.selectFrom('release').select('is_draft').where('id', '=', id).executeTakeFirst();
  return r?.is_draft === 1;
}

export interface ListFilter {
  includeDrafts: boolean;
  draft?: boolean | undefined;
  prerelease?: boolean | undefined;
  /** Part of the tag name or title, without case. */
  keyword?: string | undefined;
}

/** One page of a repository's releases, newest first, and how many match. */
export function list(
  q: Q,
  repoId: number,
  f: ListFilter,
  limit: number,
  offset: number,
): Promise<[ReleaseRow[], number]> {
  let s = q.selectFrom('release').where('repo_id', '=', repoId).where('is_tag', '=', 0);
  if (!f.includeDrafts) s = s.where('is_draft', '=', 0);
  if (f.draft !== undefined) s = s.where('is_draft', '=', f.draft ? 1 : 0);
  if (f.prerelease !== undefined) s = s.where('is_prerelease', '=', f.prerelease ? 1 : 0);
  if (f.keyword) {
    const like = `%${f.keyword.toLowerCase()}%`;
    s = s.where((eb) =>
      eb.or([eb('lower_tag_name', 'like', like), eb(eb.fn('lower', ['title']), 'like', like)]),
    );
  }
  return paged(s.selectAll().orderBy('created_unix', 'desc').orderBy('id', 'desc'), limit, offset);
}

/** The newest release that is neither a draft nor a pre-release. */
export function latest(q: Q, repoId: number): Promise<ReleaseRow | undefined> {
  return q
    .selectFrom('release')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('is_tag', '=', 0)
    .where('is_draft', '=', 0)
    .where('is_prerelease', '=', 0)
    .orderBy('created_unix', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Published releases (not drafts, not bare tags) per repository, in one query. */
export async function countsOf(q: Q, repoIds: number[]): Promise<Map<number, number>> {
  if (repoIds.length === 0) return new Map();
  const rows = await q
    .selectFrom('release')
    .select(['repo_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('repo_id', 'in', repoIds)
    .where('is_draft', '=', 0)
    .where('is_tag', '=', 0)
    .groupBy('repo_id')
    .execute();
  return new Map(rows.map((r) => [r.repo_id, Number(r.n)]));
}
