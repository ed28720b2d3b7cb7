// Tables of the issues domain (see db/migrations/0007_issues.ts). Pull requests will share the
// `issue` table (is_pull = 1) and with it the per-repository numbers of issue_index.
import type { Generated, Selectable } from 'kysely';

export interface IssueTable {
  id: Generated<number>;
  repo_id: number;
  /** The issue's number in its repository (shared with pull requests): unique per repository. */
  index: number;
  /** null once the poster's account is deleted (shown as the Ghost user). */
  poster_id: number | null;
  original_author: Generated<string>;
  original_author_id: Generated<number>;
  title: string;
  content: Generated<string>;
  milestone_id: number | null;
  is_closed: Generated<number>;
  is_pull: Generated<number>;
  is_locked: Generated<number>;
  ref: Generated<string>;
  /** Plain comments (type 0), kept in step with the comment table. */
  num_comments: Generated<number>;
  /** Position among the pinned issues (or pull requests) of the repository; 0 when not pinned. */
  pin_order: Generated<number>;
  /** 0 when there is no due date. */
  deadline_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
  /** 0 while open. */
  closed_unix: Generated<number>;
  /** Who closed it last; null while open (or once that account is deleted). */
  closed_by_id: number | null;
  /** The commit whose message closed it; '' when closed by hand (the webhook's commit_id). */
  closed_by_commit: Generated<string>;
}

export interface IssueIndexTable {
  id: Generated<number>;
  repo_id: number;
  max_index: Generated<number>;
}

export interface IssueAssigneesTable {
  id: Generated<number>;
  issue_id: number;
  assignee_id: number;
}

export interface IssueMentionTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number;
}

export interface IssueWatchTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number;
  /** 1: subscribed; 0: explicitly unsubscribed (a participant who opted out). */
  is_watching: number;
  created_unix: number;
  updated_unix: number;
}

/** Forgejo's comment types: 0 is a plain comment, the others are timeline events. */
export const CommentType = {
  comment: 0,
  reopen: 1,
  close: 2,
  issueRef: 3,
  commitRef: 4,
  commentRef: 5,
  pullRef: 6,
  label: 7,
  milestone: 8,
  assignees: 9,
  changeTitle: 10,
  deleteBranch: 11,
  startTracking: 12,
  stopTracking: 13,
  addTimeManual: 14,
  cancelTracking: 15,
  addedDeadline: 16,
  modifiedDeadline: 17,
  removedDeadline: 18,
  addDependency: 19,
  removeDependency: 20,
  lock: 23,
  unlock: 24,
  deleteTimeManual: 26,
  changeIssueRef: 33,
  pullScheduledMerge: 34,
  pullCancelScheduledMerge: 35,
  pin: 36,
  unpin: 37,
} as const;

/** The `type` strings of Forgejo's timeline, by comment type number. */
export const COMMENT_TYPE_NAMES = [
  'comment',
  'reopen',
  'close',
  'issue_ref',
  'commit_ref',
  'comment_ref',
  'pull_ref',
  'label',
  'milestone',
  'assignees',
  'change_title',
  'delete_branch',
  'start_tracking',
  'stop_tracking',
  'add_time_manual',
  'cancel_tracking',
  'added_deadline',
  'modified_deadline',
  'removed_deadline',
  'add_dependency',
  'remove_dependency',
  'code',
  'review',
  'lock',
  'unlock',
  'change_target_branch',
  'delete_time_manual',
  'review_request',
  'merge_pull',
  'pull_push',
  'project',
  'project_board',
  'dismiss_review',
  'change_issue_ref',
  'pull_scheduled_merge',
  'pull_cancel_scheduled_merge',
  'pin',
  'unpin',
] as const;

export interface CommentTable {
  id: Generated<number>;
  type: Generated<number>;
  repo_id: number;
  issue_id: number;
  poster_id: number | null;
  original_author: Generated<string>;
  original_author_id: Generated<number>;
  /** The comment's text; for events: '1' when a label was added, the lock reason, the deadlines. */
  content: Generated<string>;
  label_id: Generated<number | null>;
  old_milestone_id: Generated<number>;
  milestone_id: Generated<number>;
  assignee_id: Generated<number | null>;
  removed_assignee: Generated<number>;
  old_title: Generated<string>;
  new_title: Generated<string>;
  old_ref: Generated<string>;
  new_ref: Generated<string>;
  commit_sha: Generated<string>;
  /** add_dependency / remove_dependency: the other issue of the dependency. */
  dependent_issue_id: Generated<number | null>;
  /** stop_tracking / add_time_manual: the tracked time recorded. */
  time_id: Generated<number | null>;
  created_unix: number;
  updated_unix: number;
}

export interface ReactionTable {
  id: Generated<number>;
  /** The reaction: +1, -1, laugh, hooray, confused, heart, rocket or eyes. */
  type: string;
  issue_id: number;
  /** 0 for a reaction to the issue itself. */
  comment_id: Generated<number>;
  user_id: number;
  original_author: Generated<string>;
  original_author_id: Generated<number>;
  created_unix: number;
}

/** issue_id depends on dependency_id (dependency_id blocks issue_id). */
export interface IssueDependencyTable {
  id: Generated<number>;
  issue_id: number;
  dependency_id: number;
  created_unix: number;
}

/** Time spent on an issue; a deleted time stays as a row with `deleted` 1. */
export interface TrackedTimeTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number;
  created_unix: number;
  /** Seconds. */
  time: number;
  deleted: Generated<number>;
}

/** A user's running clock on an issue (one per user at a time, as Forgejo keeps it). */
export interface StopwatchTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number;
  created_unix: number;
}

export interface IssueTables {
  issue: IssueTable;
  issue_index: IssueIndexTable;
  issue_assignees: IssueAssigneesTable;
  issue_mention: IssueMentionTable;
  issue_watch: IssueWatchTable;
  comment: CommentTable;
  reaction: ReactionTable;
  issue_dependency: IssueDependencyTable;
  tracked_time: TrackedTimeTable;
  stopwatch: StopwatchTable;
}

export type IssueRow = Selectable<IssueTable>;
export type CommentRow = Selectable<CommentTable>;
export type ReactionRow = Selectable<ReactionTable>;
export type WatchRow = Selectable<IssueWatchTable>;

export type TrackedTimeRow = Selectable<TrackedTimeTable>;
export type StopwatchRow = Selectable<StopwatchTable>;

/** The columns a plain comment shows (lists select only these). */
export const PLAIN_COMMENT_COLUMNS = [
  'id',
  'type',
  'repo_id',
  'issue_id',
  'poster_id',
  'original_author',
  'original_author_id',
  'content',
  'created_unix',
  'updated_unix',
] as const;
export type PlainCommentRow = Pick<CommentRow, (typeof PLAIN_COMMENT_COLUMNS)[number]>;

/** Forgejo's sort values for issue lists. */
export const ISSUE_SORTS = [
  'relevance',
  'latest',
  'oldest',
  'recentupdate',
  'leastupdate',
  'mostcomment',
  'leastcomment',
  'nearduedate',
  'farduedate',
] as const;
export type IssueSort = (typeof ISSUE_SORTS)[number] | 'priorityrepo';
