// Git LFS: the objects each repository holds (blobs live in storage, shared by oid) and file locks.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('lfs_meta_object'), dialect)
    .addColumn('oid', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    // Deleting a repository drops its rows (and their usage) first; the cascade is a safety net.
    .addColumn('repository_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('lfs_meta_object_oid_repo', ['oid', 'repository_id'])
    .execute();
  // (oid, repository_id) serves lookups by oid (is a blob still referenced?); this one by repository.
  await db.schema
    .createIndex('lfs_meta_object_repository')
    .on('lfs_meta_object')
    .column('repository_id')
    .execute();

  await withId(db.schema.createTable('lfs_lock'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    // One lock per path and repository (and the lookup by path).
    .addUniqueConstraint('lfs_lock_repo_path', ['repo_id', 'path'])
    .execute();
  // A repository's locks in id order (the list and its cursor).
  await db.schema.createIndex('lfs_lock_repo_id').on('lfs_lock').columns(['repo_id', 'id']).execute();
  await db.schema.createIndex('lfs_lock_owner').on('lfs_lock').column('owner_id').execute();
}
