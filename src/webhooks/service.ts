// Webhooks of repositories, of users and organizations (fire for all their repositories) and of
// the site (system hooks fire for every repository; default hooks are copied into new ones), and
// their delivery. Every event becomes rows of hook_task, one per interested hook, written right
// after the change by the event listener (a quick insert; the git work a push payload needs is
// done only when some hook wants it). A worker started by `anvil web` delivers them off the
// request path: a bounded number at once, each with a timeout, retried with exponential back-off
// up to [webhook] MAX_ATTEMPTS; rows still pending are picked up again by the next server. Several
// processes on one database share the queue: a batch is claimed by moving its rows' next attempt
// past a lease (PostgreSQL skips rows another process is claiming), so each attempt is made by one.
import crypto from 'node:crypto';
import type { AppContext } from '../app/context.js';
import { SecretBox } from '../auth/secrets.js';
import { nowUnix, transaction } from '../db/database.js';
import { badRequest, invalid, invalidField, notFound } from '../errors.js';
import type { CommentEvent, IssueEvent, RefUpdate } from '../events/bus.js';
import { isValidRefName, resolveRef } from '../git/data.js';
import { ZERO_OID } from '../git/git.js';
import type { Page } from '../http/pagination.js';
import type { CommentRow, IssueRow } from '../issues/tables.js';
import type { PullRequestJson } from '../pulls/schemas.js';
import { ReviewType } from '../pulls/tables.js';
import type { ReleaseRow } from '../releases/tables.js';
import { packageHtmlUrl, type PackageEventInfo } from '../packages/service.js';
import { isoTime } from '../http/format.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserJson } from '../users/schemas.js';
import type { UserRow } from '../users/tables.js';
import { deliver, type DeliveryTarget, type Outcome } from './deliver.js';
import {
  branchMatches,
  checkBranchFilter,
  parseSettings,
  settingsFromList,
  wants,
  type EventType,
  type HookEventSettings,
} from './events.js';
import { HostList } from './hosts.js';
import { Payloads, type PullExtra, type Subject } from './payloads.js';
import { HOOK_TYPES, render } from './render.js';
import { metaOf, toDeliveryJson, toHookJson, type HookJson } from './schemas.js';
import * as store from './store.js';
import type { HookOwner } from './store.js';
import type { HookTaskRow, WebhookRow } from './tables.js';

/** Where hooks are managed: a repository, a user or organization, or the site (/admin/hooks). */
export type HookScope =
  { kind: 'repo'; repo: RepoRow } | { kind: 'owner'; owner: UserRow } | { kind: 'site' };

export interface CreateHookInput {
  type: string;
  config: Record<string, string>;
  events?: string[] | undefined;
  branchFilter?: string | undefined;
  authorizationHeader?: string | undefined;
  active?: boolean | undefined;
  isSystemWebhook?: boolean | undefined;
}

export interface EditHookInput {
  config?: Record<string, string> | undefined;
  events?: string[] | undefined;
  branchFilter?: string | undefined;
  authorizationHeader?: string | undefined;
  active?: boolean | undefined;
}

/** An event on its way into the queue: the hooks that want it and Forgejo's payload. */
interface Outgoing {
  hooks: WebhookRow[];
  type: EventType;
  payload: Record<string, unknown>;
}

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

/** How often the worker looks for due deliveries it was not told about (other processes). */
const POLL_MS = 5_000;
/** Finished deliveries kept per hook; older ones are pruned hourly. */
const HISTORY_KEEP = 500;
const PRUNE_MS = 3_600_000;
/** Snapshots of deleted repositories and comments kept for their events (bounded). */
const SNAPSHOTS = 1_000;

const ownerOf = (scope: HookScope): HookOwner =>
  scope.kind === 'repo'
    ? { repoId: scope.repo.id }
    : scope.kind === 'owner'
      ? { ownerId: scope.owner.id }
      : { site: true };

function checkUrl(url: string): void {
  if (url.length > 2048) throw invalid('Invalid url');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalid('Invalid url');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) throw invalid('Invalid url');
}

