// Issues (and, later, pull requests, which share their table and numbers): creation with a
// number from the repository's counter, editing, closing and reopening (by hand or by a commit),
// labels under the exclusive rule, assignees, milestones, due dates, locks, pins, reactions,
// subscriptions, comments and the timeline; lists and the search across repositories. Every
// multi-row change is one transaction; events go out on the bus once it has committed.
import type { AppContext } from '../app/context.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { badRequest, forbidden, invalidField, notFound, preconditionFailed } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { RepoAccess } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { Viewer } from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import { UserType, Visibility } from '../users/tables.js';
import { AccessMode } from '../orgs/store.js';
import * as orgStore from '../orgs/store.js';
import type { AfterCommit } from '../users/owned.js';
import type { IssueChanges } from '../events/bus.js';
import type { LabelRef } from '../labels/service.js';
import type { LabelRow } from '../labels/tables.js';
import * as store from './store.js';
import { openDependencyCount } from './tracking-store.js';
import type { IssueFilter, IssueSort } from './store.js';
import type { CommentRow, IssueRow, ReactionRow } from './tables.js';
import { CommentType } from './tables.js';
import { checkText, isId, isName, mentionedNames, parseTime } from './input.js';
import { handlePushReferences } from './commit-refs.js';

export { endOfDay, parseTime } from './input.js';

/**
 * What other domains keep per issue or comment (attachments, ...) and must follow on deletion.
 * A repository's deletion removes its issues and comments by cascade without calling these: a
 * domain keeping files per issue also registers RepoService hooks.
 */
export interface IssueHooks {
  /** Before an issue row is deleted: drop rows; return work for after commit (files). */
  beforeDelete?(tx: Tx, issue: IssueRow): Promise<AfterCommit | void>;
  /** Before a comment row is deleted. */
  beforeDeleteComment?(tx: Tx, comment: CommentRow): Promise<AfterCommit | void>;
}

/** The attachments shown in the `assets` of issues and comments (provided by the attachments domain). */
export interface AssetsSource {
  issues(issueIds: number[]): Promise<Map<number, unknown[]>>;
  comments(commentIds: number[]): Promise<Map<number, unknown[]>>;
}

/** A repository as its caller sees it: the row and the caller's access. */
export interface RepoView {
  repo: RepoRow;
  access: RepoAccess;
}

export interface CreateIssueInput {
  title: string;
  body?: string | undefined;
  ref?: string | undefined;
  assignee?: string | undefined;
  assignees?: string[] | undefined;
  milestone?: number | undefined;
  labels?: number[] | undefined;
  closed?: boolean | undefined;
  /** Unix seconds. */
  dueDate?: number | undefined;
}

export interface EditIssueInput {
  title?: string | undefined;
  body?: string | undefined;
  ref?: string | undefined;
  assignee?: string | undefined;
  assignees?: string[] | undefined;
  /** 0 or null removes the milestone. */
  milestone?: number | null | undefined;
  state?: 'open' | 'closed' | undefined;
  /** Unix seconds; null removes the due date. */
  dueDate?: number | null | undefined;
  unsetDueDate?: boolean | undefined;
}

export interface IssueListInput {
  state?: 'open' | 'closed' | 'all' | undefined;
  labels?: string | undefined;
  milestones?: string | undefined;
  q?: string | undefined;
  type?: 'issues' | 'pulls' | undefined;
  since?: string | undefined;
  before?: string | undefined;
  createdBy?: string | undefined;
  assignedBy?: string | undefined;
  mentionedBy?: string | undefined;
  sort?: IssueSort | undefined;
}

export interface IssueSearchInput extends IssueListInput {
  owner?: string | undefined;
  team?: string | undefined;
  priorityRepoId?: number | undefined;
  assigned?: boolean | undefined;
  created?: boolean | undefined;
  mentioned?: boolean | undefined;
  reviewRequested?: boolean | undefined;
  reviewed?: boolean | undefined;
}

export interface CommentListInput {
  since?: string | undefined;
  before?: string | undefined;
}

/** Forgejo's default allowed reactions. */
export const REACTIONS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'] as const;
/** Forgejo's default lock reasons ('' is allowed too). */
export const LOCK_REASONS = ['Too heated', 'Off-topic', 'Resolved', 'Spam'] as const;
/** Forgejo's default maximum of pinned issues (and of pinned pull requests) per repository. */
export const MAX_PINNED = 3;
const MAX_TITLE = 255;

/** The unit an issue or pull request belongs to. */
export const unitOf = (isPull: boolean | number) => (isPull ? 'repo.pulls' : 'repo.issues');

/** Whether `access` allows writing issues (or pull requests). */
export function canWriteIssues(access: RepoAccess, isPull: boolean | number = false): boolean {
  return (access.units.get(unitOf(isPull)) ?? 0) >= AccessMode.write;
}

export class IssueService {
  private readonly hooks: IssueHooks[] = [];
  private assets: AssetsSource | undefined;

  constructor(private readonly ctx: AppContext) {
    // Pushed commits that mention issues reference (and may close or reopen) them.
    ctx.events.on('push', (e) => handlePushReferences(ctx, e));
  }

  /** Issue (or pull request) `index` of `repo`, if there is one. */
  findIssue(repo: RepoRow, index: number): Promise<IssueRow | undefined> {
    return Number.isSafeInteger(index)
      ? store.getByIndex(this.db, repo.id, index)
      : Promise.resolve(undefined);
  }

  /**
   * A "referenced in commit" entry on the issue's timeline, by the pusher: once per commit, however
   * many times or to however many branches the commit is pushed.
   */
  async addCommitReference(
    issue: IssueRow,
    pusher: UserRow,
    repo: RepoRow,
    owner: UserRow,
    commitSha: string,
    title: string,
  ): Promise<void> {
    const link = `/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}/commit/${commitSha}`;
    const html = title
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;');
    await transaction(this.db, async (tx) => {
      await store.lockIssue(tx, issue.id);
      if (await store.hasCommitReference(tx, issue.id, commitSha)) return;
      const now = nowUnix();
      await store.insertComment(tx, {
        type: CommentType.commitRef,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: pusher.id,
        commit_sha: commitSha,
        content: `<a href="${link}">${html}</a>`,
        created_unix: now,
        updated_unix: now,
      });
    });
  }

