// Tables of the labels domain (see db/migrations/0007_issues.ts).
import type { Generated, Selectable } from 'kysely';

/** A label of a repository (repo_id set) or of an organization (org_id set). */
export interface LabelTable {
  id: Generated<number>;
  repo_id: number | null;
  org_id: number | null;
  name: string;
  /** With a scope (`<scope>/<name>`): an issue holds at most one exclusive label of that scope. */
  exclusive: Generated<number>;
  description: Generated<string>;
  /** '#' and six hexadecimal digits. */
  color: string;
  /** When the label was archived; 0 when it is not. */
  archived_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

/** A label on an issue, with copies of the issue's repository, kind, state and creation time. */
export interface IssueLabelTable {
  id: Generated<number>;
  issue_id: number;
  label_id: number;
  repo_id: number;
  is_pull: Generated<number>;
  is_closed: Generated<number>;
  created_unix: number;
}

export interface LabelTables {
  label: LabelTable;
  issue_label: IssueLabelTable;
}

export type LabelRow = Selectable<LabelTable>;
