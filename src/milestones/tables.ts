// Tables of the milestones domain (see db/migrations/0007_issues.ts).
import type { Generated, Selectable } from 'kysely';

/** 9999-12-31T23:59:59Z: Forgejo's "no due date" (shown as a null due_on). */
export const NO_DEADLINE = 253402300799;

export interface MilestoneTable {
  id: Generated<number>;
  repo_id: number;
  /** The milestone's title. */
  name: string;
  /** The milestone's description. */
  content: Generated<string>;
  is_closed: Generated<number>;
  /** Issues and pull requests in the milestone, and how many of them are closed. */
  num_issues: Generated<number>;
  num_closed_issues: Generated<number>;
  /** Percentage of closed issues, 0 to 100. */
  completeness: Generated<number>;
  deadline_unix: Generated<number>;
  closed_date_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export interface MilestoneTables {
  milestone: MilestoneTable;
}

export type MilestoneRow = Selectable<MilestoneTable>;

/** Forgejo's milestone sorts; the default is the nearest due date first. */
export const MILESTONE_SORTS = {
  closestduedate: [['deadline_unix', 'asc']],
  furthestduedate: [['deadline_unix', 'desc']],
  leastcomplete: [['completeness', 'asc']],
  mostcomplete: [['completeness', 'desc']],
  leastissues: [['num_issues', 'asc']],
  mostissues: [['num_issues', 'desc']],
  id: [['id', 'asc']],
} as const;
export type MilestoneSort = keyof typeof MILESTONE_SORTS;
