// Ref changes as the database and the listeners learn of them: every path that moves refs (a push,
// a merge, a branch, tag or file written through the API, a mirror sync) writes an intent first,
// moves the refs, records what changed (branch rows, default branch, size and quota usage) and
// announces it (the `push` event), then drops the intent; recovery.ts completes what a crash left.
import fs from 'node:fs';
import type { Db, Tx } from '../db/database.js';
import { nowUnix, transaction } from '../db/database.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { faultPoint } from '../faults.js';
import { git, listRefs, objectsSize, ZERO_OID } from '../git/git.js';
import { recordUsage } from '../quota/usage.js';
import { commitsOf, recordBranch, sizeSubject } from './records.js';
import * as store from './store.js';

/** Where repositories live (RepoService). */
export interface RepoDirs {
  pathOf(repo: { id: number }): string;
}

export interface RefChangesDeps {
  db: Db;
  events: EventBus;
  repos: RepoDirs;
  /** This process in ref intents ([cluster] NODE_NAME; see recovery.ts). */
  node: string;
}

export class RefChanges {
  private readonly db: Db;
  private readonly events: EventBus;
  private readonly node: string;

  constructor(private readonly deps: RefChangesDeps) {
    this.db = deps.db;
    this.events = deps.events;
    this.node = deps.node;
  }

  private pathOf(repo: { id: number }): string {
    return this.deps.repos.pathOf(repo);
  }

  /**
   * Writes down a ref change before it is made. Every path that moves refs (a push, a merge, a
   * branch or tag made through the API, a mirror sync) does this first, and removes the intent
   * once the database and the listeners know what happened (`afterPush`), so a crash at any
   * point is completed at the next start (src/repos/recovery.ts). Returns the intent's id.
   */
  async beginIntent(
    repoId: number,
    doerId: number,
    updates: RefUpdate[],
    kind = 'push',
    data: Record<string, unknown> = {},
  ): Promise<number> {
    return store.insertIntent(this.db, {
      repo_id: repoId,
      kind,
      doer_id: doerId,
      updates: JSON.stringify(updates),
      data: JSON.stringify(data),
      created_unix: nowUnix(),
      node: this.node,
    });
  }

  /** Marks an intent recorded inside the transaction that recorded its change. */
  markIntentRecorded(tx: Tx, id: number): Promise<void> {
    return store.markIntentRecorded(tx, id);
  }

  /** Forgets an intent whose change was not made (or is complete). */
  async dropIntent(id: number): Promise<void> {
    await store.deleteIntent(this.db, id);
  }

  /**
   * Moves refs with `move` (true when it moved them) under an intent, then records and announces
   * the change; false when `move` changed nothing.
   */
  async changeRefs(
    repoId: number,
    doerId: number,
    updates: RefUpdate[],
    move: () => Promise<boolean>,
  ): Promise<boolean> {
    const intent = await this.beginIntent(repoId, doerId, updates);
    let moved = false;
    try {
      moved = await move();
    } finally {
      if (!moved) await this.dropIntent(intent);
    }
    if (moved) await this.afterPush(repoId, doerId, updates, intent);
    return moved;
  }

  /**
   * Brings the database up to date with what a push did: branch records, the first branch
   * becoming the default on a first push, the repository's size (and its quota usage); then
   * announces the push and removes its intent. `updates` come from the pre-receive hook; each is
   * checked against the refs as they are now, so an update git refused is not recorded.
   */
  async afterPush(repoId: number, pusherId: number, updates: RefUpdate[], intent?: number): Promise<void> {
    const applied = await this.recordPush(repoId, pusherId, updates, intent);
    faultPoint('push:recorded');
    if (applied.length) await this.announcePush(repoId, pusherId, applied);
    if (intent !== undefined) await this.dropIntent(intent);
  }

