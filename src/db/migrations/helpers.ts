import type { CreateTableBuilder } from 'kysely';
import type { Dialect } from '../database.js';

/** Adds the auto-increment integer primary key `id` in the dialect's own way. */
export function withId<T extends string>(t: CreateTableBuilder<T, never>, dialect: Dialect) {
  return dialect === 'postgres'
    ? t.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
