// Whether the owner proved an SSH key theirs by signing the verification token with it (Forgejo's
// public_key.verified; the keys page's `verify_ssh`).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('public_key')
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
