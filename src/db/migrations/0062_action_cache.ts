// The actions cache (actions/cache's v1 protocol, served at /api/actions_cache/): one row per entry
// of a repository and ref, its archive in `storage.artifacts` under `cache/`; and the chunks of an
// upload in progress (PATCH with Content-Range), each its own storage object until the commit
// joins them. `key_hash` is the SHA-256 of ref, version and key: unique within a repository.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('action_cache'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('cache_key', 'text', (c) => c.notNull())
    .addColumn('version', 'varchar(255)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull())
    // 'reserved' until the commit, 'committing' while the chunks are joined, then 'committed'.
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addColumn('used_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('action_cache_repo_hash', ['repo_id', 'key_hash'])
    .execute();
  await db.schema
    .createIndex('action_cache_repo_version')
    .on('action_cache')
    .columns(['repo_id', 'version'])
    .execute();
  await db.schema
    .createTable('action_cache_chunk')
    .addColumn('cache_id', 'bigint', (c) => c.notNull().references('action_cache.id').onDelete('cascade'))
    .addColumn('start_offset', 'bigint', (c) => c.notNull())
    .addColumn('end_offset', 'bigint', (c) => c.notNull())
    .addColumn('storage_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_cache_chunk_pk', ['cache_id', 'start_offset'])
    .execute();
}
