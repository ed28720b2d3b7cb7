// Queries on artifacts and the blocks of their uploads. No HTTP here.
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { ActionArtifactBlockTable, ActionArtifactTable } from './tables.js';
import type { ArtifactRow, BlockRow } from './tables.js';

type Q = Db | Tx;

const CHUNK = 500;

export async function insert(q: Q, row: Insertable<ActionArtifactTable>): Promise<number> {
  return (await q.insertInto('action_artifact').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function getById(q: Q, id: number): Promise<ArtifactRow | undefined> {
  return q.selectFrom('action_artifact').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getByIds(q: Q, ids: number[]): Promise<ArtifactRow[]> {
  const out: ArtifactRow[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    out.push(
      ...(await q
        .selectFrom('action_artifact')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute()),
    );
  }
  return out;
}

export function getByRunAndName(q: Q, runId: number, name: string): Promise<ArtifactRow | undefined> {
  return q
    .selectFrom('action_artifact')
    .selectAll()
    .where('run_id', '=', runId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** The finalized artifacts of a run, optionally one name or one id, oldest first. */
export function uploadedOfRun(
  q: Q,
  runId: number,
  filter: { name?: string | undefined; id?: number | undefined },
): Promise<ArtifactRow[]> {
  let s = q
    .selectFrom('action_artifact')
    .selectAll()
    .where('run_id', '=', runId)
    .where('status', '=', 'uploaded');
  if (filter.name !== undefined) s = s.where('name', '=', filter.name);
  if (filter.id !== undefined) s = s.where('id', '=', filter.id);
  return s.orderBy('id').execute();
}

/** One page of a repository's finalized artifacts (optionally of one run, or of one name), newest first. */
export function uploadedOfRepo(
  q: Q,
  repoId: number,
  filter: { name?: string | undefined; runId?: number | undefined },
  limit: number,
  offset: number,
): Promise<[ArtifactRow[], number]> {
  let s = q
    .selectFrom('action_artifact')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('status', '=', 'uploaded');
  if (filter.name !== undefined) s = s.where('name', '=', filter.name);
  if (filter.runId !== undefined) s = s.where('run_id', '=', filter.runId);
  return paged(s.orderBy('id', 'desc'), limit, offset);
}

/**
 * Makes `content` (a blob just written) the artifact's content, if it is still pending with
 * `previousKey` as its content: false when it is gone, finalized, or another upload got there first.
 */
export async function setContent(
  q: Q,
  id: number,
  previousKey: string,
  content: { size: number; sha256: string; storageKey: string },
  now: number,
): Promise<boolean> {
  const r = await q
    .updateTable('action_artifact')
    .set({ size: content.size, sha256: content.sha256, storage_key: content.storageKey, updated_unix: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('storage_key', '=', previousKey)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** pending → uploaded, for the content stored at `key`; false when that is no longer the case. */
export async function markUploaded(q: Q, id: number, key: string, now: number): Promise<boolean> {
  const r = await q
    .updateTable('action_artifact')
    .set({ status: 'uploaded', updated_unix: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('storage_key', '=', key)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function removeByIds(q: Q, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    await q.deleteFrom('action_artifact_block').where('artifact_id', 'in', part).execute();
    await q.deleteFrom('action_artifact').where('id', 'in', part).execute();
  }
}

export function ofRepo(q: Q, repoId: number): Promise<ArtifactRow[]> {
  return q.selectFrom('action_artifact').selectAll().where('repo_id', '=', repoId).execute();
}

/**
 * Artifacts due for removal at `now`: past their expiry, or left pending (never finalized) since
 * before `stalePendingBefore`; at most `limit`, oldest first.
 */
export function due(q: Q, now: number, stalePendingBefore: number, limit: number): Promise<ArtifactRow[]> {
  return q
    .selectFrom('action_artifact')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('expires_unix', '<=', now),
        eb.and([eb('status', '=', 'pending'), eb('created_unix', '<', stalePendingBefore)]),
      ]),
    )
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Bytes of a repository's finalized artifacts. */
export async function uploadedSizeOfRepo(q: Q, repoId: number): Promise<number> {
  const r = await q
    .selectFrom('action_artifact')
    .select((eb) => eb.fn.sum<number>('size').as('total'))
    .where('repo_id', '=', repoId)
    .where('status', '=', 'uploaded')
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

/** Bytes of finalized artifacts per repository owner. */
export async function ownerTotals(
  q: Q,
  ownerId?: number,
): Promise<Array<{ owner_id: number; total: number }>> {
  let s = q
    .selectFrom('action_artifact')
    .innerJoin('repository', 'repository.id', 'action_artifact.repo_id')
    .select(['repository.owner_id', (eb) => eb.fn.sum<number>('action_artifact.size').as('total')])
    .where('action_artifact.status', '=', 'uploaded')
    .groupBy('repository.owner_id');
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return (await s.execute()).map((r) => ({ owner_id: Number(r.owner_id), total: Number(r.total) }));
}

export type QuotaItemRow = ArtifactRow & { owner_name: string; repo_name: string };

/** One page of the finalized artifacts counted against `ownerId` (those of its repositories), by id. */
export function quotaItems(
  q: Q,
  ownerId: number,
  limit: number,
  offset: number,
  bySize = false,
): Promise<[QuotaItemRow[], number]> {
  const query = q
    .selectFrom('action_artifact')
    .innerJoin('repository', 'repository.id', 'action_artifact.repo_id')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .selectAll('action_artifact')
    .select(['user.name as owner_name', 'repository.name as repo_name'])
    .where('repository.owner_id', '=', ownerId)
    .where('action_artifact.status', '=', 'uploaded')
    .orderBy(bySize ? 'action_artifact.size' : 'action_artifact.id', bySize ? 'desc' : 'asc')
    .orderBy('action_artifact.id');
  // Largest first (the storage overview's list): not counted, which would read every row.
  if (bySize)
    return query
      .limit(limit)
      .offset(offset)
      .execute()
      .then((rows) => [rows, -1]);
  return paged(query, limit, offset);
}

// Blocks

/** Records a staged block; staging the same block id again replaces it (as Azure does). */
export async function upsertBlock(q: Q, row: ActionArtifactBlockTable): Promise<void> {
  await q
    .insertInto('action_artifact_block')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['artifact_id', 'block_id']).doUpdateSet({
        storage_key: row.storage_key,
        size: row.size,
        created_unix: row.created_unix,
      }),
    )
    .execute();
}

export async function blocksOf(q: Q, artifactIds: number[]): Promise<BlockRow[]> {
  const out: BlockRow[] = [];
  for (let i = 0; i < artifactIds.length; i += CHUNK) {
    const part = artifactIds.slice(i, i + CHUNK);
    out.push(
      ...(await q.selectFrom('action_artifact_block').selectAll().where('artifact_id', 'in', part).execute()),
    );
  }
  return out;
}

/** Forgets the blocks `blockIds` of an artifact (those a committed block list has consumed). */
export async function removeBlocks(q: Q, artifactId: number, blockIds: string[]): Promise<void> {
  for (let i = 0; i < blockIds.length; i += CHUNK) {
    await q
      .deleteFrom('action_artifact_block')
      .where('artifact_id', '=', artifactId)
      .where('block_id', 'in', blockIds.slice(i, i + CHUNK))
      .execute();
  }
}

/** Which of `keys` an artifact or a block of an upload still stores its content under. */
export async function referencedKeys(q: Q, keys: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < keys.length; i += CHUNK) {
    const part = keys.slice(i, i + CHUNK);
    const [artifacts, blocks] = await Promise.all([
      q.selectFrom('action_artifact').select('storage_key').where('storage_key', 'in', part).execute(),
      q.selectFrom('action_artifact_block').select('storage_key').where('storage_key', 'in', part).execute(),
    ]);
    for (const r of [...artifacts, ...blocks]) out.add(r.storage_key);
  }
  return out;
}

/** A page of finalized artifacts by id, with their repository, for measuring their blobs. */
export function uploadedPage(q: Q, afterId: number, limit: number, ownerId?: number) {
  let s = q
    .selectFrom('action_artifact')
    .innerJoin('repository', 'repository.id', 'action_artifact.repo_id')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .select([
      'action_artifact.id',
      'action_artifact.name',
      'action_artifact.size',
      'action_artifact.storage_key',
      'repository.owner_id',
      'repository.name as repo_name',
      'user.name as owner_name',
    ])
    .where('action_artifact.id', '>', afterId)
    .where('action_artifact.status', '=', 'uploaded')
    .where('action_artifact.storage_key', '!=', '')
    .orderBy('action_artifact.id')
    .limit(limit);
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return s.execute();
}
