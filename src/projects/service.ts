// Project boards of a repository, user or organization: projects opened and closed, their columns
// (one the default for new cards), and their cards, each in one column at one place: issues and pull
// requests (of the repository, or of any of the owner's repositories) and notes (text cards).
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { invalidField, notFound } from '../errors.js';
import type { RepoRow } from '../repos/tables.js';
import * as store from './store.js';
import type { ColumnRow, ProjectRow } from './tables.js';

const MAX_TITLE = 255;
const COLOR = /^#[0-9a-fA-F]{6}$/;
const MAX_NOTE = 65535;

/** Whose a project is: a repository's, or a user's or organization's. */
export type ProjectScope = { repoId: number } | { ownerId: number };

/** A card to move: an issue's (by issue id) or a note (by its card id). */
export type CardRef = { issueID: number } | { noteID: number };
export const KANBAN = ['To Do', 'In Progress', 'Done'];

export interface ProjectServiceDeps {
  db: Db;
}

function title(v: string | undefined, field = 'title'): string {
  const t = (v ?? '').trim();
  if (!t) throw invalidField(field, 'cannot be empty');
  if (t.length > MAX_TITLE) throw invalidField(field, `must be at most ${MAX_TITLE} characters`);
  return t;
}

function noteText(v: string | undefined): string {
  const t = (v ?? '').trim();
  if (!t) throw invalidField('note', 'cannot be empty');
  if (t.length > MAX_NOTE) throw invalidField('note', `must be at most ${MAX_NOTE} characters`);
  return t;
}

function color(v: string | undefined): string {
  const c = (v ?? '').trim();
  if (c && !COLOR.test(c)) throw invalidField('color', 'must be a colour such as #1e90ff');
  return c;
}

export class ProjectService {
  private readonly db: Db;

  constructor(deps: ProjectServiceDeps) {
    this.db = deps.db;
  }

  list(scope: ProjectScope, state: 'open' | 'closed'): Promise<ProjectRow[]> {
    return store.list(this.db, scope, state === 'closed');
  }

  /** The project `id` of the repository or owner, else 404. */
  async requireProject(scope: ProjectScope, id: string | number): Promise<ProjectRow> {
    const n = Number(id);
    const ok = Number.isSafeInteger(n) && n > 0;
    const p = !ok
      ? undefined
      : 'repoId' in scope
        ? await store.getInRepo(this.db, scope.repoId, n)
        : await store.getOfOwner(this.db, scope.ownerId, n);
    if (!p) throw notFound('project does not exist');
    return p;
  }

