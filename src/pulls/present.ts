// Pull requests as Forgejo's PullRequest JSON: the one conversion the API (GET, lists, PATCH,
// POST) and the webhook payloads share. Everything a page of pull requests refers to (issue
// fields, head and base repositories, requested reviewers, mergers) is loaded for the whole page.
// Also their reviews (PullReview) and the reviews' line comments (PullReviewComment).
import { gitText } from '../git/git.js';
import { isoTime } from '../http/format.js';
import type { IssuePresenter } from '../issues/present.js';
import type { ForkService } from '../repos/forks.js';
import type { RepositoryJson } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { toUserJson } from '../users/schemas.js';
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import type { PullReviewService } from './reviewing.js';
import { REVIEW_STATES, type PullRequestJson, type PullReviewCommentJson } from './schemas.js';
import type { PullService } from './service.js';
import { PullStatus, type Pull, type ReviewCommentRow, type ReviewRow } from './tables.js';

export interface PullPresenterDeps {
  /** The issue fields of pull requests (title, body, labels, milestone, assignees, ...). */
  issues: Pick<IssuePresenter, 'issues'>;
  repos: Pick<RepoService, 'getById' | 'pathOf'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  forks: Pick<ForkService, 'reposJson'>;
  pulls: Pick<PullService, 'diffStat'>;
  reviews: Pick<PullReviewService, 'requestedReviewerIds' | 'reviewCommentCounts'>;
  rootUrl: string;
}

export class PullPresenter {
  constructor(private readonly deps: PullPresenterDeps) {}

  /** Pull requests of `repo` as `viewer` sees them (null: an anonymous caller, as in payloads). */
  async pulls(list: Pull[], repo: RepoRow, viewer: Viewer | null): Promise<PullRequestJson[]> {
    if (list.length === 0) return [];
    const { repos, users, pulls, reviews, rootUrl } = this.deps;
    const issuesJson = await this.deps.issues.issues(
      list.map((p) => p.issue),
      viewer,
      [repo],
    );
    const headIds = [
      ...new Set(
        list.map((p) => p.pr.head_repo_id).filter((id): id is number => id !== null && id !== repo.id),
      ),
    ];
    const headRows = (await Promise.all(headIds.map((id) => repos.getById(id)))).filter(
      (r): r is RepoRow => r !== undefined,
    );
    const repoJson = new Map<number, RepositoryJson>();
    const all = [repo, ...headRows];
    const jsons = await this.deps.forks.reposJson(all, viewer);
    all.forEach((r, i) => repoJson.set(r.id, jsons[i]!));
    const requested = await reviews.requestedReviewerIds(list.map((p) => p.issue.id));
    const userIds = new Set<number>([repo.owner_id]);
    for (const p of list) if (p.pr.merger_id !== null) userIds.add(p.pr.merger_id);
    for (const ids of requested.values()) for (const id of ids) userIds.add(id);
    const userMap = await users.getByIds([...userIds]);
    const uctx = { rootUrl, viewer };
    const full = `${userMap.get(repo.owner_id)?.name ?? ''}/${repo.name}`;
    const [stats, baseShas] = await Promise.all([
      Promise.all(list.map((p) => pulls.diffStat(p).catch(() => undefined))),
      this.branchShas(repo, [...new Set(list.map((p) => p.pr.base_branch))]),
    ]);
    return list.map((p, i) => {
      const j = issuesJson[i]!;
      const html = `${rootUrl}${full}/pulls/${p.issue.index}`;
      const headRepo = p.pr.head_repo_id !== null ? repoJson.get(p.pr.head_repo_id) : undefined;
      const headOwner = headRepo?.owner?.login ?? '';
      const merger = p.pr.merger_id !== null ? userMap.get(p.pr.merger_id) : undefined;
      const s = stats[i];
      return {
        id: p.pr.id,
        url: html,
        number: p.issue.index,
        user: j.user,
        title: j.title,
        body: j.body,
        labels: j.labels,
        milestone: j.milestone,
        assignee: j.assignee,
        assignees: j.assignees,
        requested_reviewers: (requested.get(p.issue.id) ?? [])
          .map((id) => userMap.get(id))
          .filter((u) => u !== undefined)
          .map((u) => toUserJson(u, uctx)),
        requested_reviewers_teams: [],
        state: j.state,
        draft: false,
        is_locked: j.is_locked,
        comments: j.comments,
        review_comments: 0,
        additions: s?.additions ?? 0,
        deletions: s?.deletions ?? 0,
        changed_files: s?.files ?? 0,
        html_url: html,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        mergeable:
          !p.pr.has_merged &&
          p.pr.status !== PullStatus.checking &&
          p.pr.status !== PullStatus.conflict &&
          p.pr.status !== PullStatus.error,
        merged: p.pr.has_merged === 1,
        merged_at: p.pr.has_merged ? isoTime(p.pr.merged_unix) : null,
        merge_commit_sha: p.pr.has_merged ? p.pr.merged_commit_id : null,
        merged_by: merger ? toUserJson(merger, uctx) : null,
        allow_maintainer_edit: p.pr.allow_maintainer_edit === 1,
        base: {
          label: p.pr.base_branch,
          ref: p.pr.base_branch,
          sha: baseShas.get(p.pr.base_branch) ?? '',
          repo_id: repo.id,
          repo: repoJson.get(repo.id) ?? null,
        },
        head: {
          label:
            headRepo && p.pr.head_repo_id !== repo.id ? `${headOwner}:${p.pr.head_branch}` : p.pr.head_branch,
          ref: p.pr.head_branch,
          sha: p.pr.head_commit_id,
          repo_id: p.pr.head_repo_id ?? 0,
          repo: headRepo ?? null,
        },
        merge_base: p.pr.merge_base,
        due_date: j.due_date,
        created_at: j.created_at,
        updated_at: j.updated_at,
        closed_at: j.closed_at,
        pin_order: j.pin_order,
        flow: 0,
      };
    });
  }

