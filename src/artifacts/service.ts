// Actions artifacts: the v4 artifact service's operations (behind the job's runtime token), the
// signed URLs, the REST view, deletion, quota accounting and retention. The content behind the
// signed URLs (uploads and downloads) is content.ts.
//
// Life of an artifact:
//   CreateArtifact   a 'pending' row (unique name within the run) and a signed upload URL;
//   upload           the content streams into `storage.artifacts`: either one plain PUT, or Azure
//                    Blob style blocks (`comp=block`, each its own storage object, in any order and
//                    in parallel) joined by `comp=blocklist` into one blob, in list order, by
//                    streaming; the row records the content's size and SHA-256;
//   FinalizeArtifact compares them with the client's `size` and `hash`: on a match the row becomes
//                    'uploaded' and its size counts toward the repository owner's quota subject
//                    size:assets:artifacts, in the same transaction; on a mismatch nothing is kept;
//   DeleteArtifact / REST DELETE / expiry / repository deletion: row, blocks and blob go, and the
//                    usage is subtracted from the repository's current owner.
//
// What the messages mean in Anvil (the spec leaves it open):
//   - `version` (CreateArtifactRequest) is the revision of the v4 artifact protocol the client
//     speaks. 4 is actions/upload-artifact@v4's (@actions/artifact 2.x); 5 to 7 are later
//     revisions of the same protocol (@actions/artifact 6.x sends 7, with an optional mime_type
//     field 6 that Anvil ignores). All of them mean the same here: the artifact is one zip, uploaded
//     to `signed_upload_url`. Anything else (0 or absent, 1-3 of the older v3 service, above 7)
//     is refused with invalid_argument.
//   - `expires_at`: the artifact is removed then, but never later than [actions]
//     ARTIFACT_RETENTION_DAYS from now (it is brought back to that); absent, it expires
//     ARTIFACT_RETENTION_DAYS from now; a time already past is invalid_argument.
//   - `ok` is true whenever the operation did what was asked; failures are Twirp errors. The one
//     `ok: false` is FinalizeArtifact's when the uploaded content does not match (no content
//     arrived, `size` differs, or `hash` is given and is not `sha256:<hex>` of the content): the
//     artifact is then discarded (row, blocks and blob), and the job may create it again.
//   - name_filter / id_filter (ListArtifactsRequest) keep the artifacts of that exact name / id.
//     Lists only ever show finalized artifacts of the token's run.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { verifyRuntimeToken, RuntimeTokenError, type RuntimeTokenClaims } from '../actions/runtime-token.js';
import type { Cluster } from '../cluster/service.js';
import type { Config } from '../config/config.js';
import type { CronService } from '../cron/service.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../errors.js';
import type { QuotaUsedArtifactJson } from '../quota/schemas.js';
import type { ItemSources, QuotaService } from '../quota/service.js';
import {
  measureRows,
  recordUsage,
  type ItemSource,
  type OwnerTotals,
  type UsageSource,
} from '../quota/usage.js';
import type { RepoService } from '../repos/service.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import type { BlobReferences } from '../storage/sweep.js';
import type { BlobStore } from '../storage/storage.js';
import type { AfterCommit } from '../users/owned.js';
import { DECIMAL_ID, removeFiles } from './content.js';
import { ArtifactError, clip } from './errors.js';
import { UrlSigner, type UrlPurpose } from './signed-url.js';
import * as store from './store.js';
import type { ArtifactRow } from './tables.js';

