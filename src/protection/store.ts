// Queries on branch protection rules and their allow-lists. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { UserType } from '../users/tables.js';
import type { ProtectedBranchTable, ProtectedTagTable, WhitelistKind } from './tables.js';
import type { RuleRow, TagRuleRow } from './tables.js';

type Q = Db | Tx;

export interface WhitelistRow {
  rule_id: number;
  kind: WhitelistKind;
  user_id: number | null;
  team_id: number | null;
  /** The user's or the team's name. */
  name: string;
}

export function listRules(q: Q, repoId: number): Promise<RuleRow[]> {
  return q.selectFrom('protected_branch').selectAll().where('repo_id', '=', repoId).orderBy('id').execute();
}

export function getRule(q: Q, repoId: number, ruleName: string): Promise<RuleRow | undefined> {
  return q
    .selectFrom('protected_branch')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('rule_name', '=', ruleName)
    .executeTakeFirst();
}

export async function insertRule(q: Q, row: Insertable<ProtectedBranchTable>): Promise<number> {
  return (await q.insertInto('protected_branch').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function updateRule(q: Q, id: number, patch: Updateable<ProtectedBranchTable>): Promise<void> {
  await q.updateTable('protected_branch').set(patch).where('id', '=', id).execute();
}

export async function deleteRule(q: Q, id: number): Promise<void> {
  await q.deleteFrom('protected_branch').where('id', '=', id).execute();
}

/** The allow-list entries of many rules at once, with the names of their users and teams. */
export async function whitelistsOf(q: Q, ruleIds: number[]): Promise<WhitelistRow[]> {
  if (ruleIds.length === 0) return [];
  const rows = await q
    .selectFrom('protected_branch_whitelist as w')
    .leftJoin('user as u', 'u.id', 'w.user_id')
    .leftJoin('team as t', 't.id', 'w.team_id')
    .select(['w.rule_id', 'w.kind', 'w.user_id', 'w.team_id', 'u.name as user_name', 't.name as team_name'])
    .where('w.rule_id', 'in', ruleIds)
    .orderBy('w.id')
    .execute();
  return rows.map((r) => ({
    rule_id: r.rule_id,
    kind: r.kind,
    user_id: r.user_id,
    team_id: r.team_id,
    name: (r.user_id !== null ? r.user_name : r.team_name) ?? '',
  }));
}

/** Replaces the users (or the teams) of one list of a rule. */
export async function replaceWhitelist(
  q: Q,
  ruleId: number,
  kind: WhitelistKind,
  who: 'user' | 'team',
  ids: number[],
): Promise<void> {
  const column = who === 'user' ? 'user_id' : 'team_id';
  await q
    .deleteFrom('protected_branch_whitelist')
    .where('rule_id', '=', ruleId)
    .where('kind', '=', kind)
    .where(column, 'is not', null)
    .execute();
  if (ids.length === 0) return;
  await q
    .insertInto('protected_branch_whitelist')
    .values(
      ids.map((id) => ({
        rule_id: ruleId,
        kind,
        user_id: who === 'user' ? id : null,
        team_id: who === 'team' ? id : null,
      })),
    )
    .execute();
}

/** Drops the teams of organizations other than `ownerId` from every list of a repository's rules. */
export async function dropForeignTeams(q: Q, repoId: number, ownerId: number): Promise<void> {
  await q
    .deleteFrom('protected_branch_whitelist')
    .where('rule_id', 'in', (eb) =>
      eb.selectFrom('protected_branch').select('id').where('repo_id', '=', repoId),
    )
    .where('team_id', 'is not', null)
    .where('team_id', 'not in', (eb) => eb.selectFrom('team').select('id').where('org_id', '=', ownerId))
    .execute();
}

/** Individual users by (case-insensitive) name. */
export async function individualsByNames(q: Q, names: string[]) {
  if (names.length === 0) return [];
  return q
    .selectFrom('user')
    .selectAll()
    .where(
      'lower_name',
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .where('type', '=', UserType.Individual)
    .execute();
}

/** Teams of an organization by (case-insensitive) name, with whether each can reach the repository. */
export async function teamsByNames(q: Q, orgId: number, repoId: number, names: string[]) {
  if (names.length === 0) return [];
  return q
    .selectFrom('team')
    .select((eb) => [
      'team.id',
      'team.name',
      'team.lower_name',
      eb
        .or([
          eb('team.includes_all_repositories', '=', 1),
          eb.exists(
            eb
              .selectFrom('team_repo')
              .select('team_repo.id')
              .whereRef('team_repo.team_id', '=', 'team.id')
              .where('team_repo.repo_id', '=', repoId),
          ),
        ])
        .as('has_repo'),
    ])
    .where('team.org_id', '=', orgId)
    .where(
      'team.lower_name',
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .execute();
}

/** Whether `uid` belongs to any of the teams. */
export async function inAnyTeam(q: Q, uid: number, teamIds: number[]): Promise<boolean> {
  if (teamIds.length === 0) return false;
  const r = await q
    .selectFrom('team_user')
    .select('id')
    .where('uid', '=', uid)
    .where('team_id', 'in', teamIds)
    .executeTakeFirst();
  return r !== undefined;
}

// Tag protection rules

/** One allow-list entry of a tag rule, with the name of its user or team. */
export interface TagWhitelistRow {
  tag_rule_id: number;
  user_id: number | null;
  team_id: number | null;
  name: string;
}

export function listTagRules(q: Q, repoId: number): Promise<TagRuleRow[]> {
  return q.selectFrom('protected_tag').selectAll().where('repo_id', '=', repoId).orderBy('id').execute();
}

export function getTagRule(q: Q, repoId: number, id: number): Promise<TagRuleRow | undefined> {
  return q
    .selectFrom('protected_tag')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function getTagRuleByPattern(q: Q, repoId: number, pattern: string): Promise<TagRuleRow | undefined> {
  return q
    .selectFrom('protected_tag')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('name_pattern', '=', pattern)
    .executeTakeFirst();
}

export async function insertTagRule(q: Q, row: Insertable<ProtectedTagTable>): Promise<number> {
  return (await q.insertInto('protected_tag').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function updateTagRule(q: Q, id: number, patch: Updateable<ProtectedTagTable>): Promise<void> {
  await q.updateTable('protected_tag').set(patch).where('id', '=', id).execute();
}

export async function deleteTagRule(q: Q, id: number): Promise<void> {
  await q.deleteFrom('protected_tag').where('id', '=', id).execute();
}

/** The allow-list entries of many tag rules at once, with the names of their users and teams. */
export async function tagWhitelistsOf(q: Q, ruleIds: number[]): Promise<TagWhitelistRow[]> {
  if (ruleIds.length === 0) return [];
  const rows = await q
    .selectFrom('protected_tag_whitelist as w')
    .leftJoin('user as u', 'u.id', 'w.user_id')
    .leftJoin('team as t', 't.id', 'w.team_id')
    .select(['w.tag_rule_id', 'w.user_id', 'w.team_id', 'u.name as user_name', 't.name as team_name'])
    .where('w.tag_rule_id', 'in', ruleIds)
    .orderBy('w.id')
    .execute();
  return rows.map((r) => ({
    tag_rule_id: r.tag_rule_id,
    user_id: r.user_id,
    team_id: r.team_id,
    name: (r.user_id !== null ? r.user_name : r.team_name) ?? '',
  }));
}

/** Replaces the users (or the teams) allow-listed by a tag rule. */
export async function replaceTagWhitelist(
  q: Q,
  ruleId: number,
  who: 'user' | 'team',
  ids: number[],
): Promise<void> {
  const column = who === 'user' ? 'user_id' : 'team_id';
  await q
    .deleteFrom('protected_tag_whitelist')
    .where('tag_rule_id', '=', ruleId)
    .where(column, 'is not', null)
    .execute();
  if (ids.length === 0) return;
  await q
    .insertInto('protected_tag_whitelist')
    .values(
      ids.map((id) => ({
        tag_rule_id: ruleId,
        user_id: who === 'user' ? id : null,
        team_id: who === 'team' ? id : null,
      })),
    )
    .execute();
}

/** Drops the teams of organizations other than `ownerId` from the tag rules of a repository. */
export async function dropForeignTagTeams(q: Q, repoId: number, ownerId: number): Promise<void> {
  await q
    .deleteFrom('protected_tag_whitelist')
    .where('tag_rule_id', 'in', (eb) =>
      eb.selectFrom('protected_tag').select('id').where('repo_id', '=', repoId),
    )
    .where('team_id', 'is not', null)
    .where('team_id', 'not in', (eb) => eb.selectFrom('team').select('id').where('org_id', '=', ownerId))
    .execute();
}

/**
 * Copies the repository's branch protection rules, with their allowlists, to another repository
 * owned by `toOwnerId` (a repository generated from a template); teams of another owner are dropped.
 */
export async function copyRules(
  q: Q,
  fromRepoId: number,
  toRepoId: number,
  toOwnerId: number,
): Promise<void> {
  const rules = await listRules(q, fromRepoId);
  const lists = await whitelistsOf(
    q,
    rules.map((r) => r.id),
  );
  for (const { id, ...rule } of rules) {
    const newId = await insertRule(q, { ...rule, repo_id: toRepoId });
    for (const w of lists.filter((l) => l.rule_id === id)) {
      await q
        .insertInto('protected_branch_whitelist')
        .values({ rule_id: newId, kind: w.kind, user_id: w.user_id, team_id: w.team_id })
        .execute();
    }
  }
  await dropForeignTeams(q, toRepoId, toOwnerId);
}
