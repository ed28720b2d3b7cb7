// Issue dependencies, tracked times and stopwatches, as Forgejo keeps them: `issue_dependency`
// (issue_id depends on dependency_id, i.e. dependency_id blocks issue_id), `tracked_time` (time
// spent on an issue by a user; deleted times stay as rows with `deleted` set) and `stopwatch`
// (a user's running clock on an issue). Timeline events refer to the other issue of a dependency
// (`dependent_issue_id`) and to the tracked time they recorded (`time_id`).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('issue_dependency'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('dependency_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('issue_dependency_pair', ['issue_id', 'dependency_id'])
    .execute();
  await db.schema
    .createIndex('issue_dependency_dependency')
    .on('issue_dependency')
    .columns(['dependency_id', 'issue_id'])
    .execute();

  await withId(db.schema.createTable('tracked_time'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('tracked_time_issue').on('tracked_time').column('issue_id').execute();
  await db.schema.createIndex('tracked_time_user').on('tracked_time').column('user_id').execute();

  await withId(db.schema.createTable('stopwatch'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('stopwatch_pair', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('stopwatch_user').on('stopwatch').column('user_id').execute();

  await db.schema
    .alterTable('comment')
    .addColumn('dependent_issue_id', 'bigint', (c) => c.references('issue.id').onDelete('cascade'))
    .execute();
  await db.schema.alterTable('comment').addColumn('time_id', 'bigint').execute();
}