function checkContentType(ct: string): void {
  if (ct !== 'json' && ct !== 'form') throw invalid('Invalid content type');
}

function checkMethod(type: string, method: string): string {
  const m = method.trim().toUpperCase();
  if (m === 'POST' || m === 'GET' || (m === 'PUT' && type === 'matrix')) return m;
  throw invalid(`Invalid http method: ${method}`);
}

function checkHeaderValue(value: string): void {
  // eslint-disable-next-line no-control-regex -- a line break would smuggle in other headers
  if (/[\x00-\x1f\x7f]/.test(value)) throw invalidField('authorization_header', 'must be a single line');
  if (value.length > 4096) throw invalidField('authorization_header', 'must be at most 4096 characters');
}

/** Slack settings from a hook's config (Forgejo's SlackMeta); the channel is required. */
function slackMeta(config: Record<string, string>): string {
  const channel = (config['channel'] ?? '').trim();
  if (!('channel' in config)) throw invalid('Missing config option: channel');
  if (channel === '' || channel === '#') throw badRequest('Invalid slack channel name');
  return JSON.stringify({
    channel,
    username: config['username'] ?? '',
    icon_url: config['icon_url'] ?? '',
    color: config['color'] ?? '',
  });
}

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

export class WebhookService {
  private readonly payloads: Payloads;
  private secretBox: SecretBox | undefined;
  private readonly deletedRepos = new Snapshots<RepoRow>();
  private readonly deletedComments = new Snapshots<CommentRow>();
  /** Parsed event settings by their JSON (hooks share few distinct ones). */
  private readonly settingsCache = new Map<string, HookEventSettings>();

  // The delivery worker
  private running = false;
  private pumping = false;
  private again = false;
  private filling: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  /** Claimed deliveries waiting for a free slot. */
  private readonly ready: Array<{ task: HookTaskRow; hook: WebhookRow | undefined }> = [];
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private hosts: HostList | undefined;

  constructor(private readonly ctx: AppContext) {
    this.payloads = new Payloads(ctx);
    const on = ctx.events.on.bind(ctx.events);
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
          extra: { requestedReviewer: await this.payloads.userById(e.reviewerId) },
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
    ctx.repos.addHooks({
      beforeDelete: async (_tx, repo) => {
        this.deletedRepos.put(repo.id, repo);
      },
    });
    ctx.issues.addHooks({
      beforeDeleteComment: async (_tx, comment) => {
        this.deletedComments.put(comment.id, comment);
      },
    });
  }

  private get db() {
    return this.ctx.db;
  }

  private box(): SecretBox {
    this.secretBox ??= new SecretBox(this.ctx.config.security.secretKey, 'webhook-secrets');
    return this.secretBox;
  }

  private seal(plain: string): string {
    return plain ? this.box().encrypt(plain) : '';
  }

  private unseal(stored: string): string {
    return stored ? this.box().decrypt(stored) : '';
  }

  // Management

  /** A hook of `scope` by id, or a 404. */
  async requireHook(scope: HookScope, id: number): Promise<WebhookRow> {
    const row = await store.ownedHook(this.db, ownerOf(scope), id);
    if (!row) throw notFound(`webhook does not exist [id: ${id}]`);
    return row;
  }

  list(scope: HookScope, page: Page) {
    return store.listHooks(this.db, ownerOf(scope), page.limit, page.offset);
  }

  /** The Hook JSON; the authorization header is shown decrypted, as Forgejo shows it. */
  toJson(row: WebhookRow): HookJson {
    let authorization = '';
    try {
      authorization = this.unseal(row.header_authorization);
    } catch {
      authorization = '';
    }
    return toHookJson(row, authorization, row.repo_id === null && row.owner_id === null);
  }

