// Merging pull requests in every Forgejo style (merge, rebase, rebase-merge, squash,
// fast-forward-only, manually merged) under branch protection (force_merge by administrators),
// the merge commits signed by the instance's key; updating the head branch from the base; the
// closing keywords of the merged commits. A merge that moves the base branch writes a ref intent
// first, so that a crash ends merged (recovery completes it, events included) or not merged.
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, conflict, forbidden, invalidField, methodNotAllowed, notFound } from '../errors.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { faultPoint } from '../faults.js';
import * as data from '../git/data.js';
import type { CommitData } from '../git/data.js';
import { git, isAncestor, ZERO_OID } from '../git/git.js';
import { parseIssueReferences } from '../issues/commit-refs.js';
import type { IssueService, RepoView } from '../issues/service.js';
import * as issueStore from '../issues/store.js';
import { CommentType } from '../issues/tables.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { ProtectionService } from '../protection/service.js';
import type { RefRecovery } from '../repos/recovery.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoService } from '../repos/service.js';
import type { RefIntentRow, RepoRow } from '../repos/tables.js';
import type { SigningService } from '../signing/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { pullEvent } from './events.js';
import * as pg from './git.js';
import { MergeConflict, type Ident } from './git.js';
import type { MergeabilityService } from './mergeability.js';
import * as store from './store.js';
import { PullCommentType, PullStatus, type Pull } from './tables.js';

export const MERGE_STYLES = [
  'merge',
  'rebase',
  'rebase-merge',
  'squash',
  'fast-forward-only',
  'manually-merged',
] as const;
export type MergeStyle = (typeof MERGE_STYLES)[number];

/** Whether the repository's settings allow `style` (a manual merge is always recorded). */
export function mergeStyleAllowed(
  repo: Pick<
    RepoRow,
    | 'allow_merge_commits'
    | 'allow_rebase'
    | 'allow_rebase_explicit'
    | 'allow_squash_merge'
    | 'allow_fast_forward_only_merge'
  >,
  style: MergeStyle,
): boolean {
  switch (style) {
    case 'merge':
      return repo.allow_merge_commits === 1;
    case 'rebase':
      return repo.allow_rebase === 1;
    case 'rebase-merge':
      return repo.allow_rebase_explicit === 1;
    case 'squash':
      return repo.allow_squash_merge === 1;
    case 'fast-forward-only':
      return repo.allow_fast_forward_only_merge === 1;
    default:
      return true;
  }
}

export interface MergeInput {
  style: MergeStyle;
  title?: string | undefined;
  message?: string | undefined;
  deleteBranch?: boolean | undefined;
  headCommitId?: string | undefined;
  mergeCommitId?: string | undefined;
  force?: boolean | undefined;
}

/** What a merge records, kept in its intent so that recovery can finish it. */
interface MergeIntent {
  issueId: number;
  mergedSha: string;
  headSha: string;
  mergeBase: string;
  status: number;
}

const ident = (u: UserRow): Ident => ({ name: u.full_name || u.name, email: u.email });

export interface MergeServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'pathOf' | 'getById' | 'access' | 'requireRepo'>;
  refChanges: Pick<
    RefChanges,
    | 'beginIntent'
    | 'dropIntent'
    | 'markIntentRecorded'
    | 'changeRefs'
    | 'recordPush'
    | 'announcePush'
    | 'refreshSize'
    | 'reconcile'
  >;
  users: Pick<UserService, 'getById'>;
  /** Issues closed or reopened by the keywords of the merged commits. */
  issues: Pick<IssueService, 'findIssue' | 'closeByCommit'>;
  labels: Pick<LabelService, 'setIssueClosed'>;
  milestones: Pick<MilestoneService, 'recount'>;
  protection: Pick<ProtectionService, 'ruleFor' | 'refusalFor'>;
  /** The instance's key, which signs merge commits ([repository.signing]). */
  signing: Pick<SigningService, 'mergeSigning'>;
  mergeability: Pick<MergeabilityService, 'refresh' | 'unmetProtection' | 'blockedByDependencies'>;
  /** Merges a crash interrupted are completed by recovery (registered here as the kind `merge`). */
  recovery: Pick<RefRecovery, 'register'>;
}

export class MergeService {
  private readonly db: Db;

  constructor(private readonly deps: MergeServiceDeps) {
    this.db = deps.db;
    deps.recovery.register('merge', (intent) => this.recoverMerge(intent));
  }

  /** Whether `doer` may override branch protection with force_merge (site or repository admin). */
  static isAdmin(view: RepoView, doer: UserRow): boolean {
    return doer.is_admin === 1 || view.access.mode >= AccessMode.admin;
  }

