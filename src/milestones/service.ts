// Milestones of a repository: found by id or (failing that) by title, opened and closed, and
// their issue counts, recounted from the issue table inside every transaction that changes an
// issue's milestone or state.
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { invalidField, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { RepoRow } from '../repos/tables.js';
import * as store from './store.js';
import type { MilestoneRow, MilestoneSort } from './tables.js';
import { NO_DEADLINE } from './tables.js';
import { checkText, isId, isName } from '../issues/input.js';

export interface MilestoneInput {
  title?: string | undefined;
  description?: string | undefined;
  /** Unix seconds; null removes the due date. */
  dueOn?: number | null | undefined;
  state?: 'open' | 'closed' | undefined;
}

const MAX_TITLE = 255;

export interface MilestoneServiceDeps {
  db: Db;
}

export class MilestoneService {
  private readonly db: Db;

  constructor(deps: MilestoneServiceDeps) {
    this.db = deps.db;
  }

  /** One page of the milestones of several repositories (the dashboard's), soonest due first. */
  listIn(repoIds: number[], state: 'open' | 'closed', page: Page) {
    return store.list(this.db, repoIds, { isClosed: state === 'closed' }, page.limit, page.offset);
  }

  list(
    repo: RepoRow,
    f: {
      state?: 'open' | 'closed' | 'all' | undefined;
      name?: string | undefined;
      sort?: MilestoneSort | undefined;
    },
    page: Page,
  ) {
    const state = f.state ?? 'open';
    return store.list(
      this.db,
      repo.id,
      { isClosed: state === 'all' ? undefined : state === 'closed', name: f.name, sort: f.sort },
      page.limit,
      page.offset,
    );
  }

  /** A milestone of `repo` by id, or else by title (Forgejo's rule for the {id} path segment). */
  async requireMilestone(repo: RepoRow, ref: string): Promise<MilestoneRow> {
    let m: MilestoneRow | undefined;
    if (/^\d+$/.test(ref) && isId(Number(ref))) m = await store.getInRepo(this.db, repo.id, Number(ref));
    if (!m && isName(ref)) m = await store.getByName(this.db, repo.id, ref);
    if (!m) throw notFound(`milestone does not exist [repo_id: ${repo.id}, milestone: ${ref}]`);
    return m;
  }

  /** For an issue of `repo`: the milestone `id`, or a 422 when the repository has no such milestone. */
  async requireForIssue(repo: RepoRow, id: number, q: Db | Tx = this.db): Promise<MilestoneRow> {
    const m = isId(id) ? await store.getInRepo(q, repo.id, id) : undefined;
    if (!m) throw invalidField('milestone', `milestone does not exist [repo_id: ${repo.id}, id: ${id}]`);
    return m;
  }

  async create(repo: RepoRow, input: MilestoneInput): Promise<MilestoneRow> {
    const name = checkTitle(input.title ?? '');
    const now = nowUnix();
    const closed = input.state === 'closed';
    return store.insert(this.db, {
      repo_id: repo.id,
      name,
      content: checkText(input.description ?? '', 'description'),
      deadline_unix: input.dueOn ?? NO_DEADLINE,
      is_closed: closed ? 1 : 0,
      closed_date_unix: closed ? now : 0,
      created_unix: now,
      updated_unix: now,
    });
  }

  async edit(m: MilestoneRow, input: MilestoneInput): Promise<MilestoneRow> {
    const name = input.title === undefined ? undefined : checkTitle(input.title);
    const now = nowUnix();
    let closed: { is_closed: number; closed_date_unix: number } | undefined;
    if (input.state !== undefined && (input.state === 'closed') !== (m.is_closed === 1)) {
      closed =
        input.state === 'closed'
          ? { is_closed: 1, closed_date_unix: now }
          : { is_closed: 0, closed_date_unix: 0 };
    }
    return store.update(this.db, m.id, {
      name,
      content: input.description === undefined ? undefined : checkText(input.description, 'description'),
      deadline_unix: input.dueOn === undefined ? undefined : (input.dueOn ?? NO_DEADLINE),
      ...closed,
      updated_unix: now,
    });
  }

  /** Deletes the milestone; its issues keep going without one (ON DELETE SET NULL). */
  async delete(m: MilestoneRow): Promise<void> {
    await transaction(this.db, (tx) => store.remove(tx, m.id));
  }

  getByIds(ids: number[], q: Db | Tx = this.db) {
    return store.getByIds(q, [...new Set(ids)]);
  }

  /** Recounts the open and closed issues of these milestones (inside the caller's transaction). */
  recount(tx: Tx, ids: Iterable<number | null | undefined>) {
    return store.recount(tx, ids);
  }

  /**
   * For list filters: the milestones of `repo` named by each token (a title, or else an id);
   * tokens naming nothing are dropped.
   */
  async filterIds(repo: RepoRow, tokens: string[]): Promise<number[]> {
    const rows = await store.byNamesOrIds(
      this.db,
      repo.id,
      tokens.filter(isName),
      tokens
        .filter((t) => /^\d+$/.test(t))
        .map(Number)
        .filter(isId),
    );
    const out = new Set<number>();
    for (const t of tokens) {
      const m = rows.find((r) => r.name === t) ?? rows.find((r) => String(r.id) === t);
      if (m) out.add(m.id);
    }
    return [...out];
  }

  idsByNamesIn(repoIds: number[], names: string[]) {
    return store.idsByNamesIn(this.db, repoIds, names.filter(isName));
  }
}

function checkTitle(title: string): string {
  const t = checkText(title, 'title').trim();
  if (!t) throw invalidField('title', 'Required');
  if (t.length > MAX_TITLE) throw invalidField('title', `must be at most ${MAX_TITLE} characters`);
  return t;
}
