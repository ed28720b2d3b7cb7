// Which processes use a data directory, on this machine: every `anvil` process that may have work
// under way in it (`anvil web`, `anvil serv` running git, the admin commands) holds a shared lock
// on `<APP_DATA_PATH>/anvil.lock` for as long as it runs, and the kernel gives it up when the
// process ends, however it ends (a SIGKILL too). A process that can take the lock exclusively, if
// only for a moment, knows that no other process is using the data: what it finds left over of
// interrupted work belongs to a process that died. (Other machines on the same database are
// known by their presence leases: cluster/service.ts.)
//
// The lock is SQLite's, on a file of its own (fcntl locks, through better-sqlite3, already there
// for the database): an open read transaction holds the shared lock; BEGIN EXCLUSIVE takes the
// exclusive one, and with no busy timeout fails at once while anyone holds a shared one.
import fs from 'node:fs';
import path from 'node:path';
import { SQLite, type SqliteDb } from '../db/sqlite-driver.js';

export const LOCK_FILE = 'anvil.lock';
/** How long taking the shared lock waits for another process's moment of exclusive hold. */
const SHARED_WAIT_MS = 10_000;

export class DataLock {
  private constructor(
    private readonly db: SqliteDb | undefined,
    /** No other process held the lock when this one took it (it may be taken since). */
    readonly alone: boolean,
    /** When that was known (ms): leftovers older than this are no running process's. */
    readonly at: number,
  ) {}

  /**
   * Takes the lock of the data directory `dir` and holds it (shared) until `release()` or the
   * end of the process. When the lock cannot be had (a file system without locks), the process
   * is taken not to be alone.
   */
  static take(dir: string): DataLock {
    const at = Date.now();
    let db: SqliteDb | undefined;
    try {
      fs.mkdirSync(dir, { recursive: true });
      db = new SQLite(path.join(dir, LOCK_FILE), { timeout: 0 });
    } catch {
      return new DataLock(undefined, false, at);
    }
    let alone = false;
    try {
      db.exec('BEGIN EXCLUSIVE');
      db.exec('COMMIT');
      alone = true;
    } catch {
      // Held by another process (SQLITE_BUSY).
    }
    try {
      db.pragma(`busy_timeout = ${SHARED_WAIT_MS}`);
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch {
      db.close();
      return new DataLock(undefined, false, at);
    }
    return new DataLock(db, alone, at);
  }

  /** Gives the lock up (a process that ends gives it up anyway). */
  release(): void {
    if (!this.db?.open) return;
    try {
      this.db.exec('COMMIT');
    } finally {
      this.db.close();
    }
  }
}
