import { Type, type Static } from 'typebox';
import { VisibilityOption } from '../users/schemas.js';
import { visibilityName } from '../users/tables.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { AccessMode, accessModeName } from './tables.js';
import type { TeamView } from './service.js';
import { avatarPath } from '../users/avatars.js';

export const Organization = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    username: Type.String({ description: 'deprecated: same as name' }),
    full_name: Type.String(),
    email: Type.String({ description: 'shown to signed-in callers only' }),
    avatar_url: Type.String(),
    description: Type.String(),
    website: Type.String(),
    location: Type.String(),
    visibility: Type.String(),
    repo_admin_change_team_access: Type.Boolean(),
  },
  { title: 'Organization' },
);
export type OrganizationJson = Static<typeof Organization>;

const orgFields = {
  full_name: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  website: Type.Optional(Type.String({ maxLength: 255 })),
  location: Type.Optional(Type.String({ maxLength: 50 })),
  visibility: Type.Optional(VisibilityOption),
  repo_admin_change_team_access: Type.Optional(Type.Boolean()),
};

export const CreateOrgOption = Type.Object(
  { username: Type.String(), ...orgFields },
  { title: 'CreateOrgOption' },
);
export const EditOrgOption = Type.Object(orgFields, { title: 'EditOrgOption' });

export const Team = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    organization: Type.Union([Organization, Type.Null()]),
    includes_all_repositories: Type.Boolean(),
    permission: Type.String({ description: 'none, read, write, admin or owner' }),
    units: Type.Array(Type.String()),
    units_map: Type.Record(Type.String(), Type.String()),
    can_create_org_repo: Type.Boolean(),
  },
  { title: 'Team' },
);
export type TeamJson = Static<typeof Team>;

const Permission = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);
const teamFields = {
  description: Type.Optional(Type.String({ maxLength: 255 })),
  permission: Type.Optional(Permission),
  units: Type.Optional(Type.Array(Type.String())),
  units_map: Type.Optional(Type.Record(Type.String(), Type.String())),
  includes_all_repositories: Type.Optional(Type.Boolean()),
  can_create_org_repo: Type.Optional(Type.Boolean()),
};
export const CreateTeamOption = Type.Object(
  { name: Type.String(), ...teamFields },
  { title: 'CreateTeamOption' },
);
export const EditTeamOption = Type.Object(
  { name: Type.Optional(Type.String()), ...teamFields },
  { title: 'EditTeamOption' },
);

/** The organization as Forgejo shows it: its e-mail only to signed-in callers. */
export function toOrgJson(org: UserRow, rootUrl: string, viewer: Viewer | null): OrganizationJson {
  return {
    id: org.id,
    name: org.name,
    username: org.name,
    full_name: org.full_name,
    email: viewer ? org.email : '',
    avatar_url: `${rootUrl}${avatarPath(org)}`,
    description: org.description,
    website: org.website,
    location: org.location,
    visibility: visibilityName(org.visibility),
    repo_admin_change_team_access: org.repo_admin_change_team_access === 1,
  };
}

export function toTeamJson(view: TeamView, org: OrganizationJson | null): TeamJson {
  const unitsMap: Record<string, string> = {};
  const units: string[] = [];
  for (const [unit, mode] of view.units) {
    unitsMap[unit] = accessModeName(mode);
    if (mode > AccessMode.none) units.push(unit);
  }
  return {
    id: view.team.id,
    name: view.team.name,
    description: view.team.description,
    organization: org,
    includes_all_repositories: view.team.includes_all_repositories === 1,
    permission: accessModeName(view.team.authorize),
    units,
    units_map: unitsMap,
    can_create_org_repo: view.team.can_create_org_repo === 1,
  };
}
