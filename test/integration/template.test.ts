// The test servers' databases are copies of a template migrated once per run (helpers/template.ts):
// a copy must be what migrating a new database makes, on whichever database the suite runs on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SQLite } from '../../src/db/sqlite-driver.js';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { sql } from 'kysely';
import { loadConfig, type Config } from '../../src/config/config.js';
import { openDatabase, postgresConnection } from '../../src/db/database.js';
import { mysqlConnection, mysqlSessionSetup } from '../../src/db/mysql.js';
import { freshDatabase } from '../helpers/server.js';
import { copyTemplate, runTemplate } from '../helpers/template.js';

/** The schema (tables, columns, keys, indexes, sequences), the migrations applied, rows per table. */
async function fingerprint(db: Config['database']): Promise<unknown> {
  if (db.type === 'postgres') {
    const c = new pg.Client(postgresConnection(db));
    await c.connect();
    try {
      const q = async (text: string) => (await c.query(text)).rows;
      const tables = await q(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
      return {
        columns: await q(`SELECT table_name, column_name, data_type, column_default, is_nullable
          FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`),
        constraints: await q(`SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) AS def
          FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`),
        indexes: await q(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`),
        sequences: await q(`SELECT sequencename, last_value FROM pg_sequences ORDER BY 1`),
        migrations: await q('SELECT name FROM anvil_migration ORDER BY name'),
        rows: await (async () => {
          const rows: unknown[] = [];
          for (const { t } of tables) rows.push([t, (await q(`SELECT count(*) AS n FROM "${t}"`))[0].n]);
          return rows;
        })(),
      };
    } finally {
      await c.end();
    }
  }
  if (db.type === 'mysql') {
    const c = await mysql.createConnection(mysqlConnection(db));
    try {
      for (const stmt of mysqlSessionSetup(db.charset)) await c.query(stmt);
      const [tables] = await c.query<mysql.RowDataPacket[]>(
        'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1',
      );
      const out: unknown[] = [];
      for (const { t } of tables) {
        const [[create]] = await c.query<mysql.RowDataPacket[]>(`SHOW CREATE TABLE "${t}"`);
        const [[count]] = await c.query<mysql.RowDataPacket[]>(`SELECT count(*) AS n FROM "${t}"`);
        out.push([create!['Create Table'], count!['n']]);
      }
      const [migrations] = await c.query('SELECT name FROM anvil_migration ORDER BY name');
      return { tables: out, migrations };
    } finally {
      await c.end();
    }
  }
  const file = new SQLite(db.path, { readonly: true });
  try {
    const schema = file.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name').all();
    const tables = file
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all() as Array<{ name: string }>;
    return {
      schema,
      migrations: file.prepare('SELECT name FROM anvil_migration ORDER BY name').all(),
      rows: tables.map(({ name }) => [name, file.prepare(`SELECT count(*) AS n FROM "${name}"`).get()]),
      pragmas: ['journal_mode', 'user_version', 'application_id'].map((p) => file.pragma(p)),
    };
  } finally {
    file.close();
  }
}

describe("the test servers' template database", () => {
  it('a copy of the template is what migrating a new database makes', async (t) => {
    if (!runTemplate()) return t.skip('no template: this run is not through npm test');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-template-test-'));
    const base = loadConfig({ env: { ...process.env, ANVIL__SERVER__APP_DATA_PATH: dir }, cwd: dir });
    const made: Array<() => Promise<void>> = [];
    try {
      const configure = async (migrated: boolean, file: string) => {
        const fresh = await freshDatabase(base.database, migrated);
        if (fresh) made.push(fresh.drop);
        const config = loadConfig({
          env: {
            ...process.env,
            ANVIL__SERVER__APP_DATA_PATH: dir,
            ANVIL__DATABASE__PATH: path.join(dir, file),
            ...(fresh ? { ANVIL__DATABASE__NAME: fresh.name } : {}),
          },
          cwd: dir,
        });
        if (!fresh && migrated) assert.ok(await copyTemplate(config.database, config.database.path));
        return config;
      };
      const migratedHere = await configure(false, 'migrated.db');
      await (await openDatabase(migratedHere)).close();
      const copy = await configure(true, 'copy.db');
      const expected = await fingerprint(migratedHere.database);
      assert.deepEqual(await fingerprint(copy.database), expected);
      // A server on the copy finds nothing left to migrate.
      await (await openDatabase(copy)).close();
      assert.deepEqual(await fingerprint(copy.database), expected);
      // And the copy's foreign keys hold (MariaDB's were created with the checks off).
      const opened = await openDatabase(copy);
      try {
        const row = {
          name: 't',
          token_hash: 'h',
          token_last_eight: 'e',
          scope: '',
          created_unix: 0,
          updated_unix: 0,
        };
        await assert.rejects(
          opened.db
            .insertInto('access_token')
            .values({ ...row, uid: 999_999 })
            .execute(),
          /foreign key/i,
        );
        // Start-up skips the migrator when every migration has run; a database that a newer Anvil
        // migrated further is still refused, not served by code that does not know its schema.
        await sql`insert into anvil_migration (name, timestamp) values ('9999_from_a_newer_anvil', 'x')`.execute(
          opened.db,
        );
      } finally {
        await opened.close();
      }
      await assert.rejects(openDatabase(copy), /9999_from_a_newer_anvil/);
      // A migration numbered below the newest one run (numbers are handed out ahead) is still run:
      // here 0074, undone, while 0080 stays.
      const undo = await openDatabase(copy, { migrate: false });
      try {
        await sql`delete from anvil_migration where name in ('9999_from_a_newer_anvil', '0074_action_job_call')`.execute(
          undo.db,
        );
        await sql`alter table action_run_job drop column call_info`.execute(undo.db);
      } finally {
        await undo.close();
      }
      const redone = await openDatabase(copy);
      try {
        await sql`select call_info from action_run_job`.execute(redone.db);
        const rows = await sql<{ name: string }>`select name from anvil_migration`.execute(redone.db);
        assert.ok(rows.rows.some((r) => r.name === '0074_action_job_call'));
      } finally {
        await redone.close();
      }
    } finally {
      for (const drop of made) await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
