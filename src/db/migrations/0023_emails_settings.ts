// A user's e-mail addresses (`email_address`, as Forgejo: the primary one mirrored in user.email,
// secondary ones added by the user; every address belongs to one account at most), and the
// account settings of /user/settings that had no column yet.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('email_address'), dialect)
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('lower_email', 'text', (c) => c.notNull().unique())
    .addColumn('is_activated', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_primary', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('email_address_uid')
    .on('email_address')
    .columns(['uid', 'is_primary'])
    .execute();
  // Every person's current address becomes their primary one (organizations have none, as in Forgejo).
  await sql`INSERT INTO email_address (uid, email, lower_email, is_activated, is_primary)
    SELECT id, email, lower_email, 1, 1 FROM "user" WHERE type = 0 AND email <> ''`.execute(db);

  const columns: Array<[string, 'integer' | 'text', number | string]> = [
    ['keep_activity_private', 'integer', 0],
    ['keep_pronouns_private', 'integer', 0],
    ['theme', 'text', ''],
    ['diff_view_style', 'text', ''],
    ['enable_repo_unit_hints', 'integer', 1],
  ];
  for (const [name, type, value] of columns) {
    await db.schema
      .alterTable('user')
      .addColumn(name, type, (c) => c.notNull().defaultTo(value))
      .execute();
  }
}
