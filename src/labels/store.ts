// Queries on labels and on the labels of issues. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { IssueLabelTable, LabelTable } from './tables.js';
import type { LabelRow } from './tables.js';

type Q = Db | Tx;

/** Whose labels: a repository's or an organization's. */
export type LabelOwner = { repoId: number } | { orgId: number };

export async function insert(q: Q, row: Insertable<LabelTable>): Promise<LabelRow> {
  return q.insertInto('label').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function update(q: Q, id: number, patch: Updateable<LabelTable>): Promise<LabelRow> {
  return q.updateTable('label').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('label').where('id', '=', id).execute();
}

export function getById(q: Q, id: number): Promise<LabelRow | undefined> {
  return q.selectFrom('label').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getByIds(q: Q, ids: number[]): Promise<LabelRow[]> {
  if (ids.length === 0) return [];
  return q.selectFrom('label').selectAll().where('id', 'in', ids).execute();
}

function owned(q: Q, owner: LabelOwner) {
  const s = q.selectFrom('label');
  return 'repoId' in owner ? s.where('repo_id', '=', owner.repoId) : s.where('org_id', '=', owner.orgId);
}

/** One page of an owner's labels, by name; archived ones only when asked for. */
export function list(
  q: Q,
  owner: LabelOwner,
  f: { archived: boolean },
  limit: number,
  offset: number,
): Promise<[LabelRow[], number]> {
  let s = owned(q, owner).selectAll();
  if (!f.archived) s = s.where('archived_unix', '=', 0);
  return paged(s.orderBy('name').orderBy('id'), limit, offset);
}

/**
 * The labels usable in a repository (its own and its owner's, which only organizations have)
 * whose names are in `names`.
 */
export function usableByNames(q: Q, repo: { id: number; owner_id: number }, names: string[]) {
  if (names.length === 0) return Promise.resolve([] as LabelRow[]);
  return q
    .selectFrom('label')
    .selectAll()
    .where('name', 'in', names)
    .where((eb) => eb.or([eb('repo_id', '=', repo.id), eb('org_id', '=', repo.owner_id)]))
    .orderBy('id')
    .execute();
}

/** Labels with any of `names` in any of the repositories `repoIds` (and their organizations). */
export async function idsByNamesIn(q: Q, names: string[], repoIds: number[], orgIds: number[]) {
  if (names.length === 0 || (repoIds.length === 0 && orgIds.length === 0)) return [];
  const rows = await q
    .selectFrom('label')
    .select('id')
    .where('name', 'in', names)
    .where((eb) =>
      eb.or([
        ...(repoIds.length ? [eb('repo_id', 'in', repoIds)] : []),
        ...(orgIds.length ? [eb('org_id', 'in', orgIds)] : []),
      ]),
    )
    .execute();
  return rows.map((r) => r.id);
}

// Labels of issues

/** The labels of each of `issueIds`, by name. */
export async function ofIssues(q: Q, issueIds: number[]): Promise<Map<number, LabelRow[]>> {
  const out = new Map<number, LabelRow[]>();
  if (issueIds.length === 0) return out;
  const rows = await q
    .selectFrom('issue_label')
    .innerJoin('label', 'label.id', 'issue_label.label_id')
    .selectAll('label')
    .select('issue_label.issue_id as issue_id')
    .where('issue_label.issue_id', 'in', issueIds)
    .orderBy('label.name')
    .orderBy('label.id')
    .execute();
  for (const { issue_id, ...label } of rows) {
    const list = out.get(issue_id) ?? [];
    list.push(label);
    out.set(issue_id, list);
  }
  return out;
}

/** The issue columns copied into issue_label. */
export interface LabelledIssue {
  id: number;
  repo_id: number;
  is_pull: number;
  is_closed: number;
  created_unix: number;
}

export async function addToIssue(q: Q, issue: LabelledIssue, labelIds: number[]): Promise<void> {
  if (labelIds.length === 0) return;
  await q
    .insertInto('issue_label')
    .values(
      labelIds.map((label_id) => ({
        issue_id: issue.id,
        label_id,
        repo_id: issue.repo_id,
        is_pull: issue.is_pull,
        is_closed: issue.is_closed,
        created_unix: issue.created_unix,
      })),
    )
    .onConflict((oc) => oc.columns(['issue_id', 'label_id']).doNothing())
    .execute();
}

/** Keeps the copy of an issue's state in issue_label in step. */
export async function setIssueClosed(q: Q, issueId: number, closed: boolean): Promise<void> {
  await q
    .updateTable('issue_label')
    .set({ is_closed: closed ? 1 : 0 })
    .where('issue_id', '=', issueId)
    .execute();
}

/** Puts labels on issues in one statement (bulk loads). */
export async function addMany(q: Q, rows: Array<Insertable<IssueLabelTable>>): Promise<void> {
  if (rows.length) await q.insertInto('issue_label').values(rows).execute();
}

export async function removeFromIssue(q: Q, issueId: number, labelIds: number[]): Promise<void> {
  if (labelIds.length === 0) return;
  await q
    .deleteFrom('issue_label')
    .where('issue_id', '=', issueId)
    .where('label_id', 'in', labelIds)
    .execute();
}

/**
 * Removes organization labels not of `keepOrgId` from the issues of a repository (when the
 * repository changes owner, the old organization's labels no longer apply).
 */
export async function removeForeignOrgLabels(q: Q, repoId: number, keepOrgId: number): Promise<void> {
  await q
    .deleteFrom('issue_label')
    .where('issue_id', 'in', q.selectFrom('issue').select('id').where('repo_id', '=', repoId))
    .where(
      'label_id',
      'in',
      q.selectFrom('label').select('id').where('org_id', 'is not', null).where('org_id', '!=', keepOrgId),
    )
    .execute();
}

/** Copies the repository's own labels to another repository (a repository generated from a template). */
export async function copyRepoLabels(q: Q, fromRepoId: number, toRepoId: number, now: number): Promise<void> {
  const rows = await q
    .selectFrom('label')
    .selectAll()
    .where('repo_id', '=', fromRepoId)
    .orderBy('id')
    .execute();
  for (const { id: _, ...row } of rows) {
    await q
      .insertInto('label')
      .values({ ...row, repo_id: toRepoId, org_id: null, created_unix: now, updated_unix: now })
      .execute();
  }
}
