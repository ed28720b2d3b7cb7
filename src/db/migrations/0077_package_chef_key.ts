// The public keys of the Chef registry's signed requests (Forgejo keeps it as the user setting
// `chef.public_pem`): one RSA public key (PEM, SubjectPublicKeyInfo) per account, set when the
// account makes a new key pair on its package settings page (the private key is handed over once
// and not kept).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_chef_key'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().unique().references('user.id').onDelete('cascade'))
    .addColumn('public_pem', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
}
