import type { CreateTableBuilder } from 'kysely';
import type { Dialect } from '../dialect.js';

/** Adds the auto-increment integer primary key `id` in the dialect's own way. */
export function withId<T extends string>(t: CreateTableBuilder<T, never>, dialect: Dialect) {
  if (dialect === 'postgres') return t.addColumn('id', 'bigserial', (c) => c.primaryKey());
  if (dialect === 'mysql') return t.addColumn('id', 'bigint', (c) => c.primaryKey().autoIncrement());
  return t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
