// The Vagrant format: boxes by name, version and provider (a version holds one box file per
// provider, `{provider}.box`, with Forgejo's file property `vagrant.provider`), and the box
// metadata JSON that `vagrant box add URL` reads: every version with its providers, each box's
// URL and SHA-512.
import type { Readable } from 'node:stream';
import { badRequest } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import * as pkgStore from '../store.js';
import { PropertyRef, type PackageRow } from '../tables.js';
import { compareBoxVersions, NAME, PROVIDER, readBox, VERSION, type BoxMetadata } from './box.js';

export const PROVIDER_PROPERTY = 'vagrant.provider';

export interface VagrantServiceDeps {
  packages: PackageService;
  rootUrl: string;
}

export class VagrantService {
  constructor(private readonly deps: VagrantServiceDeps) {}

  /** Stores `{provider}.box` of a version (409 when the version has it). */
  async upload(
    owner: UserRow,
    creator: UserRow,
    name: string,
    version: string,
    file: string,
    data: Readable,
    announced?: number,
  ): Promise<void> {
    if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name}]`);
    if (!VERSION.test(version) || version.length > 255) {
      throw badRequest(`package version is invalid [version: ${version}]`);
    }
    const provider = file.endsWith('.box') ? file.slice(0, -4) : '';
    if (!PROVIDER.test(provider))
      throw badRequest(`invalid box file name (want {provider}.box) [file: ${file}]`);
    let metadata: BoxMetadata | undefined;
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'vagrant',
        isLead: true,
        data,
        newVersionOnly: false,
        name,
        version,
        fileName: file.toLowerCase(),
        verify: async (_digests, stored) => {
          metadata = await readBox(stored);
        },
        inTransaction: async (tx, _pkg, v, created, fileId) => {
          if (created) await pkgStore.updateVersionMetadata(tx, v.id, JSON.stringify(metadata ?? {}));
          await pkgStore.addProperty(tx, PropertyRef.file, fileId, PROVIDER_PROPERTY, provider);
        },
      },
      announced,
    );
  }

  /** The box metadata JSON (`vagrant box add` reads it): versions in order, their providers. */
  async metadata(owner: UserRow, pkg: PackageRow): Promise<Record<string, unknown>> {
    const versions = (await this.deps.packages.versionsOf(pkg)).sort((a, b) =>
      compareBoxVersions(a.version, b.version),
    );
    const files = await this.deps.packages.filesOf(versions.map((v) => v.id));
    const providers = new Map(
      (
        await this.deps.packages.properties(
          PropertyRef.file,
          files.map((f) => f.id),
          PROVIDER_PROPERTY,
        )
      ).map((p) => [p.ref_id, p.value]),
    );
    const base = `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/vagrant/${encodeURIComponent(pkg.name)}`;
    const newest = versions[versions.length - 1];
    const description = newest ? (JSON.parse(newest.metadata_json) as BoxMetadata).description : undefined;
    return {
      name: pkg.name,
      ...(description ? { description } : {}),
      versions: versions.map((v) => ({
        version: v.version,
        status: 'active',
        providers: files
          .filter((f) => f.version_id === v.id)
          .map((f) => ({
            name: providers.get(f.id) ?? f.name.replace(/\.box$/, ''),
            url: `${base}/${encodeURIComponent(v.version)}/${encodeURIComponent(f.name)}`,
            checksum: f.hash_sha512,
            checksum_type: 'sha512',
          })),
      })),
    };
  }
}
