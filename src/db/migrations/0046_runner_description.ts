// A runner's description (Forgejo's action_runner.description), edited on the runners settings pages.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('action_runner')
    .addColumn('description', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute();
}
