// Actions artifacts: the v4 artifact service's operations (behind the job's runtime token), the
// content behind signed URLs, the REST view, quota accounting and retention.
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
import { Readable } from 'node:stream';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { AppContext } from '../app/context.js';
import { verifyRuntimeToken, RuntimeTokenError, type RuntimeTokenClaims } from '../actions/runtime-token.js';
import { nowUnix, transaction, type Tx } from '../db/database.js';
import {
  AppError,
  badRequest,
  conflict,
  forbidden,
  notFound,
  unauthorized,
  type ErrorKind,
} from '../errors.js';
import type { QuotaUsedArtifactJson } from '../quota/schemas.js';
import {
  measureRows,
  recordUsage,
  type ItemSource,
  type OwnerTotals,
  type UsageSource,
} from '../quota/usage.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import type { AfterCommit } from '../users/owned.js';
import { hashInto, sha256Passing } from '../storage/storage.js';
import { UrlSigner, type UrlPurpose } from './signed-url.js';
import { UploadHashes } from './upload-hash.js';
import * as store from './store.js';
import type { ArtifactRow } from './tables.js';
import { faultPoint } from '../faults.js';

export type { ArtifactRow } from './tables.js';

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
/** Largest block list body (Azure allows 50,000 blocks of ids up to 64 bytes). */
const MAX_BLOCK_LIST_BYTES = 8 * 1024 * 1024;
const MAX_BLOCKS = 50_000;
/** Azure block ids: base64 of at most 64 bytes. */
const BLOCK_ID = /^[A-Za-z0-9+/=_-]{1,100}$/;
/** Longest artifact name, and the characters @actions/artifact itself refuses in one. */
const MAX_NAME = 255;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const BAD_NAME = /["<>|*?:\\/\x00-\x1f\x7f]/;
const DECIMAL_ID = /^[1-9]\d{0,15}$/;

/** What the actions domain may tell about runs, for the REST view and quota links. */
export interface RunInfo {
  /** The run's number within its repository (its web URL); the run id when absent. */
  index?: number;
  headSha?: string;
}
export interface RunSource {
  runs(ids: number[]): Promise<Map<number, RunInfo>>;
}

/**
 * An AppError that also names the code to answer with where the protocol has its own codes:
 * Twirp's (`twirp`, instead of the one its kind maps to) or Azure Blob's (`azure`, in
 * x-ms-error-code on the signed URLs).
 */
export class ArtifactError extends AppError {
  constructor(
    kind: ErrorKind,
    message: string,
    readonly codes: { twirp?: string; azure?: string },
  ) {
    super(kind, message);
  }
}

const blobKey = (artifactId: number) => `blobs/${artifactId}-${crypto.randomUUID()}.zip`;
const blockKey = (artifactId: number, blockId: string) =>
  `blocks/${artifactId}-${crypto.createHash('sha256').update(blockId).digest('hex')}`;

export class ArtifactService {
  private signerInstance: UrlSigner | undefined;
  private runSource: RunSource | undefined;
  private timers: NodeJS.Timeout[] = [];
  private sweeping: Promise<number> | undefined;
  private stopped = false;
  private readonly hashes: UploadHashes;

  constructor(private readonly ctx: AppContext) {
    this.hashes = new UploadHashes((key) => ctx.storage.artifacts.open(key));
    ctx.contributions.usageSources.push(this.usageSource());
    ctx.contributions.quotaItems.artifacts = this.itemSource();
    // Contents (`blobs/`, plain or composed) and blocks of uploads (`blocks/`).
    ctx.contributions.blobReferences.push({
      label: 'artifacts',
      store: 'artifacts',
      prefix: '',
      referenced: (keys) => store.referencedKeys(ctx.db, keys),
    });
    ctx.repos.addHooks({
      beforeDelete: (tx, repo) => this.beforeRepoDelete(tx, repo),
      onTransfer: (tx, repo, newOwnerId) => this.onRepoTransfer(tx, repo, newOwnerId),
    });
  }

  private get db() {
    return this.ctx.db;
  }

  private get signer(): UrlSigner {
    return (this.signerInstance ??= new UrlSigner(this.ctx.config.security.secretKey));
  }

  /** For the actions domain: run numbers and head commits for the REST view and quota links. */
  setRunSource(source: RunSource): void {
    this.runSource = source;
  }

  get enabled(): boolean {
    return this.ctx.config.actions.enabled;
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
      return verifyRuntimeToken(this.ctx.config.security.secretKey, m[1]!);
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
    const longest = now + this.ctx.config.actions.artifactRetentionDays * 86400;
    let expires = longest;
    if (input.expiresAt !== undefined) {
      if (input.expiresAt <= now) throw badRequest('expires_at is in the past');
      expires = Math.min(Math.floor(input.expiresAt), longest);
    }
    const repo = await this.requireJobRepo(job);
    if (!(await this.ctx.quota.check(repo.owner_id, SUBJECT))) {
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
      if (isUniqueViolation(err))
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
      this.ctx.log.info(
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
    const direct = await this.ctx.storage.artifacts.directUrl?.(a.storage_key, {
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

  // Signed URLs and the content behind them

  signedUrl(purpose: UrlPurpose, artifactId: number, expires: number): string {
    return `${this.ctx.config.server.rootUrl}${this.signer.path(purpose, artifactId, expires)}`;
  }

  /**
   * The artifact a signed URL is for, after checking its signature (401 when missing or wrong,
   * 403 when expired) and that the artifact can take this request: uploads go to a pending
   * artifact (409 once finalized), downloads come from a finalized one that has not expired.
   */
  async requireSigned(
    purpose: UrlPurpose,
    idText: string,
    query: Record<string, unknown>,
  ): Promise<ArtifactRow> {
    const id = DECIMAL_ID.test(idText) ? Number(idText) : 0;
    const check = id ? this.signer.check(purpose, id, query['expires'], query['sig'], nowUnix()) : 'invalid';
    if (check === 'invalid') throw unauthorized('the signature of this URL is missing or does not match');
    if (check === 'expired') throw forbidden('this URL has expired');
    const a = await store.getById(this.db, id);
    if (!a) throw notFound(`artifact does not exist [id: ${id}]`);
    if (purpose === 'upload' && a.status !== 'pending') throw conflict('the artifact is already finalized');
    if (purpose === 'download' && (a.status !== 'uploaded' || a.expires_unix <= nowUnix())) {
      throw notFound(`artifact does not exist [id: ${id}]`);
    }
    return a;
  }

  /**
   * A plain PUT: the whole content at once, replacing whatever was uploaded before. `length`: the
   * body's declared length, when it has one.
   */
  async putContent(
    a: ArtifactRow,
    body: Readable,
    length?: number,
  ): Promise<{ size: number; sha256: string }> {
    const key = blobKey(a.id);
    const stored = await this.storeHashed(key, body, length);
    await this.adoptContent(a.id, key, stored);
    return stored;
  }

  /** Stores `data` under `key`, computing the SHA-256 that finalize checks on the way. */
  private async storeHashed(
    key: string,
    data: Readable,
    length?: number,
  ): Promise<{ size: number; sha256: string }> {
    const hashed = sha256Passing();
    data.on('error', (err) => hashed.destroy(err));
    const { size } = await this.ctx.storage.artifacts.put(key, data.pipe(hashed), { size: length });
    return { size, sha256: hashed.digest() };
  }

  /** `comp=block`: one block, stored as it arrives under a key derived from the artifact and block id. */
  async putBlock(
    a: ArtifactRow,
    blockId: string,
    body: Readable,
    length?: number,
  ): Promise<{ size: number }> {
    if (!BLOCK_ID.test(blockId)) throw badRequest('blockid must be a base64 string of at most 64 bytes');
    const key = blockKey(a.id, blockId);
    this.hashes.begin(a.id, blockId);
    let size: number;
    try {
      ({ size } = await this.ctx.storage.artifacts.put(key, body, { size: length }));
    } catch (err) {
      this.hashes.stored(a.id, blockId);
      throw err;
    }
    try {
      const now = nowUnix();
      await store.upsertBlock(this.db, {
        artifact_id: a.id,
        block_id: blockId,
        storage_key: key,
        size,
        created_unix: now,
      });
    } catch (err) {
      // The artifact went away meanwhile (its row's foreign key refuses the block).
      this.hashes.forget(a.id);
      await this.removeKeys([key]);
      if (isForeignKeyViolation(err)) throw notFound(`artifact does not exist [id: ${a.id}]`);
      throw err;
    }
    this.hashes.stored(a.id, blockId, key);
    return { size };
  }

  /**
   * `comp=blocklist`: the XML list of block ids (`<BlockList><Latest>id</Latest>...</BlockList>`,
   * `Committed` and `Uncommitted` taken alike) becomes the content: the storage composes it from
   * the listed blocks (moved, not copied); its SHA-256 was mostly computed as the blocks came, or
   * is read now. Then every other block of the artifact is removed (as Azure discards uncommitted
   * blocks).
   */
  async commitBlocks(a: ArtifactRow, body: Readable): Promise<{ size: number; sha256: string }> {
    const ids = parseBlockList(await readLimited(body, MAX_BLOCK_LIST_BYTES));
    const blocks = new Map((await store.blocksOf(this.db, [a.id])).map((b) => [b.block_id, b]));
    const missing = ids.find((id) => !blocks.has(id));
    if (missing !== undefined) {
      throw new ArtifactError(
        'bad_request',
        `the block list names a block that was not uploaded [blockid: ${clip(missing)}]`,
        { azure: 'InvalidBlockList' },
      );
    }
    const storage = this.ctx.storage.artifacts;
    // Usually hashed already, as the blocks came (upload-hash.ts); read otherwise.
    const early = await this.hashes.digest(a.id, ids);
    const key = blobKey(a.id);
    const { size } = await storage.compose(
      key,
      ids.map((id) => blocks.get(id)!.storage_key),
    );
    faultPoint('artifact:composed');
    let stored: { size: number; sha256: string };
    try {
      let sha256 = early;
      if (sha256 === undefined) {
        const hash = crypto.createHash('sha256');
        await hashInto(hash, await storage.open(key));
        sha256 = hash.digest('hex');
      }
      stored = { size, sha256 };
    } catch (err) {
      await this.removeKeys([key]);
      throw err;
    }
    await this.adoptContent(a.id, key, stored);
    await store.removeBlocks(this.db, a.id, [...blocks.keys()]);
    await this.removeKeys([...blocks.values()].map((b) => b.storage_key));
    return stored;
  }

  /** Makes a freshly written blob the artifact's content (dropping the previous one), if still pending. */
  private async adoptContent(
    id: number,
    key: string,
    stored: { size: number; sha256: string },
  ): Promise<void> {
    const previous = await transaction(this.db, async (tx) => {
      const a = await store.getById(tx, id);
      if (!a || a.status !== 'pending') return undefined;
      return (await store.setContent(tx, id, a.storage_key, { ...stored, storageKey: key }, nowUnix()))
        ? a.storage_key
        : undefined;
    });
    if (previous === undefined) {
      await this.removeKeys([key]);
      throw conflict('the artifact was finalized or removed during the upload');
    }
    if (previous) await this.removeKeys([previous]);
  }

  open(a: ArtifactRow, range?: { start: number; end: number }): Promise<Readable> {
    return this.ctx.storage.artifacts.open(a.storage_key, range);
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

  /** Run numbers and head commits of the artifacts' runs, from the actions domain (when it tells). */
  async runsOf(rows: ArtifactRow[]): Promise<Map<number, RunInfo>> {
    const actions = this.ctx.actions as Partial<RunSource> | undefined;
    const source =
      this.runSource ?? (typeof actions?.runs === 'function' ? (actions as RunSource) : undefined);
    if (!source || rows.length === 0) return new Map();
    return source.runs([...new Set(rows.map((a) => a.run_id))]);
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
    return () => this.removeKeys(keys);
  }

  private async removeKeys(keys: string[]): Promise<void> {
    for (const key of keys) {
      try {
        await this.ctx.storage.artifacts.delete(key);
      } catch (err) {
        this.ctx.log.error({ err, key }, 'removing an artifact file failed');
      }
    }
  }

  // Retention

  /** Starts the retention job (anvil web only): expired and abandoned artifacts are removed hourly. */
  start(): void {
    if (this.timers.length || !this.enabled) return;
    this.stopped = false;
    const tick = () =>
      void this.ctx.cron
        // One process of several runs it per period (cluster/service.ts).
        .track(
          'cleanup_actions',
          this.ctx.cluster.once('cleanup_actions', SWEEP_MS, () => this.sweep()),
        )
        .catch((err: unknown) => this.ctx.log.error({ err }, 'artifact retention failed'));
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
      if (removed) this.ctx.log.info({ removed }, 'expired artifacts removed');
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
          measure: async (r) => (await this.ctx.storage.artifacts.stat(r.storage_key))?.size,
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
      list: async (q, ownerId, limit, offset) => {
        const [rows, total] = await store.quotaItems(q, ownerId, limit, offset);
        const runs = await this.runsOf(rows);
        const root = this.ctx.config.server.rootUrl;
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

function clip(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}...` : s;
}

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

async function readLimited(body: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max) throw new AppError('payload_too_large', `the block list is larger than ${max} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const xml = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  parseTagValue: false,
  processEntities: false,
  trimValues: true,
});

/** The block ids of an Azure Put Block List body, in order; 400 when it is not one. */
export function parseBlockList(text: string): string[] {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badRequest('the block list must not contain a DOCTYPE');
  if (XMLValidator.validate(text) !== true) throw badRequest('the block list is not well-formed XML');
  const doc = xml.parse(text) as Array<Record<string, unknown>>;
  const root = doc.find((n) => 'BlockList' in n);
  if (!root) throw badRequest('the block list must be a <BlockList> element');
  const ids: string[] = [];
  for (const entry of root['BlockList'] as Array<Record<string, unknown>>) {
    const tag = Object.keys(entry).find((k) => k !== ':@');
    if (tag === '#text') continue;
    if (tag !== 'Latest' && tag !== 'Committed' && tag !== 'Uncommitted') {
      throw badRequest(`unexpected element <${clip(tag ?? '')}> in the block list`);
    }
    const content = entry[tag] as Array<Record<string, unknown>>;
    const id =
      content.length === 1 && typeof content[0]!['#text'] === 'string'
        ? (content[0]!['#text'] as string)
        : '';
    if (!BLOCK_ID.test(id))
      throw badRequest('a block id in the block list is not a base64 string of at most 64 bytes');
    ids.push(id);
  }
  if (ids.length > MAX_BLOCKS) throw badRequest(`the block list has more than ${MAX_BLOCKS} blocks`);
  return ids;
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
