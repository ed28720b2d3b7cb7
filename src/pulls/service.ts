// Pull requests: an issue row (is_pull = 1, the repository's shared numbers) and a pull_request
// row with the head and base, created from a branch of the same repository or of a fork; editing
// (through the issues service), diffs, files and commits; mergeability computed at creation and
// refreshed in the background when either branch moves; merging in every Forgejo style under
// branch protection (force_merge by administrators); reviews and review requests. The git work
// happens on the base repository with plumbing or in a temporary clone (see ./git.ts).
import type { AppContext } from '../app/context.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, conflict, forbidden, invalidField, methodNotAllowed, notFound } from '../errors.js';
import type { RefUpdate } from '../events/bus.js';
import type { Page } from '../http/pagination.js';
import { git, isAncestor, ZERO_OID } from '../git/git.js';
import * as data from '../git/data.js';
import type { CommitData } from '../git/data.js';
import { AccessMode } from '../orgs/store.js';
import type { RepoRow } from '../repos/tables.js';
import type { Viewer } from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import * as issueStore from '../issues/store.js';
import type { IssueRow } from '../issues/tables.js';
import { CommentType } from '../issues/tables.js';
import type { RepoView } from '../issues/service.js';
import { canWriteIssues } from '../issues/service.js';
import { ruleMatches } from '../protection/match.js';
import * as store from './store.js';
import { openDependencyCount } from '../issues/tracking-store.js';
import { parseIssueReferences } from '../issues/commit-refs.js';
import type { PullRow, ReviewCommentRow, ReviewRow } from './tables.js';
import { PullStatus, ReviewType, type PullReviewCommentTable } from './tables.js';
import type { Insertable } from 'kysely';
import * as pg from './git.js';
import { MergeConflict, type Ident } from './git.js';
import './events.js';
import { faultPoint } from '../faults.js';
import type { RefIntentRow } from '../repos/tables.js';

/** What a merge records, kept in its intent so that recovery can finish it. */
interface MergeIntent {
  issueId: number;
  mergedSha: string;
  headSha: string;
  mergeBase: string;
  status: number;
}

export const MERGE_STYLES = [
  'merge',
  'rebase',
  'rebase-merge',
  'squash',
  'fast-forward-only',
  'manually-merged',
] as const;
export type MergeStyle = (typeof MERGE_STYLES)[number];

export interface CreatePullInput {
  head: string;
  base: string;
  title: string;
  body?: string | undefined;
  assignee?: string | undefined;
  assignees?: string[] | undefined;
  labels?: number[] | undefined;
  milestone?: number | undefined;
  dueDate?: number | undefined;
}

export interface EditPullInput {
  title?: string | undefined;
  body?: string | undefined;
  base?: string | undefined;
  state?: 'open' | 'closed' | undefined;
  assignee?: string | undefined;
  assignees?: string[] | undefined;
  milestone?: number | null | undefined;
  labels?: number[] | undefined;
  dueDate?: number | null | undefined;
  unsetDueDate?: boolean | undefined;
  allowMaintainerEdit?: boolean | undefined;
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

/** A pull request: its issue row and its pull_request row. */
export interface Pull {
  issue: IssueRow;
  pr: PullRow;
}

/** A line comment of a review, as Forgejo's CreatePullReviewComment has it. */
export interface ReviewCommentInput {
  path?: string | undefined;
  body?: string | undefined;
  new_position?: number | undefined;
  old_position?: number | undefined;
}

/** The largest line number a comment may name. */
const MAX_LINE = 2_147_483_647;
const REVIEW_NAMES: Record<number, string> = {
  0: 'PENDING',
  1: 'APPROVED',
  2: 'COMMENT',
  3: 'REQUEST_CHANGES',
  4: 'REQUEST_REVIEW',
};

const MERGE_PULL_COMMENT = 28;
const DISMISS_REVIEW_COMMENT = 32;
/** The timeline's text for an approval dismissed by a push (Forgejo's words). */
const STALE_DISMISSAL =
  'New commits pushed, approval review dismissed automatically according to repository settings';
const CHANGE_TARGET_BRANCH_COMMENT = 25;
const ident = (u: UserRow): Ident => ({ name: u.full_name || u.name, email: u.email });

export class PullService {
  private readonly running = new Map<number, Promise<void>>();
  private readonly background = new Set<Promise<void>>();

  constructor(private readonly ctx: AppContext) {
    // Refreshing is background work: the push is never held up by it.
    ctx.events.on('push', (e) => {
      this.track(this.onPush(e.repoId, e.pusherId, e.updates));
    });
    // A pull request is closed or reopened through its issue, whichever endpoint (or commit
    // message) did it: announce that as a pull event too (actions' pull_request triggers).
    ctx.events.on('issue.closed', (e) => (e.isPull ? this.announce('pull.closed', e) : undefined));
    ctx.events.on('issue.reopened', (e) => (e.isPull ? this.announce('pull.reopened', e) : undefined));
  }

  private async announce(
    event: 'pull.closed' | 'pull.reopened',
    e: { repoId: number; issueId: number; index: number; doerId: number },
  ): Promise<void> {
    const pr = await store.getByIssueId(this.db, e.issueId);
    if (!pr) return;
    await this.ctx.events.emit(event, { ...e, pullId: pr.id });
  }

  private get db(): Db {
    return this.ctx.db;
  }

