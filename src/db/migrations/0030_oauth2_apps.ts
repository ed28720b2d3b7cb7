// OAuth2 applications a user registers (`oauth2_application`, as Forgejo): a name, a public client
// id (a UUID), the SHA-256 of the client secret (shown once, at creation), the redirect URIs (a
// JSON array) and whether the client is confidential.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('oauth2_application'), dialect)
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('client_secret_hash', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('confidential_client', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth2_application_uid').on('oauth2_application').column('uid').execute();
}
