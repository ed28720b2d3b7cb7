import type { Generated, Selectable } from 'kysely';

/** What a team (or a collaborator, or a unit of a team) may do in a repository. */
export const AccessMode = { none: 0, read: 1, write: 2, admin: 3, owner: 4 } as const;
export type AccessModeName = keyof typeof AccessMode;
export const accessModeName = (m: number): AccessModeName =>
  (Object.entries(AccessMode).find(([, v]) => v === m)?.[0] as AccessModeName | undefined) ?? 'none';

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
