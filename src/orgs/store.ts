// Queries on organization membership and teams. No HTTP here.
import { sql, type Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { TeamTable } from './tables.js';
import type { UserRow } from '../users/tables.js';
import { UserType, Visibility } from '../users/tables.js';
import { AccessMode, type TeamRow, type TeamUnitRow } from './tables.js';

type Q = Db | Tx;

// Declared in tables.ts (routes and pages take them from there); kept importable from here for the
// domains that still do.

export async function orgIdsOfMember(q: Q, uid: number): Promise<number[]> {
  const rows = await q.selectFrom('org_user').select('org_id').where('uid', '=', uid).execute();
  return rows.map((r) => r.org_id);
}

/** Members of the organization's owner teams. */
export async function ownerIds(q: Q, orgId: number): Promise<number[]> {
  const rows = await q
    .selectFrom('team_user')
    .innerJoin('team', 'team.id', 'team_user.team_id')
    .select('team_user.uid')
    .distinct()
    .where('team.org_id', '=', orgId)
    .where('team.authorize', '=', AccessMode.owner)
    .execute();
  return rows.map((r) => r.uid);
}

/**
 * The organizations in which `uid` may create repositories (a team of theirs there owns the
 * organization or may create repositories), by name.
 */
export async function orgsCreatableBy(q: Q, uid: number): Promise<UserRow[]> {
  return q
    .selectFrom('user')
    .selectAll()
    .where('type', '=', UserType.Organization)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('team')
        .innerJoin('team_user', 'team_user.team_id', 'team.id')
        .select('team.org_id')
        .where('team_user.uid', '=', uid)
        .where((e) =>
          e.or([e('team.authorize', '=', AccessMode.owner), e('team.can_create_org_repo', '=', 1)]),
        ),
    )
    .orderBy('lower_name')
    .execute();
}

/** Who may create repositories in the organization: its owners and members of teams allowed to. */
export async function repoCreatorIds(q: Q, orgId: number): Promise<number[]> {
  const rows = await q
    .selectFrom('team_user')
    .innerJoin('team', 'team.id', 'team_user.team_id')
    .select('team_user.uid')
    .distinct()
    .where('team.org_id', '=', orgId)
    .where((eb) =>
      eb.or([eb('team.authorize', '=', AccessMode.owner), eb('team.can_create_org_repo', '=', 1)]),
    )
    .execute();
  return rows.map((r) => r.uid);
}

export async function isOwner(q: Q, orgId: number, uid: number): Promise<boolean> {
  const r = await q
    .selectFrom('team_user')
    .innerJoin('team', 'team.id', 'team_user.team_id')
    .select('team_user.id')
    .where('team.org_id', '=', orgId)
    .where('team.authorize', '=', AccessMode.owner)
    .where('team_user.uid', '=', uid)
    .executeTakeFirst();
  return r !== undefined;
}

export async function membership(q: Q, orgId: number, uid: number) {
  return q
    .selectFrom('org_user')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('uid', '=', uid)
    .executeTakeFirst();
}

export async function addMember(q: Q, orgId: number, uid: number): Promise<void> {
  if (!(await membership(q, orgId, uid))) {
    await q.insertInto('org_user').values({ org_id: orgId, uid, is_public: 0 }).execute();
  }
}

export async function removeMember(q: Q, orgId: number, uid: number): Promise<void> {
  await q.deleteFrom('team_user').where('org_id', '=', orgId).where('uid', '=', uid).execute();
  await q.deleteFrom('org_user').where('org_id', '=', orgId).where('uid', '=', uid).execute();
}

export async function setPublic(q: Q, orgId: number, uid: number, isPublic: boolean): Promise<void> {
  await q
    .updateTable('org_user')
    .set({ is_public: isPublic ? 1 : 0 })
    .where('org_id', '=', orgId)
    .where('uid', '=', uid)
    .execute();
}

/** Members of an organization (optionally only public ones), as user rows, paged. */
export async function listMembers(
  q: Q,
  orgId: number,
  publicOnly: boolean,
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  let s = q
    .selectFrom('org_user')
    .innerJoin('user', 'user.id', 'org_user.uid')
    .where('org_user.org_id', '=', orgId);
  if (publicOnly) s = s.where('org_user.is_public', '=', 1);
  return paged(s.selectAll('user').orderBy('user.id'), limit, offset);
}

/**
 * Organizations with one of the `visibilities`, sorted by name, paged. `memberOf` keeps only those
 * that user belongs to.
 */
