// When a database error is worth running a whole transaction again, and how long to wait first.
// Pure, so that transaction() (database.ts) and the tests share one answer.

/** Attempts a transaction gets on PostgreSQL when it loses a deadlock or a serialization check. */
export const TRANSACTION_ATTEMPTS = 5;

/** How long a write waits for SQLite's write lock while another connection or process holds it. */
export const BUSY_BUDGET_MS = 5000;

/**
 * PostgreSQL aborts one transaction of a deadlock (40P01) and, under REPEATABLE READ or
 * SERIALIZABLE, one that read what another changed (40001); run again, it sees the other's commit.
 * MySQL's are ER_LOCK_DEADLOCK (1213) and ER_LOCK_WAIT_TIMEOUT (1205).
 */
export function retryableError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return (
    code === '40P01' || code === '40001' || code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT'
  );
}

/** A unique index refused a row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE, MySQL 1062). */
export function uniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'ER_DUP_ENTRY'
  );
}

/** SQLite's answer when another connection holds the lock a statement needs. */
export function busyError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/**
 * Milliseconds to wait before attempt `attempt + 1` (from 0): doubling from `first`, at most
 * `cap`, between half and all of it at random so that waiters do not come back in step.
 */
export function backoffMs(attempt: number, first: number, cap: number, random = Math.random): number {
  const full = Math.min(cap, first * 2 ** Math.min(attempt, 30));
  return full / 2 + (full / 2) * random();
}