  private dirOf(repo: { id: number }): string {
    return this.deps.repos.pathOf(repo);
  }

  async merge(view: RepoView, pull: Pull, doer: UserRow, input: MergeInput): Promise<Pull> {
    const { repo } = view;
    const { mergeability, refChanges } = this.deps;
    if ((view.access.units.get('repo.code') ?? 0) < AccessMode.write)
      throw forbidden('you need write access to the code of this repository to merge');
    if (repo.is_archived) throw forbidden(`repository is archived [id: ${repo.id}]`);
    if (pull.pr.has_merged) throw methodNotAllowed('The PR is already merged');
    if (pull.issue.is_closed) throw methodNotAllowed('The PR is closed');
    // As in Forgejo, even administrators wait for the issues this one depends on.
    if (await mergeability.blockedByDependencies(pull))
      throw methodNotAllowed('is blocked by an open dependency');
    if (!(MERGE_STYLES as readonly string[]).includes(input.style))
      throw invalidField('Do', `unknown merge style: ${input.style}`);
    if (!mergeStyleAllowed(repo, input.style)) {
      throw methodNotAllowed(`${input.style} is not allowed an allowed merge style for this repository`);
    }
    // Bring head and mergeability up to date first: the merge uses exactly what was checked.
    await mergeability.refresh(pull.pr.id, doer.id);
    const pr = (await store.getByIssueId(this.db, pull.issue.id))!;
    const current: Pull = { issue: pull.issue, pr };
    if (input.headCommitId && input.headCommitId !== pr.head_commit_id)
      throw conflict('head out of date: the head commit has changed');
    if (input.style !== 'manually-merged') {
      if (pr.status === PullStatus.conflict)
        throw new AppError('conflict', 'Merge Conflicts', {
          conflicts: JSON.parse(pr.conflicted_files) as unknown,
        });
      if (pr.status !== PullStatus.mergeable)
        throw methodNotAllowed('Please try again later: the pull request is not mergeable');
    }
    const unmet = await mergeability.unmetProtection(view, current, doer);
    if (unmet.length) {
      if (!input.force) throw methodNotAllowed(`Not allowed to merge: ${unmet.join('; ')}`);
      if (!MergeService.isAdmin(view, doer))
        throw methodNotAllowed(`force_merge needs an administrator: ${unmet.join('; ')}`);
    }
    const dir = this.dirOf(repo);
    const baseRef = `refs/heads/${pr.base_branch}`;
    const baseSha = await pg.branchSha(dir, pr.base_branch);
    if (!baseSha) throw notFound(`base branch does not exist [name: ${pr.base_branch}]`);
    const headSha = pr.head_commit_id;
    const commits = await data.log(dir, { from: headSha, not: baseSha });
    let newSha: string;
    let mergedSha: string;
    try {
      if (input.style === 'manually-merged') {
        const sha = input.mergeCommitId ?? '';
        if (!/^[0-9a-f]{40}$/i.test(sha)) throw invalidField('MergeCommitID', 'a full commit id is required');
        if (!(await data.getCommit(dir, sha, false))) throw notFound(`commit does not exist [id: ${sha}]`);
        if (!(await isAncestor(dir, sha, baseSha)))
          throw invalidField('MergeCommitID', 'the commit is not in the base branch');
        if (!(await isAncestor(dir, headSha, sha)))
          throw invalidField('MergeCommitID', 'the commit does not contain the head');
        newSha = baseSha;
        mergedSha = sha.toLowerCase();
      } else {
        newSha = await this.mergeCommitFor(dir, current, input, baseSha, headSha, doer, commits);
        mergedSha = newSha;
      }
    } catch (err) {
      if (err instanceof MergeConflict)
        throw new AppError('conflict', 'Merge Conflicts', { conflicts: err.files });
      throw err;
    }
    const merge: MergeIntent = {
      issueId: pull.issue.id,
      mergedSha,
      headSha,
      mergeBase: pr.merge_base,
      status: input.style === 'manually-merged' ? PullStatus.manuallyMerged : pr.status,
    };
    let merged: Pull;
    if (newSha === baseSha) {
      // Nothing moves in git (a manual merge): one transaction is the whole change.
      merged = await this.recordMerge(merge, doer.id);
      await this.announceMerge(repo, doer, merged, merge, []);
    } else {
      // The base branch moves: the intent is written first, so that a crash at any point ends
      // merged (recovery completes it, events included) or not merged and mergeable.
      const update: RefUpdate = { ref: baseRef, oldOid: baseSha, newOid: newSha };
      const intent = await refChanges.beginIntent(repo.id, doer.id, [update], 'merge', { ...merge });
      faultPoint('merge:intent');
      if (!(await data.updateRef(dir, baseRef, baseSha, newSha))) {
        await refChanges.dropIntent(intent);
        await refChanges.refreshSize(repo.id);
        throw conflict('the base branch moved while merging: try again');
      }
      faultPoint('merge:ref-moved');
      merged = await this.completeMerge(repo, doer, intent, update, merge, commits);
    }
    if (input.deleteBranch) await this.deleteHeadBranch(merged, doer);
    return merged;
  }

