// MariaDB / MySQL: Kysely's MysqlDialect over mysql2, made to accept the SQL Anvil's stores and
// migrations write for SQLite and PostgreSQL, so that no store needs to know it is on MySQL.
//
// - Every connection runs with sql_mode ANSI_QUOTES ("user" is an identifier, as in the
//   migrations' raw SQL) and PIPES_AS_CONCAT (|| concatenates), strict, in UTC, READ COMMITTED
//   (PostgreSQL's default: a statement sees what others committed before it), and the binary
//   collation of the configured character set (names compare case-sensitively, as elsewhere;
//   Anvil keeps lower_* columns for case-insensitive look-ups).
// - The plugin (mysqlPlugin) rewrites INSERT … ON CONFLICT DO NOTHING into INSERT IGNORE and
//   ON CONFLICT DO UPDATE into ON DUPLICATE KEY UPDATE (`excluded.col` becomes VALUES(col)); in
//   CREATE TABLE a text column under a unique or primary key becomes varchar(255) (MySQL cannot
//   index TEXT without a prefix) and the table gets the character set and collation; a partial
//   index (CREATE INDEX … WHERE) loses its WHERE (MySQL has none: for `col IS NOT NULL` on an
//   indexed column a unique index already ignores NULLs; other partial indexes are only bigger).
// - The driver (MysqlRewritingDriver) turns a text column that a CREATE INDEX names into
//   varchar(255) first, and runs UPDATE … RETURNING (which MariaDB lacks; it has INSERT and
//   DELETE … RETURNING) as SELECT … FOR UPDATE of the ids, the UPDATE, and a SELECT of them.
import {
  AliasNode,
  BinaryOperationNode,
  IdentifierNode,
  SelectQueryNode,
  ColumnNode,
  CompiledQuery,
  DataTypeNode,
  FromNode,
  MysqlAdapter,
  MysqlDialect,
  OnDuplicateKeyNode,
  OperationNodeTransformer,
  OperatorNode,
  OrActionNode,
  RawNode,
  ReferenceNode,
  SelectionNode,
  ValueListNode,
  ValueNode,
  WhereNode,
  type AddColumnNode,
  type ColumnDefinitionNode,
  type CreateIndexNode,
  type CreateTableNode,
  type DeleteQueryNode,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type InsertQueryNode,
  type KyselyPlugin,
  type OperationNode,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
  type UpdateQueryNode,
} from 'kysely';
import type mysql from 'mysql2';
import type { Config } from '../config/config.js';

/** The mysql2 driver, loaded only when MySQL is configured. */
export async function loadMysql(): Promise<typeof mysql> {
  return (await import('mysql2')).default;
}

/** Key length MySQL can index in a varchar column of a name (Forgejo's 255). */
export const MYSQL_KEY_LENGTH = 255;

/** Session settings every connection gets (see the top of this file). */
const SQL_MODE =
  'ANSI_QUOTES,PIPES_AS_CONCAT,STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

/** Connection settings for a MySQL database (`database` defaults to the configured NAME; null: none). */
export function mysqlConnection(
  config: Config['database'],
  database: string | null = config.name,
): mysql.PoolOptions {
  const socket = config.host.startsWith('/');
  const [host, port] = socket ? [undefined, undefined] : config.host.split(':');
  return {
    ...(socket ? { socketPath: config.host } : { host, port: port ? Number(port) : 3306 }),
    ...(database === null ? {} : { database }),
    user: config.user,
    password: config.passwd || undefined,
    // A collation name: mysql2 sets the connection's character set and collation from it.
    charset: `${config.charset}_bin`.toUpperCase(),
    timezone: 'Z',
    // Counters and sizes fit in a JS number (as pg's int8 is parsed in database.ts).
    supportBigNumbers: true,
    bigNumberStrings: false,
    decimalNumbers: true,
    dateStrings: true,
    ssl: config.sslMode === 'disable' ? undefined : { rejectUnauthorized: config.sslMode === 'verify-full' },
  };
}

