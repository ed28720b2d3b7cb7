import type { Generated, Selectable } from 'kysely';

export interface OrgUserTable {
  id: Generated<number>;
  org_id: number;
  uid: number;
  is_public: number;
}

export interface TeamTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  lower_name: string;
  description: string;
  /** Access mode: 1 read, 2 write, 3 admin, 4 owner. */
  authorize: number;
  includes_all_repositories: number;
  can_create_org_repo: number;
  created_unix: number;
}

export interface TeamUserTable {
  id: Generated<number>;
  org_id: number;
  team_id: number;
  uid: number;
}

export interface TeamUnitTable {
  id: Generated<number>;
  org_id: number;
  team_id: number;
  /** Unit name such as repo.code or repo.issues. */
  type: string;
  access_mode: number;
}

export interface OrgTables {
  org_user: OrgUserTable;
  team: TeamTable;
  team_user: TeamUserTable;
  team_unit: TeamUnitTable;
}

export type TeamRow = Selectable<TeamTable>;
export type TeamUnitRow = Selectable<TeamUnitTable>;