  async create(
    scope: ProjectScope,
    creatorId: number,
    input: { title: string; description?: string; template?: 'none' | 'kanban' },
  ): Promise<ProjectRow> {
    const t = title(input.title);
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      const p = await store.insertProject(tx, {
        repo_id: 'repoId' in scope ? scope.repoId : null,
        owner_id: 'ownerId' in scope ? scope.ownerId : null,
        title: t,
        description: input.description ?? '',
        creator_id: creatorId,
        template_type: input.template === 'kanban' ? 1 : 0,
        created_unix: now,
        updated_unix: now,
      });
      if (input.template === 'kanban') {
        for (const [i, name] of KANBAN.entries()) {
          await store.insertColumn(tx, {
            project_id: p.id,
            title: name,
            sorting: i,
            is_default: i === 0 ? 1 : 0,
            created_unix: now,
            updated_unix: now,
          });
        }
      }
      return p;
    });
  }

  async edit(p: ProjectRow, input: { title?: string; description?: string; state?: 'open' | 'closed' }) {
    const now = nowUnix();
    await store.updateProject(this.db, p.id, {
      ...(input.title !== undefined ? { title: title(input.title) } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.state
        ? {
            is_closed: input.state === 'closed' ? 1 : 0,
            closed_date_unix: input.state === 'closed' ? now : 0,
          }
        : {}),
      updated_unix: now,
    });
  }

  delete(p: ProjectRow): Promise<void> {
    return transaction(this.db, (tx) => store.removeProject(tx, p.id));
  }

  /** The project's columns in order, and its cards with their issue. */
  async board(p: ProjectRow) {
    const [columns, cards] = await Promise.all([store.columns(this.db, p.id), store.cards(this.db, p.id)]);
    return { columns, cards };
  }

  async requireColumn(p: ProjectRow, id: string | number): Promise<ColumnRow> {
    const c = (await store.columns(this.db, p.id)).find((x) => x.id === Number(id));
    if (!c) throw notFound('column does not exist');
    return c;
  }

  async addColumn(p: ProjectRow, input: { title: string; color?: string }): Promise<ColumnRow> {
    const t = title(input.title);
    const c = color(input.color);
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      const cols = await store.columns(tx, p.id);
      const last = cols.reduce((m, x) => Math.max(m, x.sorting), -1);
      return store.insertColumn(tx, {
        project_id: p.id,
        title: t,
        color: c,
        sorting: last + 1,
        is_default: cols.length === 0 ? 1 : 0,
        created_unix: now,
        updated_unix: now,
      });
    });
  }

  async editColumn(c: ColumnRow, input: { title?: string; color?: string; sorting?: number }): Promise<void> {
    await store.updateColumn(this.db, c.id, {
      ...(input.title !== undefined ? { title: title(input.title) } : {}),
      ...(input.color !== undefined ? { color: color(input.color) } : {}),
      ...(input.sorting !== undefined ? { sorting: input.sorting } : {}),
      updated_unix: nowUnix(),
    });
  }

  /** Moves the column one place left (-1) or right (+1), renumbering the columns 0, 1, 2… */
  async shiftColumn(p: ProjectRow, c: ColumnRow, by: -1 | 1): Promise<void> {
    await transaction(this.db, async (tx) => {
      const cols = await store.columns(tx, p.id);
      const i = cols.findIndex((x) => x.id === c.id);
      const j = i + by;
      if (i < 0 || j < 0 || j >= cols.length) return;
      [cols[i], cols[j]] = [cols[j]!, cols[i]!];
      for (const [k, col] of cols.entries()) {
        if (col.sorting !== k) await store.updateColumn(tx, col.id, { sorting: k });
      }
    });
  }

  async setDefault(p: ProjectRow, c: ColumnRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.clearDefault(tx, p.id);
      await store.updateColumn(tx, c.id, { is_default: 1 });
    });
  }

  /** Deletes a column; its cards go to the default column (or the first one left), as in Forgejo. */
  async deleteColumn(p: ProjectRow, c: ColumnRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      const rest = (await store.columns(tx, p.id)).filter((x) => x.id !== c.id);
      const target = rest.find((x) => x.is_default) ?? rest[0];
      if (target) {
        let next = (await store.maxSorting(tx, target.id)) + 1;
        for (const card of (await store.cards(tx, p.id)).filter((x) => x.project_board_id === c.id)) {
          await store.placeCardById(tx, card.id, target.id, next++);
        }
        if (c.is_default && !target.is_default) await store.updateColumn(tx, target.id, { is_default: 1 });
      }
      await store.removeColumn(tx, c.id);
    });
  }

  /**
   * Puts an issue on the board (at the end of `columnId`, or of the default column); it must be of
   * the project's repository, or of one of the owner's repositories for an owner's project. An issue
   * already on the board stays where it is.
   */
  async addIssue(
    p: ProjectRow,
    issueId: number,
    repo: { id: number; owner_id: number },
    columnId?: number,
  ): Promise<void> {
    if (p.repo_id !== null ? repo.id !== p.repo_id : repo.owner_id !== p.owner_id)
      throw invalidField('issue', p.repo_id !== null ? 'is not in this repository' : 'is not of this owner');
    await transaction(this.db, async (tx) => {
      if (await store.card(tx, p.id, issueId)) return;
      await store.insertCard(tx, {
        project_id: p.id,
        issue_id: issueId,
        ...(await this.endOf(tx, p, columnId)),
      });
    });
  }

  async removeIssue(p: ProjectRow, issueId: number): Promise<void> {
    await store.removeCard(this.db, p.id, issueId);
  }

  /** The end of column `columnId` (422 on `column` if it is not the project's), else of the default. */
  private async endOf(tx: Tx, p: ProjectRow, columnId: number | undefined, field = 'issue') {
    const cols = await store.columns(tx, p.id);
    const col =
      columnId === undefined
        ? (cols.find((x) => x.is_default) ?? cols[0])
        : cols.find((x) => x.id === columnId);
    if (!col && columnId !== undefined) throw invalidField('column', 'is not a column of this project');
    if (!col) throw invalidField(field, 'the project has no column yet');
    return { project_board_id: col.id, sorting: (await store.maxSorting(tx, col.id)) + 1 };
  }

  // The issue sidebar's picker (Forgejo keeps an issue on one project at a time).

  /** The open projects an issue of `repo` may be put on: the repository's and its owner's. */
  async choicesFor(repo: RepoRow): Promise<ProjectRow[]> {
    const rows = await store.openFor(this.db, repo.id, repo.owner_id);
    // The repository's own only while its projects are turned on.
    return [
      ...rows.filter((p) => p.repo_id !== null && repo.has_projects),
      ...rows.filter((p) => p.repo_id === null),
    ];
  }

  projectsOf(issueId: number): Promise<ProjectRow[]> {
    return store.projectsOfIssue(this.db, issueId);
  }

  /**
   * Forgejo's assignment from the sidebar: the issue leaves the projects it is on and, unless
   * `projectId` is 0, goes to the default column of that project (an open one of `choicesFor`).
   */
  async assign(issue: { id: number }, repo: RepoRow, projectId: number): Promise<void> {
    const target = projectId ? (await this.choicesFor(repo)).find((p) => p.id === projectId) : undefined;
    if (projectId && !target)
      throw invalidField('id', 'is not an open project of this repository or its owner');
    await transaction(this.db, async (tx) => {
      const current = await store.projectsOfIssue(tx, issue.id);
      if (target && current.length === 1 && current[0]!.id === target.id) return;
      await store.removeIssueEverywhere(tx, issue.id);
      if (target) {
        await store.insertCard(tx, {
          project_id: target.id,
          issue_id: issue.id,
          ...(await this.endOf(tx, target, undefined, 'id')),
        });
      }
    });
  }

  // Notes: text cards that are not issues.

  /** A note at the end of `columnId`, or of the default column. */
  async addNote(p: ProjectRow, creatorId: number, text: string, columnId?: number): Promise<void> {
    const t = noteText(text);
    await transaction(this.db, async (tx) => {
      await store.insertCard(tx, {
        project_id: p.id,
        issue_id: null,
        note: t,
        creator_id: creatorId,
        ...(await this.endOf(tx, p, columnId, 'note')),
      });
    });
  }

  private async requireNote(p: ProjectRow, id: number, q: Db | Tx = this.db) {
    const n = Number.isSafeInteger(id) && id > 0 ? await store.note(q, p.id, id) : undefined;
    if (!n) throw invalidField('note', 'does not exist on this project');
    return n;
  }

  async editNote(p: ProjectRow, id: number, text: string): Promise<void> {
    const t = noteText(text);
    await this.requireNote(p, id);
    await store.updateNote(this.db, id, t);
  }

  async deleteNote(p: ProjectRow, id: number): Promise<void> {
    await this.requireNote(p, id);
    await store.removeCardById(this.db, id);
  }

  /**
   * Forgejo's move: the cards listed go to `column` with the sorting given (notes by their card id).
   * Every card must already be on this project; nothing changes otherwise.
   */
  async move(p: ProjectRow, column: ColumnRow, moves: (CardRef & { sorting: number })[]): Promise<void> {
    await transaction(this.db, async (tx) => {
      for (const m of moves) {
        const id = await this.cardId(tx, p, m);
        await store.placeCardById(tx, id, column.id, m.sorting);
      }
    });
  }

  private async cardId(tx: Tx, p: ProjectRow, ref: CardRef): Promise<number> {
    if ('noteID' in ref) return (await this.requireNote(p, ref.noteID, tx)).id;
    const c = await store.card(tx, p.id, ref.issueID);
    if (!c) throw invalidField('issues', `issue ${ref.issueID} is not on this project`);
    return c.id;
  }

  /** The no-script move: one card to the end of `column`. */
  async moveToEnd(p: ProjectRow, column: ColumnRow, ref: CardRef): Promise<void> {
    await transaction(this.db, async (tx) => {
      const id = await this.cardId(tx, p, ref);
      await store.placeCardById(tx, id, column.id, (await store.maxSorting(tx, column.id)) + 1);
    });
  }
}
