// Queries on quota rules, groups, memberships and usage totals. No HTTP here.
import { SqliteAdapter, sql, type InsertResult } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { UserRow } from '../users/tables.js';
import type { Group, Rule } from './evaluate.js';
import type { LeafSubject, Subject } from './subjects.js';

type Q = Db | Tx;

/**
 * The inserts below use ON CONFLICT DO NOTHING and report whether a row was added: of several
 * writers racing to add the same key, exactly one gets `true`, and none fails on the constraint.
 */
const inserted = (r: InsertResult | undefined) => Number(r?.numInsertedOrUpdatedRows ?? 0) > 0;

interface RuleRow {
  name: string;
  limit_size: number;
  subjects: string;
}

const toRule = (r: RuleRow): Rule => ({
  name: r.name,
  limit: Number(r.limit_size),
  subjects: JSON.parse(r.subjects) as Subject[],
});

// Rules

export async function listRules(q: Q): Promise<Rule[]> {
  return (await q.selectFrom('quota_rule').selectAll().orderBy('name').execute()).map(toRule);
}

export async function getRule(q: Q, name: string): Promise<Rule | undefined> {
  const r = await q.selectFrom('quota_rule').selectAll().where('name', '=', name).executeTakeFirst();
  return r && toRule(r);
}

/** Adds a rule unless one of that name exists; whether it was added. */
export async function insertRule(q: Q, rule: Rule): Promise<boolean> {
  return inserted(
    await q
      .insertInto('quota_rule')
      .values({ name: rule.name, limit_size: rule.limit, subjects: JSON.stringify(rule.subjects) })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst(),
  );
}

export async function updateRule(
  q: Q,
  name: string,
  patch: { limit?: number | undefined; subjects?: Subject[] | undefined },
): Promise<void> {
  // An UPDATE with nothing to set is not valid SQL: an empty patch changes nothing.
  if (patch.limit === undefined && patch.subjects === undefined) return;
  await q
    .updateTable('quota_rule')
    .set({
      limit_size: patch.limit,
      subjects: patch.subjects === undefined ? undefined : JSON.stringify(patch.subjects),
    })
    .where('name', '=', name)
    .execute();
}

/** Deletes a rule; its group memberships go with it (foreign key cascade). */
export async function deleteRule(q: Q, name: string): Promise<void> {
  await q.deleteFrom('quota_rule').where('name', '=', name).execute();
}

// Groups

export async function groupExists(q: Q, name: string): Promise<boolean> {
  return (
    (await q.selectFrom('quota_group').select('name').where('name', '=', name).executeTakeFirst()) !==
    undefined
  );
}

/** Adds a group unless one of that name exists; whether it was added. */
export async function insertGroup(q: Q, name: string): Promise<boolean> {
  return inserted(
    await q
      .insertInto('quota_group')
      .values({ name })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst(),
  );
}

/** Deletes a group; its rule and user mappings go with it (foreign key cascade). */
export async function deleteGroup(q: Q, name: string): Promise<void> {
  await q.deleteFrom('quota_group').where('name', '=', name).execute();
}

/** Groups with their rules, in two queries whatever their number. */
export async function groupsWithRules(q: Q, names: readonly string[] | 'all'): Promise<Group[]> {
  let gq = q.selectFrom('quota_group').select('name').orderBy('name');
  if (names !== 'all') {
    if (names.length === 0) return [];
    gq = gq.where('name', 'in', names);
  }
  const groups = await gq.execute();
  if (groups.length === 0) return [];
  const rows = await q
    .selectFrom('quota_group_rule')
    .innerJoin('quota_rule', 'quota_rule.name', 'quota_group_rule.rule_name')
    .select([
      'quota_group_rule.group_name',
      'quota_rule.name',
      'quota_rule.limit_size',
      'quota_rule.subjects',
    ])
    .where(
      'quota_group_rule.group_name',
      'in',
      groups.map((g) => g.name),
    )
    .orderBy('quota_rule.name')
    .execute();
  const byGroup = new Map<string, Rule[]>(groups.map((g) => [g.name, []]));
  for (const r of rows) byGroup.get(r.group_name)!.push(toRule(r));
  return groups.map((g) => ({ name: g.name, rules: byGroup.get(g.name)! }));
}

