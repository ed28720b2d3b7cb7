// Queries on users' SSH keys (public_key) and repositories' deploy keys (deploy_key).
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { DeployKeyTable, PublicKeyTable } from './tables.js';
import type { PublicKeyRow, DeployKeyRow } from './tables.js';

type Q = Db | Tx;

export async function insertUserKey(q: Q, row: Insertable<PublicKeyTable>): Promise<number> {
  const r = await q.insertInto('public_key').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(r.id);
}

export function userKey(q: Q, ownerId: number, id: number): Promise<PublicKeyRow | undefined> {
  return q
    .selectFrom('public_key')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function userKeyById(q: Q, id: number): Promise<PublicKeyRow | undefined> {
  return q.selectFrom('public_key').selectAll().where('id', '=', id).executeTakeFirst();
}

export function userKeys(
  q: Q,
  ownerId: number,
  fingerprint: string | undefined,
  limit: number,
  offset: number,
): Promise<[PublicKeyRow[], number]> {
  let query = q.selectFrom('public_key').selectAll().where('owner_id', '=', ownerId);
  if (fingerprint) query = query.where('fingerprint', '=', fingerprint);
  return paged(query.orderBy('id'), limit, offset);
}

export function allUserKeys(q: Q, ownerId: number): Promise<PublicKeyRow[]> {
  return q.selectFrom('public_key').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
}

export function userKeyByFingerprint(q: Q, fingerprint: string): Promise<PublicKeyRow | undefined> {
  return q.selectFrom('public_key').selectAll().where('fingerprint', '=', fingerprint).executeTakeFirst();
}

export async function markUserKeyVerified(q: Q, id: number): Promise<void> {
  await q.updateTable('public_key').set({ verified: 1 }).where('id', '=', id).execute();
}

/** Records that the key signed in (Forgejo's "last used"). */
export async function touchUserKey(q: Q, id: number, now: number): Promise<void> {
  await q.updateTable('public_key').set({ updated_unix: now }).where('id', '=', id).execute();
}

export async function deleteUserKey(q: Q, id: number): Promise<void> {
  await q.deleteFrom('public_key').where('id', '=', id).execute();
}

export async function insertDeployKey(q: Q, row: Insertable<DeployKeyTable>): Promise<number> {
  const r = await q.insertInto('deploy_key').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(r.id);
}

export function deployKey(q: Q, repoId: number, id: number): Promise<DeployKeyRow | undefined> {
  return q
    .selectFrom('deploy_key')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function deployKeyById(q: Q, id: number): Promise<DeployKeyRow | undefined> {
  return q.selectFrom('deploy_key').selectAll().where('id', '=', id).executeTakeFirst();
}

export function deployKeys(
  q: Q,
  repoId: number,
  filter: { id?: number | undefined; fingerprint?: string | undefined },
  limit: number,
  offset: number,
): Promise<[DeployKeyRow[], number]> {
  let query = q.selectFrom('deploy_key').selectAll().where('repo_id', '=', repoId);
  if (filter.id !== undefined) query = query.where('id', '=', filter.id);
  if (filter.fingerprint) query = query.where('fingerprint', '=', filter.fingerprint);
  return paged(query.orderBy('id'), limit, offset);
}

export function deployKeysByFingerprint(q: Q, fingerprint: string): Promise<DeployKeyRow[]> {
  return q
    .selectFrom('deploy_key')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .orderBy('id')
    .execute();
}

export async function deleteDeployKey(q: Q, id: number): Promise<void> {
  await q.deleteFrom('deploy_key').where('id', '=', id).execute();
}
