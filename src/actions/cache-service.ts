// The actions cache: the v1 cache protocol that actions/cache (@actions/cache) speaks to
// ACTIONS_CACHE_URL, as act's artifactcache handler and Forgejo's runner cache server serve it.
//
//   lookup   GET  _apis/artifactcache/cache?keys=k1,k2&version=V: the first key exactly, then each
//            key as a prefix (newest first), among the committed entries of the job's repository
//            with that version, saved from the run's ref or the default branch (the run's ref
//            first, as on GitHub); 204 when none. The hit's `archiveLocation` is a signed URL.
//   reserve  POST _apis/artifactcache/caches {key, version, cacheSize}: an entry of the run's ref
//            (409 when one of that key and version exists, or is being uploaded since less than
//            an hour); 400 when cacheSize exceeds [actions] CACHE_MAX_SIZE.
//   upload   PATCH _apis/artifactcache/caches/{id}, `Content-Range: bytes a-b/*`: each chunk is its
//            own storage object (in any order, in parallel); a chunk at the same offset replaces.
//   commit   POST _apis/artifactcache/caches/{id} {size}: the chunks must cover 0..size-1 exactly;
//            they are joined (storage compose, never read into memory) into the archive.
//
// Every call needs the job's runtime token (Authorization: Bearer ACTIONS_RUNTIME_TOKEN); its
// repository is the only one it reaches (another repository's entry is a 404). Eviction (the
// cleanup_actions task): entries unused for CACHE_RETENTION_DAYS, unfinished uploads after a day,
// and the least recently used entries of a repository over CACHE_MAX_SIZE.
import crypto from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../errors.js';
import type { BlobReferences } from '../storage/sweep.js';
import type { BlobStore } from '../storage/storage.js';
import * as store from './cache-store.js';
import type { CacheRow } from './cache-tables.js';
import { RuntimeTokenError, verifyRuntimeToken, type RuntimeTokenClaims } from './runtime-token.js';

/** An upload untouched this long is another job's no more (reserve may replace it; eviction removes it). */
const STALE_UPLOAD = 3600;
const STALE_REMOVE = 24 * 3600;
const DOWNLOAD_URL_TTL = 3600;
const MAX_KEY = 512;
const MAX_KEYS = 10;

/** The run's ref and its repository's default branch (the actions domain and repositories). */
export interface CacheScopeSource {
  scopeOf(runId: number): Promise<{ repoId: number; ref: string; defaultRef: string } | undefined>;
}

export interface CacheServiceDeps {
  db: Db;
  log: Logger;
  blobs: BlobStore;
  settings: Pick<Config['actions'], 'enabled' | 'cacheMaxSize' | 'cacheRetentionDays'>;
  secretKey: string;
  rootUrl: string;
  scopes: CacheScopeSource;
  blobReferences: BlobReferences[];
}

export interface CacheHit {
  cacheKey: string;
  scope: string;
  creationTime: string;
  archiveLocation: string;
}

const hashOf = (ref: string, version: string, key: string) =>
  crypto.createHash('sha256').update(`${ref}\n${version}\n${key}`).digest('hex');

export class CacheService {
  private readonly urlKey: Buffer;

  constructor(private readonly deps: CacheServiceDeps) {
    this.urlKey = Buffer.from(
      crypto.hkdfSync(
        'sha256',
        deps.secretKey || 'unset',
        'anvil-cache-url',
        'anvil:v1:actions-cache-url',
        32,
      ),
    );
    deps.blobReferences.push({
      label: 'actions cache',
      store: 'artifacts',
      prefix: 'cache/',
      referenced: (keys) => store.referencedKeys(deps.db, keys),
    });
  }

  assertEnabled(): void {
    if (!this.deps.settings.enabled) {
      throw notFound('Actions are disabled on this server ([actions] ENABLED = false)');
    }
  }

  /** The job of the request's runtime token; 401 without a valid one. */
  authenticate(authorization: string | undefined): RuntimeTokenClaims {
    this.assertEnabled();
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw unauthorized('a runtime token is required (Authorization: Bearer <ACTIONS_RUNTIME_TOKEN>)');
    try {
      return verifyRuntimeToken(this.deps.secretKey, m[1]!);
    } catch (err) {
      if (err instanceof RuntimeTokenError) throw unauthorized(`runtime token refused: ${err.message}`);
      throw err;
    }
  }

  private async scope(job: RuntimeTokenClaims) {
    const s = await this.deps.scopes.scopeOf(job.runId);
    if (!s || s.repoId !== job.repoId) throw unauthorized('runtime token refused: its run does not exist');
    return s;
  }

