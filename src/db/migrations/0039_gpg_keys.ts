// GPG keys of users, as Forgejo's gpg_key: one row per primary key and one per subkey (subkeys name
// their primary in primary_key_id), the armored text the user gave kept on the primary row, and the
// user's activated addresses that matched the key's user IDs when it was added (gpg_key_email).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('gpg_key'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('key_id', 'text', (c) => c.notNull().unique())
    .addColumn('primary_key_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('armored', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('expired_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('added_unix', 'bigint', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_sign', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_encrypt_comms', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_encrypt_storage', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_certify', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('gpg_key_owner')
    .on('gpg_key')
    .columns(['owner_id', 'primary_key_id'])
    .execute();
  await db.schema.createIndex('gpg_key_primary').on('gpg_key').column('primary_key_id').execute();
  await withId(db.schema.createTable('gpg_key_email'), dialect)
    .addColumn('gpg_key_id', 'bigint', (c) => c.notNull().references('gpg_key.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('lower_email', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('gpg_key_email_key').on('gpg_key_email').column('gpg_key_id').execute();
}
