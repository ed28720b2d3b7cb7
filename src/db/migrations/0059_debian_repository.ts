// The Debian registry's repository files: one OpenPGP key pair per owner (made on first use; its
// public half is /api/packages/{owner}/debian/repository.key, its private half signs InRelease
// and Release.gpg), and the index files of each distribution (Release, InRelease, Release.gpg,
// {component}/binary-{arch}/Packages, .gz, .xz), rebuilt when a package is uploaded or deleted
// and served as stored. Contents are base64 (Packages.gz and .xz are binary).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_debian_key'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().unique().references('user.id').onDelete('cascade'))
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('package_debian_index'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('distribution', 'text', (c) => c.notNull())
    // Below dists/{distribution}/: `Release`, `main/binary-amd64/Packages.gz`, ...
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('hash_md5', 'text', (c) => c.notNull())
    .addColumn('hash_sha1', 'text', (c) => c.notNull())
    .addColumn('hash_sha256', 'text', (c) => c.notNull())
    .addColumn('hash_sha512', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_debian_index_path', ['owner_id', 'distribution', 'path'])
    .execute();
}