  async create(scope: HookScope, input: CreateHookInput): Promise<WebhookRow> {
    const type = input.type.trim();
    if (!(HOOK_TYPES as readonly string[]).includes(type)) throw invalid(`Invalid hook type: ${input.type}`);
    const config = input.config;
    for (const name of ['url', 'content_type']) {
      if (!(name in config)) throw invalid(`Missing config option: ${name}`);
    }
    checkContentType(config['content_type']!);
    checkUrl(config['url']!);
    const method = checkMethod(type, config['http_method'] ?? (type === 'matrix' ? 'PUT' : 'POST'));
    const settings = settingsFromList(input.events);
    const branchFilter = input.branchFilter ?? '';
    checkBranchFilter(branchFilter);
    const authorization = input.authorizationHeader ?? '';
    checkHeaderValue(authorization);
    let isSystem = false;
    if (scope.kind === 'site') {
      const flag = config['is_system_webhook'];
      if (flag !== undefined && flag !== '' && !['true', 'false', '1', '0'].includes(flag.toLowerCase())) {
        throw invalid('Invalid is_system_webhook value');
      }
      isSystem = input.isSystemWebhook ?? ['true', '1'].includes((flag ?? '').toLowerCase());
    }
    const now = nowUnix();
    const id = await store.insertHook(this.db, {
      repo_id: scope.kind === 'repo' ? scope.repo.id : null,
      owner_id: scope.kind === 'owner' ? scope.owner.id : null,
      is_system_webhook: isSystem ? 1 : 0,
      type,
      url: config['url']!,
      http_method: method,
      content_type: config['content_type']!,
      secret: this.seal(config['secret'] ?? ''),
      events: JSON.stringify(settings),
      branch_filter: branchFilter,
      is_active: input.active ? 1 : 0,
      meta: type === 'slack' ? slackMeta(config) : '',
      header_authorization: this.seal(authorization),
      created_unix: now,
      updated_unix: now,
    });
    return (await store.hookById(this.db, id))!;
  }

  /** Changes what the request gives; omitted fields stay as they are. */
  async edit(scope: HookScope, id: number, input: EditHookInput): Promise<WebhookRow> {
    const row = await this.requireHook(scope, id);
    const patch: Parameters<typeof store.updateHook>[2] = { updated_unix: nowUnix() };
    const config = input.config ?? {};
    if (config['url'] !== undefined) {
      checkUrl(config['url']);
      patch.url = config['url'];
    }
    if (config['content_type'] !== undefined) {
      checkContentType(config['content_type']);
      patch.content_type = config['content_type'];
    }
    if (config['http_method'] !== undefined) patch.http_method = checkMethod(row.type, config['http_method']);
    if (config['secret'] !== undefined) patch.secret = this.seal(config['secret']);
    if (row.type === 'slack' && ['channel', 'username', 'icon_url', 'color'].some((k) => k in config)) {
      patch.meta = slackMeta({ ...(metaOf(row) ?? {}), ...config });
    }
    if (input.events !== undefined) patch.events = JSON.stringify(settingsFromList(input.events));
    if (input.branchFilter !== undefined) {
      checkBranchFilter(input.branchFilter);
      patch.branch_filter = input.branchFilter;
    }
    if (input.authorizationHeader !== undefined) {
      checkHeaderValue(input.authorizationHeader);
      patch.header_authorization = this.seal(input.authorizationHeader);
    }
    if (input.active !== undefined) patch.is_active = input.active ? 1 : 0;
    await store.updateHook(this.db, row.id, patch);
    return (await store.hookById(this.db, row.id))!;
  }

  /** Deletes a hook with its delivery history (pending deliveries are dropped). */
  async delete(scope: HookScope, id: number): Promise<void> {
    const row = await this.requireHook(scope, id);
    await store.deleteHook(this.db, row.id);
  }

  /** A hook's deliveries, newest first. */
  async deliveries(scope: HookScope, id: number, page: Page) {
    const hook = await this.requireHook(scope, id);
    const [rows, total] = await store.listTasks(this.db, hook.id, page.limit, page.offset);
    return [rows.map((t) => toDeliveryJson(t, hook)), total] as const;
  }