export async function listOrgs(
  q: Q,
  opts: { visibilities: number[]; memberOf?: number | undefined },
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  let s = q
    .selectFrom('user')
    .where('type', '=', UserType.Organization)
    .where('visibility', 'in', opts.visibilities);
  const uid = opts.memberOf;
  if (uid !== undefined) {
    s = s.where('id', 'in', (eb) =>
      eb.selectFrom('org_user').select('org_user.org_id').where('org_user.uid', '=', uid),
    );
  }
  return paged(s.selectAll().orderBy('lower_name').orderBy('id'), limit, offset);
}

/**
 * Organizations `uid` belongs to, sorted by name, paged. `publicMembershipOnly` keeps only those
 * where the membership is public; `visibilities` filters on the organizations' own visibility.
 */
export async function listOrgsOfUser(
  q: Q,
  uid: number,
  opts: { publicMembershipOnly: boolean; visibilities: number[] },
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  let s = q
    .selectFrom('org_user')
    .innerJoin('user', 'user.id', 'org_user.org_id')
    .where('org_user.uid', '=', uid)
    .where('user.type', '=', UserType.Organization)
    .where('user.visibility', 'in', opts.visibilities);
  if (opts.publicMembershipOnly) s = s.where('org_user.is_public', '=', 1);
  return paged(s.selectAll('user').orderBy('user.lower_name').orderBy('user.id'), limit, offset);
}

export const ALL_VISIBILITIES = [Visibility.public, Visibility.limited, Visibility.private];

// Teams

export async function insertTeam(q: Q, row: Insertable<TeamTable>): Promise<number> {
  const r = await q.insertInto('team').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export function getTeam(q: Q, id: number): Promise<TeamRow | undefined> {
  return q.selectFrom('team').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getTeams(q: Q, ids: number[]): Promise<TeamRow[]> {
  if (ids.length === 0) return [];
  return q.selectFrom('team').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

export function getTeamByName(q: Q, orgId: number, name: string): Promise<TeamRow | undefined> {
  return q
    .selectFrom('team')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('lower_name', '=', name.toLowerCase())
    .executeTakeFirst();
}

/** Sets the defined fields of `patch`; nothing at all when none is defined. */
export async function updateTeam(q: Q, id: number, patch: Partial<Insertable<TeamTable>>): Promise<void> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  if (Object.keys(set).length === 0) return;
  await q.updateTable('team').set(set).where('id', '=', id).execute();
}

export async function deleteTeam(q: Q, id: number): Promise<void> {
  await q.deleteFrom('team').where('id', '=', id).execute();
}

export interface TeamFilter {
  orgId?: number | undefined;
  /** Only teams this user is a member of. */
  memberId?: number | undefined;
  /** Case-insensitive substring of the name (and of the description with `includeDesc`). */
  keyword?: string | undefined;
  includeDesc?: boolean | undefined;
}

/** Teams matching `f`, paged, sorted as Forgejo does: owners teams first, then by name. */
export async function listTeams(
  q: Q,
  f: TeamFilter,
  limit: number,
  offset: number,
): Promise<[TeamRow[], number]> {
  let s = q.selectFrom('team');
  if (f.orgId !== undefined) s = s.where('team.org_id', '=', f.orgId);
  const uid = f.memberId;
  if (uid !== undefined) {
    s = s.where('team.id', 'in', (eb) =>
      eb.selectFrom('team_user').select('team_user.team_id').where('team_user.uid', '=', uid),
    );
  }
  if (f.keyword) {
    // % and _ stay wildcards (a looser search, never an error); backslashes would be escapes in PostgreSQL.
    const like = `%${f.keyword.toLowerCase().replace(/\\/g, '')}%`;
    s = s.where((eb) =>
      eb.or([
        eb('team.lower_name', 'like', like),
        ...(f.includeDesc ? [eb(eb.fn('lower', ['team.description']), 'like', like)] : []),
      ]),
    );
  }
  const ownersFirst = sql`case when ${sql.ref('team.authorize')} = ${sql.lit(AccessMode.owner)} then 0 else 1 end`;
  return paged(
    s.selectAll('team').orderBy(ownersFirst).orderBy('team.lower_name').orderBy('team.id'),
    limit,
    offset,
  );
}

/**
 * The teams of organization `orgId` with access to its repository `repoId` (added to it, or
 * including all repositories), in the order of listTeams: the owners team first, then by name.
 */
export function listRepoTeams(q: Q, orgId: number, repoId: number): Promise<TeamRow[]> {
  const ownersFirst = sql`case when ${sql.ref('team.authorize')} = ${sql.lit(AccessMode.owner)} then 0 else 1 end`;
  return q
    .selectFrom('team')
    .selectAll('team')
    .where('team.org_id', '=', orgId)
    .where((eb) =>
      eb.or([
        eb('team.includes_all_repositories', '=', 1),
        eb(
          'team.id',
          'in',
          eb.selectFrom('team_repo').select('team_repo.team_id').where('team_repo.repo_id', '=', repoId),
        ),
      ]),
    )
    .orderBy(ownersFirst)
    .orderBy('team.lower_name')
    .orderBy('team.id')
    .execute();
}

export async function teamMemberIds(q: Q, teamId: number): Promise<number[]> {
  const rows = await q.selectFrom('team_user').select('uid').where('team_id', '=', teamId).execute();
  return rows.map((r) => r.uid);
}

/** Units of many teams at once (no N+1 on lists). */
export async function unitsOfTeams(q: Q, teamIds: number[]): Promise<Map<number, TeamUnitRow[]>> {
  const out = new Map<number, TeamUnitRow[]>();
  if (teamIds.length === 0) return out;
  const rows = await q
    .selectFrom('team_unit')
    .selectAll()
    .where('team_id', 'in', teamIds)
    .orderBy('id')
    .execute();
  for (const r of rows) {
    const list = out.get(r.team_id) ?? [];
    list.push(r);
    out.set(r.team_id, list);
  }
  return out;
}

export async function setTeamUnits(
  q: Q,
  orgId: number,
  teamId: number,
  units: ReadonlyArray<readonly [string, number]>,
): Promise<void> {
  await q.deleteFrom('team_unit').where('team_id', '=', teamId).execute();
  if (units.length) {
    await q
      .insertInto('team_unit')
      .values(units.map(([type, mode]) => ({ org_id: orgId, team_id: teamId, type, access_mode: mode })))
      .execute();
  }
}

export async function isTeamMember(q: Q, teamId: number, uid: number): Promise<boolean> {
  const r = await q
    .selectFrom('team_user')
    .select('id')
    .where('team_id', '=', teamId)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return r !== undefined;
}

export async function addTeamMember(q: Q, team: TeamRow, uid: number): Promise<void> {
  await addMember(q, team.org_id, uid);
  if (!(await isTeamMember(q, team.id, uid))) {
    await q.insertInto('team_user').values({ org_id: team.org_id, team_id: team.id, uid }).execute();
  }
}

/** Removes `uid` from the team, and from the organization when no team of it remains. */
export async function removeTeamMember(q: Q, team: TeamRow, uid: number): Promise<void> {
  await q.deleteFrom('team_user').where('team_id', '=', team.id).where('uid', '=', uid).execute();
  await removeTeamless(q, team.org_id, [uid]);
}

/** Removes from the organization those of `uids` who no longer belong to any of its teams. */
export async function removeTeamless(q: Q, orgId: number, uids: number[]): Promise<void> {
  if (uids.length === 0) return;
  await q
    .deleteFrom('org_user')
    .where('org_user.org_id', '=', orgId)
    .where('org_user.uid', 'in', uids)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('team_user')
            .select('team_user.id')
            .where('team_user.org_id', '=', orgId)
            .whereRef('team_user.uid', '=', 'org_user.uid'),
        ),
      ),
    )
    .execute();
}

