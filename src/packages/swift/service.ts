// The Swift package registry (SE-0292, as Forgejo serves it): a package is `{scope}.{name}`, a
// release one source archive `{name}-{version}.zip` with its manifests and metadata kept on the
// version; a release that exists is refused (409). The scope and name as first published are
// package properties, each repository URL of the metadata a version property.
import type { Readable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import type { Db } from '../../db/database.js';
import { AppError, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import { compareSemver } from '../semver.js';
import type { AddedFile, PackageService } from '../service.js';
import * as core from '../store.js';
import { PropertyRef, type FileWithBlob, type PackageRow, type VersionRow } from '../tables.js';
import {
  parseReleaseMetadata,
  PROPERTY_NAME,
  PROPERTY_REPOSITORY_URL,
  PROPERTY_SCOPE,
  readManifests,
  type SwiftMetadata,
} from './metadata.js';
import { packagesByRepositoryUrl } from './store.js';

export interface SwiftServiceDeps {
  db: Db;
  packages: PackageService;
  rootUrl: string;
}

export interface PublishInput {
  owner: UserRow;
  creator: UserRow;
  scope: string;
  name: string;
  /** The version's `major.minor.patch`. */
  version: string;
  archive: Readable;
  /** The `metadata` part as sent (JSON), if any. */
  metadata: string | undefined;
}

export const packageId = (scope: string, name: string) => `${scope}.${name}`;

export class SwiftService {
  constructor(private readonly deps: SwiftServiceDeps) {}

  /** `{root}api/packages/{owner}/swift`. */
  base(owner: UserRow): string {
    return `${this.deps.rootUrl}api/packages/${owner.lower_name}/swift`;
  }

  /** Publishes a release: 400 for a bad archive or metadata, 409 when it exists; nothing kept then. */
  async publish(input: PublishInput): Promise<AddedFile> {
    const { scope, name, version } = input;
    // Bad metadata is refused before a byte of the archive is kept.
    const release = parseReleaseMetadata(input.metadata);
    return this.deps.packages.addFile({
      owner: input.owner,
      creator: input.creator,
      type: 'swift',
      isLead: true,
      data: input.archive,
      newVersionOnly: true,
      describe: async (stored) => {
        const metadata: SwiftMetadata = { ...release.metadata, manifests: await readManifests(stored) };
        return {
          name: packageId(scope, name),
          version,
          fileName: `${name}-${version}.zip`,
          metadata: JSON.stringify(metadata),
        };
      },
      inTransaction: async (tx, pkg, v) => {
        const named = await core.properties(tx, PropertyRef.package, [pkg.id], PROPERTY_NAME);
        if (named.length === 0) {
          await core.addProperty(tx, PropertyRef.package, pkg.id, PROPERTY_SCOPE, scope);
          await core.addProperty(tx, PropertyRef.package, pkg.id, PROPERTY_NAME, name);
        }
        for (const url of release.repositoryUrls) {
          await core.addProperty(tx, PropertyRef.version, v.id, PROPERTY_REPOSITORY_URL, url);
        }
      },
    });
  }

  /** The releases of a package in version order (404 when it has none). */
  async releases(pkg: PackageRow): Promise<VersionRow[]> {
    return (await this.deps.packages.versionsOf(pkg)).sort((a, b) => compareSemver(a.version, b.version));
  }

  /** The package's name as first published (the route's name otherwise). */
  async displayName(pkg: PackageRow, fallback: string): Promise<string> {
    const [p] = await this.deps.packages.properties(PropertyRef.package, [pkg.id], PROPERTY_NAME);
    return p?.value ?? fallback;
  }

  metadataOf(v: VersionRow): SwiftMetadata {
    try {
      const m = JSON.parse(v.metadata_json) as Partial<SwiftMetadata>;
      return { ...m, manifests: m.manifests ?? {} };
    } catch {
      return { manifests: {} };
    }
  }

  /** The source archive of a release. */
  async archive(v: VersionRow): Promise<FileWithBlob> {
    const [file] = (await this.deps.packages.filesOf([v.id])).sort((a, b) => b.is_lead - a.is_lead);
    if (!file) throw notFound(`package file does not exist [version: ${v.version}]`);
    return file;
  }

  /** The identifiers (`scope.name`) of the owner's packages that name `url` as their repository. */
  async identifiers(owner: UserRow, url: string, identity: Identity | null): Promise<string[]> {
    const found = await packagesByRepositoryUrl(this.deps.db, owner.id, url);
    const out: string[] = [];
    for (const p of found) {
      const pkg = await this.deps.packages.packageById(p.id);
      if (!pkg) continue;
      try {
        await this.deps.packages.assertCanReadPackage(pkg, identity);
        out.push(p.name);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // A package of a repository the caller may not read is not theirs to find.
      }
    }
    return out;
  }
}
