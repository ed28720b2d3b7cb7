// Scheduled merges ("merge when checks succeed", Forgejo's auto-merge): a writer asks for a pull
// request to be merged once branch protection is satisfied (required status checks passed, enough
// approvals); the merge then runs, as that writer with the style and message they chose. As in
// Forgejo (services/automerge), scheduling always schedules and answers at once; the merge is
// never done inside the request but by the queue below, which checks a pull request when it is
// scheduled, when a commit status arrives for its head, a review is submitted, the head moves or
// mergeability changes (at once when nothing is left to wait for). The queue is the
// pull_auto_merge table itself, so it survives a restart: `start` (anvil web) checks every
// scheduled pull request at start-up and every few minutes. One worker per process drains it
// under the cluster lease `automerge`, so of several processes only one merges at a time. The
// timeline records scheduling and cancelling.
import type { Logger } from 'pino';
import type { Cluster } from '../cluster/service.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import { conflict, forbidden, notFound } from '../errors.js';
import { faultPoint } from '../faults.js';
import * as issueStore from '../issues/store.js';
import { CommentType } from '../issues/tables.js';
import type { RepoView } from '../issues/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { MergeabilityService } from './mergeability.js';
import { MergeService, type MergeInput } from './merging.js';
import * as store from './store.js';
import type { AutoMergeRow, Pull } from './tables.js';

/** How often `start`'s sweep checks every scheduled pull request again (events can be missed by a dead process). */
const SWEEP_MS = 5 * 60_000;
/** The cluster lease under which a process works the queue. */
const LEASE = 'automerge';

export interface AutoMergeServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  /** The lease under which one process works the queue, and the periodic sweep. */
  cluster: Pick<Cluster, 'leases' | 'every'>;
  repos: Pick<RepoService, 'getById' | 'access'>;
  users: Pick<UserService, 'getById'>;
  /** What is left to wait for, and when a pull request's refreshes are done. */
  mergeability: Pick<MergeabilityService, 'unmetProtection' | 'whenRefreshed'>;
  merging: Pick<MergeService, 'merge'>;
}

export class AutoMergeService {
  /** Pull requests to check, in the order asked (a pull request asked for twice is checked once). */
  private readonly pending = new Set<number>();
  private worker: Promise<void> | undefined;
  private readonly background = new Set<Promise<unknown>>();
  private stopped = false;

  private readonly db: Db;

  constructor(private readonly deps: AutoMergeServiceDeps) {
    this.db = deps.db;
    const { events, mergeability } = deps;
    events.on('status.created', (e) => void this.track(this.enqueueAtHead(e.repoId, e.sha)));
    events.on('pull.reviewed', (e) => this.enqueue(e.pullId));
    // Sent from inside a refresh of the pull request: checked after it.
    events.on('pull.synchronized', (e) =>
      mergeability.whenRefreshed(e.pullId, async () => this.enqueue(e.pullId)),
    );
    // Mergeability found again (a conflict gone after the base moved): a merge that waited on it runs.
    events.on('pull.checked', (e) =>
      mergeability.whenRefreshed(e.pullId, async () => this.enqueue(e.pullId)),
    );
    // Merged or closed by other means: nothing is left to schedule.
    events.on('pull.merged', (e) => this.drop(e.pullId));
    events.on('pull.closed', (e) => this.drop(e.pullId));
  }

  get(pull: Pull): Promise<AutoMergeRow | undefined> {
    return store.getAutoMerge(this.db, pull.pr.id);
  }

  /**
   * Schedules the merge and asks the queue to check the pull request (Forgejo's ScheduleAutoMerge):
   * nothing is merged here, even when nothing is left to wait for. 409 when a merge is already
   * scheduled.
   */
  async schedule(view: RepoView, pull: Pull, doer: UserRow, input: MergeInput): Promise<void> {
    if ((view.access.units.get('repo.code') ?? 0) < AccessMode.write)
      throw forbidden('you need write access to the code of this repository to merge');
    if (pull.pr.has_merged) throw conflict('The PR is already merged');
    if (pull.issue.is_closed) throw conflict('The PR is closed');
    const added = await transaction(this.db, async (tx) => {
      const ok = await store.insertAutoMerge(tx, {
        pull_id: pull.pr.id,
        doer_id: doer.id,
        merge_style: input.style,
        title: input.title ?? '',
        message: input.message ?? '',
        delete_branch: input.deleteBranch ? 1 : 0,
        created_unix: nowUnix(),
      });
      if (ok) await this.note(tx, pull, doer.id, CommentType.pullScheduledMerge);
      return ok;
    });
    if (!added) throw conflict('pull request is already scheduled to auto merge');
    // Scheduled and not yet checked: the start-up sweep finds it after a crash here.
    faultPoint('automerge:scheduled');
    this.enqueue(pull.pr.id);
  }

