// Queries of the pulls domain: pull_request rows (beside their issue rows), pull_review rows and
// their line comments (pull_review_comment rows).
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import {
  ReviewType,
  type PullAutoMergeTable,
  type PullRequestTable,
  type PullReviewCommentTable,
  type PullReviewTable,
} from './tables.js';
import type { PullRow, ReviewRow, ReviewCommentRow, AutoMergeRow } from './tables.js';
import type { RepoRow } from '../repos/tables.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<PullRequestTable>): Promise<PullRow> {
  return q.insertInto('pull_request').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function update(q: Q, id: number, patch: Updateable<PullRequestTable>): Promise<PullRow> {
  return q
    .updateTable('pull_request')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Updates a pull request that is not merged (a background refresh never rewrites a merged one). */
export async function updateUnmerged(
  q: Q,
  id: number,
  patch: Updateable<PullRequestTable>,
): Promise<PullRow | undefined> {
  return q
    .updateTable('pull_request')
    .set(patch)
    .where('id', '=', id)
    .where('has_merged', '=', 0)
    .returningAll()
    .executeTakeFirst();
}

export function getById(q: Q, id: number): Promise<PullRow | undefined> {
  return q.selectFrom('pull_request').selectAll().where('id', '=', id).executeTakeFirst();
}

export function getByIssueId(q: Q, issueId: number): Promise<PullRow | undefined> {
  return q.selectFrom('pull_request').selectAll().where('issue_id', '=', issueId).executeTakeFirst();
}

export async function getByIssueIds(q: Q, issueIds: number[]): Promise<Map<number, PullRow>> {
  if (issueIds.length === 0) return new Map();
  const rows = await q.selectFrom('pull_request').selectAll().where('issue_id', 'in', issueIds).execute();
  return new Map(rows.map((r) => [r.issue_id, r]));
}

/**
 * The pull request of repository `repoId` merged as commit `oid`, else the newest one whose head
 * is that commit.
 */
export async function findByCommit(q: Q, repoId: number, oid: string): Promise<PullRow | undefined> {
  const merged = await q
    .selectFrom('pull_request')
    .selectAll()
    .where('base_repo_id', '=', repoId)
    .where('has_merged', '=', 1)
    .where('merged_commit_id', '=', oid)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (merged) return merged;
  return q
    .selectFrom('pull_request')
    .selectAll()
    .where('base_repo_id', '=', repoId)
    .where('head_commit_id', '=', oid)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** The open, unmerged pull request from head to base, if any. */
export function findOpen(
  q: Q,
  baseRepoId: number,
  baseBranch: string,
  headRepoId: number,
  headBranch: string,
): Promise<PullRow | undefined> {
  return q
    .selectFrom('pull_request')
    .innerJoin('issue', 'issue.id', 'pull_request.issue_id')
    .selectAll('pull_request')
    .where('pull_request.base_repo_id', '=', baseRepoId)
    .where('pull_request.base_branch', '=', baseBranch)
    .where('pull_request.head_repo_id', '=', headRepoId)
    .where('pull_request.head_branch', '=', headBranch)
    .where('pull_request.has_merged', '=', 0)
    .where('issue.is_closed', '=', 0)
    .executeTakeFirst();
}

/** Open, unmerged pull requests whose base or head is branch `branch` of repository `repoId`. */
export function openTouching(q: Q, repoId: number, branch: string): Promise<PullRow[]> {
  return q
    .selectFrom('pull_request')
    .innerJoin('issue', 'issue.id', 'pull_request.issue_id')
    .selectAll('pull_request')
    .where('pull_request.has_merged', '=', 0)
    .where('issue.is_closed', '=', 0)
    .where((eb) =>
      eb.or([
        eb.and([eb('pull_request.base_repo_id', '=', repoId), eb('pull_request.base_branch', '=', branch)]),
        eb.and([eb('pull_request.head_repo_id', '=', repoId), eb('pull_request.head_branch', '=', branch)]),
      ]),
    )
    .execute();
}

/**
 * A repository of account `ownerId` in the fork network of `base` (its fork or its parent), named
 * `name` when given: where the head branch of a pull request into `base` may live.
 */
export async function relatedRepo(
  q: Q,
  ownerId: number,
  base: Pick<RepoRow, 'id' | 'fork_id'>,
  name: string | undefined,
): Promise<RepoRow | undefined> {
  let query = q
    .selectFrom('repository')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where((eb) => eb.or([eb('fork_id', '=', base.id), eb('id', '=', base.fork_id ?? -1)]));
  if (name) query = query.where('name', '=', name);
  return (await query.executeTakeFirst()) as RepoRow | undefined;
}

/** Open, unmerged pull requests from or to branch `from` of repository `repoId` now use `to`. */
export async function renameBranch(q: Q, repoId: number, from: string, to: string): Promise<void> {
  const open = q.selectFrom('issue').select('issue.id').where('issue.is_closed', '=', 0);
  await q
    .updateTable('pull_request')
    .set({ base_branch: to })
    .where('base_repo_id', '=', repoId)
    .where('base_branch', '=', from)
    .where('has_merged', '=', 0)
    .where('issue_id', 'in', open)
    .execute();
  await q
    .updateTable('pull_request')
    .set({ head_branch: to })
    .where('head_repo_id', '=', repoId)
    .where('head_branch', '=', from)
    .where('has_merged', '=', 0)
    .where('issue_id', 'in', open)
    .execute();
}

// Reviews

/** The pending review requests (issue id and reviewer) of the pull requests `issueIds`. */
export function reviewRequests(
  q: Q,
  issueIds: number[],
): Promise<Array<{ issue_id: number; reviewer_id: number | null }>> {
  return q
    .selectFrom('pull_review')
    .select(['issue_id', 'reviewer_id'])
    .where('issue_id', 'in', issueIds)
    .where('type', '=', ReviewType.request)
    .execute();
}

export async function insertReview(q: Q, row: Insertable<PullReviewTable>): Promise<ReviewRow> {
  return q.insertInto('pull_review').values(row).returningAll().executeTakeFirstOrThrow();
}

export function reviewsOf(q: Q, issueId: number): Promise<ReviewRow[]> {
  return q.selectFrom('pull_review').selectAll().where('issue_id', '=', issueId).orderBy('id').execute();
}

export async function removeReviews(
  q: Q,
  issueId: number,
  reviewerId: number,
  type: number,
): Promise<number> {
  const r = await q
    .deleteFrom('pull_review')
    .where('issue_id', '=', issueId)
    .where('reviewer_id', '=', reviewerId)
    .where('type', '=', type)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function getReview(q: Q, issueId: number, id: number): Promise<ReviewRow | undefined> {
  return q
    .selectFrom('pull_review')
    .selectAll()
    .where('issue_id', '=', issueId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateReview(q: Q, id: number, patch: Updateable<PullReviewTable>): Promise<ReviewRow> {
  return q
    .updateTable('pull_review')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Marks every review of a pull request stale (Forgejo's MarkReviewsAsStale), except those made at
 * `headSha`, which are made current again (MarkReviewsAsNotStale).
 */
export async function markReviewsStale(q: Q, issueId: number, headSha: string): Promise<void> {
  await q
    .updateTable('pull_review')
    .set({ stale: 1 })
    .where('issue_id', '=', issueId)
    .where('commit_id', '!=', headSha)
    .execute();
  await markReviewsCurrent(q, issueId, headSha);
}

/** Makes the reviews of a pull request made at `headSha` current again. */
export async function markReviewsCurrent(q: Q, issueId: number, headSha: string): Promise<void> {
  await q
    .updateTable('pull_review')
    .set({ stale: 0 })
    .where('issue_id', '=', issueId)
    .where('commit_id', '=', headSha)
    .execute();
}

/** Deletes a review and its line comments. */
export async function deleteReview(q: Q, id: number): Promise<void> {
  await q.deleteFrom('pull_review_comment').where('review_id', '=', id).execute();
  await q.deleteFrom('pull_review').where('id', '=', id).execute();
}

// Review comments

export async function insertReviewComments(
  q: Q,
  rows: Insertable<PullReviewCommentTable>[],
): Promise<ReviewCommentRow[]> {
  if (rows.length === 0) return [];
  const out: ReviewCommentRow[] = [];
  // One by one: the ids come back in the order given on every dialect.
  for (const row of rows)
    out.push(await q.insertInto('pull_review_comment').values(row).returningAll().executeTakeFirstOrThrow());
  return out;
}

export function reviewComments(q: Q, reviewId: number): Promise<ReviewCommentRow[]> {
  return q
    .selectFrom('pull_review_comment')
    .selectAll()
    .where('review_id', '=', reviewId)
    .orderBy('id')
    .execute();
}

/** Every line comment of a pull request `viewerId` may see (pending reviews: their author's only). */
export function pullLineComments(
  q: Q,
  issueId: number,
  viewerId: number | null,
): Promise<ReviewCommentRow[]> {
  return q
    .selectFrom('pull_review_comment')
    .innerJoin('pull_review', 'pull_review.id', 'pull_review_comment.review_id')
    .selectAll('pull_review_comment')
    .where('pull_review_comment.issue_id', '=', issueId)
    .where((eb) =>
      viewerId === null
        ? eb('pull_review.type', '!=', ReviewType.pending)
        : eb.or([
            eb('pull_review.type', '!=', ReviewType.pending),
            eb('pull_review.reviewer_id', '=', viewerId),
          ]),
    )
    .orderBy('pull_review_comment.id')
    .execute();
}

export function getReviewComment(q: Q, reviewId: number, id: number): Promise<ReviewCommentRow | undefined> {
  return q
    .selectFrom('pull_review_comment')
    .selectAll()
    .where('review_id', '=', reviewId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function deleteReviewComment(q: Q, id: number): Promise<void> {
  await q.deleteFrom('pull_review_comment').where('id', '=', id).execute();
}

/** The number of line comments of each review. */
export async function countReviewComments(q: Q, reviewIds: number[]): Promise<Map<number, number>> {
  if (reviewIds.length === 0) return new Map();
  const rows = await q
    .selectFrom('pull_review_comment')
    .select(['review_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('review_id', 'in', reviewIds)
    .groupBy('review_id')
    .execute();
  return new Map(rows.map((r) => [r.review_id, Number(r.n)]));
}

// Scheduled merges

export function getAutoMerge(q: Q, pullId: number): Promise<AutoMergeRow | undefined> {
  return q.selectFrom('pull_auto_merge').selectAll().where('pull_id', '=', pullId).executeTakeFirst();
}

/** Schedules a merge; false when one is already scheduled (the unique pull_id refuses a second). */
export async function insertAutoMerge(q: Q, row: Insertable<PullAutoMergeTable>): Promise<boolean> {
  const r = await q
    .insertInto('pull_auto_merge')
    .values(row)
    .onConflict((oc) => oc.column('pull_id').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deleteAutoMerge(q: Q, pullId: number): Promise<boolean> {
  const r = await q.deleteFrom('pull_auto_merge').where('pull_id', '=', pullId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The scheduled merges of the open pull requests of a repository whose head is `sha`. */
export function autoMergesAtHead(q: Q, repoId: number, sha: string): Promise<AutoMergeRow[]> {
  return q
    .selectFrom('pull_auto_merge')
    .innerJoin('pull_request', 'pull_request.id', 'pull_auto_merge.pull_id')
    .selectAll('pull_auto_merge')
    .where('pull_request.base_repo_id', '=', repoId)
    .where('pull_request.head_commit_id', '=', sha)
    .where('pull_request.has_merged', '=', 0)
    .execute();
}

/** Every pull request with a merge scheduled (the queue's start-up and periodic sweep), oldest first. */
export async function scheduledAutoMergeIds(q: Q): Promise<number[]> {
  const rows = await q.selectFrom('pull_auto_merge').select('pull_id').orderBy('created_unix').execute();
  return rows.map((r) => r.pull_id);
}
