// Forgejo's Repository JSON and the repository option objects, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { User, toUserJson } from '../users/schemas.js';
import { Team } from '../orgs/schemas.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { AccessMode } from '../orgs/tables.js';
import { Visibility } from '../users/tables.js';
import type { RepoRow } from './tables.js';
import type { RepoAccess } from './access.js';
import { repoAvatarPath } from '../users/avatars.js';

export const Permission = Type.Object(
  { admin: Type.Boolean(), push: Type.Boolean(), pull: Type.Boolean() },
  { title: 'Permission' },
);

export const InternalTracker = Type.Object(
  {
    enable_time_tracker: Type.Boolean(),
    allow_only_contributors_to_track_time: Type.Boolean(),
    enable_issue_dependencies: Type.Boolean(),
  },
  { title: 'InternalTracker' },
);

export const RepoTransfer = Type.Object(
  { doer: User, recipient: User, teams: Type.Array(Team) },
  { title: 'RepoTransfer' },
);
export type RepoTransferJson = Static<typeof RepoTransfer>;

const repoFields = {
  id: Type.Integer(),
  owner: User,
  name: Type.String(),
  full_name: Type.String(),
  description: Type.String(),
  empty: Type.Boolean(),
  private: Type.Boolean(),
  fork: Type.Boolean(),
  template: Type.Boolean(),
  mirror: Type.Boolean(),
  size: Type.Integer({ description: 'size of the git data in KiB (LFS excluded)' }),
  language: Type.String(),
  languages_url: Type.String(),
  html_url: Type.String(),
  url: Type.String(),
  link: Type.String(),
  ssh_url: Type.String(),
  clone_url: Type.String(),
  original_url: Type.String(),
  website: Type.String(),
  stars_count: Type.Integer(),
  forks_count: Type.Integer(),
  watchers_count: Type.Integer(),
  open_issues_count: Type.Integer(),
  open_pr_counter: Type.Integer(),
  release_counter: Type.Integer(),
  default_branch: Type.String(),
  archived: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  archived_at: Type.String({ format: 'date-time' }),
  permissions: Permission,
  has_issues: Type.Boolean(),
  internal_tracker: Type.Optional(InternalTracker),
  has_wiki: Type.Boolean(),
  wiki_branch: Type.Optional(Type.String()),
  globally_editable_wiki: Type.Boolean(),
  has_pull_requests: Type.Boolean(),
  has_projects: Type.Boolean(),
  has_releases: Type.Boolean(),
  has_packages: Type.Boolean(),
  has_actions: Type.Boolean(),
  ignore_whitespace_conflicts: Type.Boolean(),
  allow_merge_commits: Type.Boolean(),
  allow_rebase: Type.Boolean(),
  allow_rebase_explicit: Type.Boolean(),
  allow_squash_merge: Type.Boolean(),
  allow_fast_forward_only_merge: Type.Boolean(),
  allow_rebase_update: Type.Boolean(),
  default_delete_branch_after_merge: Type.Boolean(),
  default_merge_style: Type.String(),
  default_allow_maintainer_edit: Type.Boolean(),
  default_update_style: Type.String(),
  avatar_url: Type.String(),
  internal: Type.Boolean(),
  mirror_interval: Type.String(),
  object_format_name: Type.String(),
  mirror_updated: Type.String({ format: 'date-time' }),
  repo_transfer: Type.Union([RepoTransfer, Type.Null()], {
    description: 'the pending transfer of the repository, null when there is none',
  }),
  topics: Type.Array(Type.String()),
};

export const Repository = Type.Object(
  { ...repoFields, parent: Type.Union([Type.Object(repoFields), Type.Null()]) },
  { title: 'Repository' },
);
export type RepositoryJson = Static<typeof Repository>;

export const CreateRepoOption = Type.Object(
  {
    name: Type.String(),
    description: Type.Optional(Type.String({ maxLength: 2048 })),
    private: Type.Optional(Type.Boolean()),
    auto_init: Type.Optional(Type.Boolean()),
    readme: Type.Optional(Type.String()),
    gitignores: Type.Optional(Type.String()),
    license: Type.Optional(Type.String()),
    default_branch: Type.Optional(Type.String({ maxLength: 100 })),
    template: Type.Optional(Type.Boolean()),
    issue_labels: Type.Optional(Type.String()),
    trust_model: Type.Optional(Type.String()),
    object_format_name: Type.Optional(Type.Union([Type.Literal('sha1')])),
  },
  { title: 'CreateRepoOption' },
);

