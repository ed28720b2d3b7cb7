// Queries on repositories, collaborators, team access and branch records. No HTTP here.
import { sql, type Insertable, type RawBuilder, type Updateable } from 'kysely';
import { nowUnix, type Db, type Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import { preparedQuery } from '../db/prepared.js';
import type { BranchTable, RefIntentTable, RepositoryTable } from './tables.js';
import { Visibility } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import type { RepoRow, BranchRow, DeletedBranchRow, RefIntentRow } from './tables.js';
import { ORDER_BY, type ListFilter } from './list-filter.js';

type Q = Db | Tx;

export async function insert(q: Q, row: Insertable<RepositoryTable>): Promise<number> {
  return (await q.insertInto('repository').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function update(q: Q, id: number, patch: Updateable<RepositoryTable>): Promise<void> {
  await q.updateTable('repository').set(patch).where('id', '=', id).execute();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('repository').where('id', '=', id).execute();
}

const byId = preparedQuery((q, id: number) => q.selectFrom('repository').selectAll().where('id', '=', id));
const byOwnerAndName = preparedQuery((q, ownerLower: string, lower: string) =>
  q
    .selectFrom('repository')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .selectAll('repository')
    .where('user.lower_name', '=', ownerLower)
    .where('repository.lower_name', '=', lower),
);

export async function getById(q: Q, id: number): Promise<RepoRow | undefined> {
  return (await byId(q, id))[0];
}

export async function getByOwnerAndName(q: Q, owner: string, name: string): Promise<RepoRow | undefined> {
  return (await byOwnerAndName(q, owner.toLowerCase(), name.toLowerCase()))[0];
}

export async function getByIds(q: Q, ids: number[]): Promise<Map<number, RepoRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('repository').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function countOwned(q: Q, ownerId: number): Promise<number> {
  const r = await q
    .selectFrom('repository')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function idsOwnedBy(q: Q, ownerId: number): Promise<number[]> {
  return (await q.selectFrom('repository').select('id').where('owner_id', '=', ownerId).execute()).map(
    (r) => r.id,
  );
}

// The filter's vocabulary lives in list-filter.ts (routes and pages read it); kept here for stores.
export { ORDER_BY, type ListFilter, type OrderBy } from './list-filter.js';

/**
 * `value LIKE '%keyword%'` where `%`, `_` and `!` in the keyword match themselves. The escape
 * character is `!`, not a backslash, which MySQL string literals would take as an escape.
 */
function contains(column: RawBuilder<string> | ReturnType<typeof sql.ref>, keyword: string) {
  const pattern = `%${keyword.replace(/[!%_]/g, (c) => `!${c}`)}%`;
  return sql<boolean>`${column} like ${pattern} escape '!'`;
}

/** Repository ids a user reaches without being the owner: collaborations and team access. */
function reachable(q: Q, userId: number) {
  return q
    .selectFrom('collaboration')
    .select('collaboration.repo_id as id')
    .where('collaboration.user_id', '=', userId)
    .union(
      q
        .selectFrom('team_repo')
        .innerJoin('team_user', 'team_user.team_id', 'team_repo.team_id')
        .select('team_repo.repo_id as id')
        .where('team_user.uid', '=', userId),
    )
    .union(
      q
        .selectFrom('repository')
        .innerJoin('team', 'team.org_id', 'repository.owner_id')
        .innerJoin('team_user', 'team_user.team_id', 'team.id')
        .select('repository.id as id')
        .where('team_user.uid', '=', userId)
        .where('team.includes_all_repositories', '=', 1),
    );
}

/** Repositories (joined with their owner as `owner`) that `f` selects. */
function filtered(q: Q, f: ListFilter) {
  let s = q.selectFrom('repository').innerJoin('user as owner', 'owner.id', 'repository.owner_id');
  if (f.ownerId !== undefined) s = s.where('repository.owner_id', '=', f.ownerId);
  if (f.starredBy !== undefined) {
    const uid = f.starredBy;
    s = s.where('repository.id', 'in', (eb) =>
      eb.selectFrom('star').select('star.repo_id').where('star.uid', '=', uid),
    );
  }
  if (f.watchedBy !== undefined) {
    const uid = f.watchedBy;
    s = s.where('repository.id', 'in', (eb) =>
      eb.selectFrom('watch').select('watch.repo_id').where('watch.user_id', '=', uid),
    );
  }
  if (f.keyword) {
    const like = `%${f.keyword.toLowerCase().replace(/\\/g, '')}%`;
    s = s.where((eb) =>
      eb.or([
        eb('repository.lower_name', 'like', like),
        eb(eb.fn('lower', ['repository.description']), 'like', like),
      ]),
    );
  }
  const keywords = (f.keywords ?? []).map((k) => k.toLowerCase());
  if (keywords.length && f.topicOnly) {
    // Keywords are topics, matched whole (as Forgejo's topic search).
    s = s.where('repository.id', 'in', (eb) =>
      eb
        .selectFrom('repo_topic')
        .innerJoin('topic', 'topic.id', 'repo_topic.topic_id')
        .select('repo_topic.repo_id')
        .where('topic.name', 'in', keywords),
    );
  } else if (keywords.length) {
    s = s.where((eb) =>
      eb.or(
        keywords.flatMap((k) => [
          contains(sql.ref('repository.lower_name'), k),
          ...(f.includeDescription
            ? [contains(sql<string>`lower(${sql.ref('repository.description')})`, k)]
            : []),
        ]),
      ),
    );
  }
  if (f.teamId !== undefined) {
    s = s.where(
      'repository.id',
      'in',
      q.selectFrom('team_repo').select('team_repo.repo_id').where('team_repo.team_id', '=', f.teamId),
    );
  }
  if (f.collaboratorOf !== undefined) {
    s = s
      .where('repository.owner_id', '!=', f.collaboratorOf)
      .where('repository.id', 'in', reachable(q, f.collaboratorOf));
  }
  if (f.isPrivate !== undefined) s = s.where('repository.is_private', '=', f.isPrivate ? 1 : 0);
  if (f.isFork !== undefined) s = s.where('repository.is_fork', '=', f.isFork ? 1 : 0);
  if (f.isMirror !== undefined) s = s.where('repository.is_mirror', '=', f.isMirror ? 1 : 0);
  if (f.isArchived !== undefined) s = s.where('repository.is_archived', '=', f.isArchived ? 1 : 0);
  if (f.isTemplate !== undefined) s = s.where('repository.is_template', '=', f.isTemplate ? 1 : 0);
  if (f.forkOf !== undefined) s = s.where('repository.fork_id', '=', f.forkOf);
  if (f.memberOf !== undefined) {
    const uid = f.memberOf;
    s = s.where((eb) =>
      eb.or([eb('repository.owner_id', '=', uid), eb('repository.id', 'in', reachable(q, uid))]),
    );
  }
  if (f.viewerId !== undefined) {
    const uid = f.viewerId;
    const signed = uid !== null && !f.publicOnly;
    const publicOwner = [Visibility.public, ...(signed ? [Visibility.limited] : [])];
    s = s.where((eb) => {
      const open = eb.and([eb('repository.is_private', '=', 0), eb('owner.visibility', 'in', publicOwner)]);
      if (uid === null || !signed) return open;
      const seen = [
        eb('repository.owner_id', '=', uid),
        eb('repository.id', 'in', reachable(q, uid)),
        // Owners of an organization see all of its repositories.
        eb(
          'repository.owner_id',
          'in',
          q
            .selectFrom('team_user')
            .innerJoin('team', 'team.id', 'team_user.team_id')
            .select('team.org_id')
            .where('team_user.uid', '=', uid)
            .where('team.authorize', '=', 4),
        ),
      ];
      // Restricted users see only what they own or were given; others also the public
      // repositories of visible owners and of the organizations they belong to.
      if (!f.restricted) {
        seen.push(
          open,
          eb.and([
            eb('repository.is_private', '=', 0),
            eb(
              'repository.owner_id',
              'in',
              q.selectFrom('org_user').select('org_user.org_id').where('org_user.uid', '=', uid),
            ),
          ]),
        );
      }
      return eb.or(seen);
    });
  }
  return s;
}

export function list(q: Q, f: ListFilter, limit: number, offset: number): Promise<[RepoRow[], number]> {
  const [column, direction] = ORDER_BY[f.orderBy ?? 'id'];
  const ordered = filtered(q, f)
    .selectAll('repository')
    .orderBy(column, direction)
    .orderBy('repository.id', direction);
  return paged(ordered, limit, offset);
}

/** The ids `f` selects, as a subquery for other domains' filters (`column in (...)`). */
export function idsMatching(q: Q, f: ListFilter) {
  return filtered(q, f).select('repository.id');
}

// Access

export async function collaboratorMode(q: Q, repoId: number, userId: number): Promise<number> {
  const r = await q
    .selectFrom('collaboration')
    .select('mode')
    .where('repo_id', '=', repoId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r?.mode ?? 0;
}

/** The teams through which `userId` reaches repository `repoId` of organization `orgId`, with their units. */
export async function teamAccess(
  q: Q,
  orgId: number,
  repoId: number,
  userId: number,
): Promise<Array<{ authorize: number; unit: string | null; mode: number | null }>> {
  return q
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .leftJoin('team_unit', 'team_unit.team_id', 'team.id')
    .select(['team.authorize as authorize', 'team_unit.type as unit', 'team_unit.access_mode as mode'])
    .where('team.org_id', '=', orgId)
    .where('team_user.uid', '=', userId)
    .where((eb) =>
      eb.or([
        eb('team.includes_all_repositories', '=', 1),
        eb('team.id', 'in', q.selectFrom('team_repo').select('team_id').where('repo_id', '=', repoId)),
      ]),
    )
    .execute();
}

/** Everything that decides `userId`'s access to repositories `repoIds` owned by organizations `orgIds`. */
export interface Grants {
  /** The user's teams in those organizations, one row per team and unit. */
  teams: Array<{
    id: number;
    org_id: number;
    authorize: number;
    includes_all_repositories: number;
    unit: string | null;
    mode: number | null;
  }>;
  /** Which of the user's teams hold which of the repositories. */
  teamRepos: Array<{ team_id: number; repo_id: number }>;
  /** Organizations (of `orgIds`) the user is a member of. */
  memberOf: number[];
  /** Collaborations of the user on the repositories. */
  collaborations: Array<{ repo_id: number; mode: number }>;
}

/** Four queries, whatever the number of repositories: for lists without a query per row. */
export async function grants(q: Q, userId: number, orgIds: number[], repoIds: number[]): Promise<Grants> {
  const none = Promise.resolve([]);
  const [teams, teamRepos, members, collaborations] = await Promise.all([
    orgIds.length
      ? q
          .selectFrom('team')
          .innerJoin('team_user', 'team_user.team_id', 'team.id')
          .leftJoin('team_unit', 'team_unit.team_id', 'team.id')
          .select([
            'team.id as id',
            'team.org_id as org_id',
            'team.authorize as authorize',
            'team.includes_all_repositories as includes_all_repositories',
            'team_unit.type as unit',
            'team_unit.access_mode as mode',
          ])
          .where('team_user.uid', '=', userId)
          .where('team.org_id', 'in', orgIds)
          .execute()
      : none,
    orgIds.length && repoIds.length
      ? q
          .selectFrom('team_repo')
          .innerJoin('team_user', 'team_user.team_id', 'team_repo.team_id')
          .select(['team_repo.team_id as team_id', 'team_repo.repo_id as repo_id'])
          .where('team_user.uid', '=', userId)
          .where('team_repo.repo_id', 'in', repoIds)
          .execute()
      : none,
    orgIds.length
      ? q
          .selectFrom('org_user')
          .select('org_id')
          .where('uid', '=', userId)
          .where('org_id', 'in', orgIds)
          .execute()
      : none,
    repoIds.length
      ? q
          .selectFrom('collaboration')
          .select(['repo_id', 'mode'])
          .where('user_id', '=', userId)
          .where('repo_id', 'in', repoIds)
          .execute()
      : none,
  ]);
  return {
    teams: teams as Grants['teams'],
    teamRepos: teamRepos as Grants['teamRepos'],
    memberOf: (members as Array<{ org_id: number }>).map((m) => m.org_id),
    collaborations: collaborations as Grants['collaborations'],
  };
}

export async function setCollaborator(q: Q, repoId: number, userId: number, mode: number): Promise<void> {
  await q
    .insertInto('collaboration')
    .values({ repo_id: repoId, user_id: userId, mode })
    .onConflict((oc) => oc.columns(['repo_id', 'user_id']).doUpdateSet({ mode }))
    .execute();
}

export async function removeCollaborator(q: Q, repoId: number, userId: number): Promise<number> {
  const r = await q
    .deleteFrom('collaboration')
    .where('repo_id', '=', repoId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function listCollaborators(q: Q, repoId: number, limit: number, offset: number) {
  return paged(
    q
      .selectFrom('collaboration')
      .innerJoin('user', 'user.id', 'collaboration.user_id')
      .selectAll('user')
      .select('collaboration.mode as collaboration_mode')
      .where('collaboration.repo_id', '=', repoId)
      .orderBy('user.id'),
    limit,
    offset,
  );
}

export async function addTeamRepo(q: Q, orgId: number, teamId: number, repoId: number): Promise<void> {
  await q
    .insertInto('team_repo')
    .values({ org_id: orgId, team_id: teamId, repo_id: repoId })
    .onConflict((oc) => oc.columns(['team_id', 'repo_id']).doNothing())
    .execute();
}

export async function removeTeamRepo(q: Q, teamId: number, repoId: number): Promise<void> {
  await q.deleteFrom('team_repo').where('team_id', '=', teamId).where('repo_id', '=', repoId).execute();
}

/** Gives a team every repository of its organization it lacks (Forgejo's AddAllRepositories). */
export async function addAllTeamRepos(q: Q, orgId: number, teamId: number): Promise<void> {
  await q
    .insertInto('team_repo')
    .columns(['org_id', 'team_id', 'repo_id'])
    .expression((eb) =>
      eb
        .selectFrom('repository')
        .select([eb.val(orgId).as('org_id'), eb.val(teamId).as('team_id'), 'repository.id as repo_id'])
        .where('repository.owner_id', '=', orgId)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('team_repo as tr')
                .select('tr.id')
                .where('tr.team_id', '=', teamId)
                .whereRef('tr.repo_id', '=', 'repository.id'),
            ),
          ),
        ),
    )
    .execute();
}

/** Takes every repository away from a team (Forgejo's RemoveAllRepositories). */
export async function removeAllTeamRepos(q: Q, teamId: number): Promise<void> {
  await q.deleteFrom('team_repo').where('team_id', '=', teamId).execute();
}

export async function teamHasRepo(q: Q, teamId: number, repoId: number): Promise<boolean> {
  const r = await q
    .selectFrom('team_repo')
    .select('id')
    .where('team_id', '=', teamId)
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return r !== undefined;
}

export function listTeamRepos(q: Q, teamId: number, limit: number, offset: number) {
  return paged(
    q
      .selectFrom('team_repo')
      .innerJoin('repository', 'repository.id', 'team_repo.repo_id')
      .selectAll('repository')
      .where('team_repo.team_id', '=', teamId)
      .orderBy('repository.id'),
    limit,
    offset,
  );
}

// Branch records

export async function upsertBranch(q: Q, row: Insertable<BranchTable>): Promise<void> {
  await q
    .insertInto('branch')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['repo_id', 'name']).doUpdateSet({
        commit_id: row.commit_id,
        commit_message: row.commit_message,
        commit_time: row.commit_time,
        pusher_id: row.pusher_id,
        updated_unix: row.updated_unix,
      }),
    )
    .execute();
}

export async function deleteBranch(q: Q, repoId: number, name: string): Promise<void> {
  await q.deleteFrom('branch').where('repo_id', '=', repoId).where('name', '=', name).execute();
}

/** Deletes the branch row of `name`, kept as a deleted branch (the one before under the name replaced). */
export async function archiveBranch(q: Q, repoId: number, name: string, deletedBy: number): Promise<void> {
  const row = await getBranch(q, repoId, name);
  if (!row) return;
  await forgetDeletedBranch(q, repoId, name);
  await q
    .insertInto('deleted_branch')
    .values({
      repo_id: repoId,
      name,
      commit_id: row.commit_id,
      commit_message: row.commit_message,
      deleted_by_id: deletedBy,
      deleted_unix: nowUnix(),
    })
    .execute();
  await deleteBranch(q, repoId, name);
}

/** A branch made again under its name is no longer a deleted one. */
export async function forgetDeletedBranch(q: Q, repoId: number, name: string): Promise<void> {
  await q.deleteFrom('deleted_branch').where('repo_id', '=', repoId).where('name', '=', name).execute();
}

/** A repository's deleted branches, the most recently deleted first. */
export function deletedBranches(q: Q, repoId: number, limit: number): Promise<DeletedBranchRow[]> {
  return q
    .selectFrom('deleted_branch')
    .selectAll()
    .where('repo_id', '=', repoId)
    .orderBy('deleted_unix', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export function deletedBranch(q: Q, repoId: number, id: number): Promise<DeletedBranchRow | undefined> {
  return q
    .selectFrom('deleted_branch')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listBranches(
  q: Q,
  repoId: number,
  limit: number,
  offset: number,
): Promise<[BranchRow[], number]> {
  return paged(
    q.selectFrom('branch').selectAll().where('repo_id', '=', repoId).orderBy('name'),
    limit,
    offset,
  );
}

export function getBranch(q: Q, repoId: number, name: string): Promise<BranchRow | undefined> {
  return q
    .selectFrom('branch')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** A page of repositories by id (after `afterId`), for measuring them on disk. */
export function sizePage(q: Q, afterId: number, limit: number, ownerId?: number) {
  let s = q
    .selectFrom('repository')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .select([
      'repository.id',
      'repository.owner_id',
      'repository.name',
      'repository.size',
      'user.name as owner_name',
    ])
    .where('repository.id', '>', afterId)
    .orderBy('repository.id')
    .limit(limit);
  if (ownerId !== undefined) s = s.where('repository.owner_id', '=', ownerId);
  return s.execute();
}

/** Bytes of git data per owner and visibility, for quota recalculation. */
export async function sizeTotals(q: Q, ownerId?: number) {
  let s = q
    .selectFrom('repository')
    .select(['owner_id', 'is_private', (eb) => eb.fn.sum<number>('size').as('total')])
    .groupBy(['owner_id', 'is_private']);
  if (ownerId !== undefined) s = s.where('owner_id', '=', ownerId);
  return s.execute();
}

/** Every branch row of a repository (for reconciliation with its refs). */
export function allBranches(q: Q, repoId: number): Promise<BranchRow[]> {
  return q.selectFrom('branch').selectAll().where('repo_id', '=', repoId).execute();
}

/** Repository ids above `afterId`, in order, `limit` of them (walks of every repository). */
export async function idPage(q: Q, afterId: number, limit: number): Promise<number[]> {
  const rows = await q
    .selectFrom('repository')
    .select('id')
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Every repository id, in order (for checks over all repositories). */
export async function allIds(q: Q): Promise<number[]> {
  return (await q.selectFrom('repository').select('id').orderBy('id').execute()).map((r) => r.id);
}

// The intent log of ref changes

export async function insertIntent(q: Q, row: Insertable<RefIntentTable>): Promise<number> {
  return (await q.insertInto('ref_intent').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function markIntentRecorded(q: Q, id: number): Promise<void> {
  await q.updateTable('ref_intent').set({ state: 1 }).where('id', '=', id).execute();
}

export async function deleteIntent(q: Q, id: number): Promise<void> {
  await q.deleteFrom('ref_intent').where('id', '=', id).execute();
}

export function getIntent(q: Q, id: number): Promise<RefIntentRow | undefined> {
  return q.selectFrom('ref_intent').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Intents begun before `createdBefore` (unix seconds), or at any time by the process `node`, with
 * an id above `afterId`, oldest first.
 */
export function intentsBefore(
  q: Q,
  createdBefore: number,
  afterId: number,
  limit: number,
  node?: string,
): Promise<RefIntentRow[]> {
  return q
    .selectFrom('ref_intent')
    .selectAll()
    .where((eb) =>
      node === undefined
        ? eb('created_unix', '<', createdBefore)
        : eb.or([eb('created_unix', '<', createdBefore), eb('node', '=', node)]),
    )
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

// Former owners and names

/** The repository a former `owner/name` leads to. */
export async function redirectOf(q: Q, ownerId: number, name: string): Promise<number | undefined> {
  const r = await q
    .selectFrom('repo_redirect')
    .select('redirect_repo_id')
    .where('owner_id', '=', ownerId)
    .where('lower_name', '=', name.toLowerCase())
    .executeTakeFirst();
  return r?.redirect_repo_id;
}

/** Records that `ownerId`'s former repository `name` now leads to `repoId`. */
export async function setRedirect(q: Q, ownerId: number, name: string, repoId: number): Promise<void> {
  await deleteRedirect(q, ownerId, name);
  await q
    .insertInto('repo_redirect')
    .values({ owner_id: ownerId, lower_name: name.toLowerCase(), redirect_repo_id: repoId })
    .execute();
}

/** A name taken by a repository leads nowhere else any more. */
export async function deleteRedirect(q: Q, ownerId: number, name: string): Promise<void> {
  await q
    .deleteFrom('repo_redirect')
    .where('owner_id', '=', ownerId)
    .where('lower_name', '=', name.toLowerCase())
    .execute();
}

/**
 * The active people with at least `min` access to `unit` of the repository, as access() grants it
 * (the owner; collaborators; in an organization, members of its owner teams, of admin teams holding
 * the repository, and of teams holding it with that unit): one query, by name. `alsoWatchers` adds
 * the repository's watchers.
 */
export function peopleWithAccess(
  q: Q,
  repo: RepoRow,
  unit: string,
  min: number,
  opts: { excludeId?: number; alsoWatchers?: boolean } = {},
): Promise<UserRow[]> {
  let s = q
    .selectFrom('user')
    .selectAll()
    .where('type', '=', 0)
    .where('is_active', '=', 1)
    .where('prohibit_login', '=', 0)
    .where((eb) =>
      eb.or([
        eb('id', '=', repo.owner_id),
        eb(
          'id',
          'in',
          eb
            .selectFrom('collaboration')
            .select('user_id')
            .where('repo_id', '=', repo.id)
            .where('mode', '>=', min),
        ),
        eb(
          'id',
          'in',
          eb
            .selectFrom('team_user')
            .innerJoin('team', 'team.id', 'team_user.team_id')
            .select('team_user.uid')
            .where('team.org_id', '=', repo.owner_id)
            .where((t) =>
              t.or([
                t('team.authorize', '>=', 4),
                t.and([
                  t.or([
                    t('team.includes_all_repositories', '=', 1),
                    t(
                      'team.id',
                      'in',
                      t
                        .selectFrom('team_repo')
                        .select('team_repo.team_id')
                        .where('team_repo.repo_id', '=', repo.id),
                    ),
                  ]),
                  t.or([
                    t.and([t('team.authorize', '>=', 3), t('team.authorize', '>=', min)]),
                    t(
                      'team.id',
                      'in',
                      t
                        .selectFrom('team_unit')
                        .select('team_unit.team_id')
                        .where('team_unit.type', '=', unit)
                        .where('team_unit.access_mode', '>=', min),
                    ),
                  ]),
                ]),
              ]),
            ),
        ),
        ...(opts.alsoWatchers
          ? [
              eb(
                'id',
                'in',
                eb.selectFrom('watch').select('watch.user_id').where('watch.repo_id', '=', repo.id),
              ),
            ]
          : []),
      ]),
    );
  if (opts.excludeId !== undefined) s = s.where('id', '!=', opts.excludeId);
  return s.orderBy('lower_name').execute();
}
