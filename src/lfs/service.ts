// Git LFS: which objects a repository holds (blobs in `storage.lfs`, shared by oid across
// repositories), uploads verified against their oid and size, quota usage of the repository's
// owner, and file locks. Repository deletion, transfer and forks carry LFS data along.
import crypto from 'node:crypto';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import { AppError, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import { AccessMode } from '../orgs/tables.js';
import { measureRows, recordUsage, type OwnerTotals, type UsageSource } from '../quota/usage.js';
import type { QuotaService } from '../quota/service.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import type { AfterCommit } from '../users/owned.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { LockRow, MetaRow } from './tables.js';
import { faultPoint } from '../faults.js';
import { drained, type BlobStore } from '../storage/storage.js';
import type { BlobReferences } from '../storage/sweep.js';

const SUBJECT = 'size:git:lfs';
const OID = /^[0-9a-f]{64}$/;

export type Operation = 'upload' | 'download';

export interface BatchObject {
  oid: string;
  size: number;
}

/** What the client is to do with one object of a batch. */
export type BatchResult =
  | { oid: string; size: number; action: 'upload' | 'download' | 'none'; href?: string }
  | { oid: string; size: number; error: { code: number; message: string } };

/** Limits of a page of locks. */
export const LOCK_PAGE = { default: 100, max: 100 } as const;

export interface LockPage {
  locks: LockRow[];
  /** The cursor of the next page, when there is one. */
  next?: string;
}

/** Where an object's blob lives: spread over two directory levels by its first hex digits. */
export function blobKey(oid: string): string {
  return `${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
}

export function isOid(oid: string): boolean {
  return OID.test(oid);
}

/**
 * A lock's path relative to the repository's root, normalized: forward slashes, no leading
 * slash, no `.` or `..` segments. Anything that leaves the root or names nothing is a 422.
 */
export function normalizeLockPath(p: string, field = 'path'): string {
  // eslint-disable-next-line no-control-regex -- control characters are never part of a file name here
  if (/[\x00-\x1f\x7f]/.test(p)) throw invalidField(field, 'must not contain control characters');
  const n = path.posix.normalize(p.replace(/\\/g, '/')).replace(/^\/+/, '').replace(/\/+$/, '');
  if (!n || n === '.' || n === '..' || n.startsWith('../')) {
    throw invalidField(field, `invalid path [path: ${p}]`);
  }
  if (n.length > 4096) throw invalidField(field, 'must be at most 4096 characters');
  return n;
}

/**
 * Passes bytes through while checking them against the oid and the announced size. The last chunk
 * is held back until the whole body is checked: a store writing in one request of the announced
 * length (S3's PutObject) never receives every byte of a body that fails, so it keeps nothing.
 */
function verifying(oid: string, expected: number | undefined): Transform {
  const hash = crypto.createHash('sha256');
  let size = 0;
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (chunk.length === 0) return done();
      size += chunk.length;
      if (expected !== undefined && size > expected) {
        done(invalid(`the content is larger than the announced size of ${expected} bytes`));
        return;
      }
      hash.update(chunk);
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done) {
      if (expected !== undefined && size !== expected) {
        done(invalid(`the content is ${size} bytes, not the announced ${expected}`));
        return;
      }
      const digest = hash.digest('hex');
      if (digest !== oid) {
        done(invalid(`the content's SHA-256 ${digest} does not match the oid ${oid}`));
        return;
      }
      done(null, held);
    },
  });
}

export interface LfsServiceDeps {
  db: Db;
  log: Logger;
  events: EventBus;
  blobs: BlobStore;
  quota: Pick<QuotaService, 'check'>;
  repos: Pick<RepoService, 'addHooks' | 'getById'>;
  /** Quota recalculation's sources (LFS sizes are added). */
  usageSources: UsageSource[];
  /** The sweep's blob references (LFS objects are added). */
  blobReferences: BlobReferences[];
}

export class LfsService {
  private readonly db: Db;
  /** The LFS blob store (`[lfs]` storage). */
  private readonly blobs: BlobStore;

  constructor(private readonly deps: LfsServiceDeps) {
    this.db = deps.db;
    this.blobs = deps.blobs;
    deps.usageSources.push(this.usageSource());
    deps.blobReferences.push({
      label: 'LFS objects',
      store: 'lfs',
      prefix: '',
      referenced: async (keys) => {
        // A key not named like an object's blob is referenced by nothing.
        const byOid = new Map<string, string>();
        for (const key of keys) {
          const oid = key.slice(key.lastIndexOf('/') + 1);
          if (isOid(oid) && blobKey(oid) === key) byOid.set(oid, key);
        }
        const held = await store.referencedOids(this.db, [...byOid.keys()]);
        return new Set([...held].map((oid) => byOid.get(oid)!));
      },
    });
    deps.repos.addHooks({
      beforeDelete: (tx, repo) => this.beforeRepoDelete(tx, repo),
      onTransfer: (tx, repo, newOwnerId) => this.onRepoTransfer(tx, repo, newOwnerId),
    });
    // A fork shares its parent's objects, as in Forgejo: the fork's owner is charged for them.
    deps.events.on('repository.created', ({ repoId }) => this.copyFromParent(repoId));
  }

