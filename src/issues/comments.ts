// Comments on issues and pull requests, and reactions to them and to the issues: the plain comments
// of an issue or a repository, the whole timeline, writing, editing and deleting a comment (with
// what other domains keep for it), adding and removing reactions. Locked issues take comments and
// reactions from writers only; users blocked by the repository's owner add neither.
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { forbidden, invalidField } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { Page } from '../http/pagination.js';
import type { RepoRow } from '../repos/tables.js';
import type { SocialService } from '../social/service.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { CommentRow, IssueRow, ReactionRow } from './tables.js';
import { CommentType } from './tables.js';
import { checkText, parseTime } from './input.js';
import {
  assertWritableRepo,
  canWriteIssues,
  eventOf,
  runAfterCommit,
  type IssueService,
  type RepoView,
} from './service.js';

export interface CommentListInput {
  since?: string | undefined;
  before?: string | undefined;
}

/** Forgejo's default allowed reactions. */
export const REACTIONS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'] as const;

export interface CommentServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  /** Blocked users neither comment nor react. */
  social: Pick<SocialService, 'assertNotBlocked'>;
  /** Mentions in a comment, and what other domains keep per comment (its deletion hooks). */
  issues: Pick<IssueService, 'resolveMentions' | 'beforeDeleteComment'>;
}

export class CommentService {
  private readonly db: Db;

  constructor(private readonly deps: CommentServiceDeps) {
    this.db = deps.db;
  }

  /** The updated-since and updated-before times of a comment list. */
  private static commentTimes(input: CommentListInput) {
    return {
      since: input.since === undefined ? undefined : parseTime(input.since, 'since'),
      before: input.before === undefined ? undefined : parseTime(input.before, 'before'),
    };
  }

  /** The plain comments of an issue, oldest first (all of them unless a page is given). */
  listComments(issue: IssueRow, input: CommentListInput, page?: Page) {
    return store.issueComments(this.db, issue.id, CommentService.commentTimes(input), page);
  }

  /** Every timeline event of an issue (comments included), oldest first. */
  timeline(issue: IssueRow, input: CommentListInput, page: Page) {
    return store.issueTimeline(this.db, issue.id, CommentService.commentTimes(input), page);
  }

  /** One page of the plain comments of a repository, oldest first. */
  listRepoComments(repo: RepoRow, input: CommentListInput, page: Page) {
    return store.repoComments(this.db, repo.id, CommentService.commentTimes(input), page.limit, page.offset);
  }

  /** Comments on a locked issue come from writers only (403). */
  async createComment(view: RepoView, issue: IssueRow, doer: UserRow, body: string): Promise<CommentRow> {
    assertWritableRepo(view.repo);
    await this.deps.social.assertNotBlocked(view.repo.owner_id, doer.id);
    if (issue.is_locked && !canWriteIssues(view.access, issue.is_pull) && !doer.is_admin) {
      throw forbidden('this issue is locked: only writers may comment');
    }
    if (!checkText(body, 'body').trim()) throw invalidField('body', 'Required');
    const mentions = await this.deps.issues.resolveMentions(view.repo, body);
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
    await this.deps.events.emit('comment.created', {
      ...eventOf(issue, doer),
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
    assertWritableRepo(view.repo);
    if (!checkText(body, 'body').trim()) throw invalidField('body', 'Required');
    if (body === comment.content) return comment;
    const mentions = await this.deps.issues.resolveMentions(view.repo, body);
    const updated = await transaction(this.db, async (tx) => {
      const c = await store.updateComment(tx, comment.id, { content: body, updated_unix: nowUnix() });
      await store.addMentions(tx, issue.id, mentions);
      return c;
    });
    await this.deps.events.emit('comment.edited', {
      ...eventOf(issue, doer),
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
    assertWritableRepo(view.repo);
    const after = await transaction(this.db, async (tx) => {
      const work = await this.deps.issues.beforeDeleteComment(tx, comment);
      await store.removeCommentReactions(tx, issue.id, comment.id);
      await store.removeComment(tx, comment.id);
      if (comment.type === CommentType.comment) await store.adjustCommentCount(tx, issue.id, -1);
      return work;
    });
    await runAfterCommit(after, this.deps.log);
    await this.deps.events.emit('comment.deleted', { ...eventOf(issue, doer), commentId: comment.id });
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
    assertWritableRepo(view.repo);
  }

  /** Adds a reaction to the issue (commentId 0) or a comment; `created` is false when it existed. */
  async react(view: RepoView, issue: IssueRow, commentId: number, doer: UserRow, content: string) {
    this.checkReaction(view, issue, content);
    await this.deps.social.assertNotBlocked(view.repo.owner_id, doer.id);
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
}
