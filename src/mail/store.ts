// The mail queue and the mailed codes (tables.ts). The queue is claimed as webhooks' is: an UPDATE
// moves due rows' next attempt past a lease, so of several processes one sends each message.
import type { Db, Tx } from '../db/database.js';
import type { MailCodePurpose, MailCodeRow, MailRow, NewMailRow } from './tables.js';
import { MailStatus } from './tables.js';

type Q = Db | Tx;

export async function insertMails(q: Q, rows: NewMailRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    await q
      .insertInto('mail_queue')
      .values(rows.slice(i, i + 100))
      .execute();
  }
}

/** Claims up to `limit` due messages: their next attempt moves to `leaseUntil`. */
export function claimDue(
  q: Q,
  now: number,
  limit: number,
  leaseUntil: number,
  /** PostgreSQL: rows another process is claiming are passed over, not waited for. */
  skipLocked = false,
): Promise<MailRow[]> {
  return q
    .updateTable('mail_queue')
    .set({ next_attempt_unix: leaseUntil })
    .where('status', '=', MailStatus.pending)
    .where('next_attempt_unix', '<=', now)
    .where('id', 'in', (eb) => {
      const due = eb
        .selectFrom('mail_queue')
        .select('id')
        .where('status', '=', MailStatus.pending)
        .where('next_attempt_unix', '<=', now)
        .orderBy('next_attempt_unix')
        .orderBy('id')
        .limit(limit);
      return skipLocked ? due.forUpdate().skipLocked() : due;
    })
    .returningAll()
    .execute();
}

/**
 * Records the outcome of an attempt on a message this process still holds (its lease unchanged):
 * false when the claim was lost meanwhile (another process took it over).
 */
export async function finish(
  q: Q,
  id: number,
  lease: number,
  patch: {
    status: number;
    attempts: number;
    next_attempt_unix: number;
    last_error: string;
    sent_unix: number;
  },
): Promise<boolean> {
  const r = await q
    .updateTable('mail_queue')
    .set(patch)
    .where('id', '=', id)
    .where('status', '=', MailStatus.pending)
    .where('next_attempt_unix', '=', lease)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Gives claimed messages back: due at `at`. */
export async function release(q: Q, ids: number[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await q
    .updateTable('mail_queue')
    .set({ next_attempt_unix: at })
    .where('id', 'in', ids)
    .where('status', '=', MailStatus.pending)
    .execute();
}

/** When the earliest pending message is due, if any. */
export async function nextDue(q: Q): Promise<number | undefined> {
  const r = await q
    .selectFrom('mail_queue')
    .select('next_attempt_unix')
    .where('status', '=', MailStatus.pending)
    .orderBy('next_attempt_unix')
    .limit(1)
    .executeTakeFirst();
  return r?.next_attempt_unix;
}

/** Sent and given-up messages older than `before` are removed. */
export async function prune(q: Q, before: number): Promise<void> {
  await q
    .deleteFrom('mail_queue')
    .where('status', '<>', MailStatus.pending)
    .where('created_unix', '<', before)
    .execute();
}

// Codes

export async function insertCode(
  q: Q,
  row: {
    user_id: number;
    purpose: MailCodePurpose;
    code_hash: string;
    email: string;
    expires_unix: number;
    created_unix: number;
  },
): Promise<void> {
  await q.insertInto('mail_code').values(row).execute();
}

/** The newest code of `purpose` made for a user, if any (to limit how often one is mailed). */
export function latestCode(q: Q, userId: number, purpose: MailCodePurpose): Promise<MailCodeRow | undefined> {
  return q
    .selectFrom('mail_code')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function codeByHash(q: Q, hash: string): Promise<MailCodeRow | undefined> {
  return q.selectFrom('mail_code').selectAll().where('code_hash', '=', hash).executeTakeFirst();
}

/** Removes a code; true for the one call that removed it (a code is used once). */
export async function deleteCode(q: Q, id: number): Promise<boolean> {
  const r = await q.deleteFrom('mail_code').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Every code of `purpose` of a user goes (after one was used). */
export async function deleteCodesOf(q: Q, userId: number, purpose: MailCodePurpose): Promise<void> {
  await q.deleteFrom('mail_code').where('user_id', '=', userId).where('purpose', '=', purpose).execute();
}

export async function deleteExpiredCodes(q: Q, now: number): Promise<void> {
  await q.deleteFrom('mail_code').where('expires_unix', '<', now).execute();
}
