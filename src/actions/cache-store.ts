// Queries on actions cache entries and their upload chunks. No HTTP here.
import { sql, type Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { ActionCacheTable, CacheChunkRow, CacheRow, CacheStatus } from './cache-tables.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<ActionCacheTable>): Promise<number> {
  return (await q.insertInto('action_cache').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function getById(q: Q, id: number): Promise<CacheRow | undefined> {
  return q.selectFrom('action_cache').selectAll().where('id', '=', id).executeTakeFirst();
}

export function getByHash(q: Q, repoId: number, keyHash: string): Promise<CacheRow | undefined> {
  return q
    .selectFrom('action_cache')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Committed entries of the hashes (exact matches), newest first. */
export function committedByHashes(q: Q, repoId: number, hashes: string[]): Promise<CacheRow[]> {
  return q
    .selectFrom('action_cache')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('key_hash', 'in', hashes)
    .where('status', '=', 'committed')
    .orderBy('created_unix', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Committed entries of `version` in `refs` whose key starts with `prefix` (the database's way), newest first. */
export function committedByPrefix(
  q: Q,
  repoId: number,
  refs: string[],
  version: string,
  prefix: string,
): Promise<CacheRow[]> {
  return q
    .selectFrom('action_cache')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('version', '=', version)
    .where('ref', 'in', refs)
    .where('status', '=', 'committed')
    .where(sql<string>`substr(cache_key, 1, ${prefix.length})`, '=', prefix)
    .orderBy('created_unix', 'desc')
    .orderBy('id', 'desc')
    .limit(100)
    .execute();
}

export async function touch(q: Q, id: number, now: number): Promise<void> {
  await q.updateTable('action_cache').set({ used_unix: now }).where('id', '=', id).execute();
}

/** Moves an entry from one status to another; false when it was not in `from`. */
export async function setStatus(
  q: Q,
  id: number,
  from: CacheStatus,
  set: Partial<Pick<CacheRow, 'status' | 'size' | 'storage_key' | 'updated_unix'>>,
): Promise<boolean> {
  const r = await q
    .updateTable('action_cache')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export function chunksOf(q: Q, cacheId: number): Promise<CacheChunkRow[]> {
  return q
    .selectFrom('action_cache_chunk')
    .selectAll()
    .where('cache_id', '=', cacheId)
    .orderBy('start_offset')
    .execute();
}

export function chunkAt(q: Q, cacheId: number, start: number): Promise<CacheChunkRow | undefined> {
  return q
    .selectFrom('action_cache_chunk')
    .selectAll()
    .where('cache_id', '=', cacheId)
    .where('start_offset', '=', start)
    .executeTakeFirst();
}

export async function insertChunk(q: Q, row: CacheChunkRow): Promise<void> {
  await q.insertInto('action_cache_chunk').values(row).execute();
}

export async function replaceChunk(q: Q, row: CacheChunkRow): Promise<void> {
  await q
    .updateTable('action_cache_chunk')
    .set({ end_offset: row.end_offset, storage_key: row.storage_key, created_unix: row.created_unix })
    .where('cache_id', '=', row.cache_id)
    .where('start_offset', '=', row.start_offset)
    .execute();
}

/** Removes entries and their chunk rows; the storage keys they held, for removal. */
export async function remove(q: Q, ids: number[]): Promise<string[]> {
  if (!ids.length) return [];
  const chunks = await q
    .selectFrom('action_cache_chunk')
    .select('storage_key')
    .where('cache_id', 'in', ids)
    .execute();
  const rows = await q.selectFrom('action_cache').select('storage_key').where('id', 'in', ids).execute();
  await q.deleteFrom('action_cache_chunk').where('cache_id', 'in', ids).execute();
  await q.deleteFrom('action_cache').where('id', 'in', ids).execute();
  return [...chunks, ...rows].map((r) => r.storage_key).filter(Boolean);
}

/** Entries to expire: committed ones unused since `usedBefore`, unfinished ones untouched since `staleBefore`. */
export async function expired(
  q: Q,
  usedBefore: number,
  staleBefore: number,
  limit: number,
): Promise<number[]> {
  const rows = await q
    .selectFrom('action_cache')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'committed'), eb('used_unix', '<', usedBefore)]),
        eb.and([eb('status', '!=', 'committed'), eb('updated_unix', '<', staleBefore)]),
      ]),
    )
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Repositories whose committed entries total more than `max` bytes. */
export async function reposOver(q: Q, max: number): Promise<number[]> {
  const rows = await q
    .selectFrom('action_cache')
    .select(['repo_id', (eb) => eb.fn.sum<number>('size').as('total')])
    .where('status', '=', 'committed')
    .groupBy('repo_id')
    .having((eb) => eb.fn.sum('size'), '>', max)
    .execute();
  return rows.map((r) => r.repo_id);
}

/** A repository's committed entries, least recently used first. */
export function committedOfRepoByUse(q: Q, repoId: number): Promise<Pick<CacheRow, 'id' | 'size'>[]> {
  return q
    .selectFrom('action_cache')
    .select(['id', 'size'])
    .where('repo_id', '=', repoId)
    .where('status', '=', 'committed')
    .orderBy('used_unix')
    .orderBy('id')
    .execute();
}

export async function referencedKeys(q: Q, keys: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < keys.length; i += 500) {
    const part = keys.slice(i, i + 500);
    const [a, b] = await Promise.all([
      q.selectFrom('action_cache').select('storage_key').where('storage_key', 'in', part).execute(),
      q.selectFrom('action_cache_chunk').select('storage_key').where('storage_key', 'in', part).execute(),
    ]);
    for (const r of [...a, ...b]) out.add(r.storage_key);
  }
  return out;
}
