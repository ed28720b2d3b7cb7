// Two-factor authentication with TOTP (Forgejo's two_factor): one row per enrolled user with the
// TOTP secret (encrypted with [security] SECRET_KEY), the salted hash of the single-use recovery
// ("scratch") code, and the last accepted passcode and its time step, so a code is never accepted
// twice.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('two_factor'), dialect)
    .addColumn('uid', 'bigint', (c) => c.notNull().unique().references('user.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('scratch_salt', 'text', (c) => c.notNull())
    .addColumn('scratch_hash', 'text', (c) => c.notNull())
    .addColumn('last_used_passcode', 'varchar(10)')
    .addColumn('last_used_step', 'bigint')
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
}
