// Several `anvil web` processes on one database (and one repository root and data directory):
// what one process must tell the others, and which of them does a piece of background work.
//
// - `leases` (cluster_lease): periodic tasks run under a lease, so once per period whichever
//   process's timer fires first; a lease a dead process held runs out after [cluster] LEASE_TIME.
// - The channel (channel.ts) carries topics to every other process at once: `written` after this
//   process wrote to the database (the others drop what they remember of rows: `generation()`),
//   `actions.jobs` when jobs became waiting (runners long-polling another process wake up).
// - Presence: each `anvil web` renews `node:<name>` so start-up recovery knows whether another
//   process may be in the middle of a change.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { onWrite, type Db } from '../db/database.js';
import { transportFor, type Transport } from './channel.js';
import { Leases, isUniqueViolation } from './leases.js';

type Handler = (data: unknown) => void;

interface Message {
  /** The sending process ('' for the transport itself). */
  o: string;
  t: string;
  d?: unknown;
}

export interface ClusterDeps {
  db: Db;
  log: Logger;
  /** [cluster] (and the redis URL of [queue]/[cache]): this process's name, leases, the channel. */
  cluster: Config['cluster'];
  /** [database]: PostgreSQL's LISTEN/NOTIFY is the channel when there is no redis; it names the channel. */
  database: Config['database'];
}

export class Cluster {
  /** This process in messages (unique even if two processes share a NODE_NAME). */
  readonly id: string;
  readonly leases: Leases;
  private readonly transport: Transport;
  private readonly handlers = new Map<string, Set<Handler>>();
  private remote = 0;
  private publishing = false;
  private dirty = false;
  private readonly announcedWaiters: Array<() => void> = [];
  private stopWrites: (() => void) | undefined;
  private presence: NodeJS.Timeout | undefined;
  private closed = false;
  private schedulesStopped = false;
  private timers: NodeJS.Timeout[] = [];

  private readonly db: Db;
  private readonly log: Logger;

  constructor(deps: ClusterDeps) {
    const { db, log, cluster, database } = deps;
    this.db = db;
    this.log = log;
    this.id = `${cluster.nodeName}/${crypto.randomBytes(4).toString('hex')}`;
    this.leases = new Leases(db, cluster.nodeName, cluster.leaseSeconds * 1000);
    this.transport = transportFor({ cluster, database }, log);
    // Every write is announced (coalesced: one message in flight, one more after it if needed),
    // so what other processes remember of rows is dropped as soon as it may be stale.
    if (this.transport.kind !== 'local') this.stopWrites = onWrite(() => this.wrote());
  }

  /** 'redis', 'postgres' or 'local' (no other process to tell). */
  get channel(): Transport['kind'] {
    return this.transport.kind;
  }

  /** Moves whenever another process wrote to the database (caches compare it as they do writeGeneration()). */
  generation(): number {
    return this.remote;
  }

