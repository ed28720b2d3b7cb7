// Web sessions (the browser's sign-in), and failed sign-in attempts for throttling. The cookie
// holds a random value; only its SHA-256 is stored, like access tokens.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('web_session')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('expires_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_session_user').on('web_session').columns(['user_id']).execute();
  await db.schema.createIndex('web_session_expires').on('web_session').columns(['expires_unix']).execute();

  // One row per failed sign-in: by the login name tried and by the address it came from.
  await withId(db.schema.createTable('login_failure'), dialect)
    .addColumn('login', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('login_failure_login')
    .on('login_failure')
    .columns(['login', 'created_unix'])
    .execute();
  await db.schema
    .createIndex('login_failure_address')
    .on('login_failure')
    .columns(['address', 'created_unix'])
    .execute();
}