  /** Issues and pull requests, and comments, on the whole site (/nodeinfo). */
  siteCounts() {
    return store.siteCounts(this.db);
  }

  private get db(): Db {
    return this.ctx.db;
  }

  /** Registers what another domain keeps per issue or comment. */
  addHooks(hooks: IssueHooks): void {
    this.hooks.push(hooks);
  }

  /** The attachments domain provides the `assets` of issues and comments. */
  setAssetsSource(source: AssetsSource): void {
    this.assets = source;
  }

  async issueAssets(issueIds: number[]): Promise<Map<number, unknown[]>> {
    return this.assets && issueIds.length ? this.assets.issues(issueIds) : new Map();
  }

  async commentAssets(commentIds: number[]): Promise<Map<number, unknown[]>> {
    return this.assets && commentIds.length ? this.assets.comments(commentIds) : new Map();
  }

  // Look-ups

  /** Issue (or pull request) number `index` of `repo`, or a 404. */
  async requireIssue(repo: RepoRow, index: number): Promise<IssueRow> {
    const issue = Number.isSafeInteger(index) ? await store.getByIndex(this.db, repo.id, index) : undefined;
    if (!issue) throw notFound(`issue does not exist [repo_id: ${repo.id}, index: ${index}]`);
    return issue;
  }

  /**
   * Issue `index` of a repository the caller reads: 404 also when the repository has turned off
   * the issues (or pull requests) it belongs to, or the caller cannot read that unit.
   */
  async requireVisibleIssue(view: RepoView, index: number): Promise<IssueRow> {
    const issue = await this.requireIssue(view.repo, index);
    const enabled = issue.is_pull ? view.repo.has_pull_requests : view.repo.has_issues;
    if (!enabled || (view.access.units.get(unitOf(issue.is_pull)) ?? 0) < AccessMode.read) {
      throw notFound(`issue does not exist [repo_id: ${view.repo.id}, index: ${index}]`);
    }
    return issue;
  }

  getById(id: number): Promise<IssueRow | undefined> {
    return store.getById(this.db, id);
  }

  getCommentById(id: number) {
    return store.getComment(this.db, id);
  }

  getByIds(ids: number[]): Promise<Map<number, IssueRow>> {
    return store.getByIds(this.db, [...new Set(ids)]);
  }

  /** A comment of `repo` (of any type), or a 404. */
  async requireComment(repo: RepoRow, id: number): Promise<{ comment: CommentRow; issue: IssueRow }> {
    const comment = Number.isSafeInteger(id) ? await store.getComment(this.db, id) : undefined;
    if (!comment || comment.repo_id !== repo.id) throw notFound(`comment does not exist [id: ${id}]`);
    const issue = (await store.getById(this.db, comment.issue_id))!;
    return { comment, issue };
  }

  assigneesOf(issueIds: number[]): Promise<Map<number, number[]>> {
    return store.assigneesOf(this.db, issueIds);
  }

  /** Open issues and open pull requests of each repository (for repository JSON). */
  openCounts(repoIds: number[]) {
    return store.openCounts(this.db, repoIds);
  }

  /** The issue's poster, the authors of its comments and its assignees. */
  async participants(issue: IssueRow): Promise<number[]> {
    const [commenters, assignees] = await Promise.all([
      store.commenterIds(this.db, issue.id),
      store.assigneesOf(this.db, [issue.id]),
    ]);
    const ids = new Set<number>([...commenters, ...(assignees.get(issue.id) ?? [])]);
    if (issue.poster_id !== null) ids.add(issue.poster_id);
    return [...ids];
  }

  /**
   * Who follows an issue (for notifications): its participants and mentioned users, and everyone
   * who subscribed, less those who unsubscribed.
   */
  async watchers(issue: IssueRow): Promise<number[]> {
    const [participants, rows, mentioned] = await Promise.all([
      this.participants(issue),
      store.watchRows(this.db, issue.id),
      store.mentionedIds(this.db, issue.id),
    ]);
    const ids = new Set([...participants, ...mentioned]);
    for (const w of rows) {
      if (w.is_watching) ids.add(w.user_id);
      else ids.delete(w.user_id);
    }
    return [...ids];
  }

  /** The account called `name`, if any. */
  async findUser(name: string): Promise<UserRow | undefined> {
    return isName(name) ? this.ctx.users.getByName(name) : undefined;
  }

  // Checks

  private assertWritableRepo(repo: RepoRow): void {
    if (repo.is_archived) throw forbidden(`repository is archived [id: ${repo.id}]`);
  }

  private requireWriter(view: RepoView, issue: IssueRow | null, what: string): void {
    if (!canWriteIssues(view.access, issue?.is_pull ?? 0)) {
      throw forbidden(`you need write access to the issues of this repository to ${what}`);
    }
  }

  private static checkTitle(title: string): string {
    const t = checkText(title, 'title').trim();
    if (!t) throw invalidField('title', 'Required');
    if (t.length > MAX_TITLE) throw invalidField('title', `must be at most ${MAX_TITLE} characters`);
    return t;
  }

  /**
   * The users named as assignees (Forgejo's `assignee` and `assignees` together), each of whom must
   * exist (422) and be able to write the repository's issues (422).
   */
  private async resolveAssignees(
    repo: RepoRow,
    one: string | undefined,
    many: string[] | undefined,
  ): Promise<UserRow[]> {
    const names = [...(one && !(many ?? []).includes(one) ? [one] : []), ...(many ?? []).filter(Boolean)];
    const out = new Map<number, UserRow>();
    for (const name of names) {
      const u = await this.findUser(name);
      if (!u || u.type !== UserType.Individual)
        throw invalidField('assignees', `Assignee does not exist: [name: ${name}]`);
      const access = await this.ctx.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if (!canWriteIssues(access)) {
        throw invalidField(
          'assignees',
          `user ${u.name} cannot be assigned: no write access to the issues of this repository`,
        );
      }
      out.set(u.id, u);
    }
    return [...out.values()];
  }

