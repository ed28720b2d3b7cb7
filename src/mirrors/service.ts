// Migration of remote git repositories, pull mirrors (a repository following a remote, updated on a
// schedule and on request) and push mirrors (a repository pushed to remotes on a schedule, on
// request and, with sync_on_commit, right after every push). Remote hosts are checked against
// [migrations]; credentials are encrypted at rest and reach git only through the environment of
// the one process that needs them. Every failed update is recorded on its mirror and logged.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Logger } from 'pino';
import { SecretBox } from '../auth/secrets.js';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, badRequest, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { gitText, listRefs, ZERO_OID } from '../git/git.js';
import type { OrgService } from '../orgs/service.js';
import type { ForkService } from '../repos/forks.js';
import { checkBranchName, checkRepoName } from '../repos/names.js';
import type { RefChanges } from '../repos/ref-changes.js';
import { adoptBareRepository, scratchDir } from '../repos/scratch.js';
import type { RepoService } from '../repos/service.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import * as userStore from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { formatGoDuration, parseGoDuration } from './duration.js';
import {
  AddressError,
  HostChecker,
  RemoteGitError,
  gitUrl,
  parseRemote,
  runRemoteGit,
  scrub,
  type Credentials,
  type RemoteAddress,
} from './remote.js';
import * as store from './store.js';
import type { PushMirrorRow } from './tables.js';

export interface MigrateInput {
  cloneAddr: string;
  repoName: string;
  repoOwner?: string | undefined;
  uid?: number | undefined;
  authUsername?: string | undefined;
  authPassword?: string | undefined;
  authToken?: string | undefined;
  mirror?: boolean | undefined;
  mirrorInterval?: string | undefined;
  private?: boolean | undefined;
  description?: string | undefined;
  /**
   * Who may migrate into an organization: by default its owners only (Forgejo's API); with this,
   * everyone who may create repositories there (Forgejo's web form).
   */
  allowOrgCreators?: boolean | undefined;
}

export interface PushMirrorInput {
  remoteAddress?: string | undefined;
  remoteUsername?: string | undefined;
  remotePassword?: string | undefined;
  interval?: string | undefined;
  syncOnCommit?: boolean | undefined;
  useSsh?: boolean | undefined;
}

/** Forgejo's [git.timeout] MIGRATE and MIRROR defaults. */
const MIGRATE_TIMEOUT_MS = 10 * 60_000;
const MIRROR_TIMEOUT_MS = 5 * 60_000;
/** How often the scheduler looks for mirrors that are due, and how many it takes at once. */
const TICK_MS = 60_000;
const BATCH = 20;
/** How long stop() waits for running updates. */
const STOP_WAIT_MS = 15_000;

const HTTP_ONLY = new Set(['http:', 'https:']);

/**
 * Runs work one at a time per key. A request while a run is going queues exactly one more run
 * (later requests join it): a push arriving during a mirror update is always mirrored.
 */
class KeyedRunner {
  private readonly running = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, Promise<void>>();

  run(key: string, fn: () => Promise<void>): Promise<void> {
    const queued = this.waiting.get(key);
    if (queued) return queued;
    const start = (): Promise<void> => {
      this.waiting.delete(key);
      const p: Promise<void> = fn().finally(() => {
        if (this.running.get(key) === p) this.running.delete(key);
      });
      this.running.set(key, p);
      return p;
    };
    const current = this.running.get(key);
    if (!current) return start();
    const next = current.then(start, start);
    this.waiting.set(key, next);
    return next;
  }

  async idle(): Promise<void> {
    while (this.running.size || this.waiting.size) {
      await Promise.allSettled([...this.running.values(), ...this.waiting.values()]);
    }
  }
}