export const EditRepoOption = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String({ maxLength: 2048 })),
    website: Type.Optional(Type.String({ maxLength: 1024 })),
    private: Type.Optional(Type.Boolean()),
    template: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
    default_branch: Type.Optional(Type.String()),
    has_issues: Type.Optional(Type.Boolean()),
    has_wiki: Type.Optional(Type.Boolean()),
    has_pull_requests: Type.Optional(Type.Boolean()),
    has_projects: Type.Optional(Type.Boolean()),
    has_releases: Type.Optional(Type.Boolean()),
    has_packages: Type.Optional(Type.Boolean()),
    has_actions: Type.Optional(Type.Boolean()),
    allow_merge_commits: Type.Optional(Type.Boolean()),
    allow_rebase: Type.Optional(Type.Boolean()),
    allow_rebase_explicit: Type.Optional(Type.Boolean()),
    allow_squash_merge: Type.Optional(Type.Boolean()),
    allow_fast_forward_only_merge: Type.Optional(Type.Boolean()),
    allow_rebase_update: Type.Optional(Type.Boolean()),
    default_delete_branch_after_merge: Type.Optional(Type.Boolean()),
    default_allow_maintainer_edit: Type.Optional(Type.Boolean()),
    default_merge_style: Type.Optional(
      Type.String({ description: 'merge, rebase, rebase-merge, squash or fast-forward-only' }),
    ),
  },
  { title: 'EditRepoOption' },
);

export const GenerateRepoOption = Type.Object(
  {
    owner: Type.String({
      minLength: 1,
      description: 'The organization or person who will own the new repository',
    }),
    name: Type.String({ minLength: 1, description: 'Name of the repository to create' }),
    description: Type.Optional(Type.String({ maxLength: 2048 })),
    private: Type.Optional(Type.Boolean()),
    default_branch: Type.Optional(Type.String({ maxLength: 100 })),
    git_content: Type.Optional(
      Type.Boolean({ description: 'include git content of default branch in template repo' }),
    ),
    git_hooks: Type.Optional(
      Type.Boolean({ description: 'accepted; Anvil repositories have no custom git hooks' }),
    ),
    topics: Type.Optional(Type.Boolean()),
    webhooks: Type.Optional(Type.Boolean()),
    avatar: Type.Optional(Type.Boolean()),
    labels: Type.Optional(Type.Boolean()),
    protected_branch: Type.Optional(Type.Boolean()),
  },
  { title: 'GenerateRepoOption' },
);

export const SyncForkInfo = Type.Object(
  {
    allowed: Type.Boolean({ description: "whether the fork's branch can be fast-forwarded to the base's" }),
    fork_commit: Type.String(),
    base_commit: Type.String({ description: "'' when the base repository has no such branch" }),
    commits_behind: Type.Integer(),
  },
  { title: 'SyncForkInfo' },
);
export type SyncForkInfo = Static<typeof SyncForkInfo>;

export const TransferRepoOption = Type.Object(
  { new_owner: Type.String(), team_ids: Type.Optional(Type.Array(Type.Integer())) },
  { title: 'TransferRepoOption' },
);

export interface RepoJsonContext {
  rootUrl: string;
  /** Where SSH clone URLs point. */
  ssh: SshCloneAddress;
  viewer: Viewer | null;
  /** Open issues and pull requests of the repository, when the caller counted them. */
  counts?: { issues: number; pulls: number } | undefined;
  /** The repository's topics, when the caller read them. */
  topics?: string[] | undefined;
  /** Published releases (the release_counter), when the caller counted them. */
  releases?: number | undefined;
  /** The largest language of the default branch, when the caller computed it. */
  language?: string | undefined;
  /** The repository's pending transfer, when it has one. */
  transfer?: RepoTransferJson | undefined;
}

type RepoFieldsJson = Omit<RepositoryJson, 'parent'>;

