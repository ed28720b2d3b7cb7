// Account settings of the web interface: the e-mail notification preference of /user/settings/
// notifications (Forgejo's `email_notifications_preference`: enabled, onmention, disabled), and
// the claim of the first administrator (users/service.ts `create` with `firstBecomesAdmin`): one
// row at most, so of two sign-ups on an empty site only the one whose row goes in is made admin.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('user')
    .addColumn('email_notifications_preference', 'varchar(20)', (c) => c.notNull().defaultTo('enabled'))
    .execute();
  await db.schema
    .createTable('first_admin_claim')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .execute();
}
