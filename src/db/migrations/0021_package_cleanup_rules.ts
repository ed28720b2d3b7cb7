// Per-owner package cleanup rules (Forgejo's package_cleanup_rule): one per owner and package type.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_cleanup_rule'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('keep_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('keep_pattern', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('remove_days', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('remove_pattern', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('match_full_name', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_cleanup_rule_owner_type', ['owner_id', 'type'])
    .execute();
  await db.schema
    .createIndex('package_cleanup_rule_enabled')
    .on('package_cleanup_rule')
    .columns(['enabled'])
    .execute();
}
