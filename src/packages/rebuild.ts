// Rebuilding the stored repository files of a group (an RPM or ALT Linux group, a Debian
// distribution) from its packages. The rebuilds of one owner take turns in this process, and a
// change that finds its group's rebuild still queued joins it (`GroupRebuilds`). Across processes a rebuild writes only when the group has not
// changed since it read it (a stamp of the group compared under a lock on a row of the owner) and
// starts over otherwise, so the stored files always end up describing the last state.
import { transaction, type Db, type Tx } from '../db/database.js';
import { KeyedLock } from '../locks.js';
import type { UserRow } from '../users/tables.js';

/** Rebuilds that found their group changed start over this many times, then write anyway. */
const ATTEMPTS = 20;

/** The steps of one group's rebuild (`rebuildGroup`). */
export interface GroupRebuild<T> {
  /** What changes whenever a file joins or leaves the group. */
  stamp(q: Db | Tx): Promise<string>;
  /** Reads the group and builds its files, outside a transaction. */
  build(): Promise<T>;
  /** Holds a row of the owner until the transaction ends (the rebuilds of one owner take turns). */
  lock(tx: Tx): Promise<void>;
  /** Replaces the group's stored files with the built ones. */
  write(tx: Tx, built: T): Promise<void>;
}

/** Reads the stamp, builds, then writes under the owner's lock if the stamp is the same; see the header. */
export async function rebuildGroup<T>(db: Db, steps: GroupRebuild<T>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const stamp = await steps.stamp(db);
    const built = await steps.build();
    const written = await transaction(db, async (tx) => {
      await steps.lock(tx);
      if ((await steps.stamp(tx)) !== stamp && attempt < ATTEMPTS) return false;
      await steps.write(tx, built);
      return true;
    });
    if (written) return;
  }
}

/**
 * The rebuilds of a format's groups, one owner's at a time in this process. A caller that finds a
 * rebuild of its group queued and not yet started joins it: that one reads the group after the
 * caller's change, so several uploads at once cost two rebuilds rather than one each.
 */
export class GroupRebuilds {
  private readonly turns = new KeyedLock<number>();
  /** Rebuilds queued behind another of the same owner, by owner and group. */
  private readonly queued = new Map<string, Promise<void>>();

  constructor(private readonly build: (owner: UserRow, group: string) => Promise<void>) {}

  run(owner: UserRow, group: string): Promise<void> {
    const key = `${owner.id}\0${group}`;
    const queued = this.queued.get(key);
    if (queued) return queued;
    const run = this.turns.run(owner.id, () => {
      this.queued.delete(key);
      return this.build(owner, group);
    });
    this.queued.set(key, run);
    return run;
  }
}
