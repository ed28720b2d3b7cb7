import type { Generated, Selectable } from 'kysely';

/** Columns with a database default are Generated: optional when inserting. */
export interface RepositoryTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  lower_name: string;
  description: Generated<string>;
  website: Generated<string>;
  original_url: Generated<string>;
  default_branch: string;
  is_private: Generated<number>;
  is_empty: Generated<number>;
  is_archived: Generated<number>;
  is_mirror: Generated<number>;
  is_fork: Generated<number>;
  fork_id: number | null;
  is_template: Generated<number>;
  /** Bytes of git objects (LFS excluded). */
  size: Generated<number>;
  num_forks: Generated<number>;
  num_stars: Generated<number>;
  num_watches: Generated<number>;
  has_issues: Generated<number>;
  has_wiki: Generated<number>;
  has_pull_requests: Generated<number>;
  has_projects: Generated<number>;
  has_releases: Generated<number>;
  has_packages: Generated<number>;
  has_actions: Generated<number>;
  object_format_name: Generated<string>;
  created_unix: number;
  updated_unix: number;
  archived_unix: Generated<number>;
  /** Content hash of the uploaded avatar (db/migrations/0029_avatars.ts); '' for none. */
  avatar: Generated<string>;
  // The pull requests unit's options (db/migrations/0045_repo_merge_styles.ts).
  allow_merge_commits: Generated<number>;
  allow_rebase: Generated<number>;
  allow_rebase_explicit: Generated<number>;
  allow_squash_merge: Generated<number>;
  allow_fast_forward_only_merge: Generated<number>;
  allow_rebase_update: Generated<number>;
  default_delete_branch_after_merge: Generated<number>;
  default_allow_maintainer_edit: Generated<number>;
  /** merge, rebase, rebase-merge, squash or fast-forward-only. */
  default_merge_style: Generated<string>;
}

export interface CollaborationTable {
  id: Generated<number>;
  repo_id: number;
  user_id: number;
  /** Access mode: 1 read, 2 write, 3 admin. */
  mode: number;
}

export interface TeamRepoTable {
  id: Generated<number>;
  org_id: number;
  team_id: number;
  repo_id: number;
}

export interface BranchTable {
  id: Generated<number>;
  repo_id: number;
  name: string;
  commit_id: string;
  commit_message: string;
  commit_time: number;
  pusher_id: number;
  updated_unix: number;
}

/** A branch deleted by a push or the web: its last commit, kept to restore it (migration 0080). */
export interface DeletedBranchTable {
  id: Generated<number>;
  repo_id: number;
  name: string;
  commit_id: string;
  commit_message: string;
  deleted_by_id: number;
  deleted_unix: number;
}

/** A ref change under way (see src/repos/recovery.ts). */
export interface RefIntentTable {
  id: Generated<number>;
  repo_id: number;
  /** 'push' (git, the API, mirrors: refs recorded as they are) or 'merge' (a pull request). */
  kind: string;
  doer_id: number;
  /** JSON RefUpdate[]. */
  updates: string;
  /** JSON, kind-specific. */
  data: Generated<string>;
  /** The process ([cluster] NODE_NAME) that began it. */
  node: Generated<string>;
  /** 0 pending (refs may have moved), 1 recorded in the database (listeners not yet told). */
  state: Generated<number>;
  created_unix: number;
}

/** A repository's former owner and name, leading to it after a rename or transfer. */
export interface RepoRedirectTable {
  id: Generated<number>;
  owner_id: number;
  lower_name: string;
  redirect_repo_id: number;
}

/** A transfer waiting for its recipient to accept it (db/migrations/0032_repo_transfer.ts). */
export interface RepoTransferTable {
  id: Generated<number>;
  doer_id: number;
  recipient_id: number;
  repo_id: number;
  /** JSON array of team ids. */
  team_ids: Generated<string>;
  created_unix: number;
  updated_unix: number;
}

export interface RepoTables {
  repo_transfer: RepoTransferTable;
  repository: RepositoryTable;
  repo_redirect: RepoRedirectTable;
  collaboration: CollaborationTable;
  team_repo: TeamRepoTable;
  branch: BranchTable;
  deleted_branch: DeletedBranchTable;
  ref_intent: RefIntentTable;
}

export type RepoRow = Selectable<RepositoryTable>;
export type DeletedBranchRow = Selectable<DeletedBranchTable>;
export type BranchRow = Selectable<BranchTable>;
export type RefIntentRow = Selectable<RefIntentTable>;

export type RepoTransferRow = Selectable<RepoTransferTable>;
