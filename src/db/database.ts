// Database access: one Kysely instance over better-sqlite3 (the embedded default), pg or mysql2
// (MariaDB/MySQL, see mysql.ts), migrated
// to the newest schema at start-up. Every multi-step write goes through `transaction()`.
//
// SQLite has one writer at a time across every connection and process. A transaction begins
// IMMEDIATE (it takes the write lock at BEGIN, never upgrades later, where SQLite would answer
// SQLITE_BUSY at once); a statement that finds the lock held waits for it without blocking the
// event loop (see WriterConnection) for up to BUSY_BUDGET_MS. On PostgreSQL a transaction that
// loses a deadlock or a serialization check runs again (retry.ts).
import fs from 'node:fs';
import path from 'node:path';
import { SQLite, type SqliteDb, type SqliteStatement } from './sqlite-driver.js';
import type pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect as KyselyDialect,
  type DialectAdapter,
  type Driver,
  type KyselyPlugin,
  type QueryCompiler,
  type QueryId,
  type QueryResult,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import type { Config } from '../config/config.js';
import { AppError } from '../errors.js';
import type { DB } from './schema.js';
import type { Dialect } from './dialect.js';
import { migrateToLatest } from './migrate.js';
import { AnvilMysqlDialect, loadMysql, mysqlConnection, mysqlPlugin, mysqlSessionSetup } from './mysql.js';
import { BUSY_BUDGET_MS, TRANSACTION_ATTEMPTS, backoffMs, busyError, retryableError } from './retry.js';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
export type { Dialect };

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

const writeListeners = new Set<() => void>();

/** Calls `listener` whenever the write generation moves (cluster/service.ts tells other nodes). */
export function onWrite(listener: () => void): () => void {
  writeListeners.add(listener);
  return () => writeListeners.delete(listener);
}

function wrote(): void {
  writes++;
  for (const l of writeListeners) l();
}