/** The statements each new connection runs first. */
export function mysqlSessionSetup(charset: string): string[] {
  return [
    `SET SESSION sql_mode = '${SQL_MODE}'`,
    `SET SESSION time_zone = '+00:00'`,
    `SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED`,
    `SET NAMES ${charset} COLLATE ${charset}_bin`,
  ];
}

/** Kysely's MysqlDialect with MysqlRewritingDriver around its driver, and RETURNING (MariaDB's). */
export class AnvilMysqlDialect extends MysqlDialect {
  override createDriver(): Driver {
    return new MysqlRewritingDriver(super.createDriver(), this.createQueryCompiler());
  }

  override createAdapter(): DialectAdapter {
    return new MariadbAdapter();
  }
}

class MariadbAdapter extends MysqlAdapter {
  override get supportsReturning(): boolean {
    return true;
  }
}

/** See the top of this file. */
export function mysqlPlugin(charset: string): KyselyPlugin {
  const transformer = new MysqlTransformer(charset);
  return {
    transformQuery: ({ node, queryId }) => transformer.transformNode(node, queryId),
    transformResult: async ({ result }) => result,
  };
}

const TEXT_TYPES = new Set(['text']);

/**
 * A text column outside any key is LONGTEXT on MySQL (as Forgejo's): MySQL's TEXT holds 64 KiB,
 * less than issue bodies, comments and metadata may (SQLite's and PostgreSQL's text are unbounded).
 */
function longText(c: ColumnDefinitionNode): ColumnDefinitionNode {
  return isText(c.dataType) ? { ...c, dataType: RawNode.createWithSql('longtext') } : c;
}

function isText(node: OperationNode): boolean {
  return DataTypeNode.is(node) && TEXT_TYPES.has(node.dataType);
}

class MysqlTransformer extends OperationNodeTransformer {
  constructor(private readonly charset: string) {
    super();
  }

  protected override transformInsertQuery(node: InsertQueryNode, queryId?: never): InsertQueryNode {
    const out = super.transformInsertQuery(node, queryId);
    const oc = out.onConflict;
    if (!oc) return out;
    if (oc.doNothing) {
      return { ...out, onConflict: undefined, orAction: OrActionNode.create('ignore') };
    }
    if (oc.updateWhere) throw new Error('ON CONFLICT … DO UPDATE … WHERE has no MySQL equivalent');
    const updates = (oc.updates ?? []).map((u) => ({ ...u, value: excludedToValues(u.value) }));
    return { ...out, onConflict: undefined, onDuplicateKey: OnDuplicateKeyNode.create(updates) };
  }

  // Inside UPDATE and DELETE, a subquery of IN may not read the table being changed, and no
  // subquery of IN may have a LIMIT; read through a derived table, MySQL materializes it first.
  #changing = 0;

  protected override transformUpdateQuery(node: UpdateQueryNode, queryId?: never): UpdateQueryNode {
    this.#changing++;
    try {
      return super.transformUpdateQuery(node, queryId);
    } finally {
      this.#changing--;
    }
  }

  protected override transformDeleteQuery(node: DeleteQueryNode, queryId?: never): DeleteQueryNode {
    this.#changing++;
    try {
      return super.transformDeleteQuery(node, queryId);
    } finally {
      this.#changing--;
    }
  }

