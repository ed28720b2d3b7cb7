// Leases in the database (cluster_lease): a named piece of background work is done by the one
// process that took its lease, and by another once the lease has run out unrenewed (its holder
// died). Taking one is a single conditional UPDATE (or the INSERT of the first row, where a unique
// key violation means another process was first), so it is atomic on every database without
// dialect-specific SQL. On SQLite there is one process and the lease is always won.
import crypto from 'node:crypto';
import type { Db } from '../db/database.js';

/** A duplicate key: another process inserted the row first. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'ER_DUP_ENTRY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

export interface Lease {
  name: string;
  /** This acquisition (`<node>/<random>`). */
  holder: string;
}

export class Leases {
  private readonly inFlight = new Set<Promise<unknown>>();
  constructor(
    private readonly db: Db,
    readonly node: string,
    /** How long a lease lasts unrenewed. */
    readonly ttlMs: number,
  ) {}

  /**
   * Takes `name` unless another process holds it, or it was last taken less than `minGapMs` ago
   * (a periodic task another node has just run). Undefined when not taken.
   */
  async acquire(name: string, opts: { minGapMs?: number; ttlMs?: number } = {}): Promise<Lease | undefined> {
    const now = Date.now();
    const holder = `${this.node}/${crypto.randomBytes(6).toString('hex')}`;
    const values = { holder, expires_ms: now + (opts.ttlMs ?? this.ttlMs), started_ms: now };
    const r = await this.db
      .updateTable('cluster_lease')
      .set(values)
      .where('name', '=', name)
      .where('expires_ms', '<=', now)
      .where('started_ms', '<=', now - (opts.minGapMs ?? 0))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return { name, holder };
    const exists = await this.db
      .selectFrom('cluster_lease')
      .select('name')
      .where('name', '=', name)
      .executeTakeFirst();
    if (exists) return undefined;
    try {
      await this.db
        .insertInto('cluster_lease')
        .values({ name, ...values })
        .execute();
      return { name, holder };
    } catch (err) {
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
  }

  /** Extends a lease still held; false when it was lost (ran out and another process took it). */
  async renew(lease: Lease, ttlMs = this.ttlMs): Promise<boolean> {
    const r = await this.db
      .updateTable('cluster_lease')
      .set({ expires_ms: Date.now() + ttlMs })
      .where('name', '=', lease.name)
      .where('holder', '=', lease.holder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Gives a lease back at once (the next process need not wait for it to run out). */
  async release(lease: Lease): Promise<void> {
    await this.db
      .updateTable('cluster_lease')
      .set({ expires_ms: 0 })
      .where('name', '=', lease.name)
      .where('holder', '=', lease.holder)
      .execute();
  }

  /**
   * Runs `fn` under the lease `name`, renewed every third of its length while `fn` runs;
   * `ran: false` without running it when the lease is held elsewhere (or was taken within `minGapMs`).
   */
  async run<T>(
    name: string,
    fn: () => Promise<T>,
    opts: { minGapMs?: number } = {},
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    const work = this.runLeased(name, fn, opts);
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }

  /** Resolves when the runs under way have ended and given their leases back. */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private async runLeased<T>(
    name: string,
    fn: () => Promise<T>,
    opts: { minGapMs?: number },
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    const lease = await this.acquire(name, opts);
    if (!lease) return { ran: false };
    const timer = setInterval(() => void this.renew(lease).catch(() => undefined), this.ttlMs / 3);
    timer.unref();
    try {
      return { ran: true, value: await fn() };
    } finally {
      clearInterval(timer);
      await this.release(lease).catch(() => undefined);
    }
  }

  /**
   * Runs `fn` under the lease `name`, waiting for it (polling) while another process holds it:
   * work on one thing (a mirror's repository) is never done by two processes at once.
   */
  async exclusive<T>(name: string, fn: () => Promise<T>, waitMs = 10 * 60_000): Promise<T> {
    const deadline = Date.now() + waitMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      const r = await this.run(name, fn);
      if (r.ran) return r.value;
      if (Date.now() > deadline) throw new Error(`${name} is held by another process`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** The other processes alive (their `node:` leases not run out). */
  async othersAlive(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('cluster_lease')
      .select('name')
      .where('name', 'like', 'node:%')
      .where('expires_ms', '>', Date.now())
      .where('name', '!=', `node:${this.node}`)
      .execute();
    return rows.map((r) => r.name.slice('node:'.length));
  }
}
