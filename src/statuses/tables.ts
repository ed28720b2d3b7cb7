// Tables of the statuses domain (see db/migrations/0005_protection.ts).
import type { Generated, Selectable } from 'kysely';

export interface CommitStatusTable {
  id: Generated<number>;
  repo_id: number;
  /** The full commit SHA, lower case. */
  sha: string;
  /** 1, 2, 3, ... per (repo_id, sha): the `id` the API shows, as in Forgejo. */
  status_index: number;
  state: string;
  target_url: Generated<string>;
  description: Generated<string>;
  context: Generated<string>;
  creator_id: number | null;
  created_unix: number;
  updated_unix: number;
}

export interface CommitStatusIndexTable {
  id: Generated<number>;
  repo_id: number;
  sha: string;
  max_index: Generated<number>;
}

export interface StatusTables {
  commit_status: CommitStatusTable;
  commit_status_index: CommitStatusIndexTable;
}

export type StatusRow = Selectable<CommitStatusTable>;
