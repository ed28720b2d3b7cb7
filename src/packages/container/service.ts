// The container registry (OCI distribution spec) on the packages core, modelled on Forgejo's:
// an image is a package of type `container` (name in lower case, `/` allowed); every tag and
// every manifest pushed by digest is a version whose lead file `manifest.json` holds the
// manifest's bytes and whose other files (`sha256_<hex>`) name the config and layer blobs. Blobs
// uploaded before a manifest names them are files of the internal version `_upload`; a manifest
// takes them over. A blob is stored once whatever names it, and counted (quota) per file.
//
// Uploads stream: each POST/PATCH/PUT body goes through the core's hashing stream into a part
// (parts.ts: `tmp/container-{upload}-{n}`); finishing composes the parts into the blob named by its SHA-256.
// The digests of a one-part upload (what skopeo and docker send) are those of its part; those of
// several parts come from reading the stored parts again.
//
// The token of /v2/token is `payload.signature` (HMAC-SHA256 with a key derived from [security]
// SECRET_KEY), naming the user, the scopes of the credential it was issued for and an expiry.
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { pipeline as pipe, Readable, Writable } from 'node:stream';
import type { AppContext } from '../../app/context.js';
import type { Identity } from '../../auth/identity.js';
import { nowUnix, transaction, type Tx } from '../../db/database.js';
import { uniqueViolation } from '../../db/retry.js';
import { AppError, unauthorized } from '../../errors.js';
import { recordUsage } from '../../quota/usage.js';
import * as repoStore from '../../repos/store.js';
import { formatScopes, storedScopes } from '../../tokens/scopes.js';
import type { UserRow } from '../../users/tables.js';
import { hashingStream, type Digests } from '../hashing.js';
import { blobKey, SUBJECT, type PackageRow, type VersionRow } from '../service.js';
import * as core from '../store.js';
import { UPLOAD_VERSION } from '../store.js';
import { partKey } from './parts.js';
import * as store from './store.js';
import { KeyedLock } from '../../locks.js';
import type { ImageFile } from './store.js';
import type { UploadRow } from './tables.js';

export type { ImageFile } from './store.js';
export type { UploadRow } from './tables.js';

/** An error in the registry's own form: `{"errors":[{"code","message"}]}` with this status. */
export class OciError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const oci = (status: number, code: string, message: string) => new OciError(status, code, message);

export const MANIFEST_MAX = 10 << 20;
const CONFIG_MAX = 1 << 20;
const TOKEN_TTL = 3600;
const RETRIES = 5;

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const IMAGE = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;

const INDEX_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
];
const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
const SOURCE = 'org.opencontainers.image.source';

export const isDigest = (ref: string) => DIGEST.test(ref);

/** The hex SHA-256 of a digest reference, or a 400 DIGEST_INVALID. */
export function shaOf(digest: string): string {
  const m = DIGEST.exec(digest);
  if (!m) throw oci(400, 'DIGEST_INVALID', `invalid or unsupported digest: ${digest}`);
  return m[1]!;
}

export function checkImage(image: string): void {
  if (image.length > 255 || !IMAGE.test(image))
    throw oci(400, 'NAME_INVALID', `invalid image name: ${image}`);
}

/** The stored version of a manifest reference: a tag as given (lower case), or a digest. */
function versionOf(reference: string): string {
  if (isDigest(reference)) return reference;
  if (!TAG.test(reference)) throw oci(400, 'MANIFEST_INVALID', `invalid tag: ${reference}`);
  return reference.toLowerCase();
}

const fileNameOf = (sha: string) => `sha256_${sha}`;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

interface Descriptor {
  mediaType: string;
  digest: string;
  sha: string;
  size: number;
  platform?: string;
}

function descriptor(v: unknown, what: string): Descriptor {
  const d = obj(v);
  const digest = d?.['digest'];
  const size = d?.['size'];
  if (
    !d ||
    typeof digest !== 'string' ||
    typeof size !== 'number' ||
    !Number.isSafeInteger(size) ||
    size < 0
  ) {
    throw oci(400, 'MANIFEST_INVALID', `${what}: a descriptor needs a digest and a size`);
  }
  const out: Descriptor = {
    mediaType: typeof d['mediaType'] === 'string' ? d['mediaType'] : '',
    digest,
    sha: shaOf(digest),
    size,
  };
  const p = obj(d['platform']);
  if (p && typeof p['os'] === 'string' && typeof p['architecture'] === 'string') {
    out.platform = `${p['os']}/${p['architecture']}${typeof p['variant'] === 'string' && p['variant'] ? `/${p['variant']}` : ''}`;
  }
  return out;
}

