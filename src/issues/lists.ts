// Lists of issues (and pull requests): one repository's, with the API's filters (state, type, text,
// labels, milestones, poster, assignee, mentioned user, times), and the search across every
// repository a viewer may read (of one owner or team, the viewer's own, ...). Readers only ever see
// issues of repositories whose issues (or pull requests) unit they may read.
import type { Db } from '../db/database.js';
import { badRequest, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { OrgService } from '../orgs/service.js';
import { AccessMode } from '../orgs/tables.js';
import * as orgStore from '../orgs/store.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import { UserType, Visibility } from '../users/tables.js';
import * as store from './store.js';
import type { IssueFilter } from './store.js';
import type { IssueRow, IssueSort } from './tables.js';
import { isId, isName, parseTime } from './input.js';
import type { IssueService } from './service.js';

export interface IssueListInput {
  state?: 'open' | 'closed' | 'all' | undefined;
  labels?: string | undefined;
  milestones?: string | undefined;
  q?: string | undefined;
  type?: 'issues' | 'pulls' | undefined;
  since?: string | undefined;
  before?: string | undefined;
  createdBy?: string | undefined;
  assignedBy?: string | undefined;
  mentionedBy?: string | undefined;
  sort?: IssueSort | undefined;
}

export interface IssueSearchInput extends IssueListInput {
  owner?: string | undefined;
  team?: string | undefined;
  priorityRepoId?: number | undefined;
  assigned?: boolean | undefined;
  created?: boolean | undefined;
  mentioned?: boolean | undefined;
  reviewRequested?: boolean | undefined;
  reviewed?: boolean | undefined;
  /** Only issues the viewer follows (subscribed, or took part in and did not unsubscribe). */
  subscribed?: boolean | undefined;
  /** Only repositories the viewer owns or is a member of (not every public one). */
  memberOnly?: boolean | undefined;
}

export interface IssueListServiceDeps {
  db: Db;
  users: Pick<UserService, 'canSee' | 'getByIds'>;
  orgs: Pick<OrgService, 'canSee'>;
  repos: Pick<RepoService, 'access' | 'list' | 'listTeamRepos'>;
  labels: Pick<LabelService, 'filterIds' | 'idsByNamesIn'>;
  milestones: Pick<MilestoneService, 'filterIds' | 'idsByNamesIn'>;
  /** Users named in filters. */
  issues: Pick<IssueService, 'findUser'>;
}

export class IssueListService {
  private readonly db: Db;

  constructor(private readonly deps: IssueListServiceDeps) {
    this.db = deps.db;
  }

  private static timeFilter(input: { since?: string | undefined; before?: string | undefined }) {
    return {
      updatedAfter: input.since === undefined ? undefined : parseTime(input.since, 'since'),
      updatedBefore: input.before === undefined ? undefined : parseTime(input.before, 'before'),
    };
  }

  private async userIdFilter(name: string | undefined): Promise<number | undefined> {
    if (name === undefined || name === '') return undefined;
    const u = await this.deps.issues.findUser(name);
    if (!u) throw notFound(`user does not exist [name: ${name}]`);
    return u.id;
  }

  private static tokens(list: string | undefined): string[] {
    return [
      ...new Set(
        (list ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s && isName(s)),
      ),
    ];
  }

  /** Filters common to the repository list and the search: state, type, text, users, times. */
  private async commonFilter(input: IssueListInput): Promise<Omit<IssueFilter, 'repos'>> {
    const state = input.state ?? 'open';
    return {
      isClosed: state === 'all' ? undefined : state === 'closed',
      isPull: input.type === undefined ? undefined : input.type === 'pulls',
      keyword: input.q?.replace(/\0/g, '').trim() || undefined,
      posterId: await this.userIdFilter(input.createdBy),
      assigneeId: await this.userIdFilter(input.assignedBy),
      mentionedId: await this.userIdFilter(input.mentionedBy),
      ...IssueListService.timeFilter(input),
      sort: input.sort,
    };
  }

  /**
   * One page of a repository's issues. `labels`: names (or ids) the issues must all have (unknown
   * ones are ignored; when none is known, nothing matches); `milestones`: titles or ids, any of them.
   */
  async list(repo: RepoRow, input: IssueListInput, page: Page): Promise<[IssueRow[], number]> {
    const filter: IssueFilter = {
      repos: { issues: repo.has_issues ? [repo.id] : [], pulls: repo.has_pull_requests ? [repo.id] : [] },
      ...(await this.commonFilter(input)),
    };
    const labelTokens = IssueListService.tokens(input.labels);
    if (labelTokens.length) {
      filter.labelGroups = await this.deps.labels.filterIds(repo, labelTokens);
      if (filter.labelGroups.length === 0) return [[], 0];
    }
    const milestoneTokens = IssueListService.tokens(input.milestones);
    if (milestoneTokens.length)
      filter.milestoneIds = await this.deps.milestones.filterIds(repo, milestoneTokens);
    return store.list(this.db, filter, page.limit, page.offset);
  }

  /**
   * One page of the issues of every repository `viewer` may read (their issues unit included),
   * optionally of one owner or of one team of an organization; labels and milestones by name,
   * any of them. Also returns the repositories involved.
   */
  async search(
    viewer: Viewer | null,
    input: IssueSearchInput,
    page: Page,
  ): Promise<{ rows: IssueRow[]; total: number; repos: Map<number, RepoRow> }> {
    const empty = { rows: [], total: 0, repos: new Map<number, RepoRow>() };
    if (input.reviewed) return empty;
    if ((input.reviewRequested || input.subscribed || input.memberOnly) && !viewer) return empty;
    const repos = await this.searchableRepos(viewer, input.owner, input.team, input.memberOnly);
    const filter: IssueFilter = {
      repos: {
        issues: repos.filter((r) => r.has_issues).map((r) => r.id),
        pulls: repos.filter((r) => r.has_pull_requests).map((r) => r.id),
      },
      ...(await this.commonFilter(input)),
      sort: input.sort ?? 'priorityrepo',
      priorityRepoId:
        input.priorityRepoId !== undefined && isId(input.priorityRepoId) ? input.priorityRepoId : undefined,
    };
    if (input.created || input.assigned || input.mentioned) {
      if (!viewer) return empty;
      if (input.created) filter.posterId = viewer.id;
      if (input.assigned) filter.assigneeId = viewer.id;
      if (input.mentioned) filter.mentionedId = viewer.id;
    }
    if (viewer && input.reviewRequested) {
      filter.reviewRequestedId = viewer.id;
      filter.repos.issues = [];
    }
    if (viewer && input.subscribed) filter.subscriberId = viewer.id;
    const repoIds = repos.map((r) => r.id);
    const labelNames = IssueListService.tokens(input.labels);
    if (labelNames.length) {
      const orgIds = [...new Set(repos.map((r) => r.owner_id))];
      const ids = await this.deps.labels.idsByNamesIn(labelNames, repoIds, orgIds);
      if (ids.length === 0) return empty;
      filter.labelGroups = [ids];
    }
    const milestoneNames = IssueListService.tokens(input.milestones);
    if (milestoneNames.length)
      filter.milestoneIds = await this.deps.milestones.idsByNamesIn(repoIds, milestoneNames);
    const [rows, total] = await store.list(this.db, filter, page.limit, page.offset);
    const byId = new Map(repos.map((r) => [r.id, r]));
    return { rows, total, repos: new Map(rows.map((r) => [r.repo_id, byId.get(r.repo_id)!])) };
  }

  /**
   * The repositories whose issues (or pull requests) `viewer` may read: every one they may see, or
   * (memberOnly) those they own or were given access to.
   */
  readableRepos(viewer: Viewer, memberOnly: boolean): Promise<RepoRow[]> {
    return this.searchableRepos(viewer, undefined, undefined, memberOnly);
  }

  /** The repositories whose issues `viewer` may read, of `ownerName` (and its team `teamName`). */
  private async searchableRepos(
    viewer: Viewer | null,
    ownerName?: string,
    teamName?: string,
    memberOnly?: boolean,
  ): Promise<RepoRow[]> {
    let ownerId: number | undefined;
    let teamRepoIds: Set<number> | undefined;
    if (ownerName) {
      const owner = await this.deps.issues.findUser(ownerName);
      const visible =
        owner &&
        (owner.type === UserType.Organization
          ? await this.deps.orgs.canSee(viewer, owner)
          : this.deps.users.canSee(viewer, owner));
      if (!owner || !visible) throw badRequest(`Owner not found [name: ${ownerName}]`);
      ownerId = owner.id;
    }
    if (teamName) {
      if (ownerId === undefined) throw badRequest('Owner organisation is required for filtering on team');
      const team = isName(teamName) ? await orgStore.getTeamByName(this.db, ownerId, teamName) : undefined;
      if (!team) throw badRequest(`Team not found [name: ${teamName}]`);
      if (!team.includes_all_repositories) {
        const [rows] = await this.deps.repos.listTeamRepos(team, Number.MAX_SAFE_INTEGER, 0);
        teamRepoIds = new Set(rows.map((r) => r.id));
      }
    }
    const [rows] = await this.deps.repos.list(
      {
        ownerId,
        ...(memberOnly && viewer ? { memberOf: viewer.id } : {}),
        viewerId: viewer?.isAdmin && !viewer.publicOnly ? undefined : (viewer?.id ?? null),
        publicOnly: viewer?.publicOnly,
        orderBy: 'id',
      },
      Number.MAX_SAFE_INTEGER,
      0,
    );
    const candidates = teamRepoIds ? rows.filter((r) => teamRepoIds.has(r.id)) : rows;
    if (!viewer || viewer.isAdmin) return candidates;
    // Repositories reached through a team may leave the issues unit out: check those one by one.
    const owners = await this.deps.users.getByIds([...new Set(candidates.map((r) => r.owner_id))]);
    const out: RepoRow[] = [];
    for (const r of candidates) {
      const owner = owners.get(r.owner_id);
      const open = !r.is_private && owner?.visibility === Visibility.public;
      if (open || r.owner_id === viewer.id) {
        out.push(r);
        continue;
      }
      const access = await this.deps.repos.access(r, viewer);
      if (
        (access.units.get('repo.issues') ?? 0) >= AccessMode.read ||
        (access.units.get('repo.pulls') ?? 0) >= AccessMode.read
      ) {
        out.push(r);
      }
    }
    return out;
  }
}
