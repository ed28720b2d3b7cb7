// How domains take part in quota accounting.
//
// Writes: a domain that stores something with a size calls `recordUsage` inside the same
// transaction as its own write (positive when adding, negative when removing), always for the
// owner of the repository that holds the resource, never the uploader. A check then reads a
// handful of per-owner totals, whatever the number of rows behind them.
//
// Recalculation: each domain provides a `UsageSource` that recomputes its totals from its own
// tables; `anvil admin quota recalculate` compares them with the stored totals and fixes drift.
//
// Lists: `/user/quota/attachments|artifacts|packages` show the items a domain counts against an
// owner, through an `ItemSource`.
import type { Db, Tx } from '../db/database.js';
import { addUsage } from './store.js';
import type { LeafSubject } from './subjects.js';

export type OwnerTotals = Map<number, Partial<Record<LeafSubject, number>>>;

export interface UsageSource {
  /** Stored subjects this source accounts for. */
  readonly subjects: readonly LeafSubject[];
  /** Totals per owner computed from the domain's tables; only `ownerId` when given. */
  totals(q: Db | Tx, ownerId?: number): Promise<OwnerTotals>;
}

export interface ItemSource<T> {
  list(q: Db | Tx, ownerId: number, limit: number, offset: number): Promise<[T[], number]>;
}

export function recordUsage(tx: Tx, ownerId: number, subject: LeafSubject, delta: number): Promise<void> {
  return addUsage(tx, ownerId, subject, delta);
}
