// The migrated schema every test server starts from. Running the migrations is most of a test
// server's start on PostgreSQL (about 1.5 s) and MariaDB (6 s, 4-16 s under the suite's load: DDL
// with a sync per statement), and the suite starts hundreds of servers. `npm test`
// (scripts/test.js) migrates one template database per run and names it in ANVIL_TEST_TEMPLATE;
// startServer then copies it: PostgreSQL with CREATE DATABASE … TEMPLATE, MariaDB by creating
// the template's tables from SHOW CREATE TABLE and copying the rows migrations wrote, SQLite by
// copying the file. A copy is what migrating would have made (test/integration/template.test.ts
// compares them); the server's own migration step then finds nothing to do. Without the
// variable (a test file run with `node --test` directly), each server migrates as before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { loadConfig, type Config } from '../../src/config/config.js';
import { openDatabase, postgresConnection } from '../../src/db/database.js';
import { createDatabaseSql, mysqlConnection, mysqlSessionSetup } from '../../src/db/mysql.js';

export const TEMPLATE_ENV = 'ANVIL_TEST_TEMPLATE';

/** What ANVIL_TEST_TEMPLATE holds (JSON). */
export interface Template {
  type: Config['database']['type'];
  /** The database's name (PostgreSQL, MySQL), or the migrated file (SQLite). */
  name: string;
  /** MySQL's character set the template was made with. */
  charset: string;
}

/** The run's template, when scripts/test.js made one. */
export function runTemplate(env: NodeJS.ProcessEnv = process.env): Template | undefined {
  const v = env[TEMPLATE_ENV];
  return v ? (JSON.parse(v) as Template) : undefined;
}

/**
 * Migrates a template for the database `env` configures (ANVIL__DATABASE__*); `value` goes into
 * ANVIL_TEST_TEMPLATE, `drop()` removes the template after the run.
 */
export async function makeTemplate(
  env: NodeJS.ProcessEnv,
): Promise<{ template: Template; value: string; drop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-template-'));
  const base = loadConfig({ env: { ...env, ANVIL__SERVER__APP_DATA_PATH: dir }, cwd: dir });
  const db = base.database;
  const suffix = `${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  let template: Template;
  let dropDb: () => Promise<void> = async () => {};
  if (db.type === 'postgres') {
    template = { type: db.type, name: `${db.name}_tpl_${suffix}`.toLowerCase(), charset: db.charset };
    await pgAdmin(db, (c) => c.query(`CREATE DATABASE "${template.name}"`));
    dropDb = async () => {
      await pgAdmin(db, (c) => c.query(`DROP DATABASE IF EXISTS "${template.name}" WITH (FORCE)`));
    };
  } else if (db.type === 'mysql') {
    template = { type: db.type, name: `${db.name}_tpl_${suffix}`.toLowerCase(), charset: db.charset };
    await mysqlAdmin(db, (c) => c.query(createDatabaseSql(template.name, db.charset)));
    dropDb = async () => {
      await mysqlAdmin(db, (c) => c.query(`DROP DATABASE IF EXISTS \`${template.name}\``));
    };
  } else {
    template = { type: db.type, name: path.join(dir, 'template.db'), charset: db.charset };
  }
  try {
    const config = loadConfig({
      env: {
        ...env,
        ANVIL__SERVER__APP_DATA_PATH: dir,
        ANVIL__DATABASE__NAME: template.name,
        ANVIL__DATABASE__PATH: template.name,
      },
      cwd: dir,
    });
    // Closing checkpoints SQLite's write-ahead log into the file: the file alone is the database.
    await (await openDatabase(config)).close();
  } catch (err) {
    await dropDb();
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    template,
    value: JSON.stringify(template),
    async drop() {
      await dropDb();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes database `name` (on SQLite: the file `name`) a copy of the run's migrated template; false
 * when there is no template for this configuration (the server then migrates as usual).
 */
export async function copyTemplate(config: Config['database'], name: string): Promise<boolean> {
  const t = runTemplate();
  if (!t || t.type !== config.type || t.charset !== config.charset) return false;
  if (t.type === 'postgres') {
    await pgAdmin(config, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${t.name}"`));
  } else if (t.type === 'mysql') {
    await copyMysql(config, t.name, name);
  } else {
    fs.mkdirSync(path.dirname(name), { recursive: true });
    fs.copyFileSync(t.name, name);
  }
  return true;
}

async function pgAdmin<T>(db: Config['database'], fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(postgresConnection(db, 'postgres'));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function mysqlAdmin<T>(db: Config['database'], fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const c = await mysql.createConnection({ ...mysqlConnection(db, null), multipleStatements: true });
  try {
    // The session Anvil's connections have: SHOW CREATE TABLE quotes as the statements run here.
    for (const stmt of mysqlSessionSetup(db.charset)) await c.query(stmt);
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Per template: its tables' CREATE TABLE statements, and the tables migrations wrote rows to. */
const mysqlPlans = new Map<string, Promise<{ creates: string[]; filled: string[] }>>();

async function mysqlPlan(c: mysql.Connection, template: string) {
  const [tables] = await c.query<mysql.RowDataPacket[]>(
    'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name',
    [template],
  );
  const creates: string[] = [];
  const filled: string[] = [];
  for (const { t } of tables as Array<{ t: string }>) {
    const [[create]] = await c.query<mysql.RowDataPacket[]>(`SHOW CREATE TABLE "${template}"."${t}"`);
    creates.push(String(create!['Create Table']));
    const [[any]] = await c.query<mysql.RowDataPacket[]>(
      `SELECT EXISTS (SELECT 1 FROM "${template}"."${t}") AS x`,
    );
    if (Number(any!['x'])) filled.push(t);
  }
  return { creates, filled };
}

/** Connections creating a copy's tables at once: InnoDB makes each table's file in turn otherwise. */
const MYSQL_CREATORS = 4;

async function copyMysql(db: Config['database'], template: string, name: string): Promise<void> {
  const { creates, filled } = await mysqlAdmin(db, async (c) => {
    let plan = mysqlPlans.get(template);
    if (!plan) mysqlPlans.set(template, (plan = mysqlPlan(c, template)));
    await c.query(createDatabaseSql(name, db.charset));
    return plan;
  });
  // Foreign keys may name a table not created yet; the rows copied are consistent.
  const groups = Array.from({ length: MYSQL_CREATORS }, (_, i) =>
    creates.filter((_, j) => j % MYSQL_CREATORS === i),
  );
  await Promise.all(
    groups.map((group) =>
      mysqlAdmin(db, (c) => c.query([`USE "${name}"`, 'SET FOREIGN_KEY_CHECKS = 0', ...group].join(';\n'))),
    ),
  );
  if (filled.length) {
    await mysqlAdmin(db, (c) =>
      c.query(
        [
          `USE "${name}"`,
          'SET FOREIGN_KEY_CHECKS = 0',
          ...filled.map((t) => `INSERT INTO "${t}" SELECT * FROM "${template}"."${t}"`),
        ].join(';\n'),
      ),
    );
  }
}
