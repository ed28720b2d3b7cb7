// The claim of the first administrator (users/service.ts `create` with `firstBecomesAdmin`): one
// row at most, so of two sign-ups on an empty site only the one whose row goes in is made admin.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('first_admin_claim')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .execute();
}
