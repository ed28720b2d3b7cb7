// The Pub format (Dart and Flutter, the hosted repository spec v2): one archive per version,
// `{version}.tar.gz`; a version that exists is refused (409). Version listings carry each
// version's pubspec and archive URL.
import type { Readable } from 'node:stream';
import type { UserRow } from '../../users/tables.js';
import { compareSemver } from '../semver.js';
import type { PackageService } from '../service.js';
import type { PackageRow, VersionRow } from '../tables.js';
import { readPubArchive, type PubPackage } from './pubspec.js';

export interface PubServiceDeps {
  packages: PackageService;
  rootUrl: string;
}

export class PubService {
  constructor(private readonly deps: PubServiceDeps) {}

  /** `{root}api/packages/{owner}/pub/api/packages`. */
  base(owner: UserRow): string {
    return `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/pub/api/packages`;
  }

  async upload(owner: UserRow, creator: UserRow, data: Readable): Promise<PubPackage> {
    let pkg: PubPackage | undefined;
    await this.deps.packages.addFile({
      owner,
      creator,
      type: 'pub',
      isLead: true,
      data,
      newVersionOnly: true,
      describe: async (stored) => {
        pkg = await readPubArchive(stored);
        return {
          name: pkg.name,
          version: pkg.version,
          fileName: `${pkg.version}.tar.gz`.toLowerCase(),
          metadata: JSON.stringify(pkg.metadata),
        };
      },
    });
    return pkg!;
  }

  /** One version as the spec describes it. */
  version(owner: UserRow, pkg: PackageRow, v: VersionRow): Record<string, unknown> {
    const m = JSON.parse(v.metadata_json) as { pubspec?: unknown };
    return {
      version: v.version,
      archive_url: `${this.base(owner)}/${encodeURIComponent(pkg.name)}/files/${encodeURIComponent(v.version)}.tar.gz`,
      published: new Date(v.created_unix * 1000).toISOString(),
      pubspec: m.pubspec,
    };
  }

  /** Every version of a package (version order) and the newest as `latest`. */
  async versions(owner: UserRow, pkg: PackageRow): Promise<Record<string, unknown>> {
    const all = (await this.deps.packages.versionsOf(pkg)).sort((a, b) =>
      compareSemver(a.version, b.version),
    );
    const listed = all.map((v) => this.version(owner, pkg, v));
    return { name: pkg.name, latest: listed[listed.length - 1], versions: listed };
  }
}
