// Forgejo's permission rules for one repository, given the viewer's grants (pure: the queries are
// RepoService.accessMany's).
import { AccessMode } from '../orgs/tables.js';
import { REPO_UNITS } from '../orgs/service.js';
import type { Viewer } from '../users/tables.js';
import { UserType, Visibility, type UserRow } from '../users/tables.js';
import type { Grants } from './store.js';
import type { RepoRow } from './tables.js';

export interface RepoAccess {
  /** Highest access mode over all units: 0 none, 1 read, 2 write, 3 admin, 4 owner. */
  mode: number;
  units: Map<string, number>;
}

/**
 * Forgejo's permission rules for one repository: public repositories of visible owners are
 * readable by all but restricted users; owners and site administrators have everything; organization owners too;
 * teams give their units (admin teams all units) on their repositories; members of an
 * organization read its public repositories; collaborators get their mode on every unit.
 */
export function accessOf(
  repo: RepoRow,
  owner: UserRow,
  viewer: Viewer | null,
  grants: Grants | undefined,
  restricted = false,
): RepoAccess {
  const all = (mode: number): RepoAccess => ({ mode, units: new Map(REPO_UNITS.map((u) => [u, mode])) });
  const signed = viewer !== null && !viewer.publicOnly;
  const ownerVisible =
    owner.visibility === Visibility.public || (owner.visibility === Visibility.limited && signed);
  // Restricted users read only what they were given, not every public repository.
  const publicRead = !repo.is_private && ownerVisible && !restricted ? AccessMode.read : AccessMode.none;
  if (!viewer || !signed) return all(publicRead);
  // An actions job token: write to its own repository, only what anyone may read elsewhere.
  if (viewer.repoId !== undefined) return all(viewer.repoId === repo.id ? AccessMode.write : publicRead);
  if (viewer.isAdmin || viewer.id === repo.owner_id) return all(AccessMode.owner);
  const units = new Map<string, number>(REPO_UNITS.map((u) => [u, publicRead]));
  const raise = (unit: string, mode: number) => {
    if ((units.get(unit) ?? 0) < mode) units.set(unit, mode);
  };
  if (grants && owner.type === UserType.Organization) {
    const orgTeams = grants.teams.filter((t) => t.org_id === owner.id);
    if (orgTeams.some((t) => t.authorize >= AccessMode.owner)) return all(AccessMode.owner);
    for (const t of orgTeams) {
      const holds =
        t.includes_all_repositories === 1 ||
        grants.teamRepos.some((tr) => tr.team_id === t.id && tr.repo_id === repo.id);
      if (!holds) continue;
      if (t.authorize >= AccessMode.admin) {
        for (const u of REPO_UNITS) raise(u, t.authorize);
      } else if (t.unit && t.mode !== null) {
        raise(t.unit, t.mode);
      }
    }
    // A private organization's members see its public repositories.
    if (!repo.is_private && !restricted && grants.memberOf.includes(owner.id)) {
      for (const u of REPO_UNITS) raise(u, AccessMode.read);
    }
  }
  const collab = grants?.collaborations.find((c) => c.repo_id === repo.id);
  if (collab) for (const u of REPO_UNITS) raise(u, collab.mode);
  return { mode: Math.max(AccessMode.none, ...units.values()), units };
}
