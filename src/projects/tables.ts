// Tables of the projects domain (see db/migrations/0063_projects.ts).
import type { Generated, Selectable } from 'kysely';

export interface ProjectTable {
  id: Generated<number>;
  /** The repository of a repository's project; null for a user's or organization's. */
  repo_id: number | null;
  /** The user or organization of an owner's project; null for a repository's. */
  owner_id: number | null;
  title: string;
  description: string;
  creator_id: number;
  is_closed: Generated<number>;
  /** 0: no columns; 1: basic kanban (To Do, In Progress, Done). */
  template_type: Generated<number>;
  closed_date_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

/** A column of a project board (Forgejo's project_board). */
export interface ProjectBoardTable {
  id: Generated<number>;
  project_id: number;
  title: string;
  color: Generated<string>;
  is_default: Generated<number>;
  sorting: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export interface ProjectIssueTable {
  id: Generated<number>;
  project_id: number;
  /** The issue or pull request of the card; null for a note. */
  issue_id: number | null;
  project_board_id: number;
  sorting: Generated<number>;
  /** A note's text (null for an issue's card). */
  note: string | null;
  /** Who wrote a note (0 for an issue's card). */
  creator_id: Generated<number>;
}

export interface ProjectTables {
  project: ProjectTable;
  project_board: ProjectBoardTable;
  project_issue: ProjectIssueTable;
}

export type ProjectRow = Selectable<ProjectTable>;
export type ColumnRow = Selectable<ProjectBoardTable>;
export type CardRow = Selectable<ProjectIssueTable>;