  // Batch API

  /**
   * What to do with each object of a batch: uploads for objects this repository does not hold
   * yet, downloads for objects it holds; per-object errors for bad oids or sizes and unknown
   * objects. Uploading needs the owner to be within quota (413 otherwise).
   */
  /** The LFS size of each of `repoIds` (those with no object left out). */
  sizesOf(repoIds: number[]): Promise<Map<number, number>> {
    return store.sizesOfRepos(this.db, repoIds);
  }

  async batch(repo: RepoRow, operation: Operation, objects: BatchObject[]): Promise<BatchResult[]> {
    if (operation === 'upload') await this.requireQuota(repo);
    const valid = objects.filter((o) => isOid(o.oid) && Number.isSafeInteger(o.size) && o.size >= 0);
    const held = await store.metaByOids(
      this.db,
      repo.id,
      valid.map((o) => o.oid),
    );
    // A row without its blob (lost storage) counts as absent: uploading it again repairs it.
    const present = new Set<string>();
    await Promise.all(
      [...held.values()].map(async (m) => {
        if (await this.blobs.stat(blobKey(m.oid))) present.add(m.oid);
      }),
    );
    // [lfs] SERVE_DIRECT: downloads point straight at presigned URLs of the store.
    const direct = new Map<string, string>();
    if (operation === 'download') {
      for (const oid of present) {
        const url = await this.directUrl(oid);
        if (url) direct.set(oid, url);
      }
    }
    return objects.map((o): BatchResult => {
      if (!isOid(o.oid) || !Number.isSafeInteger(o.size) || o.size < 0) {
        return { oid: o.oid, size: o.size, error: { code: 422, message: 'Oid or size are invalid' } };
      }
      const meta = held.get(o.oid);
      if (operation === 'upload') {
        if (meta && present.has(o.oid)) {
          if (meta.size !== o.size) return sizeMismatch(o, meta);
          return { ...o, action: 'none' };
        }
        return { ...o, action: 'upload' };
      }
      if (!meta || !present.has(o.oid)) {
        return { ...o, error: { code: 404, message: `Object ${o.oid} does not exist` } };
      }
      if (meta.size !== o.size) return sizeMismatch(o, meta);
      return { ...o, action: 'download', ...(direct.get(o.oid) ? { href: direct.get(o.oid) } : {}) };
    });
  }

  private async requireQuota(repo: RepoRow): Promise<void> {
    if (!(await this.deps.quota.check(repo.owner_id, SUBJECT))) {
      throw new AppError('payload_too_large', 'quota exceeded');
    }
  }

  // Basic transfers

  /**
   * Stores an uploaded object: streamed into storage while its SHA-256 and size are checked
   * (422 and nothing kept on a mismatch), then recorded for the repository and counted against
   * its owner in one transaction. `announced` is the size the client declared, when it did.
   */
  async upload(repo: RepoRow, oid: string, announced: number | undefined, body: Readable): Promise<void> {
    if (!isOid(oid)) throw invalid(`invalid oid [oid: ${oid}]`);
    if (announced !== undefined && (!Number.isSafeInteger(announced) || announced < 0)) {
      throw invalid(`invalid size [size: ${announced}]`);
    }
    await this.requireQuota(repo);
    // Objects are stored by content: one already stored (written whole and checked, by this
    // repository or another) is not written again; the upload is still read and checked.
    const key = blobKey(oid);
    const stored = announced === undefined ? undefined : await this.blobs.stat(key);
    const checked = verifying(oid, announced);
    // A failing request stream (a client going away) fails the store's write through `checked`;
    // a failed check leaves the rest of the request to be read and dropped, so the answer (422)
    // still reaches the client.
    body.on('error', (err) => checked.destroy(err));
    checked.on('error', () => {
      body.unpipe(checked);
      body.resume();
    });
    body.pipe(checked);
    const { size } =
      stored && stored.size === announced
        ? { size: await drained(checked) }
        : await this.blobs.put(key, checked, { size: announced });
    faultPoint('lfs:stored');
    let recorded = false;
    try {
      await transaction(this.db, async (tx) => {
        // Read again inside the transaction: the repository may have moved or gone meanwhile.
        const current = await repoStore.getById(tx, repo.id);
        if (!current) throw notFound(`repository does not exist [id: ${repo.id}]`);
        const added = await store.insertMeta(tx, {
          oid,
          size,
          repository_id: repo.id,
          created_unix: nowUnix(),
        });
        if (added) await recordUsage(tx, current.owner_id, SUBJECT, size);
        recorded = true;
      });
    } finally {
      if (!recorded) await this.removeOrphans([oid]);
    }
  }

