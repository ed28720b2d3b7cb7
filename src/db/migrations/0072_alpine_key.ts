// The Alpine registry's signing keys: one RSA key pair per owner (made on first use; its public
// half, PEM, is /api/packages/{owner}/alpine/key, its private half, PKCS#1 PEM, signs every
// APKINDEX.tar.gz of the owner), as Forgejo keeps them in the user settings alpine.key.*.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_alpine_key'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().unique().references('user.id').onDelete('cascade'))
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
}