  protected override transformBinaryOperation(
    node: BinaryOperationNode,
    queryId?: never,
  ): BinaryOperationNode {
    const out = super.transformBinaryOperation(node, queryId);
    const op = OperatorNode.is(out.operator) ? out.operator.operator : '';
    const sub = out.rightOperand;
    if ((op === 'in' || op === 'not in') && SelectQueryNode.is(sub) && (this.#changing > 0 || sub.limit)) {
      const derived: SelectQueryNode = {
        kind: 'SelectQueryNode',
        from: FromNode.create([AliasNode.create(sub, IdentifierNode.create('anvil_in'))]),
        selections: [SelectionNode.createSelectAll()],
      };
      return { ...out, rightOperand: derived };
    }
    return out;
  }

  protected override transformCreateTable(node: CreateTableNode, queryId?: never): CreateTableNode {
    const out = super.transformCreateTable(node, queryId);
    const keyed = new Set<string>();
    for (const c of out.constraints ?? []) {
      if (c.kind === 'UniqueConstraintNode' || c.kind === 'PrimaryKeyConstraintNode')
        for (const col of c.columns) keyed.add(col.column.name);
    }
    const columns = out.columns.map((c): ColumnDefinitionNode => {
      const key = c.unique || c.primaryKey || keyed.has(c.column.column.name);
      return key && isText(c.dataType)
        ? { ...c, dataType: DataTypeNode.create(`varchar(${MYSQL_KEY_LENGTH})`) }
        : longText(c);
    });
    const options = RawNode.createWithSql(
      `ENGINE=InnoDB DEFAULT CHARSET=${this.charset} COLLATE=${this.charset}_bin`,
    );
    return { ...out, columns, endModifiers: [...(out.endModifiers ?? []), options] };
  }

  protected override transformAddColumn(node: AddColumnNode, queryId?: never): AddColumnNode {
    const out = super.transformAddColumn(node, queryId);
    return { ...out, column: longText(out.column) };
  }

  protected override transformCreateIndex(node: CreateIndexNode, queryId?: never): CreateIndexNode {
    const out = super.transformCreateIndex(node, queryId);
    return out.where ? { ...out, where: undefined } : out;
  }
}

/** `excluded.col` (PostgreSQL's and SQLite's proposed row) is `VALUES(col)` in MySQL. */
function excludedToValues(node: OperationNode): OperationNode {
  return new (class extends OperationNodeTransformer {
    protected override transformReference(ref: ReferenceNode): ReferenceNode {
      const table = ref.table?.table.identifier.name;
      if (table === 'excluded' && ColumnNode.is(ref.column)) {
        return RawNode.createWithSql(`VALUES(\`${ref.column.column.name}\`)`) as unknown as ReferenceNode;
      }
      return ref;
    }
  })().transformNode(node);
}

/** Kysely's MySQL driver with the rewrites described at the top of this file. */
class MysqlRewritingDriver implements Driver {
  readonly #connections = new WeakMap<DatabaseConnection, RewritingConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly compiler: QueryCompiler,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const raw = await this.inner.acquireConnection();
    let c = this.#connections.get(raw);
    if (!c) {
      c = new RewritingConnection(raw, this.compiler);
      this.#connections.set(raw, c);
    }
    return c;
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const rc = c as RewritingConnection;
    await this.inner.beginTransaction(rc.raw, settings);
    rc.inTransaction = true;
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    const rc = c as RewritingConnection;
    rc.inTransaction = false;
    await this.inner.commitTransaction(rc.raw);
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    const rc = c as RewritingConnection;
    rc.inTransaction = false;
    await this.inner.rollbackTransaction(rc.raw);
  }

  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.savepoint!((c as RewritingConnection).raw, name, compile);
  }

  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.inner.rollbackToSavepoint!((c as RewritingConnection).raw, name, compile);
  }

  releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.inner.releaseSavepoint!((c as RewritingConnection).raw, name, compile);
  }

  releaseConnection(c: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((c as RewritingConnection).raw);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class RewritingConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    readonly raw: DatabaseConnection,
    private readonly compiler: QueryCompiler,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const node = compiled.query;
    if (node.kind === 'CreateIndexNode') await this.keyableColumns(node as CreateIndexNode);
    if (node.kind === 'UpdateQueryNode' && (node as UpdateQueryNode).returning)
      return this.updateReturning<R>(node as UpdateQueryNode, compiled);
    return this.raw.executeQuery<R>(compiled);
  }

  streamQuery<R>(compiled: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.raw.streamQuery<R>(compiled, chunkSize);
  }

  /** A text column an index names becomes varchar(255), keeping its nullability and default. */
  private async keyableColumns(node: CreateIndexNode): Promise<void> {
    const table = node.table?.table.identifier.name;
    const names = (node.columns ?? []).flatMap((c) => (ColumnNode.is(c) ? [c.column.name] : []));
    if (!table || names.length === 0) return;
    const { rows } = await this.raw.executeQuery<{
      name: string;
      nullable: string;
      dflt: string | null;
    }>(
      CompiledQuery.raw(
        `SELECT COLUMN_NAME AS name, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt
           FROM information_schema.COLUMNS
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND DATA_TYPE IN ('text', 'mediumtext', 'longtext')
            AND COLUMN_NAME IN (${names.map(() => '?').join(', ')})`,
        [table, ...names],
      ),
    );
    for (const r of rows) {
      const dflt = r.dflt === null || r.dflt === 'NULL' ? '' : ` DEFAULT ${r.dflt}`;
      await this.raw.executeQuery(
        CompiledQuery.raw(
          `ALTER TABLE \`${table}\` MODIFY \`${r.name}\` varchar(${MYSQL_KEY_LENGTH})${
            r.nullable === 'NO' ? ' NOT NULL' : ' NULL'
          }${dflt}`,
        ),
      );
    }
  }

  /** UPDATE … RETURNING: lock and list the rows' ids, update them, read them back. */
  private async updateReturning<R>(node: UpdateQueryNode, compiled: CompiledQuery): Promise<QueryResult<R>> {
    const own = !this.inTransaction;
    if (own) await this.raw.executeQuery(CompiledQuery.raw('begin'));
    try {
      const table = node.table!;
      const idRef = ReferenceNode.create(ColumnNode.create('id'));
      const find: SelectQueryNode = {
        kind: 'SelectQueryNode',
        from: FromNode.create([table]),
        joins: node.joins,
        selections: [SelectionNode.create(idRef)],
        where: node.where,
        orderBy: node.orderBy,
        limit: node.limit,
      };
      const found = this.compiler.compileQuery(find, compiled.queryId);
      const { rows: idRows } = await this.raw.executeQuery<{ id: number }>(
        CompiledQuery.raw(`${found.sql} for update`, [...found.parameters]),
      );
      let rows: R[] = [];
      let done: QueryResult<R> = { rows: [], numAffectedRows: 0n };
      if (idRows.length > 0) {
        // Exactly the rows locked above (they still match: nobody else can change them now).
        const ids = WhereNode.create(
          BinaryOperationNode.create(
            idRef,
            OperatorNode.create('in'),
            ValueListNode.create(idRows.map((r) => ValueNode.create(r.id))),
          ),
        );
        const update: UpdateQueryNode = {
          ...node,
          returning: undefined,
          where: ids,
          orderBy: undefined,
          limit: undefined,
        };
        done = await this.raw.executeQuery<R>(this.compiler.compileQuery(update, compiled.queryId));
        const back: SelectQueryNode = {
          kind: 'SelectQueryNode',
          from: FromNode.create([table]),
          selections: node.returning!.selections,
          where: ids,
        };
        rows = (await this.raw.executeQuery<R>(this.compiler.compileQuery(back, compiled.queryId))).rows;
      }
      if (own) await this.raw.executeQuery(CompiledQuery.raw('commit'));
      return { ...done, rows };
    } catch (err) {
      if (own) await this.raw.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
      throw err;
    }
  }
}

/** Used by tests and CI: the statement that makes a fresh database in the configured charset. */
export function createDatabaseSql(name: string, charset: string): string {
  return `CREATE DATABASE \`${name}\` CHARACTER SET ${charset} COLLATE ${charset}_bin`;
}