  /** Users mentioned in `text` who exist, are active and can read the repository's issues. */
  private async resolveMentions(repo: RepoRow, text: string): Promise<number[]> {
    const out: number[] = [];
    for (const name of mentionedNames(text)) {
      const u = await this.findUser(name);
      if (!u || u.type !== UserType.Individual || !u.is_active) continue;
      const access = await this.ctx.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if ((access.units.get('repo.issues') ?? 0) >= AccessMode.read) out.push(u.id);
    }
    return out;
  }

  // Creation and editing

  async create(view: RepoView, doer: UserRow, input: CreateIssueInput): Promise<IssueRow> {
    const { repo } = view;
    this.assertWritableRepo(repo);
    await this.ctx.social.assertNotBlocked(repo.owner_id, doer.id);
    if (!repo.has_issues) throw notFound('the issues of this repository are turned off');
    const title = IssueService.checkTitle(input.title);
    // As in Forgejo: labels, milestone, assignees and due date are set by writers only.
    const writer = canWriteIssues(view.access);
    const assignees = writer ? await this.resolveAssignees(repo, input.assignee, input.assignees) : [];
    const labels = writer && input.labels?.length ? await this.ctx.labels.resolve(repo, input.labels) : [];
    this.ctx.labels.checkExclusive(labels);
    const milestone =
      writer && input.milestone
        ? await this.ctx.milestones.requireForIssue(repo, input.milestone)
        : undefined;
    const body = checkText(input.body ?? '', 'body');
    checkText(input.ref ?? '', 'ref');
    const mentions = await this.resolveMentions(repo, body);
    const now = nowUnix();
    const issue = await transaction(this.db, async (tx) => {
      let row = await store.insert(tx, {
        repo_id: repo.id,
        index: await store.nextIndex(tx, repo.id),
        poster_id: doer.id,
        title,
        content: body,
        ref: input.ref ?? '',
        milestone_id: milestone?.id ?? null,
        deadline_unix: writer ? (input.dueDate ?? 0) : 0,
        created_unix: now,
        updated_unix: now,
      });
      await this.ctx.labels.addToIssue(
        tx,
        row,
        labels.map((l) => l.id),
      );
      await store.addAssignees(
        tx,
        row.id,
        assignees.map((a) => a.id),
      );
      await store.addMentions(tx, row.id, mentions);
      if (input.closed) row = await this.setState(tx, row, doer, true, '');
      await this.ctx.milestones.recount(tx, [row.milestone_id]);
      return row;
    });
    const ev = this.eventOf(issue, doer);
    await this.ctx.events.emit('issue.opened', { ...ev, mentionedIds: mentions });
    if (assignees.length)
      await this.ctx.events.emit('issue.assigned', { ...ev, added: assignees.map((a) => a.id), removed: [] });
    if (input.closed) await this.ctx.events.emit('issue.closed', { ...ev, commitId: '' });
    return issue;
  }

  /**
   * Edits an issue. Its poster may change the title, body, ref and state; writers may change
   * everything (as in Forgejo, the milestone, assignees and due date a non-writer sends are ignored).
   */
  async edit(view: RepoView, issue: IssueRow, doer: UserRow, input: EditIssueInput): Promise<IssueRow> {
    const { repo } = view;
    const writer = canWriteIssues(view.access, issue.is_pull);
    if (!writer && issue.poster_id !== doer.id)
      throw forbidden('only the poster and writers may edit this issue');
    this.assertWritableRepo(repo);
    const title = input.title === undefined ? undefined : IssueService.checkTitle(input.title);
    if (input.body !== undefined) checkText(input.body, 'body');
    if (input.ref !== undefined) checkText(input.ref, 'ref');
    const wantsAssignees = writer && (input.assignees !== undefined || input.assignee !== undefined);
    const assignees = wantsAssignees
      ? await this.resolveAssignees(repo, input.assignee, input.assignees)
      : undefined;
    const milestoneId =
      writer && input.milestone !== undefined
        ? input.milestone
          ? (await this.ctx.milestones.requireForIssue(repo, input.milestone)).id
          : null
        : undefined;
    let deadline: number | undefined;
    if (writer && (input.unsetDueDate || input.dueDate !== undefined)) {
      deadline = input.unsetDueDate ? 0 : (input.dueDate ?? 0);
    }
    const mentions = input.body !== undefined ? await this.resolveMentions(repo, input.body) : [];
    const now = nowUnix();
    const changes: IssueChanges = {};
    let assigned: { added: number[]; removed: number[] } = { added: [], removed: [] };
    let milestoned: { from: number | null; to: number | null } | undefined;
    let stateChanged = false;

    const updated = await transaction(this.db, async (tx) => {
      let row = (await store.lockIssue(tx, issue.id))!;
      const milestoneBefore = row.milestone_id;
      const event = (type: number, extra: Partial<CommentRow> = {}) =>
        store.insertComment(tx, {
          type,
          repo_id: repo.id,
          issue_id: row.id,
          poster_id: doer.id,
          created_unix: now,
          updated_unix: now,
          ...stripIds(extra),
        });
      const patch: Parameters<typeof store.update>[2] = {};
      if (title !== undefined && title !== row.title) {
        changes.title = { from: row.title };
        patch.title = title;
        await event(CommentType.changeTitle, { old_title: row.title, new_title: title });
      }
      if (input.body !== undefined && input.body !== row.content) {
        changes.body = { from: row.content };
        patch.content = input.body;
      }
      if (input.ref !== undefined && input.ref !== row.ref) {
        changes.ref = { from: row.ref };
        patch.ref = input.ref;
        await event(CommentType.changeIssueRef, { old_ref: row.ref, new_ref: input.ref });
      }
      if (deadline !== undefined && deadline !== row.deadline_unix) {
        changes.dueDate = { from: row.deadline_unix };
        patch.deadline_unix = deadline;
        await event(...deadlineEvent(row.deadline_unix, deadline));
      }
      if (milestoneId !== undefined && milestoneId !== row.milestone_id) {
        milestoned = { from: row.milestone_id, to: milestoneId };
        patch.milestone_id = milestoneId;
        await event(CommentType.milestone, {
          old_milestone_id: row.milestone_id ?? 0,
          milestone_id: milestoneId ?? 0,
        });
      }
      if (Object.keys(patch).length) row = await store.update(tx, row.id, { ...patch, updated_unix: now });
      if (assignees)
        assigned = await this.replaceAssignees(
          tx,
          row,
          doer,
          assignees.map((a) => a.id),
          now,
        );
      if (input.state !== undefined && (input.state === 'closed') !== (row.is_closed === 1)) {
        stateChanged = true;
        row = await this.setState(tx, row, doer, input.state === 'closed', '');
      }
      await store.addMentions(tx, row.id, mentions);
      await this.ctx.milestones.recount(tx, [milestoneBefore, row.milestone_id]);
      return (await store.getById(tx, row.id))!;
    });

    const ev = this.eventOf(updated, doer);
    if (Object.keys(changes).length) await this.ctx.events.emit('issue.edited', { ...ev, changes });
    if (milestoned) {
      await this.ctx.events.emit('issue.milestoned', {
        ...ev,
        milestoneId: milestoned.to,
        oldMilestoneId: milestoned.from,
      });
    }
    if (assigned.added.length || assigned.removed.length)
      await this.ctx.events.emit('issue.assigned', { ...ev, ...assigned });
    if (stateChanged)
      await this.ctx.events.emit(updated.is_closed ? 'issue.closed' : 'issue.reopened', {
        ...ev,
        commitId: '',
      });
    return updated;
  }

