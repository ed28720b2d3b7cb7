// Pull requests: the pull_request row beside its issue row (is_pull = 1), and reviews (review
// requests included) in pull_review.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('pull_request'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().unique().references('issue.id').onDelete('cascade'))
    .addColumn('index', 'bigint', (c) => c.notNull())
    .addColumn('base_repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    // Kept (set to null) when the head repository, a fork, is deleted.
    .addColumn('head_repo_id', 'bigint', (c) => c.references('repository.id').onDelete('set null'))
    .addColumn('base_branch', 'text', (c) => c.notNull())
    .addColumn('head_branch', 'text', (c) => c.notNull())
    .addColumn('merge_base', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('head_commit_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('conflicted_files', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('has_merged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('merged_commit_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('merger_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('merged_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('allow_maintainer_edit', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Pull requests to refresh when a branch moves, on either side.
  await db.schema
    .createIndex('pull_request_base')
    .on('pull_request')
    .columns(['base_repo_id', 'base_branch'])
    .execute();
  await db.schema
    .createIndex('pull_request_head')
    .on('pull_request')
    .columns(['head_repo_id', 'head_branch'])
    .execute();

  await withId(db.schema.createTable('pull_review'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('reviewer_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('type', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('commit_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('official', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stale', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dismissed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pull_review_issue').on('pull_review').columns(['issue_id', 'id']).execute();
}
