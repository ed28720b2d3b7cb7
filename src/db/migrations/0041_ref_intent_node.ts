// Which process began a ref intent (repos/recovery.ts): a process starting again completes at once
// what it left unfinished, while another process's intents are its own until they are stale (it
// may still be in the middle of them).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('ref_intent')
    .addColumn('node', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute();
}