  private async replaceAssignees(
    tx: Tx,
    issue: IssueRow,
    doer: UserRow,
    want: number[],
    now: number,
  ): Promise<{ added: number[]; removed: number[] }> {
    const have = (await store.assigneesOf(tx, [issue.id])).get(issue.id) ?? [];
    const added = want.filter((id) => !have.includes(id));
    const removed = have.filter((id) => !want.includes(id));
    await store.removeAssignees(tx, issue.id, removed);
    await store.addAssignees(tx, issue.id, added);
    for (const [ids, isRemoved] of [
      [removed, 1],
      [added, 0],
    ] as const) {
      for (const id of ids) {
        await store.insertComment(tx, {
          type: CommentType.assignees,
          repo_id: issue.repo_id,
          issue_id: issue.id,
          poster_id: doer.id,
          assignee_id: id,
          removed_assignee: isRemoved,
          created_unix: now,
          updated_unix: now,
        });
      }
    }
    if (added.length || removed.length) await store.update(tx, issue.id, { updated_unix: now });
    return { added, removed };
  }

  /**
   * Closes or reopens inside `tx`: state, closer, commit, the timeline event; milestone counts.
   * An issue that still depends on open issues cannot be closed (412, as in Forgejo).
   */
  private async setState(
    tx: Tx,
    issue: IssueRow,
    doer: UserRow,
    close: boolean,
    commitSha: string,
  ): Promise<IssueRow> {
    if (close && (await openDependencyCount(tx, issue.id)) > 0) {
      throw preconditionFailed(
        `cannot close this ${issue.is_pull ? 'pull request' : 'issue'} because it still has open dependencies`,
      );
    }
    const now = nowUnix();
    const row = await store.update(tx, issue.id, {
      is_closed: close ? 1 : 0,
      closed_unix: close ? now : 0,
      closed_by_id: close ? doer.id : null,
      closed_by_commit: close ? commitSha : '',
      updated_unix: now,
    });
    await this.ctx.labels.setIssueClosed(tx, issue.id, close);
    // As in Forgejo, the closer's stopwatch on the issue stops (its time is tracked).
    if (close) await this.ctx.times.finishOnClose(tx, issue.id, doer.id);
    await store.insertComment(tx, {
      type: close ? CommentType.close : CommentType.reopen,
      repo_id: issue.repo_id,
      issue_id: issue.id,
      poster_id: doer.id,
      commit_sha: commitSha,
      created_unix: now,
      updated_unix: now,
    });
    await this.ctx.milestones.recount(tx, [row.milestone_id]);
    return row;
  }