  /**
   * POST /repos/{owner}/{repo}/hooks/{id}/tests: queues a push event for the commit `ref` names
   * (the default branch's head when absent), whatever events the hook chose. As in Forgejo, an
   * inactive hook records the delivery without sending it.
   */
  async test(repo: RepoRow, id: number, doer: UserRow, ref?: string): Promise<void> {
    const hook = await this.requireHook({ kind: 'repo', repo }, id);
    const s = await this.payloads.subject(repo);
    if (!s) throw notFound();
    const dir = this.ctx.repos.pathOf(repo);
    let refName = `refs/heads/${repo.default_branch}`;
    let oid: string | undefined;
    if (ref) {
      const hit = isValidRefName(ref) ? await resolveRef(dir, ref) : undefined;
      if (!hit) throw notFound(`ref does not exist [name: ${ref}]`);
      oid = hit.oid;
      if (hit.kind === 'branch') refName = `refs/heads/${hit.name}`;
      else if (hit.kind === 'tag') refName = `refs/tags/${hit.name}`;
    } else if (!repo.is_empty) {
      oid = (await resolveRef(dir, repo.default_branch))?.oid;
    }
    const sender = this.payloads.user(doer);
    const commit = oid ? await this.payloads.commit(s, oid) : null;
    const payload = {
      ref: refName,
      before: oid ?? ZERO_OID,
      after: oid ?? ZERO_OID,
      compare_url: oid ? `${s.json.html_url}/compare/${oid}...${oid}` : '',
      commits: commit ? [commit] : [],
      total_commits: commit ? 1 : 0,
      head_commit: commit,
      repository: s.json,
      pusher: sender,
      sender,
    };
    await this.enqueue([{ hooks: [hook], type: 'push', payload }]);
  }

  // From events to deliveries

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

  /**
   * Writes one delivery per hook and event in one transaction, then wakes the worker. The body
   * is rendered once per hook type (and settings) and stored as it will be sent.
   */
  private async enqueue(outgoing: Outgoing[]): Promise<void> {
    const now = nowUnix();
    const rows: Parameters<typeof store.insertTasks>[1] = [];
    for (const o of outgoing) {
      const bodies = new Map<string, string>();
      for (const h of o.hooks) {
        const key = `${h.type}\n${h.meta}`;
        let body = bodies.get(key);
        if (body === undefined) {
          body = render(h.type, o.type, o.payload, metaOf(h) ?? {});
          bodies.set(key, body);
        }
        rows.push({
          hook_id: h.id,
          uuid: crypto.randomUUID(),
          event_type: o.type,
          payload: body,
          next_attempt_unix: now,
          created_unix: now,
        });
      }
    }
    if (rows.length === 0) return;
    await transaction(this.db, (tx) => store.insertTasks(tx, rows));
    this.wake();
  }

