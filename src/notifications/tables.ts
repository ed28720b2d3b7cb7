// Tables of the notifications domain (see db/migrations/0010_notifications.ts): one notification
// thread per user and issue (or pull request), and the users watching each repository.
import type { Generated, Selectable } from 'kysely';

/** Forgejo's NotificationStatus values. */
export const NotificationStatus = { unread: 1, read: 2, pinned: 3 } as const;
export type NotificationStatusName = keyof typeof NotificationStatus;

/** Forgejo's NotificationSource values. */
export const NotificationSource = { issue: 1, pull: 2, commit: 3, repository: 4 } as const;
export type NotificationSourceName = keyof typeof NotificationSource;

export interface NotificationTable {
  id: Generated<number>;
  user_id: number;
  repo_id: number;
  /** The issue (or pull request) of the thread; null for commit and repository sources. */
  issue_id: number | null;
  /** The latest comment that bumped the thread, if any. */
  comment_id: number | null;
  status: number;
  source: number;
  /** Who caused the latest bump. */
  updated_by: number | null;
  updated_unix: number;
  created_unix: number;
}

/** A user watching a repository: notified of every issue and pull request event in it. */
export interface WatchTable {
  id: Generated<number>;
  user_id: number;
  repo_id: number;
  created_unix: number;
}

export interface NotificationTables {
  notification: NotificationTable;
  watch: WatchTable;
}

export type NotificationRow = Selectable<NotificationTable>;
export type WatchRow = Selectable<WatchTable>;

/** Which threads of a user a list or a mark-as-read takes. */
export interface NotificationFilter {
  userId: number;
  repoId?: number | undefined;
  statuses?: number[] | undefined;
  sources?: number[] | undefined;
  /** updated_unix >= since */
  since?: number | undefined;
  /** updated_unix <= before */
  before?: number | undefined;
}
