// Activities: what happened (a repository created, a push, an issue opened or commented, a release
// published, ...), written from the event bus once per feed it belongs to, as Forgejo does: the
// actor's and the repository owner's (`user_id`). A feed is then one index range, newest first.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('action'), dialect)
    // Whose feed the row is in.
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('act_user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('op_type', 'text', (c) => c.notNull())
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    // The repository's owner when it happened (a repository's feed is its owner's rows of it).
    .addColumn('owner_id', 'bigint', (c) => c.notNull())
    // Whether the repository was private (or its owner not public) when it happened.
    .addColumn('is_private', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('comment_id', 'bigint')
    .addColumn('ref_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('action_feed').on('action').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('action_repo').on('action').columns(['repo_id', 'user_id', 'id']).execute();
  // The heatmap: what each user did per 15 minutes, counted as it happens (private apart).
  await db.schema
    .createTable('action_bucket')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('is_private', 'integer', (c) => c.notNull())
    .addColumn('contributions', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_bucket_pk', ['user_id', 'bucket', 'is_private'])
    .execute();
}
