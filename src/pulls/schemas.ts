// Forgejo's PullRequest, PRBranchInfo, ChangedFile, PullReview, PullReviewComment and the option
// objects of the pull request API, as TypeBox schemas.
import { Type, type Static } from 'typebox';
import { Nullable } from '../issues/input.js';
import { User } from '../users/schemas.js';
import { Label } from '../labels/schemas.js';
import { Milestone } from '../milestones/schemas.js';
import { Repository } from '../repos/schemas.js';
import { MERGE_STYLES } from './merging.js';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Nullable(Time);

export const PRBranchInfo = Type.Object(
  {
    label: Type.String(),
    ref: Type.String(),
    sha: Type.String(),
    repo_id: Type.Integer(),
    repo: Nullable(Repository),
  },
  { title: 'PRBranchInfo' },
);

export const PullRequest = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    number: Type.Integer(),
    user: User,
    title: Type.String(),
    body: Type.String(),
    labels: Type.Array(Label),
    milestone: Nullable(Milestone),
    assignee: Nullable(User),
    assignees: Nullable(Type.Array(User)),
    requested_reviewers: Type.Array(User),
    requested_reviewers_teams: Type.Array(Type.Unknown()),
    state: Type.String(),
    draft: Type.Boolean(),
    is_locked: Type.Boolean(),
    comments: Type.Integer(),
    review_comments: Type.Integer(),
    additions: Type.Integer(),
    deletions: Type.Integer(),
    changed_files: Type.Integer(),
    html_url: Type.String(),
    diff_url: Type.String(),
    patch_url: Type.String(),
    mergeable: Type.Boolean(),
    merged: Type.Boolean(),
    merged_at: NullableTime,
    merge_commit_sha: Nullable(Type.String()),
    merged_by: Nullable(User),
    allow_maintainer_edit: Type.Boolean(),
    base: PRBranchInfo,
    head: PRBranchInfo,
    merge_base: Type.String(),
    due_date: NullableTime,
    created_at: Time,
    updated_at: Time,
    closed_at: NullableTime,
    pin_order: Type.Integer(),
    flow: Type.Integer(),
  },
  { title: 'PullRequest', description: 'PullRequest represents a pull request' },
);
export type PullRequestJson = Static<typeof PullRequest>;

export const CreatePullRequestOption = Type.Object(
  {
    head: Type.String(),
    base: Type.String(),
    title: Type.String({ maxLength: 255 }),
    body: Type.Optional(Type.String()),
    assignee: Type.Optional(Type.String()),
    assignees: Type.Optional(Type.Array(Type.String())),
    labels: Type.Optional(Type.Array(Type.Integer())),
    milestone: Type.Optional(Type.Integer()),
    due_date: Type.Optional(Time),
  },
  { title: 'CreatePullRequestOption' },
);

export const EditPullRequestOption = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 255 })),
    body: Type.Optional(Type.String()),
    base: Type.Optional(Type.String()),
    assignee: Type.Optional(Type.String()),
    assignees: Type.Optional(
      Type.Array(Type.String(), { description: 'replaces the assignees; [] clears them' }),
    ),
    milestone: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    labels: Type.Optional(Type.Array(Type.Integer())),
    state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
    due_date: Type.Optional(Type.Union([Time, Type.Null()])),
    unset_due_date: Type.Optional(Type.Boolean()),
    allow_maintainer_edit: Type.Optional(Type.Boolean()),
  },
  { title: 'EditPullRequestOption' },
);

export const UpdatePullQuery = Type.Object({
  style: Type.Optional(
    Type.Union([Type.Literal('merge'), Type.Literal('rebase')], {
      description: 'how to update pull request',
    }),
  ),
});

export const MergePullRequestOption = Type.Object(
  {
    Do: Type.Union(
      MERGE_STYLES.map((s) => Type.Literal(s)),
      { description: MERGE_STYLES.join(', ') },
    ),
    MergeTitleField: Type.Optional(Type.String()),
    MergeMessageField: Type.Optional(Type.String()),
    MergeCommitID: Type.Optional(Type.String()),
    delete_branch_after_merge: Type.Optional(Type.Boolean()),
    force_merge: Type.Optional(Type.Boolean()),
    head_commit_id: Type.Optional(Type.String()),
    merge_when_checks_succeed: Type.Optional(Type.Boolean()),
  },
  { title: 'MergePullRequestOption' },
);

