// From events to webhook deliveries: the listeners that turn what happened (pushes, repositories
// created and deleted, issues, pull requests, comments, releases, packages, wiki pages) into
// Forgejo's payloads for the hooks that want them, queued in one quick insert right after the
// change (the git work a push payload needs is done only when some hook wants it). Hooks of the
// repository, of its owner and of the site (system hooks) are asked; default hooks are copied into
// each new repository.
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { CommentEvent, EventBus, IssueEvent, RefUpdate } from '../events/bus.js';
import { ZERO_OID } from '../git/git.js';
import { isoTime } from '../http/format.js';
import type { IssueService } from '../issues/service.js';
import type { CommentRow, IssueRow } from '../issues/tables.js';
import { packageHtmlUrl, type PackageEventInfo } from '../packages/service.js';
import type { PullRequestJson } from '../pulls/schemas.js';
import type { PullService } from '../pulls/service.js';
import { ReviewType } from '../pulls/tables.js';
import type { ReleaseRow } from '../releases/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserJson } from '../users/schemas.js';
import type { UserService } from '../users/service.js';
import { branchMatches, parseSettings, wants, type EventType, type HookEventSettings } from './events.js';
import type { Payloads, PullExtra, Subject } from './payloads.js';
import type { DeliveryQueue, Outgoing } from './queue.js';
import * as store from './store.js';
import type { WebhookRow } from './tables.js';

/** One pull_request_* delivery of an event. */
interface PullDelivery {
  type: EventType;
  action: string;
  extra?: PullExtra;
  /** For labels: how many were removed (label_cleared when that left none). */
  labelsRemoved?: number | undefined;
}

/** The pull_request_* type of an issue event's type, for pull requests. */
const PULL_TYPE_OF: Partial<Record<EventType, EventType>> = {
  issues: 'pull_request',
  issue_label: 'pull_request_label',
  issue_assign: 'pull_request_assign',
  issue_milestone: 'pull_request_milestone',
};

/** The event type of a submitted review (pending reviews and requests have none). */
const REVIEW_EVENT: Partial<Record<number, EventType>> = {
  [ReviewType.approve]: 'pull_request_review_approved',
  [ReviewType.reject]: 'pull_request_review_rejected',
  [ReviewType.comment]: 'pull_request_review_comment',
};

/** Snapshots of deleted repositories and comments kept for their events (bounded). */
const SNAPSHOTS = 1_000;

class Snapshots<T> {
  private readonly map = new Map<number, T>();
  put(id: number, value: T): void {
    this.map.set(id, value);
    if (this.map.size > SNAPSHOTS) this.map.delete(this.map.keys().next().value!);
  }
  take(id: number): T | undefined {
    const v = this.map.get(id);
    this.map.delete(id);
    return v;
  }
}

export interface WebhookDispatcherDeps {
  db: Db;
  events: EventBus;
  /** Repositories; a deleted one is kept (a hook) for its deletion's event. */
  repos: Pick<RepoService, 'getById' | 'addHooks'>;
  /** Issues and comments; a deleted comment is kept (a hook) for its deletion's event. */
  issues: Pick<IssueService, 'getById' | 'requireComment' | 'addHooks'>;
  pulls: Pick<PullService, 'requirePull'>;
  users: Pick<UserService, 'getById'>;
  payloads: Payloads;
  queue: Pick<DeliveryQueue, 'enqueue'>;
  rootUrl: string;
}

