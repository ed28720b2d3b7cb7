// The intent log of ref changes: a row written before Anvil moves a ref (a push, a merge, a branch
// or tag made through the API, a mirror sync) and removed once the database and the listeners know
// what happened. Rows left by a crash are completed at the next start (src/repos/recovery.ts).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('ref_intent'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('doer_id', 'bigint', (c) => c.notNull())
    // JSON: the ref updates ({ref, oldOid, newOid}[]) the change means to make.
    .addColumn('updates', 'text', (c) => c.notNull())
    // JSON: what the kind needs to finish the change (a merge: the pull request and its commit).
    .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
    // 0: refs may have moved, the database does not know yet; 1: recorded, listeners not yet told.
    .addColumn('state', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ref_intent_created').on('ref_intent').columns(['created_unix']).execute();
}
