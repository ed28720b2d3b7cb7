// Old names that still lead somewhere, as Forgejo keeps them: an account's former name
// (`user_redirect`, after a rename) and a repository's former owner and name (`repo_redirect`,
// after a rename or a transfer). Requests naming them are redirected to the current names.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('user_redirect'), dialect)
    .addColumn('lower_name', 'text', (c) => c.notNull().unique())
    .addColumn('redirect_user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('user_redirect_user').on('user_redirect').column('redirect_user_id').execute();

  await withId(db.schema.createTable('repo_redirect'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('lower_name', 'text', (c) => c.notNull())
    .addColumn('redirect_repo_id', 'bigint', (c) =>
      c.notNull().references('repository.id').onDelete('cascade'),
    )
    .addUniqueConstraint('repo_redirect_owner_name', ['owner_id', 'lower_name'])
    .execute();
  await db.schema.createIndex('repo_redirect_repo').on('repo_redirect').column('redirect_repo_id').execute();
}
