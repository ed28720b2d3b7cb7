// Pull requests: an issue row (is_pull = 1, the repository's shared numbers) and a pull_request
// row with the head and base, created from a branch of the same repository or of a fork. The
// domain's work is split by what it does: proposing (this file: creating, editing through the
// issues service, look-ups, lists, diffs, files and commits), reviewing (./reviewing.ts),
// mergeability (./mergeability.ts: refreshed in the background when either branch moves, branch
// protection's checks) and merging (./merging.ts: every Forgejo style, scheduled merges in
// ./automerge.ts). The git work happens on the base repository with plumbing or in a temporary
// clone (see ./git.ts).
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, conflict, forbidden, invalidField, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { Page } from '../http/pagination.js';
import { git, isAncestor } from '../git/git.js';
import * as data from '../git/data.js';
import type { CommitData } from '../git/data.js';
import { usersByEmails } from '../git/data-store.js';
import type { RepoLinks } from '../git/data-schemas.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { SigningService } from '../signing/service.js';
import type { SocialService } from '../social/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow, Viewer } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import * as issueStore from '../issues/store.js';
import type { IssueSort } from '../issues/tables.js';
import type { IssueListService } from '../issues/lists.js';
import type { IssueService, RepoView } from '../issues/service.js';
import type { IssueTriageService } from '../issues/triage.js';
import { canWriteIssues } from '../issues/service.js';
import * as store from './store.js';
import { PullCommentType, PullStatus, type Pull, type PullRow } from './tables.js';
import * as pg from './git.js';
import { pullEvent } from './events.js';

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

/** The background work of the pulls domain (mergeability refreshes), which tests and shutdown wait for. */
export interface PullBackground {
  idle(): Promise<void>;
}

export interface PullServiceDeps {
  db: Db;
  events: EventBus;
  repos: Pick<RepoService, 'pathOf' | 'access'>;
  users: Pick<UserService, 'getByName'>;
  issues: Pick<IssueService, 'edit'>;
  issueLists: Pick<IssueListService, 'list'>;
  issueTriage: Pick<IssueTriageService, 'pinned' | 'replaceLabels'>;
  labels: Pick<LabelService, 'resolve' | 'checkExclusive' | 'addToIssue' | 'ofIssue'>;
  milestones: Pick<MilestoneService, 'requireForIssue' | 'recount'>;
  social: Pick<SocialService, 'assertNotBlocked'>;
  /** The verification of the signatures of a pull request's commits. */
  signing: Pick<SigningService, 'verifyCommits'>;
  background: PullBackground;
}

export class PullService {
  private readonly db: Db;

  constructor(private readonly deps: PullServiceDeps) {
    this.db = deps.db;
    // A pull request is closed or reopened through its issue, whichever endpoint (or commit
    // message) did it: announce that as a pull event too (actions' pull_request triggers).
    deps.events.on('issue.closed', (e) => (e.isPull ? this.announce('pull.closed', e) : undefined));
    deps.events.on('issue.reopened', (e) => (e.isPull ? this.announce('pull.reopened', e) : undefined));
  }

  private async announce(
    event: 'pull.closed' | 'pull.reopened',
    e: { repoId: number; issueId: number; index: number; doerId: number },
  ): Promise<void> {
    const pr = await store.getByIssueId(this.db, e.issueId);
    if (!pr) return;
    await this.deps.events.emit(event, { ...e, pullId: pr.id });
  }

  /** Resolves once no background work on pull requests is running (tests and shutdown). */
  idle(): Promise<void> {
    return this.deps.background.idle();
  }

  private dirOf(repo: { id: number }): string {
    return this.deps.repos.pathOf(repo);
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
    const issues = await this.deps.issueTriage.pinned(repo, true);
    const prs = await store.getByIssueIds(
      this.db,
      issues.map((i) => i.id),
    );
    return issues.filter((i) => prs.has(i.id)).map((issue) => ({ issue, pr: prs.get(issue.id)! }));
  }

  pullsOf(issueIds: number[]): Promise<Map<number, PullRow>> {
    return store.getByIssueIds(this.db, issueIds);
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
    const owner = ownerName ? await this.deps.users.getByName(ownerName) : undefined;
    if (!owner) throw notFound(`head owner does not exist [name: ${ownerName}]`);
    const repo =
      owner.id === base.owner_id && (!repoName || repoName === base.name)
        ? base
        : await store.relatedRepo(this.db, owner.id, base, repoName);
    if (!repo) throw notFound(`head repository does not exist [owner: ${ownerName}]`);
    const access = await this.deps.repos.access(repo, viewer);
    if ((access.units.get('repo.code') ?? 0) < AccessMode.read)
      throw notFound(`head repository does not exist [owner: ${ownerName}]`);
    return { repo, branch };
  }