export const PullListQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')])),
  sort: Type.Optional(
    Type.Union(
      ['oldest', 'recentupdate', 'leastupdate', 'mostcomment', 'leastcomment', 'priority'].map((s) =>
        Type.Literal(s),
      ),
    ),
  ),
  milestone: Type.Optional(Type.Integer()),
  labels: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Integer()])),
  poster: Type.Optional(Type.String()),
  page: Type.Optional(Type.Integer()),
  limit: Type.Optional(Type.Integer()),
});

export const ChangedFile = Type.Object(
  {
    filename: Type.String(),
    previous_filename: Type.Optional(Type.String()),
    status: Type.String(),
    additions: Type.Integer(),
    deletions: Type.Integer(),
    changes: Type.Integer(),
    html_url: Type.String(),
    contents_url: Type.String(),
    raw_url: Type.String(),
  },
  { title: 'ChangedFile' },
);

export const PullReview = Type.Object(
  {
    id: Type.Integer(),
    user: Nullable(User),
    team: Type.Null(),
    state: Type.String(),
    body: Type.String(),
    commit_id: Type.String(),
    stale: Type.Boolean(),
    official: Type.Boolean(),
    dismissed: Type.Boolean(),
    comments_count: Type.Integer(),
    submitted_at: Time,
    updated_at: Time,
    html_url: Type.String(),
    pull_request_url: Type.String(),
  },
  { title: 'PullReview' },
);

export const PullReviewComment = Type.Object(
  {
    id: Type.Integer(),
    body: Type.String(),
    user: Nullable(User),
    resolver: Nullable(User),
    pull_request_review_id: Type.Integer(),
    path: Type.String(),
    commit_id: Type.String(),
    original_commit_id: Type.String(),
    diff_hunk: Type.String(),
    position: Type.Integer({ description: 'the line of the new side, 0 for a comment on the old side' }),
    original_position: Type.Integer({ description: 'the line of the old side' }),
    created_at: Time,
    updated_at: Time,
    html_url: Type.String(),
    pull_request_url: Type.String(),
  },
  { title: 'PullReviewComment' },
);
export type PullReviewCommentJson = Static<typeof PullReviewComment>;

export const CreatePullReviewComment = Type.Object(
  {
    path: Type.Optional(Type.String({ description: 'the tree path' })),
    body: Type.Optional(Type.String()),
    new_position: Type.Optional(Type.Integer({ description: 'if comment to new file line or 0' })),
    old_position: Type.Optional(Type.Integer({ description: 'if comment to old file line or 0' })),
  },
  { title: 'CreatePullReviewComment' },
);

export const CreatePullReviewOptions = Type.Object(
  {
    event: Type.Optional(Type.String()),
    body: Type.Optional(Type.String()),
    commit_id: Type.Optional(Type.String()),
    comments: Type.Optional(Type.Array(CreatePullReviewComment)),
  },
  { title: 'CreatePullReviewOptions' },
);

export const SubmitPullReviewOptions = Type.Object(
  {
    event: Type.Optional(Type.String()),
    body: Type.Optional(Type.String()),
  },
  { title: 'SubmitPullReviewOptions' },
);

export const DismissPullReviewOptions = Type.Object(
  {
    message: Type.Optional(Type.String()),
    priors: Type.Optional(Type.Boolean()),
  },
  { title: 'DismissPullReviewOptions' },
);

export const PullReviewRequestOptions = Type.Object(
  {
    reviewers: Type.Optional(Type.Array(Type.String())),
    team_reviewers: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'PullReviewRequestOptions' },
);

export const REVIEW_STATES: Record<number, string> = {
  0: 'PENDING',
  1: 'APPROVED',
  2: 'COMMENT',
  3: 'REQUEST_CHANGES',
  4: 'REQUEST_REVIEW',
};
