// Issues (and pull requests, which share their table and numbers): finding them, creation with a
// number from the repository's counter, editing (title, body, ref, assignees, milestone, due date,
// state), closing and reopening (by hand or by a commit), deletion, and who follows an issue
// (participants, mentions, subscriptions). Every multi-row change is one transaction; events go out
// on the bus once it has committed. Lists and the search are in lists.ts, labels, due dates, locks
// and pins in triage.ts, comments and reactions in comments.ts.
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { forbidden, invalidField, notFound, preconditionFailed } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { AccessMode } from '../orgs/tables.js';
import type { AfterCommit } from '../users/owned.js';
import type { EventBus, IssueChanges } from '../events/bus.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { SocialService } from '../social/service.js';
import * as store from './store.js';
import { openDependencyCount } from './tracking-store.js';
import type { CommentRow, IssueRow } from './tables.js';
import { CommentType } from './tables.js';
import { checkText, isName, mentionedNames } from './input.js';

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

const MAX_TITLE = 255;

/** The unit an issue or pull request belongs to. */
export const unitOf = (isPull: boolean | number) => (isPull ? 'repo.pulls' : 'repo.issues');

/** Whether `access` allows writing issues (or pull requests). */
export function canWriteIssues(access: RepoAccess, isPull: boolean | number = false): boolean {
  return (access.units.get(unitOf(isPull)) ?? 0) >= AccessMode.write;
}

/** 403 for changes to an archived repository. */
export function assertWritableRepo(repo: RepoRow): void {
  if (repo.is_archived) throw forbidden(`repository is archived [id: ${repo.id}]`);
}

/** 403 unless the caller writes the issues (or pull requests) of the repository. */
export function requireWriter(view: RepoView, issue: IssueRow | null, what: string): void {
  if (!canWriteIssues(view.access, issue?.is_pull ?? 0)) {
    throw forbidden(`you need write access to the issues of this repository to ${what}`);
  }
}

/** The common fields of the issue events on the bus. */
export function eventOf(issue: IssueRow, doer: { id: number }) {
  return {
    repoId: issue.repo_id,
    issueId: issue.id,
    index: issue.index,
    isPull: issue.is_pull === 1,
    doerId: doer.id,
  };
}

/** The timeline event of a due date change: added, modified or removed (content as Forgejo has it). */
export function deadlineEvent(from: number, to: number): [number, Partial<CommentRow>] {
  const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
  if (!from) return [CommentType.addedDeadline, { content: day(to) }];
  if (!to) return [CommentType.removedDeadline, { content: day(from) }];
  return [CommentType.modifiedDeadline, { content: `${day(to)}|${day(from)}` }];
}

/** Runs work that follows a committed deletion (files); a failure is logged, not thrown. */
export async function runAfterCommit(work: AfterCommit[], log: Logger): Promise<void> {
  for (const w of work) {
    try {
      await w();
    } catch (err) {
      log.error({ err }, 'cleanup after an issue or comment deletion failed');
    }
  }
}

/** Stops the closer's stopwatch on an issue being closed (the time tracking of times.ts). */
export interface StopwatchOnClose {
  finishOnClose(tx: Tx, issueId: number, userId: number): Promise<void>;
}

export interface IssueServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  users: Pick<UserService, 'getByName'>;
  repos: Pick<RepoService, 'access'>;
  /** Blocked users open no issues. */
  social: Pick<SocialService, 'assertNotBlocked'>;
  labels: Pick<LabelService, 'resolve' | 'checkExclusive' | 'addToIssue' | 'setIssueClosed'>;
  milestones: Pick<MilestoneService, 'requireForIssue' | 'recount'>;
  times: StopwatchOnClose;
}

export class IssueService {
  private readonly hooks: IssueHooks[] = [];
  private assets: AssetsSource | undefined;
  private readonly db: Db;

