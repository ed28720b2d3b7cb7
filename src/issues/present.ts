// Issues, comments, timeline events and reactions as JSON: everything a page of them refers to
// (posters, assignees, labels, milestones, repositories, attachments) is loaded in a few queries
// for the whole page, through the services.
import type { Viewer } from '../users/tables.js';
import type { RepoRow } from '../repos/tables.js';
import type { LabelRow } from '../labels/tables.js';
import { toLabelJson } from '../labels/schemas.js';
import type { CommentRow, IssueRow, PlainCommentRow, ReactionRow } from './tables.js';
import {
  toCommentJson,
  toIssueJson,
  toReactionJson,
  toTimelineJson,
  type CommentJson,
  type IssueJson,
  type IssueJsonContext,
  type ReactionJson,
  type TimelineCommentJson,
} from './schemas.js';
import { AccessMode } from '../orgs/tables.js';
import { unitOf, type IssueService } from './service.js';
import type { TimeService } from './times.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { StopwatchRow, TrackedTimeRow } from './tables.js';
import {
  toStopWatchJson,
  toTrackedTimeJson,
  type StopWatchJson,
  type TrackedTimeJson,
} from './tracking-schemas.js';
import { nowUnix } from '../db/database.js';

export interface IssuePresenterDeps {
  rootUrl: string;
  users: Pick<UserService, 'getByIds'>;
  repos: Pick<RepoService, 'getByIds' | 'accessMany'>;
  issues: Pick<IssueService, 'getByIds' | 'assigneesOf' | 'issueAssets' | 'commentAssets'>;
  labels: Pick<LabelService, 'ofIssues' | 'getByIds'>;
  milestones: Pick<MilestoneService, 'getByIds'>;
  times: Pick<TimeService, 'getByIds'>;
}

export class IssuePresenter {
  constructor(private readonly deps: IssuePresenterDeps) {}

  /**
   * The context for converting rows of the repositories `repos`: users `userIds` (with the
   * repository owners), milestones `milestoneIds`, and for `issues` their labels and assignees.
   */
  private async context(
    viewer: Viewer | null,
    repos: Iterable<RepoRow>,
    o: {
      issues?: IssueRow[];
      userIds?: Array<number | null>;
      milestoneIds?: Array<number | null>;
      commentIds?: number[];
    },
  ): Promise<IssueJsonContext> {
    const { users, labels, milestones } = this.deps;
    const repoList = [...repos];
    const issueIds = (o.issues ?? []).map((i) => i.id);
    const [labelMap, assignees, issueAssets, commentAssets] = await Promise.all([
      labels.ofIssues(issueIds),
      this.deps.issues.assigneesOf(issueIds),
      this.deps.issues.issueAssets(issueIds),
      this.deps.issues.commentAssets(o.commentIds ?? []),
    ]);
    const userIds = new Set<number>(repoList.map((r) => r.owner_id));
    for (const id of o.userIds ?? []) if (id !== null && id > 0) userIds.add(id);
    for (const i of o.issues ?? []) if (i.poster_id !== null) userIds.add(i.poster_id);
    for (const list of assignees.values()) for (const id of list) userIds.add(id);
    const milestoneIds = [...(o.milestoneIds ?? []), ...(o.issues ?? []).map((i) => i.milestone_id)].filter(
      (id): id is number => id !== null && id > 0,
    );
    const [userMap, milestoneMap] = await Promise.all([
      users.getByIds([...userIds]),
      milestones.getByIds(milestoneIds),
    ]);
    const repoNames = new Map(
      repoList.map((r) => [r.id, { name: r.name, owner: userMap.get(r.owner_id)?.name ?? '' }]),
    );
    const orgNames = new Map(repoList.map((r) => [r.owner_id, userMap.get(r.owner_id)?.name ?? '']));
    const rootUrl = this.deps.rootUrl;
    return {
      rootUrl,
      viewer,
      repoNames,
      users: userMap,
      userJson: new Map(),
      labels: labelMap,
      labelUrls: {
        rootUrl,
        repoFullName: (id) => {
          const r = repoNames.get(id);
          return r ? `${r.owner}/${r.name}` : undefined;
        },
        orgName: (id) => orgNames.get(id),
      },
      milestones: milestoneMap,
      assignees,
      issueAssets,
      commentAssets,
      pulls: new Map(),
    };
  }

  /** Issues of `repos` (every repository the rows belong to) as JSON. */
  async issues(rows: IssueRow[], viewer: Viewer | null, repos: Iterable<RepoRow>): Promise<IssueJson[]> {
    const c = await this.context(viewer, repos, { issues: rows });
    return rows.map((i) => toIssueJson(i, c));
  }

  async issue(row: IssueRow, viewer: Viewer | null, repo: RepoRow): Promise<IssueJson> {
    return (await this.issues([row], viewer, [repo]))[0]!;
  }

  async comments(
    issue: IssueRow,
    rows: PlainCommentRow[],
    viewer: Viewer | null,
    repo: RepoRow,
  ): Promise<CommentJson[]> {
    const c = await this.context(viewer, [repo], {
      userIds: rows.map((r) => r.poster_id),
      commentIds: rows.map((r) => r.id),
    });
    return rows.map((r) => toCommentJson(r, issue, c));
  }

  /** Comments of several issues of one repository (the repository-wide list). */
  async repoComments(rows: PlainCommentRow[], viewer: Viewer | null, repo: RepoRow): Promise<CommentJson[]> {
    const issues = await this.deps.issues.getByIds(rows.map((r) => r.issue_id));
    const c = await this.context(viewer, [repo], {
      userIds: rows.map((r) => r.poster_id),
      commentIds: rows.map((r) => r.id),
    });
    return rows.map((r) => toCommentJson(r, issues.get(r.issue_id)!, c));
  }

