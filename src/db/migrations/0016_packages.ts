// Package registries: a package (owner, format, name; optionally linked to a repository), its
// versions, the files of a version, and the content-addressed blobs those files name (one row and
// one stored object per distinct SHA-256, however many files name it). Properties are name/value
// pairs on a version, a file or a package (npm dist-tags, for example).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('set null'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('lower_name', 'text', (c) => c.notNull())
    // Raised by every change to the package's versions, files or properties: rendered documents
    // (the npm packument) are reused while it stays the same.
    .addColumn('revision', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_owner_type_name', ['owner_id', 'type', 'lower_name'])
    .execute();
  await db.schema.createIndex('package_repo').on('package').column('repo_id').execute();

  await withId(db.schema.createTable('package_version'), dialect)
    .addColumn('package_id', 'bigint', (c) => c.notNull().references('package.id').onDelete('cascade'))
    .addColumn('creator_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('lower_version', 'text', (c) => c.notNull())
    // Format-specific metadata (the npm package.json of the version, for example), JSON.
    .addColumn('metadata_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_version_package_version', ['package_id', 'lower_version'])
    .execute();

  await withId(db.schema.createTable('package_blob'), dialect)
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('hash_md5', 'text', (c) => c.notNull())
    .addColumn('hash_sha1', 'text', (c) => c.notNull())
    .addColumn('hash_sha256', 'text', (c) => c.notNull().unique())
    .addColumn('hash_sha512', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('package_file'), dialect)
    .addColumn('version_id', 'bigint', (c) =>
      c.notNull().references('package_version.id').onDelete('cascade'),
    )
    // Not cascaded: a blob goes only when no file names it any more (the service removes it).
    .addColumn('blob_id', 'bigint', (c) => c.notNull().references('package_blob.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('lower_name', 'text', (c) => c.notNull())
    .addColumn('composite_key', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_lead', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_file_version_name', ['version_id', 'lower_name', 'composite_key'])
    .execute();
  await db.schema.createIndex('package_file_blob').on('package_file').column('blob_id').execute();

  // ref_type: 0 version, 1 file, 2 package.
  await withId(db.schema.createTable('package_property'), dialect)
    .addColumn('ref_type', 'integer', (c) => c.notNull())
    .addColumn('ref_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('package_property_ref')
    .on('package_property')
    .columns(['ref_type', 'ref_id', 'name'])
    .execute();
}
