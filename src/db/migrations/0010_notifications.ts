// Notification threads (one per user and issue or pull request, bumped back to unread by later
// events) and repository watches. Both hang off their user and repository with ON DELETE CASCADE.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('notification'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('issue_id', 'bigint', (c) => c.references('issue.id').onDelete('cascade'))
    .addColumn('comment_id', 'bigint', (c) => c.references('comment.id').onDelete('set null'))
    // 1 unread, 2 read, 3 pinned.
    .addColumn('status', 'integer', (c) => c.notNull())
    // 1 issue, 2 pull, 3 commit, 4 repository.
    .addColumn('source', 'integer', (c) => c.notNull())
    .addColumn('updated_by', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('notification_user_issue', ['user_id', 'issue_id'])
    .execute();
  // The lists: a user's threads by status, newest first.
  await db.schema
    .createIndex('notification_user_status_updated')
    .on('notification')
    .columns(['user_id', 'status', 'updated_unix'])
    .execute();
  await db.schema.createIndex('notification_repo').on('notification').column('repo_id').execute();
  await db.schema.createIndex('notification_issue').on('notification').column('issue_id').execute();

  await withId(db.schema.createTable('watch'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('watch_user_repo', ['user_id', 'repo_id'])
    .execute();
  await db.schema.createIndex('watch_repo').on('watch').column('repo_id').execute();
}
