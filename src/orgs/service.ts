// Organizations, their members and teams. Permission rules for organizations live here.
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { MovedError, forbidden, invalid, invalidField, methodNotAllowed, notFound } from '../errors.js';
import * as userStore from '../users/store.js';
import * as store from './store.js';
import { checkOwnerName } from '../users/names.js';
import { checkEmail } from '../users/service.js';
import { UserType, Visibility, type VisibilityName } from '../users/tables.js';
import type { OwnedResources } from '../users/owned.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { AccessMode, type AccessModeName } from './tables.js';
import type { TeamRow } from './tables.js';

export const REPO_UNITS = [
  'repo.code',
  'repo.issues',
  'repo.ext_issues',
  'repo.wiki',
  'repo.ext_wiki',
  'repo.pulls',
  'repo.releases',
  'repo.projects',
  'repo.packages',
  'repo.actions',
] as const;
const EXTERNAL_UNITS = new Set(['repo.ext_issues', 'repo.ext_wiki']);

export interface OrgInput {
  username?: string | undefined;
  fullName?: string | undefined;
  email?: string | undefined;
  description?: string | undefined;
  website?: string | undefined;
  location?: string | undefined;
  visibility?: VisibilityName | undefined;
  repoAdminChangeTeamAccess?: boolean | undefined;
  /** Repositories the organization may own (-1: the site's limit); set by site administrators only. */
  maxRepoCreation?: number | undefined;
}

export interface TeamInput {
  name?: string | undefined;
  description?: string | undefined;
  permission?: 'read' | 'write' | 'admin' | undefined;
  units?: string[] | undefined;
  unitsMap?: Record<string, string> | undefined;
  includesAllRepositories?: boolean | undefined;
  canCreateOrgRepo?: boolean | undefined;
}

export interface TeamView {
  team: TeamRow;
  units: Map<string, number>;
}

const TEAM_NAME = /^[\w.-]{1,255}$/;

export interface OrgServiceDeps {
  db: Db;
  /** What other domains report an account owns (an organization is deleted only when it owns nothing). */
  owned: readonly OwnedResources[];
}

/** A viewer's standing in an organization and the counts its tabs show them. */
export interface OrgStanding {
  isMember: boolean;
  isOwner: boolean;
  /** Members the viewer may see. */
  members: number;
  /** Teams, for members; null for anyone else. */
  teams: number | null;
}

export class OrgService {
  private readonly db: Db;
  private readonly owned: readonly OwnedResources[];

  constructor(deps: OrgServiceDeps) {
    this.db = deps.db;
    this.owned = deps.owned;
  }

  /** The organization `name` when `viewer` may see it, else 404. */
  async requireVisibleOrg(name: string, viewer: Viewer | null): Promise<UserRow> {
    const org = await userStore.getByName(this.db, name);
    if (!org) {
      // A former name of an organization the viewer may see leads to its current one.
      const id = await userStore.redirectOf(this.db, name);
      const now = id === undefined ? undefined : await userStore.getById(this.db, id);
      if (now?.type === UserType.Organization && (await this.canSee(viewer, now))) {
        throw new MovedError([name], [now.name]);
      }
    }
    if (!org || org.type !== UserType.Organization || !(await this.canSee(viewer, org))) {
      throw notFound(`organization does not exist [name: ${name}]`);
    }
    return org;
  }

  /**
   * Public organizations are seen by everyone; limited ones by signed-in users, except restricted
   * users who are not members; private ones by members and site administrators.
   */
  async canSee(viewer: Viewer | null, org: UserRow): Promise<boolean> {
    if (org.visibility === Visibility.public) return true;
    if (!viewer || viewer.publicOnly) return false;
    if (viewer.isAdmin) return true;
    if (org.visibility === Visibility.limited && !(await this.isRestricted(viewer))) return true;
    return (await store.membership(this.db, org.id, viewer.id)) !== undefined;
  }

  /** Restricted users see only the organizations they belong to (and public ones directly). */
  private async isRestricted(viewer: Viewer): Promise<boolean> {
    return (await userStore.getById(this.db, viewer.id))?.restricted === 1;
  }

