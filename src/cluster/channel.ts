// The channel between the Anvil processes of one site: short messages every process hears at once.
// Redis pub/sub when [queue] TYPE (or [cache] ADAPTER) is redis; PostgreSQL's LISTEN/NOTIFY when
// the database is PostgreSQL; nothing on SQLite (one process). Each transport only moves strings;
// cluster/service.ts gives them topics and drops a process's own messages.
import crypto from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { loadPg, postgresConnection } from '../db/database.js';
type RedisClass = typeof import('ioredis').Redis;

export interface Transport {
  readonly kind: 'redis' | 'postgres' | 'local';
  /** Starts hearing messages (anvil web); publishing works without it. */
  listen(onMessage: (raw: string) => void): Promise<void>;
  publish(raw: string): Promise<void>;
  close(): Promise<void>;
}

/** The settings that choose the channel: [queue]/[cache] (as `cluster`) and [database]. */
export type ChannelSettings = Pick<Config, 'cluster' | 'database'>;

/** The channel's name: the same for every process of one site (its database), distinct per site. */
export function channelName(config: Pick<Config, 'database'>): string {
  const d = config.database;
  const site =
    d.type === 'postgres'
      ? `pg:${d.host}/${d.name}`
      : d.type === 'mysql'
        ? `mysql:${d.host}/${d.name}`
        : `sqlite:${d.path}`;
  return `anvil_${crypto.createHash('sha256').update(site).digest('hex').slice(0, 16)}`;
}

export function transportFor(config: ChannelSettings, log: Logger): Transport {
  if (config.cluster.redisUrl) return new RedisTransport(config.cluster.redisUrl, channelName(config), log);
  if (config.database.type === 'postgres') return new PgTransport(config.database, channelName(config), log);
  return new LocalTransport();
}

/** One process: nothing to tell anyone. */
class LocalTransport implements Transport {
  readonly kind = 'local' as const;
  async listen(): Promise<void> {}
  async publish(): Promise<void> {}
  async close(): Promise<void> {}
}

/**
 * Connection options from a Forgejo-style redis URL (`redis://user:pass@host:6379/0?pool_size=100`):
 * host, port, database number and credentials; query parameters (Forgejo's pool settings) are ignored.
 */
export function redisOptions(url: string): {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: object;
} {
  const u = new URL(url);
  const db = Number(u.pathname.replace(/^\//, '') || '0');
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    db: Number.isInteger(db) && db >= 0 ? db : 0,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

class RedisTransport implements Transport {
  readonly kind = 'redis' as const;
  private pub: Promise<import('ioredis').Redis> | undefined;
  private sub: import('ioredis').Redis | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly log: Logger,
  ) {}

  private async client(): Promise<import('ioredis').Redis> {
    // ioredis is CommonJS: its class is `Redis` on the module, or the module itself once bundled.
    const mod = (await import('ioredis')) as unknown as {
      Redis?: RedisClass;
      default?: RedisClass & { Redis?: RedisClass };
    };
    const Redis = mod.Redis ?? mod.default?.Redis ?? mod.default;
    if (!Redis) throw new Error('ioredis did not load');
    const c = new Redis({ ...redisOptions(this.url), lazyConnect: true, maxRetriesPerRequest: 3 });
    c.on('error', (err: Error) => this.log.warn({ err }, 'redis (cluster channel)'));
    await c.connect();
    return c;
  }

  async listen(onMessage: (raw: string) => void): Promise<void> {
    if (this.sub) return;
    this.sub = await this.client();
    this.sub.on('message', (_ch: string, raw: string) => onMessage(raw));
    await this.sub.subscribe(this.channel);
  }

  async publish(raw: string): Promise<void> {
    if (this.closed) return;
    this.pub ??= this.client();
    this.pub.catch(() => (this.pub = undefined));
    await (await this.pub).publish(this.channel, raw);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pub = await this.pub?.catch(() => undefined);
    const clients = [pub, this.sub].filter((c) => c !== undefined);
    this.pub = undefined;
    this.sub = undefined;
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

/**
 * LISTEN/NOTIFY on one connection of its own (not the pool's: a listening connection must stay
 * open, and NOTIFY through Kysely would count as a write). Reconnects when the connection drops.
 */
class PgTransport implements Transport {
  readonly kind = 'postgres' as const;
  private conn: Promise<pg.Client> | undefined;
  private onMessage: ((raw: string) => void) | undefined;
  private closed = false;

  constructor(
    private readonly database: Config['database'],
    private readonly channel: string,
    private readonly log: Logger,
  ) {}

  private connect(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the cluster channel is closed'));
    this.conn ??= (async () => {
      const driver = await loadPg();
      const c = new driver.Client(postgresConnection(this.database));
      c.on('error', (err) => {
        this.log.warn({ err }, 'postgres (cluster channel): connection lost');
        this.conn = undefined;
        // Listening again: messages sent meanwhile are lost, so caches are dropped (see service.ts).
        if (this.onMessage && !this.closed) {
          setTimeout(() => void this.relisten(), 500).unref();
        }
      });
      c.on('notification', (n) => {
        if (n.channel === this.channel && n.payload !== undefined) this.onMessage?.(n.payload);
      });
      await c.connect();
      if (this.onMessage) await c.query(`LISTEN ${this.channel}`);
      return c;
    })();
    this.conn.catch(() => (this.conn = undefined));
    return this.conn;
  }

  private async relisten(): Promise<void> {
    if (this.closed) return;
    try {
      await this.connect();
      this.onMessage?.(JSON.stringify({ o: '', t: 'reset' }));
    } catch (err) {
      this.log.warn({ err }, 'postgres (cluster channel): reconnecting failed');
      setTimeout(() => void this.relisten(), 2000).unref();
    }
  }

  async listen(onMessage: (raw: string) => void): Promise<void> {
    if (this.onMessage) return;
    this.onMessage = onMessage;
    const c = await this.connect();
    await c.query(`LISTEN ${this.channel}`);
  }

  async publish(raw: string): Promise<void> {
    const c = await this.connect();
    await c.query('SELECT pg_notify($1, $2)', [this.channel, raw]);
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.conn;
    this.conn = undefined;
    if (c) await (await c).end().catch(() => undefined);
  }
}