  private async onPush(repoId: number, pusherId: number, updates: RefUpdate[]): Promise<void> {
    const repo = await this.ctx.repos.getById(repoId);
    if (!repo) return;
    const hooks = await store.activeHooksFor(this.db, repo);
    const gitHooks = hooks.filter((h) =>
      ['push', 'create', 'delete'].some((t) => wants(this.settingsOf(h), t as EventType)),
    );
    if (gitHooks.length === 0) return;
    const s = await this.payloads.subject(repo);
    if (!s) return;
    const pusher = await this.payloads.userById(pusherId);
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
          out.push({ hooks: del, type: 'delete', payload: this.payloads.delete(s, pusher, name, refType) });
      } else if (u.oldOid === ZERO_OID) {
        const cre = this.wanting(gitHooks, 'create', branch);
        if (cre.length) {
          out.push({
            hooks: cre,
            type: 'create',
            payload: this.payloads.create(s, pusher, name, refType, u.newOid),
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
          payload: await this.payloads.push(s, pusher, u.ref, u.oldOid, u.newOid),
        });
      }
    }
    await this.enqueue(out);
  }

  private async onRepoCreated(repoId: number, doerId: number): Promise<void> {
    const repo = await this.ctx.repos.getById(repoId);
    if (!repo) return;
    await this.copyDefaultHooks(repo);
    const hooks = this.wanting(await store.activeHooksFor(this.db, repo), 'repository');
    const base =
      repo.is_fork && repo.fork_id !== null ? await this.ctx.repos.getById(repo.fork_id) : undefined;
    const forkHooks = base ? this.wanting(await store.activeHooksFor(this.db, base), 'fork') : [];
    if (hooks.length === 0 && forkHooks.length === 0) return;
    const [s, sender] = await Promise.all([this.payloads.subject(repo), this.payloads.userById(doerId)]);
    if (!s) return;
    const out: Outgoing[] = [];
    if (hooks.length)
      out.push({ hooks, type: 'repository', payload: this.payloads.repository(s, 'created', sender) });
    if (base && forkHooks.length) {
      const bs = await this.payloads.subject(base);
      if (bs) out.push({ hooks: forkHooks, type: 'fork', payload: this.payloads.fork(bs, s, sender) });
    }
    await this.enqueue(out);
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
    const [s, sender] = await Promise.all([this.payloads.subject(repo), this.payloads.userById(doerId)]);
    if (!s) return;
    await this.enqueue([
      { hooks, type: 'repository', payload: this.payloads.repository(s, 'deleted', sender) },
    ]);
  }

  /** The repository, its interested hooks, its subject and the sender, or undefined when no hook wants `type`. */
  private async prepare(
    repoId: number,
    type: EventType,
    doerId: number,
  ): Promise<{ hooks: WebhookRow[]; s: Subject; sender: UserJson } | undefined> {
    const repo = await this.ctx.repos.getById(repoId);
    if (!repo) return undefined;
    const hooks = this.wanting(await store.activeHooksFor(this.db, repo), type);
    if (hooks.length === 0) return undefined;
    const [s, sender] = await Promise.all([this.payloads.subject(repo), this.payloads.userById(doerId)]);
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
    const issue = await this.ctx.issues.getById(e.issueId);
    if (!issue) return;
    const out: Outgoing[] = [];
    for (let action of actions) {
      const payload = await this.payloads.issue(p.s, issue, action, p.sender, extra);
      if (extra.labels) {
        const labels = (payload.issue as { labels?: unknown[] }).labels ?? [];
        if (labels.length === 0 && extra.labels.removed.length > 0) action = 'label_cleared';
        payload.action = action;
      }
      out.push({ hooks: p.hooks, type, payload });
    }
    await this.enqueue(out);
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
    const repo = await this.ctx.repos.getById(e.repoId);
    if (!repo) return;
    const hooks = await store.activeHooksFor(this.db, repo);
    if (!types.some((t) => this.wanting(hooks, t).length)) return;
    const pull = await this.ctx.pulls.requirePull(repo, e.index).catch(() => undefined);
    if (!pull) return;
    const [s, sender] = await Promise.all([this.payloads.subject(repo), this.payloads.userById(e.doerId)]);
    if (!s) return;
    const pr = await this.payloads.pullJson(s, pull);
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
        payload: this.payloads.pullRequest(s, pr, action, sender, item.extra),
      });
    }
    await this.enqueue(out);
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
    if (action === 'deleted') issue = await this.ctx.issues.getById(e.issueId);
    else {
      const found = await this.ctx.issues.requireComment(p.s.repo, e.commentId).catch(() => undefined);
      comment = found?.comment;
      issue = found?.issue;
    }
    if (!comment || !issue) return;
    const payload = await this.payloads.comment(p.s, issue, comment, action, p.sender, changes);
    await this.enqueue([{ hooks: p.hooks, type, payload }]);
  }

  private async onRelease(
    repoId: number,
    release: ReleaseRow,
    action: 'published' | 'updated' | 'deleted',
    doerId: number,
  ): Promise<void> {
    const p = await this.prepare(repoId, 'release', doerId);
    if (!p) return;
    const payload = await this.payloads.release(p.s, release, action, p.sender);
    await this.enqueue([{ hooks: p.hooks, type: 'release', payload }]);
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
    await this.enqueue([{ hooks: p.hooks, type: 'wiki', payload }]);
  }

  /** Forgejo's package event: {action, package, sender}, to the owner's (and linked repository's) hooks. */
  private async onPackage(p: PackageEventInfo, action: 'created' | 'deleted', doerId: number): Promise<void> {
    const hooks = this.wanting(await store.activeHooksForPackage(this.db, p.ownerId, p.repoId), 'package');
    if (hooks.length === 0) return;
    const [owner, creator, sender] = await Promise.all([
      this.ctx.users.getById(p.ownerId),
      p.creatorId === null ? undefined : this.ctx.users.getById(p.creatorId),
      this.payloads.userById(doerId),
    ]);
    if (!owner) return;
    const repo = p.repoId === null ? undefined : await this.ctx.repos.getById(p.repoId);
    const s = repo ? await this.payloads.subject(repo, owner) : undefined;
    const root = this.ctx.config.server.rootUrl;
    const payload = {
      action,
      package: {
        id: p.versionId,
        owner: this.payloads.user(owner),
        repository: s?.json ?? null,
        creator: this.payloads.user(creator),
        type: p.type,
        name: p.name,
        version: p.version,
        html_url: packageHtmlUrl(root, owner.name, p.type, p.name, p.version),
        created_at: isoTime(p.createdUnix),
      },
      sender,
    };
    await this.enqueue([{ hooks, type: 'package', payload }]);
  }

  // The delivery worker

  /** Starts delivering (anvil web): deliveries left pending by an earlier run go first. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.hosts = new HostList(this.ctx.config.webhook.allowedHostList);
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_MS);
    this.pruneTimer.unref();
    this.pump();
  }

  /** Stops taking deliveries and waits (a bounded time) for those under way. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    clearInterval(this.pruneTimer);
    const settle = (async () => {
      await this.filling;
      // Claimed but not started: due again at once for the next server.
      const unstarted = this.ready.splice(0).map((r) => r.task.id);
      if (unstarted.length) await store.release(this.db, unstarted, nowUnix()).catch(() => undefined);
      while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
    })();
    let t: NodeJS.Timeout | undefined;
    const limit = this.ctx.config.webhook.deliverTimeout * 1000 + 5_000;
    await Promise.race([settle, new Promise((r) => (t = setTimeout(r, limit)))]);
    clearTimeout(t);
  }

  /** Tells the worker that deliveries were queued. */
  private wake(): void {
    if (this.running) this.pump();
  }

  private pump(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.again = false;
    this.filling = this.fill()
      .catch((err: unknown) => this.ctx.log.error({ err }, 'webhook queue failed'))
      .finally(() => {
        this.pumping = false;
        if (this.again) this.pump();
      });
  }

  /**
   * Starts claimed deliveries while there are free slots, claiming a batch (as many as run at
   * once) whenever none is left; then sets the next wake-up. Claiming ahead means a delivery
   * that finishes usually starts the next one without a query.
   */
  private async fill(): Promise<void> {
    const { concurrency, deliverTimeout } = this.ctx.config.webhook;
    while (this.running && this.inFlight.size < concurrency) {
      if (this.ready.length === 0) {
        const now = nowUnix();
        // Claimed for the attempt's timeout plus [cluster] LEASE_TIME: a process that dies with
        // deliveries claimed leaves them to the others once that has passed (see `nextDue`).
        const lease = now + deliverTimeout + this.ctx.config.cluster.leaseSeconds;
        const tasks = await store.claimDue(this.db, now, concurrency, lease, this.ctx.dialect === 'postgres');
        if (tasks.length === 0) break;
        const hooks = await store.hooksByIds(this.db, [...new Set(tasks.map((t) => t.hook_id))]);
        for (const t of tasks.sort((a, b) => a.id - b.id))
          this.ready.push({ task: t, hook: hooks.get(t.hook_id) });
        continue;
      }
      const next = this.ready.shift()!;
      this.launch(next.task, next.hook);
    }
    if (!this.running) return;
    clearTimeout(this.timer);
    // While deliveries are under way, each one finishing pumps again; when idle, wake up for the
    // earliest pending delivery (a retry), or poll for deliveries queued by another process.
    let wait = POLL_MS;
    if (this.inFlight.size === 0) {
      const next = await store.nextDue(this.db);
      if (next !== undefined) wait = Math.min(wait, Math.max(0, next * 1000 - Date.now()));
    }
    this.timer = setTimeout(() => this.pump(), wait);
    this.timer.unref();
  }

  private launch(task: HookTaskRow, hook: WebhookRow | undefined): void {
    const p: Promise<void> = this.attempt(task, hook)
      .catch((err: unknown) => this.ctx.log.error({ err, task: task.uuid }, 'webhook delivery failed'))
      .finally(() => {
        this.inFlight.delete(p);
        this.pump();
      });
    this.inFlight.add(p);
  }

  /** One attempt: send, then record the outcome and either finish or schedule the next try. */
  private async attempt(task: HookTaskRow, hook: WebhookRow | undefined): Promise<void> {
    if (!hook) return; // deleted meanwhile: its deliveries went with it
    const cfg = this.ctx.config.webhook;
    let outcome: Outcome;
    if (!hook.is_active) {
      outcome = {
        ok: false,
        status: 0,
        retryable: false,
        request: { url: hook.url, http_method: hook.http_method, headers: {} },
        response: { status: 0, headers: {}, body: 'Delivery: skipped, the webhook is inactive' },
      };
    } else {
      let target: DeliveryTarget | undefined;
      try {
        target = {
          type: hook.type,
          url: hook.url,
          httpMethod: hook.http_method,
          contentType: hook.content_type,
          secret: this.unseal(hook.secret),
          authorization: this.unseal(hook.header_authorization),
        };
      } catch {
        target = undefined;
      }
      outcome = target
        ? await deliver(
            target,
            { uuid: task.uuid, eventType: task.event_type, payload: task.payload },
            { hosts: this.hosts!, timeoutMs: cfg.deliverTimeout * 1000, skipTlsVerify: cfg.skipTlsVerify },
          )
        : {
            ok: false,
            status: 0,
            retryable: false,
            request: { url: hook.url, http_method: hook.http_method, headers: {} },
            response: {
              status: 0,
              headers: {},
              body: 'Delivery: the stored secret cannot be decrypted (was [security] SECRET_KEY changed?)',
            },
          };
    }
    const attempts = task.attempts + (hook.is_active ? 1 : 0);
    if (hook.is_active) this.ctx.metrics.delivery(outcome.ok);
    const finished = outcome.ok || !outcome.retryable || attempts >= cfg.maxAttempts;
    const now = nowUnix();
    const delayMs = cfg.retryDelay * 1000 * 2 ** Math.max(0, attempts - 1);
    await store.updateTask(this.db, task.id, {
      attempts,
      is_delivered: finished ? 1 : 0,
      is_succeed: outcome.ok ? 1 : 0,
      next_attempt_unix: finished ? now : Math.ceil((Date.now() + delayMs) / 1000),
      delivered_unix: now,
      status_code: outcome.status,
      request_content: JSON.stringify(outcome.request),
      response_content: JSON.stringify(outcome.response),
    });
    if (!outcome.ok) {
      // Retries are routine; a delivery given up is worth a warning.
      this.ctx.log[finished ? 'warn' : 'info'](
        { hookId: hook.id, delivery: task.uuid, status: outcome.status, attempts, finished },
        `webhook delivery to ${hook.url} failed${finished ? ', giving up' : ''}: ${outcome.response.body.slice(0, 200)}`,
      );
    }
  }

  private async prune(): Promise<void> {
    try {
      await store.pruneTasks(this.db, HISTORY_KEEP);
    } catch (err) {
      this.ctx.log.error({ err }, 'pruning webhook deliveries failed');
    }
  }
}