export async function countTeamMembers(q: Q, teamId: number): Promise<number> {
  const r = await q
    .selectFrom('team_user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listTeamMembers(
  q: Q,
  teamId: number,
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  const s = q
    .selectFrom('team_user')
    .innerJoin('user', 'user.id', 'team_user.uid')
    .where('team_user.team_id', '=', teamId);
  return paged(s.selectAll('user').orderBy('user.id'), limit, offset);
}

/** The highest access any of `uid`'s teams in the organization grants, and whether one may create repositories. */
export async function memberLevel(
  q: Q,
  orgId: number,
  uid: number,
): Promise<{ authorize: number; canCreate: boolean }> {
  const r = await q
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .select((eb) => [
      eb.fn.max('team.authorize').as('authorize'),
      eb.fn.max('team.can_create_org_repo').as('can_create'),
    ])
    .where('team.org_id', '=', orgId)
    .where('team_user.uid', '=', uid)
    .executeTakeFirst();
  return { authorize: Number(r?.authorize ?? 0), canCreate: Number(r?.can_create ?? 0) === 1 };
}

/** The best access a member has to `unit` through their teams (an admin or owner team counts whole). */
export async function teamUnitMode(q: Q, orgId: number, uid: number, unit: string): Promise<number> {
  const rows = await q
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .leftJoin('team_unit', (j) =>
      j.onRef('team_unit.team_id', '=', 'team.id').on('team_unit.type', '=', unit),
    )
    .select(['team.authorize as authorize', 'team_unit.access_mode as mode'])
    .where('team.org_id', '=', orgId)
    .where('team_user.uid', '=', uid)
    .execute();
  let best = 0;
  for (const r of rows) best = Math.max(best, r.authorize >= 3 ? r.authorize : (r.mode ?? 0));
  return best;
}
