// Stars and follows, with their counts kept on the rows they count (repository.num_stars exists;
// the user gets num_followers, num_following and num_stars), updated in the same transaction.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('star'), dialect)
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('star_uid_repo', ['uid', 'repo_id'])
    .execute();
  await db.schema.createIndex('star_repo').on('star').columns(['repo_id', 'created_unix']).execute();

  await withId(db.schema.createTable('follow'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('follow_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('follow_user_follow', ['user_id', 'follow_id'])
    .execute();
  await db.schema.createIndex('follow_follow').on('follow').columns(['follow_id', 'created_unix']).execute();

  for (const column of ['num_followers', 'num_following', 'num_stars']) {
    await db.schema
      .alterTable('user')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}
