// Queries on OAuth2 applications, grants and authorization codes. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { UserRow } from '../users/tables.js';
import type {
  OAuth2ApplicationTable,
  OAuth2AppRow,
  OAuth2AuthorizationCodeTable,
  OAuth2CodeRow,
  OAuth2GrantListed,
  OAuth2GrantRow,
  OAuth2GrantTable,
} from './tables.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<OAuth2ApplicationTable>): Promise<number> {
  const r = await q.insertInto('oauth2_application').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

/** The application `id` when `uid` registered it. */
export function getOfUser(q: Q, uid: number, id: number): Promise<OAuth2AppRow | undefined> {
  return q
    .selectFrom('oauth2_application')
    .selectAll()
    .where('uid', '=', uid)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listOfUser(
  q: Q,
  uid: number,
  limit: number,
  offset: number,
): Promise<[OAuth2AppRow[], number]> {
  return paged(
    q.selectFrom('oauth2_application').selectAll().where('uid', '=', uid).orderBy('id'),
    limit,
    offset,
  );
}

export async function update(q: Q, id: number, patch: Updateable<OAuth2ApplicationTable>): Promise<void> {
  await q.updateTable('oauth2_application').set(patch).where('id', '=', id).execute();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('oauth2_application').where('id', '=', id).execute();
}

export function getByClientId(q: Q, clientId: string): Promise<OAuth2AppRow | undefined> {
  return q.selectFrom('oauth2_application').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export function getById(q: Q, id: number): Promise<OAuth2AppRow | undefined> {
  return q.selectFrom('oauth2_application').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Makes every token of the application's grants invalid (their generation moves on) and drops its
 * codes not yet redeemed: its client secret changed.
 */
export async function invalidateIssued(q: Q, appId: number): Promise<void> {
  await q
    .updateTable('oauth2_grant')
    .set((eb) => ({ generation: eb('generation', '+', 1) }))
    .where('application_id', '=', appId)
    .execute();
  await q
    .deleteFrom('oauth2_authorization_code')
    .where('grant_id', 'in', (eb) =>
      eb.selectFrom('oauth2_grant').select('id').where('application_id', '=', appId),
    )
    .execute();
}

/** The name of the account `uid` (who registered an application). */
export function userName(q: Q, uid: number): Promise<{ name: string } | undefined> {
  return q.selectFrom('user').select('name').where('id', '=', uid).executeTakeFirst();
}

// ---- grants ----

export function grantOf(q: Q, userId: number, appId: number): Promise<OAuth2GrantRow | undefined> {
  return q
    .selectFrom('oauth2_grant')
    .selectAll()
    .where('user_id', '=', userId)
    .where('application_id', '=', appId)
    .executeTakeFirst();
}

export function grantById(q: Q, id: number): Promise<OAuth2GrantRow | undefined> {
  return q.selectFrom('oauth2_grant').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Inserts the grant unless the user already has one for the application (then leaves it). */
export async function insertGrantIfAbsent(q: Q, row: Insertable<OAuth2GrantTable>): Promise<void> {
  await q
    .insertInto('oauth2_grant')
    .values(row)
    .onConflict((oc) => oc.columns(['user_id', 'application_id']).doNothing())
    .execute();
}

export async function updateGrant(q: Q, id: number, patch: Updateable<OAuth2GrantTable>): Promise<void> {
  await q.updateTable('oauth2_grant').set(patch).where('id', '=', id).execute();
}

/** Raises the grant's counter from `expected`; false when it was no longer `expected` (a race, a replay). */
export async function advanceCounter(q: Q, id: number, expected: number, now: number): Promise<boolean> {
  const r = await q
    .updateTable('oauth2_grant')
    .set({ counter: expected + 1, updated_unix: now })
    .where('id', '=', id)
    .where('counter', '=', expected)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Deletes the grant (with its codes); `userId` limits it to that user's. */
export async function removeGrant(q: Q, id: number, userId?: number): Promise<boolean> {
  let del = q.deleteFrom('oauth2_grant').where('id', '=', id);
  if (userId !== undefined) del = del.where('user_id', '=', userId);
  const r = await del.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export function grantsOfUser(q: Q, userId: number): Promise<OAuth2GrantListed[]> {
  return q
    .selectFrom('oauth2_grant')
    .innerJoin('oauth2_application', 'oauth2_application.id', 'oauth2_grant.application_id')
    .selectAll('oauth2_grant')
    .select('oauth2_application.name as application_name')
    .where('oauth2_grant.user_id', '=', userId)
    .orderBy('oauth2_grant.id')
    .execute();
}

/** The grant `id` with its user, in one indexed lookup (each request with an OAuth2 access token). */
export async function grantWithUser(
  q: Q,
  id: number,
): Promise<
  { grant: Pick<OAuth2GrantRow, 'id' | 'application_id' | 'generation' | 'scope'>; user: UserRow } | undefined
> {
  const row = await q
    .selectFrom('oauth2_grant')
    .innerJoin('user', 'user.id', 'oauth2_grant.user_id')
    .selectAll('user')
    .select([
      'oauth2_grant.id as grant_id',
      'oauth2_grant.application_id as grant_application_id',
      'oauth2_grant.generation as grant_generation',
      'oauth2_grant.scope as grant_scope',
    ])
    .where('oauth2_grant.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { grant_id, grant_application_id, grant_generation, grant_scope, ...user } = row;
  return {
    grant: {
      id: grant_id,
      application_id: grant_application_id,
      generation: grant_generation,
      scope: grant_scope,
    },
    user,
  };
}

// ---- authorization codes ----

export async function insertCode(q: Q, row: Insertable<OAuth2AuthorizationCodeTable>): Promise<void> {
  await q.insertInto('oauth2_authorization_code').values(row).execute();
}

export function codeByHash(q: Q, codeHash: string): Promise<OAuth2CodeRow | undefined> {
  return q
    .selectFrom('oauth2_authorization_code')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
}

/** Marks the code redeemed; false when it already was (another request redeemed it first). */
export async function redeemCode(q: Q, id: number, now: number): Promise<boolean> {
  const r = await q
    .updateTable('oauth2_authorization_code')
    .set({ used_unix: now })
    .where('id', '=', id)
    .where('used_unix', '=', 0)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function removeExpiredCodes(q: Q, now: number): Promise<void> {
  await q.deleteFrom('oauth2_authorization_code').where('valid_until', '<', now).execute();
}
