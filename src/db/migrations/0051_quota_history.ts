// Usage history for the storage overview: one sample a day of each owner's stored totals (taken by
// the quota_usage_sample task from quota_usage), kept a year and more, read by owner and day; and
// the indexes its "what uses the space" lists walk, largest first.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('quota_usage_daily')
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('subject', 'varchar(64)', (c) => c.notNull())
    // Days since 1970-01-01 (UTC).
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_usage_daily_pk', ['owner_id', 'day', 'subject'])
    .execute();
  await db.schema
    .createIndex('repository_owner_size')
    .on('repository')
    .columns(['owner_id', 'size'])
    .execute();
  await db.schema.createIndex('attachment_size').on('attachment').column('size').execute();
  await db.schema.createIndex('action_artifact_size').on('action_artifact').column('size').execute();
}
