// Line comments of pull request reviews, as Forgejo keeps them (its `comment` rows of type code):
// the file, the line (positive: a line of the new side, negative: of the old side), the commits
// it was made on and the diff hunk up to that line.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('pull_review_comment'), dialect)
    .addColumn('review_id', 'bigint', (c) => c.notNull().references('pull_review.id').onDelete('cascade'))
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    // Kept (set to null) when the poster's account is deleted.
    .addColumn('poster_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('tree_path', 'text', (c) => c.notNull())
    .addColumn('line', 'bigint', (c) => c.notNull())
    .addColumn('commit_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('original_commit_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('diff_hunk', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('pull_review_comment_review')
    .on('pull_review_comment')
    .columns(['review_id', 'id'])
    .execute();
  await db.schema
    .createIndex('pull_review_comment_issue')
    .on('pull_review_comment')
    .column('issue_id')
    .execute();
}
