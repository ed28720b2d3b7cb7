// Pull mirrors (one per mirror repository) and push mirrors (any number per repository). Both hang
// off their repository with ON DELETE CASCADE. Remote addresses are stored without credentials;
// credentials are encrypted (auth/secrets.ts) in `credentials`, empty when there are none.
// Forks need no new columns: repository.fork_id, is_fork and num_forks exist since 0003.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('mirror'), dialect)
    .addColumn('repo_id', 'bigint', (c) =>
      c.notNull().unique().references('repository.id').onDelete('cascade'),
    )
    .addColumn('remote_address', 'text', (c) => c.notNull())
    .addColumn('credentials', 'text', (c) => c.notNull().defaultTo(''))
    // Seconds between updates; 0 means only on request.
    .addColumn('interval', 'bigint', (c) => c.notNull())
    .addColumn('enable_prune', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    // When the scheduler next updates it; 0 when never.
    .addColumn('next_update_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('mirror_next_update').on('mirror').column('next_update_unix').execute();

  await withId(db.schema.createTable('push_mirror'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('remote_name', 'text', (c) => c.notNull())
    .addColumn('remote_address', 'text', (c) => c.notNull())
    .addColumn('credentials', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('sync_on_commit', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('interval', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('last_update_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('next_update_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
    // Also the index for "the push mirrors of a repository".
    .addUniqueConstraint('push_mirror_repo_name', ['repo_id', 'remote_name'])
    .execute();
  await db.schema
    .createIndex('push_mirror_next_update')
    .on('push_mirror')
    .column('next_update_unix')
    .execute();
}
