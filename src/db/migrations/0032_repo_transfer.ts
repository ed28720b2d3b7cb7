// Pending repository transfers (`repo_transfer`, as Forgejo): a transfer to someone who must
// accept it first. One per repository at most; the doer, the recipient (a user or an
// organization), the teams to give the repository once accepted (a JSON array of ids) and when it
// was asked. The row goes when the transfer is accepted or rejected, or with the repository.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('repo_transfer'), dialect)
    .addColumn('doer_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('recipient_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) =>
      c.notNull().unique().references('repository.id').onDelete('cascade'),
    )
    .addColumn('team_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('repo_transfer_recipient').on('repo_transfer').column('recipient_id').execute();
}