  constructor(private readonly deps: IssueServiceDeps) {
    this.db = deps.db;
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

  /** Runs the hooks of a comment's deletion inside `tx`; returns the work for after commit. */
  async beforeDeleteComment(tx: Tx, comment: CommentRow): Promise<AfterCommit[]> {
    const work: AfterCommit[] = [];
    for (const h of this.hooks) {
      const w = await h.beforeDeleteComment?.(tx, comment);
      if (w) work.push(w);
    }
    return work;
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
    return isName(name) ? this.deps.users.getByName(name) : undefined;
  }

  // Checks

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
      const access = await this.deps.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
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

  /** Users mentioned in `text` who exist, are active and can read the repository's issues (comments too). */
  async resolveMentions(repo: RepoRow, text: string): Promise<number[]> {
    const out: number[] = [];
    for (const name of mentionedNames(text)) {
      const u = await this.findUser(name);
      if (!u || u.type !== UserType.Individual || !u.is_active) continue;
      const access = await this.deps.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if ((access.units.get('repo.issues') ?? 0) >= AccessMode.read) out.push(u.id);
    }
    return out;
  }

  // Creation and editing

  async create(view: RepoView, doer: UserRow, input: CreateIssueInput): Promise<IssueRow> {
    const { repo } = view;
    assertWritableRepo(repo);
    await this.deps.social.assertNotBlocked(repo.owner_id, doer.id);
    if (!repo.has_issues) throw notFound('the issues of this repository are turned off');
    const title = IssueService.checkTitle(input.title);
    // As in Forgejo: labels, milestone, assignees and due date are set by writers only.
    const writer = canWriteIssues(view.access);
    const assignees = writer ? await this.resolveAssignees(repo, input.assignee, input.assignees) : [];
    const labels = writer && input.labels?.length ? await this.deps.labels.resolve(repo, input.labels) : [];
    this.deps.labels.checkExclusive(labels);
    const milestone =
      writer && input.milestone
        ? await this.deps.milestones.requireForIssue(repo, input.milestone)
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
      await this.deps.labels.addToIssue(
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
      await this.deps.milestones.recount(tx, [row.milestone_id]);
      return row;
    });
    const ev = eventOf(issue, doer);
    await this.deps.events.emit('issue.opened', { ...ev, mentionedIds: mentions });
    if (assignees.length)
      await this.deps.events.emit('issue.assigned', {
        ...ev,
        added: assignees.map((a) => a.id),
        removed: [],
      });
    if (input.closed) await this.deps.events.emit('issue.closed', { ...ev, commitId: '' });
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
    assertWritableRepo(repo);
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
          ? (await this.deps.milestones.requireForIssue(repo, input.milestone)).id
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
      await this.deps.milestones.recount(tx, [milestoneBefore, row.milestone_id]);
      return (await store.getById(tx, row.id))!;
    });

    const ev = eventOf(updated, doer);
    if (Object.keys(changes).length) await this.deps.events.emit('issue.edited', { ...ev, changes });
    if (milestoned) {
      await this.deps.events.emit('issue.milestoned', {
        ...ev,
        milestoneId: milestoned.to,
        oldMilestoneId: milestoned.from,
      });
    }
    if (assigned.added.length || assigned.removed.length)
      await this.deps.events.emit('issue.assigned', { ...ev, ...assigned });
    if (stateChanged)
      await this.deps.events.emit(updated.is_closed ? 'issue.closed' : 'issue.reopened', {
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
    await this.deps.labels.setIssueClosed(tx, issue.id, close);
    // As in Forgejo, the closer's stopwatch on the issue stops (its time is tracked).
    if (close) await this.deps.times.finishOnClose(tx, issue.id, doer.id);
    await store.insertComment(tx, {
      type: close ? CommentType.close : CommentType.reopen,
      repo_id: issue.repo_id,
      issue_id: issue.id,
      poster_id: doer.id,
      commit_sha: commitSha,
      created_unix: now,
      updated_unix: now,
    });
    await this.deps.milestones.recount(tx, [row.milestone_id]);
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
    const access = await this.deps.repos.access(repo, { id: doer.id, isAdmin: doer.is_admin === 1 });
    if (!canWriteIssues(access, issue.is_pull))
      throw forbidden(`${doer.name} cannot close issues of this repository`);
    const row = await transaction(this.db, async (tx) => {
      const current = (await store.lockIssue(tx, issue.id))!;
      return (current.is_closed === 1) === close
        ? undefined
        : this.setState(tx, current, doer, close, commitSha);
    });
    if (!row) return (await store.getById(this.db, issue.id))!;
    await this.deps.events.emit(close ? 'issue.closed' : 'issue.reopened', {
      ...eventOf(row, doer),
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
      await this.deps.milestones.recount(tx, [issue.milestone_id]);
      return work;
    });
    await runAfterCommit(after, this.deps.log);
    await this.deps.events.emit('issue.deleted', eventOf(issue, doer));
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

/** Event details for a comment insert (never an id). */
function stripIds(extra: Partial<CommentRow>) {
  const { id: _id, ...rest } = extra;
  return rest;
}
