// The Composer format: package zips whose composer.json (at the root, or in the one folder the
// zip holds, as GitHub's archives have it) names the package (`vendor/name`, Composer's rule) and
// usually its version (else the upload's `version` parameter). What Composer needs to resolve
// and install is kept as the version's metadata (require and its kin, autoload, bin, ...), with
// the readme's first 10 KiB; the package type as the version property `composer.type` (as in
// Forgejo). Metadata for Composer 2 (`p2/{vendor}/{name}.json`) lists every version in full, the
// zip as its dist with the SHA-1 Composer checks.
import type { Readable } from 'node:stream';
import { badRequest } from '../../errors.js';
import type { Identity } from '../../auth/identity.js';
import type { UserRow } from '../../users/tables.js';
import * as store from '../store.js';
import type { FileIdentity, PackageService, StoredFile } from '../service.js';
import { PropertyRef, type PackageRow, type VersionRow } from '../tables.js';
import { openZipMember, readZipDirectory, readZipMember, type ZipEntry } from '../zip.js';

export const TYPE = 'composer.type';
/** Composer's (and Forgejo's) rule for package names. */
const NAME = /^[a-z0-9]([_.-]?[a-z0-9]+)*\/[a-z0-9](([_.]?|-{0,2})[a-z0-9]+)*$/;
/**
 * Versions Composer's version parser takes (build metadata aside): up to four numbers, an
 * optional stability (`-beta2`, `-RC1`, `.patch1`) and `-dev`.
 */
const VERSION =
  /^v?\d{1,5}(\.\d+){0,3}([._-]?(stable|beta|b|rc|alpha|a|patch|pl|p)((?:[.-]?\d+)*)?)?([.-]?dev)?(\+[0-9a-z.-]+)?$/i;
const MAX_COMPOSER_JSON = 10 << 20;
const MAX_README = 10 << 10;
/** The fields of composer.json kept for installs and for reading (https://getcomposer.org/doc/04-schema.md). */
const KEPT = [
  'description',
  'keywords',
  'homepage',
  'license',
  'authors',
  'bin',
  'autoload',
  'autoload-dev',
  'extra',
  'require',
  'require-dev',
  'suggest',
  'provide',
  'conflict',
  'replace',
  'support',
  'funding',
  'include-path',
  'target-dir',
  'notification-url',
  '_comment',
] as const;
const LINKS = ['require', 'require-dev', 'suggest', 'provide', 'conflict', 'replace'] as const;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

export const isPackageName = (name: string) => name.length <= 255 && NAME.test(name);
export const isVersion = (version: string) => version.length <= 255 && VERSION.test(version);

/** What a package zip says of itself. */
export interface ComposerPackage {
  name: string;
  version: string;
  type: string;
  /** The kept fields of composer.json, and `readme` (its text). */
  metadata: Json;
}

/**
 * The package in a zip (400 when it is no zip, has no composer.json at its root or in its one
 * folder, or names no valid package or version); `version` when composer.json has none.
 */
export async function readComposerZip(file: StoredFile, version?: string): Promise<ComposerPackage> {
  const what = 'the package zip';
  const entries = await readZipDirectory(file, what);
  const byName = new Map<string, ZipEntry>(entries.map((e) => [e.name, e]));
  const manifest = entries.find((e) => /^(?:[^/]+\/)?composer\.json$/i.test(e.name));
  if (!manifest) throw badRequest(`${what} has no composer.json (at its root or in its one folder)`);
  const folder = manifest.name.slice(0, manifest.name.lastIndexOf('/') + 1);
  let cj: Json | undefined;
  try {
    cj = obj(JSON.parse((await readZipMember(file, manifest, what, MAX_COMPOSER_JSON)).toString('utf8')));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
  }
  if (!cj) throw badRequest('composer.json is not a JSON object');
  const name = cj['name'];
  if (typeof name !== 'string' || !isPackageName(name)) {
    throw badRequest(`invalid package name in composer.json [name: ${String(name)}]`);
  }
  const v = typeof cj['version'] === 'string' && cj['version'] !== '' ? cj['version'] : version;
  if (!v) throw badRequest('composer.json has no version: give one as the version parameter');
  if (!isVersion(v)) throw badRequest(`invalid package version [version: ${v}]`);
  const type = typeof cj['type'] === 'string' && /^[\w-]{1,64}$/.test(cj['type']) ? cj['type'] : 'library';

  const metadata: Json = {};
  for (const field of KEPT) if (cj[field] !== undefined && cj[field] !== null) metadata[field] = cj[field];
  for (const field of LINKS) {
    const links = metadata[field];
    if (links === undefined) continue;
    if (!obj(links) || Object.values(links as Json).some((c) => typeof c !== 'string')) {
      throw badRequest(`${field} in composer.json must map package names to constraints`);
    }
  }
  if (typeof metadata['license'] === 'string') metadata['license'] = [metadata['license']];
  if (typeof metadata['homepage'] === 'string' && !/^https?:\/\//i.test(metadata['homepage'])) {
    delete metadata['homepage'];
  }
  const readmeName = typeof cj['readme'] === 'string' && cj['readme'] ? cj['readme'] : 'README.md';
  const readme = byName.get(`${folder}${readmeName}`);
  if (readme) {
    const text = await head(file, readme, MAX_README).catch(() => undefined);
    if (text?.length) metadata['readme'] = text.toString('utf8');
  }
  return { name, version: v, type, metadata };
}