  async lookup(job: RuntimeTokenClaims, keysText: string, version: string): Promise<CacheHit | undefined> {
    const keys = keysText
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    if (!keys.length) throw badRequest('keys is required');
    if (keys.length > MAX_KEYS) throw badRequest(`at most ${MAX_KEYS} keys may be given`);
    if (!version) throw badRequest('version is required');
    const s = await this.scope(job);
    const refs = [...new Set([s.ref, s.defaultRef])];
    const rank = (r: CacheRow) => refs.indexOf(r.ref);
    let hit: CacheRow | undefined;
    const exact = await store.committedByHashes(
      this.deps.db,
      job.repoId,
      refs.map((ref) => hashOf(ref, version, keys[0]!)),
    );
    hit = exact.sort((a, b) => rank(a) - rank(b))[0];
    for (const key of keys) {
      if (hit) break;
      const rows = await store.committedByPrefix(this.deps.db, job.repoId, refs, version, key);
      // The database may compare without case: the prefix is checked here as given.
      hit = rows.filter((r) => r.cache_key.startsWith(key)).sort((a, b) => rank(a) - rank(b))[0];
    }
    if (!hit) return undefined;
    await store.touch(this.deps.db, hit.id, nowUnix());
    return {
      cacheKey: hit.cache_key,
      scope: hit.ref,
      creationTime: new Date(hit.created_unix * 1000).toISOString(),
      archiveLocation: this.archiveUrl(hit.id),
    };
  }

