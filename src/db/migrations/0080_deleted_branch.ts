// Deleted branches, as Forgejo keeps them (its branch table's is_deleted rows): the last commit of
// a branch a push or the web deleted, who deleted it and when, so that a writer can restore it from
// the branches page while git still has the commit. A branch made again under the name drops it.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('deleted_branch'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('commit_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('commit_message', 'text', (c) => c.notNull())
    .addColumn('deleted_by_id', 'bigint', (c) => c.notNull())
    .addColumn('deleted_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('deleted_branch_repo_name')
    .on('deleted_branch')
    .columns(['repo_id', 'name'])
    .unique()
    .execute();
}
