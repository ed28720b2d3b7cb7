// What writers do to an issue beside editing it: its labels (under the exclusive rule), its due
// date, locking the conversation and pinning it among the repository's first issues. Each change
// writes its timeline event in the same transaction; label changes and due dates go out on the bus.
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { badRequest, invalidField, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { LabelRef, LabelService } from '../labels/service.js';
import type { LabelRow } from '../labels/tables.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { IssueRow } from './tables.js';
import { CommentType } from './tables.js';
import { assertWritableRepo, deadlineEvent, eventOf, requireWriter, type RepoView } from './service.js';

/** Forgejo's default lock reasons ('' is allowed too). */
export const LOCK_REASONS = ['Too heated', 'Off-topic', 'Resolved', 'Spam'] as const;
/** Forgejo's default maximum of pinned issues (and of pinned pull requests) per repository. */
export const MAX_PINNED = 3;

export interface IssueTriageServiceDeps {
  db: Db;
  events: EventBus;
  labels: Pick<
    LabelService,
    'resolve' | 'checkExclusive' | 'planAdd' | 'planReplace' | 'ofIssue' | 'addToIssue' | 'removeFromIssue'
  >;
}

export class IssueTriageService {
  private readonly db: Db;

  constructor(private readonly deps: IssueTriageServiceDeps) {
    this.db = deps.db;
  }

  // Labels

  private async changeLabels(
    view: RepoView,
    issue: IssueRow,
    doer: UserRow,
    plan: (current: LabelRow[]) => { add: LabelRow[]; remove: LabelRow[] },
  ): Promise<LabelRow[]> {
    requireWriter(view, issue, 'change its labels');
    assertWritableRepo(view.repo);
    const now = nowUnix();
    let change: { add: LabelRow[]; remove: LabelRow[] } = { add: [], remove: [] };
    const labels = await transaction(this.db, async (tx) => {
      const row = (await store.lockIssue(tx, issue.id))!;
      change = plan(await this.deps.labels.ofIssue(issue.id, tx));
      await this.deps.labels.removeFromIssue(
        tx,
        issue.id,
        change.remove.map((l) => l.id),
      );
      await this.deps.labels.addToIssue(
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
      return this.deps.labels.ofIssue(issue.id, tx);
    });
    if (change.add.length || change.remove.length) {
      await this.deps.events.emit('issue.labelled', {
        ...eventOf(issue, doer),
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
    requireWriter(view, issue, 'change its labels');
    const adding = await this.deps.labels.resolve(view.repo, refs);
    this.deps.labels.checkExclusive(adding);
    return this.changeLabels(view, issue, doer, (current) => this.deps.labels.planAdd(current, adding));
  }

  /** Replaces the issue's labels; 422 as for addLabels. */
  async replaceLabels(view: RepoView, issue: IssueRow, doer: UserRow, refs: LabelRef[]): Promise<LabelRow[]> {
    requireWriter(view, issue, 'change its labels');
    const next = await this.deps.labels.resolve(view.repo, refs);
    this.deps.labels.checkExclusive(next);
    return this.changeLabels(view, issue, doer, (current) => this.deps.labels.planReplace(current, next));
  }

  /** Removes one label (422 when the repository has no such label; nothing when the issue lacks it). */
  async removeLabel(view: RepoView, issue: IssueRow, doer: UserRow, labelId: number): Promise<void> {
    requireWriter(view, issue, 'change its labels');
    const [label] = await this.deps.labels.resolve(view.repo, [labelId]);
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
    requireWriter(view, issue, 'set its due date');
    assertWritableRepo(view.repo);
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
    await this.deps.events.emit('issue.edited', {
      ...eventOf(issue, doer),
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
    requireWriter(view, issue, lock ? 'lock it' : 'unlock it');
    assertWritableRepo(view.repo);
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
    requireWriter(view, issue, 'pin it');
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
    requireWriter(view, issue, 'unpin it');
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
    requireWriter(view, issue, 'move its pin');
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
}
