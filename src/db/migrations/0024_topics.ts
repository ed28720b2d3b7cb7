// Repository topics, as Forgejo keeps them: `topic` (each name once, with the number of
// repositories that carry it, kept in the writing transaction) and `repo_topic` (which repository
// carries which).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('topic'), dialect)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('repo_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('repo_topic')
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('topic_id', 'bigint', (c) => c.notNull().references('topic.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('repo_topic_pk', ['repo_id', 'topic_id'])
    .execute();
  await db.schema.createIndex('repo_topic_topic').on('repo_topic').column('topic_id').execute();
}
