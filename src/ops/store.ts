// The numbers operations read: a database ping, queue depths, and Forgejo's statistics counts.
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export async function ping(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Webhook deliveries not yet delivered, actions jobs waiting for a runner. */
export async function queueDepths(db: Db): Promise<{ webhook: number; actions: number }> {
  const [hooks, jobs] = await Promise.all([
    db
      .selectFrom('hook_task')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('is_delivered', '=', 0)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('action_run_job')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('status', '=', 'waiting')
      .executeTakeFirstOrThrow(),
  ]);
  return { webhook: Number(hooks.n), actions: Number(jobs.n) };
}

/** Forgejo's statistics (GetStatistic): rows of each kind, in one query. */
export async function counts(db: Db): Promise<Record<string, number>> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 0).as('users'),
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 1).as('organizations'),
      eb.selectFrom('repository').select(eb.fn.countAll().as('n')).as('repositories'),
      eb.selectFrom('issue').select(eb.fn.countAll().as('n')).as('issues'),
      eb.selectFrom('release').select(eb.fn.countAll().as('n')).as('releases'),
      eb.selectFrom('webhook').select(eb.fn.countAll().as('n')).as('webhooks'),
    ])
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

/** The tables a dump holds: every table but the migrator's own, in a fixed order. */
export async function dataTables(db: Db): Promise<Array<{ name: string; columns: string[] }>> {
  const tables = await db.introspection.getTables();
  return tables
    .filter((t) => !t.isView && !t.name.startsWith('anvil_migration') && !t.name.startsWith('sqlite_'))
    .map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The names of the migrations applied, in order (a dump restores only into the same schema). */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT name FROM anvil_migration ORDER BY name`.execute(db);
  return rows.rows.map((r) => r.name);
}

/**
 * Every row of `table`, a page at a time, ordered by all its columns (stable within the
 * snapshot transaction `q` runs in).
 */
export async function* tableRows(
  q: Db,
  table: string,
  columns: string[],
  pageSize = 1000,
): AsyncIterable<Record<string, unknown>[]> {
  const order = sql.join(columns.map((c) => sql.ref(c)));
  for (let offset = 0; ; offset += pageSize) {
    const page = await sql<
      Record<string, unknown>
    >`SELECT * FROM ${sql.table(table)} ORDER BY ${order} LIMIT ${pageSize} OFFSET ${offset}`.execute(q);
    if (page.rows.length) yield page.rows;
    if (page.rows.length < pageSize) return;
  }
}

export async function insertRows(q: Db, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (!rows.length) return;
  // Kysely's table names are typed: a dump restores tables by their names as found.
  await (q as unknown as Db)
    .insertInto(table as 'user')
    .values(rows as never)
    .execute();
}

/** Whether the database holds any account (a restore goes only into an empty one). */
export async function hasAccounts(db: Db): Promise<boolean> {
  // (Migrations make the built-in accounts, such as the actions user, with ids below 1.)
  const row = await db.selectFrom('user').select('id').where('id', '>', 0).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** PostgreSQL: each table's id sequence moved past the restored ids (tables with a serial id only). */
export async function resetSequences(
  db: Db,
  tables: Array<{ name: string; columns: string[] }>,
): Promise<void> {
  for (const t of tables) {
    if (!t.columns.includes('id')) continue;
    const seq = await sql<{
      seq: string | null;
    }>`SELECT pg_get_serial_sequence(${`"${t.name}"`}, 'id') AS seq`.execute(db);
    const name = seq.rows[0]?.seq;
    if (!name) continue; // an id that is not a serial (a text id)
    await sql`SELECT setval(${name}, COALESCE((SELECT MAX(id) FROM ${sql.table(t.name)}), 0) + 1, false)`.execute(
      db,
    );
  }
}