export class WebhookDispatcher {
  private readonly db: Db;
  private readonly deletedRepos = new Snapshots<RepoRow>();
  private readonly deletedComments = new Snapshots<CommentRow>();
  /** Parsed event settings by their JSON (hooks share few distinct ones). */
  private readonly settingsCache = new Map<string, HookEventSettings>();

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.db = deps.db;
    const on = deps.events.on.bind(deps.events);
    on('push', (e) => this.onPush(e.repoId, e.pusherId, e.updates));
    on('repository.created', (e) => this.onRepoCreated(e.repoId, e.doerId));
    on('repository.deleted', (e) => this.onRepoDeleted(e.repoId, e.doerId));
    // A pull request's opening is pull.opened (the pulls domain creates its issue row itself).
    on('issue.opened', (e) => (e.isPull ? undefined : this.onIssue(e, 'issues', ['opened'])));
    on('issue.edited', (e) => {
      const changes: Record<string, { from: string }> = {};
      if (e.changes.title) changes['title'] = e.changes.title;
      if (e.changes.body) changes['body'] = e.changes.body;
      if (e.changes.ref) changes['ref'] = e.changes.ref;
      // A due date change alone is no webhook event in Forgejo.
      if (Object.keys(changes).length === 0) return;
      return this.onIssue(e, 'issues', ['edited'], { changes });
    });
    on('issue.closed', (e) => this.onIssue(e, 'issues', ['closed'], { commitId: e.commitId }));
    on('issue.reopened', (e) => this.onIssue(e, 'issues', ['reopened'], { commitId: e.commitId }));
    on('issue.labelled', (e) => this.onIssue(e, 'issue_label', ['label_updated'], { labels: e }));
    on('issue.assigned', (e) =>
      this.onIssue(e, 'issue_assign', [
        ...e.added.map(() => 'assigned'),
        ...e.removed.map(() => 'unassigned'),
      ]),
    );
    on('issue.milestoned', (e) =>
      this.onIssue(e, 'issue_milestone', [e.milestoneId ? 'milestoned' : 'demilestoned']),
    );
    // Pull requests: what they share with issues comes through the issue.* events above (routed
    // to the pull_request_* types), whichever endpoint made the change; the rest comes from the
    // pull.* events. pull.closed, pull.reopened and pull.labeled repeat an issue.* event, and a
    // merge is announced as closed with merged: true, as in Forgejo.
    on('pull.opened', (e) =>
      this.onPull(
        e,
        ['pull_request', 'pull_request_label', 'pull_request_milestone', 'pull_request_assign'],
        (pr) => [
          // Labels, milestone and assignees set at creation are announced too, as Forgejo does.
          { type: 'pull_request', action: 'opened' },
          ...(pr.labels.length ? [{ type: 'pull_request_label' as const, action: 'label_updated' }] : []),
          ...(pr.milestone ? [{ type: 'pull_request_milestone' as const, action: 'milestoned' }] : []),
          ...(pr.assignees ?? []).map(() => ({ type: 'pull_request_assign' as const, action: 'assigned' })),
        ],
      ),
    );
    on('pull.edited', (e) => {
      const from = e.baseFrom;
      if (from === undefined) return;
      return this.onPull(e, ['pull_request'], () => [
        { type: 'pull_request', action: 'edited', extra: { changes: { ref: { from } } } },
      ]);
    });
    on('pull.merged', (e) =>
      this.onPull(e, ['pull_request'], () => [{ type: 'pull_request', action: 'closed' }]),
    );
    on('pull.synchronized', (e) =>
      this.onPull(e, ['pull_request_sync'], () => [{ type: 'pull_request_sync', action: 'synchronized' }]),
    );
    on('pull.reviewed', (e) => {
      const type = REVIEW_EVENT[e.reviewType];
      if (!type) return;
      return this.onPull(e, [type], () => [
        { type, action: 'reviewed', extra: { review: { type, content: e.content } } },
      ]);
    });
    on('pull.review_requested', (e) =>
      this.onPull(e, ['pull_request_review_request'], async () => [
        {
          type: 'pull_request_review_request',
          action: e.requested ? 'review_requested' : 'review_request_removed',
          extra: { requestedReviewer: await this.deps.payloads.userById(e.reviewerId) },
        },
      ]),
    );
    on('comment.created', (e) => this.onComment(e, 'created'));
    on('comment.edited', (e) => this.onComment(e, 'edited', { body: { from: e.oldBody } }));
    on('comment.deleted', (e) => this.onComment(e, 'deleted'));
    on('release.published', (e) => this.onRelease(e.repoId, e.release, 'published', e.doerId));
    on('release.updated', (e) => this.onRelease(e.repoId, e.release, 'updated', e.doerId));
    on('release.deleted', (e) => this.onRelease(e.repoId, e.release, 'deleted', e.doerId));
    on('package.created', (e) => this.onPackage(e.package, 'created', e.doerId));
    on('package.deleted', (e) => this.onPackage(e.package, 'deleted', e.doerId));
    on('wiki.changed', (e) => this.onWiki(e.repoId, e.doerId, e.action, e.page, e.comment));
    // Rows that are gone by the time their deletion is announced.
    deps.repos.addHooks({
      beforeDelete: async (_tx, repo) => {
        this.deletedRepos.put(repo.id, repo);
      },
    });
    deps.issues.addHooks({
      beforeDeleteComment: async (_tx, comment) => {
        this.deletedComments.put(comment.id, comment);
      },
    });
  }

  private settingsOf(h: WebhookRow): HookEventSettings {
    let s = this.settingsCache.get(h.events);
    if (!s) {
      s = parseSettings(h.events);
      if (this.settingsCache.size > 1000) this.settingsCache.clear();
      this.settingsCache.set(h.events, s);
    }
    return s;
  }

  /** The hooks among `hooks` that want `type` (and `branch`, when the event is about one). */
  private wanting(hooks: WebhookRow[], type: EventType, branch?: string): WebhookRow[] {
    return hooks.filter(
      (h) =>
        wants(this.settingsOf(h), type) && (branch === undefined || branchMatches(h.branch_filter, branch)),
    );
  }

  private async onPush(repoId: number, pusherId: number, updates: RefUpdate[]): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo) return;
    const hooks = await store.activeHooksFor(this.db, repo);
    const gitHooks = hooks.filter((h) =>
      ['push', 'create', 'delete'].some((t) => wants(this.settingsOf(h), t as EventType)),
    );
    if (gitHooks.length === 0) return;
    const s = await this.deps.payloads.subject(repo);
    if (!s) return;
    const pusher = await this.deps.payloads.userById(pusherId);
    const out: Outgoing[] = [];
    for (const u of updates) {
      const isBranch = u.ref.startsWith('refs/heads/');
      if (!isBranch && !u.ref.startsWith('refs/tags/')) continue;
      const name = u.ref.slice(isBranch ? 11 : 10);
      const refType = isBranch ? 'branch' : 'tag';
      // The branch filter applies to branches only, as in Forgejo.
      const branch = isBranch ? name : undefined;
      const deleted = u.newOid === ZERO_OID;
      if (deleted) {
        const del = this.wanting(gitHooks, 'delete', branch);
        if (del.length)
          out.push({
            hooks: del,
            type: 'delete',
            payload: this.deps.payloads.delete(s, pusher, name, refType),
          });
      } else if (u.oldOid === ZERO_OID) {
        const cre = this.wanting(gitHooks, 'create', branch);
        if (cre.length) {
          out.push({
            hooks: cre,
            type: 'create',
            payload: this.deps.payloads.create(s, pusher, name, refType, u.newOid),
          });
        }
      }
      // A deleted branch has no push event (a deleted tag has, as in Forgejo).
      if (deleted && isBranch) continue;
      const push = this.wanting(gitHooks, 'push', branch);
      if (push.length) {
        out.push({
          hooks: push,
          type: 'push',
          payload: await this.deps.payloads.push(s, pusher, u.ref, u.oldOid, u.newOid),
        });
      }
    }
    await this.deps.queue.enqueue(out);
  }

  private async onRepoCreated(repoId: number, doerId: number): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo) return;
    await this.copyDefaultHooks(repo);
    const hooks = this.wanting(await store.activeHooksFor(this.db, repo), 'repository');
    const base =
      repo.is_fork && repo.fork_id !== null ? await this.deps.repos.getById(repo.fork_id) : undefined;
    const forkHooks = base ? this.wanting(await store.activeHooksFor(this.db, base), 'fork') : [];
    if (hooks.length === 0 && forkHooks.length === 0) return;
    const [s, sender] = await Promise.all([
      this.deps.payloads.subject(repo),
      this.deps.payloads.userById(doerId),
    ]);
    if (!s) return;
    const out: Outgoing[] = [];
    if (hooks.length)
      out.push({ hooks, type: 'repository', payload: this.deps.payloads.repository(s, 'created', sender) });
    if (base && forkHooks.length) {
      const bs = await this.deps.payloads.subject(base);
      if (bs) out.push({ hooks: forkHooks, type: 'fork', payload: this.deps.payloads.fork(bs, s, sender) });
    }
    await this.deps.queue.enqueue(out);
  }

  /** Default hooks (site-wide, not system) become hooks of each new repository, as in Forgejo. */
  private async copyDefaultHooks(repo: RepoRow): Promise<void> {
    const defaults = await store.defaultHooks(this.db);
    if (defaults.length === 0) return;
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      for (const d of defaults) {
        const { id: _id, ...fields } = d;
        await store.insertHook(tx, { ...fields, repo_id: repo.id, created_unix: now, updated_unix: now });
      }
    });
  }

  private async onRepoDeleted(repoId: number, doerId: number): Promise<void> {
    const repo = this.deletedRepos.take(repoId);
    if (!repo) return;
    // The repository's own hooks went with it: its owner's and the system hooks remain.
    const hooks = this.wanting(await store.activeHooksFor(this.db, repo), 'repository');
    if (hooks.length === 0) return;
    const [s, sender] = await Promise.all([
      this.deps.payloads.subject(repo),
      this.deps.payloads.userById(doerId),
    ]);
    if (!s) return;
    await this.deps.queue.enqueue([
      { hooks, type: 'repository', payload: this.deps.payloads.repository(s, 'deleted', sender) },
    ]);
  }

  /** The repository, its interested hooks, its subject and the sender, or undefined when no hook wants `type`. */
  private async prepare(
    repoId: number,
    type: EventType,
    doerId: number,
  ): Promise<{ hooks: WebhookRow[]; s: Subject; sender: UserJson } | undefined> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo) return undefined;
    const hooks = this.wanting(await store.activeHooksFor(this.db, repo), type);
    if (hooks.length === 0) return undefined;
    const [s, sender] = await Promise.all([
      this.deps.payloads.subject(repo),
      this.deps.payloads.userById(doerId),
    ]);
    return s ? { hooks, s, sender } : undefined;
  }

  private async onIssue(
    e: IssueEvent,
    type: EventType,
    actions: string[],
    extra: {
      changes?: Record<string, { from: string }>;
      commitId?: string;
      labels?: { added: number[]; removed: number[] };
    } = {},
  ): Promise<void> {
    if (actions.length === 0) return;
    if (e.isPull) {
      // Forgejo separates them: a pull request's change is a pull_request_* event, never an issues one.
      const pullType = PULL_TYPE_OF[type];
      if (!pullType) return;
      return this.onPull(e, [pullType], () =>
        actions.map((action) => ({
          type: pullType,
          action,
          extra: { changes: extra.changes, commitId: extra.commitId },
          labelsRemoved: extra.labels?.removed.length,
        })),
      );
    }
    const p = await this.prepare(e.repoId, type, e.doerId);
    if (!p) return;
    const issue = await this.deps.issues.getById(e.issueId);
    if (!issue) return;
    const out: Outgoing[] = [];
    for (let action of actions) {
      const payload = await this.deps.payloads.issue(p.s, issue, action, p.sender, extra);
      if (extra.labels) {
        const labels = (payload.issue as { labels?: unknown[] }).labels ?? [];
        if (labels.length === 0 && extra.labels.removed.length > 0) action = 'label_cleared';
        payload.action = action;
      }
      out.push({ hooks: p.hooks, type, payload });
    }
    await this.deps.queue.enqueue(out);
  }

  /**
   * Deliveries of Forgejo's PullRequestPayload about pull request `e.index`: `items` says which
   * event types and actions, given the pull request JSON (built once, only when a hook of the
   * repository wants one of `types`). The branch filter does not apply, as in Forgejo (it applies
   * to push, create and delete only).
   */
  private async onPull(
    e: { repoId: number; index: number; doerId: number },
    types: EventType[],
    items: (pr: PullRequestJson) => PullDelivery[] | Promise<PullDelivery[]>,
  ): Promise<void> {
    const repo = await this.deps.repos.getById(e.repoId);
    if (!repo) return;
    const hooks = await store.activeHooksFor(this.db, repo);
    if (!types.some((t) => this.wanting(hooks, t).length)) return;
    const pull = await this.deps.pulls.requirePull(repo, e.index).catch(() => undefined);
    if (!pull) return;
    const [s, sender] = await Promise.all([
      this.deps.payloads.subject(repo),
      this.deps.payloads.userById(e.doerId),
    ]);
    if (!s) return;
    const pr = await this.deps.payloads.pullJson(s, pull);
    const out: Outgoing[] = [];
    for (const item of await items(pr)) {
      const wanting = this.wanting(hooks, item.type);
      if (wanting.length === 0) continue;
      const action =
        item.type === 'pull_request_label' && pr.labels.length === 0 && (item.labelsRemoved ?? 0) > 0
          ? 'label_cleared'
          : item.action;
      out.push({
        hooks: wanting,
        type: item.type,
        payload: this.deps.payloads.pullRequest(s, pr, action, sender, item.extra),
      });
    }
    await this.deps.queue.enqueue(out);
  }

  private async onComment(
    e: CommentEvent,
    action: 'created' | 'edited' | 'deleted',
    changes?: Record<string, { from: string }>,
  ): Promise<void> {
    const snapshot = action === 'deleted' ? this.deletedComments.take(e.commentId) : undefined;
    const type: EventType = e.isPull ? 'pull_request_comment' : 'issue_comment';
    const p = await this.prepare(e.repoId, type, e.doerId);
    if (!p) return;
    let comment: CommentRow | undefined = snapshot;
    let issue: IssueRow | undefined;
    if (action === 'deleted') issue = await this.deps.issues.getById(e.issueId);
    else {
      const found = await this.deps.issues.requireComment(p.s.repo, e.commentId).catch(() => undefined);
      comment = found?.comment;
      issue = found?.issue;
    }
    if (!comment || !issue) return;
    const payload = await this.deps.payloads.comment(p.s, issue, comment, action, p.sender, changes);
    await this.deps.queue.enqueue([{ hooks: p.hooks, type, payload }]);
  }

  private async onRelease(
    repoId: number,
    release: ReleaseRow,
    action: 'published' | 'updated' | 'deleted',
    doerId: number,
  ): Promise<void> {
    const p = await this.prepare(repoId, 'release', doerId);
    if (!p) return;
    const payload = await this.deps.payloads.release(p.s, release, action, p.sender);
    await this.deps.queue.enqueue([{ hooks: p.hooks, type: 'release', payload }]);
  }

  /** Forgejo's wiki event: {action, repository, sender, page, comment} for a page written through the API. */
  private async onWiki(
    repoId: number,
    doerId: number,
    action: string,
    page: string,
    comment: string,
  ): Promise<void> {
    const p = await this.prepare(repoId, 'wiki', doerId);
    if (!p) return;
    const payload = { action, repository: p.s.json, sender: p.sender, page, comment };
    await this.deps.queue.enqueue([{ hooks: p.hooks, type: 'wiki', payload }]);
  }

  /** Forgejo's package event: {action, package, sender}, to the owner's (and linked repository's) hooks. */
  private async onPackage(p: PackageEventInfo, action: 'created' | 'deleted', doerId: number): Promise<void> {
    const hooks = this.wanting(await store.activeHooksForPackage(this.db, p.ownerId, p.repoId), 'package');
    if (hooks.length === 0) return;
    const [owner, creator, sender] = await Promise.all([
      this.deps.users.getById(p.ownerId),
      p.creatorId === null ? undefined : this.deps.users.getById(p.creatorId),
      this.deps.payloads.userById(doerId),
    ]);
    if (!owner) return;
    const repo = p.repoId === null ? undefined : await this.deps.repos.getById(p.repoId);
    const s = repo ? await this.deps.payloads.subject(repo, owner) : undefined;
    const root = this.deps.rootUrl;
    const payload = {
      action,
      package: {
        id: p.versionId,
        owner: this.deps.payloads.user(owner),
        repository: s?.json ?? null,
        creator: this.deps.payloads.user(creator),
        type: p.type,
        name: p.name,
        version: p.version,
        html_url: packageHtmlUrl(root, owner.name, p.type, p.name, p.version),
        created_at: isoTime(p.createdUnix),
      },
      sender,
    };
    await this.deps.queue.enqueue([{ hooks, type: 'package', payload }]);
  }
}