  async reserve(job: RuntimeTokenClaims, input: { key: unknown; version: unknown; cacheSize: unknown }) {
    const { key, version, cacheSize } = input;
    if (typeof key !== 'string' || !key || key.length > MAX_KEY || key.includes(',')) {
      throw badRequest(`key must be a string of 1 to ${MAX_KEY} characters without commas`);
    }
    if (typeof version !== 'string' || !version || version.length > 255) {
      throw badRequest('version must be a string of 1 to 255 characters');
    }
    if (cacheSize !== undefined && cacheSize !== null && (typeof cacheSize !== 'number' || cacheSize < 0)) {
      throw badRequest('cacheSize must be a number of bytes');
    }
    if (typeof cacheSize === 'number' && cacheSize > this.deps.settings.cacheMaxSize) {
      throw badRequest(
        `cache size of ${cacheSize} bytes is over the limit of ${this.deps.settings.cacheMaxSize} bytes ([actions] CACHE_MAX_SIZE)`,
      );
    }
    const s = await this.scope(job);
    const keyHash = hashOf(s.ref, version, key);
    const now = nowUnix();
    let stale: string[] = [];
    let id: number;
    try {
      id = await transaction(this.deps.db, async (tx) => {
        const old = await store.getByHash(tx, job.repoId, keyHash);
        if (old?.status === 'committed') throw conflict(`cache entry ${key} already exists`);
        if (old && old.updated_unix > now - STALE_UPLOAD) {
          throw conflict(`cache entry ${key} is being created by another job`);
        }
        if (old) stale = await store.remove(tx, [old.id]);
        return store.insert(tx, {
          repo_id: job.repoId,
          ref: s.ref,
          cache_key: key,
          version,
          key_hash: keyHash,
          status: 'reserved',
          storage_key: '',
          created_unix: now,
          updated_unix: now,
          used_unix: now,
        });
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict(`cache entry ${key} is being created by another job`);
      throw err;
    }
    await this.removeBlobs(stale);
    return { cacheId: id };
  }

  private async ownEntry(job: RuntimeTokenClaims, idText: string): Promise<CacheRow> {
    const id = /^\d{1,15}$/.test(idText) ? Number(idText) : 0;
    const row = id ? await store.getById(this.deps.db, id) : undefined;
    if (!row || row.repo_id !== job.repoId) throw notFound(`cache entry does not exist [id: ${idText}]`);
    return row;
  }

  /** A chunk (`Content-Range: bytes a-b/*`) streamed into storage. */
  async upload(job: RuntimeTokenClaims, idText: string, contentRange: string | undefined, body: Readable) {
    const m = /^bytes (\d{1,15})-(\d{1,15})\/(\*|\d{1,15})$/.exec(contentRange ?? '');
    if (!m || Number(m[2]) < Number(m[1])) {
      body.resume();
      throw badRequest('Content-Range must be "bytes <start>-<end>/*"');
    }
    const start = Number(m[1]);
    const end = Number(m[2]);
    const row = await this.ownEntry(job, idText);
    if (row.status !== 'reserved') {
      body.resume();
      throw conflict(`cache entry ${row.id} is already committed`);
    }
    if (end >= this.deps.settings.cacheMaxSize) {
      body.resume();
      throw badRequest(`the chunk ends past [actions] CACHE_MAX_SIZE`);
    }
    const storageKey = `cache/chunks/${row.id}-${start}-${crypto.randomUUID()}`;
    let counted = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        counted += chunk.length;
        cb(null, chunk);
      },
    });
    body.pipe(counter);
    body.on('error', (err) => counter.destroy(err));
    await this.deps.blobs.put(storageKey, counter);
    if (counted !== end - start + 1) {
      await this.removeBlobs([storageKey]);
      throw badRequest(`the chunk has ${counted} bytes where Content-Range says ${end - start + 1}`);
    }
    const now = nowUnix();
    const replaced = await transaction(this.deps.db, async (tx) => {
      const cur = await store.getById(tx, row.id);
      if (cur?.status !== 'reserved') return [storageKey];
      await store.setStatus(tx, row.id, 'reserved', { updated_unix: now });
      const old = await store.chunkAt(tx, row.id, start);
      const chunk = {
        cache_id: row.id,
        start_offset: start,
        end_offset: end,
        storage_key: storageKey,
        created_unix: now,
      };
      if (old) await store.replaceChunk(tx, chunk);
      else await store.insertChunk(tx, chunk);
      return old ? [old.storage_key] : [];
    });
    await this.removeBlobs(replaced);
  }

  async commit(job: RuntimeTokenClaims, idText: string, size: unknown): Promise<void> {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw badRequest('size must be the number of bytes uploaded');
    }
    const row = await this.ownEntry(job, idText);
    if (row.status !== 'reserved') throw conflict(`cache entry ${row.id} is already committed`);
    const chunks = await store.chunksOf(this.deps.db, row.id);
    let next = 0;
    for (const c of chunks) {
      if (c.start_offset !== next) {
        throw badRequest(
          `the uploaded chunks do not cover the archive: bytes ${next}-${c.start_offset - 1} are missing or overlap`,
        );
      }
      next = c.end_offset + 1;
    }
    if (next !== size) throw badRequest(`${next} bytes were uploaded, not ${size}`);
    if (
      !(await store.setStatus(this.deps.db, row.id, 'reserved', {
        status: 'committing',
        updated_unix: nowUnix(),
      }))
    ) {
      throw conflict(`cache entry ${row.id} is already committed`);
    }
    const key = `cache/archives/${row.id}-${crypto.randomUUID()}`;
    try {
      if (chunks.length)
        await this.deps.blobs.compose(
          key,
          chunks.map((c) => c.storage_key),
        );
      else await this.deps.blobs.put(key, Readable.from([]));
    } catch (err) {
      await store.setStatus(this.deps.db, row.id, 'committing', { status: 'reserved' });
      throw err;
    }
    const now = nowUnix();
    await transaction(this.deps.db, async (tx) => {
      await tx.deleteFrom('action_cache_chunk').where('cache_id', '=', row.id).execute();
      await store.setStatus(tx, row.id, 'committing', {
        status: 'committed',
        size,
        storage_key: key,
        updated_unix: now,
      });
    });
  }

  // Downloads (signed URLs, no token: the client fetches archiveLocation bare)

  private mac(id: number, expires: number): string {
    return crypto.createHmac('sha256', this.urlKey).update(`GET\n${id}\n${expires}`).digest('base64url');
  }

  archiveUrl(id: number): string {
    const expires = nowUnix() + DOWNLOAD_URL_TTL;
    return `${this.deps.rootUrl}api/actions_cache/archives/${id}?expires=${expires}&sig=${this.mac(id, expires)}`;
  }

  /** The archive behind a signed URL: 401 for a bad signature, 403 when expired, 404 when gone. */
  async archive(
    idText: string,
    expires: unknown,
    sig: unknown,
  ): Promise<{ size: number; open: BlobStore['open']; key: string }> {
    this.assertEnabled();
    const id = /^\d{1,15}$/.test(idText) ? Number(idText) : 0;
    if (typeof expires !== 'string' || !/^\d{1,15}$/.test(expires) || typeof sig !== 'string') {
      throw unauthorized('the URL is not signed');
    }
    const expected = Buffer.from(this.mac(id, Number(expires)));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      throw unauthorized('the URL signature is not valid');
    }
    if (Number(expires) <= nowUnix()) throw forbidden('the URL has expired');
    const row = await store.getById(this.deps.db, id);
    if (row?.status !== 'committed') throw notFound('cache entry does not exist');
    return { size: row.size, key: row.storage_key, open: (k, r) => this.deps.blobs.open(k, r) };
  }

  // Eviction (the cleanup_actions task)

  /** Removes expired and unfinished entries, then each repository's least used over the limit; how many. */
  async evict(now = nowUnix()): Promise<number> {
    const { cacheRetentionDays, cacheMaxSize } = this.deps.settings;
    let removed = 0;
    for (;;) {
      const ids = await store.expired(
        this.deps.db,
        now - cacheRetentionDays * 86400,
        now - STALE_REMOVE,
        100,
      );
      if (!ids.length) break;
      await this.removeEntries(ids);
      removed += ids.length;
    }
    for (const repoId of await store.reposOver(this.deps.db, cacheMaxSize)) {
      const rows = await store.committedOfRepoByUse(this.deps.db, repoId);
      let total = rows.reduce((n, r) => n + Number(r.size), 0);
      const ids: number[] = [];
      for (const r of rows) {
        if (total <= cacheMaxSize) break;
        ids.push(r.id);
        total -= Number(r.size);
      }
      await this.removeEntries(ids);
      removed += ids.length;
    }
    return removed;
  }

  private async removeEntries(ids: number[]): Promise<void> {
    const keys = await transaction(this.deps.db, (tx) => store.remove(tx, ids));
    await this.removeBlobs(keys);
  }

  private async removeBlobs(keys: string[]): Promise<void> {
    for (const k of keys) {
      await this.deps.blobs
        .delete(k)
        .catch((err: unknown) => this.deps.log.warn({ err, key: k }, 'cache blob not removed'));
    }
  }
}
