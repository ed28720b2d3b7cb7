// The site administration: system notices (failed background jobs and the like, listed and deleted
// at /admin/notices, Forgejo's `notice`), and an index on the user table by type and id so that the
// administration's list of 100,000 accounts pages by id or name without sorting them all.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('system_notice'), dialect)
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('system_notice_created').on('system_notice').column('created_unix').execute();
  await db.schema.createIndex('user_type_id').on('user').columns(['type', 'id']).execute();
  await db.schema.createIndex('user_type_lower_name').on('user').columns(['type', 'lower_name']).execute();
}
