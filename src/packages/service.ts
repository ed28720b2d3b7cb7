// The package registry core, shared by every format: who may read and write an owner's packages,
// content-addressed blobs (one stored object per distinct SHA-256, named `sha[0:2]/sha[2:4]/sha`),
// adding a file to a version in one transaction with its quota usage, deleting versions and files,
// the owner-wide limits of [packages], and package events (quota and account deletion: quota.ts).
//
// An upload streams into a temporary object while its MD5, SHA-1, SHA-256 and SHA-512 are
// computed in the same pass (hashing.ts); it then takes the place of the blob named by its SHA-256 (or is
// dropped when that blob is already stored) and the rows are written in one transaction. When
// that transaction fails, a blob no row names is removed again: a failed upload leaves nothing.
// Blob placement and removal for one digest are serialized in this process, so a deletion can
// never remove an object an upload has just decided to reuse.
import crypto from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { AppError, badRequest, conflict, forbidden, notFound, unauthorized } from '../errors.js';
import type { EventBus, PackageEventInfo } from '../events/bus.js';
import { KeyedLock } from '../locks.js';
import type { Identity } from '../auth/identity.js';
import { viewerOf } from '../auth/identity.js';
import type { OrgService } from '../orgs/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { ItemSources, QuotaService } from '../quota/service.js';
import type { RepoService } from '../repos/service.js';
import { recordUsage, type UsageSource } from '../quota/usage.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import type { BlobReferences } from '../storage/sweep.js';
import type { BlobStore } from '../storage/storage.js';
import { hasScope } from '../tokens/scopes.js';
import type { OwnedResources } from '../users/owned.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { UserType, Visibility } from '../users/tables.js';
import { hashingStream, stopHashWorkers, type Digests } from './hashing.js';
import { uploadOfPart } from './container/parts.js';
import { existingUploads } from './container/store.js';
import { ownedPackages, packageItems, packageUsage, SUBJECT } from './quota.js';
import * as store from './store.js';
import type { FileWithBlob, PackageRow, PackageType, VersionRow, VersionWithPackage } from './tables.js';

export { packageHtmlUrl, SUBJECT } from './quota.js';

// A version as package events carry it (declared with the events, events/bus.ts).
export type { PackageEventInfo } from '../events/bus.js';

/**
 * The caller may not read (or write) an owner's packages, or their token lacks the package scope
 * for it. The REST API answers 403; the package-manager endpoints answer 401 with their challenge
 * (`WWW-Authenticate`), as Forgejo's do, so that a client holding another account's credentials is
 * asked for others.
 */
export class PackageAccessDenied extends AppError {
  constructor(message: string) {
    super('forbidden', message);
    this.name = 'PackageAccessDenied';
  }
}