  /** The object `oid` of the repository (404 when it does not hold it). */
  async object(repo: RepoRow, oid: string): Promise<MetaRow> {
    const meta = isOid(oid) ? await store.getMeta(this.db, repo.id, oid) : undefined;
    if (!meta) throw notFound(`Object ${oid} does not exist`);
    return meta;
  }

  /** A presigned URL of the object when the LFS store serves downloads directly (SERVE_DIRECT). */
  async directUrl(oid: string): Promise<string | undefined> {
    return this.blobs.directUrl?.(blobKey(oid));
  }

  /** A stream of the object's bytes, or of the range `start`..`end` (inclusive). */
  open(meta: MetaRow, range?: { start: number; end: number }): Promise<Readable> {
    return this.blobs.open(blobKey(meta.oid), range);
  }

  /** Checks an uploaded object is there with the given size: 404 when not, 422 for another size. */
  async verify(repo: RepoRow, oid: string, size: number): Promise<void> {
    if (!isOid(oid) || !Number.isSafeInteger(size) || size < 0) throw invalid('Oid or size are invalid');
    const meta = await store.getMeta(this.db, repo.id, oid);
    const stored = meta && (await this.blobs.stat(blobKey(oid)));
    if (!meta || !stored) throw notFound(`Object ${oid} does not exist`);
    if (meta.size !== size || stored.size !== size) {
      throw invalid(`Object ${oid} is ${meta.size} bytes, not ${size}`);
    }
  }

  /** A page of the repository's objects (the LFS settings page). */
  listObjects(repo: RepoRow, limit: number, offset: number): Promise<[MetaRow[], number]> {
    return store.listMetaOfRepo(this.db, repo.id, limit, offset);
  }

  /** Removes an object from the repository (its blob too once no repository holds it). */
  async deleteObject(repo: RepoRow, oid: string): Promise<void> {
    const meta = /^[0-9a-f]{64}$/.test(oid) ? await store.getMeta(this.db, repo.id, oid) : undefined;
    if (!meta) throw notFound(`LFS object does not exist [oid: ${oid}]`);
    await transaction(this.db, async (tx) => {
      const current = await repoStore.getById(tx, repo.id);
      if (!current) throw notFound(`repository does not exist [id: ${repo.id}]`);
      if (await store.deleteMeta(tx, repo.id, oid)) {
        await recordUsage(tx, current.owner_id, SUBJECT, -Number(meta.size));
      }
    });
    await this.removeOrphans([oid]);
  }

  // Locks

  /** Locks `path` for `user`; `created` is false (and `lock` the existing one) when already locked. */
  async createLock(
    repo: RepoRow,
    user: UserRow,
    rawPath: string,
  ): Promise<{ lock: LockRow; created: boolean }> {
    const p = normalizeLockPath(rawPath);
    const id = await store.insertLock(this.db, {
      repo_id: repo.id,
      owner_id: user.id,
      path: p,
      created_unix: nowUnix(),
    });
    if (id !== undefined) return { lock: (await store.getLock(this.db, repo.id, id))!, created: true };
    const existing = await store.getLockByPath(this.db, repo.id, p);
    // Unlocked again between the two statements: a rare race the client can simply retry.
    if (!existing) throw conflict('the lock changed meanwhile: try again');
    return { lock: existing, created: false };
  }

  /** A page of the repository's locks, filtered by path and id, from `cursor` on. */
  async listLocks(
    repo: RepoRow,
    f: {
      path?: string | undefined;
      id?: string | undefined;
      cursor?: string | undefined;
      limit?: number | undefined;
    },
  ): Promise<LockPage> {
    const limit = pageLimit(f.limit);
    const fromId = parseCursor(f.cursor);
    let id: number | undefined;
    if (f.id !== undefined && f.id !== '') {
      // Lock ids are numbers here: any other id matches no lock.
      if (!/^\d{1,15}$/.test(f.id)) return { locks: [] };
      id = Number(f.id);
    }
    const lockPath = f.path !== undefined && f.path !== '' ? normalizeLockPath(f.path) : undefined;
    const rows = await store.listLocks(this.db, repo.id, { path: lockPath, id, fromId }, limit + 1);
    return page(rows, limit);
  }

  /** The locks that matter to a push by `user`: theirs own and everybody else's. */
  async verifyLocks(
    repo: RepoRow,
    user: UserRow,
    cursor: string | undefined,
    limit: number | undefined,
  ): Promise<{ ours: LockRow[]; theirs: LockRow[]; next?: string }> {
    const n = pageLimit(limit);
    const rows = await store.listLocks(this.db, repo.id, { fromId: parseCursor(cursor) }, n + 1);
    const { locks, next } = page(rows, n);
    return {
      ours: locks.filter((l) => l.owner_id === user.id),
      theirs: locks.filter((l) => l.owner_id !== user.id),
      ...(next ? { next } : {}),
    };
  }

