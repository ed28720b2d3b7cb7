// Notifications: threads are created (or bumped back to unread) for the watchers of a repository
// and the subscribers and participants of an issue when it is opened, closed or reopened, commented
// on, or when a pull request is opened or merged. Never for the user who caused the event, never
// for users who cannot read the issue (or pull request) in its repository. Also repository watches.
import { nowUnix, transaction, type Db } from '../db/database.js';
import { notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import { AccessMode } from '../orgs/tables.js';
import * as issueStore from '../issues/store.js';
import { unitOf, type IssueService } from '../issues/service.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { SocialService } from '../social/service.js';
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import { NotificationSource } from './tables.js';
import { UserType } from '../users/tables.js';
import type { EventBus } from '../events/bus.js';
import type { NotificationFilter, NotificationRow, WatchRow } from './tables.js';

export type { NotificationFilter } from './tables.js';
export type { NotificationRow } from './tables.js';

export interface NotificationServiceDeps {
  db: Db;
  events: EventBus;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  orgs: Pick<OrgService, 'repoCreatorIds'>;
  repos: Pick<RepoService, 'getById' | 'access'>;
  issues: Pick<IssueService, 'getById' | 'watchers'>;
  /** Blocked users watch no repository of the blocker. */
  social: Pick<SocialService, 'assertNotBlocked'>;
  /** [service] AUTO_WATCH_NEW_REPOS: a new repository is watched by its creator. */
  autoWatchNewRepos: boolean;
}

export class NotificationService {
  private readonly db: Db;

  constructor(private readonly deps: NotificationServiceDeps) {
    this.db = deps.db;
    const { events, repos, users } = deps;
    if (deps.autoWatchNewRepos) {
      events.on('repository.created', async (e) => {
        const [repo, doer] = await Promise.all([repos.getById(e.repoId), users.getById(e.doerId)]);
        if (repo && doer) await this.watch(repo, doer);
      });
    }
    const bump = (e: { repoId: number; issueId: number; doerId: number }, commentId: number | null = null) =>
      this.notify(e.repoId, e.issueId, e.doerId, commentId);
    events.on('issue.opened', (e) => (e.isPull ? undefined : bump(e)));
    events.on('issue.closed', (e) => bump(e));
    events.on('issue.reopened', (e) => bump(e));
    events.on('comment.created', (e) => bump(e, e.commentId));
    events.on('pull.opened', (e) => bump(e));
    events.on('pull.merged', (e) => bump(e));
    events.on('repository.transfer_pending', (e) => this.notifyTransfer(e.repoId, e.doerId, e.recipientId));
  }

  /**
   * A pending transfer: its recipient is told (for an organization, everyone who may create
   * repositories in it, as Forgejo), but never the doer.
   */
  async notifyTransfer(repoId: number, doerId: number, recipientId: number): Promise<void> {
    const recipient = await this.deps.users.getById(recipientId);
    if (!recipient) return;
    const ids =
      recipient.type === UserType.Organization
        ? await this.deps.orgs.repoCreatorIds(recipient.id)
        : [recipient.id];
    const to = ids.filter((id) => id !== doerId);
    if (to.length === 0) return;
    await transaction(this.db, (tx) => store.insertRepoThreads(tx, to, { repoId, doerId, now: nowUnix() }));
  }

  /** Creates or bumps the threads of everyone following issue `issueId`, but `doerId`. */
  async notify(repoId: number, issueId: number, doerId: number, commentId: number | null): Promise<void> {
    const [repo, issue] = await Promise.all([
      this.deps.repos.getById(repoId),
      this.deps.issues.getById(issueId),
    ]);
    if (!repo || !issue) return;
    const [followers, watchers, explicit] = await Promise.all([
      this.deps.issues.watchers(issue),
      store.watcherIds(this.db, repoId),
      issueStore.watchRows(this.db, issueId),
    ]);
    const ids = new Set([...followers, ...watchers]);
    // An explicit unsubscription from the issue beats watching the repository.
    for (const w of explicit) if (!w.is_watching) ids.delete(w.user_id);
    ids.delete(doerId);
    if (ids.size === 0) return;
    const users = await this.deps.users.getByIds([...ids]);
    const unit = unitOf(issue.is_pull);
    const enabled = issue.is_pull ? repo.has_pull_requests : repo.has_issues;
    if (!enabled) return;
    const allowed = await Promise.all(
      [...users.values()].map(async (u) => ((await this.mayRead(repo, u, unit)) ? u.id : 0)),
    );
    const recipients = allowed.filter((id) => id > 0);
    if (recipients.length === 0) return;
    await transaction(this.db, (tx) =>
      store.upsertThreads(tx, recipients, {
        repoId,
        issueId,
        commentId,
        source: issue.is_pull ? NotificationSource.pull : NotificationSource.issue,
        doerId,
        now: nowUnix(),
      }),
    );
  }

  /** Whether `user` (an active account) may read `unit` of `repo`. */
  private async mayRead(repo: RepoRow, user: UserRow, unit: string): Promise<boolean> {
    if (user.is_active !== 1 || user.prohibit_login === 1 || user.type !== 0) return false;
    const access = await this.deps.repos.access(repo, { id: user.id, isAdmin: user.is_admin === 1 });
    return access.mode >= AccessMode.read && (access.units.get(unit) ?? 0) >= AccessMode.read;
  }

  // Threads

  list(filter: NotificationFilter, page: Page): Promise<[NotificationRow[], number]> {
    return store.list(this.db, filter, page.limit, page.offset);
  }

  countUnread(userId: number): Promise<number> {
    return store.countUnread(this.db, userId);
  }

  /** The thread `id` of `viewer`, or a 404 (also for someone else's thread). */
  async requireThread(viewer: Viewer, id: number): Promise<NotificationRow> {
    const row = Number.isSafeInteger(id) && id > 0 ? await store.getById(this.db, id) : undefined;
    if (!row || row.user_id !== viewer.id) throw notFound(`notification does not exist [id: ${id}]`);
    return row;
  }

  async setThreadStatus(row: NotificationRow, status: number): Promise<NotificationRow> {
    await store.setStatus(this.db, [row.id], status);
    return { ...row, status };
  }

  /** Sets every thread matching `filter` to `status`; returns the changed threads. */
  async markAll(filter: NotificationFilter, status: number): Promise<NotificationRow[]> {
    return transaction(this.db, async (tx) => {
      const rows = await store.all(tx, filter);
      await store.setStatus(
        tx,
        rows.map((r) => r.id),
        status,
      );
      return rows.map((r) => ({ ...r, status }));
    });
  }

  /** The issues among `issueIds` that are merged pull requests. */
  mergedIssueIds(issueIds: number[]): Promise<Set<number>> {
    return store.mergedIssueIds(this.db, issueIds);
  }

  /** Threads of repositories their user can no longer read: removed (lists skip them). */
  async forget(ids: number[]): Promise<void> {
    await store.deleteByIds(this.db, ids);
  }

  // Repository watches

  /** One page of the repositories `user` watches (their ids, latest watch first), and their number. */
  async watchedRepoIds(user: UserRow, page: Page): Promise<[number[], number]> {
    const [rows, total] = await store.watchedRepoIds(this.db, user.id, page.limit, page.offset);
    return [rows.map((r) => r.repo_id), total];
  }

  getWatch(repo: RepoRow, user: UserRow): Promise<WatchRow | undefined> {
    return store.getWatch(this.db, repo.id, user.id);
  }

  async watch(repo: RepoRow, user: UserRow): Promise<WatchRow> {
    await this.deps.social.assertNotBlocked(repo.owner_id, user.id);
    return transaction(this.db, async (tx) => {
      await store.addWatch(tx, repo.id, user.id, nowUnix());
      await store.recountWatches(tx, repo.id);
      return (await store.getWatch(tx, repo.id, user.id))!;
    });
  }

  async unwatch(repo: RepoRow, user: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.removeWatch(tx, repo.id, user.id);
      await store.recountWatches(tx, repo.id);
    });
  }
}
