// Queries on attachments. No HTTP here.
import { SqliteAdapter, type Insertable, type Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { AttachmentTable } from './tables.js';
import type { AttachmentRow } from './tables.js';

type Q = Db | Tx;

/** Lists of ids are looked up in chunks, so a long list never builds an oversized IN (...). */
const CHUNK = 500;

function chunks<T>(list: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

/**
 * The repository's current owner, the row locked until `tx` ends (PostgreSQL; SQLite has one
 * writer at a time anyway): a transfer cannot move the usage between reading and recording it.
 */
export async function lockedOwnerOf(tx: Tx, repoId: number): Promise<number | undefined> {
  let s = tx.selectFrom('repository').select('owner_id').where('id', '=', repoId);
  if (!(tx.getExecutor().adapter instanceof SqliteAdapter)) s = s.forUpdate();
  return (await s.executeTakeFirst())?.owner_id;
}

export async function insert(q: Q, row: Insertable<AttachmentTable>): Promise<number> {
  return (await q.insertInto('attachment').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function getById(q: Q, id: number): Promise<AttachmentRow | undefined> {
  return q.selectFrom('attachment').selectAll().where('id', '=', id).executeTakeFirst();
}

export function getByUuid(q: Q, uuid: string): Promise<AttachmentRow | undefined> {
  return q.selectFrom('attachment').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export async function update(q: Q, id: number, patch: Updateable<AttachmentTable>): Promise<void> {
  await q.updateTable('attachment').set(patch).where('id', '=', id).execute();
}

export async function countDownload(q: Q, id: number): Promise<void> {
  await q
    .updateTable('attachment')
    .set((eb) => ({ download_count: eb('download_count', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function removeByIds(q: Q, ids: number[]): Promise<void> {
  for (const part of chunks(ids)) await q.deleteFrom('attachment').where('id', 'in', part).execute();
}

/** The attachments of the releases `ids`, each release's by name (as Forgejo lists them). */
export async function ofReleases(q: Q, ids: number[]): Promise<AttachmentRow[]> {
  const out: AttachmentRow[] = [];
  for (const part of chunks([...new Set(ids)])) {
    out.push(
      ...(await q
        .selectFrom('attachment')
        .selectAll()
        .where('release_id', 'in', part)
        .orderBy('release_id')
        .orderBy('name')
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

/** The attachments of the issues `ids` themselves (not those of their comments), in upload order. */
export async function ofIssues(q: Q, ids: number[]): Promise<AttachmentRow[]> {
  const out: AttachmentRow[] = [];
  for (const part of chunks([...new Set(ids)])) {
    out.push(
      ...(await q
        .selectFrom('attachment')
        .selectAll()
        .where('issue_id', 'in', part)
        .where('comment_id', 'is', null)
        .where('release_id', 'is', null)
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

/** The attachments of the comments `ids`, in upload order. */
export async function ofComments(q: Q, ids: number[]): Promise<AttachmentRow[]> {
  const out: AttachmentRow[] = [];
  for (const part of chunks([...new Set(ids)])) {
    out.push(
      ...(await q
        .selectFrom('attachment')
        .selectAll()
        .where('comment_id', 'in', part)
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

/** Every attachment of an issue, its comments' included. */
export function allOfIssue(q: Q, issueId: number): Promise<AttachmentRow[]> {
  return q.selectFrom('attachment').selectAll().where('issue_id', '=', issueId).execute();
}

export function ofRepo(q: Q, repoId: number): Promise<AttachmentRow[]> {
  return q.selectFrom('attachment').selectAll().where('repo_id', '=', repoId).execute();
}

/** Bytes of a repository's issue and release attachments. */
export async function sizesOfRepo(q: Q, repoId: number): Promise<{ issues: number; releases: number }> {
  const rows = await q
    .selectFrom('attachment')
    .select([
      (eb) => eb.case().when('release_id', 'is', null).then(0).else(1).end().as('is_release'),
      (eb) => eb.fn.sum<number>('size').as('total'),
    ])
    .where('repo_id', '=', repoId)
    .groupBy('is_release')
    .execute();
  const out = { issues: 0, releases: 0 };
  for (const r of rows) out[Number(r.is_release) ? 'releases' : 'issues'] = Number(r.total);
  return out;
}

/** Bytes of attachments per repository owner, split into issue and release attachments. */
export async function ownerTotals(
  q: Q,
  ownerId?: number,
): Promise<Array<{ owner_id: number; is_release: boolean; total: number }>> {
  let s = q
    .selectFrom('attachment')
    .innerJoin('repository', 'repository.id', 'attachment.repo_id')
    .select([
      'repository.owner_id',
      (eb) => eb.case().when('attachment.release_id', 'is', null).then(0).else(1).end().as('is_release'),
      (eb) => eb.fn.sum<number>('attachment.size').as('total'),
    ])
    .groupBy(['repository.owner_id', 'is_release']);
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return (await s.execute()).map((r) => ({
    owner_id: r.owner_id,
    is_release: Number(r.is_release) === 1,
    total: Number(r.total),
  }));
}

export type QuotaItemRow = AttachmentRow & { owner_name: string; repo_name: string; tag_name: string | null };

/** One page of the attachments counted against `ownerId` (those of its repositories), by id. */
export async function quotaItems(
  q: Q,
  ownerId: number,
  limit: number,
  offset: number,
  bySize = false,
): Promise<[QuotaItemRow[], number]> {
  if (bySize) return [await largestItems(q, ownerId, limit, offset), -1];
  return paged(
    q
      .selectFrom('attachment')
      .innerJoin('repository', 'repository.id', 'attachment.repo_id')
      .innerJoin('user', 'user.id', 'repository.owner_id')
      .leftJoin('release', 'release.id', 'attachment.release_id')
      .selectAll('attachment')
      .select(['user.name as owner_name', 'repository.name as repo_name', 'release.tag_name as tag_name'])
      .where('repository.owner_id', '=', ownerId)
      .orderBy('attachment.id'),
    limit,
    offset,
  );
}

/** Past this many attachments, an owner's largest are found by walking every attachment by size. */
const MANY = 5000;

/**
 * One page of the owner's attachments, largest first (the storage overview's list), not counted.
 * An owner with few attachments has them read through its repositories and sorted; one with many
 * has the size index walked from the largest down (the CROSS JOIN keeps SQLite's planner on that
 * path; other databases plan it as the inner join it is), stopping at the page's end.
 */
async function largestItems(q: Q, ownerId: number, limit: number, offset: number): Promise<QuotaItemRow[]> {
  const few = await q
    .selectFrom((eb) =>
      eb
        .selectFrom('attachment')
        .innerJoin('repository', 'repository.id', 'attachment.repo_id')
        .select('attachment.id')
        .where('repository.owner_id', '=', ownerId)
        .limit(MANY)
        .as('t'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const base =
    Number(few.n) < MANY
      ? q.selectFrom('attachment').innerJoin('repository', 'repository.id', 'attachment.repo_id')
      : q
          .selectFrom('attachment')
          .crossJoin('repository')
          .whereRef('repository.id', '=', 'attachment.repo_id');
  return base
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .leftJoin('release', 'release.id', 'attachment.release_id')
    .selectAll('attachment')
    .select(['user.name as owner_name', 'repository.name as repo_name', 'release.tag_name as tag_name'])
    .where('repository.owner_id', '=', ownerId)
    .orderBy('attachment.size', 'desc')
    .orderBy('attachment.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Which of `uuids` name an attachment, in one query per 500. */
export async function existingUuids(q: Q, uuids: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks([...new Set(uuids)])) {
    const rows = await q.selectFrom('attachment').select('uuid').where('uuid', 'in', part).execute();
    for (const r of rows) out.add(r.uuid);
  }
  return out;
}

/** A page of stored (not external) attachments by id, with their repository, for measuring their blobs. */
export function storedPage(q: Q, afterId: number, limit: number, ownerId?: number) {
  let s = q
    .selectFrom('attachment')
    .innerJoin('repository', 'repository.id', 'attachment.repo_id')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .select([
      'attachment.id',
      'attachment.uuid',
      'attachment.name',
      'attachment.size',
      'repository.owner_id',
      'repository.name as repo_name',
      'user.name as owner_name',
    ])
    .where('attachment.id', '>', afterId)
    .where('attachment.external_url', '=', '')
    .orderBy('attachment.id')
    .limit(limit);
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return s.execute();
}
