// Webhooks of repositories, of users and organizations (fire for all their repositories) and of
// the site (system hooks fire for every repository; default hooks are copied into new ones):
// their management (checked settings, secrets stored encrypted), their delivery history and test
// deliveries. What happens is turned into deliveries by ./dispatch.ts (payloads: ./payloads.ts)
// and delivered by the durable queue of ./queue.ts.
import { nowUnix, type Db } from '../db/database.js';
import { invalid, invalidField, notFound } from '../errors.js';
import { isValidRefName, resolveRef } from '../git/data.js';
import { ZERO_OID } from '../git/git.js';
import type { Page } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { checkBranchFilter, settingsFromList } from './events.js';
import type { PayloadCommit, Payloads } from './payloads.js';
import type { DeliveryQueue } from './queue.js';
import { metaOf, toDeliveryJson, toHookJson, type HookJson } from './schemas.js';
import type { HookSecrets } from './secrets.js';
import * as store from './store.js';
import type { HookOwner } from './store.js';
import type { WebhookRow } from './tables.js';
import { FIXED_TYPES, META_KEYS, isHookType, typeSettings, type HookType } from './types.js';

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

/** The Authorization header a sourcehut_builds hook sends: its access token as a bearer token. */
function buildsAuthorization(type: HookType, config: Record<string, string>): string | undefined {
  const token = config['access_token']?.trim();
  return type === 'sourcehut_builds' && token ? `Bearer ${token}` : undefined;
}

/** The commit of a test delivery in an empty repository (Forgejo's "fake commit"). */
function fakeCommit(htmlUrl: string): PayloadCommit {
  const ghost = { name: 'Ghost', email: '', username: 'ghost' };
  return {
    id: ZERO_OID,
    message: 'This is a fake commit',
    url: `${htmlUrl}/commit/${ZERO_OID}`,
    author: ghost,
    committer: ghost,
    verification: { verified: false, reason: '', signature: '', signer: null, payload: '' },
    timestamp: new Date(0).toISOString(),
    added: [],
    removed: [],
    modified: [],
  };
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
    if (!isHookType(type)) throw invalid(`Invalid hook type: ${input.type}`);
    const config = input.config;
    // The chat and build types are always a JSON POST without a secret (their own settings aside).
    const fixed = FIXED_TYPES.has(type);
    const urlDerived = type === 'telegram' || type === 'packagist';
    for (const name of ['url', 'content_type']) {
      if (name in config) continue;
      if ((name === 'url' && urlDerived) || (name === 'content_type' && fixed)) continue;
      throw invalid(`Missing config option: ${name}`);
    }
    if (config['content_type'] !== undefined) checkContentType(config['content_type']);
    if (config['url'] !== undefined) checkUrl(config['url']);
    const settings = typeSettings(type, config, {}, config['url'] !== undefined);
    const url = config['url'] ?? settings.url!;
    const method = fixed
      ? 'POST'
      : checkMethod(type, config['http_method'] ?? (type === 'matrix' ? 'PUT' : 'POST'));
    const events = settingsFromList(input.events);
    const branchFilter = input.branchFilter ?? '';
    checkBranchFilter(branchFilter);
    const authorization = input.authorizationHeader || buildsAuthorization(type, config) || '';
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
      url,
      http_method: method,
      content_type: fixed ? 'json' : config['content_type']!,
      secret: this.deps.secrets.seal(fixed ? '' : (config['secret'] ?? '')),
      events: JSON.stringify(events),
      branch_filter: branchFilter,
      is_active: input.active ? 1 : 0,
      meta: settings.meta,
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
    const fixed = FIXED_TYPES.has(row.type);
    if (config['url'] !== undefined) {
      checkUrl(config['url']);
      patch.url = config['url'];
    }
    if (config['content_type'] !== undefined) {
      checkContentType(config['content_type']);
      if (!fixed) patch.content_type = config['content_type'];
    }
    if (config['http_method'] !== undefined && !fixed) {
      patch.http_method = checkMethod(row.type, config['http_method']);
    }
    if (config['secret'] !== undefined && !fixed) patch.secret = this.deps.secrets.seal(config['secret']);
    if (isHookType(row.type) && (META_KEYS[row.type] ?? []).some((k) => k in config)) {
      const settings = typeSettings(row.type, config, metaOf(row) ?? {}, config['url'] !== undefined);
      patch.meta = settings.meta;
      if (settings.url !== undefined) patch.url = settings.url;
    }
    const token = isHookType(row.type) ? buildsAuthorization(row.type, config) : undefined;
    if (token !== undefined && input.authorizationHeader === undefined) {
      patch.header_authorization = this.deps.secrets.seal(token);
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
    // An empty repository has no commit to show: Forgejo sends a made-up one by its ghost user.
    const commit = oid ? await this.deps.payloads.commit(s, oid) : fakeCommit(s.json.html_url);
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