const writeTracker: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    if (node.kind !== 'SelectQueryNode') {
      wrote();
      running.add(queryId);
    }
    return node;
  },
  async transformResult({ result, queryId }) {
    if (running.delete(queryId)) wrote();
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
  } else if (config.database.type === 'mysql') {
    const driver = await loadMysql();
    const { charset } = config.database;
    const pool = driver.createPool({ ...mysqlConnection(config.database), connectionLimit: 10 });
    db = new Kysely<DB>({
      dialect: new AnvilMysqlDialect({
        pool,
        onCreateConnection: async (c) => {
          for (const stmt of mysqlSessionSetup(charset)) await c.executeQuery(CompiledQuery.raw(stmt));
        },
      }),
      plugins: [mysqlPlugin(charset), writeTracker],
    });
    dialect = 'mysql';
  } else {
    fs.mkdirSync(path.dirname(config.database.path), { recursive: true });
    const sqlite = new SQLite(config.database.path);
    sqlite.pragma(`busy_timeout = ${BUSY_BUDGET_MS}`);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    // From here on a busy lock is waited for by WriterConnection, between turns of the event loop.
    sqlite.pragma('busy_timeout = 0');
    db = new Kysely<DB>({ dialect: new SqliteWriterDialect(sqlite), plugins: [writeTracker] });
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
  let reader: SqliteDb | undefined;
  if (dialect === 'sqlite') {
    reader = new SQLite(config.database.path, { readonly: true });
    reader.pragma(`busy_timeout = ${BUSY_BUDGET_MS}`);
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
function cachingStatements(sqlite: SqliteDb): SqliteDatabase & {
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

  constructor(private readonly stmt: SqliteStatement) {
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
 *
 * On PostgreSQL and MySQL a deadlock or serialization failure (or, on MySQL, a lock wait timeout) rolls the transaction back and runs `fn` again
 * on a fresh one (up to TRANSACTION_ATTEMPTS times), so `fn` must do nothing outside the database
 * that a second run would repeat. On SQLite the transaction begins IMMEDIATE (SqliteWriterDriver).
 */
export async function transaction<T>(q: Db | Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (q.isTransaction) return fn(q as Tx);
  for (let attempt = 1; ; attempt++) {
    try {
      return await q.transaction().execute(fn);
    } catch (err) {
      if (!retryableError(err)) throw err;
      if (attempt >= TRANSACTION_ATTEMPTS) throw busy();
    } finally {
      wrote();
    }
    await sleep(backoffMs(attempt - 1, 5, 100));
  }
}

function busy(): AppError {
  return new AppError('unavailable', 'The database is busy; try again later.');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Kysely's SQLite dialect with SqliteWriterDriver in place of its driver. */
class SqliteWriterDialect implements KyselyDialect {
  constructor(private readonly sqlite: SqliteDb) {}

  createDriver(): Driver {
    return new SqliteWriterDriver(this.sqlite, cachingStatements(this.sqlite));
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/**
 * Kysely's SQLite driver (one connection, taken in turn) except that transactions begin IMMEDIATE
 * and that a statement finding the write lock held waits for it (WriterConnection).
 */
class SqliteWriterDriver implements Driver {
  readonly #turn = new Turn();
  readonly #connection: WriterConnection;
  readonly #statements: SqliteDatabase;
  // Savepoints are compiled and run as Kysely's own driver does; it needs no state for that.
  readonly #savepoints: SqliteDriver;

  constructor(sqlite: SqliteDb, statements: SqliteDatabase & { prepare(sql: string): RowStatement }) {
    this.#statements = statements;
    this.#connection = new WriterConnection(sqlite, statements, this.#turn);
    this.#savepoints = new SqliteDriver({ database: statements });
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turn.take();
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    await this.#connection.executeQuery(BEGIN);
  }

  async commitTransaction(): Promise<void> {
    await this.#connection.executeQuery(COMMIT);
  }

  async rollbackTransaction(): Promise<void> {
    await this.#connection.executeQuery(ROLLBACK);
  }

  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepoints.savepoint(c, name, compile);
  }

  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.#savepoints.rollbackToSavepoint(c, name, compile);
  }

  releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.#savepoints.releaseSavepoint(c, name, compile);
  }

  async releaseConnection(): Promise<void> {
    this.#turn.give();
  }

  async destroy(): Promise<void> {
    this.#statements.close();
  }
}

const BEGIN = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/**
 * The writer connection. The connection's busy timeout is 0: a statement outside a transaction
 * (BEGIN IMMEDIATE included) that finds another connection's write lock fails at once with
 * SQLITE_BUSY, and is tried again after a short timer, with the connection's turn handed back
 * meanwhile so that other queries (reads do not need the lock) run, until BUSY_BUDGET_MS have
 * passed. better-sqlite3's own busy wait would stop the whole process for as long.
 */
class WriterConnection implements DatabaseConnection {
  constructor(
    private readonly sqlite: SqliteDb,
    private readonly statements: { prepare(sql: string): RowStatement },
    private readonly turn: Turn,
  ) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.run<R>(compiled));
    } catch (err) {
      if (!busyError(err) || this.sqlite.inTransaction) return Promise.reject(err);
      return this.waitAndRun<R>(compiled, Date.now());
    }
  }

  private async waitAndRun<R>(compiled: CompiledQuery, since: number): Promise<QueryResult<R>> {
    for (let attempt = 0; ; attempt++) {
      const wait = backoffMs(attempt, 2, 50);
      if (Date.now() + wait - since > BUSY_BUDGET_MS) throw busy();
      // The caller holds this connection's turn; another query may have it while this one waits.
      this.turn.give();
      await sleep(wait);
      await this.turn.take();
      try {
        return this.run<R>(compiled);
      } catch (err) {
        if (!busyError(err) || this.sqlite.inTransaction) throw err;
      }
    }
  }

  private run<R>(compiled: CompiledQuery): QueryResult<R> {
    const stmt = this.statements.prepare(compiled.sql);
    if (stmt.reader) return { rows: stmt.all(compiled.parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(compiled.parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const stmt = this.statements.prepare(compiled.sql);
    for (const row of stmt.iterate(compiled.parameters)) yield { rows: [row as R] };
  }
}

/** Whose turn it is on the one SQLite connection (Kysely's driver has the same mutex inside). */
class Turn {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  async take(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  give(): void {
    const release = this.#release;
    this.#held = undefined;
    this.#release = undefined;
    release?.();
  }
}

/** Seconds since the epoch, the unit of every *_unix column. */
export function nowUnix(): number {
  return Math.floor(Date.now() / 1000);
}