  private track(p: Promise<void>): void {
    const t = p.catch((err: unknown) => this.ctx.log.warn({ err }, 'pull request refresh failed'));
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

  // Look-ups

  async requirePull(repo: RepoRow, index: number): Promise<Pull> {
    const issue = Number.isSafeInteger(index)
      ? await issueStore.getByIndex(this.db, repo.id, index)
      : undefined;
    const pr = issue?.is_pull ? await store.getByIssueId(this.db, issue.id) : undefined;
    if (!issue || !pr) throw notFound(`pull request does not exist [repo_id: ${repo.id}, index: ${index}]`);
    return { issue, pr };
  }

  /**
   * The pull request of `repo` merged as commit `sha` (a full or abbreviated commit id), else the
   * newest one whose head is that commit (Forgejo's GetCommitPullRequest); 404 when none.
   */
  async requireByCommit(repo: RepoRow, sha: string): Promise<Pull> {
    const missing = () => notFound(`pull request does not exist [commit: ${sha}]`);
    if (!data.isHexOid(sha)) throw missing();
    const r = await data.resolveRef(this.dirOf(repo), sha);
    if (!r || r.kind !== 'commit') throw missing();
    const pr = await store.findByCommit(this.db, repo.id, r.oid);
    if (!pr) throw missing();
    return this.requirePull(repo, pr.index);
  }

  /**
   * The open pull request of `repo` from `head` (a branch, `owner:branch` or `owner/repo:branch`)
   * into `base` (Forgejo's GetPullRequestByBaseHead); 404 when none.
   */
  async requireByBaseHead(repo: RepoRow, viewer: Viewer | null, base: string, head: string): Promise<Pull> {
    const missing = () => notFound(`pull request does not exist [base: ${base}, head: ${head}]`);
    const h = await this.resolveHead(repo, viewer, head).catch((err: unknown) => {
      if (err instanceof AppError && err.kind === 'not_found') throw missing();
      throw err;
    });
    const pr = await store.findOpen(this.db, repo.id, base, h.repo.id, h.branch);
    if (!pr) throw missing();
    const issue = (await issueStore.getById(this.db, pr.issue_id))!;
    return { issue, pr };
  }

  /** The pinned pull requests of `repo`, in pin order. */
  async pinned(repo: RepoRow): Promise<Pull[]> {
    const issues = await this.ctx.issueTriage.pinned(repo, true);
    const prs = await store.getByIssueIds(
      this.db,
      issues.map((i) => i.id),
    );
    return issues.filter((i) => prs.has(i.id)).map((issue) => ({ issue, pr: prs.get(issue.id)! }));
  }

  pullsOf(issueIds: number[]): Promise<Map<number, PullRow>> {
    return store.getByIssueIds(this.db, issueIds);
  }

  private dirOf(repo: { id: number }): string {
    return this.ctx.repos.pathOf(repo);
  }

  private async branchSha(dir: string, branch: string): Promise<string | undefined> {
    if (!data.isValidRefName(branch)) return undefined;
    const r = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
      gitDir: dir,
      okCodes: [1, 128],
    });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
  }

  /** The head repository and branch of `head`: `branch`, `owner:branch` or `owner/repo:branch`. */
  private async resolveHead(
    base: RepoRow,
    viewer: Viewer | null,
    head: string,
  ): Promise<{ repo: RepoRow; branch: string }> {
    const colon = head.indexOf(':');
    if (colon < 0) return { repo: base, branch: head };
    const who = head.slice(0, colon);
    const branch = head.slice(colon + 1);
    const [ownerName, repoName] = who.includes('/') ? who.split('/', 2) : [who, undefined];
    const owner = ownerName ? await this.ctx.users.getByName(ownerName) : undefined;
    if (!owner) throw notFound(`head owner does not exist [name: ${ownerName}]`);
    let repo: RepoRow | undefined;
    if (owner.id === base.owner_id && (!repoName || repoName === base.name)) repo = base;
    else {
      let q = this.db
        .selectFrom('repository')
        .selectAll()
        .where('owner_id', '=', owner.id)
        .where((eb) => eb.or([eb('fork_id', '=', base.id), eb('id', '=', base.fork_id ?? -1)]));
      if (repoName) q = q.where('name', '=', repoName);
      repo = (await q.executeTakeFirst()) as RepoRow | undefined;
    }
    if (!repo) throw notFound(`head repository does not exist [owner: ${ownerName}]`);
    const access = await this.ctx.repos.access(repo, viewer);
    if ((access.units.get('repo.code') ?? 0) < AccessMode.read)
      throw notFound(`head repository does not exist [owner: ${ownerName}]`);
    return { repo, branch };
  }

  /** Puts the head commit into the base repository (fetched from a fork), without a ref yet. */
  private async bringHead(baseDir: string, headRepo: RepoRow, branch: string): Promise<void> {
    const headDir = this.dirOf(headRepo);
    if (headDir === baseDir) return;
    await git(['fetch', '--quiet', '--no-tags', headDir, `refs/heads/${branch}`], { gitDir: baseDir });
  }

  private async resolveUsers(repo: RepoRow, one: string | undefined, many: string[] | undefined) {
    const names = [...new Set([...(one ? [one] : []), ...(many ?? []).filter(Boolean)])];
    const out: UserRow[] = [];
    for (const name of names) {
      const u = await this.ctx.users.getByName(name);
      if (!u || u.type !== UserType.Individual)
        throw invalidField('assignees', `Assignee does not exist: [name: ${name}]`);
      const access = await this.ctx.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if (!canWriteIssues(access, true))
        throw invalidField(
          'assignees',
          `user ${u.name} cannot be assigned to pull requests of this repository`,
        );
      out.push(u);
    }
    return out;
  }

  // Creation

