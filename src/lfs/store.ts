// Queries on LFS meta objects and locks. No HTTP here.
import type { InsertResult, Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { LfsLockTable, LfsMetaObjectTable } from './tables.js';
import type { MetaRow, LockRow } from './tables.js';

type Q = Db | Tx;

/** Lists of oids are looked up in chunks, so a large batch never builds an oversized IN (...). */
const CHUNK = 500;

function chunks<T>(list: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

const inserted = (r: InsertResult | undefined) => Number(r?.numInsertedOrUpdatedRows ?? 0) > 0;

// Meta objects

export async function getMeta(q: Q, repoId: number, oid: string): Promise<MetaRow | undefined> {
  return q
    .selectFrom('lfs_meta_object')
    .selectAll()
    .where('oid', '=', oid)
    .where('repository_id', '=', repoId)
    .executeTakeFirst();
}

/** The meta objects of `repoId` among `oids`, by oid. */
export async function metaByOids(q: Q, repoId: number, oids: string[]): Promise<Map<string, MetaRow>> {
  const out = new Map<string, MetaRow>();
  for (const part of chunks([...new Set(oids)])) {
    const rows = await q
      .selectFrom('lfs_meta_object')
      .selectAll()
      .where('repository_id', '=', repoId)
      .where('oid', 'in', part)
      .execute();
    for (const r of rows) out.set(r.oid, r);
  }
  return out;
}

/** Records that `repository_id` holds `oid`; false when it already did (the row is unchanged). */
export async function insertMeta(q: Q, row: Insertable<LfsMetaObjectTable>): Promise<boolean> {
  return inserted(
    await q
      .insertInto('lfs_meta_object')
      .values(row)
      .onConflict((oc) => oc.columns(['oid', 'repository_id']).doNothing())
      .executeTakeFirst(),
  );
}

export async function deleteMeta(q: Q, repoId: number, oid: string): Promise<boolean> {
  const r = await q
    .deleteFrom('lfs_meta_object')
    .where('repository_id', '=', repoId)
    .where('oid', '=', oid)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** A page of a repository's objects, newest first, and how many there are. */
export async function listMetaOfRepo(
  q: Q,
  repoId: number,
  limit: number,
  offset: number,
): Promise<[MetaRow[], number]> {
  const rows = await q
    .selectFrom('lfs_meta_object')
    .selectAll()
    .where('repository_id', '=', repoId)
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  const n = await q
    .selectFrom('lfs_meta_object')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('repository_id', '=', repoId)
    .executeTakeFirstOrThrow();
  return [rows, Number(n.n)];
}

/** Every object of a repository (oid and size). */
export async function metaOfRepo(q: Q, repoId: number): Promise<Array<{ oid: string; size: number }>> {
  return q
    .selectFrom('lfs_meta_object')
    .select(['oid', 'size'])
    .where('repository_id', '=', repoId)
    .execute();
}

export async function deleteMetaOfRepo(q: Q, repoId: number): Promise<void> {
  await q.deleteFrom('lfs_meta_object').where('repository_id', '=', repoId).execute();
}

/** Total size of a repository's objects. */
export async function sizeOfRepo(q: Q, repoId: number): Promise<number> {
  const r = await q
    .selectFrom('lfs_meta_object')
    .select((eb) => eb.fn.sum<number>('size').as('total'))
    .where('repository_id', '=', repoId)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

/** The oids among `oids` that some repository still holds. */
export async function referencedOids(q: Q, oids: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks([...new Set(oids)])) {
    const rows = await q
      .selectFrom('lfs_meta_object')
      .select('oid')
      .distinct()
      .where('oid', 'in', part)
      .execute();
    for (const r of rows) out.add(r.oid);
  }
  return out;
}

/** Gives `toRepo` every object `fromRepo` holds (a fork shares its parent's objects). */
export async function copyMeta(q: Q, fromRepo: number, toRepo: number, now: number): Promise<void> {
  await q
    .insertInto('lfs_meta_object')
    .columns(['oid', 'size', 'repository_id', 'created_unix'])
    .expression((eb) =>
      eb
        .selectFrom('lfs_meta_object')
        .select((s) => ['oid', 'size', s.val(toRepo).as('repository_id'), s.val(now).as('created_unix')])
        .where('repository_id', '=', fromRepo),
    )
    .onConflict((oc) => oc.columns(['oid', 'repository_id']).doNothing())
    .execute();
}

/** LFS bytes per repository owner (for one owner when given). */
export async function ownerTotals(
  q: Q,
  ownerId?: number,
): Promise<Array<{ owner_id: number; total: number }>> {
  let s = q
    .selectFrom('lfs_meta_object')
    .innerJoin('repository', 'repository.id', 'lfs_meta_object.repository_id')
    .select(['repository.owner_id', (eb) => eb.fn.sum<number>('lfs_meta_object.size').as('total')])
    .groupBy('repository.owner_id');
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return (await s.execute()).map((r) => ({ owner_id: r.owner_id, total: Number(r.total) }));
}

/** A page of meta objects (by id, after `afterId`) with their repository, for measuring their blobs. */
export function metaPage(q: Q, afterId: number, limit: number, ownerId?: number) {
  let s = q
    .selectFrom('lfs_meta_object')
    .innerJoin('repository', 'repository.id', 'lfs_meta_object.repository_id')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .select([
      'lfs_meta_object.id',
      'lfs_meta_object.oid',
      'lfs_meta_object.size',
      'repository.owner_id',
      'repository.name as repo_name',
      'user.name as owner_name',
    ])
    .where('lfs_meta_object.id', '>', afterId)
    .orderBy('lfs_meta_object.id')
    .limit(limit);
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return s.execute();
}

// Locks

function locks(q: Q) {
  return q
    .selectFrom('lfs_lock')
    .innerJoin('user', 'user.id', 'lfs_lock.owner_id')
    .selectAll('lfs_lock')
    .select('user.name as owner_name');
}

/** Adds a lock; its id, or undefined when the path is already locked. */
export async function insertLock(q: Q, row: Insertable<LfsLockTable>): Promise<number | undefined> {
  const r = await q
    .insertInto('lfs_lock')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'path']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r?.id;
}

export async function getLock(q: Q, repoId: number, id: number): Promise<LockRow | undefined> {
  return locks(q).where('lfs_lock.repo_id', '=', repoId).where('lfs_lock.id', '=', id).executeTakeFirst();
}

export async function getLockByPath(q: Q, repoId: number, path: string): Promise<LockRow | undefined> {
  return locks(q).where('lfs_lock.repo_id', '=', repoId).where('lfs_lock.path', '=', path).executeTakeFirst();
}

export interface LockFilter {
  path?: string | undefined;
  id?: number | undefined;
  /** Only locks with an id at least this (the cursor). */
  fromId?: number | undefined;
}

/** Up to `limit` locks of a repository in id order. */
export async function listLocks(q: Q, repoId: number, f: LockFilter, limit: number): Promise<LockRow[]> {
  let s = locks(q).where('lfs_lock.repo_id', '=', repoId);
  if (f.path !== undefined) s = s.where('lfs_lock.path', '=', f.path);
  if (f.id !== undefined) s = s.where('lfs_lock.id', '=', f.id);
  if (f.fromId !== undefined) s = s.where('lfs_lock.id', '>=', f.fromId);
  return s.orderBy('lfs_lock.id').limit(limit).execute();
}

export async function deleteLock(q: Q, repoId: number, id: number): Promise<boolean> {
  const r = await q
    .deleteFrom('lfs_lock')
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The total size of the objects of each of `repoIds` (those with none left out). */
export async function sizesOfRepos(q: Q, repoIds: number[]): Promise<Map<number, number>> {
  if (repoIds.length === 0) return new Map();
  const rows = await q
    .selectFrom('lfs_meta_object')
    .select(['repository_id', (eb) => eb.fn.sum<number>('size').as('total')])
    .where('repository_id', 'in', repoIds)
    .groupBy('repository_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.repository_id), Number(r.total)]));
}
