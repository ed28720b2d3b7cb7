// Leases of several Anvil processes on one database (src/cluster/leases.ts): one row per named
// piece of background work (a cron task, a node's presence), held by one process until
// `expires_ms`; `started_ms` is when it was last taken, so a periodic task runs once per period
// whichever node's timer fires first. Portable: the key is varchar(255), times are bigints.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('cluster_lease')
    .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('holder', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('expires_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('started_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
