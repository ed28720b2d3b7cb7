// The durable delivery queue of webhooks: every event becomes rows of hook_task, one per
// interested hook, with the body rendered as it will be sent. A worker started by `anvil web`
// delivers them off the request path: a bounded number at once, each with a timeout, retried with
// exponential back-off up to [webhook] MAX_ATTEMPTS; rows still pending are picked up again by the
// next server. Several processes on one database share the queue: a batch is claimed by moving its
// rows' next attempt past a lease (PostgreSQL skips rows another process is claiming), so each
// attempt is made by one.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db, type Dialect } from '../db/database.js';
import type { Metrics } from '../ops/metrics.js';
import type { RepoService } from '../repos/service.js';
import { deliver, type DeliveryTarget, type Outcome } from './deliver.js';
import type { EventType } from './events.js';
import { HostList } from './hosts.js';
import { readManifest } from './manifest.js';
import { buildTarget, type ManifestRead } from './render-builds.js';
import { render } from './render.js';
import { metaOf } from './schemas.js';
import type { HookSecrets } from './secrets.js';
import * as store from './store.js';
import type { HookTaskRow, WebhookRow } from './tables.js';

/** An event on its way into the queue: the hooks that want it and Forgejo's payload. */
export interface Outgoing {
  hooks: WebhookRow[];
  type: EventType;
  payload: Record<string, unknown>;
}

/** How often the worker looks for due deliveries it was not told about (other processes). */
const POLL_MS = 5_000;
/** Finished deliveries kept per hook; older ones are pruned hourly. */
const HISTORY_KEEP = 500;
const PRUNE_MS = 3_600_000;

export interface DeliveryQueueDeps {
  db: Db;
  dialect: Dialect;
  log: Logger;
  /** [webhook]: timeouts, attempts, concurrency, allowed hosts. */
  settings: Config['webhook'];
  /** [cluster] LEASE_TIME in seconds: how long a claim of another process holds. */
  leaseSeconds: number;
  metrics: Pick<Metrics, 'delivery'>;
  secrets: Pick<HookSecrets, 'unseal'>;
  /** Where a repository's git directory is (the build manifests of sourcehut_builds hooks). */
  repos: Pick<RepoService, 'pathOf'>;
  /** [server] ROOT_URL. */
  rootUrl: string;
}

export class DeliveryQueue {
  private readonly db: Db;
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

  constructor(private readonly deps: DeliveryQueueDeps) {
    this.db = deps.db;
  }

  /**
   * Writes one delivery per hook and event in one transaction, then wakes the worker. The body
   * is rendered once per hook type (and settings) and stored as it will be sent; a hook whose
   * type has nothing to send for the event gets no delivery.
   */
  async enqueue(outgoing: Outgoing[]): Promise<void> {
    const now = nowUnix();
    const rows: Parameters<typeof store.insertTasks>[1] = [];
    for (const o of outgoing) {
      const bodies = new Map<string, string | null>();
      for (const h of o.hooks) {
        const key = `${h.type}\n${h.meta}`;
        let body = bodies.get(key);
        if (body === undefined) {
          const meta = metaOf(h) ?? {};
          const manifest = h.type === 'sourcehut_builds' ? await this.manifestOf(o, meta) : undefined;
          body = render(h.type, o.type, o.payload, meta, { rootUrl: this.deps.rootUrl, manifest });
          bodies.set(key, body);
        }
        if (body === null) continue;
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

  /** The build manifest a sourcehut_builds hook submits for the event (none when it starts no build). */
  private async manifestOf(o: Outgoing, meta: Record<string, unknown>): Promise<ManifestRead | undefined> {
    const target = buildTarget(o.type, o.payload);
    const repoId = (o.payload['repository'] as { id?: unknown } | undefined)?.id;
    if (!target || typeof repoId !== 'number') return undefined;
    const path = typeof meta['manifest_path'] === 'string' ? meta['manifest_path'] : '.build.yml';
    return readManifest(this.deps.repos.pathOf({ id: repoId }), target.commit, path);
  }

  /** Queues a delivery again (redeliver): the same event and body as sent, under a new id. */
  async redeliver(task: HookTaskRow): Promise<string> {
    const now = nowUnix();
    const uuid = crypto.randomUUID();
    await store.insertTasks(this.db, [
      {
        hook_id: task.hook_id,
        uuid,
        event_type: task.event_type,
        payload: task.payload,
        next_attempt_unix: now,
        created_unix: now,
      },
    ]);
    this.wake();
    return uuid;
  }

  /** Starts delivering (anvil web): deliveries left pending by an earlier run go first. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.hosts = new HostList(this.deps.settings.allowedHostList);
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
    const limit = this.deps.settings.deliverTimeout * 1000 + 5_000;
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
      .catch((err: unknown) => this.deps.log.error({ err }, 'webhook queue failed'))
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
    const { concurrency, deliverTimeout } = this.deps.settings;
    while (this.running && this.inFlight.size < concurrency) {
      if (this.ready.length === 0) {
        const now = nowUnix();
        // Claimed for the attempt's timeout plus [cluster] LEASE_TIME: a process that dies with
        // deliveries claimed leaves them to the others once that has passed (see `nextDue`).
        const lease = now + deliverTimeout + this.deps.leaseSeconds;
        const tasks = await store.claimDue(
          this.db,
          now,
          concurrency,
          lease,
          this.deps.dialect === 'postgres',
        );
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
      .catch((err: unknown) => this.deps.log.error({ err, task: task.uuid }, 'webhook delivery failed'))
      .finally(() => {
        this.inFlight.delete(p);
        this.pump();
      });
    this.inFlight.add(p);
  }

  /** One attempt: send, then record the outcome and either finish or schedule the next try. */
  private async attempt(task: HookTaskRow, hook: WebhookRow | undefined): Promise<void> {
    if (!hook) return; // deleted meanwhile: its deliveries went with it
    const cfg = this.deps.settings;
    const { secrets } = this.deps;
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
          secret: secrets.unseal(hook.secret),
          authorization: secrets.unseal(hook.header_authorization),
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
    if (hook.is_active) this.deps.metrics.delivery(outcome.ok);
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
      this.deps.log[finished ? 'warn' : 'info'](
        { hookId: hook.id, delivery: task.uuid, status: outcome.status, attempts, finished },
        `webhook delivery to ${hook.url} failed${finished ? ', giving up' : ''}: ${outcome.response.body.slice(0, 200)}`,
      );
    }
  }

  private async prune(): Promise<void> {
    try {
      await store.pruneTasks(this.db, HISTORY_KEEP);
    } catch (err) {
      this.deps.log.error({ err }, 'pruning webhook deliveries failed');
    }
  }
}
