// Blobs of the container registry: uploads, cross-repository mounts, reads and deletion of blobs
// no manifest names yet. Blobs uploaded before a manifest names them are files of the image's
// internal version `_upload` (service.ts: a manifest takes them over). A blob is stored once
// whatever names it, and counted (quota) per file.
//
// Uploads stream: each POST/PATCH/PUT body goes through the core's hashing stream into a part
// (parts.ts: `tmp/container-{upload}-{n}`); finishing composes the parts into the blob named by
// its SHA-256.
// The digests of a one-part upload (what skopeo and docker send) are those of its part; those of
// several parts come from reading the stored parts again.
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { pipeline as pipe, Readable, Writable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import { nowUnix, transaction, type Db, type Tx } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { KeyedLock } from '../../locks.js';
import { recordUsage } from '../../quota/usage.js';
import type { BlobStore } from '../../storage/storage.js';
import type { UserRow } from '../../users/tables.js';
import { hashingStream, type Digests } from '../hashing.js';
import { blobKey, SUBJECT, type PackageService } from '../service.js';
import * as core from '../store.js';
import { UPLOAD_VERSION } from '../store.js';
import { fileNameOf, IMAGE, oci, OciError, retrying, shaOf } from './oci.js';
import { partKey } from './parts.js';
import * as store from './store.js';
import type { ImageFile, UploadRow } from './tables.js';

export interface ContainerBlobsDeps {
  db: Db;
  /** Where blobs and upload parts are (storage.packages). */
  blobs: BlobStore;
  packages: Pick<
    PackageService,
    | 'getPackage'
    | 'assertCanReadPackage'
    | 'open'
    | 'checkLimits'
    | 'sizeLimit'
    | 'withBlobLock'
    | 'requireOwner'
    | 'removeBlobs'
  >;
}

export class ContainerBlobs {
  /** Digests of the first part of uploads (the blob's own when it is the only part). */
  private readonly firstPart = new Map<string, Digests>();
  private readonly uploadLocks = new KeyedLock<string>();
  private readonly db: Db;
  private readonly blobs: BlobStore;
  private readonly packages: ContainerBlobsDeps['packages'];

  constructor(deps: ContainerBlobsDeps) {
    this.db = deps.db;
    this.blobs = deps.blobs;
    this.packages = deps.packages;
  }

  async blob(owner: UserRow, image: string, digest: string, identity: Identity | null): Promise<ImageFile> {
    const sha = shaOf(digest);
    const pkg = await this.packages.getPackage(owner, 'container', image);
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

  private async addToUploads(
    tx: Tx,
    owner: UserRow,
    creator: UserRow,
    image: string,
    blobId: number,
    size: number,
    sha: string,
  ): Promise<void> {
    const pkg = await store.ensureImage(tx, owner.id, image);
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
    const pkg = await this.packages.getPackage(owner, 'container', image);
    return !!pkg && !!(await store.findBlob(this.db, pkg.id, sha));
  }

  /** Deletes a blob uploaded to the image and not (yet) named by a manifest. */
  async deleteBlob(owner: UserRow, image: string, digest: string, identity: Identity): Promise<void> {
    const file = await this.blob(owner, image, digest, identity);
    const pkg = (await this.packages.getPackage(owner, 'container', image))!;
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
}
