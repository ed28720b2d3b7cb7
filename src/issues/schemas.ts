// Forgejo's Issue, Comment, TimelineComment, Reaction, IssueDeadline and WatchInfo, the option
// objects and list queries of the issue API, and the row-to-JSON conversions.
import { Type, type Static } from 'typebox';
import { isoTime, Nullable, PageQuery } from './input.js';

export { PageQuery } from './input.js';
import { User, toUserJson, type UserJson, type UserJsonContext } from '../users/schemas.js';
import type { UserRow } from '../users/tables.js';
import { Label, toLabelJson, type LabelUrls } from '../labels/schemas.js';
import type { LabelRow } from '../labels/tables.js';
import { Milestone, toMilestoneJson } from '../milestones/schemas.js';
import type { MilestoneRow } from '../milestones/tables.js';
import { COMMENT_TYPE_NAMES } from './tables.js';
import { ISSUE_SORTS, type PlainCommentRow } from './tables.js';
import type { CommentRow, IssueRow, ReactionRow } from './tables.js';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Nullable(Time);
const NullableUser = Nullable(User);
/** Attachments are filled in by the attachments domain (see IssueService.setAssetsSource). */
const Assets = Type.Array(Type.Unknown(), { description: 'attachments (Attachment objects)' });

export const RepositoryMeta = Type.Object(
  { id: Type.Integer(), name: Type.String(), owner: Type.String(), full_name: Type.String() },
  { title: 'RepositoryMeta' },
);

export const PullRequestMeta = Type.Object(
  { merged: Type.Boolean(), merged_at: NullableTime, draft: Type.Boolean(), html_url: Type.String() },
  { title: 'PullRequestMeta' },
);
export type PullRequestMetaJson = Static<typeof PullRequestMeta>;

export const Issue = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    html_url: Type.String(),
    number: Type.Integer(),
    user: User,
    original_author: Type.String(),
    original_author_id: Type.Integer(),
    title: Type.String(),
    body: Type.String(),
    ref: Type.String(),
    assets: Assets,
    labels: Type.Array(Label),
    milestone: Nullable(Milestone),
    assignee: NullableUser,
    assignees: Nullable(Type.Array(User)),
    state: Type.String({ description: 'open or closed' }),
    is_locked: Type.Boolean(),
    comments: Type.Integer(),
    created_at: Time,
    updated_at: Time,
    closed_at: NullableTime,
    due_date: NullableTime,
    pull_request: Nullable(PullRequestMeta),
    repository: RepositoryMeta,
    pin_order: Type.Integer(),
  },
  { title: 'Issue', description: 'Issue represents an issue in a repository' },
);
export type IssueJson = Static<typeof Issue>;

export const TrackedTime = Type.Object(
  {
    id: Type.Integer(),
    created: Time,
    time: Type.Integer({ description: 'Time in seconds' }),
    user_id: Type.Integer({ description: 'deprecated (only for backwards compatibility)' }),
    user_name: Type.String(),
    issue_id: Type.Integer({ description: 'deprecated (only for backwards compatibility)' }),
    issue: Issue,
  },
  { title: 'TrackedTime', description: 'TrackedTime worked time for an issue / pr' },
);
export type TrackedTimeJson = Static<typeof TrackedTime>;

export const Comment = Type.Object(
  {
    id: Type.Integer(),
    html_url: Type.String(),
    pull_request_url: Type.String(),
    issue_url: Type.String(),
    user: User,
    original_author: Type.String(),
    original_author_id: Type.Integer(),
    body: Type.String(),
    assets: Assets,
    created_at: Time,
    updated_at: Time,
  },
  { title: 'Comment', description: 'Comment represents a comment on a commit or issue' },
);
export type CommentJson = Static<typeof Comment>;

export const TimelineComment = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String(),
    html_url: Type.String(),
    pull_request_url: Type.String(),
    issue_url: Type.String(),
    user: User,
    body: Type.String(),
    created_at: Time,
    updated_at: Time,
    old_project_id: Type.Integer(),
    project_id: Type.Integer(),
    old_milestone: Nullable(Milestone),
    milestone: Nullable(Milestone),
    tracked_time: Nullable(TrackedTime),
    old_title: Type.String(),
    new_title: Type.String(),
    old_ref: Type.String(),
    new_ref: Type.String(),
    ref_issue: Type.Null(),
    ref_comment: Type.Null(),
    ref_action: Type.String(),
    ref_commit_sha: Type.String(),
    review_id: Type.Integer(),
    label: Nullable(Label),
    assignee: NullableUser,
    assignee_team: Type.Null(),
    removed_assignee: Type.Boolean(),
    resolve_doer: Type.Null(),
    dependent_issue: Nullable(Issue),
  },
  {
    title: 'TimelineComment',
    description: 'TimelineComment represents a timeline comment (comment of any type) on a commit or issue',
  },
);
export type TimelineCommentJson = Static<typeof TimelineComment>;

