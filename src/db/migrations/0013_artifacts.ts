// Actions artifacts (the v4 artifact service): one row per artifact of a workflow run, its bytes in
// `storage.artifacts` under `storage_key`; and the blocks of an upload in progress (Azure Blob
// style `comp=block` uploads), each its own storage object until the block list is committed.
// A name is unique within a run. Runs and jobs live in the actions domain's tables: plain columns.
// Deleting a repository drops its artifacts (and their usage and files) first through the
// repository hooks; the cascades are a safety net.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('action_artifact'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('run_id', 'bigint', (c) => c.notNull())
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // 'pending' from CreateArtifact until FinalizeArtifact, then 'uploaded' (counted in quota).
    .addColumn('status', 'text', (c) => c.notNull())
    // Bytes and hex SHA-256 of the content received so far (0 and '' before any upload).
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('sha256', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('expires_unix', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('action_artifact_run_name', ['run_id', 'name'])
    .execute();
  await db.schema.createIndex('action_artifact_repo').on('action_artifact').column('repo_id').execute();
  await db.schema
    .createIndex('action_artifact_expires')
    .on('action_artifact')
    .column('expires_unix')
    .execute();
  await db.schema
    .createIndex('action_artifact_status_created')
    .on('action_artifact')
    .columns(['status', 'created_unix'])
    .execute();

  await db.schema
    .createTable('action_artifact_block')
    .addColumn('artifact_id', 'bigint', (c) =>
      c.notNull().references('action_artifact.id').onDelete('cascade'),
    )
    // The client's block id (base64, as sent); the storage key is derived from it, never it.
    .addColumn('block_id', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_artifact_block_pk', ['artifact_id', 'block_id'])
    .execute();
}