export async function groupHasRule(q: Q, group: string, rule: string): Promise<boolean> {
  const r = await q
    .selectFrom('quota_group_rule')
    .select('id')
    .where('group_name', '=', group)
    .where('rule_name', '=', rule)
    .executeTakeFirst();
  return r !== undefined;
}

/** Adds a rule to a group unless it is in it already; whether it was added. */
export async function addRuleToGroup(q: Q, group: string, rule: string): Promise<boolean> {
  return inserted(
    await q
      .insertInto('quota_group_rule')
      .values({ group_name: group, rule_name: rule })
      .onConflict((oc) => oc.columns(['group_name', 'rule_name']).doNothing())
      .executeTakeFirst(),
  );
}

export async function removeRuleFromGroup(q: Q, group: string, rule: string): Promise<void> {
  await q
    .deleteFrom('quota_group_rule')
    .where('group_name', '=', group)
    .where('rule_name', '=', rule)
    .execute();
}

// Group membership

export async function groupNamesOfUser(q: Q, userId: number): Promise<string[]> {
  const rows = await q
    .selectFrom('quota_group_user')
    .select('group_name')
    .where('user_id', '=', userId)
    .orderBy('group_name')
    .execute();
  return rows.map((r) => r.group_name);
}

export async function userInGroup(q: Q, group: string, userId: number): Promise<boolean> {
  const r = await q
    .selectFrom('quota_group_user')
    .select('id')
    .where('group_name', '=', group)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r !== undefined;
}

/** Adds a user to a group unless they are in it already; whether they were added. */
export async function addUserToGroup(q: Q, group: string, userId: number): Promise<boolean> {
  return inserted(
    await q
      .insertInto('quota_group_user')
      .values({ group_name: group, user_id: userId })
      .onConflict((oc) => oc.columns(['group_name', 'user_id']).doNothing())
      .executeTakeFirst(),
  );
}

/**
 * Holds an owner's row until the transaction ends, so that changes to its group list run one after
 * the other rather than interleaved. Every such change takes it first: a membership insert's
 * foreign key check share-locks the user row, so one that took it later could wait on a
 * replacement holding it while that replacement waits on the insert's unique key (a deadlock).
 * SQLite runs one write transaction at a time anyway (and has no FOR UPDATE).
 */
export async function lockOwner(tx: Tx, ownerId: number): Promise<void> {
  if (tx.getExecutor().adapter instanceof SqliteAdapter) return;
  await tx.selectFrom('user').select('id').where('id', '=', ownerId).forUpdate().execute();
}

export async function removeUserFromGroup(q: Q, group: string, userId: number): Promise<void> {
  await q
    .deleteFrom('quota_group_user')
    .where('group_name', '=', group)
    .where('user_id', '=', userId)
    .execute();
}

export async function removeUserFromAllGroups(q: Q, userId: number): Promise<void> {
  await q.deleteFrom('quota_group_user').where('user_id', '=', userId).execute();
}

export function usersOfGroup(
  q: Q,
  group: string,
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  return paged(
    q
      .selectFrom('quota_group_user')
      .innerJoin('user', 'user.id', 'quota_group_user.user_id')
      .selectAll('user')
      .where('quota_group_user.group_name', '=', group)
      .orderBy('user.id'),
    limit,
    offset,
  );
}

// Usage totals

export async function usageOf(q: Q, ownerId: number): Promise<Map<string, number>> {
  const rows = await q
    .selectFrom('quota_usage')
    .select(['subject', 'size'])
    .where('owner_id', '=', ownerId)
    .execute();
  return new Map(rows.map((r) => [r.subject, Number(r.size)]));
}

