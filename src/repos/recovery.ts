// Recovery of ref changes a crash interrupted. Every change that moves refs writes an intent
// first (RepoService.beginIntent) and removes it when done; an intent still there at start-up
// (or an hour after it was written, for a change whose recording failed) is completed here:
// - a push (git, the API, a tag, a mirror sync): the repository's rows are brought in line with
//   its refs (RepoService.reconcile), then the updates that took effect are announced;
// - a merge: handed to the pull requests service, which completes it when the base branch holds
//   the merge commit, and otherwise leaves the pull request open and mergeable.
// Listeners are told at least once: a crash after they were told and before the intent was
// removed tells them again.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { RefUpdate } from '../events/bus.js';
import { listRefs, ZERO_OID } from '../git/git.js';
import * as store from './store.js';
import type { RefIntentRow } from './tables.js';
import type { RefChanges } from './ref-changes.js';
import type { RepoService } from './service.js';

/** Completes an interrupted change of one kind; returns a line saying what it did. */
export type IntentRecovery = (intent: RefIntentRow) => Promise<string>;

/** How long a change may take before recovery treats it as interrupted while the server runs. */
export const STALE_INTENT_SECONDS = 3600;

/** How often the running server looks for stale intents. */
export const CHECK_MS = 10 * 60 * 1000;

export interface RefRecoveryDeps {
  db: Db;
  repos: Pick<RepoService, 'getById' | 'pathOf'>;
  refChanges: Pick<RefChanges, 'reconcile' | 'announcePush' | 'dropIntent'>;
  log: Logger;
}

export class RefRecovery {
  private readonly kinds = new Map<string, IntentRecovery>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  private readonly db: Db;
  private readonly repos: RefRecoveryDeps['repos'];
  private readonly refChanges: RefRecoveryDeps['refChanges'];
  private readonly log: Logger;

  constructor(deps: RefRecoveryDeps) {
    this.db = deps.db;
    this.repos = deps.repos;
    this.refChanges = deps.refChanges;
    this.log = deps.log;
    this.kinds.set('push', (intent) => this.recoverPush(intent));
  }

  /** Registers how to complete interrupted changes of `kind` (pull requests: 'merge'). */
  register(kind: string, recover: IntentRecovery): void {
    this.kinds.set(kind, recover);
  }

  /** While `anvil web` runs: completes changes still unfinished an hour after they began. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const before = Math.floor(Date.now() / 1000) - STALE_INTENT_SECONDS;
      void this.recover(before).catch((err: unknown) => this.log.error({ err }, 'recovery failed'));
    }, CHECK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => []);
  }

  /**
   * Completes every change begun before `before` (unix seconds), and every one the process
   * `node` began (at start-up: what this process left when it stopped; with no other process
   * alive, `before` is now and that is everything).
   * One failing change is logged and left for the next run; the others go on.
   */
  recover(before: number, node?: string): Promise<string[]> {
    this.running ??= this.recoverAll(before, node).finally(() => (this.running = undefined));
    return this.running;
  }

  private async recoverAll(before: number, node?: string): Promise<string[]> {
    const done: string[] = [];
    let afterId = 0;
    for (;;) {
      const batch = await store.intentsBefore(this.db, before, afterId, 100, node);
      if (!batch.length) break;
      for (const intent of batch) {
        afterId = intent.id;
        const recover = this.kinds.get(intent.kind);
        try {
          if (!recover) throw new Error(`unknown kind of change: ${intent.kind}`);
          const line = `repository ${intent.repo_id}: ${await recover(intent)}`;
          this.log.warn(
            { intent: intent.id, repoId: intent.repo_id },
            `recovered an interrupted change: ${line}`,
          );
          done.push(line);
        } catch (err) {
          this.log.error({ err, intent: intent.id, repoId: intent.repo_id }, 'recovering a change failed');
        }
      }
      if (batch.length < 100) break;
    }
    return done;
  }

  /**
   * `anvil doctor`: every repository's rows against its refs (branch rows, default branch,
   * `is_empty`, size), and repository directories that no repository owns (left by a creation
   * a crash interrupted). With `fix`, corrects and removes what it reports.
   */
  async checkRepositories(fix: boolean): Promise<string[]> {
    const found: string[] = [];
    const ids = await store.allIds(this.db);
    for (const id of ids) {
      for (const line of await this.refChanges.reconcile(id, fix)) found.push(`repository ${id}: ${line}`);
    }
    const known = new Set(ids);
    const root = path.dirname(this.repos.pathOf({ id: 0 }));
    for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      const m = /^(\d+)(?:\.wiki)?\.git$/.exec(entry); // a repository or its wiki
      if (!m || known.has(Number(m[1]))) continue;
      // A creation under way has its directory before its row commits: leave young ones.
      const age = Date.now() - fs.statSync(path.join(root, entry)).mtimeMs;
      if (age < STALE_INTENT_SECONDS * 1000) continue;
      found.push(`${entry}: a repository directory with no repository`);
      if (fix) fs.rmSync(path.join(root, entry), { recursive: true, force: true });
    }
    return found;
  }

  private async recoverPush(intent: RefIntentRow): Promise<string> {
    const updates = JSON.parse(intent.updates) as RefUpdate[];
    const fixed = await this.refChanges.reconcile(intent.repo_id);
    const repo = await this.repos.getById(intent.repo_id);
    let applied: RefUpdate[] = [];
    if (repo) {
      const refs = new Map((await listRefs(this.repos.pathOf(repo))).map((r) => [r.name, r.oid]));
      applied = updates.filter((u) =>
        u.newOid === ZERO_OID ? !refs.has(u.ref) : refs.get(u.ref) === u.newOid,
      );
      if (applied.length) await this.refChanges.announcePush(intent.repo_id, intent.doer_id, applied);
    }
    await this.refChanges.dropIntent(intent.id);
    const what = applied.length
      ? `${applied.length} ref update(s) announced`
      : 'no ref update had taken effect';
    return fixed.length ? `${what}; corrected: ${fixed.join(', ')}` : what;
  }
}
