// Hot, fixed-shape queries compiled once and run with new values: Kysely builds and compiles a
// query on every call, which costs more than SQLite takes to answer an indexed lookup.
import type { Compilable, CompiledQuery } from 'kysely';
import { fastReaderOf, type Db, type Tx } from './database.js';

const MARK = '\u0000anvil-arg:';

/**
 * Wraps a query builder whose shape does not depend on its arguments (only bound values do).
 * The first call compiles it with placeholder values; every call then runs that compiled SQL on
 * `q` (the database or a transaction) with the real values bound.
 */
export function preparedQuery<A extends unknown[], O>(
  build: (q: Db | Tx, ...args: A) => Compilable<O>,
): (q: Db | Tx, ...args: A) => Promise<O[]> {
  let compiled: CompiledQuery<O> | undefined;
  let slots: number[] = [];
  return async (q, ...args) => {
    if (!compiled) {
      const marks = args.map((_, i) => `${MARK}${i}`) as unknown as A;
      compiled = build(q, ...marks).compile();
      slots = compiled.parameters.map((p) =>
        typeof p === 'string' && p.startsWith(MARK) ? Number(p.slice(MARK.length)) : -1,
      );
    }
    const c = compiled;
    const parameters = c.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    const fast = fastReaderOf(q);
    if (fast) return fast.all(c.sql, parameters) as O[];
    const result = await q.executeQuery<O>({ ...c, parameters });
    return result.rows;
  };
}