  /**
   * Removes a lock: its owner may; anyone else only with `force`, which takes administering the
   * repository (403 otherwise). 404 for a lock the repository does not have.
   */
  async unlock(
    repo: RepoRow,
    user: UserRow,
    access: RepoAccess,
    rawId: string,
    force: boolean,
  ): Promise<LockRow> {
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : undefined;
    const lock = id === undefined ? undefined : await store.getLock(this.db, repo.id, id);
    if (!lock) throw notFound(`lock does not exist [id: ${rawId}]`);
    if (lock.owner_id !== user.id) {
      if (!force)
        throw forbidden(`the lock belongs to ${lock.owner_name}: only its owner may remove it without force`);
      if (access.mode < AccessMode.admin) {
        throw forbidden("you need admin access to the repository to remove another user's lock");
      }
    }
    if (!(await store.deleteLock(this.db, repo.id, lock.id))) {
      throw notFound(`lock does not exist [id: ${rawId}]`);
    }
    return lock;
  }

  // What the repository's life means for LFS

  private async beforeRepoDelete(tx: Tx, repo: RepoRow): Promise<AfterCommit | void> {
    const objects = await store.metaOfRepo(tx, repo.id);
    if (objects.length === 0) return;
    const total = objects.reduce((sum, o) => sum + Number(o.size), 0);
    await store.deleteMetaOfRepo(tx, repo.id);
    await recordUsage(tx, repo.owner_id, SUBJECT, -total);
    const oids = objects.map((o) => o.oid);
    return () => this.removeOrphans(oids);
  }

  private async onRepoTransfer(tx: Tx, repo: RepoRow, newOwnerId: number): Promise<void> {
    const total = await store.sizeOfRepo(tx, repo.id);
    if (!total) return;
    await recordUsage(tx, repo.owner_id, SUBJECT, -total);
    await recordUsage(tx, newOwnerId, SUBJECT, total);
  }

  private async copyFromParent(repoId: number): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo?.fork_id) return;
    await transaction(this.db, async (tx) => {
      const before = await store.sizeOfRepo(tx, repo.id);
      await store.copyMeta(tx, repo.fork_id!, repo.id, nowUnix());
      const after = await store.sizeOfRepo(tx, repo.id);
      if (after !== before) await recordUsage(tx, repo.owner_id, SUBJECT, after - before);
    });
  }

  /** Deletes the blobs of `oids` that no repository holds any more. */
  private async removeOrphans(oids: string[]): Promise<void> {
    const referenced = await store.referencedOids(this.db, oids);
    for (const oid of new Set(oids)) {
      if (referenced.has(oid)) continue;
      try {
        await this.blobs.delete(blobKey(oid));
      } catch (err) {
        this.deps.log.error({ err, oid }, 'removing an LFS blob failed');
      }
    }
  }

  /**
   * LFS sizes for quota recalculation: the objects of each owner's repositories, each row's size
   * checked against its blob's (a row whose blob is missing is left alone).
   */
  usageSource(): UsageSource {
    return {
      subjects: [SUBJECT],
      measure: (db, ownerId) =>
        measureRows({
          kind: 'lfs',
          db,
          table: 'lfs_meta_object',
          page: (after, limit) => store.metaPage(db, after, limit, ownerId),
          measure: async (r) => (await this.blobs.stat(blobKey(r.oid)))?.size,
          name: (r) => `${r.owner_name}/${r.repo_name} LFS object ${r.oid}`,
        }),
      totals: async (q, ownerId) => {
        const out: OwnerTotals = new Map();
        for (const r of await store.ownerTotals(q, ownerId)) out.set(r.owner_id, { [SUBJECT]: r.total });
        return out;
      },
    };
  }
}

function sizeMismatch(o: BatchObject, meta: MetaRow): BatchResult {
  return { ...o, error: { code: 422, message: `Object ${o.oid} is ${meta.size} bytes, not ${o.size}` } };
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined || limit <= 0) return LOCK_PAGE.default;
  return Math.min(limit, LOCK_PAGE.max);
}

/** Cursors are the id of the first lock of the page (ids only grow: pages never shift). */
function parseCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  if (!/^\d{1,15}$/.test(cursor)) throw invalidField('cursor', `invalid cursor [cursor: ${cursor}]`);
  return Number(cursor);
}

function page(rows: LockRow[], limit: number): LockPage {
  if (rows.length <= limit) return { locks: rows };
  return { locks: rows.slice(0, limit), next: String(rows[limit]!.id) };
}