export const Reaction = Type.Object(
  { user: User, content: Type.String(), created_at: Time },
  { title: 'Reaction', description: 'Reaction contain one reaction' },
);
export type ReactionJson = Static<typeof Reaction>;

export const IssueDeadline = Type.Object({ due_date: NullableTime }, { title: 'IssueDeadline' });

export const WatchInfo = Type.Object(
  {
    subscribed: Type.Boolean(),
    ignored: Type.Boolean(),
    reason: Type.Null(),
    created_at: Time,
    url: Type.String(),
    repository_url: Type.String(),
  },
  { title: 'WatchInfo' },
);

// Options

const StateOption = Type.Union([Type.Literal('open'), Type.Literal('closed')], {
  description: 'open or closed',
});

export const CreateIssueOption = Type.Object(
  {
    title: Type.String({ maxLength: 255 }),
    body: Type.Optional(Type.String()),
    ref: Type.Optional(Type.String()),
    assignee: Type.Optional(Type.String({ description: 'deprecated: use assignees' })),
    assignees: Type.Optional(Type.Array(Type.String())),
    milestone: Type.Optional(Type.Integer({ description: 'milestone id' })),
    labels: Type.Optional(Type.Array(Type.Integer(), { description: 'label ids' })),
    closed: Type.Optional(Type.Boolean()),
    due_date: Type.Optional(Time),
  },
  { title: 'CreateIssueOption' },
);
export type CreateIssueBody = Static<typeof CreateIssueOption>;

export const EditIssueOption = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 255 })),
    body: Type.Optional(Type.String()),
    ref: Type.Optional(Type.String()),
    assignee: Type.Optional(Type.String({ description: 'deprecated: use assignees' })),
    assignees: Type.Optional(
      Type.Array(Type.String(), { description: 'replaces the assignees; [] clears them' }),
    ),
    milestone: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: 'milestone id; 0 or null removes it' }),
    ),
    state: Type.Optional(StateOption),
    due_date: Type.Optional(Type.Union([Time, Type.Null()])),
    unset_due_date: Type.Optional(Type.Boolean()),
    updated_at: Type.Optional(Time),
  },
  { title: 'EditIssueOption' },
);
export type EditIssueBody = Static<typeof EditIssueOption>;

export const IssueLabelsOption = Type.Object(
  {
    labels: Type.Optional(
      Type.Array(Type.Union([Type.Integer(), Type.String()]), {
        description: 'label ids (integers) or label names (strings)',
      }),
    ),
    updated_at: Type.Optional(Time),
  },
  { title: 'IssueLabelsOption' },
);

export const CreateIssueCommentOption = Type.Object(
  { body: Type.String(), updated_at: Type.Optional(Time) },
  { title: 'CreateIssueCommentOption' },
);
export const EditIssueCommentOption = Type.Object(
  { body: Type.String(), updated_at: Type.Optional(Time) },
  { title: 'EditIssueCommentOption' },
);
export const EditDeadlineOption = Type.Object(
  { due_date: Type.Union([Time, Type.Null()], { description: 'null removes the due date' }) },
  { title: 'EditDeadlineOption' },
);
export const EditReactionOption = Type.Object({ content: Type.String() }, { title: 'EditReactionOption' });
export const LockIssueOption = Type.Object(
  { lock_reason: Type.Optional(Type.String()) },
  { title: 'LockIssueOption' },
);

// List queries

const StateQuery = Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')], {
  description: 'open (the default), closed or all',
});
const TypeQuery = Type.Union([Type.Literal('issues'), Type.Literal('pulls')], {
  description: 'only issues or only pull requests',
});
const { page, limit } = PageQuery.properties;
const since = Type.Optional(
  Type.String({ format: 'date-time', description: 'only items updated at or after this time (RFC 3339)' }),
);
const before = Type.Optional(
  Type.String({ format: 'date-time', description: 'only items updated at or before this time (RFC 3339)' }),
);
const userFilters = {
  created_by: Type.Optional(Type.String({ description: 'only items created by this user' })),
  assigned_by: Type.Optional(Type.String({ description: 'only items assigned to this user' })),
  mentioned_by: Type.Optional(Type.String({ description: 'only items mentioning this user' })),
};

export const IssueListQuery = Type.Object({
  state: Type.Optional(StateQuery),
  labels: Type.Optional(
    Type.String({
      description:
        'comma-separated label names (or ids): only issues that have every one of them; labels that do not exist are ignored',
    }),
  ),
  q: Type.Optional(Type.String({ description: 'search the title and body' })),
  type: Type.Optional(TypeQuery),
  milestones: Type.Optional(
    Type.String({ description: 'comma-separated milestone titles or ids: issues in any of them' }),
  ),
  since,
  before,
  ...userFilters,
  sort: Type.Optional(
    Type.Union(
      ISSUE_SORTS.map((s) => Type.Literal(s)),
      { description: 'latest (the default), oldest, ...' },
    ),
  ),
  page,
  limit,
});
export type IssueListQueryJson = Static<typeof IssueListQuery>;