function randomName(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...crypto.randomBytes(10)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** Reports each run of a scheduled task (cron/service.ts). */
export interface TaskTracker {
  track<T>(name: string, work: Promise<T>): Promise<T>;
}

/** Work one process of the cluster does at a time, by name (cluster/leases.ts). */
export interface ExclusiveLeases {
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

export interface MirrorServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'assertCanCreateIn' | 'create' | 'delete' | 'getById' | 'pathOf'>;
  refChanges: Pick<RefChanges, 'afterPush' | 'beginIntent' | 'reconcile' | 'dropIntent'>;
  orgs: Pick<OrgService, 'isOwner'>;
  forks: Pick<ForkService, 'assertCanCreate'>;
  cron: TaskTracker;
  leases: ExclusiveLeases;
  mirror: Config['mirror'];
  migrations: Config['migrations'];
  /** [repository] ROOT (migrations are cloned into a scratch directory under it). */
  root: string;
  /** [cluster] LEASE_TIME in seconds: how long a claimed mirror update stays claimed. */
  leaseSeconds: number;
  /** [security] SECRET_KEY, which seals the mirrors' credentials. */
  secretKey: string;
}

export class MirrorService {
  private secretBox: SecretBox | undefined;
  private readonly runner = new KeyedRunner();
  private readonly background = new Set<Promise<unknown>>();
  private timers: NodeJS.Timeout[] = [];
  private ticking = false;
  private stopped = false;

  private readonly db: Db;
  private readonly log: Logger;

  constructor(private readonly deps: MirrorServiceDeps) {
    this.db = deps.db;
    this.log = deps.log;
    // Never slows a push down: the listener only starts background work.
    deps.events.on('push', ({ repoId }) => {
      this.inBackground(this.pushOnCommit(repoId));
    });
  }

  // Scheduling

  /** Starts the scheduler (anvil web only): due pull and push mirrors are updated every minute. */
  start(): void {
    if (this.timers.length || !this.deps.mirror.enabled) return;
    this.stopped = false;
    const tick = () => this.inBackground(this.deps.cron.track('update_mirrors', this.tick()));
    this.timers = [setInterval(tick, TICK_MS), setTimeout(tick, 5_000)];
    for (const t of this.timers) t.unref();
  }

  /** Stops the scheduler and waits (a bounded time) for updates under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    const settle = (async () => {
      while (this.background.size) await Promise.allSettled([...this.background]);
      await this.runner.idle();
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settle, new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Updates the pull and push mirrors that are due; the scheduler's work, callable directly. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      // Each due mirror is claimed before its update (its next update moved past the update's
      // timeout and [cluster] LEASE_TIME), so of several processes one updates it; one that dies
      // meanwhile leaves it due again for the others once the claim has run out.
      const { db } = this;
      const now = nowUnix();
      const until = now + MIRROR_TIMEOUT_MS / 1000 + this.deps.leaseSeconds;
      for (const m of await store.duePullMirrors(db, now, BATCH)) {
        if (await store.claimPullMirror(db, m.repo_id, m.next_update_unix, until))
          await this.syncPull(m.repo_id);
      }
      for (const m of await store.duePushMirrors(db, now, BATCH)) {
        if (await store.claimPushMirror(db, m.id, m.next_update_unix, until)) await this.syncPush(m.id);
      }
    } finally {
      this.ticking = false;
    }
  }

  private inBackground(work: Promise<unknown>): void {
    const p = work
      .catch((err: unknown) => this.log.error({ err }, 'mirror background work failed'))
      .finally(() => this.background.delete(p));
    this.background.add(p);
  }

  // Shared pieces

  private box(): SecretBox {
    this.secretBox ??= new SecretBox(this.deps.secretKey, 'mirror-credentials');
    return this.secretBox;
  }

  private seal(credentials: Credentials | null): string {
    return credentials ? this.box().encrypt(JSON.stringify(credentials)) : '';
  }

  private unseal(stored: string): Credentials | null {
    if (!stored) return null;
    try {
      return JSON.parse(this.box().decrypt(stored)) as Credentials;
    } catch {
      throw new RemoteGitError(
        'the stored credentials cannot be decrypted (was [security] SECRET_KEY changed?)',
        false,
      );
    }
  }

  private checker(): HostChecker {
    return new HostChecker(this.deps.migrations);
  }

  /** A mirror interval in seconds: 0 (never) or at least [mirror] MIN_INTERVAL; null when invalid. */
  private interval(text: string | undefined): number | null {
    if (text === undefined || text.trim() === '') return this.deps.mirror.defaultInterval;
    const seconds = parseGoDuration(text);
    if (seconds === null) return null;
    if (seconds !== 0 && seconds < this.deps.mirror.minInterval) return null;
    return seconds;
  }

  private intervalProblem(text: string): string {
    return parseGoDuration(text) === null
      ? `invalid duration "${text}": use a Go duration such as 10m or 8h0m0s`
      : `interval ${text} is set below the minimum interval of ${formatGoDuration(this.deps.mirror.minInterval)}`;
  }

  // Migration

  /** Whether new pull mirrors may be made ([mirror] ENABLED; else a migration cannot be a mirror). */
  get pullMirrorsEnabled(): boolean {
    return this.deps.mirror.enabled;
  }

  /**
   * Checks a clone address as a migration will before cloning: a valid http(s) or git URL, without
   * line breaks in its credentials, whose host [migrations] allows (422 with the reason otherwise).
   */
  async checkCloneAddress(
    address: string,
    username = '',
    password = '',
    token = '',
  ): Promise<{ remote: RemoteAddress; addresses: string[] }> {
    const remote = this.remoteFor(address, username, password, token, (e) => invalid(e.message));
    return { remote, addresses: await this.checkHost(remote, (e) => invalid(e.message)) };
  }

  /** POST /repos/migrate: clones a remote repository (only its git data) into a new repository. */
  async migrate(doer: UserRow, input: MigrateInput): Promise<RepoRow> {
    const { db } = this;
    const { repos, refChanges } = this.deps;
    let owner: UserRow | undefined = doer;
    if (input.repoOwner) owner = await userStore.getByName(db, input.repoOwner);
    else if (input.uid) owner = await userStore.getById(db, input.uid);
    if (!owner) {
      throw invalidField(
        input.repoOwner ? 'repo_owner' : 'uid',
        `user does not exist [name: ${input.repoOwner ?? ''}, uid: ${input.uid ?? 0}]`,
      );
    }
    if (input.allowOrgCreators) {
      await repos.assertCanCreateIn(doer, owner);
    } else if (!doer.is_admin) {
      if (owner.type !== UserType.Organization && owner.id !== doer.id) {
        throw forbidden('Given user is not an organization.');
      }
      if (
        owner.type === UserType.Organization &&
        !(await this.deps.orgs.isOwner(owner, { id: doer.id, isAdmin: false }))
      ) {
        throw forbidden('Given user is not owner of organization.');
      }
    }
    if (input.mirror && !this.deps.mirror.enabled) {
      throw forbidden('the site administrator has disabled the creation of new pull mirrors');
    }
    checkRepoName(input.repoName, 'repo_name');
    if ((input.description?.length ?? 0) > 2048) {
      throw invalidField('description', 'must be at most 2048 characters');
    }
    let interval = 0;
    if (input.mirror) {
      const parsed = this.interval(input.mirrorInterval);
      if (parsed === null)
        throw invalidField('mirror_interval', this.intervalProblem(input.mirrorInterval ?? ''));
      interval = parsed;
    }
    const { remote, addresses } = await this.checkCloneAddress(
      input.cloneAddr,
      input.authUsername,
      input.authPassword,
      input.authToken,
    );

    // Refuse before the (possibly long) clone what creation would refuse after it.
    if (await repoStore.getByOwnerAndName(db, owner.name, input.repoName)) {
      throw conflict('The repository with the same name already exists.');
    }
    await this.deps.forks.assertCanCreate(db, doer, owner);

    const scratch = scratchDir(this.deps.root, 'migrate');
    let repo: RepoRow | undefined;
    try {
      try {
        await runRemoteGit({
          args: ['clone', '--bare', '--quiet', '--', gitUrl(remote.url, addresses), scratch],
          url: remote.url,
          credentials: remote.credentials,
          addresses,
          timeoutMs: MIGRATE_TIMEOUT_MS,
        });
      } catch (err) {
        if (err instanceof RemoteGitError) {
          throw invalid(
            err.authFailed ? `Authentication failed: ${err.message}` : `Migration failed: ${err.message}`,
          );
        }
        throw err;
      }
      await adoptBareRepository(scratch);
      let head =
        (await gitText(['symbolic-ref', '--short', 'HEAD'], { gitDir: scratch, okCodes: [1, 128] })) ||
        'main';
      try {
        checkBranchName(head);
      } catch {
        head = 'main';
      }

      repo = await repos.create(doer, owner, {
        name: input.repoName,
        description: input.description,
        private: input.private,
        defaultBranch: head,
      });
      const dir = repos.pathOf(repo);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(scratch, dir);
      const created = repo;
      const now = nowUnix();
      await transaction(db, async (tx) => {
        await repoStore.update(tx, created.id, {
          is_mirror: input.mirror ? 1 : 0,
          original_url: remote.safe,
          updated_unix: now,
        });
        if (input.mirror) {
          await store.insertMirror(tx, {
            repo_id: created.id,
            remote_address: remote.safe,
            credentials: this.seal(remote.credentials),
            interval,
            created_unix: now,
            updated_unix: now,
            next_update_unix: interval ? now + interval : 0,
          });
        }
      });
      const updates: RefUpdate[] = (await listRefs(dir)).map((r) => ({
        ref: r.name,
        oldOid: ZERO_OID,
        newOid: r.oid,
      }));
      await refChanges.afterPush(repo.id, doer.id, updates);
      return (await repos.getById(repo.id))!;
    } catch (err) {
      fs.rmSync(scratch, { recursive: true, force: true });
      if (repo) {
        await repos
          .delete(repo, doer.id)
          .catch((e: unknown) =>
            this.log.error({ err: e, repoId: repo!.id }, 'removing a failed migration failed'),
          );
      }
      if (err instanceof AppError) throw err;
      this.log.error({ err: scrub(String(err), remote.credentials) }, 'migration failed');
      throw new AppError('internal', 'the migration failed');
    }
  }

  private remoteFor(
    address: string,
    username: string,
    password: string,
    token: string,
    fail: (e: AddressError) => AppError,
    schemes?: ReadonlySet<string>,
  ): RemoteAddress {
    try {
      const remote = parseRemote(address, username, password, schemes);
      if (token && !password) remote.credentials = { username: username || 'oauth2', password: token };
      return remote;
    } catch (err) {
      if (err instanceof AddressError) throw fail(err);
      throw err;
    }
  }

  private async checkHost(remote: RemoteAddress, fail: (e: AddressError) => AppError): Promise<string[]> {
    try {
      return await this.checker().check(remote.url);
    } catch (err) {
      if (err instanceof AddressError) throw fail(err);
      throw err;
    }
  }

  // Pull mirrors

  mirrorOf(repoId: number) {
    return store.mirrorOf(this.db, repoId);
  }

  /** Changes how often a pull mirror is updated (Forgejo's mirror_interval; "0" only on request). */
  async setPullInterval(repo: RepoRow, text: string): Promise<void> {
    const mirror = repo.is_mirror ? await store.mirrorOf(this.db, repo.id) : undefined;
    if (!mirror) throw badRequest('Repository is not a mirror');
    const interval = this.interval(text);
    if (interval === null) throw invalidField('mirror_interval', this.intervalProblem(text));
    await store.updateMirror(this.db, repo.id, {
      interval,
      next_update_unix: interval ? nowUnix() + interval : 0,
    });
  }

  /** POST /repos/{owner}/{repo}/mirror-sync: queues an update of a pull mirror. */
  async requestPullSync(repo: RepoRow): Promise<void> {
    if (!this.deps.mirror.enabled) throw badRequest('Mirror feature is disabled');
    if (!repo.is_mirror || !(await store.mirrorOf(this.db, repo.id))) {
      throw badRequest('Repository is not a mirror');
    }
    this.inBackground(this.syncPull(repo.id));
  }

  /** Fetches a pull mirror's remote; the outcome is recorded on the mirror. */
  syncPull(repoId: number): Promise<void> {
    return this.runner.run(`pull:${repoId}`, () =>
      this.deps.leases.exclusive(`mirror:pull:${repoId}`, () => this.runPullSync(repoId)),
    );
  }

  private async runPullSync(repoId: number): Promise<void> {
    const { db } = this;
    const { repos, refChanges } = this.deps;
    const m = await store.mirrorOf(db, repoId);
    const repo = await repos.getById(repoId);
    if (!m || !repo) return;
    const now = nowUnix();
    const next = m.interval ? now + m.interval : 0;
    let credentials: Credentials | null = null;
    let intent: number | undefined;
    try {
      credentials = this.unseal(m.credentials);
      const remote = parseRemote(m.remote_address, credentials?.username, credentials?.password);
      const addresses = await this.checker().check(remote.url);
      const dir = repos.pathOf(repo);
      const before = new Map((await listRefs(dir)).map((r) => [r.name, r.oid]));
      // Which refs a fetch moves is known only afterwards: an intent without updates makes
      // recovery compare every ref with the database.
      intent = await refChanges.beginIntent(repoId, repo.owner_id, []);
      await runRemoteGit({
        gitDir: dir,
        args: [
          'fetch',
          '--quiet',
          '--force',
          ...(m.enable_prune ? ['--prune'] : []),
          '--',
          gitUrl(remote.url, addresses),
          '+refs/heads/*:refs/heads/*',
          '+refs/tags/*:refs/tags/*',
        ],
        url: remote.url,
        credentials,
        addresses,
        timeoutMs: MIRROR_TIMEOUT_MS,
      });
      const after = new Map((await listRefs(dir)).map((r) => [r.name, r.oid]));
      const updates: RefUpdate[] = [];
      for (const [ref, oid] of after) {
        if (before.get(ref) !== oid) updates.push({ ref, oldOid: before.get(ref) ?? ZERO_OID, newOid: oid });
      }
      for (const [ref, oid] of before)
        if (!after.has(ref)) updates.push({ ref, oldOid: oid, newOid: ZERO_OID });
      await refChanges.afterPush(repoId, repo.owner_id, updates, intent);
      intent = undefined;
      await store.updateMirror(db, repoId, {
        updated_unix: nowUnix(),
        next_update_unix: next,
        last_error: '',
      });
    } catch (err) {
      if (intent !== undefined) {
        // A fetch that failed half-way may still have moved refs.
        await refChanges.reconcile(repoId).catch(() => []);
        await refChanges.dropIntent(intent);
      }
      const message = scrub(err instanceof Error ? err.message : String(err), credentials);
      this.log.warn({ repoId, error: message }, 'pull mirror update failed');
      await store.updateMirror(db, repoId, { next_update_unix: next, last_error: message });
    }
  }

  // Push mirrors

  private assertEnabled(): void {
    if (!this.deps.mirror.enabled) throw badRequest('Mirror feature is disabled');
  }

  listPushMirrors(repo: RepoRow, limit: number, offset: number) {
    this.assertEnabled();
    return store.listPushMirrors(this.db, repo.id, limit, offset);
  }

  async getPushMirror(repo: RepoRow, name: string): Promise<PushMirrorRow> {
    this.assertEnabled();
    const m = await store.pushMirrorByName(this.db, repo.id, name);
    if (!m) throw notFound(`push mirror does not exist [name: ${name}]`);
    return m;
  }

  async createPushMirror(repo: RepoRow, input: PushMirrorInput): Promise<PushMirrorRow> {
    this.assertEnabled();
    const interval = this.interval(input.interval);
    if (interval === null) throw badRequest(this.intervalProblem(input.interval ?? ''));
    if (input.useSsh) throw badRequest('SSH authentication not available.');
    const remote = this.remoteFor(
      input.remoteAddress ?? '',
      input.remoteUsername ?? '',
      input.remotePassword ?? '',
      '',
      (e) => badRequest(e.message),
      HTTP_ONLY,
    );
    await this.checkHost(remote, (e) => badRequest(e.message));
    const now = nowUnix();
    const id = await store.insertPushMirror(this.db, {
      repo_id: repo.id,
      remote_name: `remote_mirror_${randomName()}`,
      remote_address: remote.safe,
      credentials: this.seal(remote.credentials),
      sync_on_commit: input.syncOnCommit ? 1 : 0,
      interval,
      created_unix: now,
      next_update_unix: interval ? now + interval : 0,
    });
    return (await store.pushMirrorById(this.db, id))!;
  }

  async deletePushMirror(repo: RepoRow, name: string): Promise<void> {
    this.assertEnabled();
    if (!(await store.deletePushMirror(this.db, repo.id, name))) {
      throw notFound(`push mirror does not exist [name: ${name}]`);
    }
  }

  /** POST /repos/{owner}/{repo}/push_mirrors-sync: pushes to every push mirror now and waits. */
  async syncAllPushMirrors(repo: RepoRow): Promise<void> {
    this.assertEnabled();
    const mirrors = await store.pushMirrorsOf(this.db, repo.id);
    await Promise.all(mirrors.map((m) => this.syncPush(m.id)));
  }

  /** Pushes a repository to one push mirror; the outcome is recorded on the mirror. */
  syncPush(mirrorId: number): Promise<void> {
    return this.runner.run(`push:${mirrorId}`, () =>
      this.deps.leases.exclusive(`mirror:push:${mirrorId}`, () => this.runPushSync(mirrorId)),
    );
  }

  private async pushOnCommit(repoId: number): Promise<void> {
    if (this.stopped || !this.deps.mirror.enabled) return;
    const mirrors = await store.pushMirrorsOf(this.db, repoId, true);
    await Promise.all(mirrors.map((m) => this.syncPush(m.id)));
  }

  private async runPushSync(mirrorId: number): Promise<void> {
    const { db } = this;
    const { repos } = this.deps;
    const m = await store.pushMirrorById(db, mirrorId);
    if (!m) return;
    const repo = await repos.getById(m.repo_id);
    if (!repo) return;
    let credentials: Credentials | null = null;
    let lastError = '';
    try {
      credentials = this.unseal(m.credentials);
      const remote = parseRemote(m.remote_address, credentials?.username, credentials?.password, HTTP_ONLY);
      const addresses = await this.checker().check(remote.url);
      await runRemoteGit({
        gitDir: repos.pathOf(repo),
        args: ['push', '--mirror', '--quiet', '--', gitUrl(remote.url, addresses)],
        url: remote.url,
        credentials,
        addresses,
        timeoutMs: MIRROR_TIMEOUT_MS,
      });
    } catch (err) {
      lastError = scrub(err instanceof Error ? err.message : String(err), credentials) || 'push failed';
      this.log.warn(
        { repoId: repo.id, mirror: m.remote_name, error: lastError },
        'push mirror update failed',
      );
    }
    const now = nowUnix();
    await store.updatePushMirror(db, mirrorId, {
      last_update_unix: now,
      last_error: lastError,
      next_update_unix: m.interval ? now + m.interval : 0,
    });
  }
}