  /**
   * Brings the base branch into the head branch (Forgejo's UpdatePullRequest): a merge commit of the
   * base on top of the head ("Merge branch 'base' into head"), or the head rebased onto the base;
   * pushed to the head branch like a push by `doer`, who must be able to write to the head
   * repository (a protected head branch cannot be rebased: that needs a force push). Nothing
   * happens when the head already contains the base. 422 when merged or closed, 409 on conflicts.
   */
  async updateHead(view: RepoView, pull: Pull, doer: UserRow, style: 'merge' | 'rebase'): Promise<void> {
    const { pr } = pull;
    const { repos, protection, refChanges } = this.deps;
    if (pr.has_merged) throw invalidField('index', 'the pull request is already merged');
    if (pull.issue.is_closed) throw invalidField('index', 'the pull request is closed');
    const headRepo = pr.head_repo_id ? await repos.getById(pr.head_repo_id) : undefined;
    if (!headRepo) throw notFound('the head repository of the pull request does not exist');
    const access =
      headRepo.id === view.repo.id
        ? view.access
        : await repos.access(headRepo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if ((access.units.get('repo.code') ?? 0) < AccessMode.write || headRepo.is_archived || headRepo.is_mirror)
      throw forbidden('you are not allowed to update the head branch of this pull request');
    if (style === 'rebase' && (await protection.ruleFor(headRepo, pr.head_branch)))
      throw forbidden('the head branch is protected: it cannot be rebased');
    const baseDir = this.dirOf(view.repo);
    const headDir = this.dirOf(headRepo);
    const baseSha = await pg.branchSha(baseDir, pr.base_branch);
    if (!baseSha) throw notFound(`base branch does not exist [name: ${pr.base_branch}]`);
    const headSha = await pg.branchSha(headDir, pr.head_branch);
    if (!headSha) throw notFound(`head branch does not exist [name: ${pr.head_branch}]`);
    await pg.bringHead(baseDir, headDir, pr.head_branch);
    if (await isAncestor(baseDir, baseSha, headSha)) return;
    let newSha: string;
    try {
      newSha =
        style === 'rebase'
          ? await pg.rebase(baseDir, baseSha, headSha, ident(doer))
          : await pg.mergeCommit(
              baseDir,
              headSha,
              baseSha,
              `Merge branch '${pr.base_branch}' into ${pr.head_branch}`,
              ident(doer),
            );
    } catch (err) {
      if (err instanceof MergeConflict)
        throw new AppError('conflict', `${style} failed because of conflict`, { conflicts: err.files });
      throw err;
    }
    if (headDir !== baseDir) {
      // The new commits go to the fork through a temporary ref of the base repository.
      const tmpRef = `refs/anvil/update/${pr.id}`;
      await git(['update-ref', tmpRef, newSha], { gitDir: baseDir });
      try {
        await git(['fetch', '--quiet', '--no-tags', baseDir, tmpRef], { gitDir: headDir });
      } finally {
        await git(['update-ref', '-d', tmpRef], { gitDir: baseDir });
      }
    }
    const update: RefUpdate = { ref: `refs/heads/${pr.head_branch}`, oldOid: headSha, newOid: newSha };
    const refusal = await protection.refusalFor(headRepo, doer, [update]);
    if (refusal) throw forbidden(refusal);
    const moved = await refChanges.changeRefs(headRepo.id, doer.id, [update], () =>
      data.updateRef(headDir, update.ref, headSha, newSha),
    );
    if (!moved) throw conflict('the head branch moved while updating: try again');
  }

  /**
   * Finishes a merge whose base branch has moved (`update`): records the push and the merge,
   * then tells the listeners and removes the intent. Also the end of recovery's merge path.
   */
  private async completeMerge(
    repo: RepoRow,
    doer: UserRow,
    intent: number,
    update: RefUpdate,
    merge: MergeIntent,
    commits: CommitData[],
  ): Promise<Pull> {
    const { refChanges } = this.deps;
    await refChanges.recordPush(repo.id, doer.id, [update]);
    const merged = await this.recordMerge(merge, doer.id, intent);
    faultPoint('merge:recorded');
    await refChanges.announcePush(repo.id, doer.id, [update]);
    await this.announceMerge(repo, doer, merged, merge, commits);
    await refChanges.dropIntent(intent);
    return merged;
  }

  /** Marks the pull request merged and closed, with its timeline, in one transaction. */
  private async recordMerge(merge: MergeIntent, doerId: number, intent?: number): Promise<Pull> {
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      const pr = (await store.getByIssueId(tx, merge.issueId))!;
      const row = await store.update(tx, pr.id, {
        has_merged: 1,
        // What was merged, whatever a refresh racing with the base branch update wrote meanwhile.
        head_commit_id: merge.headSha,
        merge_base: merge.mergeBase,
        merged_commit_id: merge.mergedSha,
        merger_id: doerId,
        merged_unix: now,
        status: merge.status,
      });
      const issue = await issueStore.update(tx, merge.issueId, {
        is_closed: 1,
        closed_unix: now,
        closed_by_id: doerId,
        updated_unix: now,
      });
      await this.deps.labels.setIssueClosed(tx, issue.id, true);
      await issueStore.insertComment(tx, {
        type: PullCommentType.mergePull,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doerId,
        commit_sha: merge.mergedSha,
        created_unix: now,
        updated_unix: now,
      });
      await issueStore.insertComment(tx, {
        type: CommentType.close,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doerId,
        created_unix: now,
        updated_unix: now,
      });
      await this.deps.milestones.recount(tx, [issue.milestone_id]);
      if (intent !== undefined) await this.deps.refChanges.markIntentRecorded(tx, intent);
      return { issue, pr: row };
    });
  }

  private async announceMerge(
    repo: RepoRow,
    doer: UserRow,
    merged: Pull,
    merge: MergeIntent,
    commits: CommitData[],
  ): Promise<void> {
    await this.deps.events.emit('pull.merged', {
      ...pullEvent(merged, doer),
      mergeCommitId: merge.mergedSha,
    });
    await this.deps.events.emit('pull.closed', pullEvent(merged, doer));
    await this.closeReferencedIssues(repo, doer, merged, commits, merge.mergedSha);
  }

  /**
   * Completes a merge a crash interrupted (the intent recovery found): when the base branch
   * holds the merge, the merge is recorded (if it was not) and announced; otherwise the pull
   * request stays open and its mergeability is computed again.
   */
  async recoverMerge(intent: RefIntentRow): Promise<string> {
    const { repos, refChanges } = this.deps;
    const merge = JSON.parse(intent.data) as MergeIntent;
    const update = (JSON.parse(intent.updates) as RefUpdate[])[0]!;
    const repo = await repos.getById(intent.repo_id);
    const doer = await this.deps.users.getById(intent.doer_id);
    const pr = await store.getByIssueId(this.db, merge.issueId);
    if (!repo || !doer || !pr) {
      await refChanges.dropIntent(intent.id);
      return 'merge of a deleted pull request dropped';
    }
    const dir = this.dirOf(repo);
    if (intent.state === 0 && !pr.has_merged) {
      const tip = await pg.branchSha(dir, update.ref.slice('refs/heads/'.length));
      const landed =
        tip !== undefined && (tip === update.newOid || (await isAncestor(dir, update.newOid, tip)));
      if (!landed) {
        // The merge commit may have been written: the size is measured again.
        await refChanges.reconcile(repo.id);
        await refChanges.dropIntent(intent.id);
        await this.deps.mergeability.refresh(pr.id, doer.id).catch(() => undefined);
        return `merge of pull request ${pr.index} had not happened: left open`;
      }
      // The branch may have moved on since: bring every row in line with the refs first.
      if (tip !== update.newOid) await refChanges.reconcile(repo.id);
      const commits = await data.log(dir, { from: merge.headSha, not: update.oldOid });
      await this.completeMerge(repo, doer, intent.id, update, merge, commits);
      return `merge of pull request ${pr.index} completed`;
    }
    // Recorded before the crash: only the listeners are left to tell.
    const merged: Pull = { issue: (await issueStore.getById(this.db, merge.issueId))!, pr };
    const commits = await data.log(dir, { from: merge.headSha, not: update.oldOid });
    await refChanges.announcePush(repo.id, doer.id, [update]);
    await this.announceMerge(repo, doer, merged, merge, commits);
    await refChanges.dropIntent(intent.id);
    return `merge of pull request ${pr.index} announced`;
  }

  private async mergeCommitFor(
    dir: string,
    pull: Pull,
    input: MergeInput,
    baseSha: string,
    headSha: string,
    doer: UserRow,
    commits: CommitData[],
  ): Promise<string> {
    const who = ident(doer);
    const headLabel =
      pull.pr.head_repo_id === pull.pr.base_repo_id ? pull.pr.head_branch : `${pull.pr.head_branch} (fork)`;
    const title =
      input.title?.trim() ||
      (input.style === 'squash'
        ? `${pull.issue.title} (#${pull.issue.index})`
        : `Merge pull request '${pull.issue.title}' (#${pull.issue.index}) from ${headLabel} into ${pull.pr.base_branch}`);
    const message = input.message?.trim() ? `${title}\n\n${input.message.trim()}\n` : `${title}\n`;
    // The instance's key signs the commits a merge makes ([repository.signing]); rebased commits are not re-signed.
    const sign = await this.deps.signing.mergeSigning(doer);
    switch (input.style) {
      case 'merge':
        return pg.mergeCommit(dir, baseSha, headSha, message, who, sign);
      case 'squash': {
        const poster = pull.issue.poster_id ? await this.deps.users.getById(pull.issue.poster_id) : undefined;
        const body = input.message?.trim()
          ? message
          : `${title}\n\n${commits
              .slice()
              .reverse()
              .map((c) => `* ${c.message.trim()}`)
              .join('\n\n')}\n`;
        return pg.squashCommit(dir, baseSha, headSha, body, poster ? ident(poster) : who, who, sign);
      }
      case 'fast-forward-only':
        if (!(await isAncestor(dir, baseSha, headSha)))
          throw methodNotAllowed('fast-forward-only merge is not possible: the base branch has moved on');
        return headSha;
      case 'rebase':
        return pg.rebase(dir, baseSha, headSha, who);
      case 'rebase-merge': {
        const tip = await pg.rebase(dir, baseSha, headSha, who);
        return pg.mergeCommit(dir, baseSha, tip, message, who, sign);
      }
      default:
        throw invalidField('Do', `unknown merge style: ${String(input.style)}`);
    }
  }

  /**
   * `closes #N`, `fixes owner/repo#N`, `reopens #N`, ... in the merged commits (each commit the
   * cause) and in the pull request's title and description (the merge commit the cause, as Forgejo
   * acts on them at merge) close or reopen those issues, whatever branch the pull request merged
   * into; the merger needs write access to each issue's repository, and pull requests are never
   * closed this way.
   */
  private async closeReferencedIssues(
    repo: RepoRow,
    doer: UserRow,
    pull: Pull,
    commits: CommitData[],
    mergeSha: string,
  ) {
    const { repos, issues } = this.deps;
    const viewer = { id: doer.id, isAdmin: doer.is_admin === 1 };
    const sources = [
      ...commits
        .slice()
        .reverse()
        .map((c) => ({ text: c.message, sha: c.oid })),
      { text: `${pull.issue.title}\n\n${pull.issue.content}`, sha: mergeSha },
    ];
    for (const { text, sha } of sources) {
      for (const ref of parseIssueReferences(text)) {
        if (!ref.action) continue;
        try {
          const target =
            ref.owner && ref.repo
              ? (await repos.requireRepo(ref.owner, ref.repo, viewer, 'read', 'repo.issues')).repo
              : repo;
          if (target.id === repo.id && ref.index === pull.issue.index) continue;
          const issue = await issues.findIssue(target, ref.index);
          if (!issue || issue.is_pull) continue;
          await issues.closeByCommit(target, ref.index, doer, sha, ref.action === 'close');
        } catch (err) {
          if (!(err instanceof AppError)) this.deps.log.warn({ err }, 'closing an issue by commit failed');
        }
      }
    }
  }

  private async deleteHeadBranch(pull: Pull, doer: UserRow): Promise<void> {
    const { repos, protection, refChanges } = this.deps;
    const headRepo = pull.pr.head_repo_id ? await repos.getById(pull.pr.head_repo_id) : undefined;
    if (!headRepo || headRepo.default_branch === pull.pr.head_branch) return;
    const access = await repos.access(headRepo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if ((access.units.get('repo.code') ?? 0) < AccessMode.write) return;
    const dir = this.dirOf(headRepo);
    const sha = await pg.branchSha(dir, pull.pr.head_branch);
    if (!sha || sha !== pull.pr.head_commit_id) return;
    const ref = `refs/heads/${pull.pr.head_branch}`;
    const u = { ref, oldOid: sha, newOid: ZERO_OID };
    if (await protection.refusalFor(headRepo, doer, [u])) return;
    await refChanges.changeRefs(headRepo.id, doer.id, [u], () => data.updateRef(dir, ref, sha, ZERO_OID));
  }
}
