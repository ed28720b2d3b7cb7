// Queries on access tokens. Tokens are looked up by the SHA-256 of their value.
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import { preparedQuery } from '../db/prepared.js';
import type { AccessTokenTable } from './tables.js';
import type { UserRow } from '../users/tables.js';
import type { TokenRow } from './tables.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<AccessTokenTable>): Promise<number> {
  const r = await q.insertInto('access_token').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export function getByName(q: Q, uid: number, name: string): Promise<TokenRow | undefined> {
  return q
    .selectFrom('access_token')
    .selectAll()
    .where('uid', '=', uid)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function getById(q: Q, uid: number, id: number): Promise<TokenRow | undefined> {
  return q
    .selectFrom('access_token')
    .selectAll()
    .where('uid', '=', uid)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listOfUser(q: Q, uid: number, limit: number, offset: number): Promise<[TokenRow[], number]> {
  return paged(q.selectFrom('access_token').selectAll().where('uid', '=', uid).orderBy('id'), limit, offset);
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('access_token').where('id', '=', id).execute();
}

const withUserByHash = preparedQuery((q, tokenHash: string) =>
  q
    .selectFrom('access_token')
    .innerJoin('user', 'user.id', 'access_token.uid')
    .selectAll('user')
    .select([
      'access_token.id as token_id',
      'access_token.scope as token_scope',
      'access_token.token_hash as token_hash',
      'access_token.updated_unix as token_updated_unix',
    ])
    .where('access_token.token_hash', '=', tokenHash),
);

/** The token with this hash and its owner, in one indexed lookup. */
export async function findWithUser(
  q: Q,
  tokenHash: string,
): Promise<
  { token: Pick<TokenRow, 'id' | 'scope' | 'token_hash' | 'updated_unix'>; user: UserRow } | undefined
> {
  const row = (await withUserByHash(q, tokenHash))[0];
  if (!row) return undefined;
  const { token_id, token_scope, token_hash, token_updated_unix, ...user } = row;
  return {
    token: { id: token_id, scope: token_scope, token_hash, updated_unix: token_updated_unix },
    user,
  };
}

export async function touch(q: Q, id: number, now: number): Promise<void> {
  await q.updateTable('access_token').set({ updated_unix: now }).where('id', '=', id).execute();
}
