// Which database errors run a transaction again or wait for SQLite's lock, and the backoff between tries.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, busyError, retryableError, uniqueViolation } from '../../src/db/retry.js';

describe('db retry', () => {
  it('retryableError: PostgreSQL deadlocks (40P01) and serialization failures (40001) only', () => {
    assert.equal(retryableError(Object.assign(new Error('deadlock detected'), { code: '40P01' })), true);
    assert.equal(retryableError(Object.assign(new Error('could not serialize'), { code: '40001' })), true);
    for (const code of ['23505', '23503', '57014', '40002', 'SQLITE_BUSY', 40001, undefined]) {
      assert.equal(retryableError(Object.assign(new Error('x'), { code })), false, String(code));
    }
    for (const err of [null, undefined, 'deadlock detected', 40001]) assert.equal(retryableError(err), false);
  });

  it('retryableError: MySQL deadlocks (1213) and lock wait timeouts (1205), not other MySQL errors', () => {
    for (const code of ['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'])
      assert.equal(retryableError(Object.assign(new Error('x'), { code })), true, code);
    for (const code of ['ER_DUP_ENTRY', 'ER_NO_REFERENCED_ROW_2', 'ER_PARSE_ERROR'])
      assert.equal(retryableError(Object.assign(new Error('x'), { code })), false, code);
  });

  it('uniqueViolation: on every database, and nothing else', () => {
    for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'ER_DUP_ENTRY'])
      assert.equal(uniqueViolation(Object.assign(new Error('x'), { code })), true, code);
    for (const code of ['23503', 'SQLITE_CONSTRAINT_FOREIGNKEY', 'ER_LOCK_DEADLOCK', undefined])
      assert.equal(uniqueViolation(Object.assign(new Error('x'), { code })), false, String(code));
    assert.equal(uniqueViolation(null), false);
  });

  it('busyError: SQLITE_BUSY and its extended codes, not other SQLite errors', () => {
    for (const code of [
      'SQLITE_BUSY',
      'SQLITE_BUSY_RECOVERY',
      'SQLITE_BUSY_SNAPSHOT',
      'SQLITE_BUSY_TIMEOUT',
    ]) {
      assert.equal(busyError(Object.assign(new Error('database is locked'), { code })), true, code);
    }
    for (const code of ['SQLITE_LOCKED', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_IOERR', '40P01', undefined]) {
      assert.equal(busyError(Object.assign(new Error('x'), { code })), false, String(code));
    }
    assert.equal(busyError(null), false);
  });

  it('backoffMs doubles from the first wait up to the cap, between half and all of it', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 40].map((a) => backoffMs(a, 2, 50, () => 1)),
      [2, 4, 8, 16, 32, 50, 50, 50],
    );
    assert.deepEqual(
      [0, 1, 5, 1000].map((a) => backoffMs(a, 2, 50, () => 0)),
      [1, 2, 25, 25],
    );
    for (let a = 0; a < 20; a++) {
      const ms = backoffMs(a, 5, 100);
      const full = Math.min(100, 5 * 2 ** a);
      assert.ok(ms >= full / 2 && ms <= full, `${a}: ${ms}`);
    }
  });
});