  async pull(p: Pull, repo: RepoRow, viewer: Viewer | null): Promise<PullRequestJson> {
    return (await this.pulls([p], repo, viewer))[0]!;
  }

  /** The current commit of each branch of `repo` ('' for a branch that is gone). */
  private async branchShas(repo: RepoRow, branches: string[]): Promise<Map<string, string>> {
    const dir = this.deps.repos.pathOf(repo);
    const shas = await Promise.all(
      branches.map((b) =>
        gitText(['rev-parse', '--verify', '--quiet', `refs/heads/${b}`], { gitDir: dir }).catch(() => ''),
      ),
    );
    return new Map(branches.map((b, i) => [b, shas[i]!]));
  }

  private async fullName(repo: RepoRow): Promise<string> {
    const owner = await this.deps.users.getById(repo.owner_id);
    return `${owner?.name ?? ''}/${repo.name}`;
  }

  /** Reviews of pull request `p` as Forgejo's PullReview JSON (their reviewers and comment counts in one query each). */
  async reviews(rows: ReviewRow[], p: Pull, repo: RepoRow, viewer: Viewer | null) {
    const { users, reviews, rootUrl } = this.deps;
    const ids = [...new Set(rows.map((r) => r.reviewer_id).filter((id): id is number => id !== null))];
    const [userMap, counts, full] = await Promise.all([
      users.getByIds(ids),
      reviews.reviewCommentCounts(rows.map((r) => r.id)),
      this.fullName(repo),
    ]);
    const html = `${rootUrl}${full}/pulls/${p.issue.index}`;
    return rows.map((r) => {
      const u = r.reviewer_id !== null ? userMap.get(r.reviewer_id) : undefined;
      return {
        id: r.id,
        user: u ? toUserJson(u, { rootUrl, viewer }) : null,
        team: null,
        state: REVIEW_STATES[r.type] ?? 'PENDING',
        body: r.content,
        commit_id: r.commit_id,
        stale: r.stale === 1,
        official: r.official === 1,
        dismissed: r.dismissed === 1,
        comments_count: counts.get(r.id) ?? 0,
        submitted_at: isoTime(r.created_unix),
        updated_at: isoTime(r.updated_unix),
        html_url: `${html}#issuecomment-${r.id}`,
        pull_request_url: html,
      };
    });
  }

  async review(row: ReviewRow, p: Pull, repo: RepoRow, viewer: Viewer | null) {
    return (await this.reviews([row], p, repo, viewer))[0]!;
  }

  /** Line comments of reviews of pull request `p` as Forgejo's PullReviewComment JSON. */
  async reviewComments(
    rows: ReviewCommentRow[],
    p: Pull,
    repo: RepoRow,
    viewer: Viewer | null,
  ): Promise<PullReviewCommentJson[]> {
    const { users, rootUrl } = this.deps;
    const ids = [...new Set(rows.map((r) => r.poster_id).filter((id): id is number => id !== null))];
    const [userMap, full] = await Promise.all([users.getByIds(ids), this.fullName(repo)]);
    const html = `${rootUrl}${full}/pulls/${p.issue.index}`;
    return rows.map((c) => {
      const u = c.poster_id !== null ? userMap.get(c.poster_id) : undefined;
      return {
        id: c.id,
        body: c.content,
        user: u ? toUserJson(u, { rootUrl, viewer }) : null,
        resolver: null,
        pull_request_review_id: c.review_id,
        path: c.tree_path,
        commit_id: c.commit_id,
        original_commit_id: c.original_commit_id,
        diff_hunk: c.diff_hunk,
        position: c.line > 0 ? c.line : 0,
        original_position: c.line < 0 ? -c.line : 0,
        created_at: isoTime(c.created_unix),
        updated_at: isoTime(c.updated_unix),
        html_url: `${html}#issuecomment-${c.id}`,
        pull_request_url: html,
      };
    });
  }
}
