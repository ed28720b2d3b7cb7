// Tables of the activities domain (see db/migrations/0020_activities.ts).
import type { Generated, Selectable } from 'kysely';

/** Forgejo's op_type names. */
export type OpType =
  | 'create_repo'
  | 'commit_repo'
  | 'push_tag'
  | 'delete_tag'
  | 'delete_branch'
  | 'create_issue'
  | 'create_pull_request'
  | 'close_issue'
  | 'reopen_issue'
  | 'close_pull_request'
  | 'reopen_pull_request'
  | 'merge_pull_request'
  | 'comment_issue'
  | 'comment_pull'
  | 'publish_release'
  | 'approve_pull_request'
  | 'reject_pull_request';

export interface ActionTable {
  id: Generated<number>;
  /** Whose feed the row is in (the actor's, the repository owner's). */
  user_id: number;
  act_user_id: number;
  op_type: OpType;
  repo_id: number;
  owner_id: number;
  is_private: number;
  comment_id: number | null;
  ref_name: string;
  content: string;
  created_unix: number;
}

/** What a user did per 15 minutes (Forgejo's heatmap buckets), private and public apart. */
export interface ActionBucketTable {
  user_id: number;
  /** The bucket's start, unix seconds (a multiple of 900). */
  bucket: number;
  is_private: number;
  contributions: number;
}

export interface ActivityTables {
  action: ActionTable;
  action_bucket: ActionBucketTable;
}

export type ActionRow = Selectable<ActionTable>;
