// Reviewing pull requests: reviews (pending until submitted; approve, request changes, comment),
// their line comments checked against the pull request's diff, dismissals, review requests, and
// staleness: a review of commits the pull request has moved past is stale, and with the base
// branch's dismiss_stale_approvals a push dismisses the approvals (as Forgejo does).
import type { Insertable } from 'kysely';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { forbidden, invalidField, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import * as issueStore from '../issues/store.js';
import type { IssueRow } from '../issues/tables.js';
import type { RepoView } from '../issues/service.js';
import { canWriteIssues } from '../issues/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { ProtectionService } from '../protection/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { pullEvent } from './events.js';
import * as pg from './git.js';
import * as store from './store.js';
import type { Pull, PullRow, ReviewCommentRow, ReviewRow } from './tables.js';
import { PullCommentType, ReviewType, type PullReviewCommentTable } from './tables.js';

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
/** The timeline's text for an approval dismissed by a push (Forgejo's words). */
const STALE_DISMISSAL =
  'New commits pushed, approval review dismissed automatically according to repository settings';

export interface PullReviewServiceDeps {
  db: Db;
  events: EventBus;
  repos: Pick<RepoService, 'pathOf' | 'access'>;
  users: Pick<UserService, 'getByName'>;
  /** The base branch's dismiss_stale_approvals. */
  protection: Pick<ProtectionService, 'ruleFor'>;
}

export class PullReviewService {
  private readonly db: Db;

  constructor(private readonly deps: PullReviewServiceDeps) {
    this.db = deps.db;
  }

  private dirOf(pr: PullRow): string {
    return this.deps.repos.pathOf({ id: pr.base_repo_id });
  }

  reviews(pull: Pull): Promise<ReviewRow[]> {
    return store.reviewsOf(this.db, pull.issue.id);
  }

  /** The latest approval or change request of each reviewer (what branch protection counts). */
  async latestReviews(issueId: number): Promise<ReviewRow[]> {
    const rows = await store.reviewsOf(this.db, issueId);
    const latest = new Map<number, ReviewRow>();
    for (const r of rows) {
      if (r.reviewer_id === null || r.type === ReviewType.request || r.type === ReviewType.comment) continue;
      latest.set(r.reviewer_id, r);
    }
    return [...latest.values()];
  }

  /**
   * The head of the pull request moved from `oldHead` to `pr.head_commit_id`: reviews of what it
   * no longer proposes are stale; with the base branch's dismiss_stale_approvals, its approvals
   * are dismissed (each with a timeline entry), as Forgejo does. A move that changed nothing the
   * pull request proposes (a rebase) makes the reviews of the new head current again.
   */
  async headMoved(issue: IssueRow, pr: PullRow, oldHead: string, pusherId?: number): Promise<void> {
    const headSha = pr.head_commit_id;
    const changed = await pg.contentChanged(this.dirOf(pr), oldHead, headSha, pr.merge_base);
    const rule = changed
      ? await this.deps.protection.ruleFor({ id: pr.base_repo_id }, pr.base_branch)
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
              type: PullCommentType.dismissReview,
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
    const dir = this.dirOf(pull.pr);
    const files = await pg.pullFiles(dir, pull.pr);
    const from = pg.diffBase(pull.pr);
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
    const stale = await pg.contentChanged(
      this.dirOf(pull.pr),
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
    await this.deps.events.emit('pull.reviewed', {
      ...pullEvent(pull, doer),
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
          type: PullCommentType.dismissReview,
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

  // Review requests

  async requestReviewers(view: RepoView, pull: Pull, doer: UserRow, names: string[], add: boolean) {
    if (!canWriteIssues(view.access, true) && pull.issue.poster_id !== doer.id)
      throw forbidden('only the poster and writers may request reviews');
    const users: UserRow[] = [];
    for (const name of names) {
      const u = await this.deps.users.getByName(name);
      if (!u || u.type !== UserType.Individual)
        throw invalidField('reviewers', `user does not exist [name: ${name}]`);
      const access = await this.deps.repos.access(view.repo, { id: u.id, isAdmin: u.is_admin === 1 });
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
      await this.deps.events.emit('pull.review_requested', {
        ...pullEvent(pull, doer),
        reviewerId,
        requested: add,
      });
    return out;
  }

  /** The users asked to review and not having reviewed since. */
  async requestedReviewerIds(issueIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (issueIds.length === 0) return out;
    for (const r of await store.reviewRequests(this.db, issueIds)) {
      if (r.reviewer_id === null) continue;
      out.set(r.issue_id, [...(out.get(r.issue_id) ?? []), r.reviewer_id]);
    }
    return out;
  }
}
