// Blob upload sessions of the container registry (OCI distribution spec): one row per upload
// started by `POST /v2/{image}/blobs/uploads/`, with the bytes received so far in how many parts
// (each PATCH is one stored part under tmp/container/{id}/; the finishing PUT composes them).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('package_blob_upload')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('bytes_received', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('parts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
}