  /** Calls `handler` for `topic` when another process publishes it (and on `reset`: messages may have been lost). */
  on(topic: string, handler: Handler): void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler);
  }

  /** Tells the other processes (fire and forget: a lost message is logged). */
  publish(topic: string, data?: unknown): void {
    if (this.transport.kind === 'local' || this.closed) return;
    const raw = JSON.stringify({ o: this.id, t: topic, ...(data === undefined ? {} : { d: data }) });
    this.transport
      .publish(raw)
      .catch((err: unknown) => this.closed || this.log.warn({ err, topic }, 'cluster: publishing failed'));
  }

  /**
   * Resolves once this process's writes so far have been announced to the others (at once when no
   * announcement is under way). An answer sent after it reaches a client that may ask another
   * node next: that node has been told before the client could ask (a suspended account is
   * refused there at once). Never longer than `maxMs`: a channel that is down delays no answer
   * for long.
   */
  announced(maxMs = 1000): Promise<void> {
    if (!this.publishing || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      timer.unref();
      this.announcedWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private wrote(): void {
    if (this.closed) return;
    if (this.publishing) {
      this.dirty = true;
      return;
    }
    this.publishing = true;
    this.dirty = false;
    const raw = JSON.stringify({ o: this.id, t: 'written' });
    this.transport
      .publish(raw)
      .catch((err: unknown) => this.closed || this.log.warn({ err }, 'cluster: announcing a write failed'))
      .finally(() => {
        this.publishing = false;
        if (this.dirty && !this.closed) return this.wrote();
        for (const resolve of this.announcedWaiters.splice(0)) resolve();
      });
  }

  private receive(raw: string): void {
    let m: Message;
    try {
      m = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    if (m.o === this.id) return;
    // Anything another process says may follow a write this one has not heard of.
    this.remote++;
    const topics = m.t === 'reset' ? [...this.handlers.keys()] : [m.t];
    for (const t of topics) {
      for (const h of this.handlers.get(t) ?? []) {
        try {
          h(m.d);
        } catch (err) {
          this.log.error({ err, topic: t }, 'cluster: a handler failed');
        }
      }
    }
  }

  /** Hears the other processes and keeps this one's presence (anvil web). */
  async start(): Promise<void> {
    await this.transport.listen((raw) => this.receive(raw));
    await this.heartbeat();
    this.presence = setInterval(
      () =>
        void this.heartbeat().catch((err: unknown) => this.log.warn({ err }, 'cluster: heartbeat failed')),
      this.leases.ttlMs / 3,
    );
    this.presence.unref();
  }

  private async heartbeat(): Promise<void> {
    const name = `node:${this.leases.node}`;
    const expires_ms = Date.now() + this.leases.ttlMs;
    const r = await this.db
      .updateTable('cluster_lease')
      .set({ holder: this.id, expires_ms })
      .where('name', '=', name)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return;
    try {
      await this.db
        .insertInto('cluster_lease')
        .values({ name, holder: this.id, expires_ms, started_ms: Date.now() })
        .execute();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }

  /**
   * Runs a periodic task at most once per `periodMs` across processes (a little less, so timers
   * drifting apart do not skip a period); false when another process ran it or is running it.
   */
  async once(name: string, periodMs: number, fn: () => Promise<unknown>): Promise<boolean> {
    const r = await this.leases.run(`task:${name}`, fn, { minGapMs: Math.floor(periodMs * 0.9) });
    return r.ran;
  }

  /**
   * Runs `fn` every `periodMs` (first after `firstMs`) once across processes (`once`), until
   * `stopSchedules()`; `track` reports each run that this process makes (the cron list).
   */
  every(
    name: string,
    periodMs: number,
    fn: () => Promise<unknown>,
    opts: { firstMs?: number; track?: (work: Promise<unknown>) => Promise<unknown> } = {},
  ): void {
    const tick = (first = false) => {
      if (this.closed || this.schedulesStopped) return;
      // A run at start-up (firstMs 0) is for what this process left when it stopped: it runs
      // whatever the lease says (a process killed while running the task may still hold it).
      const work = first && opts.firstMs === 0 ? fn().then(() => true) : this.once(name, periodMs, fn);
      void (opts.track ? opts.track(work) : work).catch((err: unknown) =>
        this.log.error({ err, task: name }, `${name} failed`),
      );
    };
    const interval = setInterval(tick, periodMs);
    const first = setTimeout(() => tick(true), opts.firstMs ?? periodMs);
    interval.unref();
    first.unref();
    this.timers.push(interval, first);
  }

  /** Stops the schedules of `every` (before the services they call stop). */
  stopSchedules(): void {
    this.schedulesStopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stopSchedules();
    this.closed = true;
    this.stopWrites?.();
    clearInterval(this.presence);
    // Leases of work that has just ended are given back before the database closes.
    await this.leases.settled();
    if (this.presence) {
      // Gone: another process need not wait for this one's presence to run out.
      await this.db
        .updateTable('cluster_lease')
        .set({ expires_ms: 0 })
        .where('name', '=', `node:${this.leases.node}`)
        .where('holder', '=', this.id)
        .execute()
        .catch(() => undefined);
    }
    await this.transport.close();
  }
}
