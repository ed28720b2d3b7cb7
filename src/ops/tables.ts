import type { Generated, Selectable } from 'kysely';

/** Kinds of system notices (Forgejo's NoticeType): 1 a repository's, 2 a background task's. */
export const NoticeType = { Repository: 1, Task: 2 } as const;

/** A message for the site's administrators (db/migrations/0049_admin.ts). */
export interface SystemNoticeTable {
  id: Generated<number>;
  type: Generated<number>;
  description: string;
  created_unix: number;
}

export interface OpsTables {
  system_notice: SystemNoticeTable;
}

export type NoticeRow = Selectable<SystemNoticeTable>;