export const IssueSearchQuery = Type.Object({
  state: Type.Optional(StateQuery),
  labels: Type.Optional(Type.String({ description: 'comma-separated label names: issues with any of them' })),
  milestones: Type.Optional(
    Type.String({ description: 'comma-separated milestone titles: issues in any of them' }),
  ),
  q: Type.Optional(Type.String({ description: 'search the title and body' })),
  priority_repo_id: Type.Optional(Type.Integer({ description: 'list the issues of this repository first' })),
  type: Type.Optional(TypeQuery),
  since,
  before,
  assigned: Type.Optional(Type.Boolean({ description: 'only items assigned to the caller' })),
  created: Type.Optional(Type.Boolean({ description: 'only items created by the caller' })),
  mentioned: Type.Optional(Type.Boolean({ description: 'only items mentioning the caller' })),
  review_requested: Type.Optional(Type.Boolean({ description: 'pull requests only (none yet)' })),
  reviewed: Type.Optional(Type.Boolean({ description: 'pull requests only (none yet)' })),
  owner: Type.Optional(Type.String({ description: 'only the repositories of this user or organization' })),
  team: Type.Optional(
    Type.String({ description: 'only the repositories of this team of the `owner` organization' }),
  ),
  ...userFilters,
  page,
  limit,
});
export type IssueSearchQueryJson = Static<typeof IssueSearchQuery>;

export const CommentListQuery = Type.Object({ since, before, page, limit });

// Row to JSON

/** The Ghost user: the poster of issues and comments whose account no longer exists. */
export const GHOST_USER: UserRow = {
  id: -1,
  name: 'Ghost',
  lower_name: 'ghost',
  full_name: '',
  email: '',
  lower_email: '',
  keep_email_private: 1,
  passwd: '',
  must_change_password: 0,
  login_name: '',
  login_source: 0,
  type: 0,
  visibility: 0,
  is_admin: 0,
  is_active: 1,
  prohibit_login: 0,
  restricted: 0,
  allow_create_organization: 0,
  max_repo_creation: -1,
  description: '',
  website: '',
  location: '',
  pronouns: '',
  language: '',
  repo_admin_change_team_access: 0,
  created_unix: 0,
  updated_unix: 0,
  last_login_unix: 0,
  num_followers: 0,
  num_following: 0,
  num_stars: 0,
  keep_activity_private: 0,
  keep_pronouns_private: 0,
  theme: '',
  diff_view_style: '',
  enable_repo_unit_hints: 1,
  avatar: '',
  email_notifications_preference: 'disabled',
};

/** What converting a set of issues (and their comments) needs, loaded beforehand in a few queries. */
export interface IssueJsonContext extends UserJsonContext {
  /** The repository `owner/name` of each repository involved, by id. */
  repoNames: Map<number, { name: string; owner: string }>;
  users: Map<number, UserRow>;
  /** Users already converted (a page of comments repeats the same few users). */
  userJson: Map<number, UserJson>;
  labels: Map<number, LabelRow[]>;
  labelUrls: LabelUrls;
  milestones: Map<number, MilestoneRow>;
  assignees: Map<number, number[]>;
  issueAssets: Map<number, unknown[]>;
  commentAssets: Map<number, unknown[]>;
  pulls: Map<number, PullRequestMetaJson>;
}

/** The user `id` as JSON (the Ghost user when it no longer exists), converted once per context. */
export function userJson(id: number | null, c: IssueJsonContext): UserJson {
  const key = id ?? -1;
  let json = c.userJson.get(key);
  if (!json) {
    json = toUserJson((id !== null && c.users.get(id)) || GHOST_USER, c);
    c.userJson.set(key, json);
  }
  return json;
}

function urls(issue: IssueRow, c: IssueJsonContext) {
  const r = c.repoNames.get(issue.repo_id);
  const full = r ? `${r.owner}/${r.name}` : '';
  return {
    full,
    name: r?.name ?? '',
    owner: r?.owner ?? '',
    api: `${c.rootUrl}api/v1/repos/${full}/issues/${issue.index}`,
    html: `${c.rootUrl}${full}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`,
    repoApi: `${c.rootUrl}api/v1/repos/${full}`,
  };
}

