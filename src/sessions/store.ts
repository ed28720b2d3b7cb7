// Queries on web sessions and failed sign-ins. Sessions are looked up by the SHA-256 of the cookie;
// failures by their key (`user:<id>` or `name:<login>`, see throttle.ts) and address.
import type { Db, Tx } from '../db/database.js';
import type { UserRow } from '../users/tables.js';

type Q = Db | Tx;

export async function insert(q: Q, idHash: string, userId: number, now: number, expires: number) {
  await q
    .insertInto('web_session')
    .values({ id_hash: idHash, user_id: userId, created_unix: now, expires_unix: expires })
    .execute();
}

/** The session's user and expiry, when the session exists and has not expired. */
export async function withUser(
  q: Q,
  idHash: string,
  now: number,
): Promise<{ user: UserRow; expires: number } | undefined> {
  const row = await q
    .selectFrom('web_session')
    .innerJoin('user', 'user.id', 'web_session.user_id')
    .selectAll('user')
    .select('web_session.expires_unix as session_expires')
    .where('web_session.id_hash', '=', idHash)
    .where('web_session.expires_unix', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  const { session_expires, ...user } = row;
  return { user: user as UserRow, expires: session_expires };
}

export async function extend(q: Q, idHash: string, expires: number): Promise<void> {
  await q.updateTable('web_session').set({ expires_unix: expires }).where('id_hash', '=', idHash).execute();
}

export async function remove(q: Q, idHash: string): Promise<void> {
  await q.deleteFrom('web_session').where('id_hash', '=', idHash).execute();
}

export async function removeOfUser(q: Q, userId: number, except?: string): Promise<void> {
  let d = q.deleteFrom('web_session').where('user_id', '=', userId);
  if (except) d = d.where('id_hash', '!=', except);
  await d.execute();
}

export async function removeExpired(q: Q, now: number): Promise<number> {
  const r = await q.deleteFrom('web_session').where('expires_unix', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Writes down a failed (or not yet checked) sign-in; its id. */
export async function addFailure(q: Q, login: string, address: string, now: number): Promise<number> {
  const r = await q
    .insertInto('login_failure')
    .values({ login, address, created_unix: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function removeFailure(q: Q, id: number): Promise<void> {
  await q.deleteFrom('login_failure').where('id', '=', id).execute();
}

/** Failures since `since` under the key and, when given, from the address. */
export async function countFailures(
  q: Q,
  login: string,
  address: string | undefined,
  since: number,
): Promise<{ byLogin: number; byAddress: number }> {
  const count = async (column: 'login' | 'address', value: string) => {
    const r = await q
      .selectFrom('login_failure')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where(column, '=', value)
      .where('created_unix', '>', since)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  };
  const [byLogin, byAddress] = await Promise.all([
    count('login', login),
    address === undefined ? 0 : count('address', address),
  ]);
  return { byLogin, byAddress };
}

export async function clearFailures(q: Q, login: string): Promise<void> {
  await q.deleteFrom('login_failure').where('login', '=', login).execute();
}

export async function removeOldFailures(q: Q, before: number): Promise<void> {
  await q.deleteFrom('login_failure').where('created_unix', '<=', before).execute();
}
