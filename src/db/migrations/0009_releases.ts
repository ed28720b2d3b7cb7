// Releases: one per tag and repository (tag names compared without case). A draft has no tag yet;
// publishing it creates the tag. `is_tag` marks a row that only records a tag (no release shown).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('release'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    // Kept when the publisher's account goes (shown as the ghost user).
    .addColumn('publisher_id', 'bigint', (c) => c.notNull())
    .addColumn('tag_name', 'text', (c) => c.notNull())
    .addColumn('lower_tag_name', 'text', (c) => c.notNull())
    // Branch or commit the tag is (to be) created at.
    .addColumn('target', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
    // The commit the tag points to; empty for a draft whose tag does not exist yet.
    .addColumn('sha1', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_prerelease', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_tag', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hide_archive_links', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    // Also the lookup by tag.
    .addUniqueConstraint('release_repo_tag', ['repo_id', 'lower_tag_name'])
    .execute();
  // A repository's releases newest first (lists and the latest release).
  await db.schema
    .createIndex('release_repo_created')
    .on('release')
    .columns(['repo_id', 'created_unix', 'id'])
    .execute();
}
