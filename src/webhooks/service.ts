// Webhooks of repositories, of users and organizations (fire for all their repositories) and of
// the site (system hooks fire for every repository; default hooks are copied into new ones):
// their management (checked settings, secrets stored encrypted), their delivery history and test
// deliveries. What happens is turned into deliveries by ./dispatch.ts (payloads: ./payloads.ts)
// and delivered by the durable queue of ./queue.ts.
import { nowUnix, type Db } from '../db/database.js';
import { badRequest, invalid, invalidField, notFound } from '../errors.js';
import { isValidRefName, resolveRef } from '../git/data.js';
import { ZERO_OID } from '../git/git.js';
import type { Page } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { checkBranchFilter, settingsFromList } from './events.js';
import type { Payloads } from './payloads.js';
import type { DeliveryQueue } from './queue.js';
import { HOOK_TYPES } from './render.js';
import { metaOf, toDeliveryJson, toHookJson, type HookJson } from './schemas.js';
import type { HookSecrets } from './secrets.js';
import * as store from './store.js';
import type { HookOwner } from './store.js';
import type { WebhookRow } from './tables.js';

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

export interface WebhookServiceDeps {
  db: Db;
  repos: Pick<RepoService, 'pathOf'>;
  /** The test delivery's payload. */
  payloads: Pick<Payloads, 'subject' | 'user' | 'commit'>;
  /** Test deliveries are queued; the worker is started and stopped with the server. */
  queue: Pick<DeliveryQueue, 'enqueue' | 'redeliver' | 'start' | 'stop'>;
  secrets: HookSecrets;
}

export class WebhookService {
  private readonly db: Db;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.db = deps.db;
  }

  /** Starts the delivery worker (anvil web): deliveries left pending by an earlier run go first. */
  start(): void {
    this.deps.queue.start();
  }

  /** Stops the delivery worker, waiting (a bounded time) for deliveries under way. */
  stop(): Promise<void> {
    return this.deps.queue.stop();
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
      authorization = this.deps.secrets.unseal(row.header_authorization);
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
      secret: this.deps.secrets.seal(config['secret'] ?? ''),
      events: JSON.stringify(settings),
      branch_filter: branchFilter,
      is_active: input.active ? 1 : 0,
      meta: type === 'slack' ? slackMeta(config) : '',
      header_authorization: this.deps.secrets.seal(authorization),
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
    if (config['secret'] !== undefined) patch.secret = this.deps.secrets.seal(config['secret']);
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
      patch.header_authorization = this.deps.secrets.seal(input.authorizationHeader);
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
    const s = await this.deps.payloads.subject(repo);
    if (!s) throw notFound();
    const dir = this.deps.repos.pathOf(repo);
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
    const sender = this.deps.payloads.user(doer);
    const commit = oid ? await this.deps.payloads.commit(s, oid) : null;
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
    await this.deps.queue.enqueue([{ hooks: [hook], type: 'push', payload }]);
  }

  /** Sends a delivery of a hook again (a new delivery with the same event and body); its new id. */
  async redeliver(scope: HookScope, id: number, uuid: string): Promise<string> {
    const hook = await this.requireHook(scope, id);
    const task = await store.taskByUuid(this.db, hook.id, uuid);
    if (!task) throw notFound(`hook delivery does not exist [uuid: ${uuid}]`);
    return this.deps.queue.redeliver(task);
  }
}