  /**
   * The database part of `afterPush` (branches, default branch, size and usage); returns the
   * updates that took effect, for `announcePush`, and marks the intent (if any) recorded in the
   * same transaction. Smart HTTP records a push before answering git and announces it
   * afterwards, so slow listeners never hold up the pushing client.
   */
  async recordPush(
    repoId: number,
    pusherId: number,
    updates: RefUpdate[],
    intent?: number,
  ): Promise<RefUpdate[]> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return [];
    const dir = this.pathOf(repo);
    const refs = new Map((await listRefs(dir)).map((r) => [r.name, r.oid]));
    const applied = updates.filter((u) =>
      u.newOid === ZERO_OID ? !refs.has(u.ref) : refs.get(u.ref) === u.newOid,
    );
    if (applied.length === 0) {
      if (intent !== undefined) await store.markIntentRecorded(this.db, intent);
      return [];
    }
    const branches = [...refs.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice(11));
    const defaultBranch = await this.settleDefaultBranch(dir, repo.default_branch, branches, applied);
    const size = objectsSize(dir);
    // One git process for the commits of all pushed branches, before the transaction starts.
    const pushedHeads = applied.filter((u) => u.ref.startsWith('refs/heads/') && u.newOid !== ZERO_OID);
    const commits = await commitsOf(
      dir,
      pushedHeads.map((u) => u.newOid),
    );
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      for (const u of applied) {
        if (!u.ref.startsWith('refs/heads/')) continue;
        const name = u.ref.slice(11);
        if (u.newOid === ZERO_OID) await store.archiveBranch(tx, repoId, name, pusherId);
        else await recordBranch(tx, repoId, name, u.newOid, pusherId, commits.get(u.newOid));
      }
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, {
        size,
        is_empty: branches.length ? 0 : 1,
        default_branch: defaultBranch,
        updated_unix: nowUnix(),
      });
      if (intent !== undefined) await store.markIntentRecorded(tx, intent);
    });
    return applied;
  }

  /**
   * The default branch after refs changed: kept while it exists; otherwise the branch a push
   * just made, else `main`, else the first by name (and HEAD is pointed at it).
   */
  private async settleDefaultBranch(
    dir: string,
    current: string,
    branches: string[],
    applied: RefUpdate[],
  ): Promise<string> {
    if (!branches.length || branches.includes(current)) return current;
    const pushed = applied.find((u) => u.ref.startsWith('refs/heads/') && u.newOid !== ZERO_OID);
    const chosen = pushed
      ? pushed.ref.slice(11)
      : branches.includes('main')
        ? 'main'
        : [...branches].sort()[0]!;
    await git(['symbolic-ref', 'HEAD', `refs/heads/${chosen}`], { gitDir: dir });
    return chosen;
  }

  /**
   * Brings a repository's rows in line with its refs on disk: branch rows (added, moved or
   * removed), the default branch, `is_empty` and the size with its quota usage. Returns what it
   * corrected (empty when everything agreed). Used by start-up recovery and `anvil doctor`.
   */
  async reconcile(repoId: number, fix = true): Promise<string[]> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return [];
    const dir = this.pathOf(repo);
    if (!fs.existsSync(dir)) return [`repository directory is missing: ${dir}`];
    const heads = new Map(
      (await listRefs(dir, 'refs/heads/')).map((r) => [r.name.slice(11), r.oid] as const),
    );
    const rows = new Map((await store.allBranches(this.db, repoId)).map((b) => [b.name, b]));
    const found: string[] = [];
    const stale = [...heads].filter(([name, oid]) => rows.get(name)?.commit_id !== oid);
    const gone = [...rows.keys()].filter((name) => !heads.has(name));
    for (const [name] of stale)
      found.push(rows.has(name) ? `branch ${name} moved` : `branch ${name} unrecorded`);
    for (const name of gone) found.push(`branch ${name} no longer exists`);
    const branches = [...heads.keys()];
    const defaultBranch = fix
      ? await this.settleDefaultBranch(dir, repo.default_branch, branches, [])
      : repo.default_branch;
    if (defaultBranch !== repo.default_branch || (branches.length && !heads.has(repo.default_branch)))
      found.push(`default branch ${repo.default_branch} is not a branch`);
    const isEmpty = branches.length ? 0 : 1;
    if (isEmpty !== repo.is_empty) found.push(`is_empty was ${repo.is_empty}`);
    const size = objectsSize(dir);
    if (size !== repo.size) found.push(`size was ${repo.size}, is ${size}`);
    if (!found.length || !fix) return found;
    const commits = await commitsOf(
      dir,
      stale.map(([, oid]) => oid),
    );
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      for (const [name, oid] of stale)
        await recordBranch(
          tx,
          repoId,
          name,
          oid,
          rows.get(name)?.pusher_id ?? current.owner_id,
          commits.get(oid),
        );
      for (const name of gone) await store.deleteBranch(tx, repoId, name);
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, { size, is_empty: isEmpty, default_branch: defaultBranch });
    });
    return found;
  }

  /** Tells the listeners of the `push` event what a push changed. */
  announcePush(repoId: number, pusherId: number, updates: RefUpdate[]): Promise<void> {
    return this.events.emit('push', { repoId, pusherId, updates });
  }

  /** Recomputes the stored size of a repository from disk (for example after LFS or a mirror sync). */
  async refreshSize(repoId: number): Promise<void> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return;
    const size = objectsSize(this.pathOf(repo));
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, { size });
    });
  }
}
