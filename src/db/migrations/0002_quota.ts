// Quota rules, groups, their mappings, and per-owner usage totals.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('quota_rule')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('limit_size', 'bigint', (c) => c.notNull())
    .addColumn('subjects', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();

  await db.schema
    .createTable('quota_group')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .execute();

  await withId(db.schema.createTable('quota_group_rule'), dialect)
    .addColumn('group_name', 'text', (c) => c.notNull().references('quota_group.name').onDelete('cascade'))
    .addColumn('rule_name', 'text', (c) => c.notNull().references('quota_rule.name').onDelete('cascade'))
    .addUniqueConstraint('quota_group_rule_pair', ['group_name', 'rule_name'])
    .execute();
  await db.schema.createIndex('quota_group_rule_rule').on('quota_group_rule').column('rule_name').execute();

  await withId(db.schema.createTable('quota_group_user'), dialect)
    .addColumn('group_name', 'text', (c) => c.notNull().references('quota_group.name').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addUniqueConstraint('quota_group_user_pair', ['group_name', 'user_id'])
    .execute();
  await db.schema.createIndex('quota_group_user_user').on('quota_group_user').column('user_id').execute();

  await db.schema
    .createTable('quota_usage')
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('quota_usage_pk', ['owner_id', 'subject'])
    .execute();
}