  async create(view: RepoView, doer: UserRow, input: CreatePullInput): Promise<Pull> {
    const { repo } = view;
    if (repo.is_archived) throw forbidden(`repository is archived [id: ${repo.id}]`);
    await this.ctx.social.assertNotBlocked(repo.owner_id, doer.id);
    if (!repo.has_pull_requests) throw notFound('the pull requests of this repository are turned off');
    const title = (input.title ?? '').trim();
    if (!title) throw invalidField('title', 'Required');
    if (title.length > 255) throw invalidField('title', 'must be at most 255 characters');
    if (!input.base) throw invalidField('base', 'Required');
    if (!input.head) throw invalidField('head', 'Required');
    const head = await this.resolveHead(repo, { id: doer.id, isAdmin: doer.is_admin === 1 }, input.head);
    const baseDir = this.dirOf(repo);
    const baseSha = await this.branchSha(baseDir, input.base);
    if (!baseSha) throw notFound(`base branch does not exist [name: ${input.base}]`);
    const headSha = await this.branchSha(this.dirOf(head.repo), head.branch);
    if (!headSha) throw notFound(`head branch does not exist [name: ${head.branch}]`);
    if (head.repo.id === repo.id && head.branch === input.base)
      throw invalidField('head', 'head and base are the same branch');
    const existing = await store.findOpen(this.db, repo.id, input.base, head.repo.id, head.branch);
    if (existing)
      throw conflict(
        `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.issue_id}, head_repo_id: ${head.repo.id}, base_repo_id: ${repo.id}, head_branch: ${head.branch}, base_branch: ${input.base}]`,
      );
    await this.bringHead(baseDir, head.repo, head.branch);
    const m = await pg.mergeability(baseDir, baseSha, headSha);
    if (m.status === PullStatus.ancestorOf || (await isAncestor(baseDir, headSha, baseSha)))
      throw invalidField('head', 'There are no changes between the head and the base');

    const writer = canWriteIssues(view.access, true);
    const assignees = writer ? await this.resolveUsers(repo, input.assignee, input.assignees) : [];
    const labels = writer && input.labels?.length ? await this.ctx.labels.resolve(repo, input.labels) : [];
    this.ctx.labels.checkExclusive(labels);
    const milestone =
      writer && input.milestone
        ? await this.ctx.milestones.requireForIssue(repo, input.milestone)
        : undefined;
    const now = nowUnix();
    const pull = await transaction(this.db, async (tx) => {
      const issue = await issueStore.insert(tx, {
        repo_id: repo.id,
        index: await issueStore.nextIndex(tx, repo.id),
        poster_id: doer.id,
        title,
        content: input.body ?? '',
        is_pull: 1,
        milestone_id: milestone?.id ?? null,
        deadline_unix: writer ? (input.dueDate ?? 0) : 0,
        created_unix: now,
        updated_unix: now,
      });
      await this.ctx.labels.addToIssue(
        tx,
        issue,
        labels.map((l) => l.id),
      );
      await issueStore.addAssignees(
        tx,
        issue.id,
        assignees.map((a) => a.id),
      );
      await this.ctx.milestones.recount(tx, [issue.milestone_id]);
      const pr = await store.insert(tx, {
        issue_id: issue.id,
        index: issue.index,
        base_repo_id: repo.id,
        head_repo_id: head.repo.id,
        base_branch: input.base,
        head_branch: head.branch,
        merge_base: m.mergeBase,
        head_commit_id: headSha,
        status: m.status,
        conflicted_files: JSON.stringify(m.conflicts),
        merger_id: null,
      });
      return { issue, pr };
    });
    await git(['update-ref', `refs/pull/${pull.issue.index}/head`, headSha], { gitDir: baseDir });
    await this.ctx.events.emit('pull.opened', this.eventOf(pull, doer));
    if (labels.length) await this.ctx.events.emit('pull.labeled', this.eventOf(pull, doer));
    return pull;
  }

  private eventOf(pull: Pull, doer: { id: number }) {
    return {
      repoId: pull.issue.repo_id,
      issueId: pull.issue.id,
      pullId: pull.pr.id,
      index: pull.issue.index,
      doerId: doer.id,
    };
  }

  // Lists and reading

  async list(
    repo: RepoRow,
    q: {
      state?: 'open' | 'closed' | 'all' | undefined;
      sort?: string | undefined;
      labels?: string | undefined;
      milestone?: number | undefined;
    },
    page: Page,
  ): Promise<[Pull[], number]> {
    const sorts: Record<string, issueStore.IssueSort> = {
      oldest: 'oldest',
      recentupdate: 'recentupdate',
      leastupdate: 'leastupdate',
      mostcomment: 'mostcomment',
      leastcomment: 'leastcomment',
      priority: 'latest',
    };
    const sort = q.sort ? sorts[q.sort] : undefined;
    if (q.sort && !sort) throw invalidField('sort', `unknown sort: ${q.sort}`);
    const [rows, total] = await this.ctx.issueLists.list(
      repo,
      {
        state: q.state ?? 'open',
        type: 'pulls',
        sort,
        labels: q.labels,
        milestones: q.milestone ? String(q.milestone) : undefined,
      },
      page,
    );
    const prs = await store.getByIssueIds(
      this.db,
      rows.map((r) => r.id),
    );
    return [rows.filter((r) => prs.has(r.id)).map((issue) => ({ issue, pr: prs.get(issue.id)! })), total];
  }

  /** The commit the pull request's changes are measured from. */
  private async fromOf(pull: Pull): Promise<string> {
    if (pull.pr.merge_base) return pull.pr.merge_base;
    return data.EMPTY_TREE;
  }

  async diffStat(pull: Pull): Promise<{ additions: number; deletions: number; files: number }> {
    const files = await pg.changedFiles(
      this.dirOf({ id: pull.pr.base_repo_id }),
      await this.fromOf(pull),
      pull.pr.head_commit_id,
    );
    return {
      additions: files.reduce((s, f) => s + f.additions, 0),
      deletions: files.reduce((s, f) => s + f.deletions, 0),
      files: files.length,
    };
  }

  async files(pull: Pull): Promise<pg.NumStat[]> {
    return pg.changedFiles(
      this.dirOf({ id: pull.pr.base_repo_id }),
      await this.fromOf(pull),
      pull.pr.head_commit_id,
    );
  }

  /** The unified diff (`diff`) or the mailbox patch (`patch`) of the pull request. */
  async diffText(pull: Pull, kind: 'diff' | 'patch', binary = false): Promise<Buffer> {
    const dir = this.dirOf({ id: pull.pr.base_repo_id });
    const from = await this.fromOf(pull);
    const to = pull.pr.head_commit_id;
    const args =
      kind === 'diff'
        ? ['diff', '--no-color', '--no-ext-diff', ...(binary ? ['--binary'] : []), from, to, '--']
        : ['format-patch', '--stdout', '--no-color', ...(binary ? ['--binary'] : []), `${from}..${to}`];
    return (await git(args, { gitDir: dir })).stdout;
  }

  /** One page of the pull request's commits, newest first, each with its files and stats. */
  async commits(pull: Pull, page: Page): Promise<[CommitData[], number]> {
    const dir = this.dirOf({ id: pull.pr.base_repo_id });
    const not = pull.pr.merge_base || undefined;
    const from = pull.pr.head_commit_id;
    const [commits, total] = await Promise.all([
      data.log(dir, { from, not, skip: page.offset, limit: page.limit, diff: true }),
      data.countCommits(dir, { from, not }),
    ]);
    return [commits, total];
  }

  // Editing