/** The first `max` bytes of a zip member (a readme: no more is read, however large it is). */
async function head(file: StoredFile, entry: ZipEntry, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  const stream = await openZipMember(file, entry, 'the package zip');
  for await (const c of stream) {
    chunks.push(c as Buffer);
    n += (c as Buffer).length;
    if (n >= max) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, max);
}

export interface ComposerServiceDeps {
  packages: PackageService;
  rootUrl: string;
}

export class ComposerService {
  private readonly packages: PackageService;

  constructor(private readonly deps: ComposerServiceDeps) {
    this.packages = deps.packages;
  }

  /** The registry's root, for URLs in documents. */
  base(owner: UserRow): string {
    return `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/composer`;
  }

  /** packages.json: where Composer finds search, metadata and the list. */
  serviceIndex(owner: UserRow): Json {
    const base = this.base(owner);
    return {
      search: `${base}/search.json?q=%query%&type=%type%`,
      'metadata-url': `${base}/p2/%package%.json`,
      list: `${base}/list.json`,
    };
  }

  /** Uploads a package zip (a version that exists is 400, as in Forgejo). */
  async upload(
    owner: UserRow,
    creator: UserRow,
    data: Readable,
    version: string | undefined,
    announced?: number,
  ): Promise<ComposerPackage> {
    let pkg: ComposerPackage | undefined;
    const describe = async (stored: StoredFile): Promise<FileIdentity> => {
      pkg = await readComposerZip(stored, version);
      const existing = await this.packages.getPackage(owner, 'composer', pkg.name);
      const versions = existing ? await this.packages.versionsOf(existing) : [];
      if (versions.some((v) => v.lower_version === pkg!.version.toLowerCase())) {
        throw badRequest(`package version already exists [version: ${pkg.version}]`);
      }
      return {
        name: pkg.name,
        version: pkg.version,
        fileName: `${pkg.name.replace('/', '-')}.${pkg.version}.zip`.toLowerCase(),
        metadata: JSON.stringify(pkg.metadata),
      };
    };
    await this.packages.addFile(
      {
        owner,
        creator,
        type: 'composer',
        isLead: true,
        data,
        newVersionOnly: true,
        describe,
        inTransaction: async (tx, _pkg, v) => {
          await store.addProperty(tx, PropertyRef.version, v.id, TYPE, pkg!.type);
        },
      },
      announced,
    );
    return pkg!;
  }

  requirePackage(owner: UserRow, name: string, identity: Identity | null): Promise<PackageRow> {
    return this.packages.requirePackage(owner, 'composer', name, identity);
  }

  /** The package's metadata for Composer 2: every version with its dist (and its source when linked). */
  async metadata(owner: UserRow, pkg: PackageRow): Promise<Json> {
    const versions = await this.packages.versionsOf(pkg);
    const ids = versions.map((v) => v.id);
    const [files, types, repos] = await Promise.all([
      this.packages.filesOf(ids),
      this.packages.properties(PropertyRef.version, ids, TYPE),
      this.packages.reposByIds(pkg.repo_id === null ? [] : [pkg.repo_id]),
    ]);
    const repo = pkg.repo_id === null ? undefined : repos.get(pkg.repo_id);
    const base = this.base(owner);
    const out = [];
    for (const v of versions) {
      const file = files.find((f) => f.version_id === v.id && f.is_lead === 1);
      if (!file) continue;
      const entry: Json = {
        ...(JSON.parse(v.metadata_json) as Json),
        name: pkg.name,
        version: v.version,
        type: types.find((t) => t.ref_id === v.id)?.value ?? 'library',
        time: new Date(v.created_unix * 1000).toISOString(),
        dist: {
          type: 'zip',
          url: `${base}/files/${encodeURIComponent(pkg.lower_name)}/${encodeURIComponent(v.lower_version)}/${encodeURIComponent(file.lower_name)}`,
          shasum: file.hash_sha1,
        },
      };
      if (repo) {
        entry['source'] = {
          url: `${this.deps.rootUrl}${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`,
          type: 'git',
          reference: v.version,
        };
      }
      out.push(entry);
    }
    return { packages: { [pkg.name]: out } };
  }

  /** The names of the owner's packages (list.json). */
  async names(owner: UserRow): Promise<string[]> {
    const [pkgs] = await this.packages.search(owner, 'composer', '', 100_000, 0);
    return pkgs.map((p) => p.name);
  }

  /** search.json: packages whose name holds `q` (of package type `type` when given), each by its newest version. */
  async search(owner: UserRow, q: string, type: string, page: number, perPage: number) {
    const [pkgs, total] = await this.packages.search(owner, 'composer', q, perPage, (page - 1) * perPage);
    const all = await this.packages.versionsOfPackages(pkgs);
    const newest = new Map<number, VersionRow>();
    for (const v of all) newest.set(v.package_id, v);
    const typeOf = new Map(
      (
        await this.packages.properties(
          PropertyRef.version,
          [...newest.values()].map((v) => v.id),
          TYPE,
        )
      ).map((p) => [p.ref_id, p.value]),
    );
    const results = [];
    for (const pkg of pkgs) {
      const v = newest.get(pkg.id);
      if (!v || (type && typeOf.get(v.id) !== type)) continue;
      const meta = JSON.parse(v.metadata_json) as Json;
      results.push({
        name: pkg.name,
        description: typeof meta['description'] === 'string' ? meta['description'] : '',
        downloads: Number(v.download_count),
      });
    }
    return { total, results };
  }
}