/** Where SSH clone URLs point: [server] SSH_USER, SSH_DOMAIN (ROOT_URL's host by default), SSH_PORT. */
export interface SshCloneAddress {
  user: string;
  domain: string;
  port: number;
}

/** The SSH clone URL of `full` (owner/name): scp-like on port 22, an ssh:// URL on another port. */
export function sshCloneUrl(full: string, { user, domain, port }: SshCloneAddress): string {
  const host = domain.includes(':') ? `[${domain}]` : domain;
  return port === 22 ? `${user}@${host}:${full}.git` : `ssh://${user}@${host}:${port}/${full}.git`;
}

export function toRepoJson(
  repo: RepoRow,
  owner: UserRow,
  access: RepoAccess,
  ctx: RepoJsonContext,
  parent: RepoFieldsJson | null = null,
): RepositoryJson {
  const full = `${owner.name}/${repo.name}`;
  const html = `${ctx.rootUrl}${full}`;
  return {
    id: repo.id,
    owner: toUserJson(owner, ctx),
    name: repo.name,
    full_name: full,
    description: repo.description,
    empty: repo.is_empty === 1,
    private: repo.is_private === 1,
    fork: repo.is_fork === 1,
    template: repo.is_template === 1,
    mirror: repo.is_mirror === 1,
    // KiB, rounded down as Forgejo does.
    size: Math.floor(repo.size / 1024),
    language: ctx.language ?? '',
    languages_url: `${ctx.rootUrl}api/v1/repos/${full}/languages`,
    html_url: html,
    url: `${ctx.rootUrl}api/v1/repos/${full}`,
    link: '',
    ssh_url: sshCloneUrl(full, ctx.ssh),
    clone_url: `${html}.git`,
    original_url: repo.original_url,
    website: repo.website,
    stars_count: repo.num_stars,
    forks_count: repo.num_forks,
    watchers_count: repo.num_watches,
    open_issues_count: ctx.counts?.issues ?? 0,
    open_pr_counter: ctx.counts?.pulls ?? 0,
    release_counter: ctx.releases ?? 0,
    default_branch: repo.default_branch,
    archived: repo.is_archived === 1,
    created_at: isoTime(repo.created_unix),
    updated_at: isoTime(repo.updated_unix),
    archived_at: isoTime(repo.archived_unix),
    permissions: {
      admin: access.mode >= AccessMode.admin,
      push: (access.units.get('repo.code') ?? 0) >= AccessMode.write,
      pull: (access.units.get('repo.code') ?? 0) >= AccessMode.read,
    },
    has_issues: repo.has_issues === 1,
    ...(repo.has_issues === 1
      ? {
          internal_tracker: {
            enable_time_tracker: true,
            allow_only_contributors_to_track_time: true,
            enable_issue_dependencies: true,
          },
        }
      : {}),
    has_wiki: repo.has_wiki === 1,
    wiki_branch: 'main',
    globally_editable_wiki: false,
    has_pull_requests: repo.has_pull_requests === 1,
    has_projects: repo.has_projects === 1,
    has_releases: repo.has_releases === 1,
    has_packages: repo.has_packages === 1,
    has_actions: repo.has_actions === 1,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: repo.allow_merge_commits === 1,
    allow_rebase: repo.allow_rebase === 1,
    allow_rebase_explicit: repo.allow_rebase_explicit === 1,
    allow_squash_merge: repo.allow_squash_merge === 1,
    allow_fast_forward_only_merge: repo.allow_fast_forward_only_merge === 1,
    allow_rebase_update: repo.allow_rebase_update === 1,
    default_delete_branch_after_merge: repo.default_delete_branch_after_merge === 1,
    default_merge_style: repo.default_merge_style,
    default_allow_maintainer_edit: repo.default_allow_maintainer_edit === 1,
    default_update_style: 'merge',
    avatar_url: repo.avatar ? `${ctx.rootUrl}${repoAvatarPath(repo)}` : '',
    // A public repository of a private owner is "internal": visible to the owner's members only.
    internal: repo.is_private === 0 && owner.visibility === Visibility.private,
    mirror_interval: '',
    object_format_name: repo.object_format_name,
    mirror_updated: '0001-01-01T00:00:00Z',
    repo_transfer: ctx.transfer ?? null,
    topics: ctx.topics ?? [],
    parent,
  };
}