  async edit(view: RepoView, pull: Pull, doer: UserRow, input: EditPullInput): Promise<Pull> {
    const { repo } = view;
    const writer = canWriteIssues(view.access, true);
    if (!writer && pull.issue.poster_id !== doer.id)
      throw forbidden('only the poster and writers may edit this pull request');
    if (input.state === 'open' && pull.issue.is_closed) {
      if (pull.pr.has_merged) throw conflict('cannot reopen a merged pull request');
      const other = pull.pr.head_repo_id
        ? await store.findOpen(
            this.db,
            repo.id,
            pull.pr.base_branch,
            pull.pr.head_repo_id,
            pull.pr.head_branch,
          )
        : undefined;
      if (other && other.id !== pull.pr.id)
        throw conflict('another open pull request exists for these branches');
    }
    let newBase: { branch: string; sha: string } | undefined;
    if (input.base !== undefined && input.base !== pull.pr.base_branch) {
      if (!writer) throw forbidden('only writers may change the base branch');
      if (pull.pr.has_merged) throw conflict('cannot change the base branch of a merged pull request');
      const sha = await this.branchSha(this.dirOf(repo), input.base);
      if (!sha) throw notFound(`base branch does not exist [name: ${input.base}]`);
      if (pull.pr.head_repo_id === repo.id && input.base === pull.pr.head_branch)
        throw invalidField('base', 'head and base are the same branch');
      newBase = { branch: input.base, sha };
    }
    const issue = await this.ctx.issues.edit(view, pull.issue, doer, {
      title: input.title,
      body: input.body,
      assignee: input.assignee,
      assignees: input.assignees,
      milestone: input.milestone,
      state: input.state,
      dueDate: input.dueDate,
      unsetDueDate: input.unsetDueDate,
    });
    if (input.labels !== undefined && writer) {
      const before = (await this.ctx.labels.ofIssue(issue.id)).map((l) => l.id).sort();
      await this.ctx.issueTriage.replaceLabels(view, issue, doer, input.labels);
      const after = (await this.ctx.labels.ofIssue(issue.id)).map((l) => l.id).sort();
      if (before.join() !== after.join())
        await this.ctx.events.emit('pull.labeled', this.eventOf(pull, doer));
    }
    let pr = pull.pr;
    if (newBase) {
      const now = nowUnix();
      const m = await pg.mergeability(this.dirOf(repo), newBase.sha, pr.head_commit_id);
      const base = newBase;
      pr = await transaction(this.db, async (tx) => {
        await issueStore.insertComment(tx, {
          type: CHANGE_TARGET_BRANCH_COMMENT,
          repo_id: repo.id,
          issue_id: issue.id,
          poster_id: doer.id,
          old_ref: pull.pr.base_branch,
          new_ref: base.branch,
          created_unix: now,
          updated_unix: now,
        });
        return store.update(tx, pr.id, {
          base_branch: base.branch,
          merge_base: m.mergeBase,
          status: m.status,
          conflicted_files: JSON.stringify(m.conflicts),
        });
      });
    }
    if (input.allowMaintainerEdit !== undefined && (writer || pull.issue.poster_id === doer.id)) {
      pr = await store.update(this.db, pr.id, { allow_maintainer_edit: input.allowMaintainerEdit ? 1 : 0 });
    }
    const fresh = (await issueStore.getById(this.db, issue.id))!;
    const result = { issue: fresh, pr };
    await this.ctx.events.emit('pull.edited', {
      ...this.eventOf(result, doer),
      ...(newBase ? { baseFrom: pull.pr.base_branch } : {}),
    });
    return result;
  }