  /**
   * Closes issue `index` of `repo` because commit `commitSha` (pushed by `doer`) says so; with
   * `close` false, reopens it. Nothing happens when it already is in that state. `doer` must be
   * able to write the repository's issues (403 otherwise); 404 when there is no such issue.
   */
  async closeByCommit(
    repo: RepoRow,
    index: number,
    doer: UserRow,
    commitSha: string,
    close = true,
  ): Promise<IssueRow> {
    const issue = await this.requireIssue(repo, index);
    const access = await this.ctx.repos.access(repo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if (!canWriteIssues(access, issue.is_pull))
      throw forbidden(`${doer.name} cannot close issues of this repository`);
    const row = await transaction(this.db, async (tx) => {
      const current = (await store.lockIssue(tx, issue.id))!;
      return (current.is_closed === 1) === close
        ? undefined
        : this.setState(tx, current, doer, close, commitSha);
    });
    if (!row) return (await store.getById(this.db, issue.id))!;
    await this.ctx.events.emit(close ? 'issue.closed' : 'issue.reopened', {
      ...this.eventOf(row, doer),
      commitId: commitSha,
    });
    return row;
  }

  /** Deletes an issue with its comments, labels, reactions, ... (repository administrators). */
  async delete(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    if (view.access.mode < AccessMode.admin)
      throw forbidden('only repository administrators may delete issues');
    const after = await transaction(this.db, async (tx) => {
      const work: AfterCommit[] = [];
      for (const h of this.hooks) {
        const w = await h.beforeDelete?.(tx, issue);
        if (w) work.push(w);
      }
      await store.remove(tx, issue.id);
      await this.ctx.milestones.recount(tx, [issue.milestone_id]);
      return work;
    });
    await this.runAfterCommit(after);
    await this.ctx.events.emit('issue.deleted', this.eventOf(issue, doer));
  }

  private async runAfterCommit(work: AfterCommit[]): Promise<void> {
    for (const w of work) {
      try {
        await w();
      } catch (err) {
        this.ctx.log.error({ err }, 'cleanup after an issue or comment deletion failed');
      }
    }
  }

  private eventOf(issue: IssueRow, doer: { id: number }) {
    return {
      repoId: issue.repo_id,
      issueId: issue.id,
      index: issue.index,
      isPull: issue.is_pull === 1,
      doerId: doer.id,
    };
  }

  // Labels

  private async changeLabels(
    view: RepoView,
    issue: IssueRow,
    doer: UserRow,
    plan: (current: LabelRow[]) => { add: LabelRow[]; remove: LabelRow[] },
  ): Promise<LabelRow[]> {
    this.requireWriter(view, issue, 'change its labels');
    this.assertWritableRepo(view.repo);
    const now = nowUnix();
    let change: { add: LabelRow[]; remove: LabelRow[] } = { add: [], remove: [] };
    const labels = await transaction(this.db, async (tx) => {
      const row = (await store.lockIssue(tx, issue.id))!;
      change = plan(await this.ctx.labels.ofIssue(issue.id, tx));
      await this.ctx.labels.removeFromIssue(
        tx,
        issue.id,
        change.remove.map((l) => l.id),
      );
      await this.ctx.labels.addToIssue(
        tx,
        row,
        change.add.map((l) => l.id),
      );
      for (const [list, added] of [
        [change.remove, false],
        [change.add, true],
      ] as const) {
        for (const l of list) {
          await store.insertComment(tx, {
            type: CommentType.label,
            repo_id: issue.repo_id,
            issue_id: issue.id,
            poster_id: doer.id,
            label_id: l.id,
            content: added ? '1' : '',
            created_unix: now,
            updated_unix: now,
          });
        }
      }
      if (change.add.length || change.remove.length) await store.update(tx, issue.id, { updated_unix: now });
      return this.ctx.labels.ofIssue(issue.id, tx);
    });
    if (change.add.length || change.remove.length) {
      await this.ctx.events.emit('issue.labelled', {
        ...this.eventOf(issue, doer),
        added: change.add.map((l) => l.id),
        removed: change.remove.map((l) => l.id),
      });
    }
    return labels;
  }

  /**
   * Adds labels (by id or name). An exclusive label replaces the issue's label of the same scope;
   * two exclusive labels of one scope in one request are a 422 and change nothing.
   */
  async addLabels(view: RepoView, issue: IssueRow, doer: UserRow, refs: LabelRef[]): Promise<LabelRow[]> {
    this.requireWriter(view, issue, 'change its labels');
    const adding = await this.ctx.labels.resolve(view.repo, refs);
    this.ctx.labels.checkExclusive(adding);
    return this.changeLabels(view, issue, doer, (current) => this.ctx.labels.planAdd(current, adding));
  }

  /** Replaces the issue's labels; 422 as for addLabels. */
  async replaceLabels(view: RepoView, issue: IssueRow, doer: UserRow, refs: LabelRef[]): Promise<LabelRow[]> {
    this.requireWriter(view, issue, 'change its labels');
    const next = await this.ctx.labels.resolve(view.repo, refs);
    this.ctx.labels.checkExclusive(next);
    return this.changeLabels(view, issue, doer, (current) => this.ctx.labels.planReplace(current, next));
  }

  /** Removes one label (422 when the repository has no such label; nothing when the issue lacks it). */
  async removeLabel(view: RepoView, issue: IssueRow, doer: UserRow, labelId: number): Promise<void> {
    this.requireWriter(view, issue, 'change its labels');
    const [label] = await this.ctx.labels.resolve(view.repo, [labelId]);
    await this.changeLabels(view, issue, doer, (current) => ({
      add: [],
      remove: current.filter((l) => l.id === label!.id),
    }));
  }

  async clearLabels(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    await this.changeLabels(view, issue, doer, (current) => ({ add: [], remove: current }));
  }

  // Due dates, locks, pins

  /** Sets (or, with null, removes) the due date; returns it. */
  async setDeadline(
    view: RepoView,
    issue: IssueRow,
    doer: UserRow,
    deadline: number | null,
  ): Promise<number> {
    this.requireWriter(view, issue, 'set its due date');
    this.assertWritableRepo(view.repo);
    const value = deadline ?? 0;
    if (value === issue.deadline_unix) return value;
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      await store.update(tx, issue.id, { deadline_unix: value, updated_unix: now });
      const [type, extra] = deadlineEvent(issue.deadline_unix, value);
      await store.insertComment(tx, {
        type,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doer.id,
        created_unix: now,
        updated_unix: now,
        ...extra,
      });
    });
    await this.ctx.events.emit('issue.edited', {
      ...this.eventOf(issue, doer),
      changes: { dueDate: { from: issue.deadline_unix } },
    });
    return value;
  }

  /** Locks or unlocks; false when the issue already was in that state (Forgejo answers 208). */
  async setLocked(
    view: RepoView,
    issue: IssueRow,
    doer: UserRow,
    lock: boolean,
    reason = '',
  ): Promise<boolean> {
    if (lock && reason && !(LOCK_REASONS as readonly string[]).includes(reason)) {
      throw badRequest(`reason not valid: use one of ${LOCK_REASONS.join(', ')}`);
    }
    this.requireWriter(view, issue, lock ? 'lock it' : 'unlock it');
    this.assertWritableRepo(view.repo);
    if ((issue.is_locked === 1) === lock) return false;
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      await store.update(tx, issue.id, { is_locked: lock ? 1 : 0, updated_unix: now });
      await store.insertComment(tx, {
        type: lock ? CommentType.lock : CommentType.unlock,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doer.id,
        content: lock ? reason : '',
        created_unix: now,
        updated_unix: now,
      });
    });
    return true;
  }

  pinned(repo: RepoRow, isPull = false): Promise<IssueRow[]> {
    return store.pinned(this.db, repo.id, isPull);
  }

  /** Pins the issue last among the pinned ones (at most MAX_PINNED: 400 beyond); nothing if pinned. */
  async pin(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    this.requireWriter(view, issue, 'pin it');
    await transaction(this.db, async (tx) => {
      // Pins are numbered per repository: one change of them at a time.
      await store.lockRepoIssues(tx, issue.repo_id);
      const row = (await store.getById(tx, issue.id))!;
      if (row.pin_order > 0) return;
      const pins = await store.pinned(tx, row.repo_id, row.is_pull === 1);
      if (pins.length >= MAX_PINNED)
        throw badRequest(`the maximum of ${MAX_PINNED} pinned issues is reached`);
      await store.update(tx, row.id, { pin_order: pins.length + 1 });
      await this.pinEvent(tx, row, doer, CommentType.pin);
    });
  }

  async unpin(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    this.requireWriter(view, issue, 'unpin it');
    await transaction(this.db, async (tx) => {
      // Pins are numbered per repository: one change of them at a time.
      await store.lockRepoIssues(tx, issue.repo_id);
      const row = (await store.getById(tx, issue.id))!;
      if (row.pin_order === 0) return;
      await store.update(tx, row.id, { pin_order: 0 });
      await store.shiftPins(tx, row.repo_id, row.is_pull === 1, -1, row.pin_order + 1);
      await this.pinEvent(tx, row, doer, CommentType.unpin);
    });
  }

  /** Moves a pinned issue to `position` (1-based; beyond the last means last); 404 when not pinned. */
  async movePin(view: RepoView, issue: IssueRow, position: number): Promise<void> {
    this.requireWriter(view, issue, 'move its pin');
    if (!Number.isSafeInteger(position) || position < 1) throw invalidField('position', 'must be 1 or more');
    await transaction(this.db, async (tx) => {
      // Pins are numbered per repository: one change of them at a time.
      await store.lockRepoIssues(tx, issue.repo_id);
      const row = (await store.getById(tx, issue.id))!;
      if (row.pin_order === 0) throw notFound(`issue is not pinned [index: ${row.index}]`);
      const count = (await store.pinned(tx, row.repo_id, row.is_pull === 1)).length;
      const target = Math.min(position, count);
      if (target === row.pin_order) return;
      await store.update(tx, row.id, { pin_order: 0 });
      if (target < row.pin_order)
        await store.shiftPins(tx, row.repo_id, row.is_pull === 1, 1, target, row.pin_order - 1);
      else await store.shiftPins(tx, row.repo_id, row.is_pull === 1, -1, row.pin_order + 1, target);
      await store.update(tx, row.id, { pin_order: target });
    });
  }

  private async pinEvent(tx: Tx, issue: IssueRow, doer: UserRow, type: number): Promise<void> {
    const now = nowUnix();
    await store.insertComment(tx, {
      type,
      repo_id: issue.repo_id,
      issue_id: issue.id,
      poster_id: doer.id,
      created_unix: now,
      updated_unix: now,
    });
  }

  // Lists

  private static timeFilter(input: { since?: string | undefined; before?: string | undefined }) {
    return {
      updatedAfter: input.since === undefined ? undefined : parseTime(input.since, 'since'),
      updatedBefore: input.before === undefined ? undefined : parseTime(input.before, 'before'),
    };
  }

  private async userIdFilter(name: string | undefined): Promise<number | undefined> {
    if (name === undefined || name === '') return undefined;
    const u = await this.findUser(name);
    if (!u) throw notFound(`user does not exist [name: ${name}]`);
    return u.id;
  }

  private static tokens(list: string | undefined): string[] {
    return [
      ...new Set(
        (list ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s && isName(s)),
      ),
    ];
  }

  /** Filters common to the repository list and the search: state, type, text, users, times. */
  private async commonFilter(input: IssueListInput): Promise<Omit<IssueFilter, 'repos'>> {
    const state = input.state ?? 'open';
    return {
      isClosed: state === 'all' ? undefined : state === 'closed',
      isPull: input.type === undefined ? undefined : input.type === 'pulls',
      keyword: input.q?.replace(/\0/g, '').trim() || undefined,
      posterId: await this.userIdFilter(input.createdBy),
      assigneeId: await this.userIdFilter(input.assignedBy),
      mentionedId: await this.userIdFilter(input.mentionedBy),
      ...IssueService.timeFilter(input),
      sort: input.sort,
    };
  }

  /**
   * One page of a repository's issues. `labels`: names (or ids) the issues must all have (unknown
   * ones are ignored; when none is known, nothing matches); `milestones`: titles or ids, any of them.
   */
  async list(repo: RepoRow, input: IssueListInput, page: Page): Promise<[IssueRow[], number]> {
    const filter: IssueFilter = {
      repos: { issues: repo.has_issues ? [repo.id] : [], pulls: repo.has_pull_requests ? [repo.id] : [] },
      ...(await this.commonFilter(input)),
    };
    const labelTokens = IssueService.tokens(input.labels);
    if (labelTokens.length) {
      filter.labelGroups = await this.ctx.labels.filterIds(repo, labelTokens);
      if (filter.labelGroups.length === 0) return [[], 0];
    }
    const milestoneTokens = IssueService.tokens(input.milestones);
    if (milestoneTokens.length)
      filter.milestoneIds = await this.ctx.milestones.filterIds(repo, milestoneTokens);
    return store.list(this.db, filter, page.limit, page.offset);
  }

  /**
   * One page of the issues of every repository `viewer` may read (their issues unit included),
   * optionally of one owner or of one team of an organization; labels and milestones by name,
   * any of them. Also returns the repositories involved.
   */
  async search(
    viewer: Viewer | null,
    input: IssueSearchInput,
    page: Page,
  ): Promise<{ rows: IssueRow[]; total: number; repos: Map<number, RepoRow> }> {
    const empty = { rows: [], total: 0, repos: new Map<number, RepoRow>() };
    const repos = await this.searchableRepos(viewer, input.owner, input.team);
    if (input.reviewRequested || input.reviewed) return empty;
    const filter: IssueFilter = {
      repos: {
        issues: repos.filter((r) => r.has_issues).map((r) => r.id),
        pulls: repos.filter((r) => r.has_pull_requests).map((r) => r.id),
      },
      ...(await this.commonFilter(input)),
      sort: input.sort ?? 'priorityrepo',
      priorityRepoId:
        input.priorityRepoId !== undefined && isId(input.priorityRepoId) ? input.priorityRepoId : undefined,
    };
    if (input.created || input.assigned || input.mentioned) {
      if (!viewer) return empty;
      if (input.created) filter.posterId = viewer.id;
      if (input.assigned) filter.assigneeId = viewer.id;
      if (input.mentioned) filter.mentionedId = viewer.id;
    }
    const repoIds = repos.map((r) => r.id);
    const labelNames = IssueService.tokens(input.labels);
    if (labelNames.length) {
      const orgIds = [...new Set(repos.map((r) => r.owner_id))];
      const ids = await this.ctx.labels.idsByNamesIn(labelNames, repoIds, orgIds);
      if (ids.length === 0) return empty;
      filter.labelGroups = [ids];
    }
    const milestoneNames = IssueService.tokens(input.milestones);
    if (milestoneNames.length)
      filter.milestoneIds = await this.ctx.milestones.idsByNamesIn(repoIds, milestoneNames);
    const [rows, total] = await store.list(this.db, filter, page.limit, page.offset);
    const byId = new Map(repos.map((r) => [r.id, r]));
    return { rows, total, repos: new Map(rows.map((r) => [r.repo_id, byId.get(r.repo_id)!])) };
  }

  /** The repositories whose issues `viewer` may read, of `ownerName` (and its team `teamName`). */
  private async searchableRepos(
    viewer: Viewer | null,
    ownerName?: string,
    teamName?: string,
  ): Promise<RepoRow[]> {
    let ownerId: number | undefined;
    let teamRepoIds: Set<number> | undefined;
    if (ownerName) {
      const owner = await this.findUser(ownerName);
      const visible =
        owner &&
        (owner.type === UserType.Organization
          ? await this.ctx.orgs.canSee(viewer, owner)
          : this.ctx.users.canSee(viewer, owner));
      if (!owner || !visible) throw badRequest(`Owner not found [name: ${ownerName}]`);
      ownerId = owner.id;
    }
    if (teamName) {
      if (ownerId === undefined) throw badRequest('Owner organisation is required for filtering on team');
      const team = isName(teamName) ? await orgStore.getTeamByName(this.db, ownerId, teamName) : undefined;
      if (!team) throw badRequest(`Team not found [name: ${teamName}]`);
      if (!team.includes_all_repositories) {
        const [rows] = await this.ctx.repos.listTeamRepos(team, Number.MAX_SAFE_INTEGER, 0);
        teamRepoIds = new Set(rows.map((r) => r.id));
      }
    }
    const [rows] = await this.ctx.repos.list(
      {
        ownerId,
        viewerId: viewer?.isAdmin && !viewer.publicOnly ? undefined : (viewer?.id ?? null),
        publicOnly: viewer?.publicOnly,
        orderBy: 'id',
      },
      Number.MAX_SAFE_INTEGER,
      0,
    );
    const candidates = teamRepoIds ? rows.filter((r) => teamRepoIds.has(r.id)) : rows;
    if (!viewer || viewer.isAdmin) return candidates;
    // Repositories reached through a team may leave the issues unit out: check those one by one.
    const owners = await this.ctx.users.getByIds([...new Set(candidates.map((r) => r.owner_id))]);
    const out: RepoRow[] = [];
    for (const r of candidates) {
      const owner = owners.get(r.owner_id);
      const open = !r.is_private && owner?.visibility === Visibility.public;
      if (open || r.owner_id === viewer.id) {
        out.push(r);
        continue;
      }
      const access = await this.ctx.repos.access(r, viewer);
      if (
        (access.units.get('repo.issues') ?? 0) >= AccessMode.read ||
        (access.units.get('repo.pulls') ?? 0) >= AccessMode.read
      ) {
        out.push(r);
      }
    }
    return out;
  }

  // Comments

  /** The plain comments of an issue, oldest first (all of them unless a page is given). */
  listComments(issue: IssueRow, input: CommentListInput, page?: Page) {
    return store.issueComments(this.db, issue.id, IssueService.commentTimes(input), page);
  }

  /** Every timeline event of an issue (comments included), oldest first. */
  timeline(issue: IssueRow, input: CommentListInput, page: Page) {
    return store.issueTimeline(this.db, issue.id, IssueService.commentTimes(input), page);
  }

  /** One page of the plain comments of a repository, oldest first. */
  listRepoComments(repo: RepoRow, input: CommentListInput, page: Page) {
    return store.repoComments(this.db, repo.id, IssueService.commentTimes(input), page.limit, page.offset);
  }

  private static commentTimes(input: CommentListInput) {
    const t = IssueService.timeFilter(input);
    return { since: t.updatedAfter, before: t.updatedBefore };
  }

  /** Comments on a locked issue come from writers only (403). */
  async createComment(view: RepoView, issue: IssueRow, doer: UserRow, body: string): Promise<CommentRow> {
    this.assertWritableRepo(view.repo);
    await this.ctx.social.assertNotBlocked(view.repo.owner_id, doer.id);
    if (issue.is_locked && !canWriteIssues(view.access, issue.is_pull) && !doer.is_admin) {
      throw forbidden('this issue is locked: only writers may comment');
    }
    if (!checkText(body, 'body').trim()) throw invalidField('body', 'Required');
    const mentions = await this.resolveMentions(view.repo, body);
    const now = nowUnix();
    const comment = await transaction(this.db, async (tx) => {
      const c = await store.insertComment(tx, {
        type: CommentType.comment,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doer.id,
        content: body,
        created_unix: now,
        updated_unix: now,
      });
      await store.adjustCommentCount(tx, issue.id, 1);
      await store.update(tx, issue.id, { updated_unix: now });
      await store.addMentions(tx, issue.id, mentions);
      return c;
    });
    await this.ctx.events.emit('comment.created', {
      ...this.eventOf(issue, doer),
      commentId: comment.id,
      mentionedIds: mentions,
    });
    return comment;
  }

  /** Its poster or a writer edits a plain comment; 403 for anyone else. */
  async editComment(
    view: RepoView,
    issue: IssueRow,
    comment: CommentRow,
    doer: UserRow,
    body: string,
  ): Promise<CommentRow> {
    if (comment.poster_id !== doer.id && !canWriteIssues(view.access, issue.is_pull)) {
      throw forbidden('only the poster and writers may edit this comment');
    }
    this.assertWritableRepo(view.repo);
    if (!checkText(body, 'body').trim()) throw invalidField('body', 'Required');
    if (body === comment.content) return comment;
    const mentions = await this.resolveMentions(view.repo, body);
    const updated = await transaction(this.db, async (tx) => {
      const c = await store.updateComment(tx, comment.id, { content: body, updated_unix: nowUnix() });
      await store.addMentions(tx, issue.id, mentions);
      return c;
    });
    await this.ctx.events.emit('comment.edited', {
      ...this.eventOf(issue, doer),
      commentId: comment.id,
      oldBody: comment.content,
    });
    return updated;
  }

  /** Its poster or a writer deletes a plain comment (with its reactions); 403 for anyone else. */
  async deleteComment(view: RepoView, issue: IssueRow, comment: CommentRow, doer: UserRow): Promise<void> {
    if (comment.poster_id !== doer.id && !canWriteIssues(view.access, issue.is_pull)) {
      throw forbidden('only the poster and writers may delete this comment');
    }
    this.assertWritableRepo(view.repo);
    const after = await transaction(this.db, async (tx) => {
      const work: AfterCommit[] = [];
      for (const h of this.hooks) {
        const w = await h.beforeDeleteComment?.(tx, comment);
        if (w) work.push(w);
      }
      await store.removeCommentReactions(tx, issue.id, comment.id);
      await store.removeComment(tx, comment.id);
      if (comment.type === CommentType.comment) await store.adjustCommentCount(tx, issue.id, -1);
      return work;
    });
    await this.runAfterCommit(after);
    await this.ctx.events.emit('comment.deleted', { ...this.eventOf(issue, doer), commentId: comment.id });
  }

  // Reactions

  /** The reactions to an issue and to all its comments at once. */
  allReactions(issue: IssueRow): Promise<ReactionRow[]> {
    return store.allReactions(this.db, issue.id);
  }

  reactions(issue: IssueRow, commentId: number, page?: Page): Promise<[ReactionRow[], number]> {
    return store.reactions(this.db, issue.id, commentId, page);
  }

  private checkReaction(view: RepoView, issue: IssueRow, content: string): void {
    if (!(REACTIONS as readonly string[]).includes(content)) {
      throw invalidField(
        'content',
        `'${content}' is not an allowed reaction: use one of ${REACTIONS.join(', ')}`,
      );
    }
    if (issue.is_locked && !canWriteIssues(view.access, issue.is_pull)) {
      throw forbidden('this issue is locked: only writers may react');
    }
    this.assertWritableRepo(view.repo);
  }

  /** Adds a reaction to the issue (commentId 0) or a comment; `created` is false when it existed. */
  async react(view: RepoView, issue: IssueRow, commentId: number, doer: UserRow, content: string) {
    this.checkReaction(view, issue, content);
    await this.ctx.social.assertNotBlocked(view.repo.owner_id, doer.id);
    return store.addReaction(this.db, {
      type: content,
      issue_id: issue.id,
      comment_id: commentId,
      user_id: doer.id,
      created_unix: nowUnix(),
    });
  }

  async unreact(
    view: RepoView,
    issue: IssueRow,
    commentId: number,
    doer: UserRow,
    content: string,
  ): Promise<void> {
    this.checkReaction(view, issue, content);
    await store.removeReaction(this.db, issue.id, commentId, doer.id, content);
  }

  // Subscriptions

  subscribers(issue: IssueRow, page: Page) {
    return store.subscribers(this.db, issue.id, page.limit, page.offset);
  }

  /** Whether `user` follows the issue: an explicit choice, else whether they take part in it. */
  async isSubscribed(issue: IssueRow, user: UserRow): Promise<boolean> {
    const w = await store.getWatch(this.db, issue.id, user.id);
    if (w) return w.is_watching === 1;
    return (await this.participants(issue)).includes(user.id);
  }

  /**
   * Subscribes (or unsubscribes) `target` to the issue: only oneself, or anyone by a site
   * administrator (403 otherwise). Returns false when nothing changed.
   */
  async setSubscription(issue: IssueRow, doer: UserRow, target: UserRow, watch: boolean): Promise<boolean> {
    if (target.id !== doer.id && !doer.is_admin) {
      throw forbidden(`${doer.name} is not permitted to change subscriptions for ${target.name}`);
    }
    if ((await this.isSubscribed(issue, target)) === watch) return false;
    await store.setWatch(this.db, issue.id, target.id, watch, nowUnix());
    return true;
  }
}

/** The timeline event of a due date change: added, modified or removed (content as Forgejo has it). */
function deadlineEvent(from: number, to: number): [number, Partial<CommentRow>] {
  const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
  if (!from) return [CommentType.addedDeadline, { content: day(to) }];
  if (!to) return [CommentType.removedDeadline, { content: day(from) }];
  return [CommentType.modifiedDeadline, { content: `${day(to)}|${day(from)}` }];
}

/** Event details for a comment insert (never an id). */
function stripIds(extra: Partial<CommentRow>) {
  const { id: _id, ...rest } = extra;
  return rest;
}