  /** Cancels a scheduled merge: whoever scheduled it, or a repository administrator. */
  async cancel(view: RepoView, pull: Pull, doer: UserRow): Promise<void> {
    const row = await store.getAutoMerge(this.db, pull.pr.id);
    if (!row) throw notFound('pull request is not scheduled to auto merge');
    if (row.doer_id !== doer.id && !MergeService.isAdmin(view, doer))
      throw forbidden('only who scheduled the merge, or an administrator, may cancel it');
    await transaction(this.db, async (tx) => {
      if (await store.deleteAutoMerge(tx, pull.pr.id))
        await this.note(tx, pull, doer.id, CommentType.pullCancelScheduledMerge);
    });
  }

  private async note(
    tx: Parameters<typeof issueStore.insertComment>[0],
    pull: Pull,
    doerId: number,
    type: number,
  ) {
    const now = nowUnix();
    await issueStore.insertComment(tx, {
      type,
      repo_id: pull.issue.repo_id,
      issue_id: pull.issue.id,
      poster_id: doerId,
      created_unix: now,
      updated_unix: now,
    });
  }

  private async drop(pullId: number): Promise<void> {
    await store.deleteAutoMerge(this.db, pullId);
  }

  private async enqueueAtHead(repoId: number, sha: string): Promise<void> {
    for (const row of await store.autoMergesAtHead(this.db, repoId, sha)) this.enqueue(row.pull_id);
  }

  private track<T>(work: Promise<T>): Promise<T | undefined> {
    const t = work.catch((err: unknown) => {
      this.deps.log.warn({ err }, 'scheduled merges: checking failed');
      return undefined;
    });
    this.background.add(t);
    void t.finally(() => this.background.delete(t));
    return t;
  }

  /** Asks the queue to check pull request `pullId` (Forgejo's StartPRCheckAndAutoMerge); returns at once. */
  enqueue(pullId: number): void {
    if (this.stopped) return;
    this.pending.add(pullId);
    this.kick();
  }

  private kick(): void {
    this.worker ??= this.work().finally(() => {
      this.worker = undefined;
      // Asked for while the worker was finishing.
      if (this.pending.size && !this.stopped) this.kick();
    });
  }

  /** Drains the queue under the cluster lease, waiting for it while another process holds it. */
  private async work(): Promise<void> {
    let delay = 50;
    while (this.pending.size && !this.stopped) {
      const r = await this.deps.cluster.leases
        .run(LEASE, () => this.drain())
        .catch((err: unknown) => {
          this.deps.log.warn({ err }, 'scheduled merges: the queue could not be worked');
          return { ran: false as const };
        });
      if (r.ran) {
        delay = 50;
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  private async drain(): Promise<void> {
    for (const pullId of this.pending) {
      if (this.stopped) return;
      this.pending.delete(pullId);
      try {
        await this.attempt(pullId);
      } catch (err) {
        this.deps.log.warn({ err, pullId }, 'scheduled merge failed');
      }
    }
  }

  /** Checks every scheduled pull request (after a restart: what was scheduled before it). */
  async sweep(): Promise<void> {
    for (const id of await store.scheduledAutoMergeIds(this.db)) this.enqueue(id);
  }

  /** Starts the queue (anvil web): a sweep now and every SWEEP_MS, once across processes. */
  start(): void {
    this.deps.cluster.every('pull_auto_merge', SWEEP_MS, () => this.sweep(), { firstMs: 0 });
  }

  /** Resolves once the queue is empty and nothing is being checked (tests). */
  async idle(): Promise<void> {
    while (this.background.size || this.worker) {
      await Promise.allSettled([...this.background, this.worker]);
    }
  }

  /** Stops taking work; a merge under way finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  /** Merges a scheduled pull request when nothing is left to wait for; otherwise keeps waiting. */
  async attempt(pullId: number): Promise<boolean> {
    const row = await store.getAutoMerge(this.db, pullId);
    if (!row) return false;
    const pr = await store.getById(this.db, pullId);
    const issue = pr && (await issueStore.getById(this.db, pr.issue_id));
    const repo = pr && (await this.deps.repos.getById(pr.base_repo_id));
    const doer = await this.deps.users.getById(row.doer_id);
    if (!pr || !issue || !repo || !doer || pr.has_merged || issue.is_closed) {
      await this.drop(pullId);
      return false;
    }
    const view = {
      repo,
      access: await this.deps.repos.access(repo, { id: doer.id, isAdmin: doer.is_admin === 1 }),
    };
    const pull = { issue, pr };
    if ((view.access.units.get('repo.code') ?? 0) < AccessMode.write) return false;
    if ((await this.deps.mergeability.unmetProtection(view, pull, doer)).length) return false;
    try {
      await this.deps.merging.merge(view, pull, doer, {
        style: row.merge_style as MergeInput['style'],
        title: row.title || undefined,
        message: row.message || undefined,
        deleteBranch: row.delete_branch === 1,
      });
    } catch (err) {
      // Not mergeable yet (checking, conflicts): the next status, review or push tries again.
      this.deps.log.info({ err, pullId }, 'scheduled merge not done yet');
      return false;
    }
    await this.drop(pullId);
    return true;
  }
}
