// Labels of repositories and organizations (organization labels are usable on the
// organization's repositories), and the model rules of labels on issues: labels named by id or
// name, and the exclusive rule (an issue holds at most one exclusive label of a scope).
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { badRequest, invalidField, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { checkText, isId, isName } from '../issues/input.js';
import * as store from './store.js';
import { labelTemplate } from './templates.js';
import type { LabelOwner } from './store.js';
import type { LabelRow } from './tables.js';

export interface LabelInput {
  name?: string | undefined;
  color?: string | undefined;
  description?: string | undefined;
  exclusive?: boolean | undefined;
  isArchived?: boolean | undefined;
}

/** A label named in a request: its id (a number) or its name (a string). */
export type LabelRef = number | string;

const COLOR = /^#?(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})$/;
const MAX_NAME = 255;

/** `color` as '#' and six lower-case hexadecimal digits; 422 when it is not a color. */
export function normalizeColor(color: string): string {
  const c = color.trim();
  if (!COLOR.test(c))
    throw invalidField('color', `invalid color, use a hex code such as #e11d21 [color: ${color}]`);
  let hex = c.replace(/^#/, '').toLowerCase();
  if (hex.length === 3) hex = [...hex].map((d) => d + d).join('');
  return `#${hex}`;
}

/**
 * The scope of a label named `<scope>/<name>`: everything before the last '/'. Empty when the
 * name has no '/', or only a leading or trailing one (Forgejo's rule).
 */
export function labelScope(name: string): string {
  const i = name.lastIndexOf('/');
  if (i <= 0 || i === name.length - 1) return '';
  return name.slice(0, i);
}

/** The scope under which a label is exclusive; '' when it is not exclusive. */
export function exclusiveScope(label: Pick<LabelRow, 'name' | 'exclusive'>): string {
  return label.exclusive ? labelScope(label.name) : '';
}

export interface LabelServiceDeps {
  db: Db;
  /** Labels follow a repository's creation (a template) and transfer. */
  repos: Pick<RepoService, 'addHooks'>;
}

export class LabelService {
  private readonly db: Db;

  constructor(deps: LabelServiceDeps) {
    this.db = deps.db;
    // A repository that changes owner loses the old organization's labels on its issues.
    deps.repos.addHooks({
      onTransfer: (tx, repo, newOwnerId) => store.removeForeignOrgLabels(tx, repo.id, newOwnerId),
      // A repository created with `issue_labels` starts with that template's labels.
      onCreate: async (tx, repoId, input) => {
        if (!input.issueLabels) return;
        const template = labelTemplate(input.issueLabels);
        if (!template) {
          throw invalidField('issue_labels', `label template does not exist [name: ${input.issueLabels}]`);
        }
        const now = nowUnix();
        for (const l of template) {
          await store.insert(tx, {
            repo_id: repoId,
            org_id: null,
            name: l.name,
            color: `#${l.color}`,
            description: l.description,
            exclusive: l.exclusive ? 1 : 0,
            created_unix: now,
            updated_unix: now,
          });
        }
      },
    });
  }

  // Labels

  list(owner: LabelOwner, archived: boolean, page: Page) {
    return store.list(this.db, owner, { archived }, page.limit, page.offset);
  }

  /** A label of `repo` (not of its organization) by id, or by name when `ref` is not a number. */
  async requireRepoLabel(repo: RepoRow, ref: string | number): Promise<LabelRow> {
    const id = typeof ref === 'number' ? ref : /^\d+$/.test(ref) ? Number(ref) : undefined;
    let label: LabelRow | undefined;
    if (id !== undefined) {
      const found = isId(id) ? await store.getById(this.db, id) : undefined;
      if (found?.repo_id === repo.id) label = found;
    } else if (isName(String(ref))) {
      label = (await store.usableByNames(this.db, repo, [String(ref)])).find((l) => l.repo_id === repo.id);
    }
    if (!label) throw notFound(`label does not exist [repo_id: ${repo.id}, label: ${ref}]`);
    return label;
  }

  async requireOrgLabel(org: UserRow, id: number): Promise<LabelRow> {
    const label = isId(id) ? await store.getById(this.db, id) : undefined;
    if (!label || label.org_id !== org.id)
      throw notFound(`label does not exist [org_id: ${org.id}, id: ${id}]`);
    return label;
  }

  async create(owner: LabelOwner, input: LabelInput): Promise<LabelRow> {
    const name = checkName(input.name ?? '');
    const color = normalizeColor(input.color ?? '');
    const now = nowUnix();
    return store.insert(this.db, {
      repo_id: 'repoId' in owner ? owner.repoId : null,
      org_id: 'orgId' in owner ? owner.orgId : null,
      name,
      color,
      description: checkText(input.description ?? '', 'description'),
      exclusive: input.exclusive ? 1 : 0,
      archived_unix: input.isArchived ? now : 0,
      created_unix: now,
      updated_unix: now,
    });
  }

  /** Applies the fields given; archiving keeps the first archive time, unarchiving clears it. */
  async edit(label: LabelRow, input: LabelInput): Promise<LabelRow> {
    const name = input.name === undefined ? undefined : checkName(input.name);
    const color = input.color === undefined ? undefined : normalizeColor(input.color);
    const now = nowUnix();
    let archived: number | undefined;
    if (input.isArchived === true) archived = label.archived_unix || now;
    else if (input.isArchived === false) archived = 0;
    return store.update(this.db, label.id, {
      name,
      color,
      description: input.description === undefined ? undefined : checkText(input.description, 'description'),
      exclusive: input.exclusive === undefined ? undefined : input.exclusive ? 1 : 0,
      archived_unix: archived,
      updated_unix: now,
    });
  }

  /** Deletes the label; it leaves every issue (and the timeline events naming it) with it. */
  async delete(label: LabelRow): Promise<void> {
    await store.remove(this.db, label.id);
  }

  /** Adds the labels of the template `templateName` (Default, Advanced) to `repo`; 422 naming `template_name`. */
  async initialize(repo: RepoRow, templateName: string): Promise<number> {
    const template = labelTemplate(templateName);
    if (!template)
      throw invalidField('template_name', `label template does not exist [name: ${templateName}]`);
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      for (const l of template) {
        await store.insert(tx, {
          repo_id: repo.id,
          org_id: null,
          name: l.name,
          color: `#${l.color}`,
          description: l.description,
          exclusive: l.exclusive ? 1 : 0,
          created_unix: now,
          updated_unix: now,
        });
      }
    });
    return template.length;
  }

  // Labels on issues

  /**
   * Whether `label` may be put on the issues of `repo`: a label of the repository, or of its owner
   * (only organizations have labels of their own).
   */
  static usableIn(label: LabelRow, repo: RepoRow): boolean {
    return label.repo_id === repo.id || label.org_id === repo.owner_id;
  }

  /**
   * The labels `refs` names for an issue of `repo`: ids or names of the repository's labels or of
   * its organization's. A list mixing ids and names is a 400 (as in Forgejo); a label that does not
   * exist or belongs elsewhere is a 422 naming it. Duplicates count once.
   */
  async resolve(repo: RepoRow, refs: LabelRef[], q: Db | Tx = this.db): Promise<LabelRow[]> {
    if (refs.length === 0) return [];
    const ids = [...new Set(refs.filter((r): r is number => typeof r === 'number'))];
    const names = [...new Set(refs.filter((r): r is string => typeof r === 'string'))];
    if (ids.length && names.length) throw badRequest('labels should be an array of strings or integers');
    const usable = (l: LabelRow) => LabelService.usableIn(l, repo);
    if (ids.length) {
      const rows = (await store.getByIds(q, ids.filter(isId))).filter(usable);
      const found = new Set(rows.map((r) => r.id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) throw invalidField('labels', `label does not exist [id: ${missing.join(', ')}]`);
      return rows;
    }
    const rows = await store.usableByNames(q, repo, names.filter(isName));
    // A name both the repository and its organization use names both labels, as in Forgejo.
    const found = new Set(rows.map((r) => r.name));
    const missing = names.filter((n) => !found.has(n));
    if (missing.length) throw invalidField('labels', `label does not exist [name: ${missing.join(', ')}]`);
    return rows;
  }

  /** 422 when `labels` holds two exclusive labels of the same scope. */
  checkExclusive(labels: LabelRow[]): void {
    const seen = new Map<string, LabelRow>();
    for (const l of labels) {
      const scope = exclusiveScope(l);
      if (!scope) continue;
      const other = seen.get(scope);
      if (other && other.id !== l.id) {
        throw invalidField(
          'labels',
          `labels "${other.name}" and "${l.name}" are exclusive in scope "${scope}": an issue can have only one of them`,
        );
      }
      seen.set(scope, l);
    }
  }

  /**
   * What adding `adding` to an issue that has `current` does: the labels to add and those to
   * remove (an exclusive label replaces the issue's other exclusive label of its scope). Two
   * exclusive labels of one scope in `adding` are a 422.
   */
  planAdd(current: LabelRow[], adding: LabelRow[]): { add: LabelRow[]; remove: LabelRow[] } {
    this.checkExclusive(adding);
    const have = new Set(current.map((l) => l.id));
    const add = dedupe(adding).filter((l) => !have.has(l.id));
    const scopes = new Set(add.map(exclusiveScope).filter(Boolean));
    const addIds = new Set(adding.map((l) => l.id));
    const remove = current.filter((l) => !addIds.has(l.id) && scopes.has(exclusiveScope(l)));
    return { add, remove };
  }

  /** What replacing an issue's labels `current` by `next` does; 422 as for planAdd. */
  planReplace(current: LabelRow[], next: LabelRow[]): { add: LabelRow[]; remove: LabelRow[] } {
    this.checkExclusive(next);
    const have = new Set(current.map((l) => l.id));
    const want = new Set(next.map((l) => l.id));
    return {
      add: dedupe(next).filter((l) => !have.has(l.id)),
      remove: current.filter((l) => !want.has(l.id)),
    };
  }

  ofIssues(issueIds: number[], q: Db | Tx = this.db) {
    return store.ofIssues(q, issueIds);
  }

  async ofIssue(issueId: number, q: Db | Tx = this.db): Promise<LabelRow[]> {
    return (await store.ofIssues(q, [issueId])).get(issueId) ?? [];
  }

  addToIssue(tx: Tx, issue: store.LabelledIssue, labelIds: number[]) {
    return store.addToIssue(tx, issue, labelIds);
  }

  /** Follows an issue's close or reopen in the labels' copy of its state. */
  setIssueClosed(tx: Tx, issueId: number, closed: boolean) {
    return store.setIssueClosed(tx, issueId, closed);
  }

  removeFromIssue(tx: Tx, issueId: number, labelIds: number[]) {
    return store.removeFromIssue(tx, issueId, labelIds);
  }

  getByIds(ids: number[]) {
    return store.getByIds(this.db, ids);
  }

  /** Ids of labels named `names` in the repositories `repoIds` or the organizations `orgIds`. */
  idsByNamesIn(names: string[], repoIds: number[], orgIds: number[]) {
    return store.idsByNamesIn(this.db, names.filter(isName), repoIds, orgIds);
  }

  /**
   * For list filters: ids of labels usable in `repo` named by each of `tokens` (a name, or else a
   * label id); tokens naming nothing are dropped.
   */
  async filterIds(repo: RepoRow, tokens: string[]): Promise<number[][]> {
    if (tokens.length === 0) return [];
    const byName = await store.usableByNames(this.db, repo, tokens);
    const numeric = tokens
      .filter((t) => /^\d+$/.test(t))
      .map(Number)
      .filter(isId);
    const byId = (await store.getByIds(this.db, numeric)).filter((l) => LabelService.usableIn(l, repo));
    const out: number[][] = [];
    for (const t of tokens) {
      const named = byName.filter((l) => l.name === t).map((l) => l.id);
      const ids = named.length ? named : byId.filter((l) => String(l.id) === t).map((l) => l.id);
      if (ids.length) out.push(ids);
    }
    return out;
  }
}

function checkName(name: string): string {
  const n = checkText(name, 'name').trim();
  if (!n) throw invalidField('name', 'Required');
  if (n.length > MAX_NAME) throw invalidField('name', `must be at most ${MAX_NAME} characters`);
  return n;
}

function dedupe(labels: LabelRow[]): LabelRow[] {
  const seen = new Set<number>();
  return labels.filter((l) => (seen.has(l.id) ? false : (seen.add(l.id), true)));
}
