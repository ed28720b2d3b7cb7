// How domains take part in quota accounting.
//
// Writes: a domain that stores something with a size calls `recordUsage` inside the same
// transaction as its own write (positive when adding, negative when removing), always for the
// owner of the repository that holds the resource, never the uploader. A check then reads a
// handful of per-owner totals, whatever the number of rows behind them.
//
// Recalculation: each domain provides a `UsageSource` that first measures what its rows describe
// (repositories on disk, blobs in storage) and corrects the rows' recorded sizes, then recomputes
// its totals from its own tables; `anvil admin quota recalculate` compares them with the stored
// totals and fixes drift.
//
// Lists: `/user/quota/attachments|artifacts|packages` show the items a domain counts against an
// owner, through an `ItemSource`.
import type { Db, Tx } from '../db/database.js';
import { addUsage, setSizeIf, type SizedTable } from './store.js';
import type { LeafSubject } from './subjects.js';

export type OwnerTotals = Map<number, Partial<Record<LeafSubject, number>>>;

/** A row whose recorded size disagreed with what it describes, as measured (and corrected). */
export interface SizeCorrection {
  /** What was measured: 'repository', 'lfs', 'attachment', 'artifact'. */
  kind: string;
  /** Which one, for people: `owner/repo`, followed by the object for LFS, attachments and artifacts. */
  name: string;
  /** The owner whose usage it counts to. */
  ownerId: number;
  recorded: number;
  measured: number;
}

export interface UsageSource {
  /** Stored subjects this source accounts for. */
  readonly subjects: readonly LeafSubject[];
  /** Totals per owner computed from the domain's tables; only `ownerId` when given. */
  totals(q: Db | Tx, ownerId?: number): Promise<OwnerTotals>;
  /**
   * Measures what the domain's rows describe (on disk, in storage) and corrects the rows whose
   * recorded size disagrees, leaving the usage totals alone (recalculation compares those next);
   * the rows it corrected. Only `ownerId`'s when given.
   */
  measure?(db: Db, ownerId?: number): Promise<SizeCorrection[]>;
}

/** Rows measured per page (and per batch of concurrent measurements). */
const MEASURE_PAGE = 200;
const MEASURE_CONCURRENCY = 8;

/**
 * The loop of a `measure`: rows are read a page at a time (by id), measured a few at once, and
 * each row whose size differs is corrected with a compare-and-set (`fix` returns false when the
 * row changed meanwhile, for example by an upload or a push: then it is left to the writer).
 * A row `measure` cannot measure (its directory or blob is missing) is left as it is.
 */
export async function measureRows<R extends { id: number; size: number | string; owner_id: number }>(opts: {
  kind: string;
  db: Db;
  /** Where the rows live: a correction updates `size` there, unless it changed meanwhile. */
  table: SizedTable;
  page(afterId: number, limit: number): Promise<R[]>;
  measure(row: R): Promise<number | undefined>;
  name(row: R): string;
}): Promise<SizeCorrection[]> {
  const out: SizeCorrection[] = [];
  for (let after = 0; ;) {
    const rows = await opts.page(after, MEASURE_PAGE);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    for (let i = 0; i < rows.length; i += MEASURE_CONCURRENCY) {
      const part = rows.slice(i, i + MEASURE_CONCURRENCY);
      const sizes = await Promise.all(part.map((r) => opts.measure(r)));
      for (const [j, r] of part.entries()) {
        const measured = sizes[j];
        const recorded = Number(r.size);
        if (measured === undefined || measured === recorded) continue;
        if (await setSizeIf(opts.db, opts.table, r.id, recorded, measured)) {
          out.push({ kind: opts.kind, name: opts.name(r), ownerId: r.owner_id, recorded, measured });
        }
      }
    }
    if (rows.length < MEASURE_PAGE) break;
  }
  return out;
}

export interface ItemSource<T> {
  /**
   * One page of the owner's items and their number, by id; or largest first (`bySize`, the storage
   * overview's), then not counted (-1), which would read every row.
   */
  list(q: Db | Tx, ownerId: number, limit: number, offset: number, bySize?: boolean): Promise<[T[], number]>;
}

export function recordUsage(tx: Tx, ownerId: number, subject: LeafSubject, delta: number): Promise<void> {
  return addUsage(tx, ownerId, subject, delta);
}
