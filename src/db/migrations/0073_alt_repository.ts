// The ALT Linux registry's repository files of each group (for each architecture:
// `{arch}/base/pkglist.classic`, `.xz`, `release.classic`, `release`), rebuilt when a package is
// uploaded or deleted and served as stored; contents are base64. The same shape as
// package_rpm_index (0064), whose queries serve both; MariaDB's TEXT (64 KiB) would be too small.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_alt_index'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('group_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('path', 'varchar(64)', (c) => c.notNull())
    .addColumn('content', dialect === 'mysql' ? sql`mediumtext` : 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_alt_index_path', ['owner_id', 'group_name', 'path'])
    .execute();
}