/** Every stored total, by owner and subject, in one query (only `ownerId`'s when given). */
export async function usageOfOwners(q: Q, ownerId?: number): Promise<Map<number, Map<string, number>>> {
  let s = q.selectFrom('quota_usage').select(['owner_id', 'subject', 'size']);
  if (ownerId !== undefined) s = s.where('owner_id', '=', ownerId);
  const out = new Map<number, Map<string, number>>();
  for (const r of await s.execute()) {
    const m = out.get(r.owner_id) ?? new Map<string, number>();
    m.set(r.subject, Number(r.size));
    out.set(r.owner_id, m);
  }
  return out;
}

/** Adds `delta` bytes (negative to subtract) to an owner's total for one stored subject. */
export async function addUsage(q: Q, ownerId: number, subject: LeafSubject, delta: number): Promise<void> {
  if (delta === 0) return;
  await q
    .insertInto('quota_usage')
    .values({ owner_id: ownerId, subject, size: delta })
    .onConflict((oc) =>
      oc
        .columns(['owner_id', 'subject'])
        .doUpdateSet((eb) => ({ size: eb('quota_usage.size', '+', eb.ref('excluded.size')) })),
    )
    .execute();
}

export async function setUsage(q: Q, ownerId: number, subject: LeafSubject, size: number): Promise<void> {
  await q
    .insertInto('quota_usage')
    .values({ owner_id: ownerId, subject, size })
    .onConflict((oc) => oc.columns(['owner_id', 'subject']).doUpdateSet({ size }))
    .execute();
}

/** The tables whose rows record a size that quota recalculation measures. */
export type SizedTable = 'repository' | 'lfs_meta_object' | 'attachment' | 'action_artifact';

/** Sets a row's `size` to `to` unless it changed from `from` meanwhile; whether it did. */
export async function setSizeIf(
  q: Q,
  table: SizedTable,
  id: number,
  from: number,
  to: number,
): Promise<boolean> {
  const r =
    await sql`update ${sql.table(table)} set size = ${to} where id = ${id} and size = ${from}`.execute(q);
  return Number(r.numAffectedRows ?? 0) > 0;
}

// Usage history

/** Takes the day's sample of every stored total (again the same day: replaced). */
export async function sampleUsage(tx: Tx, day: number): Promise<number> {
  await tx.deleteFrom('quota_usage_daily').where('day', '=', day).execute();
  const r = await tx
    .insertInto('quota_usage_daily')
    .columns(['owner_id', 'subject', 'day', 'size'])
    .expression((eb) =>
      eb
        .selectFrom('quota_usage')
        .select(['owner_id', 'subject', sql<number>`${day}`.as('day'), 'size'])
        .where('size', '!=', 0),
    )
    .executeTakeFirst();
  return Number(r?.numInsertedOrUpdatedRows ?? 0);
}

/** An owner's samples from `fromDay` on, oldest first. */
export async function history(
  q: Q,
  ownerId: number,
  fromDay: number,
): Promise<Array<{ day: number; subject: string; size: number }>> {
  const rows = await q
    .selectFrom('quota_usage_daily')
    .select(['day', 'subject', 'size'])
    .where('owner_id', '=', ownerId)
    .where('day', '>=', fromDay)
    .orderBy('day')
    .execute();
  return rows.map((r) => ({ day: Number(r.day), subject: r.subject, size: Number(r.size) }));
}

/** The owners storing the most (all stored subjects together), largest first. */
export async function topConsumers(q: Q, limit: number): Promise<Array<{ ownerId: number; total: number }>> {
  const rows = await q
    .selectFrom('quota_usage')
    .select(['owner_id', (eb) => eb.fn.sum<number>('size').as('total')])
    .groupBy('owner_id')
    .having((eb) => eb.fn.sum('size'), '>', 0)
    .orderBy('total', 'desc')
    .orderBy('owner_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ownerId: Number(r.owner_id), total: Number(r.total) }));
}