  private async resolveUsers(repo: RepoRow, one: string | undefined, many: string[] | undefined) {
    const names = [...new Set([...(one ? [one] : []), ...(many ?? []).filter(Boolean)])];
    const out: UserRow[] = [];
    for (const name of names) {
      const u = await this.deps.users.getByName(name);
      if (!u || u.type !== UserType.Individual)
        throw invalidField('assignees', `Assignee does not exist: [name: ${name}]`);
      const access = await this.deps.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
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
    await this.deps.social.assertNotBlocked(repo.owner_id, doer.id);
    if (!repo.has_pull_requests) throw notFound('the pull requests of this repository are turned off');
    const title = (input.title ?? '').trim();
    if (!title) throw invalidField('title', 'Required');
    if (title.length > 255) throw invalidField('title', 'must be at most 255 characters');
    if (!input.base) throw invalidField('base', 'Required');
    if (!input.head) throw invalidField('head', 'Required');
    const head = await this.resolveHead(repo, { id: doer.id, isAdmin: doer.is_admin === 1 }, input.head);
    const baseDir = this.dirOf(repo);
    const baseSha = await pg.branchSha(baseDir, input.base);
    if (!baseSha) throw notFound(`base branch does not exist [name: ${input.base}]`);
    const headDir = this.dirOf(head.repo);
    const headSha = await pg.branchSha(headDir, head.branch);
    if (!headSha) throw notFound(`head branch does not exist [name: ${head.branch}]`);
    if (head.repo.id === repo.id && head.branch === input.base)
      throw invalidField('head', 'head and base are the same branch');
    const existing = await store.findOpen(this.db, repo.id, input.base, head.repo.id, head.branch);
    if (existing)
      throw conflict(
        `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.issue_id}, head_repo_id: ${head.repo.id}, base_repo_id: ${repo.id}, head_branch: ${head.branch}, base_branch: ${input.base}]`,
      );
    await pg.bringHead(baseDir, headDir, head.branch);
    const m = await pg.mergeability(baseDir, baseSha, headSha);
    if (m.status === PullStatus.ancestorOf || (await isAncestor(baseDir, headSha, baseSha)))
      throw invalidField('head', 'There are no changes between the head and the base');

    const { labels: labelService, milestones } = this.deps;
    const writer = canWriteIssues(view.access, true);
    const assignees = writer ? await this.resolveUsers(repo, input.assignee, input.assignees) : [];
    const labels = writer && input.labels?.length ? await labelService.resolve(repo, input.labels) : [];
    labelService.checkExclusive(labels);
    const milestone =
      writer && input.milestone ? await milestones.requireForIssue(repo, input.milestone) : undefined;
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
      await labelService.addToIssue(
        tx,
        issue,
        labels.map((l) => l.id),
      );
      await issueStore.addAssignees(
        tx,
        issue.id,
        assignees.map((a) => a.id),
      );
      await milestones.recount(tx, [issue.milestone_id]);
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
    await this.deps.events.emit('pull.opened', pullEvent(pull, doer));
    if (labels.length) await this.deps.events.emit('pull.labeled', pullEvent(pull, doer));
    return pull;
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
    const sorts: Record<string, IssueSort> = {
      oldest: 'oldest',
      recentupdate: 'recentupdate',
      leastupdate: 'leastupdate',
      mostcomment: 'mostcomment',
      leastcomment: 'leastcomment',
      priority: 'latest',
    };
    const sort = q.sort ? sorts[q.sort] : undefined;
    if (q.sort && !sort) throw invalidField('sort', `unknown sort: ${q.sort}`);
    const [rows, total] = await this.deps.issueLists.list(
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

  async diffStat(pull: Pull): Promise<{ additions: number; deletions: number; files: number }> {
    const files = await this.files(pull);
    return {
      additions: files.reduce((s, f) => s + f.additions, 0),
      deletions: files.reduce((s, f) => s + f.deletions, 0),
      files: files.length,
    };
  }

  files(pull: Pull): Promise<pg.NumStat[]> {
    return pg.pullFiles(this.dirOf({ id: pull.pr.base_repo_id }), pull.pr);
  }

  /** The unified diff (`diff`) or the mailbox patch (`patch`) of the pull request. */
  async diffText(pull: Pull, kind: 'diff' | 'patch', binary = false): Promise<Buffer> {
    const dir = this.dirOf({ id: pull.pr.base_repo_id });
    const from = pg.diffBase(pull.pr);
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

  /**
   * What the JSON of some of the pull request's commits names besides them: the accounts behind
   * their authors' and committers' e-mail addresses (one query) and their signatures' verification.
   */
  async commitLinks(pull: Pull, commits: CommitData[]): Promise<Pick<RepoLinks, 'users' | 'verifications'>> {
    const [users, verifications] = await Promise.all([
      usersByEmails(
        this.db,
        commits.flatMap((c) => [c.author.email, c.committer.email]),
      ),
      this.deps.signing.verifyCommits(
        this.dirOf({ id: pull.pr.base_repo_id }),
        commits.map((c) => c.oid),
      ),
    ]);
    return { users, verifications };
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
      const sha = await pg.branchSha(this.dirOf(repo), input.base);
      if (!sha) throw notFound(`base branch does not exist [name: ${input.base}]`);
      if (pull.pr.head_repo_id === repo.id && input.base === pull.pr.head_branch)
        throw invalidField('base', 'head and base are the same branch');
      newBase = { branch: input.base, sha };
    }
    const { issues, issueTriage, labels, events } = this.deps;
    const issue = await issues.edit(view, pull.issue, doer, {
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
      const before = (await labels.ofIssue(issue.id)).map((l) => l.id).sort();
      await issueTriage.replaceLabels(view, issue, doer, input.labels);
      const after = (await labels.ofIssue(issue.id)).map((l) => l.id).sort();
      if (before.join() !== after.join()) await events.emit('pull.labeled', pullEvent(pull, doer));
    }
    let pr = pull.pr;
    if (newBase) {
      const now = nowUnix();
      const m = await pg.mergeability(this.dirOf(repo), newBase.sha, pr.head_commit_id);
      const base = newBase;
      pr = await transaction(this.db, async (tx) => {
        await issueStore.insertComment(tx, {
          type: PullCommentType.changeTargetBranch,
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
    await events.emit('pull.edited', {
      ...pullEvent(result, doer),
      ...(newBase ? { baseFrom: pull.pr.base_branch } : {}),
    });
    return result;
  }

  /** Open pull requests from or to a renamed branch follow it (Forgejo's RenameBranch). */
  followBranchRename(repoId: number, from: string, to: string): Promise<void> {
    return store.renameBranch(this.db, repoId, from, to);
  }
}