export function toIssueJson(i: IssueRow, c: IssueJsonContext): IssueJson {
  const u = urls(i, c);
  const assignees = (c.assignees.get(i.id) ?? []).map((id) => userJson(id, c));
  const milestone = i.milestone_id !== null ? c.milestones.get(i.milestone_id) : undefined;
  return {
    id: i.id,
    url: u.api,
    html_url: u.html,
    number: i.index,
    user: userJson(i.poster_id, c),
    original_author: i.original_author,
    original_author_id: i.original_author_id,
    title: i.title,
    body: i.content,
    ref: i.ref,
    assets: c.issueAssets.get(i.id) ?? [],
    labels: (c.labels.get(i.id) ?? []).map((l) => toLabelJson(l, c.labelUrls)),
    milestone: milestone ? toMilestoneJson(milestone) : null,
    assignee: assignees[0] ?? null,
    assignees: assignees.length ? assignees : null,
    state: i.is_closed ? 'closed' : 'open',
    is_locked: i.is_locked === 1,
    comments: i.num_comments,
    created_at: isoTime(i.created_unix),
    updated_at: isoTime(i.updated_unix),
    closed_at: i.is_closed && i.closed_unix ? isoTime(i.closed_unix) : null,
    due_date: i.deadline_unix ? isoTime(i.deadline_unix) : null,
    pull_request: i.is_pull
      ? (c.pulls.get(i.id) ?? { merged: false, merged_at: null, draft: false, html_url: u.html })
      : null,
    repository: { id: i.repo_id, name: u.name, owner: u.owner, full_name: u.full },
    pin_order: i.pin_order,
  };
}

function commentUrls(cm: { id: number }, issue: IssueRow, c: IssueJsonContext) {
  const u = urls(issue, c);
  return {
    html_url: `${u.html}#issuecomment-${cm.id}`,
    issue_url: issue.is_pull ? '' : u.html,
    pull_request_url: issue.is_pull ? u.html : '',
  };
}

export function toCommentJson(cm: PlainCommentRow, issue: IssueRow, c: IssueJsonContext): CommentJson {
  return {
    id: cm.id,
    ...commentUrls(cm, issue, c),
    user: userJson(cm.poster_id, c),
    original_author: cm.original_author,
    original_author_id: cm.original_author_id,
    body: cm.content,
    assets: c.commentAssets.get(cm.id) ?? [],
    created_at: isoTime(cm.created_unix),
    updated_at: isoTime(cm.updated_unix),
  };
}

export function toTimelineJson(
  cm: CommentRow,
  issue: IssueRow,
  c: IssueJsonContext,
  labels: Map<number, LabelRow>,
  dependents: Map<number, IssueJson> = new Map(),
  times: Map<number, TrackedTimeJson> = new Map(),
): TimelineCommentJson {
  const label = cm.label_id !== null ? labels.get(cm.label_id) : undefined;
  const milestone = cm.milestone_id ? c.milestones.get(cm.milestone_id) : undefined;
  const oldMilestone = cm.old_milestone_id ? c.milestones.get(cm.old_milestone_id) : undefined;
  return {
    id: cm.id,
    type: COMMENT_TYPE_NAMES[cm.type] ?? 'comment',
    ...commentUrls(cm, issue, c),
    user: userJson(cm.poster_id, c),
    body: cm.content,
    created_at: isoTime(cm.created_unix),
    updated_at: isoTime(cm.updated_unix),
    old_project_id: 0,
    project_id: 0,
    old_milestone: oldMilestone ? toMilestoneJson(oldMilestone) : null,
    milestone: milestone ? toMilestoneJson(milestone) : null,
    tracked_time: cm.time_id !== null ? (times.get(cm.time_id) ?? null) : null,
    old_title: cm.old_title,
    new_title: cm.new_title,
    old_ref: cm.old_ref,
    new_ref: cm.new_ref,
    ref_issue: null,
    ref_comment: null,
    ref_action: '',
    ref_commit_sha: cm.commit_sha,
    review_id: 0,
    label: label ? toLabelJson(label, c.labelUrls) : null,
    assignee: cm.assignee_id !== null ? userJson(cm.assignee_id, c) : null,
    assignee_team: null,
    removed_assignee: cm.removed_assignee === 1,
    resolve_doer: null,
    dependent_issue: cm.dependent_issue_id !== null ? (dependents.get(cm.dependent_issue_id) ?? null) : null,
  };
}

export function toReactionJson(r: ReactionRow, c: IssueJsonContext): ReactionJson {
  return { user: userJson(r.user_id, c), content: r.type, created_at: isoTime(r.created_unix) };
}

/** Path parameters of a route under one issue or pull request. */
export const IndexParams = Type.Object({ owner: Type.String(), repo: Type.String(), index: Type.Integer() });
/** ...and of one thing of it by id (a label, a tracked time, a review). */
export const IndexIdParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  index: Type.Integer(),
  id: Type.Integer(),
});
/** Path parameters of a route under one comment of a repository. */
export const CommentParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() });
/** The body of a 204 (or another answer without content). */
export const NoContent = Type.Null();
