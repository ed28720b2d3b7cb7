// Database access: one Kysely instance over better-sqlite3 (the embedded default) or pg, migrated
// to the newest schema at start-up. Every multi-step write goes through `transaction()`.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type KyselyPlugin,
  type QueryId,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import type { Config } from '../config/config.js';
import type { DB } from './schema.js';
import { migrateToLatest } from './migrate.js';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

/**
 * Synchronous reads for hot, fixed queries (see prepared.ts): on SQLite a second, read-only
 * connection, which sees committed data only and never waits behind the writer's queue.
 */
export interface FastReader {
  all(sql: string, params: readonly unknown[]): unknown[];
}

const fastReaders = new WeakMap<object, FastReader>();

// How many writes this process has started or finished: in-memory copies of rows (see
// tokens/service.ts) remember it and are dropped once it has moved. It moves when a query that
// is not a SELECT is built and again when it has run, and when a transaction ends.
let writes = 0;
const running = new WeakSet<QueryId>();

export function writeGeneration(): number {
  return writes;
}

const writeTracker: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    if (node.kind !== 'SelectQueryNode') {
      writes++;
      running.add(queryId);
    }
    return node;
  },
  async transformResult({ result, queryId }) {
    if (running.delete(queryId)) writes++;
    return result;
  },
};

/** The fast reader of a database, never of a transaction (which must read its own writes). */
export function fastReaderOf(q: Db | Tx): FastReader | undefined {
  return q.isTransaction ? undefined : fastReaders.get(q);
}

/** The pg driver, loaded only when PostgreSQL is configured. */
export async function loadPg(): Promise<typeof pg> {
  return (await import('pg')).default;
}

/** int8 and numeric come back from pg as strings; Anvil's counters and sizes fit in a JS number. */
function pgTypes(driver: typeof pg) {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20 || oid === 1700) return (v: string) => Number(v);
      return driver.types.getTypeParser(oid, format);
    },
  };
}

/** Connection settings for a PostgreSQL database (`database` defaults to the configured NAME). */
export function postgresConnection(config: Config['database'], database = config.name): pg.PoolConfig {
  const [host, port] = config.host.startsWith('/') ? [config.host, undefined] : config.host.split(':');
  return {
    host,
    port: port ? Number(port) : 5432,
    database,
    user: config.user,
    password: config.passwd || undefined,
    ssl: config.sslMode === 'disable' ? false : { rejectUnauthorized: config.sslMode === 'verify-full' },
  };
}

export async function openDatabase(config: Config, opts: { migrate?: boolean } = {}): Promise<Database> {
  let db: Db;
  let dialect: Dialect;
  if (config.database.type === 'postgres') {
    const driver = await loadPg();
    const pool = new driver.Pool({ ...postgresConnection(config.database), types: pgTypes(driver), max: 10 });
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [writeTracker] });
    dialect = 'postgres';
  } else {
    fs.mkdirSync(path.dirname(config.database.path), { recursive: true });
    const sqlite = new SQLite(config.database.path);
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    db = new Kysely<DB>({
      dialect: new SqliteDialect({ database: cachingStatements(sqlite) }),
      plugins: [writeTracker],
    });
    dialect = 'sqlite';
  }
  if (opts.migrate !== false) {
    try {
      await migrateToLatest(db, dialect);
    } catch (err) {
      await db.destroy();
      throw err;
    }
  }
  let reader: SQLite.Database | undefined;
  if (dialect === 'sqlite') {
    reader = new SQLite(config.database.path, { readonly: true });
    reader.pragma('busy_timeout = 5000');
    const statements = cachingStatements(reader);
    fastReaders.set(db, { all: (sql, params) => statements.prepare(sql).all(params) });
  }
  return {
    db,
    dialect,
    close: async () => {
      reader?.close();
      await db.destroy();
    },
  };
}

/**
 * better-sqlite3 compiles SQL on every prepare(); Kysely prepares each query it runs. Anvil's
 * queries are a small, fixed set of SQL strings (values are bound parameters), so each compiled
 * statement is kept and reused. Kysely runs a statement to completion before the next one, so
 * sharing a statement is safe.
 */
function cachingStatements(sqlite: SQLite.Database): SqliteDatabase & {
  prepare(sql: string): RowStatement;
} {
  const cache = new Map<string, RowStatement>();
  const MAX = 500;
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = new RowStatement(sqlite.prepare(sql));
        if (cache.size >= MAX) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/**
 * A statement whose rows come out of SQLite as arrays (`raw` mode) and are turned into objects
 * by a function compiled for its columns: better-sqlite3 builds an object row property by
 * property, which for a 30-column row costs more than the indexed lookup that found it.
 */
class RowStatement {
  readonly reader: boolean;
  private readonly toRow: ((values: unknown[]) => Record<string, unknown>) | undefined;

  constructor(private readonly stmt: SQLite.Statement) {
    this.reader = stmt.reader;
    if (this.reader) {
      stmt.raw(true);
      const fields = stmt.columns().map((c, i) => `${JSON.stringify(c.name)}: v[${i}]`);
      // Column names come from Anvil's own SQL; JSON.stringify quotes them safely either way.
      this.toRow = new Function('v', `return { ${fields.join(', ')} };`) as (
        values: unknown[],
      ) => Record<string, unknown>;
    }
  }

  all(parameters: readonly unknown[]): unknown[] {
    return (this.stmt.all(parameters) as unknown[][]).map(this.toRow!);
  }

  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.stmt.run(parameters);
  }

  *iterate(parameters: readonly unknown[]): IterableIterator<unknown> {
    for (const values of this.stmt.iterate(parameters) as IterableIterator<unknown[]>)
      yield this.toRow!(values);
  }
}

/**
 * Runs `fn` in one transaction; when `q` already is a transaction, `fn` joins it. This is the only
 * way Anvil writes more than one row for one change, so nothing is ever half-written.
 */
export async function transaction<T>(q: Db | Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (q.isTransaction) return fn(q as Tx);
  try {
    return await q.transaction().execute(fn);
  } finally {
    writes++;
  }
}

/** Seconds since the epoch, the unit of every *_unix column. */
export function nowUnix(): number {
  return Math.floor(Date.now() / 1000);
}
