// Attachments: files on issues, comments and releases (blobs in `storage.attachments`, keyed by
// uuid). One table for all three: exactly one of issue_id/comment_id (with issue_id) or release_id
// says what holds an attachment. Sizes count toward the repository owner's quota; deleting a
// repository drops its rows (and their usage) first, the cascade is a safety net.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('attachment'), dialect)
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    // Issues, comments and releases live in their own migrations: plain columns, no foreign keys.
    .addColumn('issue_id', 'bigint')
    .addColumn('comment_id', 'bigint')
    .addColumn('release_id', 'bigint')
    // Kept when the uploader's account goes (shown as the ghost user, as in Forgejo).
    .addColumn('uploader_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
    // A link to a file elsewhere (release assets only): no blob, size 0.
    .addColumn('external_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('attachment_repo').on('attachment').column('repo_id').execute();
  await db.schema.createIndex('attachment_issue').on('attachment').column('issue_id').execute();
  await db.schema.createIndex('attachment_comment').on('attachment').column('comment_id').execute();
  await db.schema.createIndex('attachment_release').on('attachment').column('release_id').execute();
}