  async isMember(org: UserRow, uid: number): Promise<boolean> {
    return (await store.membership(this.db, org.id, uid)) !== undefined;
  }

  async isOwner(org: UserRow, viewer: Viewer): Promise<boolean> {
    return viewer.isAdmin || store.isOwner(this.db, org.id, viewer.id);
  }

  /**
   * What an organization's tabs show `viewer` (Forgejo's): whether they are a member (site
   * administrators count as one) or an owner, how many members they may see (public ones for
   * outsiders) and, for members only, how many teams there are.
   */
  async standing(org: UserRow, viewer: Viewer | null): Promise<OrgStanding> {
    const isMember = viewer !== null && (viewer.isAdmin || (await this.isMember(org, viewer.id)));
    const isOwner = viewer !== null && (await this.isOwner(org, viewer));
    const [, members] = await store.listMembers(this.db, org.id, !isMember, 1, 0);
    const teams = isMember ? (await store.listTeams(this.db, { orgId: org.id }, 1, 0))[1] : null;
    return { isMember, isOwner, members, teams };
  }

  /**
   * Forgejo's organization unit permission: owners (and site administrators) have full access,
   * other members the best their teams give to `unit` (0 for everyone else).
   */
  async unitMode(org: UserRow, viewer: Viewer | null, unit: string): Promise<number> {
    if (!viewer || viewer.publicOnly) return 0;
    if (await this.isOwner(org, viewer)) return 4;
    return store.teamUnitMode(this.db, org.id, viewer.id, unit);
  }

  async requireOwner(org: UserRow, viewer: Viewer): Promise<void> {
    if (!(await this.isOwner(org, viewer))) throw forbidden('must be an organization owner');
  }

  async requireMember(org: UserRow, viewer: Viewer): Promise<void> {
    if (!viewer.isAdmin && !(await this.isMember(org, viewer.id))) {
      throw forbidden('must be an organization member');
    }
  }

