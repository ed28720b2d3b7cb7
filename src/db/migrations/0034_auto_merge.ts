// Scheduled merges ("merge when checks succeed"), as Forgejo's pull_auto_merge: at most one per
// pull request, with who asked, the merge style and message, and whether to delete the head branch.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('pull_auto_merge'), dialect)
    .addColumn('pull_id', 'bigint', (c) =>
      c.notNull().unique().references('pull_request.id').onDelete('cascade'),
    )
    .addColumn('doer_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('merge_style', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('delete_branch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
}