/** What a version's metadata_json holds. */
export interface ManifestMetadata {
  mediaType: string;
  isTagged: boolean;
  platform?: string;
  manifests?: Array<{ digest: string; platform: string; size: number }>;
  labels?: Record<string, string>;
}

export function metadataOf(file: { metadata_json: string }): ManifestMetadata {
  try {
    return JSON.parse(file.metadata_json) as ManifestMetadata;
  } catch {
    return { mediaType: MANIFEST_TYPES[0]!, isTagged: false };
  }
}

function digestsOf(body: Buffer): Digests {
  const h = (a: string) => crypto.createHash(a).update(body).digest('hex');
  return { md5: h('md5'), sha1: h('sha1'), sha256: h('sha256'), sha512: h('sha512') };
}

function isUnique(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : '';
  return uniqueViolation(err) || /UNIQUE constraint|duplicate key/i.test(msg);
}

/** Runs a transaction again when a concurrent one of the same push won a unique index. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i < RETRIES && isUnique(err)) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
        continue;
      }
      throw err;
    }
  }
}

export class ContainerService {
  /** Digests of the first part of uploads (the blob's own when it is the only part). */
  private readonly firstPart = new Map<string, Digests>();
  private readonly uploadLocks = new KeyedLock<string>();
  private readonly tokenKey: Buffer;

  constructor(private readonly ctx: AppContext) {
    const secret = ctx.config.security.secretKey || crypto.randomBytes(32).toString('hex');
    this.tokenKey = Buffer.from(
      crypto.hkdfSync('sha256', secret, 'anvil-container-token', 'anvil:container-registry-token', 32),
    );
  }

  private get db() {
    return this.ctx.db;
  }
  private get packages() {
    return this.ctx.packages;
  }
  private get blobs() {
    return this.ctx.storage.packages;
  }

  // Tokens

  /** A signed token for `identity` (null: anonymous), valid for an hour. */
  issueToken(identity: Identity | null): { token: string; expiresIn: number; issuedAt: string } {
    const now = nowUnix();
    const payload = identity
      ? {
          u: identity.user.id,
          s: formatScopes(identity.scopes),
          ...(identity.tokenId !== undefined ? { t: identity.tokenId } : {}),
          ...(identity.repoId !== undefined ? { r: identity.repoId } : {}),
          e: now + TOKEN_TTL,
        }
      : { u: 0, e: now + TOKEN_TTL };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const sig = crypto.createHmac('sha256', this.tokenKey).update(body).digest('base64url');
    return { token: `${body}.${sig}`, expiresIn: TOKEN_TTL, issuedAt: new Date(now * 1000).toISOString() };
  }

  /**
   * The identity a registry token names: undefined when `token` is not one (another kind of
   * token), null for an anonymous one; a 401 when it is one but forged, expired or of a user gone.
   */
  async verifyToken(token: string): Promise<Identity | null | undefined> {
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return undefined;
    const expected = crypto.createHmac('sha256', this.tokenKey).update(m[1]!).digest();
    const given = Buffer.from(m[2]!, 'base64url');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      throw unauthorized('invalid registry token');
    }
    let p: { u?: unknown; s?: unknown; t?: unknown; r?: unknown; e?: unknown };
    try {
      p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as typeof p;
    } catch {
      throw unauthorized('invalid registry token');
    }
    if (typeof p.e !== 'number' || p.e < nowUnix()) throw unauthorized('the registry token has expired');
    if (p.u === 0) return null;
    const user = typeof p.u === 'number' ? await this.ctx.users.getById(p.u) : undefined;
    if (!user) throw unauthorized('invalid registry token');
    return {
      user,
      method: 'token',
      scopes: storedScopes(typeof p.s === 'string' ? p.s : ''),
      ...(typeof p.t === 'number' ? { tokenId: p.t } : {}),
      ...(typeof p.r === 'number' ? { repoId: p.r } : {}),
    };
  }

  // Images

  getImage(owner: UserRow, image: string): Promise<PackageRow | undefined> {
    return this.packages.getPackage(owner, 'container', image);
  }

  /** The image, readable by `identity` (404 NAME_UNKNOWN otherwise). */
  async requireImage(owner: UserRow, image: string, identity: Identity | null): Promise<PackageRow> {
    const pkg = await this.getImage(owner, image);
    if (!pkg) throw oci(404, 'NAME_UNKNOWN', `repository name not known to registry: ${owner.name}/${image}`);
    await this.packages.assertCanReadPackage(pkg, identity);
    return pkg;
  }

  async blob(owner: UserRow, image: string, digest: string, identity: Identity | null): Promise<ImageFile> {
    const sha = shaOf(digest);
    const pkg = await this.getImage(owner, image);
    if (pkg) await this.packages.assertCanReadPackage(pkg, identity);
    const file = pkg && (await store.findBlob(this.db, pkg.id, sha));
    if (!file) throw oci(404, 'BLOB_UNKNOWN', `blob unknown to registry: ${digest}`);
    return file;
  }

  /** Opens a blob (a byte range, end inclusive); a manifest read counts a download of its version. */
  open(file: ImageFile, range?: { start: number; end: number }, countDownload = false) {
    return this.packages.open(file, range, countDownload);
  }

  // Uploads

  async startUpload(owner: UserRow, creator: UserRow, image: string): Promise<UploadRow> {
    await this.packages.checkLimits(owner, creator, 'container');
    const now = nowUnix();
    const row: UploadRow = {
      id: crypto.randomUUID(),
      owner_id: owner.id,
      image,
      bytes_received: 0,
      parts: 0,
      created_unix: now,
      updated_unix: now,
    };
    await store.insertUpload(this.db, row);
    return row;
  }

  async requireUpload(owner: UserRow, image: string, id: string): Promise<UploadRow> {
    const row = /^[0-9a-f-]{36}$/.test(id) ? await store.getUpload(this.db, id) : undefined;
    if (!row || row.owner_id !== owner.id || row.image !== image) {
      throw oci(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
    }
    return row;
  }

  private withUploadLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    return this.uploadLocks.run(id, fn);
  }

  /**
   * Appends a body to an upload as its next part. With a Content-Range (`start-end`), `start` must
   * be the bytes received so far and the body exactly that long (416 otherwise).
   */
  async appendPart(
    owner: UserRow,
    creator: UserRow,
    upload: UploadRow,
    data: Readable,
    opts: { announced?: number; range?: string },
  ): Promise<UploadRow> {
    return this.withUploadLock(upload.id, async () => {
      const row = await this.requireUpload(owner, upload.image, upload.id);
      let expected: number | undefined;
      if (opts.range !== undefined) {
        const m = /^(?:bytes[= ])?(\d+)-(\d+)$/.exec(opts.range.trim());
        if (!m || Number(m[1]) !== row.bytes_received || Number(m[2]) < Number(m[1])) {
          data.resume();
          throw oci(
            416,
            'BLOB_UPLOAD_INVALID',
            `the chunk must start at byte ${row.bytes_received} (Content-Range: ${opts.range})`,
          );
        }
        expected = Number(m[2]) - Number(m[1]) + 1;
      }
      await this.packages.checkLimits(owner, creator, 'container', opts.announced);
      const limit = this.packages.sizeLimit('container', creator);
      const key = partKey(row.id, row.parts);
      const hasher = hashingStream(limit >= 0 ? Math.max(0, limit - row.bytes_received) : -1, opts.announced);
      const hashed = pipe(data, hasher, () => undefined);
      try {
        await this.blobs.put(key, hashed);
      } catch (err) {
        data.destroy();
        await this.blobs.delete(key).catch(() => undefined);
        throw err;
      }
      const size = hasher.size;
      if (expected !== undefined && size !== expected) {
        await this.blobs.delete(key).catch(() => undefined);
        throw oci(
          416,
          'BLOB_UPLOAD_INVALID',
          `the chunk has ${size} bytes, its Content-Range says ${expected}`,
        );
      }
      if (!(await store.addPart(this.db, row.id, row.parts, size, nowUnix()))) {
        await this.blobs.delete(key).catch(() => undefined);
        throw oci(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
      }
      if (row.parts === 0) this.firstPart.set(row.id, hasher.digests());
      return { ...row, bytes_received: row.bytes_received + size, parts: row.parts + 1 };
    });
  }

  /** Cancels an upload: its row and parts go. */
  async cancelUpload(upload: UploadRow): Promise<void> {
    await this.withUploadLock(upload.id, () => this.dropUpload(upload.id, upload.parts));
  }

  private async dropUpload(id: string, parts: number): Promise<void> {
    this.firstPart.delete(id);
    await store.deleteUpload(this.db, id);
    for (let i = 0; i < parts; i++) await this.blobs.delete(partKey(id, i)).catch(() => undefined);
  }

  /**
   * Finishes an upload as the blob `digest` (400 DIGEST_INVALID when its bytes have another one):
   * the blob is stored (once) and becomes a file of the image's upload version.
   */
  async finishUpload(owner: UserRow, creator: UserRow, upload: UploadRow, digest: string): Promise<void> {
    const sha = shaOf(digest);
    await this.withUploadLock(upload.id, async () => {
      let row = await this.requireUpload(owner, upload.image, upload.id);
      if (row.parts === 0) {
        // An empty blob: one empty part.
        const key = partKey(row.id, 0);
        const hasher = hashingStream(-1, 0);
        await this.blobs.put(
          key,
          pipe(Readable.from([]), hasher, () => undefined),
        );
        await store.addPart(this.db, row.id, 0, 0, nowUnix());
        this.firstPart.set(row.id, hasher.digests());
        row = { ...row, parts: 1 };
      }
      const parts = Array.from({ length: row.parts }, (_, i) => partKey(row.id, i));
      let digests = row.parts === 1 ? this.firstPart.get(row.id) : undefined;
      try {
        digests ??= await this.digestsOfParts(parts, row.bytes_received);
      } catch (err) {
        await this.dropUpload(row.id, row.parts);
        if (err instanceof AppError && err.kind === 'not_found') {
          throw oci(404, 'BLOB_UPLOAD_UNKNOWN', 'the parts of this upload are gone');
        }
        throw err;
      }
      if (digests.sha256 !== sha) {
        await this.dropUpload(row.id, row.parts);
        throw oci(
          400,
          'DIGEST_INVALID',
          `the uploaded bytes have the digest sha256:${digests.sha256}, not ${digest}`,
        );
      }
      await this.commitBlob(owner, creator, row.image, digests, row.bytes_received, {
        place: async (key) => {
          if (parts.length === 1) await this.blobs.move(parts[0]!, key);
          else await this.blobs.compose(key, parts);
        },
        discard: async () => {
          for (const p of parts) await this.blobs.delete(p).catch(() => undefined);
        },
      });
      this.firstPart.delete(row.id);
      await store.deleteUpload(this.db, row.id);
    });
  }

  /** The digests of stored parts, read again in order. */
  private async digestsOfParts(parts: string[], size: number): Promise<Digests> {
    const hasher = hashingStream(-1, size);
    const blobs = this.blobs;
    async function* bytes() {
      for (const p of parts) yield* await blobs.open(p);
    }
    await pipeline(
      Readable.from(bytes(), { objectMode: false }),
      hasher,
      new Writable({ write: (_c, _e, cb) => cb() }),
    );
    return hasher.digests();
  }

  /**
   * Places a blob under its key (unless stored already) and makes it a file of the image's upload
   * version (unless the image has a file naming it already), with its quota usage.
   */
  private async commitBlob(
    owner: UserRow,
    creator: UserRow,
    image: string,
    digests: Digests,
    size: number,
    how: { place: (key: string) => Promise<void>; discard: () => Promise<void> },
  ): Promise<void> {
    const key = blobKey(digests.sha256);
    await this.packages.withBlobLock(digests.sha256, async () => {
      let placed = false;
      if (await this.blobs.stat(key)) await how.discard();
      else {
        await how.place(key);
        placed = true;
      }
      try {
        await retrying(() =>
          transaction(this.db, async (tx) => {
            const blob = await core.ensureBlob(tx, {
              size,
              hash_md5: digests.md5,
              hash_sha1: digests.sha1,
              hash_sha256: digests.sha256,
              hash_sha512: digests.sha512,
              created_unix: nowUnix(),
            });
            await this.addToUploads(tx, owner, creator, image, blob.id, Number(blob.size), digests.sha256);
          }),
        );
      } catch (err) {
        if (placed && !(await core.getBlob(this.db, digests.sha256))) {
          await this.blobs.delete(key).catch(() => undefined);
        }
        throw err;
      }
    });
  }

  private async ensurePackage(tx: Tx, owner: UserRow, image: string): Promise<PackageRow> {
    return core.ensurePackage(tx, {
      owner_id: owner.id,
      repo_id: null,
      type: 'container',
      name: image,
      lower_name: image,
      created_unix: nowUnix(),
    });
  }

  /** Makes the blob a file of the image's upload version unless the image names it already. */
  private async addToUploads(
    tx: Tx,
    owner: UserRow,
    creator: UserRow,
    image: string,
    blobId: number,
    size: number,
    sha: string,
  ): Promise<void> {
    const pkg = await this.ensurePackage(tx, owner, image);
    if (await store.findBlob(tx, pkg.id, sha)) return;
    let version = await core.getVersion(tx, pkg.id, UPLOAD_VERSION);
    version ??= await core.insertVersion(tx, {
      package_id: pkg.id,
      creator_id: creator.id,
      version: UPLOAD_VERSION,
      lower_version: UPLOAD_VERSION,
      metadata_json: '{}',
      created_unix: nowUnix(),
    });
    const name = fileNameOf(sha);
    await core.insertFile(tx, {
      version_id: version.id,
      blob_id: blobId,
      name,
      lower_name: name,
      is_lead: 0,
      created_unix: nowUnix(),
    });
    await recordUsage(tx, owner.id, SUBJECT, size);
    await core.bumpRevision(tx, pkg.id);
  }

  /**
   * Cross-repository mount: the blob `digest` of image `from` (`owner/image`, readable by
   * `identity`) becomes a blob of `image` without any byte sent. False when there is no such blob.
   */
  async mount(
    owner: UserRow,
    creator: UserRow,
    identity: Identity,
    image: string,
    from: string,
    digest: string,
  ): Promise<boolean> {
    const sha = shaOf(digest);
    const slash = from.indexOf('/');
    if (slash < 0) return false;
    const fromImage = from.slice(slash + 1).toLowerCase();
    if (!IMAGE.test(fromImage)) return false;
    let source: ImageFile;
    try {
      const fromOwner = await this.packages.requireOwner(from.slice(0, slash), identity, 'read');
      source = await this.blob(fromOwner, fromImage, digest, identity);
    } catch (err) {
      if (err instanceof AppError || err instanceof OciError) return false;
      throw err;
    }
    await this.packages.checkLimits(owner, creator, 'container');
    await retrying(() =>
      transaction(this.db, async (tx) => {
        // The source blob may have gone since: then this is no mount.
        const blob = await core.getBlob(tx, sha);
        if (!blob || blob.id !== source.blob_id) throw oci(404, 'BLOB_UNKNOWN', 'blob unknown to registry');
        await this.addToUploads(tx, owner, creator, image, blob.id, Number(blob.size), sha);
      }),
    ).catch((err: unknown) => {
      if (err instanceof OciError) return;
      throw err;
    });
    const pkg = await this.getImage(owner, image);
    return !!pkg && !!(await store.findBlob(this.db, pkg.id, sha));
  }

  /** Deletes a blob uploaded to the image and not (yet) named by a manifest. */
  async deleteBlob(owner: UserRow, image: string, digest: string, identity: Identity): Promise<void> {
    const file = await this.blob(owner, image, digest, identity);
    const pkg = (await this.getImage(owner, image))!;
    const uploads = await store.uploadFiles(this.db, pkg.id, [file.blob_id]);
    if (uploads.length === 0) {
      throw oci(405, 'UNSUPPORTED', 'the blob is part of a manifest: delete the manifest instead');
    }
    // Internal rows: no package event.
    const orphans = await transaction(this.db, async (tx) => {
      await core.deleteFiles(
        tx,
        uploads.map((f) => f.id),
      );
      await recordUsage(tx, owner.id, SUBJECT, -uploads.reduce((n, f) => n + Number(f.size), 0));
      if ((await core.filesOfVersions(tx, [uploads[0]!.version_id])).length === 0) {
        await core.deleteVersion(tx, uploads[0]!.version_id);
        if ((await core.countVersions(tx, pkg.id)) === 0) await core.deletePackage(tx, pkg.id);
      }
      await core.bumpRevision(tx, pkg.id);
      return core.removeUnreferencedBlobs(tx, [file.blob_id]);
    });
    await this.packages.removeBlobs(orphans);
  }

  // Manifests

  /** Stores a manifest under a tag or its digest; its digest. */
  async putManifest(
    owner: UserRow,
    creator: UserRow,
    image: string,
    reference: string,
    contentType: string | undefined,
    body: Buffer,
  ): Promise<string> {
    const version = versionOf(reference);
    const digests = digestsOf(body);
    const digest = `sha256:${digests.sha256}`;
    if (isDigest(reference) && reference !== digest) {
      throw oci(400, 'DIGEST_INVALID', `the manifest's digest is ${digest}, not ${reference}`);
    }
    let doc: Json | undefined;
    try {
      doc = obj(JSON.parse(body.toString('utf8')));
    } catch {
      doc = undefined;
    }
    if (!doc) throw oci(400, 'MANIFEST_INVALID', 'the manifest is not a JSON object');
    if (doc['schemaVersion'] !== 2) throw oci(400, 'MANIFEST_INVALID', 'only schemaVersion 2 is supported');
    const valid = (t: unknown): t is string =>
      typeof t === 'string' &&
      (t.startsWith('application/vnd.oci.') || t.startsWith('application/vnd.docker.'));
    const ct = contentType?.split(';')[0]?.trim();
    const mediaType = valid(ct)
      ? ct
      : valid(doc['mediaType'])
        ? doc['mediaType']
        : Array.isArray(doc['manifests'])
          ? INDEX_TYPES[0]!
          : MANIFEST_TYPES[0]!;
    const isIndex = INDEX_TYPES.includes(mediaType);
    if (!isIndex && !MANIFEST_TYPES.includes(mediaType)) {
      throw oci(400, 'MANIFEST_INVALID', `unsupported manifest media type: ${mediaType}`);
    }
    await this.packages.checkLimits(owner, creator, 'container', body.length);

    const pkg = await this.getImage(owner, image);
    const meta: ManifestMetadata = { mediaType, isTagged: !isDigest(reference) };
    /** The blobs the manifest names, with their sizes. */
    const refs: Array<{ sha: string; blobId: number; size: number }> = [];
    let source =
      typeof obj(doc['annotations'])?.[SOURCE] === 'string' ? String(obj(doc['annotations'])![SOURCE]) : '';
    if (isIndex) {
      const list = doc['manifests'];
      if (!Array.isArray(list)) throw oci(400, 'MANIFEST_INVALID', 'an index needs a manifests list');
      meta.manifests = [];
      for (const m of list) {
        const d = descriptor(m, 'manifests');
        if (d.mediaType && !MANIFEST_TYPES.includes(d.mediaType) && !INDEX_TYPES.includes(d.mediaType)) {
          throw oci(400, 'MANIFEST_INVALID', `unsupported manifest media type: ${d.mediaType}`);
        }
        const found = pkg ? await store.findManifests(this.db, pkg.id, d.sha) : [];
        if (!found.length)
          throw oci(404, 'MANIFEST_BLOB_UNKNOWN', `manifest unknown to registry: ${d.digest}`);
        if (Number(found[0]!.size) !== d.size) {
          throw oci(
            400,
            'SIZE_INVALID',
            `the manifest ${d.digest} has ${found[0]!.size} bytes, not ${d.size}`,
          );
        }
        meta.manifests.push({ digest: d.digest, platform: d.platform ?? 'unknown/unknown', size: d.size });
      }
    } else {
      const config = descriptor(doc['config'], 'config');
      const layers = doc['layers'];
      if (!Array.isArray(layers)) throw oci(400, 'MANIFEST_INVALID', 'a manifest needs a layers list');
      for (const d of [config, ...layers.map((l) => descriptor(l, 'layers'))]) {
        const file = pkg ? await store.findBlob(this.db, pkg.id, d.sha) : undefined;
        if (!file) throw oci(404, 'BLOB_UNKNOWN', `blob unknown to registry: ${d.digest}`);
        if (Number(file.size) !== d.size) {
          throw oci(400, 'SIZE_INVALID', `the blob ${d.digest} has ${file.size} bytes, not ${d.size}`);
        }
        refs.push({ sha: d.sha, blobId: file.blob_id, size: Number(file.size) });
      }
      const cfg = refs[0]!;
      if (cfg.size <= CONFIG_MAX) {
        const parsed = await this.readConfig(cfg.sha);
        const labels = obj(obj(parsed?.['config'])?.['Labels']);
        if (labels) {
          meta.labels = Object.fromEntries(
            Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'),
          );
          source ||= meta.labels[SOURCE] ?? '';
        }
        if (typeof parsed?.['os'] === 'string' && typeof parsed['architecture'] === 'string') {
          meta.platform = `${parsed['os']}/${parsed['architecture']}`;
        }
      }
    }

    // The manifest's own bytes: a blob like any other.
    const key = blobKey(digests.sha256);
    let emitted: { pkg: PackageRow; version: VersionRow } | undefined;
    const orphans = await this.packages.withBlobLock(digests.sha256, async () => {
      let placed = false;
      if (!(await this.blobs.stat(key))) {
        await this.blobs.put(key, Readable.from([body]));
        placed = true;
      }
      try {
        return await retrying(() =>
          transaction(this.db, async (tx) => {
            const out = await this.writeManifest(
              tx,
              owner,
              creator,
              image,
              version,
              meta,
              refs,
              digests,
              body.length,
            );
            if (source) await this.linkBySource(tx, owner, out.pkg, source);
            emitted = out;
            return out.orphans;
          }),
        );
      } catch (err) {
        if (placed && !(await core.getBlob(this.db, digests.sha256))) {
          await this.blobs.delete(key).catch(() => undefined);
        }
        throw err;
      }
    });
    await this.packages.removeBlobs(orphans);
    if (emitted) {
      await this.ctx.events.emit('package.created', {
        package: this.packages.eventInfo(emitted.pkg, emitted.version),
        doerId: creator.id,
      });
    }
    return digest;
  }

  private async readConfig(sha: string): Promise<Json | undefined> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.blobs.open(blobKey(sha))) chunks.push(c as Buffer);
      return obj(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      return undefined;
    }
  }

  /** The rows of a manifest version (replacing the files of an existing one), in `tx`. */
  private async writeManifest(
    tx: Tx,
    owner: UserRow,
    creator: UserRow,
    image: string,
    lowerVersion: string,
    meta: ManifestMetadata,
    refs: Array<{ sha: string; blobId: number; size: number }>,
    digests: Digests,
    size: number,
  ): Promise<{ pkg: PackageRow; version: VersionRow; orphans: string[] }> {
    const now = nowUnix();
    const pkg = await this.ensurePackage(tx, owner, image);
    let version = await core.getVersion(tx, pkg.id, lowerVersion);
    let freed: number[] = [];
    if (version) {
      // Pushed again: the version's files are replaced (its id and download count stay).
      const old = await core.filesOfVersions(tx, [version.id]);
      await core.deleteFiles(
        tx,
        old.map((f) => f.id),
      );
      const bytes = old.reduce((n, f) => n + Number(f.size), 0);
      if (bytes) await recordUsage(tx, owner.id, SUBJECT, -bytes);
      freed = old.map((f) => f.blob_id);
      await tx
        .updateTable('package_version')
        .set({ metadata_json: JSON.stringify(meta), creator_id: creator.id, created_unix: now })
        .where('id', '=', version.id)
        .execute();
      version = {
        ...version,
        metadata_json: JSON.stringify(meta),
        creator_id: creator.id,
        created_unix: now,
      };
    } else {
      version = await core.insertVersion(tx, {
        package_id: pkg.id,
        creator_id: creator.id,
        version: lowerVersion,
        lower_version: lowerVersion,
        metadata_json: JSON.stringify(meta),
        created_unix: now,
      });
    }
    const seen = new Set<string>();
    for (const r of refs) {
      if (seen.has(r.sha)) continue; // a layer named twice is one file
      seen.add(r.sha);
      const name = fileNameOf(r.sha);
      await core.insertFile(tx, {
        version_id: version.id,
        blob_id: r.blobId,
        name,
        lower_name: name,
        is_lead: 0,
        created_unix: now,
      });
      await recordUsage(tx, owner.id, SUBJECT, r.size);
    }
    // The uploads the manifest names now belong to it.
    const uploads = await store.uploadFiles(
      tx,
      pkg.id,
      refs.map((r) => r.blobId),
    );
    if (uploads.length) {
      await core.deleteFiles(
        tx,
        uploads.map((f) => f.id),
      );
      await recordUsage(tx, owner.id, SUBJECT, -uploads.reduce((n, f) => n + Number(f.size), 0));
      // An upload version left empty goes (the image then goes with its last manifest).
      const left = await core.filesOfVersions(tx, [uploads[0]!.version_id]);
      if (left.length === 0) await core.deleteVersion(tx, uploads[0]!.version_id);
    }
    const blob = await core.ensureBlob(tx, {
      size,
      hash_md5: digests.md5,
      hash_sha1: digests.sha1,
      hash_sha256: digests.sha256,
      hash_sha512: digests.sha512,
      created_unix: now,
    });
    await core.insertFile(tx, {
      version_id: version.id,
      blob_id: blob.id,
      name: 'manifest.json',
      lower_name: 'manifest.json',
      is_lead: 1,
      created_unix: now,
    });
    await recordUsage(tx, owner.id, SUBJECT, Number(blob.size));
    await core.bumpRevision(tx, pkg.id);
    const orphans = await core.removeUnreferencedBlobs(tx, freed);
    return { pkg, version, orphans };
  }

  /**
   * Links the image to a repository of its owner named by `org.opencontainers.image.source`
   * (`{ROOT_URL}{owner}/{repo}`), unless it is linked already.
   */
  private async linkBySource(tx: Tx, owner: UserRow, pkg: PackageRow, source: string): Promise<void> {
    if (pkg.repo_id !== null) return;
    const root = this.ctx.config.server.rootUrl;
    if (!source.toLowerCase().startsWith(root.toLowerCase())) return;
    const [o, r] = source.slice(root.length).split(/[/?#]/);
    if (!o || !r || o.toLowerCase() !== owner.lower_name) return;
    const repo = await repoStore.getByOwnerAndName(tx, owner.name, r.replace(/\.git$/, ''));
    if (!repo || repo.owner_id !== owner.id) return;
    await core.setRepo(tx, pkg.id, repo.id);
    pkg.repo_id = repo.id;
  }

  /** The manifest a reference (tag or digest) names: 404 MANIFEST_UNKNOWN. */
  async manifest(pkg: PackageRow, reference: string): Promise<ImageFile> {
    const file = isDigest(reference)
      ? (await store.findManifests(this.db, pkg.id, shaOf(reference)))[0]
      : await store.manifestOf(this.db, pkg.id, versionOf(reference));
    if (!file) throw oci(404, 'MANIFEST_UNKNOWN', `manifest unknown to registry: ${reference}`);
    return file;
  }

  /** Deletes a tag, or every version a digest names. */
  async deleteManifest(pkg: PackageRow, reference: string, doer: UserRow): Promise<void> {
    const files = isDigest(reference)
      ? await store.findManifests(this.db, pkg.id, shaOf(reference))
      : [await this.manifest(pkg, reference)];
    if (!files.length) throw oci(404, 'MANIFEST_UNKNOWN', `manifest unknown to registry: ${reference}`);
    for (const f of files) {
      const version = await core.getVersion(this.db, pkg.id, f.lower_version);
      if (version) await this.packages.deleteVersion(pkg, version, doer);
    }
  }

  tags(pkg: PackageRow, last: string, limit: number): Promise<string[]> {
    return store.tags(this.db, pkg.id, last, limit);
  }

  /** `owner/image` of every image `identity` may read, in order, after `last`, at most `limit`. */
  async catalog(identity: Identity | null, last: string, limit: number): Promise<string[]> {
    const rows = await store.containerPackages(this.db);
    const owners = new Map<string, boolean>();
    const out: string[] = [];
    for (const r of rows) {
      const name = `${r.owner}/${r.lower_name}`;
      if (last && name <= last) continue;
      let ok = owners.get(r.owner);
      if (ok === undefined) {
        ok = await this.packages.requireOwner(r.owner, identity, 'read').then(
          () => true,
          () => false,
        );
        owners.set(r.owner, ok);
      }
      if (!ok) continue;
      if (r.repo_id !== null) {
        const pkg = await this.packages.packageById(r.id);
        const readable =
          pkg &&
          (await this.packages.assertCanReadPackage(pkg, identity).then(
            () => true,
            () => false,
          ));
        if (!readable) continue;
      }
      out.push(name);
      if (limit >= 0 && out.length > limit) break;
    }
    return out;
  }
}
