// The site administration lists accounts by their last update (Forgejo's recentupdate and
// leastupdate sorts): an index on the type and the update time keeps one page fast on a large site.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createIndex('user_type_updated')
    .on('user')
    .columns(['type', 'updated_unix', 'id'])
    .execute();
}
