// Activities: written from the event bus (after each change has committed) and read as feeds and
// heatmaps, each limited to what the viewer may see: rows of private repositories only to those
// who can read them, and to the feed's own user (or an administrator) as Forgejo does.
import { nowUnix, type Db } from '../db/database.js';
import type { Page } from '../http/pagination.js';
import type { Cluster } from '../cluster/service.js';
import type { EventBus } from '../events/bus.js';
import type { IssueService } from '../issues/service.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import * as issueStore from '../issues/store.js';
import type { PlainCommentRow } from '../issues/tables.js';
import type { IssueRow } from '../issues/tables.js';
import { unitOf } from '../issues/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { Visibility } from '../users/tables.js';
import * as store from './store.js';
import type { OpType } from './tables.js';
import type { ActionRow } from './tables.js';

/** Heatmaps cover the last year. */
const HEATMAP_SPAN = 366 * 86400;
/**
 * A heatmap read is kept for this long, or until any process records an action of its user (the
 * cluster topic `activities.recorded`): a busy user's year is some 35,000 buckets, too many to
 * read per request.
 */
const HEATMAP_TTL_MS = 60_000;
const HEATMAP_CACHE_MAX = 1_000;

type Heatmap = Array<{ timestamp: number; contributions: number }>;

export interface FeedQuery {
  /** `YYYY-MM-DD`: only that day (UTC). */
  date?: string | undefined;
  page: Page;
}

export interface ActivityServiceDeps {
  db: Db;
  events: EventBus;
  /** Tells the other processes of an action recorded (their heatmaps), and hears theirs. */
  cluster: Pick<Cluster, 'on' | 'publish'>;
  /** `accessMany`: who may read the comments the entries name. */
  repos: Pick<RepoService, 'getById' | 'accessMany'>;
  users: Pick<UserService, 'getById'>;
  /** Titles of issues and texts of comments, for the entries' content; the issues of their comments. */
  issues: Pick<IssueService, 'getById' | 'getCommentById' | 'getByIds'>;
}

export class ActivityService {
  private readonly db: Db;
  /** Recent heatmaps by `${userId}:${withPrivate}` (see HEATMAP_TTL_MS). */
  private readonly heatmaps = new Map<string, { until: number; value: Promise<Heatmap> }>();

  constructor(private readonly deps: ActivityServiceDeps) {
    this.db = deps.db;
    // Another process recorded an action of this user (a `reset`, no user: messages may be lost).
    deps.cluster.on('activities.recorded', (actorId) => {
      if (typeof actorId === 'number') this.forgetHeatmaps(actorId);
      else this.heatmaps.clear();
    });
    const { events, issues } = deps;
    events.on('repository.created', (e) => this.record(e.repoId, e.doerId, 'create_repo'));
    events.on('push', async (e) => {
      for (const u of e.updates) {
        const deleted = /^0+$/.test(u.newOid);
        const created = /^0+$/.test(u.oldOid);
        const tag = u.ref.startsWith('refs/tags/');
        if (!tag && !u.ref.startsWith('refs/heads/')) continue;
        const op: OpType = tag
          ? deleted
            ? 'delete_tag'
            : 'push_tag'
          : deleted
            ? 'delete_branch'
            : 'commit_repo';
        if (tag && !deleted && !created) continue;
        const content = op === 'commit_repo' ? JSON.stringify({ HeadCommit: { Sha1: u.newOid } }) : '';
        await this.record(e.repoId, e.pusherId, op, { refName: u.ref, content });
      }
    });
    const titled = async (issueId: number, index: number) => {
      const issue = await issues.getById(issueId);
      return `${index}|${issue?.title ?? ''}`;
    };
    events.on('issue.opened', async (e) =>
      this.record(e.repoId, e.doerId, e.isPull ? 'create_pull_request' : 'create_issue', {
        content: await titled(e.issueId, e.index),
      }),
    );
    events.on('issue.closed', async (e) =>
      this.record(e.repoId, e.doerId, e.isPull ? 'close_pull_request' : 'close_issue', {
        content: await titled(e.issueId, e.index),
      }),
    );
    events.on('issue.reopened', async (e) =>
      this.record(e.repoId, e.doerId, e.isPull ? 'reopen_pull_request' : 'reopen_issue', {
        content: await titled(e.issueId, e.index),
      }),
    );
    events.on('pull.merged', async (e) =>
      this.record(e.repoId, e.doerId, 'merge_pull_request', { content: await titled(e.issueId, e.index) }),
    );
    events.on('comment.created', async (e) => {
      const found = await issues.getCommentById(e.commentId);
      this.record(e.repoId, e.doerId, e.isPull ? 'comment_pull' : 'comment_issue', {
        commentId: e.commentId,
        content: `${e.index}|${(found?.content ?? '').slice(0, 200)}`,
      });
    });
    events.on('release.published', (e) =>
      this.record(e.repoId, e.doerId, 'publish_release', {
        refName: `refs/tags/${e.release.tag_name}`,
        content: e.release.title,
      }),
    );
  }