export const blobKey = (sha256: string) => `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;

/** What a file is: its package, version and name (already validated by the format). */
export interface FileIdentity {
  name: string;
  version: string;
  fileName: string;
  /** Metadata JSON of a new version. */
  metadata?: string;
}

/**
 * A file to add: its identity as given, or `describe`, which reads it from the stored file when
 * only the file says it (a Go module zip): called once the bytes are stored and `verify` has
 * passed, after which the checks that need the identity (409, the version count) are made.
 */
export type AddFileInput = AddFileOptions &
  (FileIdentity | { describe: (stored: StoredFile) => Promise<FileIdentity> });

interface AddFileOptions {
  owner: UserRow;
  creator: UserRow;
  type: PackageType;
  isLead?: boolean;
  /**
   * Tells files of one name in a version apart (Conda: the subdir). A function when the file
   * itself says it: it is called once the bytes are stored and `verify` has passed.
   */
  compositeKey?: string | (() => string);
  data: Readable;
  /** npm: the version must not exist yet (409); generic: files are added to an existing one. */
  newVersionOnly: boolean;
  /** A file of that name in the version is replaced instead of refused with 409 (Maven SNAPSHOTs). */
  overwrite?: boolean;
  /**
   * Checks the stored bytes before anything is kept: a client's checksum against the digests, or
   * a format's metadata read back from the stored file (`stored.open`).
   */
  verify?: (digests: Digests, stored: StoredFile) => void | Promise<void>;
  /** Runs inside the transaction once the rows exist (format-specific properties). */
  inTransaction?: (
    tx: Tx,
    pkg: PackageRow,
    version: VersionRow,
    created: boolean,
    fileId: number,
    file: FileWithBlob,
  ) => Promise<void>;
}

/** An uploaded file once stored, before it is kept (for `verify`). */
export interface StoredFile {
  size: number;
  /** Its bytes (a range, end inclusive). */
  open(range?: { start: number; end?: number }): Promise<Readable>;
}

export interface AddedFile {
  pkg: PackageRow;
  version: VersionRow;
  file: FileWithBlob;
  versionCreated: boolean;
}

export interface PackageServiceDeps {
  db: Db;
  log: Logger;
  events: EventBus;
  /** Where blobs are (storage.packages). */
  blobs: BlobStore;
  /** [packages]: ENABLED and the limits (read when used). */
  settings: Config['packages'];
  rootUrl: string;
  quota: Pick<QuotaService, 'check'>;
  users: Pick<UserService, 'getById' | 'getByName' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee'>;
  repos: Pick<RepoService, 'getById' | 'getByIds' | 'access'>;
  usageSources: UsageSource[];
  quotaItems: ItemSources;
  owned: OwnedResources[];
  blobReferences: BlobReferences[];
}

export class PackageService {
  /** Blob writes and removals of one sha256 in this process take turns. */
  private readonly blobLocks = new KeyedLock<string>();
  private readonly db: Db;
  private readonly blobs: BlobStore;

  constructor(private readonly deps: PackageServiceDeps) {
    this.db = deps.db;
    this.blobs = deps.blobs;
    deps.usageSources.push(packageUsage);
    deps.quotaItems.packages = packageItems(deps.users, deps.rootUrl);
    deps.owned.push(ownedPackages((shas) => this.removeBlobs(shas)));
    deps.blobReferences.push({
      label: 'package files',
      store: 'packages',
      prefix: '',
      referenced: async (keys) => {
        // A key not named like a blob's (sha[0:2]/sha[2:4]/sha256) is referenced by nothing, but
        // for the parts of container upload sessions still open.
        const bySha = new Map<string, string>();
        const byUpload = new Map<string, string[]>();
        for (const key of keys) {
          const sha = key.slice(key.lastIndexOf('/') + 1);
          const upload = uploadOfPart(key);
          if (/^[0-9a-f]{64}$/.test(sha) && blobKey(sha) === key) bySha.set(sha, key);
          else if (upload) byUpload.set(upload, [...(byUpload.get(upload) ?? []), key]);
        }
        const held = await store.existingBlobs(deps.db, [...bySha.keys()]);
        const open = await existingUploads(deps.db, [...byUpload.keys()]);
        return new Set([
          ...[...held].map((sha) => bySha.get(sha)!),
          ...[...open].flatMap((id) => byUpload.get(id)!),
        ]);
      },
    });
  }

  /** Stops the hashing workers (ctx.close). */
  stop(): Promise<void> {
    return stopHashWorkers();
  }

  assertEnabled(): void {
    if (!this.deps.settings.enabled) {
      throw notFound('Packages are disabled on this server ([packages] ENABLED = false)');
    }
  }

  // Access

  /** Whether `identity` sees the account `owner` (its packages are as visible as it is). */
  private async seesOwner(identity: Identity | null, owner: UserRow): Promise<boolean> {
    const viewer = viewerOf(identity);
    if (owner.type === UserType.Organization) return this.deps.orgs.canSee(viewer, owner);
    return this.deps.users.canSee(viewer, owner);
  }

  /**
   * The owner `name` when `identity` may read (or write) its packages. Anonymous callers who may
   * not get 401, so that clients send credentials; others `PackageAccessDenied` (403 in the REST
   * API, 401 with a challenge from the package managers' endpoints), 404 for an unknown owner.
   * Tokens need `read:package` for non-public owners and `write:package` to write; a public-only
   * token reaches no owner that is not public (403).
   */
  async requireOwner(name: string, identity: Identity | null, need: 'read' | 'write'): Promise<UserRow> {
    this.assertEnabled();
    const owner = /^[\w.-]{1,255}$/.test(name) ? await this.deps.users.getByName(name) : undefined;
    if (!owner) {
      if (!identity && need === 'write') throw unauthorized('authentication required');
      throw notFound(`owner does not exist [name: ${name}]`);
    }
    if (need === 'write') {
      if (!identity) throw unauthorized('authentication required');
      if (!hasScope(identity.scopes, 'package', 'write')) {
        throw new PackageAccessDenied(
          'token does not have at least one of required scope(s): [write:package]',
        );
      }
      if (identity.scopes.publicOnly && owner.visibility !== Visibility.public) {
        throw forbidden('token scope is limited to public packages');
      }
      if (!(await this.mayWrite(identity, owner))) {
        throw new PackageAccessDenied(`${identity.user.name} may not write packages of ${owner.name}`);
      }
      return owner;
    }
    if (identity?.scopes.publicOnly && owner.visibility !== Visibility.public) {
      throw forbidden('token scope is limited to public packages');
    }
    if (!(await this.seesOwner(identity, owner))) {
      if (!identity) throw unauthorized('authentication required');
      throw new PackageAccessDenied(`${identity.user.name} may not read packages of ${owner.name}`);
    }
    if (owner.visibility !== Visibility.public && identity && !hasScope(identity.scopes, 'package', 'read')) {
      throw new PackageAccessDenied('token does not have at least one of required scope(s): [read:package]');
    }
    return owner;
  }

  private async mayWrite(identity: Identity, owner: UserRow): Promise<boolean> {
    const user = identity.user;
    if (user.is_admin === 1 || user.id === owner.id) return true;
    if (identity.repoId !== undefined || identity.scopes.publicOnly) return false;
    if (owner.type !== UserType.Organization) return false;
    return (await store.teamPackageMode(this.db, owner.id, user.id)) >= AccessMode.write;
  }

  /** A package linked to a repository is read as that repository is (404 otherwise). */
  async assertCanReadPackage(pkg: PackageRow, identity: Identity | null): Promise<void> {
    if (pkg.repo_id === null) return;
    const repo = await this.deps.repos.getById(pkg.repo_id);
    if (!repo) return;
    const access = await this.deps.repos.access(repo, viewerOf(identity));
    if (access.mode < AccessMode.read) {
      if (!identity) throw unauthorized('authentication required');
      throw notFound('package does not exist');
    }
  }

  // Reading

  getPackage(owner: UserRow, type: string, name: string) {
    return store.getPackage(this.db, owner.id, type, name.toLowerCase());
  }

  async requirePackage(owner: UserRow, type: string, name: string, identity: Identity | null) {
    const pkg = await this.getPackage(owner, type, name);
    if (!pkg) throw notFound(`package does not exist [name: ${name}]`);
    await this.assertCanReadPackage(pkg, identity);
    return pkg;
  }

  async requireVersion(
    owner: UserRow,
    type: string,
    name: string,
    version: string,
    identity: Identity | null,
  ): Promise<{ pkg: PackageRow; version: VersionRow }> {
    const pkg = await this.requirePackage(owner, type, name, identity);
    const v = await store.getVersion(this.db, pkg.id, version.toLowerCase());
    if (!v) throw notFound(`package version does not exist [name: ${name}, version: ${version}]`);
    return { pkg, version: v };
  }

  /** A file of a version the identity may read (`requireVersion`, then `requireFile`). */
  async requireVersionFile(
    owner: UserRow,
    type: string,
    name: string,
    version: string,
    fileName: string,
    identity: Identity | null,
    compositeKey = '',
  ): Promise<FileWithBlob> {
    const found = await this.requireVersion(owner, type, name, version, identity);
    return this.requireFile(found.version.id, fileName, compositeKey);
  }

  versionsOf(pkg: PackageRow) {
    return store.versionsOf(this.db, pkg.id);
  }

  versionsOfPackages(pkgs: PackageRow[]) {
    return store.versionsOfPackages(
      this.db,
      pkgs.map((p) => p.id),
    );
  }

  filesOf(versionIds: number[]) {
    return store.filesOfVersions(this.db, versionIds);
  }

  async requireFile(versionId: number, fileName: string, compositeKey = ''): Promise<FileWithBlob> {
    const f = await store.getFile(this.db, versionId, fileName.toLowerCase(), compositeKey);
    if (!f) throw notFound(`package file does not exist [name: ${fileName}]`);
    return f;
  }

  /**
   * A presigned URL of the file when the packages store serves downloads directly ([packages]
   * SERVE_DIRECT on S3), counting the download as `open` does; undefined when Anvil streams it.
   */
  async directUrl(file: FileWithBlob, count = true): Promise<string | undefined> {
    const url = await this.blobs.directUrl?.(blobKey(file.hash_sha256), { filename: file.name });
    if (url && count) await store.countDownload(this.db, file.version_id);
    return url;
  }

  /** The content of a file (a byte range, end inclusive), counting a download unless told not to. */
  async open(file: FileWithBlob, range?: { start: number; end: number }, count = true): Promise<Readable> {
    const stream = await this.blobs.open(blobKey(file.hash_sha256), range);
    if (count && (!range || range.start === 0)) await store.countDownload(this.db, file.version_id);
    return stream;
  }

  list(
    owner: UserRow,
    f: { type?: string | undefined; q?: string | undefined; repoId?: number | undefined },
    limit: number,
    offset: number,
  ) {
    return store.listVersions(this.db, owner.id, f, limit, offset);
  }

  /** One page of the owner's packages, each as its latest version with its number of versions. */
  listPackages(
    owner: UserRow,
    f: { type?: string | undefined; q?: string | undefined; repoId?: number | undefined },
    limit: number,
    offset: number,
  ) {
    return store.listPackages(this.db, owner.id, f, limit, offset);
  }

  /** Every owner's versions (site administration), newest first, with their sizes. */
  listAll(f: { type?: string | undefined; q?: string | undefined }, limit: number, offset: number) {
    return store.listAllVersions(this.db, f, limit, offset);
  }

  /** Deletes the version `versionId` of any owner (site administration); 404 when there is none. */
  async deleteVersionById(versionId: number, doer: UserRow): Promise<VersionWithPackage> {
    const v = await store.versionWithPackage(this.db, versionId);
    const pkg = v ? await store.getPackageById(this.db, v.package_id) : undefined;
    if (!v || !pkg) throw notFound('The package version does not exist.');
    await this.deleteVersion(pkg, v, doer);
    return v;
  }

  search(owner: UserRow, type: string, text: string, limit: number, offset: number) {
    return store.searchPackages(this.db, owner.id, type, text, limit, offset);
  }

  properties(refType: number, refIds: number[], name?: string) {
    return store.properties(this.db, refType, refIds, name);
  }

  // Writing

  /** Size, count and quota checks that can be made before any byte is read. */
  async checkLimits(owner: UserRow, creator: UserRow, type: PackageType, announced?: number) {
    const limits = this.deps.settings;
    if (!(await this.deps.quota.check(owner.id, SUBJECT))) {
      throw new AppError('payload_too_large', 'quota exceeded');
    }
    if (creator.is_admin === 1) return;
    const typeLimit = this.sizeLimit(type, creator);
    if (announced !== undefined && typeLimit >= 0 && announced > typeLimit) {
      throw forbidden(`the package file is larger than the limit of ${typeLimit} bytes`);
    }
    if (limits.limitTotalOwnerSize >= 0) {
      const used = (await store.ownerTotals(this.db, owner.id))[0]?.total ?? 0;
      if (used + (announced ?? 0) > limits.limitTotalOwnerSize) {
        throw forbidden(`the packages of ${owner.name} would exceed ${limits.limitTotalOwnerSize} bytes`);
      }
    }
  }

  sizeLimit(type: PackageType, creator: UserRow): number {
    if (creator.is_admin === 1) return -1;
    const l = this.deps.settings;
    const limits: Record<PackageType, number> = {
      generic: l.limitSizeGeneric,
      npm: l.limitSizeNpm,
      maven: l.limitSizeMaven,
      pypi: l.limitSizePypi,
      cargo: l.limitSizeCargo,
      conda: l.limitSizeConda,
      go: l.limitSizeGo,
      composer: l.limitSizeComposer,
      debian: l.limitSizeDebian,
      rubygems: l.limitSizeRubygems,
      rpm: l.limitSizeRpm,
      alt: l.limitSizeAlt,
      arch: l.limitSizeArch,
      cran: l.limitSizeCran,
      helm: l.limitSizeHelm,
      vagrant: l.limitSizeVagrant,
      pub: l.limitSizePub,
      chef: l.limitSizeChef,
      conan: l.limitSizeConan,
      swift: l.limitSizeSwift,
      alpine: l.limitSizeAlpine,
      nuget: l.limitSizeNuget,
      container: l.limitSizeContainer,
    };
    return limits[type];
  }

  /** Runs `fn` with the blob `sha256` to itself (in this process). */
  withBlobLock<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    return this.blobLocks.run(sha256, fn);
  }

  /**
   * Adds a file to a package version (both created when absent) from a stream: 409 when the
   * file exists (or, with `newVersionOnly`, the version), 413 over quota, 403 over a [packages]
   * limit. Nothing is kept when anything fails.
   */
  async addFile(input: AddFileInput, announced?: number): Promise<AddedFile> {
    const { owner, creator, type } = input;
    const earlyKey = typeof input.compositeKey === 'string' ? input.compositeKey : undefined;
    const given = 'describe' in input ? undefined : input;
    await this.checkLimits(owner, creator, type, announced);
    // Conflicts found before reading the body spare the upload.
    if (given) await this.checkNew(input, given, earlyKey);

    const tmp = `tmp/${crypto.randomUUID()}`;
    const hasher = hashingStream(this.sizeLimit(type, creator), announced);
    const hashed = pipeline(input.data, hasher, () => undefined);
    try {
      await this.blobs.put(tmp, hashed);
    } catch (err) {
      input.data.destroy();
      await this.blobs.delete(tmp).catch(() => undefined);
      throw err;
    }
    const digests = hasher.digests();
    const size = hasher.size;
    let compositeKey = earlyKey ?? '';
    let id: FileIdentity;
    try {
      const stored: StoredFile = { size, open: (range) => this.blobs.open(tmp, range) };
      if (input.verify) await input.verify(digests, stored);
      if ('describe' in input) {
        id = await input.describe(stored);
        await this.checkNew(input, id, earlyKey);
      } else id = input;
      if (typeof input.compositeKey === 'function') compositeKey = input.compositeKey();
    } catch (err) {
      await this.blobs.delete(tmp).catch(() => undefined);
      throw err;
    }
    const lowerName = id.name.toLowerCase();
    const lowerVersion = id.version.toLowerCase();
    const lowerFile = id.fileName.toLowerCase();
    const key = blobKey(digests.sha256);

    const result = await this.withBlobLock(digests.sha256, async () => {
      let placed = false;
      if (await this.blobs.stat(key)) await this.blobs.delete(tmp);
      else {
        await this.blobs.move(tmp, key);
        placed = true;
      }
      try {
        return await transaction(this.db, async (tx) => {
          const now = nowUnix();
          const blob = await store.ensureBlob(tx, {
            size,
            hash_md5: digests.md5,
            hash_sha1: digests.sha1,
            hash_sha256: digests.sha256,
            hash_sha512: digests.sha512,
            created_unix: now,
          });
          const pkg = await store.ensurePackage(tx, {
            owner_id: owner.id,
            repo_id: null,
            type,
            name: id.name,
            lower_name: lowerName,
            created_unix: now,
          });
          let version = await store.getVersion(tx, pkg.id, lowerVersion);
          let created = false;
          if (version && input.newVersionOnly) {
            throw conflict(`package version already exists [version: ${id.version}]`);
          }
          if (!version) {
            version = await store.insertVersion(tx, {
              package_id: pkg.id,
              creator_id: creator.id,
              version: id.version,
              lower_version: lowerVersion,
              metadata_json: id.metadata ?? '{}',
              created_unix: now,
            });
            created = true;
          }
          const replaced = await store.getFile(tx, version.id, lowerFile, compositeKey);
          if (replaced && !input.overwrite) {
            throw conflict(`package file already exists [name: ${id.fileName}]`);
          }
          if (replaced) {
            await store.deleteFiles(tx, [replaced.id]);
            await recordUsage(tx, owner.id, SUBJECT, -Number(replaced.size));
          }
          const fileId = await store.insertFile(tx, {
            version_id: version.id,
            blob_id: blob.id,
            name: id.fileName,
            lower_name: lowerFile,
            composite_key: compositeKey,
            is_lead: input.isLead ? 1 : 0,
            created_unix: now,
          });
          await recordUsage(tx, owner.id, SUBJECT, Number(blob.size));
          await store.bumpRevision(tx, pkg.id);
          const file: FileWithBlob = {
            id: fileId,
            version_id: version.id,
            blob_id: blob.id,
            name: id.fileName,
            lower_name: lowerFile,
            composite_key: compositeKey,
            is_lead: input.isLead ? 1 : 0,
            created_unix: now,
            size: Number(blob.size),
            hash_md5: blob.hash_md5,
            hash_sha1: blob.hash_sha1,
            hash_sha256: blob.hash_sha256,
            hash_sha512: blob.hash_sha512,
          };
          if (input.inTransaction) await input.inTransaction(tx, pkg, version, created, fileId, file);
          // The replaced file's blob, when no file names it any more, goes after the commit.
          const orphans = replaced ? await store.removeUnreferencedBlobs(tx, [replaced.blob_id]) : [];
          return { pkg, version, file, versionCreated: created, orphans };
        });
      } catch (err) {
        if (placed && !(await store.getBlob(this.db, digests.sha256))) {
          await this.blobs.delete(key).catch(() => undefined);
        }
        throw unique(err);
      }
    });
    const { orphans, ...added } = result;
    await this.removeBlobs(orphans);
    if (added.versionCreated) {
      await this.deps.events.emit('package.created', {
        package: this.eventInfo(added.pkg, added.version),
        doerId: creator.id,
      });
    }
    return added;
  }

  /**
   * What can be refused before a file is kept: its version exists (`newVersionOnly`) or already
   * has the file (409), or a new version would pass [packages] LIMIT_TOTAL_OWNER_COUNT (403).
   */
  private async checkNew(input: AddFileOptions, id: FileIdentity, earlyKey: string | undefined) {
    const { owner, creator, type } = input;
    const existing = await store.getPackage(this.db, owner.id, type, id.name.toLowerCase());
    const existingVersion =
      existing && (await store.getVersion(this.db, existing.id, id.version.toLowerCase()));
    if (existingVersion) {
      if (input.newVersionOnly) throw conflict(`package version already exists [version: ${id.version}]`);
      const known = earlyKey !== undefined || input.compositeKey === undefined;
      if (
        known &&
        !input.overwrite &&
        (await store.getFile(this.db, existingVersion.id, id.fileName.toLowerCase(), earlyKey))
      ) {
        throw conflict(`package file already exists [name: ${id.fileName}]`);
      }
    } else if (creator.is_admin !== 1 && this.deps.settings.limitTotalOwnerCount >= 0) {
      const count = await store.ownerVersionCount(this.db, owner.id);
      if (count >= this.deps.settings.limitTotalOwnerCount) {
        throw forbidden(`${owner.name} has reached the limit of ${count} package versions`);
      }
    }
  }

  eventInfo(pkg: PackageRow, v: VersionRow): PackageEventInfo {
    return {
      versionId: v.id,
      ownerId: pkg.owner_id,
      repoId: pkg.repo_id,
      creatorId: v.creator_id,
      type: pkg.type,
      name: pkg.name,
      version: v.version,
      createdUnix: v.created_unix,
    };
  }

  /** Writes format metadata or properties of the package's versions in one transaction. */
  update<T>(pkg: PackageRow, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return transaction(this.db, async (tx) => {
      const out = await fn(tx);
      await store.bumpRevision(tx, pkg.id);
      return out;
    });
  }

  /** Removes a version, its files and properties, and their usage; the package goes with its last version. */
  async deleteVersion(pkg: PackageRow, version: VersionRow, doer: UserRow): Promise<void> {
    const orphans = await transaction(this.db, async (tx) => {
      const files = await store.filesOfVersions(tx, [version.id]);
      const bytes = files.reduce((n, f) => n + Number(f.size), 0);
      await store.deleteFiles(
        tx,
        files.map((f) => f.id),
      );
      await store.deleteVersion(tx, version.id);
      if ((await store.countVersions(tx, pkg.id)) === 0) await store.deletePackage(tx, pkg.id);
      else await store.bumpRevision(tx, pkg.id);
      if (bytes) await recordUsage(tx, pkg.owner_id, SUBJECT, -bytes);
      return store.removeUnreferencedBlobs(
        tx,
        files.map((f) => f.blob_id),
      );
    });
    await this.removeBlobs(orphans);
    await this.deps.events.emit('package.deleted', {
      package: this.eventInfo(pkg, version),
      doerId: doer.id,
    });
  }

  /** Removes one file; the version goes with its last file. */
  deleteFile(pkg: PackageRow, version: VersionRow, file: FileWithBlob, doer: UserRow): Promise<void> {
    return this.deleteFiles(pkg, version, [file], doer);
  }

  /** Removes files of a version in one transaction; the version goes with its last file. */
  async deleteFiles(
    pkg: PackageRow,
    version: VersionRow,
    files: FileWithBlob[],
    doer: UserRow,
  ): Promise<void> {
    const gone = new Set(files.map((f) => f.id));
    const remaining = (await store.filesOfVersions(this.db, [version.id])).filter((f) => !gone.has(f.id));
    if (remaining.length === 0) return this.deleteVersion(pkg, version, doer);
    const orphans = await transaction(this.db, async (tx) => {
      await store.deleteFiles(tx, [...gone]);
      await store.bumpRevision(tx, pkg.id);
      await recordUsage(tx, pkg.owner_id, SUBJECT, -files.reduce((n, f) => n + Number(f.size), 0));
      return store.removeUnreferencedBlobs(
        tx,
        files.map((f) => f.blob_id),
      );
    });
    await this.removeBlobs(orphans);
  }

  /** Stored objects of blobs whose rows are gone (checked again under the blob's lock). */
  async removeBlobs(shas: string[]): Promise<void> {
    for (const sha of shas) {
      await this.withBlobLock(sha, async () => {
        if (await store.getBlob(this.db, sha)) return;
        await this.blobs.delete(blobKey(sha)).catch((err: unknown) => {
          this.deps.log.error({ err, sha }, 'removing a package blob failed');
        });
      });
    }
  }

  packageById(id: number) {
    return store.getPackageById(this.db, id);
  }

  /** Removes a blob row no file names (any more) and its object; whether it did (the cleanup job). */
  async removeOrphanBlob(id: number, sha256: string): Promise<boolean> {
    return this.withBlobLock(sha256, async () => {
      if (!(await store.deleteBlobIfUnreferenced(this.db, id))) return false;
      await this.blobs.delete(blobKey(sha256)).catch((err: unknown) => {
        this.deps.log.error({ err, sha256 }, 'removing a package blob failed');
      });
      return true;
    });
  }

  /** Removes a package left with no version (the cleanup job); whether it did. */
  async removeIfEmpty(packageId: number): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      if ((await store.countVersions(tx, packageId)) > 0) return false;
      await store.deletePackage(tx, packageId);
      return true;
    });
  }

  async link(pkg: PackageRow, owner: UserRow, repoName: string): Promise<void> {
    const repo = /^[\w.-]{1,255}$/.test(repoName)
      ? await repoStore.getByOwnerAndName(this.db, owner.name, repoName)
      : undefined;
    if (!repo || repo.owner_id !== owner.id) throw notFound(`repository does not exist [name: ${repoName}]`);
    if (pkg.repo_id !== null) throw badRequest('package is already linked to a repository');
    await store.setRepo(this.db, pkg.id, repo.id);
  }

  async unlink(pkg: PackageRow): Promise<void> {
    await store.setRepo(this.db, pkg.id, null);
  }

  reposByIds(ids: number[]): Promise<Map<number, RepoRow>> {
    return this.deps.repos.getByIds([...new Set(ids)]);
  }
}

/** A unique-constraint race (two uploads of the same file at once) is a 409, not a 500. */
function unique(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const msg = err instanceof Error ? err.message : '';
  if (/UNIQUE constraint|duplicate key/i.test(msg)) return conflict('package file already exists');
  return err;
}
