// Whether pull requests can be merged: head, merge base and conflicts computed again in the
// background when either branch moves (one refresh at a time per pull request; a push is never
// held up by it), and what branch protection still asks for (merge allow-list, required status
// checks, approvals, rejected reviews) and open dependencies.
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { git } from '../git/git.js';
import type { RepoView } from '../issues/service.js';
import * as issueStore from '../issues/store.js';
import { openDependencyCount } from '../issues/tracking-store.js';
import { ruleMatches } from '../protection/match.js';
import type { ProtectionService } from '../protection/service.js';
import type { RepoService } from '../repos/service.js';
import type { StatusService } from '../statuses/service.js';
import type { UserRow } from '../users/tables.js';
import { pullEvent } from './events.js';
import * as pg from './git.js';
import type { PullReviewService } from './reviewing.js';
import * as store from './store.js';
import { PullStatus, ReviewType, type Pull } from './tables.js';

export interface MergeabilityServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'pathOf' | 'getById'>;
  protection: Pick<ProtectionService, 'ruleFor' | 'isMergeWhitelisted'>;
  statuses: Pick<StatusService, 'combinedState'>;
  /** Reviews made stale by a moved head, and the approvals branch protection counts. */
  reviews: Pick<PullReviewService, 'headMoved' | 'latestReviews'>;
}

export class MergeabilityService {
  private readonly db: Db;
  private readonly running = new Map<number, Promise<void>>();
  private readonly background = new Set<Promise<void>>();

  constructor(private readonly deps: MergeabilityServiceDeps) {
    this.db = deps.db;
    // Refreshing is background work: the push is never held up by it.
    deps.events.on('push', (e) => {
      this.track(this.onPush(e.repoId, e.pusherId, e.updates));
    });
  }

  private dirOf(repo: { id: number }): string {
    return this.deps.repos.pathOf(repo);
  }

  private track(p: Promise<void>): void {
    const t = p.catch((err: unknown) => this.deps.log.warn({ err }, 'pull request refresh failed'));
    this.background.add(t);
    void t.finally(() => this.background.delete(t));
  }

  /**
   * Runs `fn` as background work once the refreshes of pull request `prId` queued so far are done.
   * For listeners of the events a refresh sends that act on the pull request (a scheduled merge):
   * awaited inside the refresh, they would wait on that same refresh.
   */
  whenRefreshed(prId: number, fn: () => Promise<unknown>): void {
    const queued = this.running.get(prId) ?? Promise.resolve();
    this.track(queued.then(fn).then(() => undefined));
  }

  /** Resolves once no background refresh is running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.background.size) await Promise.all([...this.background]);
  }

  /** Recomputes head, merge base and mergeability of an open pull request (one at a time per pull). */
  async refresh(prId: number, pusherId?: number): Promise<void> {
    const prev = this.running.get(prId) ?? Promise.resolve();
    const next = prev.then(() => this.refreshNow(prId, pusherId));
    const settled = next.catch(() => undefined);
    this.running.set(prId, settled);
    void settled.then(() => {
      if (this.running.get(prId) === settled) this.running.delete(prId);
    });
    return next;
  }

  private async refreshNow(prId: number, pusherId?: number): Promise<void> {
    const pr = await store.getById(this.db, prId);
    if (!pr || pr.has_merged) return;
    const issue = (await issueStore.getById(this.db, pr.issue_id))!;
    if (issue.is_closed) return;
    const baseDir = this.dirOf({ id: pr.base_repo_id });
    const headRepo = pr.head_repo_id ? await this.deps.repos.getById(pr.head_repo_id) : undefined;
    let headSha = pr.head_commit_id;
    let synced = false;
    if (headRepo) {
      const headDir = this.dirOf(headRepo);
      const sha = await pg.branchSha(headDir, pr.head_branch);
      if (sha && sha !== headSha) {
        await pg.bringHead(baseDir, headDir, pr.head_branch);
        await git(['update-ref', `refs/pull/${pr.index}/head`, sha], { gitDir: baseDir });
        headSha = sha;
        synced = true;
      }
    }
    const baseSha = await pg.branchSha(baseDir, pr.base_branch);
    const m = baseSha
      ? await pg.mergeability(baseDir, baseSha, headSha)
      : { status: PullStatus.error, mergeBase: pr.merge_base, conflicts: [] };
    const updated = await store.updateUnmerged(this.db, pr.id, {
      head_commit_id: headSha,
      merge_base: m.mergeBase,
      status: m.status,
      conflicted_files: JSON.stringify(m.conflicts),
    });
    if (!updated) return;
    const doer = { id: pusherId ?? 0 };
    if (!synced && pr.status !== updated.status) {
      await this.deps.events.emit('pull.checked', pullEvent({ issue, pr: updated }, doer));
    }
    if (synced) {
      await this.deps.reviews.headMoved(issue, updated, pr.head_commit_id, pusherId);
      await this.deps.events.emit('pull.synchronized', pullEvent({ issue, pr: updated }, doer));
    }
  }

  private async onPush(repoId: number, pusherId: number, updates: RefUpdate[]): Promise<void> {
    const ids = new Set<number>();
    for (const u of updates) {
      if (!u.ref.startsWith('refs/heads/')) continue;
      for (const pr of await store.openTouching(this.db, repoId, u.ref.slice(11))) ids.add(pr.id);
    }
    for (const id of ids) await this.refresh(id, pusherId);
  }

  // What merging waits for

  /** Whether issues this pull request depends on are still open (then it cannot be merged). */
  async blockedByDependencies(pull: Pull): Promise<boolean> {
    return (await openDependencyCount(this.db, pull.issue.id)) > 0;
  }

  /** What branch protection still asks for before `doer` may merge (empty when nothing). */
  async unmetProtection(view: RepoView, pull: Pull, doer: UserRow): Promise<string[]> {
    const { protection, statuses, reviews: reviewing } = this.deps;
    const rule = await protection.ruleFor(view.repo, pull.pr.base_branch);
    if (!rule) return [];
    const unmet: string[] = [];
    const code = view.access.units.get('repo.code') ?? 0;
    if (!(await protection.isMergeWhitelisted(rule, doer, code)))
      unmet.push('you are not allowed to merge into this branch');
    if (rule.enable_status_check && rule.statusCheckContexts.length) {
      const { contexts } = await statuses.combinedState(view.repo, pull.pr.head_commit_id);
      for (const wanted of rule.statusCheckContexts) {
        const matching = [...contexts].filter(([name]) => name === wanted || ruleMatches(wanted, name));
        if (matching.length === 0 || matching.some(([, s]) => s !== 'success' && s !== 'warning')) {
          unmet.push(`required status check ${wanted} has not succeeded`);
        }
      }
    }
    const reviews = await reviewing.latestReviews(pull.issue.id);
    if (rule.required_approvals > 0) {
      let approvals = 0;
      for (const r of reviews) {
        if (r.type !== ReviewType.approve || r.dismissed || r.reviewer_id === null) continue;
        // A stale approval (of commits the pull request has moved past) still counts unless the rule ignores them.
        if (r.stale && rule.ignore_stale_approvals) continue;
        if (rule.enable_approvals_whitelist) {
          if (!rule.approvals.userIds.includes(r.reviewer_id)) continue;
        } else if (!r.official) continue;
        approvals++;
      }
      if (approvals < rule.required_approvals)
        unmet.push(`${approvals} of ${rule.required_approvals} required approvals`);
    }
    if (rule.block_on_rejected_reviews && reviews.some((r) => r.type === ReviewType.reject && !r.dismissed))
      unmet.push('changes were requested');
    return unmet;
  }
}
