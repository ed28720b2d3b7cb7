// Tables of the pulls domain (see db/migrations/0014_pulls.ts). A pull request is an issue row
// (is_pull = 1, sharing the repository's numbers) plus one pull_request row; reviews and review
// requests are pull_review rows, their line comments pull_review_comment rows.
import type { Generated, Selectable } from 'kysely';
import type { IssueRow } from '../issues/tables.js';

/** Forgejo's PullRequestStatus values. */
export const PullStatus = {
  conflict: 0,
  checking: 1,
  mergeable: 2,
  manuallyMerged: 3,
  error: 4,
  empty: 5,
  ancestorOf: 6,
} as const;

export interface PullRequestTable {
  id: Generated<number>;
  /** The issue row of the pull request (is_pull = 1). */
  issue_id: number;
  /** The issue's number, kept here for refs/pull/{index}/head. */
  index: number;
  base_repo_id: number;
  /** null once the head repository (a fork) is deleted. */
  head_repo_id: number | null;
  base_branch: string;
  head_branch: string;
  merge_base: Generated<string>;
  /** The head commit as last seen (also refs/pull/{index}/head in the base repository). */
  head_commit_id: Generated<string>;
  status: Generated<number>;
  /** JSON array of the files in conflict, when status is conflict. */
  conflicted_files: Generated<string>;
  has_merged: Generated<number>;
  merged_commit_id: Generated<string>;
  merger_id: number | null;
  /** 0 until merged. */
  merged_unix: Generated<number>;
  allow_maintainer_edit: Generated<number>;
}

/** The timeline entries (comment types) only pull requests have, by Forgejo's numbers. */
export const PullCommentType = {
  changeTargetBranch: 25,
  mergePull: 28,
  dismissReview: 32,
} as const;

/** Forgejo's ReviewType values. */
export const ReviewType = {
  pending: 0,
  approve: 1,
  comment: 2,
  reject: 3,
  request: 4,
} as const;

export interface PullReviewTable {
  id: Generated<number>;
  issue_id: number;
  /** null once the reviewer's account is deleted. */
  reviewer_id: number | null;
  type: number;
  content: Generated<string>;
  commit_id: Generated<string>;
  official: Generated<number>;
  stale: Generated<number>;
  dismissed: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

/** A line comment of a review (db/migrations/0026_review_comments.ts). */
export interface PullReviewCommentTable {
  id: Generated<number>;
  review_id: number;
  /** The pull request's issue row. */
  issue_id: number;
  /** null once the poster's account is deleted. */
  poster_id: number | null;
  tree_path: string;
  /** As Forgejo stores it: positive, a line of the new side; negative, a line of the old side. */
  line: number;
  commit_id: Generated<string>;
  original_commit_id: Generated<string>;
  /** The hunk of the file's diff from its header through the commented line. */
  diff_hunk: Generated<string>;
  content: Generated<string>;
  created_unix: number;
  updated_unix: number;
}

/** A scheduled merge (db/migrations/0034_auto_merge.ts): one per pull request at most. */
export interface PullAutoMergeTable {
  id: Generated<number>;
  pull_id: number;
  doer_id: number;
  merge_style: string;
  title: Generated<string>;
  message: Generated<string>;
  delete_branch: Generated<number>;
  created_unix: number;
}

export interface PullTables {
  pull_request: PullRequestTable;
  pull_review: PullReviewTable;
  pull_review_comment: PullReviewCommentTable;
  pull_auto_merge: PullAutoMergeTable;
}

export type PullRow = Selectable<PullRequestTable>;
export type ReviewRow = Selectable<PullReviewTable>;
export type ReviewCommentRow = Selectable<PullReviewCommentTable>;
export type AutoMergeRow = Selectable<PullAutoMergeTable>;

/** A pull request: its issue row and its pull_request row. */
export interface Pull {
  issue: IssueRow;
  pr: PullRow;
}