  async create(doer: UserRow, input: OrgInput): Promise<UserRow> {
    const name = input.username ?? '';
    checkOwnerName(name);
    if (!doer.is_admin && !doer.allow_create_organization) {
      throw forbidden('user is not allowed to create organizations');
    }
    if (input.email) checkEmail(input.email);
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      if (await userStore.getByName(tx, name))
        throw invalidField('username', `user already exists [name: ${name}]`);
      await userStore.deleteRedirect(tx, name);
      const orgId = await userStore.insert(tx, {
        name,
        lower_name: name.toLowerCase(),
        full_name: input.fullName ?? '',
        email: input.email ?? '',
        lower_email: (input.email ?? '').toLowerCase(),
        type: UserType.Organization,
        visibility: Visibility[input.visibility ?? 'public'],
        description: input.description ?? '',
        website: input.website ?? '',
        location: input.location ?? '',
        repo_admin_change_team_access: input.repoAdminChangeTeamAccess ? 1 : 0,
        created_unix: now,
        updated_unix: now,
      });
      const teamId = await store.insertTeam(tx, {
        org_id: orgId,
        name: 'Owners',
        lower_name: 'owners',
        description: '',
        authorize: AccessMode.owner,
        includes_all_repositories: 1,
        can_create_org_repo: 1,
        created_unix: now,
      });
      await store.setTeamUnits(
        tx,
        orgId,
        teamId,
        REPO_UNITS.map((u) => [u, AccessMode.owner]),
      );
      const team = (await store.getTeam(tx, teamId))!;
      await store.addTeamMember(tx, team, doer.id);
      return (await userStore.getById(tx, orgId))!;
    });
  }

  async edit(org: UserRow, input: OrgInput): Promise<UserRow> {
    if (input.email) checkEmail(input.email);
    await userStore.update(this.db, org.id, {
      full_name: input.fullName,
      email: input.email,
      lower_email: input.email?.toLowerCase(),
      description: input.description,
      website: input.website,
      location: input.location,
      visibility: input.visibility === undefined ? undefined : Visibility[input.visibility],
      repo_admin_change_team_access:
        input.repoAdminChangeTeamAccess === undefined ? undefined : input.repoAdminChangeTeamAccess ? 1 : 0,
      max_repo_creation: input.maxRepoCreation,
      updated_unix: nowUnix(),
    });
    return (await userStore.getById(this.db, org.id))!;
  }

  /**
   * What `user` may do in the organization, from the highest access of their teams (Forgejo's
   * OrganizationPermissions): read, write, admin, owner, and whether they may create repositories.
   */
  async permissionsOf(org: UserRow, user: UserRow) {
    const { authorize, canCreate } = await store.memberLevel(this.db, org.id, user.id);
    return {
      can_read: authorize > AccessMode.none,
      can_write: authorize > AccessMode.read,
      is_admin: authorize > AccessMode.write,
      is_owner: authorize > AccessMode.admin,
      can_create_repository: authorize >= AccessMode.owner || canCreate,
    };
  }

  /** Deletes an organization that owns nothing any more (422 otherwise). */
  async delete(org: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      for (const o of this.owned) {
        if ((await o.count(tx, org.id)) > 0) {
          throw invalid(
            `organization still owns ${o.label} [name: ${org.name}]: delete or transfer them first`,
          );
        }
      }
      await userStore.remove(tx, org.id);
    });
  }

  /**
   * Organizations listed to `viewer`, as Forgejo lists them: public ones to anonymous callers and
   * public-only tokens; public and limited ones to signed-in users (private ones never, members or
   * not), restricted users seeing only those they belong to; all of them to site administrators.
   */
  async listOrgs(viewer: Viewer | null, limit: number, offset: number) {
    if (!viewer || viewer.publicOnly) {
      return store.listOrgs(this.db, { visibilities: [Visibility.public] }, limit, offset);
    }
    if (viewer.isAdmin)
      return store.listOrgs(this.db, { visibilities: store.ALL_VISIBILITIES }, limit, offset);
    const memberOf = (await this.isRestricted(viewer)) ? viewer.id : undefined;
    return store.listOrgs(
      this.db,
      { visibilities: [Visibility.public, Visibility.limited], memberOf },
      limit,
      offset,
    );
  }

  /**
   * Organizations of `user` as seen by `viewer`: all of them for the user and admins; for everyone
   * else the public organizations where the membership is public, as in Forgejo.
   */
  listOrgsOfUser(user: UserRow, viewer: Viewer | null, limit: number, offset: number) {
    const self = viewer !== null && !viewer.publicOnly && (viewer.id === user.id || viewer.isAdmin);
    return store.listOrgsOfUser(
      this.db,
      user.id,
      {
        publicMembershipOnly: !self,
        visibilities: self ? store.ALL_VISIBILITIES : [Visibility.public],
      },
      limit,
      offset,
    );
  }

  /** Members: everyone for members and admins, public members for the rest. */
  async listMembers(org: UserRow, viewer: Viewer | null, limit: number, offset: number) {
    const all = viewer !== null && (viewer.isAdmin || (await this.isMember(org, viewer.id)));
    return store.listMembers(this.db, org.id, !all, limit, offset);
  }

  listPublicMembers(org: UserRow, limit: number, offset: number) {
    return store.listMembers(this.db, org.id, true, limit, offset);
  }

  /** Whether `user` is shown as a member of `org` to `viewer`. */
  async showsMember(
    org: UserRow,
    user: UserRow,
    viewer: Viewer | null,
    publicOnly: boolean,
  ): Promise<boolean> {
    const m = await store.membership(this.db, org.id, user.id);
    if (!m) return false;
    if (m.is_public) return true;
    if (publicOnly || viewer === null) return false;
    return viewer.isAdmin || viewer.id === user.id || (await this.isMember(org, viewer.id));
  }

  /** Removes `user` from the organization and its teams; removing a non-member does nothing, as in Forgejo. */
  async removeMember(org: UserRow, user: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      if (!(await store.membership(tx, org.id, user.id))) return;
      const owners = await store.ownerIds(tx, org.id);
      if (owners.length === 1 && owners[0] === user.id) {
        throw invalid('cannot remove the last owner of an organization');
      }
      await store.removeMember(tx, org.id, user.id);
    });
  }

  async setPublicMembership(org: UserRow, user: UserRow, doer: Viewer, isPublic: boolean): Promise<void> {
    if (user.id !== doer.id) {
      throw forbidden(isPublic ? 'Cannot publicize another member' : 'Cannot conceal another member');
    }
    if (!(await this.isMember(org, user.id))) {
      throw notFound(`user is not a member of the organization [name: ${user.name}]`);
    }
    await store.setPublic(this.db, org.id, user.id, isPublic);
  }

  // Teams

  /**
   * Team units from the create/edit options, and the team's overall access mode, as Forgejo sets
   * them: an admin permission (asked for or kept) gives admin on every unit; below admin, a
   * units_map sets each unit and the permission becomes the lowest access it grants (external
   * units aside); otherwise the listed units (or, on edit, the current ones) get the permission.
   * Null on edit when neither changes.
   */
  private unitsOf(
    input: TeamInput,
    current?: TeamView,
  ): { authorize: number; units: [string, number][] } | null {
    const map = input.unitsMap && Object.keys(input.unitsMap).length ? input.unitsMap : undefined;
    if (current && input.permission === undefined && input.units === undefined && !map) return null;
    const mapped = map ? parseUnitsMap(map) : undefined;
    for (const unit of input.units ?? []) {
      if (!isUnit(unit)) throw invalidField('units', `unknown unit ${unit}`);
    }
    let authorize: number =
      input.permission !== undefined
        ? AccessMode[input.permission]
        : current
          ? current.team.authorize
          : AccessMode.read;
    if (mapped && authorize < AccessMode.admin) authorize = lowestAccess(mapped);
    const unitMode = (unit: string) =>
      EXTERNAL_UNITS.has(unit) ? AccessMode.read : Math.min(authorize, AccessMode.admin);
    if (authorize >= AccessMode.admin) {
      return { authorize, units: REPO_UNITS.map((u) => [u, unitMode(u)] as [string, number]) };
    }
    if (mapped) return { authorize, units: mapped };
    const names = input.units ?? (current ? [...current.units.keys()] : [...REPO_UNITS]);
    return { authorize, units: [...new Set(names)].map((u) => [u, unitMode(u)] as [string, number]) };
  }

  async createTeam(org: UserRow, input: TeamInput): Promise<TeamView> {
    const name = (input.name ?? '').trim();
    if (!TEAM_NAME.test(name)) throw invalidField('name', `team name is invalid [name: ${name}]`);
    const { authorize, units } = this.unitsOf(input)!;
    return transaction(this.db, async (tx) => {
      if (await store.getTeamByName(tx, org.id, name)) {
        throw invalidField('name', `team already exists [org: ${org.name}, name: ${name}]`);
      }
      const id = await store.insertTeam(tx, {
        org_id: org.id,
        name,
        lower_name: name.toLowerCase(),
        description: input.description ?? '',
        authorize,
        includes_all_repositories: input.includesAllRepositories ? 1 : 0,
        can_create_org_repo: input.canCreateOrgRepo ? 1 : 0,
        created_unix: nowUnix(),
      });
      await store.setTeamUnits(tx, org.id, id, units);
      return { team: (await store.getTeam(tx, id))!, units: new Map(units) };
    });
  }

  async editTeam(view: TeamView, input: TeamInput): Promise<TeamView> {
    const team = view.team;
    const owners = team.authorize === AccessMode.owner;
    // An empty name leaves the name as it is, as in Forgejo.
    const name = input.name ? input.name.trim() : undefined;
    if (name !== undefined && !TEAM_NAME.test(name))
      throw invalidField('name', `team name is invalid [name: ${name}]`);
    // The owners team keeps its name and its owner access.
    const next = owners ? null : this.unitsOf(input, view);
    return transaction(this.db, async (tx) => {
      if (name !== undefined && !owners && name.toLowerCase() !== team.lower_name) {
        if (await store.getTeamByName(tx, team.org_id, name)) {
          throw invalidField('name', `team already exists [name: ${name}]`);
        }
      }
      await store.updateTeam(tx, team.id, {
        name: owners ? undefined : name,
        lower_name: owners ? undefined : name?.toLowerCase(),
        description: input.description,
        authorize: next?.authorize,
        includes_all_repositories:
          owners || input.includesAllRepositories === undefined
            ? undefined
            : input.includesAllRepositories
              ? 1
              : 0,
        can_create_org_repo:
          owners || input.canCreateOrgRepo === undefined ? undefined : input.canCreateOrgRepo ? 1 : 0,
      });
      if (next) await store.setTeamUnits(tx, team.org_id, team.id, next.units);
      return (await this.teamViews([(await store.getTeam(tx, team.id))!], tx))[0]!;
    });
  }

  /** Deletes a team; its members who are then in no team of the organization leave it, as in Forgejo. */
  async deleteTeam(team: TeamRow): Promise<void> {
    if (team.authorize === AccessMode.owner) throw invalid('the owners team cannot be deleted');
    await transaction(this.db, async (tx) => {
      const members = await store.teamMemberIds(tx, team.id);
      await store.deleteTeam(tx, team.id);
      await store.removeTeamless(tx, team.org_id, members);
    });
  }

  /** Units for a list of teams in one query (inside `q` when given a transaction). */
  /** Who may create repositories in the organization (owners, teams allowed to). */
  repoCreatorIds(orgId: number): Promise<number[]> {
    return store.repoCreatorIds(this.db, orgId);
  }

  /** Teams by id (those that still exist), oldest first. */
  getTeams(ids: number[]): Promise<TeamRow[]> {
    return store.getTeams(this.db, ids);
  }

  async teamViews(teams: TeamRow[], q: Db | Tx = this.db): Promise<TeamView[]> {
    const units = await store.unitsOfTeams(
      q,
      teams.map((t) => t.id),
    );
    return teams.map((team) => ({
      team,
      units: new Map((units.get(team.id) ?? []).map((u) => [u.type, u.access_mode])),
    }));
  }

  /**
   * The team `id` for `viewer`: org owners, admins and the team's members may see it; other
   * organization members get 403; everyone else 404.
   */
  async requireTeam(id: number, viewer: Viewer): Promise<{ team: TeamRow; org: UserRow }> {
    const team = await store.getTeam(this.db, id);
    if (!team) throw notFound(`team does not exist [id: ${id}]`);
    const org = (await userStore.getById(this.db, team.org_id))!;
    if (viewer.isAdmin || (await store.isOwner(this.db, org.id, viewer.id))) return { team, org };
    if (await store.isTeamMember(this.db, team.id, viewer.id)) return { team, org };
    if (await this.isMember(org, viewer.id)) throw forbidden('must be a team member');
    throw notFound(`team does not exist [id: ${id}]`);
  }

  /** The team called `name` (any case) of `org`, for `viewer` as `requireTeam` decides. */
  async requireTeamNamed(org: UserRow, name: string, viewer: Viewer): Promise<TeamRow> {
    const team = await store.getTeamByName(this.db, org.id, name);
    if (!team) throw notFound(`team does not exist [org: ${org.name}, name: ${name}]`);
    return (await this.requireTeam(team.id, viewer)).team;
  }

  /** The ids of the organization's public members (the web members list marks them). */
  async publicMemberIds(org: UserRow): Promise<Set<number>> {
    const [rows] = await store.listMembers(this.db, org.id, true, 10000, 0);
    return new Set(rows.map((u) => u.id));
  }

  /** Organizations by id, for lists of teams across organizations (one query). */
  orgsByIds(ids: number[]) {
    return userStore.getByIds(this.db, ids);
  }

  listTeams(org: UserRow, limit: number, offset: number) {
    return store.listTeams(this.db, { orgId: org.id }, limit, offset);
  }

  /**
   * Teams of the organization matching `keyword` in their name (and description unless
   * `includeDesc` is false). As in Forgejo, only site administrators search all teams; everyone
   * else searches the teams they are a member of.
   */
  searchTeams(
    org: UserRow,
    viewer: Viewer,
    opts: { keyword?: string | undefined; includeDesc?: boolean | undefined },
    limit: number,
    offset: number,
  ) {
    return store.listTeams(
      this.db,
      {
        orgId: org.id,
        memberId: viewer.isAdmin ? undefined : viewer.id,
        keyword: opts.keyword?.trim(),
        includeDesc: opts.includeDesc ?? true,
      },
      limit,
      offset,
    );
  }

  // Teams of a repository

  /** The organization that owns a repository; 405 when its owner is not one (as Forgejo answers). */
  async orgOfRepo(repo: { owner_id: number }): Promise<UserRow> {
    const org = await userStore.getById(this.db, repo.owner_id);
    if (org?.type !== UserType.Organization) throw methodNotAllowed('repo is not owned by an organization');
    return org;
  }

  /** The teams with access to an organization's repository (405 for other repositories). */
  async repoTeams(repo: { id: number; owner_id: number }): Promise<TeamRow[]> {
    const org = await this.orgOfRepo(repo);
    return store.listRepoTeams(this.db, org.id, repo.id);
  }

  /** Team `name` of the organization that owns `repo`: 405 for other repositories, 404 when none. */
  async repoOrgTeam(repo: { owner_id: number }, name: string): Promise<{ org: UserRow; team: TeamRow }> {
    const org = await this.orgOfRepo(repo);
    const team = await store.getTeamByName(this.db, org.id, name);
    if (!team) throw notFound(`team does not exist [org: ${org.name}, name: ${name}]`);
    return { org, team };
  }

  /**
   * Whether a repository administrator may add teams to the organization's repository or take
   * them away (Forgejo: the organization allows repository admins to, or they own the repository).
   */
  requireTeamAccessChanger(org: UserRow, repoAccessMode: number): void {
    if (!org.repo_admin_change_team_access && repoAccessMode < AccessMode.owner) {
      throw forbidden('user is nor repo admin nor owner');
    }
  }

  listTeamsOfUser(user: UserRow, limit: number, offset: number) {
    return store.listTeams(this.db, { memberId: user.id }, limit, offset);
  }

  listTeamMembers(team: TeamRow, limit: number, offset: number) {
    return store.listTeamMembers(this.db, team.id, limit, offset);
  }

  isTeamMember(team: TeamRow, uid: number) {
    return store.isTeamMember(this.db, team.id, uid);
  }

  async addTeamMember(team: TeamRow, user: UserRow): Promise<void> {
    if (user.type !== UserType.Individual) throw invalid('only individual users can be team members');
    await transaction(this.db, (tx) => store.addTeamMember(tx, team, user.id));
  }

  /** Removes `user` from the team (and the organization, with no team left); a non-member is a no-op, as in Forgejo. */
  async removeTeamMember(team: TeamRow, user: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      if (!(await store.isTeamMember(tx, team.id, user.id))) return;
      if (team.authorize === AccessMode.owner && (await store.countTeamMembers(tx, team.id)) <= 1) {
        throw invalid('cannot remove the last owner of an organization');
      }
      await store.removeTeamMember(tx, team, user.id);
    });
  }
}

function isUnit(unit: string): boolean {
  return (REPO_UNITS as readonly string[]).includes(unit);
}

/** units_map entries as [unit, mode]; unknown units and modes are a 422. External units are at most read. */
function parseUnitsMap(map: Record<string, string>): [string, number][] {
  return Object.entries(map).map(([unit, modeName]) => {
    if (!isUnit(unit)) throw invalidField('units_map', `unknown unit ${unit}`);
    const mode = Object.hasOwn(AccessMode, modeName) ? AccessMode[modeName as AccessModeName] : undefined;
    if (mode === undefined || mode === AccessMode.owner) {
      throw invalidField('units_map', `invalid access mode ${modeName} for ${unit}`);
    }
    return [unit, EXTERNAL_UNITS.has(unit) ? Math.min(mode, AccessMode.read) : mode];
  });
}

/** The lowest access above none among the (non-external) units; none when there is none. */
function lowestAccess(units: [string, number][]): number {
  let min: number = AccessMode.none;
  for (const [unit, mode] of units) {
    if (EXTERNAL_UNITS.has(unit)) continue;
    if (mode > AccessMode.none && (min === AccessMode.none || mode < min)) min = mode;
  }
  return min;
}
