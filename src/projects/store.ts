// Queries on projects, their columns and cards. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { CardRow, ColumnRow, ProjectBoardTable, ProjectRow, ProjectTable } from './tables.js';

type Q = Db | Tx;

export function insertProject(q: Q, row: Insertable<ProjectTable>): Promise<ProjectRow> {
  return q.insertInto('project').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateProject(q: Q, id: number, patch: Updateable<ProjectTable>): Promise<void> {
  await q.updateTable('project').set(patch).where('id', '=', id).execute();
}

export async function removeProject(q: Q, id: number): Promise<void> {
  await q.deleteFrom('project_issue').where('project_id', '=', id).execute();
  await q.deleteFrom('project_board').where('project_id', '=', id).execute();
  await q.deleteFrom('project').where('id', '=', id).execute();
}

export function getInRepo(q: Q, repoId: number, id: number): Promise<ProjectRow | undefined> {
  return q
    .selectFrom('project')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function getOfOwner(q: Q, ownerId: number, id: number): Promise<ProjectRow | undefined> {
  return q
    .selectFrom('project')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function list(
  q: Q,
  of: { repoId: number } | { ownerId: number },
  closed: boolean,
): Promise<ProjectRow[]> {
  const base = q.selectFrom('project').selectAll();
  return ('repoId' in of ? base.where('repo_id', '=', of.repoId) : base.where('owner_id', '=', of.ownerId))
    .where('is_closed', '=', closed ? 1 : 0)
    .orderBy('id', 'desc')
    .execute();
}

/** The open projects of a repository and of its owner, newest first. */
export function openFor(q: Q, repoId: number, ownerId: number): Promise<ProjectRow[]> {
  return q
    .selectFrom('project')
    .selectAll()
    .where((eb) => eb.or([eb('repo_id', '=', repoId), eb('owner_id', '=', ownerId)]))
    .where('is_closed', '=', 0)
    .orderBy('id', 'desc')
    .execute();
}

/** The projects an issue is on. */
export function projectsOfIssue(q: Q, issueId: number): Promise<ProjectRow[]> {
  return q
    .selectFrom('project_issue as pi')
    .innerJoin('project as p', 'p.id', 'pi.project_id')
    .selectAll('p')
    .where('pi.issue_id', '=', issueId)
    .orderBy('p.id')
    .execute();
}

export async function removeIssueEverywhere(q: Q, issueId: number): Promise<void> {
  await q.deleteFrom('project_issue').where('issue_id', '=', issueId).execute();
}

export function insertColumn(q: Q, row: Insertable<ProjectBoardTable>): Promise<ColumnRow> {
  return q.insertInto('project_board').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateColumn(q: Q, id: number, patch: Updateable<ProjectBoardTable>): Promise<void> {
  await q.updateTable('project_board').set(patch).where('id', '=', id).execute();
}

export async function removeColumn(q: Q, id: number): Promise<void> {
  await q.deleteFrom('project_issue').where('project_board_id', '=', id).execute();
  await q.deleteFrom('project_board').where('id', '=', id).execute();
}

export function columns(q: Q, projectId: number): Promise<ColumnRow[]> {
  return q
    .selectFrom('project_board')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('sorting')
    .orderBy('id')
    .execute();
}

export async function clearDefault(q: Q, projectId: number): Promise<void> {
  await q.updateTable('project_board').set({ is_default: 0 }).where('project_id', '=', projectId).execute();
}

export function cards(q: Q, projectId: number) {
  return q
    .selectFrom('project_issue as pi')
    .leftJoin('issue as i', 'i.id', 'pi.issue_id')
    .leftJoin('pull_request as pr', 'pr.issue_id', 'pi.issue_id')
    .select([
      'pi.id',
      'pi.issue_id',
      'pi.project_board_id',
      'pi.sorting',
      'pi.note',
      'i.repo_id',
      'i.index',
      'i.title',
      'i.is_closed',
      'i.is_pull',
      'pr.has_merged',
    ])
    .where('pi.project_id', '=', projectId)
    .orderBy('pi.sorting')
    .orderBy('pi.id')
    .execute();
}

export function card(q: Q, projectId: number, issueId: number): Promise<CardRow | undefined> {
  return q
    .selectFrom('project_issue')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('issue_id', '=', issueId)
    .executeTakeFirst();
}

export async function maxSorting(q: Q, columnId: number): Promise<number> {
  const r = await q
    .selectFrom('project_issue')
    .select((eb) => eb.fn.max<number>('sorting').as('m'))
    .where('project_board_id', '=', columnId)
    .executeTakeFirst();
  return r?.m == null ? -1 : Number(r.m);
}

export function note(q: Q, projectId: number, id: number): Promise<CardRow | undefined> {
  return q
    .selectFrom('project_issue')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('issue_id', 'is', null)
    .executeTakeFirst();
}

export async function insertCard(
  q: Q,
  row: {
    project_id: number;
    issue_id: number | null;
    project_board_id: number;
    sorting: number;
    note?: string;
    creator_id?: number;
  },
): Promise<void> {
  await q.insertInto('project_issue').values(row).execute();
}

export async function updateNote(q: Q, id: number, text: string): Promise<void> {
  await q.updateTable('project_issue').set({ note: text }).where('id', '=', id).execute();
}

export async function placeCardById(q: Q, id: number, columnId: number, sorting: number): Promise<void> {
  await q
    .updateTable('project_issue')
    .set({ project_board_id: columnId, sorting })
    .where('id', '=', id)
    .execute();
}

export async function removeCardById(q: Q, id: number): Promise<void> {
  await q.deleteFrom('project_issue').where('id', '=', id).execute();
}

export async function removeCard(q: Q, projectId: number, issueId: number): Promise<void> {
  await q
    .deleteFrom('project_issue')
    .where('project_id', '=', projectId)
    .where('issue_id', '=', issueId)
    .execute();
}
