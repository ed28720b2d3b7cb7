// Project boards of a repository: projects opened and closed, their columns (one the default for
// new cards), and the issues and pull requests on them, each in one column at one place.
import { nowUnix, transaction, type Db } from '../db/database.js';
import { invalidField, notFound } from '../errors.js';
import type { RepoRow } from '../repos/tables.js';
import * as store from './store.js';
import type { ColumnRow, ProjectRow } from './tables.js';

const MAX_TITLE = 255;
const COLOR = /^#[0-9a-fA-F]{6}$/;
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

  list(repo: RepoRow, state: 'open' | 'closed'): Promise<ProjectRow[]> {
    return store.listInRepo(this.db, repo.id, state === 'closed');
  }

  async requireProject(repo: RepoRow, id: string | number): Promise<ProjectRow> {
    const n = Number(id);
    const p = Number.isSafeInteger(n) && n > 0 ? await store.getInRepo(this.db, repo.id, n) : undefined;
    if (!p) throw notFound('project does not exist');
    return p;
  }

  async create(
    repo: RepoRow,
    creatorId: number,
    input: { title: string; description?: string; template?: 'none' | 'kanban' },
  ): Promise<ProjectRow> {
    const t = title(input.title);
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      const p = await store.insertProject(tx, {
        repo_id: repo.id,
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
          await store.placeCard(tx, p.id, card.issue_id, target.id, next++);
        }
        if (c.is_default && !target.is_default) await store.updateColumn(tx, target.id, { is_default: 1 });
      }
      await store.removeColumn(tx, c.id);
    });
  }

  /** Puts an issue of the project's repository on the board (in the default column), or takes it off. */
  async setIssue(p: ProjectRow, issue: { id: number; repo_id: number }, on: boolean): Promise<void> {
    if (issue.repo_id !== p.repo_id) throw invalidField('issue', 'is not in this repository');
    await transaction(this.db, async (tx) => {
      const had = await store.card(tx, p.id, issue.id);
      if (!on) {
        if (had) await store.removeCard(tx, p.id, issue.id);
        return;
      }
      if (had) return;
      const cols = await store.columns(tx, p.id);
      const col = cols.find((x) => x.is_default) ?? cols[0];
      if (!col) throw invalidField('issue', 'the project has no column yet');
      await store.insertCard(tx, {
        project_id: p.id,
        issue_id: issue.id,
        project_board_id: col.id,
        sorting: (await store.maxSorting(tx, col.id)) + 1,
      });
    });
  }

  /**
   * Forgejo's move: the cards listed go to `column` with the sorting given. Every issue must
   * already be on this project; nothing changes otherwise.
   */
  async move(p: ProjectRow, column: ColumnRow, moves: { issueID: number; sorting: number }[]): Promise<void> {
    await transaction(this.db, async (tx) => {
      for (const m of moves) {
        if (!(await store.card(tx, p.id, m.issueID)))
          throw invalidField('issues', `issue ${m.issueID} is not on this project`);
        await store.placeCard(tx, p.id, m.issueID, column.id, m.sorting);
      }
    });
  }

  /** The no-script move: one card to the end of `column`. */
  async moveToEnd(p: ProjectRow, column: ColumnRow, issueId: number): Promise<void> {
    await transaction(this.db, async (tx) => {
      if (!(await store.card(tx, p.id, issueId))) throw invalidField('issue', 'is not on this project');
      await store.placeCard(tx, p.id, issueId, column.id, (await store.maxSorting(tx, column.id)) + 1);
    });
  }
}