const SUBJECT = 'size:assets:artifacts';
/** Versions of the v4 protocol accepted in CreateArtifactRequest.version (see the header). */
export const ACCEPTED_VERSIONS = { min: 4, max: 7 } as const;
/** How long a signed upload URL works (a job's upload must start within it). */
const UPLOAD_URL_TTL = 6 * 3600;
/** How long a signed download URL works. */
const DOWNLOAD_URL_TTL = 3600;
/** An artifact never finalized is removed this long after its creation. */
const STALE_PENDING = 24 * 3600;
/** How often the retention job runs, and how many artifacts it takes per transaction. */
const SWEEP_MS = 60 * 60_000;
const SWEEP_FIRST_MS = 10_000;
const SWEEP_BATCH = 100;
const STOP_WAIT_MS = 15_000;
/** Longest artifact name, and the characters @actions/artifact itself refuses in one. */
const MAX_NAME = 255;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const BAD_NAME = /["<>|*?:\\/\x00-\x1f\x7f]/;

/** What the actions domain may tell about runs, for the REST view and quota links. */
export interface RunInfo {
  /** The run's number within its repository (its web URL); the run id when absent. */
  index?: number;
  headSha?: string;
}
export interface RunSource {
  runs(ids: number[]): Promise<Map<number, RunInfo>>;
}

export interface ArtifactServiceDeps {
  db: Db;
  log: Logger;
  /** Where the contents are (storage.artifacts). */
  blobs: BlobStore;
  settings: Pick<Config['actions'], 'enabled' | 'artifactRetentionDays'>;
  /** [security] SECRET_KEY: runtime tokens are checked and URLs signed with it. */
  secretKey: string;
  rootUrl: string;
  quota: Pick<QuotaService, 'check'>;
  /** Artifacts follow their repository's deletion and transfer. */
  repos: Pick<RepoService, 'addHooks'>;
  /** Run numbers and head commits (the actions domain), for the REST view and quota links. */
  runs: RunSource;
  /** The retention job runs under a lease, reported as the cleanup_actions task. */
  cron: Pick<CronService, 'track'>;
  cluster: Pick<Cluster, 'once'>;
  usageSources: UsageSource[];
  quotaItems: ItemSources;
  blobReferences: BlobReferences[];
}

export class ArtifactService {
  private signerInstance: UrlSigner | undefined;
  private timers: NodeJS.Timeout[] = [];
  private sweeping: Promise<number> | undefined;
  private stopped = false;
  private readonly db: Db;

  constructor(private readonly deps: ArtifactServiceDeps) {
    this.db = deps.db;
    deps.usageSources.push(this.usageSource());
    deps.quotaItems.artifacts = this.itemSource();
    // Contents (`blobs/`, plain or composed) and blocks of uploads (`blocks/`); `cache/` is the
    // actions cache's (actions/cache-service.ts).
    for (const prefix of ['blobs/', 'blocks/']) {
      deps.blobReferences.push({
        label: 'artifacts',
        store: 'artifacts',
        prefix,
        referenced: (keys) => store.referencedKeys(deps.db, keys),
      });
    }
    deps.repos.addHooks({
      beforeDelete: (tx, repo) => this.beforeRepoDelete(tx, repo),
      onTransfer: (tx, repo, newOwnerId) => this.onRepoTransfer(tx, repo, newOwnerId),
    });
  }

  private get signer(): UrlSigner {
    return (this.signerInstance ??= new UrlSigner(this.deps.secretKey));
  }

  get enabled(): boolean {
    return this.deps.settings.enabled;
  }

  /** 404 when [actions] ENABLED is false: the service, its URLs and the REST routes are absent. */
  assertEnabled(): void {
    if (!this.enabled) throw notFound('Actions are disabled on this server ([actions] ENABLED = false)');
  }

  // The job behind a request

  /** The job of a runtime token (`Authorization: Bearer <token>`); 401 when there is none or it is not valid. */
  authenticate(authorization: string | undefined): RuntimeTokenClaims {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw unauthorized('a runtime token is required (Authorization: Bearer <ACTIONS_RUNTIME_TOKEN>)');
    try {
      return verifyRuntimeToken(this.deps.secretKey, m[1]!);
    } catch (err) {
      if (err instanceof RuntimeTokenError) throw unauthorized(`runtime token refused: ${err.message}`);
      throw err;
    }
  }

  /**
   * Checks the request's run and job backend ids (decimal strings) against the token: the run must
   * be the token's; the job too when `ownJob` (creating and finalizing), any job of the run
   * otherwise (an artifact names the job that made it).
   */
  checkScope(job: RuntimeTokenClaims, runIdText: string, jobIdText: string, ownJob: boolean): void {
    if (!DECIMAL_ID.test(runIdText)) {
      throw badRequest(
        `workflow_run_backend_id must be the run's id, a decimal string [got: "${clip(runIdText)}"]`,
      );
    }
    if (!DECIMAL_ID.test(jobIdText)) {
      throw badRequest(
        `workflow_job_run_backend_id must be the job's id, a decimal string [got: "${clip(jobIdText)}"]`,
      );
    }
    if (Number(runIdText) !== job.runId) {
      throw forbidden(`the runtime token is for run ${job.runId}, not run ${runIdText}`);
    }
    if (ownJob && Number(jobIdText) !== job.jobId) {
      throw forbidden(`the runtime token is for job ${job.jobId}, not job ${jobIdText}`);
    }
  }

  // The operations of the artifact service

  /** CreateArtifact: a pending artifact and the URL its content goes to. */
  async create(
    job: RuntimeTokenClaims,
    input: { name: string; version: number; expiresAt?: number | undefined },
  ): Promise<{ artifact: ArtifactRow; uploadUrl: string }> {
    const name = checkName(input.name);
    if (input.version < ACCEPTED_VERSIONS.min || input.version > ACCEPTED_VERSIONS.max) {
      throw badRequest(
        `version ${input.version} is not supported: Anvil speaks the v4 artifact protocol, versions ${ACCEPTED_VERSIONS.min} to ${ACCEPTED_VERSIONS.max}`,
      );
    }
    const now = nowUnix();
    const longest = now + this.deps.settings.artifactRetentionDays * 86400;
    let expires = longest;
    if (input.expiresAt !== undefined) {
      if (input.expiresAt <= now) throw badRequest('expires_at is in the past');
      expires = Math.min(Math.floor(input.expiresAt), longest);
    }
    const repo = await this.requireJobRepo(job);
    if (!(await this.deps.quota.check(repo.owner_id, SUBJECT))) {
      throw new ArtifactError(
        'forbidden',
        `insufficient usage: the repository's owner is over its quota for ${SUBJECT}`,
        { twirp: 'resource_exhausted' },
      );
    }
    let after: AfterCommit | undefined;
    let artifact: ArtifactRow;
    try {
      artifact = await transaction(this.db, async (tx) => {
        const existing = await store.getByRunAndName(tx, job.runId, name);
        if (existing) {
          const expired = existing.expires_unix <= now;
          if (!expired && existing.status === 'uploaded') {
            throw conflict(`an artifact named "${name}" already exists in run ${job.runId}`);
          }
          if (!expired && existing.job_id !== job.jobId) {
            throw conflict(
              `an artifact named "${name}" is being uploaded by job ${existing.job_id} of this run`,
            );
          }
          // An expired one, or this job's own unfinished upload (a retried step), starts over.
          after = await this.deleteInTx(tx, [existing]);
        }
        const id = await store.insert(tx, {
          repo_id: repo.id,
          run_id: job.runId,
          job_id: job.jobId,
          name,
          status: 'pending',
          storage_key: '',
          expires_unix: expires,
          created_unix: now,
          updated_unix: now,
        });
        return (await store.getById(tx, id))!;
      });
    } catch (err) {
      if (uniqueViolation(err))
        throw conflict(`an artifact named "${name}" already exists in run ${job.runId}`);
      throw err;
    }
    await after?.();
    return { artifact, uploadUrl: this.signedUrl('upload', artifact.id, now + UPLOAD_URL_TTL) };
  }

  /**
   * FinalizeArtifact: the artifact becomes 'uploaded' and counts toward quota when its content
   * matches `size` and `hash`; otherwise it is discarded and the answer is ok=false. Finalizing
   * again with the same size and hash answers the same (a retried request).
   */
  async finalize(
    job: RuntimeTokenClaims,
    input: { name: string; size: bigint; hash?: string | undefined },
  ): Promise<{ ok: boolean; id: number }> {
    const name = checkName(input.name);
    if (input.size < 0n || input.size > BigInt(Number.MAX_SAFE_INTEGER))
      throw badRequest('size is out of range');
    const size = Number(input.size);
    const a = await store.getByRunAndName(this.db, job.runId, name);
    if (!a || a.expires_unix <= nowUnix())
      throw notFound(`artifact "${name}" does not exist in run ${job.runId}`);
    if (a.repo_id !== job.repoId) throw notFound(`artifact "${name}" does not exist in run ${job.runId}`);
    if (a.job_id !== job.jobId)
      throw forbidden(`artifact "${name}" was created by job ${a.job_id}, not this one`);
    const matches = a.storage_key !== '' && a.size === size && hashMatches(input.hash, a.sha256);
    if (a.status === 'uploaded') {
      if (matches) return { ok: true, id: a.id };
      throw conflict(`artifact "${name}" is already finalized with another size or hash`);
    }
    if (!matches) {
      const after = await transaction(this.db, async (tx) => {
        const current = await store.getById(tx, a.id);
        return current && current.status === 'pending' ? this.deleteInTx(tx, [current]) : undefined;
      });
      await after?.();
      this.deps.log.info(
        {
          artifactId: a.id,
          runId: a.run_id,
          expected: { size, hash: input.hash },
          got: { size: a.size, sha256: a.sha256 },
        },
        'artifact content does not match its finalization: discarded',
      );
      return { ok: false, id: a.id };
    }
    const done = await transaction(this.db, async (tx) => {
      const repo = await repoStore.getById(tx, a.repo_id);
      if (!repo) throw notFound(`repository does not exist [id: ${a.repo_id}]`);
      // Only the content that was compared: a concurrent upload would have changed the key.
      if (!(await store.markUploaded(tx, a.id, a.storage_key, nowUnix()))) return false;
      await recordUsage(tx, repo.owner_id, SUBJECT, a.size);
      return true;
    });
    if (!done) {
      throw new ArtifactError('conflict', `artifact "${name}" changed while being finalized; try again`, {
        twirp: 'aborted',
      });
    }
    return { ok: true, id: a.id };
  }

  /** ListArtifacts: the run's finalized artifacts that have not expired, optionally by name or id. */
  async listOfRun(
    job: RuntimeTokenClaims,
    filter: { name?: string | undefined; id?: bigint | undefined },
  ): Promise<ArtifactRow[]> {
    if (filter.id !== undefined && (filter.id <= 0n || filter.id > BigInt(Number.MAX_SAFE_INTEGER)))
      return [];
    const rows = await store.uploadedOfRun(this.db, job.runId, {
      name: filter.name,
      id: filter.id === undefined ? undefined : Number(filter.id),
    });
    const now = nowUnix();
    return rows.filter((a) => a.repo_id === job.repoId && a.expires_unix > now);
  }

  /** GetSignedArtifactURL: a download URL of the run's finalized artifact `name`. */
  async downloadUrlOf(job: RuntimeTokenClaims, name: string): Promise<string> {
    const a = await this.requireOfRun(job, name);
    return this.downloadUrlFor(a);
  }

  /**
   * A download URL of a finalized artifact (the REST /zip redirect): a presigned URL of the
   * store when [actions.artifacts] SERVE_DIRECT is on (S3), else Anvil's own signed URL.
   */
  async downloadUrlFor(a: ArtifactRow): Promise<string> {
    const direct = await this.deps.blobs.directUrl?.(a.storage_key, {
      filename: `${a.name}.zip`,
      contentType: 'application/zip',
    });
    return direct ?? this.signedUrl('download', a.id, nowUnix() + DOWNLOAD_URL_TTL);
  }

  /** DeleteArtifact: removes the run's finalized artifact `name`; its id. */
  async deleteOfRun(job: RuntimeTokenClaims, name: string): Promise<number> {
    const a = await this.requireOfRun(job, name);
    await this.delete(a);
    return a.id;
  }

  private async requireOfRun(job: RuntimeTokenClaims, name: string): Promise<ArtifactRow> {
    const [a] = await this.listOfRun(job, { name: checkName(name) });
    if (!a) throw notFound(`artifact "${name}" does not exist in run ${job.runId}`);
    return a;
  }

  private async requireJobRepo(job: RuntimeTokenClaims): Promise<RepoRow> {
    const repo = await repoStore.getById(this.db, job.repoId);
    if (!repo) throw notFound(`the repository of this job does not exist anymore [id: ${job.repoId}]`);
    return repo;
  }

  // Signed URLs

  signedUrl(purpose: UrlPurpose, artifactId: number, expires: number): string {
    return `${this.deps.rootUrl}${this.signer.path(purpose, artifactId, expires)}`;
  }

  // The REST view

  listOfRepo(
    repo: RepoRow,
    filter: { name?: string | undefined; runId?: number | undefined },
    limit: number,
    offset: number,
  ) {
    return store.uploadedOfRepo(this.db, repo.id, filter, limit, offset);
  }

  async requireOfRepo(repo: RepoRow, id: number): Promise<ArtifactRow> {
    const a = Number.isSafeInteger(id) && id > 0 ? await store.getById(this.db, id) : undefined;
    if (!a || a.repo_id !== repo.id || a.status !== 'uploaded')
      throw notFound(`artifact does not exist [id: ${id}]`);
    return a;
  }

  /** Run numbers and head commits of the artifacts' runs, from the actions domain. */
  async runsOf(rows: ArtifactRow[]): Promise<Map<number, RunInfo>> {
    if (rows.length === 0) return new Map();
    return this.deps.runs.runs([...new Set(rows.map((a) => a.run_id))]);
  }

  /** Deletes an artifact: row, blocks and blob, and its usage when it was counted. */
  async delete(a: ArtifactRow): Promise<void> {
    const after = await transaction(this.db, async (tx) => {
      const current = await store.getById(tx, a.id);
      return current ? this.deleteInTx(tx, [current]) : undefined;
    });
    await after?.();
  }

  /**
   * Deletes artifact rows inside `tx`, subtracting the finalized ones' sizes from the current
   * owner of each one's repository; returns the removal of their files, to run once committed.
   */
  async deleteInTx(tx: Tx, rows: ArtifactRow[]): Promise<AfterCommit> {
    if (rows.length === 0) return async () => undefined;
    const ids = rows.map((a) => a.id);
    const repos = await repoStore.getByIds(tx, [...new Set(rows.map((a) => a.repo_id))]);
    const usage = new Map<number, number>();
    for (const a of rows) {
      const repo = repos.get(a.repo_id);
      if (!repo || a.status !== 'uploaded' || !a.size) continue;
      usage.set(repo.owner_id, (usage.get(repo.owner_id) ?? 0) + Number(a.size));
    }
    const keys = rows.map((a) => a.storage_key).filter(Boolean);
    keys.push(...(await store.blocksOf(tx, ids)).map((b) => b.storage_key));
    await store.removeByIds(tx, ids);
    for (const [ownerId, bytes] of usage) await recordUsage(tx, ownerId, SUBJECT, -bytes);
    return () => removeFiles(this.deps.blobs, this.deps.log, keys);
  }

  // Retention

  /** Starts the retention job (anvil web only): expired and abandoned artifacts are removed hourly. */
  start(): void {
    if (this.timers.length || !this.enabled) return;
    this.stopped = false;
    const tick = () =>
      void this.deps.cron
        // One process of several runs it per period (cluster/service.ts).
        .track(
          'cleanup_actions',
          this.deps.cluster.once('cleanup_actions', SWEEP_MS, () => this.sweep()),
        )
        .catch((err: unknown) => this.deps.log.error({ err }, 'artifact retention failed'));
    this.timers = [setInterval(tick, SWEEP_MS), setTimeout(tick, SWEEP_FIRST_MS)];
    for (const t of this.timers) t.unref();
  }

  /** Stops the retention job and waits (a bounded time) for a run under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    if (!this.sweeping) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.sweeping.catch(() => 0),
      new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Removes the artifacts that expired by `now` and those left pending for more than a day, with
   * their files and usage; the number removed. The retention job's work, callable directly.
   */
  sweep(now = nowUnix()): Promise<number> {
    this.sweeping ??= (async () => {
      let removed = 0;
      try {
        for (;;) {
          const rows = await store.due(this.db, now, now - STALE_PENDING, SWEEP_BATCH);
          if (rows.length === 0) break;
          // Read again inside the transaction: one may have been finalized or removed meanwhile.
          const after = await transaction(this.db, async (tx) => {
            const current = await store.getByIds(
              tx,
              rows.map((a) => a.id),
            );
            const stillDue = current.filter(
              (a) =>
                a.expires_unix <= now || (a.status === 'pending' && a.created_unix < now - STALE_PENDING),
            );
            return this.deleteInTx(tx, stillDue);
          });
          await after();
          removed += rows.length;
          if (this.stopped) break;
        }
      } finally {
        this.sweeping = undefined;
      }
      if (removed) this.deps.log.info({ removed }, 'expired artifacts removed');
      return removed;
    })();
    return this.sweeping;
  }

  // What the repository's life means for artifacts

  private async beforeRepoDelete(tx: Tx, repo: RepoRow): Promise<AfterCommit | void> {
    const rows = await store.ofRepo(tx, repo.id);
    if (rows.length) return this.deleteInTx(tx, rows);
  }

  private async onRepoTransfer(tx: Tx, repo: RepoRow, newOwnerId: number): Promise<void> {
    const bytes = await store.uploadedSizeOfRepo(tx, repo.id);
    if (!bytes) return;
    await recordUsage(tx, repo.owner_id, SUBJECT, -bytes);
    await recordUsage(tx, newOwnerId, SUBJECT, bytes);
  }

  // Quota

  /**
   * Artifact sizes for quota recalculation: the finalized artifacts of each owner's repositories,
   * each row's size checked against its content's (a row whose content is missing is left alone).
   */
  usageSource(): UsageSource {
    return {
      subjects: [SUBJECT],
      measure: (db, ownerId) =>
        measureRows({
          kind: 'artifact',
          db,
          table: 'action_artifact',
          page: (after, limit) => store.uploadedPage(db, after, limit, ownerId),
          measure: async (r) => (await this.deps.blobs.stat(r.storage_key))?.size,
          name: (r) => `${r.owner_name}/${r.repo_name} artifact ${r.id} (${r.name})`,
        }),
      totals: async (q, ownerId) => {
        const out: OwnerTotals = new Map();
        for (const r of await store.ownerTotals(q, ownerId)) out.set(r.owner_id, { [SUBJECT]: r.total });
        return out;
      },
    };
  }

  /** /user/quota/artifacts and /orgs/{org}/quota/artifacts: what counts against the owner. */
  itemSource(): ItemSource<QuotaUsedArtifactJson> {
    return {
      list: async (q, ownerId, limit, offset, bySize) => {
        const [rows, total] = await store.quotaItems(q, ownerId, limit, offset, bySize);
        const runs = await this.runsOf(rows);
        const root = this.deps.rootUrl;
        return [
          rows.map((r) => ({
            name: r.name,
            size: Number(r.size),
            html_url: `${root}${encodeURIComponent(r.owner_name)}/${encodeURIComponent(r.repo_name)}/actions/runs/${runs.get(r.run_id)?.index ?? r.run_id}`,
          })),
          total,
        ];
      },
    };
  }
}

// Helpers

function checkName(name: string): string {
  if (!name) throw badRequest('name is required');
  if (name.length > MAX_NAME) throw badRequest(`name is longer than ${MAX_NAME} characters`);
  if (BAD_NAME.test(name) || name.trim() !== name) {
    throw badRequest(
      `name "${clip(name)}" is not a valid artifact name: no ", :, <, >, |, *, ?, \\, /, control characters, or spaces at either end`,
    );
  }
  return name;
}

function hashMatches(given: string | undefined, sha256: string): boolean {
  if (given === undefined) return true;
  const m = /^sha256:([0-9a-fA-F]{64})$/.exec(given.trim());
  if (!m || !sha256) return false;
  return crypto.timingSafeEqual(Buffer.from(m[1]!.toLowerCase()), Buffer.from(sha256));
}
