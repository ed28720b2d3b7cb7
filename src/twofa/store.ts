// Queries on TOTP enrolments (two_factor).
import type { Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { TwoFactorRow, TwoFactorTable } from './tables.js';

type Q = Db | Tx;

export function byUser(q: Q, uid: number): Promise<TwoFactorRow | undefined> {
  return q.selectFrom('two_factor').selectAll().where('uid', '=', uid).executeTakeFirst();
}

export async function insert(q: Q, row: Insertable<TwoFactorTable>): Promise<void> {
  await q.insertInto('two_factor').values(row).execute();
}

export async function setScratch(
  q: Q,
  uid: number,
  salt: string,
  hash: string,
  now: number,
): Promise<boolean> {
  const r = await q
    .updateTable('two_factor')
    .set({ scratch_salt: salt, scratch_hash: hash, updated_unix: now })
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Clears the recovery code when it is still the one whose hash was checked: true for the one
 * request that used it, false for any other that presented it at the same moment.
 */
export async function useScratch(q: Q, uid: number, hash: string, now: number): Promise<boolean> {
  const r = await q
    .updateTable('two_factor')
    .set({ scratch_salt: '', scratch_hash: '', updated_unix: now })
    .where('uid', '=', uid)
    .where('scratch_hash', '=', hash)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Records `passcode` of time step `step` as used, only when no later or equal step was used
 * before: true when this request is the one that used it (a replay, or a parallel request with
 * the same code, changes no row).
 */
export async function consumeStep(
  q: Q,
  uid: number,
  step: number,
  passcode: string,
  now: number,
): Promise<boolean> {
  const r = await q
    .updateTable('two_factor')
    .set({ last_used_step: step, last_used_passcode: passcode, updated_unix: now })
    .where('uid', '=', uid)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function remove(q: Q, uid: number): Promise<boolean> {
  const r = await q.deleteFrom('two_factor').where('uid', '=', uid).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
