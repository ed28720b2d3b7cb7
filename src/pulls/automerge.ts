// Scheduled merges ("merge when checks succeed", Forgejo's auto-merge): a writer asks for a pull
// request to be merged once branch protection is satisfied (required status checks passed, enough
// approvals); the merge then runs, as that writer with the style and message they chose, when a
// commit status arrives for the head, a review is submitted, the head moves or mergeability changes. Asking when nothing
// is left to wait for merges at once. The timeline records scheduling and cancelling.
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import { conflict, forbidden, notFound } from '../errors.js';
import * as issueStore from '../issues/store.js';
import { CommentType } from '../issues/tables.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoView } from '../issues/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { MergeabilityService } from './mergeability.js';
import { MergeService, type MergeInput } from './merging.js';
import * as store from './store.js';
import { PullStatus } from './tables.js';
import type { AutoMergeRow, Pull } from './tables.js';

export interface AutoMergeServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'getById' | 'access'>;
  users: Pick<UserService, 'getById'>;
  /** What is left to wait for, and when a pull request's refreshes are done. */
  mergeability: Pick<MergeabilityService, 'unmetProtection' | 'whenRefreshed'>;
  merging: Pick<MergeService, 'merge'>;
}

export class AutoMergeService {
  private readonly db: Db;

  constructor(private readonly deps: AutoMergeServiceDeps) {
    this.db = deps.db;
    const { events, mergeability } = deps;
    events.on('status.created', (e) => this.attemptAtHead(e.repoId, e.sha));
    events.on('pull.reviewed', async (e) => void (await this.attempt(e.pullId)));
    // Sent from inside a refresh of the pull request, which merging waits for: tried after it.
    events.on('pull.synchronized', (e) => mergeability.whenRefreshed(e.pullId, () => this.attempt(e.pullId)));
    // Mergeability found again (a conflict gone after the base moved): a merge that waited on it runs.
    events.on('pull.checked', (e) => mergeability.whenRefreshed(e.pullId, () => this.attempt(e.pullId)));
    // Merged or closed by other means: nothing is left to schedule.
    events.on('pull.merged', (e) => this.drop(e.pullId));
    events.on('pull.closed', (e) => this.drop(e.pullId));
  }

  get(pull: Pull): Promise<AutoMergeRow | undefined> {
    return store.getAutoMerge(this.db, pull.pr.id);
  }

  /**
   * Schedules the merge; 'now' when nothing is left to wait for (the caller merges at once, as
   * Forgejo does). 409 when a merge is already scheduled.
   */
  async schedule(view: RepoView, pull: Pull, doer: UserRow, input: MergeInput): Promise<'scheduled' | 'now'> {
    if ((view.access.units.get('repo.code') ?? 0) < AccessMode.write)
      throw forbidden('you need write access to the code of this repository to merge');
    if (pull.pr.has_merged) throw conflict('The PR is already merged');
    if (pull.issue.is_closed) throw conflict('The PR is closed');
    const unmet = await this.deps.mergeability.unmetProtection(view, pull, doer);
    if (unmet.length === 0 && pull.pr.status === PullStatus.mergeable) return 'now';
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
    return 'scheduled';
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

  private async attemptAtHead(repoId: number, sha: string): Promise<void> {
    for (const row of await store.autoMergesAtHead(this.db, repoId, sha)) await this.attempt(row.pull_id);
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