  /** Comments of issues (`issues` holds theirs) of any of `repos` (which hold theirs), as JSON. */
  async commentsOf(
    rows: PlainCommentRow[],
    issues: Map<number, IssueRow>,
    viewer: Viewer | null,
    repos: Iterable<RepoRow>,
  ): Promise<CommentJson[]> {
    const c = await this.context(viewer, repos, {
      userIds: rows.map((r) => r.poster_id),
      commentIds: rows.map((r) => r.id),
    });
    return rows.map((r) => toCommentJson(r, issues.get(r.issue_id)!, c));
  }

  async timeline(
    issue: IssueRow,
    rows: CommentRow[],
    viewer: Viewer | null,
    repo: RepoRow,
  ): Promise<TimelineCommentJson[]> {
    const labelIds = [...new Set(rows.map((r) => r.label_id).filter((id): id is number => id !== null))];
    const [c, labelRows] = await Promise.all([
      this.context(viewer, [repo], {
        userIds: rows.flatMap((r) => [r.poster_id, r.assignee_id]),
        milestoneIds: rows.flatMap((r) => [r.milestone_id, r.old_milestone_id]),
      }),
      this.deps.labels.getByIds(labelIds),
    ]);
    const labels = new Map<number, LabelRow>(labelRows.map((l) => [l.id, l]));
    const dependents = await this.readableIssues(
      rows.map((r) => r.dependent_issue_id).filter((id): id is number => id !== null),
      viewer,
    );
    const timeRows = await this.deps.times.getByIds(
      rows.map((r) => r.time_id).filter((id): id is number => id !== null),
    );
    const timeJson = await this.trackedTimes(timeRows, viewer);
    const times = new Map(timeRows.map((t, n) => [t.id, timeJson[n]!]));
    return rows.map((r) => toTimelineJson(r, issue, c, labels, dependents, times));
  }

  /** The issues `ids` that `viewer` may read, as JSON by id. */
  private async readableIssues(ids: number[], viewer: Viewer | null): Promise<Map<number, IssueJson>> {
    if (ids.length === 0) return new Map();
    const issues = [...(await this.deps.issues.getByIds(ids)).values()];
    const repos = await this.deps.repos.getByIds([...new Set(issues.map((i) => i.repo_id))]);
    const access = await this.deps.repos.accessMany([...repos.values()], viewer);
    const readable = issues.filter((i) => {
      const repo = repos.get(i.repo_id);
      const enabled = i.is_pull ? repo?.has_pull_requests : repo?.has_issues;
      return enabled && (access.get(i.repo_id)?.units.get(unitOf(i.is_pull)) ?? 0) >= AccessMode.read;
    });
    const json = await this.issues(readable, viewer, repos.values());
    return new Map(readable.map((i, n) => [i.id, json[n]!]));
  }

  /** Issues of any repositories (`repos` holds at least theirs) as JSON. */
  async issuesOf(rows: IssueRow[], viewer: Viewer | null, repos: Map<number, RepoRow>): Promise<IssueJson[]> {
    const involved = new Set(rows.map((r) => r.repo_id));
    return this.issues(
      rows,
      viewer,
      [...repos.values()].filter((r) => involved.has(r.id)),
    );
  }

  /** Tracked times with their issues and users. */
  async trackedTimes(rows: TrackedTimeRow[], viewer: Viewer | null): Promise<TrackedTimeJson[]> {
    const issues = await this.deps.issues.getByIds(rows.map((r) => r.issue_id));
    const issueList = [...issues.values()];
    const [repos, users] = await Promise.all([
      this.deps.repos.getByIds([...new Set(issueList.map((i) => i.repo_id))]),
      this.deps.users.getByIds([...new Set(rows.map((r) => r.user_id))]),
    ]);
    const json = await this.issues(issueList, viewer, repos.values());
    const byId = new Map(issueList.map((i, n) => [i.id, json[n]!]));
    return rows.map((t) => toTrackedTimeJson(t, byId.get(t.issue_id)!, users.get(t.user_id)?.name ?? ''));
  }

  /** Running stopwatches with their issues and repositories. */
  async stopwatches(rows: StopwatchRow[]): Promise<StopWatchJson[]> {
    const issues = await this.deps.issues.getByIds(rows.map((r) => r.issue_id));
    const repos = await this.deps.repos.getByIds([...new Set([...issues.values()].map((i) => i.repo_id))]);
    const owners = await this.deps.users.getByIds([...new Set([...repos.values()].map((r) => r.owner_id))]);
    const now = nowUnix();
    return rows.flatMap((sw) => {
      const issue = issues.get(sw.issue_id);
      const repo = issue && repos.get(issue.repo_id);
      if (!issue || !repo) return [];
      return [
        toStopWatchJson(sw, issue, { owner: owners.get(repo.owner_id)?.name ?? '', name: repo.name }, now),
      ];
    });
  }

  async reactions(rows: ReactionRow[], viewer: Viewer | null, repo: RepoRow): Promise<ReactionJson[]> {
    const c = await this.context(viewer, [repo], { userIds: rows.map((r) => r.user_id) });
    return rows.map((r) => toReactionJson(r, c));
  }

  /** Labels of `repo` (or its organization) as JSON. */
  async labels(rows: LabelRow[], repo: RepoRow) {
    const c = await this.context(null, [repo], {});
    return rows.map((l) => toLabelJson(l, c.labelUrls));
  }
}