  // Mergeability

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
    let pr = await this.db.selectFrom('pull_request').selectAll().where('id', '=', prId).executeTakeFirst();
    if (!pr || pr.has_merged) return;
    const issue = (await issueStore.getById(this.db, pr.issue_id))!;
    if (issue.is_closed) return;
    const baseDir = this.dirOf({ id: pr.base_repo_id });
    const headRepo = pr.head_repo_id ? await this.ctx.repos.getById(pr.head_repo_id) : undefined;
    let headSha = pr.head_commit_id;
    let synced = false;
    if (headRepo) {
      const sha = await this.branchSha(this.dirOf(headRepo), pr.head_branch);
      if (sha && sha !== headSha) {
        await this.bringHead(baseDir, headRepo, pr.head_branch);
        await git(['update-ref', `refs/pull/${pr.index}/head`, sha], { gitDir: baseDir });
        headSha = sha;
        synced = true;
      }
    }
    const baseSha = await this.branchSha(baseDir, pr.base_branch);
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
    const oldHead = pr.head_commit_id;
    const statusChanged = pr.status !== updated.status;
    pr = updated;
    if (!synced && statusChanged) {
      await this.ctx.events.emit('pull.checked', this.eventOf({ issue, pr }, { id: pusherId ?? 0 }));
    }
    if (synced) {
      // Reviews of what the pull request no longer proposes are stale; with the base branch's
      // dismiss_stale_approvals, its approvals are dismissed (each with a timeline entry), as Forgejo does.
      const changed = await this.contentChanged(baseDir, oldHead, headSha, m.mergeBase);
      const rule = changed
        ? await this.ctx.protection.ruleFor({ id: pr.base_repo_id }, pr.base_branch)
        : undefined;
      const now = nowUnix();
      await transaction(this.db, async (tx) => {
        if (changed) {
          await store.markReviewsStale(tx, issue.id, headSha);
          if (rule?.dismiss_stale_approvals)
            for (const r of await store.reviewsOf(tx, issue.id)) {
              if (r.type !== ReviewType.approve || r.dismissed || r.commit_id === headSha) continue;
              await store.updateReview(tx, r.id, { dismissed: 1, updated_unix: now });
              await issueStore.insertComment(tx, {
                type: DISMISS_REVIEW_COMMENT,
                repo_id: issue.repo_id,
                issue_id: issue.id,
                poster_id: pusherId || null,
                content: STALE_DISMISSAL,
                created_unix: now,
                updated_unix: now,
              });
            }
        } else await store.markReviewsCurrent(tx, issue.id, headSha);
        await issueStore.update(tx, issue.id, { updated_unix: now });
      });
      await this.ctx.events.emit('pull.synchronized', this.eventOf({ issue, pr }, { id: pusherId ?? 0 }));
    }
  }

  /**
   * Whether moving a pull request's head from `from` to `to` changed what it proposes. Forgejo's
   * test: the combined diff of `to` against `from` and the merge base names a file only when `to`
   * differs from both (a rebase that changes nothing of the pull request's own does not count).
   */
  private async contentChanged(dir: string, from: string, to: string, mergeBase: string): Promise<boolean> {
    if (from === to) return false;
    if (!from || !mergeBase) return true;
    try {
      const r = await git(['diff', '--name-only', '-z', to, from, mergeBase], { gitDir: dir });
      return r.stdout.length > 0;
    } catch {
      return true;
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

  /** Open pull requests from or to a renamed branch follow it (Forgejo's RenameBranch). */
  followBranchRename(repoId: number, from: string, to: string): Promise<void> {
    return store.renameBranch(this.db, repoId, from, to);
  }

  // Merging

  /** Whether `doer` may override branch protection with force_merge (site or repository admin). */
  static isAdmin(view: RepoView, doer: UserRow): boolean {
    return doer.is_admin === 1 || view.access.mode >= AccessMode.admin;
  }

  /** Whether issues this pull request depends on are still open (then it cannot be merged). */
  async blockedByDependencies(pull: Pull): Promise<boolean> {
    return (await openDependencyCount(this.db, pull.issue.id)) > 0;
  }

  /** What branch protection still asks for before `doer` may merge (empty when nothing). */
  async unmetProtection(view: RepoView, pull: Pull, doer: UserRow): Promise<string[]> {
    const rule = await this.ctx.protection.ruleFor(view.repo, pull.pr.base_branch);
    if (!rule) return [];
    const unmet: string[] = [];
    const code = view.access.units.get('repo.code') ?? 0;
    if (!(await this.ctx.protection.isMergeWhitelisted(rule, doer, code)))
      unmet.push('you are not allowed to merge into this branch');
    if (rule.enable_status_check && rule.statusCheckContexts.length) {
      const { contexts } = await this.ctx.statuses.combinedState(view.repo, pull.pr.head_commit_id);
      for (const wanted of rule.statusCheckContexts) {
        const matching = [...contexts].filter(([name]) => name === wanted || ruleMatches(wanted, name));
        if (matching.length === 0 || matching.some(([, s]) => s !== 'success' && s !== 'warning')) {
          unmet.push(`required status check ${wanted} has not succeeded`);
        }
      }
    }
    const reviews = await this.latestReviews(pull.issue.id);
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

  async merge(view: RepoView, pull: Pull, doer: UserRow, input: MergeInput): Promise<Pull> {
    const { repo } = view;
    if ((view.access.units.get('repo.code') ?? 0) < AccessMode.write)
      throw forbidden('you need write access to the code of this repository to merge');
    if (repo.is_archived) throw forbidden(`repository is archived [id: ${repo.id}]`);
    if (pull.pr.has_merged) throw methodNotAllowed('The PR is already merged');
    if (pull.issue.is_closed) throw methodNotAllowed('The PR is closed');
    // As in Forgejo, even administrators wait for the issues this one depends on.
    if (await this.blockedByDependencies(pull)) throw methodNotAllowed('is blocked by an open dependency');
    if (!(MERGE_STYLES as readonly string[]).includes(input.style))
      throw invalidField('Do', `unknown merge style: ${input.style}`);
    // Bring head and mergeability up to date first: the merge uses exactly what was checked.
    await this.refresh(pull.pr.id, doer.id);
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
    const unmet = await this.unmetProtection(view, current, doer);
    if (unmet.length) {
      if (!input.force) throw methodNotAllowed(`Not allowed to merge: ${unmet.join('; ')}`);
      if (!PullService.isAdmin(view, doer))
        throw methodNotAllowed(`force_merge needs an administrator: ${unmet.join('; ')}`);
    }
    const dir = this.dirOf(repo);
    const baseRef = `refs/heads/${pr.base_branch}`;
    const baseSha = await this.branchSha(dir, pr.base_branch);
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
      const intent = await this.ctx.repos.beginIntent(repo.id, doer.id, [update], 'merge', { ...merge });
      faultPoint('merge:intent');
      if (!(await data.updateRef(dir, baseRef, baseSha, newSha))) {
        await this.ctx.repos.dropIntent(intent);
        await this.ctx.repos.refreshSize(repo.id);
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
    if (pr.has_merged) throw invalidField('index', 'the pull request is already merged');
    if (pull.issue.is_closed) throw invalidField('index', 'the pull request is closed');
    const headRepo = pr.head_repo_id ? await this.ctx.repos.getById(pr.head_repo_id) : undefined;
    if (!headRepo) throw notFound('the head repository of the pull request does not exist');
    const access =
      headRepo.id === view.repo.id
        ? view.access
        : await this.ctx.repos.access(headRepo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if ((access.units.get('repo.code') ?? 0) < AccessMode.write || headRepo.is_archived || headRepo.is_mirror)
      throw forbidden('you are not allowed to update the head branch of this pull request');
    if (style === 'rebase' && (await this.ctx.protection.ruleFor(headRepo, pr.head_branch)))
      throw forbidden('the head branch is protected: it cannot be rebased');
    const baseDir = this.dirOf(view.repo);
    const headDir = this.dirOf(headRepo);
    const baseSha = await this.branchSha(baseDir, pr.base_branch);
    if (!baseSha) throw notFound(`base branch does not exist [name: ${pr.base_branch}]`);
    const headSha = await this.branchSha(headDir, pr.head_branch);
    if (!headSha) throw notFound(`head branch does not exist [name: ${pr.head_branch}]`);
    await this.bringHead(baseDir, headRepo, pr.head_branch);
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
    const refusal = await this.ctx.protection.refusalFor(headRepo, doer, [update]);
    if (refusal) throw forbidden(refusal);
    const moved = await this.ctx.repos.changeRefs(headRepo.id, doer.id, [update], () =>
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
    await this.ctx.repos.recordPush(repo.id, doer.id, [update]);
    const merged = await this.recordMerge(merge, doer.id, intent);
    faultPoint('merge:recorded');
    await this.ctx.repos.announcePush(repo.id, doer.id, [update]);
    await this.announceMerge(repo, doer, merged, merge, commits);
    await this.ctx.repos.dropIntent(intent);
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
      await this.ctx.labels.setIssueClosed(tx, issue.id, true);
      await issueStore.insertComment(tx, {
        type: MERGE_PULL_COMMENT,
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
      await this.ctx.milestones.recount(tx, [issue.milestone_id]);
      if (intent !== undefined) await this.ctx.repos.markIntentRecorded(tx, intent);
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
    await this.ctx.events.emit('pull.merged', {
      ...this.eventOf(merged, doer),
      mergeCommitId: merge.mergedSha,
    });
    await this.ctx.events.emit('pull.closed', this.eventOf(merged, doer));
    await this.closeReferencedIssues(repo, doer, merged, commits);
  }

  /**
   * Completes a merge a crash interrupted (the intent recovery found): when the base branch
   * holds the merge, the merge is recorded (if it was not) and announced; otherwise the pull
   * request stays open and its mergeability is computed again.
   */
  async recoverMerge(intent: RefIntentRow): Promise<string> {
    const merge = JSON.parse(intent.data) as MergeIntent;
    const update = (JSON.parse(intent.updates) as RefUpdate[])[0]!;
    const repo = await this.ctx.repos.getById(intent.repo_id);
    const doer = await this.ctx.users.getById(intent.doer_id);
    const pr = await store.getByIssueId(this.db, merge.issueId);
    if (!repo || !doer || !pr) {
      await this.ctx.repos.dropIntent(intent.id);
      return 'merge of a deleted pull request dropped';
    }
    const dir = this.dirOf(repo);
    if (intent.state === 0 && !pr.has_merged) {
      const tip = await this.branchSha(dir, update.ref.slice('refs/heads/'.length));
      const landed =
        tip !== undefined && (tip === update.newOid || (await isAncestor(dir, update.newOid, tip)));
      if (!landed) {
        // The merge commit may have been written: the size is measured again.
        await this.ctx.repos.reconcile(repo.id);
        await this.ctx.repos.dropIntent(intent.id);
        await this.refresh(pr.id, doer.id).catch(() => undefined);
        return `merge of pull request ${pr.index} had not happened: left open`;
      }
      // The branch may have moved on since: bring every row in line with the refs first.
      if (tip !== update.newOid) await this.ctx.repos.reconcile(repo.id);
      const commits = await data.log(dir, { from: merge.headSha, not: update.oldOid });
      await this.completeMerge(repo, doer, intent.id, update, merge, commits);
      return `merge of pull request ${pr.index} completed`;
    }
    // Recorded before the crash: only the listeners are left to tell.
    const merged: Pull = { issue: (await issueStore.getById(this.db, merge.issueId))!, pr };
    const commits = await data.log(dir, { from: merge.headSha, not: update.oldOid });
    await this.ctx.repos.announcePush(repo.id, doer.id, [update]);
    await this.announceMerge(repo, doer, merged, merge, commits);
    await this.ctx.repos.dropIntent(intent.id);
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
    const sign = await this.ctx.signing.mergeSigning(doer);
    switch (input.style) {
      case 'merge':
        return pg.mergeCommit(dir, baseSha, headSha, message, who, sign);
      case 'squash': {
        const poster = pull.issue.poster_id ? await this.ctx.users.getById(pull.issue.poster_id) : undefined;
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
   * `closes #N`, `fixes owner/repo#N`, `reopens #N`, ... in the merged commits close or reopen those
   * issues (the commit as the cause), whatever branch the pull request merged into; the merger
   * needs write access to each issue's repository, and pull requests are never closed this way.
   */
  private async closeReferencedIssues(repo: RepoRow, doer: UserRow, pull: Pull, commits: CommitData[]) {
    const viewer = { id: doer.id, isAdmin: doer.is_admin === 1 };
    for (const c of commits.slice().reverse()) {
      for (const ref of parseIssueReferences(c.message)) {
        if (!ref.action) continue;
        try {
          const target =
            ref.owner && ref.repo
              ? (await this.ctx.repos.requireRepo(ref.owner, ref.repo, viewer, 'read', 'repo.issues')).repo
              : repo;
          if (target.id === repo.id && ref.index === pull.issue.index) continue;
          const issue = await this.ctx.issues.findIssue(target, ref.index);
          if (!issue || issue.is_pull) continue;
          await this.ctx.issues.closeByCommit(target, ref.index, doer, c.oid, ref.action === 'close');
        } catch (err) {
          if (!(err instanceof AppError)) this.ctx.log.warn({ err }, 'closing an issue by commit failed');
        }
      }
    }
  }

  private async deleteHeadBranch(pull: Pull, doer: UserRow): Promise<void> {
    const headRepo = pull.pr.head_repo_id ? await this.ctx.repos.getById(pull.pr.head_repo_id) : undefined;
    if (!headRepo || headRepo.default_branch === pull.pr.head_branch) return;
    const access = await this.ctx.repos.access(headRepo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if ((access.units.get('repo.code') ?? 0) < AccessMode.write) return;
    const dir = this.dirOf(headRepo);
    const sha = await this.branchSha(dir, pull.pr.head_branch);
    if (!sha || sha !== pull.pr.head_commit_id) return;
    const ref = `refs/heads/${pull.pr.head_branch}`;
    const u = { ref, oldOid: sha, newOid: ZERO_OID };
    if (await this.ctx.protection.refusalFor(headRepo, doer, [u])) return;
    await this.ctx.repos.changeRefs(headRepo.id, doer.id, [u], () => data.updateRef(dir, ref, sha, ZERO_OID));
  }

  // Reviews

  private async latestReviews(issueId: number): Promise<ReviewRow[]> {
    const rows = await store.reviewsOf(this.db, issueId);
    const latest = new Map<number, ReviewRow>();
    for (const r of rows) {
      if (r.reviewer_id === null || r.type === ReviewType.request || r.type === ReviewType.comment) continue;
      latest.set(r.reviewer_id, r);
    }
    return [...latest.values()];
  }

  reviews(pull: Pull): Promise<ReviewRow[]> {
    return store.reviewsOf(this.db, pull.issue.id);
  }

  /**
   * The review type of `event` (PENDING when absent), under Forgejo's rules: no approving or
   * requesting changes on one's own pull request, a body for REQUEST_CHANGES, a body or line
   * comments for COMMENT, only comments on a closed pull request.
   */
  private reviewTypeOf(
    pull: Pull,
    doer: UserRow,
    event: string | undefined,
    body: string | undefined,
    hasComments: boolean,
  ): number {
    const types: Record<string, number> = {
      APPROVED: ReviewType.approve,
      REQUEST_CHANGES: ReviewType.reject,
      COMMENT: ReviewType.comment,
      PENDING: ReviewType.pending,
    };
    const name = (event || 'PENDING').toUpperCase();
    const type = types[name];
    if (type === undefined) throw invalidField('event', `unknown review event: ${event}`);
    if (pull.issue.is_closed && type !== ReviewType.comment)
      throw invalidField('event', 'the pull request is closed');
    if ((type === ReviewType.approve || type === ReviewType.reject) && pull.issue.poster_id === doer.id)
      throw invalidField('event', 'you cannot approve or request changes on your own pull request');
    const hasBody = (body ?? '').trim() !== '';
    if (type === ReviewType.reject && !hasBody)
      throw invalidField('body', `review event ${name} requires a body`);
    if (type === ReviewType.comment && !hasBody && !hasComments)
      throw invalidField('body', `review event ${name} requires a body or a comment`);
    return type;
  }

  /**
   * Line comments checked against the pull request's diff, as rows to insert (review_id left to
   * the caller): the file must be one the pull request changes; new_position > 0 is a line of the
   * new side, else old_position > 0 one of the old side.
   */
  private async reviewCommentRows(
    pull: Pull,
    doer: UserRow,
    comments: ReviewCommentInput[],
    field: string,
  ): Promise<Omit<Insertable<PullReviewCommentTable>, 'review_id'>[]> {
    if (comments.length === 0) return [];
    const files = await this.files(pull);
    const dir = this.dirOf({ id: pull.pr.base_repo_id });
    const from = await this.fromOf(pull);
    const head = pull.pr.head_commit_id;
    const diffs = new Map<string, string>();
    const now = nowUnix();
    const out: Omit<Insertable<PullReviewCommentTable>, 'review_id'>[] = [];
    for (const c of comments) {
      const body = c.body ?? '';
      if (!body.trim()) throw invalidField(field, 'a line comment needs a body');
      const file = files.find((f) => f.filename === c.path);
      if (!c.path || !file)
        throw invalidField(field, `the pull request does not change this file: ${c.path ?? ''}`);
      const newPos = c.new_position ?? 0;
      const oldPos = c.old_position ?? 0;
      if (newPos > MAX_LINE || oldPos > MAX_LINE) throw invalidField(field, 'the line number is too large');
      const line = newPos > 0 ? newPos : oldPos > 0 ? -oldPos : 0;
      if (line === 0) throw invalidField(field, 'a line comment needs new_position or old_position');
      let diff = diffs.get(file.filename);
      if (diff === undefined) {
        diff = await pg.fileDiff(dir, from, head, file.filename, file.previous);
        diffs.set(file.filename, diff);
      }
      out.push({
        issue_id: pull.issue.id,
        poster_id: doer.id,
        tree_path: file.filename,
        line,
        commit_id: head,
        original_commit_id: head,
        diff_hunk: pg.hunkUpTo(diff, line),
        content: body,
        created_unix: now,
        updated_unix: now,
      });
    }
    return out;
  }

  async createReview(
    view: RepoView,
    pull: Pull,
    doer: UserRow,
    input: {
      event?: string | undefined;
      body?: string | undefined;
      commitId?: string | undefined;
      comments?: ReviewCommentInput[] | undefined;
    },
  ): Promise<ReviewRow> {
    const comments = input.comments ?? [];
    const type = this.reviewTypeOf(pull, doer, input.event, input.body, comments.length > 0);
    const rows = await this.reviewCommentRows(pull, doer, comments, 'comments');
    const code = view.access.units.get('repo.code') ?? 0;
    const commitId = input.commitId || pull.pr.head_commit_id;
    // A review of an earlier commit is stale when the pull request has changed since (as Forgejo's).
    const stale = await this.contentChanged(
      this.dirOf({ id: pull.pr.base_repo_id }),
      commitId,
      pull.pr.head_commit_id,
      pull.pr.merge_base,
    );
    const now = nowUnix();
    const review = await transaction(this.db, async (tx) => {
      if (type !== ReviewType.pending)
        await store.removeReviews(tx, pull.issue.id, doer.id, ReviewType.request);
      const review = await store.insertReview(tx, {
        issue_id: pull.issue.id,
        reviewer_id: doer.id,
        type,
        content: input.body ?? '',
        commit_id: commitId,
        stale: stale ? 1 : 0,
        official: code >= AccessMode.write ? 1 : 0,
        created_unix: now,
        updated_unix: now,
      });
      await store.insertReviewComments(
        tx,
        rows.map((r) => ({ ...r, review_id: review.id })),
      );
      return review;
    });
    if (type !== ReviewType.pending) await this.announceReview(pull, doer, review);
    return review;
  }

  private async announceReview(pull: Pull, doer: UserRow, review: ReviewRow): Promise<void> {
    await this.ctx.events.emit('pull.reviewed', {
      ...this.eventOf(pull, doer),
      reviewId: review.id,
      reviewType: review.type,
      content: review.content,
    });
  }

  /** A review of this pull request as `viewer` may see it: pending ones only by their author. */
  async requireReview(pull: Pull, id: number, viewer: { id: number } | null): Promise<ReviewRow> {
    const review = Number.isSafeInteger(id) ? await store.getReview(this.db, pull.issue.id, id) : undefined;
    if (!review || (review.type === ReviewType.pending && review.reviewer_id !== viewer?.id))
      throw notFound(`pull review does not exist [id: ${id}]`);
    return review;
  }

  /** Submits a pending review of the doer's (SubmitPullReviewOptions). */
  async submitReview(
    view: RepoView,
    pull: Pull,
    doer: UserRow,
    id: number,
    input: { event?: string | undefined; body?: string | undefined },
  ): Promise<ReviewRow> {
    const review = await this.requireReview(pull, id, doer);
    if (review.type !== ReviewType.pending || review.reviewer_id !== doer.id)
      throw invalidField('event', 'only a pending review can be submitted');
    const count = (await store.countReviewComments(this.db, [review.id])).get(review.id) ?? 0;
    const type = this.reviewTypeOf(pull, doer, input.event, input.body, count > 0);
    if (type === ReviewType.pending) throw invalidField('event', 'the review would stay pending');
    const code = view.access.units.get('repo.code') ?? 0;
    const now = nowUnix();
    const updated = await transaction(this.db, async (tx) => {
      await store.removeReviews(tx, pull.issue.id, doer.id, ReviewType.request);
      return store.updateReview(tx, review.id, {
        type,
        content: input.body ?? review.content,
        commit_id: pull.pr.head_commit_id,
        official: code >= AccessMode.write ? 1 : 0,
        updated_unix: now,
      });
    });
    await this.announceReview(pull, doer, updated);
    return updated;
  }

  /** Deletes a review and its line comments: its reviewer, a site or repository administrator. */
  async deleteReview(view: RepoView, pull: Pull, doer: UserRow, id: number): Promise<void> {
    const review = await this.requireReview(pull, id, doer);
    if (review.reviewer_id !== doer.id && !doer.is_admin && view.access.mode < AccessMode.admin)
      throw forbidden('only the reviewer and administrators may delete a review');
    await transaction(this.db, (tx) => store.deleteReview(tx, review.id));
  }

  /** Dismisses (or restores) an approval or a change request: writers of pull requests only. */
  async dismissReview(
    view: RepoView,
    pull: Pull,
    doer: UserRow,
    id: number,
    dismiss: boolean,
    opts: { message?: string | undefined; priors?: boolean | undefined } = {},
  ): Promise<ReviewRow> {
    const message = opts.message ?? '';
    const priors = opts.priors === true;
    const review = await this.requireReview(pull, id, doer);
    if (!canWriteIssues(view.access, true)) throw forbidden('only writers may dismiss reviews');
    if (review.type !== ReviewType.approve && review.type !== ReviewType.reject)
      throw invalidField(
        'id',
        `reviews of type ${REVIEW_NAMES[review.type] ?? review.type} cannot be dismissed`,
      );
    if (pull.issue.is_closed || pull.pr.has_merged)
      throw invalidField('id', 'reviews of a closed pull request cannot be dismissed');
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      if (dismiss && priors && review.reviewer_id !== null) {
        for (const r of await store.reviewsOf(tx, pull.issue.id))
          if (
            r.id < review.id &&
            r.reviewer_id === review.reviewer_id &&
            (r.type === ReviewType.approve || r.type === ReviewType.reject)
          )
            await store.updateReview(tx, r.id, { dismissed: 1, updated_unix: now });
      }
      // The timeline tells of a dismissal, with its message, as Forgejo's does.
      if (dismiss)
        await issueStore.insertComment(tx, {
          type: DISMISS_REVIEW_COMMENT,
          repo_id: pull.issue.repo_id,
          issue_id: pull.issue.id,
          poster_id: doer.id,
          content: message,
          created_unix: now,
          updated_unix: now,
        });
      return store.updateReview(tx, review.id, { dismissed: dismiss ? 1 : 0, updated_unix: now });
    });
  }

  /** All line comments of a pull request the viewer may see, oldest first (the files page). */
  lineComments(pull: Pull, viewer: { id: number } | null): Promise<ReviewCommentRow[]> {
    return store.pullLineComments(this.db, pull.issue.id, viewer?.id ?? null);
  }

  /** The line comments of a review the viewer may see. */
  async reviewComments(pull: Pull, id: number, viewer: { id: number } | null): Promise<ReviewCommentRow[]> {
    const review = await this.requireReview(pull, id, viewer);
    return store.reviewComments(this.db, review.id);
  }

  async reviewComment(
    pull: Pull,
    id: number,
    commentId: number,
    viewer: { id: number } | null,
  ): Promise<ReviewCommentRow> {
    const review = await this.requireReview(pull, id, viewer);
    const c = Number.isSafeInteger(commentId)
      ? await store.getReviewComment(this.db, review.id, commentId)
      : undefined;
    if (!c) throw notFound(`pull review comment does not exist [id: ${commentId}]`);
    return c;
  }

  /** The number of line comments of each review. */
  reviewCommentCounts(reviewIds: number[]): Promise<Map<number, number>> {
    return store.countReviewComments(this.db, reviewIds);
  }

  /** Adds a line comment to a pending review of the doer's. */
  async addReviewComment(
    pull: Pull,
    doer: UserRow,
    id: number,
    input: ReviewCommentInput,
  ): Promise<ReviewCommentRow> {
    const review = await this.requireReview(pull, id, doer);
    if (review.reviewer_id !== doer.id) throw forbidden('only the reviewer may comment in a review');
    if (review.type !== ReviewType.pending)
      throw invalidField('id', 'comments can only be added to a pending review');
    const [row] = await this.reviewCommentRows(pull, doer, [input], 'body');
    return transaction(this.db, async (tx) => {
      const [c] = await store.insertReviewComments(tx, [{ ...row!, review_id: review.id }]);
      await store.updateReview(tx, review.id, { updated_unix: nowUnix() });
      return c!;
    });
  }

  /** Deletes a line comment: its poster or a writer of pull requests. */
  async deleteReviewComment(
    view: RepoView,
    pull: Pull,
    doer: UserRow,
    id: number,
    commentId: number,
  ): Promise<void> {
    const c = await this.reviewComment(pull, id, commentId, doer);
    if (c.poster_id !== doer.id && !canWriteIssues(view.access, true))
      throw forbidden('only the poster and writers may delete a review comment');
    await store.deleteReviewComment(this.db, c.id);
  }

  async requestReviewers(view: RepoView, pull: Pull, doer: UserRow, names: string[], add: boolean) {
    if (!canWriteIssues(view.access, true) && pull.issue.poster_id !== doer.id)
      throw forbidden('only the poster and writers may request reviews');
    const users: UserRow[] = [];
    for (const name of names) {
      const u = await this.ctx.users.getByName(name);
      if (!u || u.type !== UserType.Individual)
        throw invalidField('reviewers', `user does not exist [name: ${name}]`);
      const access = await this.ctx.repos.access(view.repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if ((access.units.get('repo.pulls') ?? 0) < AccessMode.read)
        throw invalidField('reviewers', `user ${u.name} cannot read this repository`);
      if (add && u.id === pull.issue.poster_id)
        throw invalidField('reviewers', 'the poster cannot be asked to review');
      users.push(u);
    }
    const now = nowUnix();
    /** The users whose request changed (asked anew, or withdrawn): announced after the commit. */
    const changed: number[] = [];
    const out = await transaction(this.db, async (tx) => {
      const rows: ReviewRow[] = [];
      for (const u of users) {
        const removed = await store.removeReviews(tx, pull.issue.id, u.id, ReviewType.request);
        if ((add && removed === 0) || (!add && removed > 0)) changed.push(u.id);
        if (add)
          rows.push(
            await store.insertReview(tx, {
              issue_id: pull.issue.id,
              reviewer_id: u.id,
              type: ReviewType.request,
              created_unix: now,
              updated_unix: now,
            }),
          );
      }
      return rows;
    });
    for (const reviewerId of [...new Set(changed)])
      await this.ctx.events.emit('pull.review_requested', {
        ...this.eventOf(pull, doer),
        reviewerId,
        requested: add,
      });
    return out;
  }

  /** The users asked to review and not having reviewed since. */
  async requestedReviewerIds(issueIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (issueIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('pull_review')
      .select(['issue_id', 'reviewer_id'])
      .where('issue_id', 'in', issueIds)
      .where('type', '=', ReviewType.request)
      .execute();
    for (const r of rows) {
      if (r.reviewer_id === null) continue;
      out.set(r.issue_id, [...(out.get(r.issue_id) ?? []), r.reviewer_id]);
    }
    return out;
  }
}
