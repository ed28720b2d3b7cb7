// Repository flags (`repo_flag`, as Forgejo): a set of free-form strings per repository that site
// administrators set (for instrumentation and moderation); each name once per repository.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('repo_flag'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addUniqueConstraint('repo_flag_repo_name', ['repo_id', 'name'])
    .execute();
}
