// Queries on OAuth2 applications. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { OAuth2ApplicationTable } from './tables.js';
import type { OAuth2AppRow } from './tables.js';

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
