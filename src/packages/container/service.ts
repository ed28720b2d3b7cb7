// The container registry (OCI distribution spec) on the packages core, modelled on Forgejo's:
// an image is a package of type `container` (name in lower case, `/` allowed); every tag and
// every manifest pushed by digest is a version whose lead file `manifest.json` holds the
// manifest's bytes and whose other files (`sha256_<hex>`) name the config and layer blobs. Blobs
// uploaded before a manifest names them are files of the internal version `_upload`; a manifest
// takes them over. A blob is stored once whatever names it, and counted (quota) per file.
//
// This file: images, manifests (a manifest's bytes are a blob like any other), tags and the
// catalog. Blob uploads and reads are blobs.ts, the /v2/token tokens tokens.ts, and the names,
// digests and errors of the distribution spec oci.ts.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { transaction, nowUnix, type Db, type Tx } from '../../db/database.js';
import type { Identity } from '../../auth/identity.js';
import type { EventBus } from '../../events/bus.js';
import { recordUsage } from '../../quota/usage.js';
import * as repoStore from '../../repos/store.js';
import type { BlobStore } from '../../storage/storage.js';
import type { UserRow } from '../../users/tables.js';
import type { Digests } from '../hashing.js';
import { blobKey, SUBJECT, type PackageService } from '../service.js';
import * as core from '../store.js';
import type { PackageRow, VersionRow } from '../tables.js';
import {
  fileNameOf,
  INDEX_TYPES,
  isDigest,
  MANIFEST_TYPES,
  oci,
  retrying,
  shaOf,
  versionOf,
  type ManifestMetadata,
} from './oci.js';
import * as store from './store.js';
import type { ImageFile } from './tables.js';

const CONFIG_MAX = 1 << 20;
const SOURCE = 'org.opencontainers.image.source';

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

function digestsOf(body: Buffer): Digests {
  const h = (a: string) => crypto.createHash(a).update(body).digest('hex');
  return { md5: h('md5'), sha1: h('sha1'), sha256: h('sha256'), sha512: h('sha512') };
}

export interface ContainerServiceDeps {
  db: Db;
  events: EventBus;
  /** Where blobs are (storage.packages): a manifest's config is read from there. */
  blobs: BlobStore;
  rootUrl: string;
  packages: Pick<
    PackageService,
    | 'getPackage'
    | 'assertCanReadPackage'
    | 'checkLimits'
    | 'withBlobLock'
    | 'removeBlobs'
    | 'eventInfo'
    | 'deleteVersion'
    | 'requireOwner'
    | 'packageById'
  >;
}

export class ContainerService {
  private readonly db: Db;
  private readonly blobs: BlobStore;
  private readonly packages: ContainerServiceDeps['packages'];

  constructor(private readonly deps: ContainerServiceDeps) {
    this.db = deps.db;
    this.blobs = deps.blobs;
    this.packages = deps.packages;
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
      await this.deps.events.emit('package.created', {
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
    const pkg = await store.ensureImage(tx, owner.id, image);
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
    const root = this.deps.rootUrl;
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