  private async record(
    repoId: number,
    actorId: number,
    op: OpType,
    extra: { refName?: string; content?: string; commentId?: number } = {},
  ): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo) return;
    const owner = await this.deps.users.getById(repo.owner_id);
    const row = {
      act_user_id: actorId,
      op_type: op,
      repo_id: repo.id,
      owner_id: repo.owner_id,
      is_private: repo.is_private || (owner && owner.visibility !== Visibility.public) ? 1 : 0,
      comment_id: extra.commentId ?? null,
      ref_name: extra.refName ?? '',
      content: extra.content ?? '',
      created_unix: nowUnix(),
    };
    // In the actor's feed and in the owner's (a user or an organization).
    const feeds = actorId === repo.owner_id ? [actorId] : [actorId, repo.owner_id];
    await store.insert(
      this.db,
      feeds.map((user_id) => ({ ...row, user_id })),
    );
    this.forgetHeatmaps(actorId);
    this.deps.cluster.publish('activities.recorded', actorId);
  }

  private forgetHeatmaps(userId: number): void {
    this.heatmaps.delete(`${userId}:true`);
    this.heatmaps.delete(`${userId}:false`);
  }

  /** The repositories `viewer` may read, as a filter (none for administrators). */
  private readable(viewer: Viewer | null) {
    if (viewer?.isAdmin && !viewer.publicOnly) return undefined;
    return { viewerId: viewer === null || viewer.publicOnly ? null : viewer.id };
  }

  private day(date: string | undefined): { from?: number; to?: number } {
    if (!date) return {};
    const from = Date.parse(`${date}T00:00:00Z`) / 1000;
    return { from, to: from + 86400 };
  }

  /** What `user` did and what happened in their repositories (only what they did: `onlyPerformedBy`). */
  userFeed(user: UserRow, viewer: Viewer | null, onlyPerformedBy: boolean, q: FeedQuery) {
    const self = viewer !== null && !viewer.publicOnly && (viewer.isAdmin || viewer.id === user.id);
    // A user who hides their activity (settings: hide_activity) shows none to others, as in Forgejo.
    if (user.keep_activity_private && !self) return Promise.resolve<[ActionRow[], number]>([[], 0]);
    return store.feed(
      this.db,
      {
        userId: user.id,
        onlyPerformed: onlyPerformedBy,
        includePrivate: self,
        readable: this.readable(viewer),
        ...this.day(q.date),
      },
      q.page.limit,
      q.page.offset,
    );
  }

  /** What happened in an organization's repositories; private ones only to its members. */
  orgFeed(org: UserRow, viewer: Viewer | null, member: boolean, q: FeedQuery) {
    return store.feed(
      this.db,
      { userId: org.id, includePrivate: member, readable: this.readable(viewer), ...this.day(q.date) },
      q.page.limit,
      q.page.offset,
    );
  }

  teamFeed(teamId: number, viewer: Viewer | null, q: FeedQuery) {
    return store.feed(
      this.db,
      { teamId, includePrivate: true, readable: this.readable(viewer), ...this.day(q.date) },
      q.page.limit,
      q.page.offset,
    );
  }

  /** What happened in a repository the viewer can read. */
  repoFeed(repo: RepoRow, q: FeedQuery) {
    return store.feed(
      this.db,
      { repoId: repo.id, includePrivate: true, ...this.day(q.date) },
      q.page.limit,
      q.page.offset,
    );
  }

  /**
   * The comments the entries of a feed page name, with their issues, in a fixed number of queries
   * (not one per entry): only those of the entry's repository (`repos`, by id) that `viewer` may
   * read there (its issues or pull requests), as the comment's own endpoints would show them.
   */
  async commentsOf(
    rows: ActionRow[],
    repos: Map<number, RepoRow>,
    viewer: Viewer | null,
  ): Promise<{ comments: PlainCommentRow[]; issues: Map<number, IssueRow> }> {
    const ids = [...new Set(rows.map((r) => r.comment_id).filter((id): id is number => !!id))];
    const found = await issueStore.plainCommentsByIds(this.db, ids);
    if (found.length === 0) return { comments: [], issues: new Map() };
    const [issues, access] = await Promise.all([
      this.deps.issues.getByIds(found.map((c) => c.issue_id)),
      this.deps.repos.accessMany(
        [...new Set(found.map((c) => c.repo_id))].flatMap((id) => repos.get(id) ?? []),
        viewer,
      ),
    ]);
    const comments = found.filter((c) => {
      const issue = issues.get(c.issue_id);
      const repo = repos.get(c.repo_id);
      if (!issue || !repo || issue.repo_id !== repo.id) return false;
      const enabled = issue.is_pull ? repo.has_pull_requests : repo.has_issues;
      return !!enabled && (access.get(repo.id)?.units.get(unitOf(issue.is_pull)) ?? 0) >= AccessMode.read;
    });
    return { comments, issues };
  }

  heatmap(user: UserRow, viewer: Viewer | null): Promise<Heatmap> {
    const self = viewer !== null && !viewer.publicOnly && (viewer.isAdmin || viewer.id === user.id);
    if (user.keep_activity_private && !self) return Promise.resolve([]);
    const key = `${user.id}:${self}`;
    const now = Date.now();
    const cached = this.heatmaps.get(key);
    if (cached && cached.until > now) return cached.value;
    if (this.heatmaps.size >= HEATMAP_CACHE_MAX) this.heatmaps.clear();
    const value = store.heatmap(this.db, user.id, nowUnix() - HEATMAP_SPAN, self);
    this.heatmaps.set(key, { until: now + HEATMAP_TTL_MS, value });
    value.catch(() => this.heatmaps.delete(key));
    return value;
  }
}
