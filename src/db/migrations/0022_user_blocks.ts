// Blocked users, as Forgejo keeps them (`forgejo_blocked_user`): an account (a person or an
// organization, `user_id`) blocks another (`block_id`), who may then not star, watch, follow, open
// issues or pull requests, comment or react in its repositories.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('forgejo_blocked_user'), dialect)
    .addColumn('block_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('forgejo_blocked_user_pair', ['user_id', 'block_id'])
    .execute();
  await db.schema
    .createIndex('forgejo_blocked_user_block')
    .on('forgejo_blocked_user')
    .column('block_id')
    .execute();
}
