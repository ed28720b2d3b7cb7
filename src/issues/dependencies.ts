// Issue dependencies, as Forgejo keeps them: an issue depends on (is blocked by) other issues, of
// its own repository or of any other the doer can read. Only writers of the depending issue's
// repository change its dependencies; each change writes an add_dependency or remove_dependency
// event on both issues. An issue with open dependencies cannot be closed (IssueService.setState).
import { nowUnix, transaction, type Db } from '../db/database.js';
import { forbidden, invalidField, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { Viewer } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { canWriteIssues, unitOf, type IssueService, type RepoView } from './service.js';
import * as store from './store.js';
import type { IssueRow } from './tables.js';
import * as tracking from './tracking-store.js';
import { CommentType } from './tables.js';

/** Forgejo's IssueMeta: an issue named by its repository and number. */
export interface IssueMetaInput {
  owner?: string | undefined;
  repo?: string | undefined;
  index?: number | undefined;
}

/** Which side of the URL's issue a request is about. */
export type DependencySide = 'dependencies' | 'blocks';

/** An issue with its repository as the caller sees it. */
export interface IssueInView {
  view: RepoView;
  issue: IssueRow;
}

export interface DependencyServiceDeps {
  db: Db;
  users: Pick<UserService, 'getById'>;
  repos: Pick<RepoService, 'requireRepo' | 'getByIds' | 'accessMany'>;
  issues: Pick<IssueService, 'requireVisibleIssue'>;
}

export class DependencyService {
  constructor(private readonly deps: DependencyServiceDeps) {}

  /**
   * The issue `meta` names, which `viewer` must be able to read (404 otherwise). Without owner
   * and repo, it is an issue of `current`, the repository of the URL.
   */
  async resolve(current: RepoView, meta: IssueMetaInput, viewer: Viewer | null): Promise<IssueInView> {
    let view = current;
    if (meta.owner || meta.repo) {
      const owner = await this.deps.users.getById(current.repo.owner_id);
      const sameRepo =
        (meta.owner ?? owner?.name ?? '').toLowerCase() === (owner?.name ?? '').toLowerCase() &&
        (meta.repo ?? current.repo.name).toLowerCase() === current.repo.name.toLowerCase();
      if (!sameRepo) {
        view = await this.deps.repos.requireRepo(
          meta.owner ?? owner?.name ?? '',
          meta.repo ?? current.repo.name,
          viewer,
          'read',
          'repo.issues',
        );
      }
    }
    const issue = await this.deps.issues.requireVisibleIssue(view, meta.index ?? 0);
    return { view, issue };
  }

  /**
   * One page of the issues `issue` depends on ('dependencies') or that depend on it ('blocks'),
   * less those `viewer` may not read; with the repositories they belong to.
   */
  async list(
    issue: IssueRow,
    side: DependencySide,
    viewer: Viewer | null,
    page: Page,
  ): Promise<{ rows: IssueRow[]; total: number; repos: Map<number, RepoRow> }> {
    const [rows, total] = await tracking.related(this.deps.db, issue.id, side, page.limit, page.offset);
    const repos = await this.deps.repos.getByIds([...new Set(rows.map((r) => r.repo_id))]);
    const access = await this.deps.repos.accessMany([...repos.values()], viewer);
    const visible = rows.filter((r) => {
      const repo = repos.get(r.repo_id);
      const enabled = r.is_pull ? repo?.has_pull_requests : repo?.has_issues;
      return enabled && (access.get(r.repo_id)?.units.get(unitOf(r.is_pull)) ?? 0) >= AccessMode.read;
    });
    return { rows: visible, total, repos };
  }

  /** The depending issue and its dependency of a request on `side` of `url`'s issue. */
  private static pair(url: IssueInView, other: IssueInView, side: DependencySide) {
    return side === 'dependencies' ? { target: url, dependency: other } : { target: other, dependency: url };
  }

  private static check(target: IssueInView, dependency: IssueInView): void {
    if (target.issue.id === dependency.issue.id) {
      throw invalidField('index', 'an issue cannot depend on itself');
    }
    if (target.view.repo.is_archived) throw forbidden(`repository is archived [id: ${target.view.repo.id}]`);
    if (!canWriteIssues(target.view.access, target.issue.is_pull)) {
      throw forbidden('you need write access to the issues of this repository to change its dependencies');
    }
  }

  /**
   * Makes the URL's issue depend on `other` ('dependencies') or `other` depend on it ('blocks').
   * Nothing happens when that dependency exists; 422 for a dependency on itself or the reverse of
   * an existing one; 403 when `doer` may not write the depending issue's repository.
   */
  async add(url: IssueInView, other: IssueInView, side: DependencySide, doer: UserRow): Promise<void> {
    const { target, dependency } = DependencyService.pair(url, other, side);
    DependencyService.check(target, dependency);
    await transaction(this.deps.db, async (tx) => {
      // Both issues, in id order: two requests making a circle wait for each other.
      for (const id of [target.issue.id, dependency.issue.id].sort((a, b) => a - b)) {
        await store.lockIssue(tx, id);
      }
      if (await tracking.hasDependency(tx, dependency.issue.id, target.issue.id)) {
        throw invalidField(
          'index',
          `circular dependency: #${dependency.issue.index} already depends on #${target.issue.index}`,
        );
      }
      const now = nowUnix();
      if (!(await tracking.addDependency(tx, target.issue.id, dependency.issue.id, now))) return;
      await DependencyService.events(
        tx,
        target.issue,
        dependency.issue,
        doer,
        CommentType.addDependency,
        now,
      );
    });
  }

  /** Removes a dependency made by `add`; 404 when there is none. */
  async remove(url: IssueInView, other: IssueInView, side: DependencySide, doer: UserRow): Promise<void> {
    const { target, dependency } = DependencyService.pair(url, other, side);
    DependencyService.check(target, dependency);
    await transaction(this.deps.db, async (tx) => {
      await store.lockIssue(tx, target.issue.id);
      if (!(await tracking.removeDependency(tx, target.issue.id, dependency.issue.id))) {
        throw notFound(
          `dependency does not exist [issue: ${target.issue.id}, dependency: ${dependency.issue.id}]`,
        );
      }
      const now = nowUnix();
      await DependencyService.events(
        tx,
        target.issue,
        dependency.issue,
        doer,
        CommentType.removeDependency,
        now,
      );
    });
  }

  /** The timeline events of a dependency change: one on each issue, naming the other. */
  private static async events(
    tx: Parameters<typeof store.insertComment>[0],
    target: IssueRow,
    dependency: IssueRow,
    doer: UserRow,
    type: number,
    now: number,
  ): Promise<void> {
    for (const [issue, other] of [
      [target, dependency],
      [dependency, target],
    ] as const) {
      await store.insertComment(tx, {
        type,
        repo_id: issue.repo_id,
        issue_id: issue.id,
        poster_id: doer.id,
        dependent_issue_id: other.id,
        created_unix: now,
        updated_unix: now,
      });
    }
  }
}
