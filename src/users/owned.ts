// The one interface through which a domain tells account deletion what an owner still holds
// (repositories, packages, ...) and how to purge it. Each domain that owns things per user or
// organization provides one; the application context lists them.
import type { Tx } from '../db/database.js';

export interface OwnedResources {
  /** Plural noun used in messages: "repositories", "packages". */
  readonly label: string;
  count(tx: Tx, ownerId: number): Promise<number>;
  /**
   * Deletes everything of this kind that `ownerId` owns, inside `tx`. May return work to run once
   * the transaction has committed (removing files from disk or the storage layer).
   */
  purge(tx: Tx, ownerId: number): Promise<AfterCommit | void>;
}

export type AfterCommit = () => Promise<void>;
