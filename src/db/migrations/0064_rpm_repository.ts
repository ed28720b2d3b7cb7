// The RPM registry's repodata files of each group (repomd.xml, repomd.xml.asc, primary.xml.gz,
// filelists.xml.gz, other.xml.gz), rebuilt when a package is uploaded or deleted and served as
// stored; contents are base64. They are signed with the owner's key of package_debian_key.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('package_rpm_index'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('group_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('path', 'varchar(64)', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('package_rpm_index_path', ['owner_id', 'group_name', 'path'])
    .execute();
}
