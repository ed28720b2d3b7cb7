// The NuGet format: push (the .nupkg streamed into the store, its .nuspec read back from the stored
// file: a new version only, 409 for an existing one, as Forgejo), symbols packages (a .snupkg added
// to its existing version, each portable PDB inside kept as a file of the version under its PDB id,
// for the symbol server), the versions every feed and search answer is built from, and a version's
// .nuspec (read from its stored .nupkg).
import { Readable } from 'node:stream';
import type { Db } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import type { FileWithBlob } from '../tables.js';
import { readZipDirectory, readZipMember } from '../zip.js';
import { compareNugetVersions, type NugetVersion } from './feed.js';
import { readNupkg, type NugetMetadata, type Nuspec } from './nuspec.js';
import { portablePdbId, symbolsMember } from './pdb.js';
import * as store from './store.js';

export interface NugetServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile' | 'open'>;
}

/** Forgejo's bounds on the PDB files of one symbols package. */
const MAX_PDB = 64 << 20;
const MAX_PDB_TOTAL = 256 << 20;

/** A page of results and how many there are in all. */
export interface Page<T> {
  items: T[];
  total: number;
}

const DEFAULT_TAKE = 20;
const MAX_TAKE = 1000;
const window = (skip: number, take: number) => {
  const s = Math.max(0, Math.floor(skip) || 0);
  const t = Math.min(MAX_TAKE, take > 0 ? Math.floor(take) : DEFAULT_TAKE);
  return { skip: s, take: t };
};

function toVersion(r: store.NugetVersionRow): NugetVersion {
  return {
    name: r.name,
    version: r.version,
    metadata: JSON.parse(r.metadata_json) as NugetMetadata,
    createdUnix: r.created_unix,
    downloads: r.download_count,
    size: r.size,
  };
}

export class NugetService {
  constructor(private readonly deps: NugetServiceDeps) {}

  /** `nuget push`: stores the package as a new version (409 when it exists). */
  async push(owner: UserRow, creator: UserRow, data: Readable, announced?: number): Promise<Nuspec> {
    let nuspec: Nuspec | undefined;
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'nuget',
        isLead: true,
        data,
        newVersionOnly: true,
        describe: async (stored) => {
          nuspec = (await readNupkg(stored)).nuspec;
          if (nuspec.isSymbols) throw badRequest('unexpected package type');
          return {
            name: nuspec.id,
            version: nuspec.version,
            fileName: `${nuspec.id}.${nuspec.version}.nupkg`.toLowerCase(),
            metadata: JSON.stringify(nuspec.metadata),
          };
        },
      },
      announced,
    );
    return nuspec!;
  }

  /**
   * A symbols package (.snupkg) for a version that exists (404 otherwise): kept as a file of the
   * version (409 when it has one), then each portable PDB in it as a file named as in the package
   * and keyed by its PDB id. A package with no PDB, with other files, or a PDB that does not parse
   * is 400 with nothing kept.
   */
  async pushSymbols(owner: UserRow, creator: UserRow, data: Readable, announced?: number): Promise<Nuspec> {
    let nuspec: Nuspec | undefined;
    let target: NugetVersion | undefined;
    let pdbs: Array<{ name: string; id: string; bytes: Buffer }> = [];
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'nuget',
        isLead: false,
        data,
        newVersionOnly: false,
        describe: async (stored) => {
          nuspec = (await readNupkg(stored)).nuspec;
          if (!nuspec.isSymbols) throw badRequest('unexpected package type');
          const found = await this.version(owner, nuspec.id, nuspec.version);
          if (!found) throw notFound('package does not exist');
          target = found;
          pdbs = [];
          let budget = MAX_PDB_TOTAL;
          for (const entry of await readZipDirectory(stored, 'the symbols package')) {
            const kind = symbolsMember(entry.name);
            if (kind === 'skip') continue;
            if (kind === 'invalid') throw badRequest('package contains invalid files');
            const max = Math.min(MAX_PDB, budget);
            if (entry.size > max) throw badRequest('a PDB file of the package is too large');
            const bytes = await readZipMember(stored, entry, 'the symbols package', max);
            budget -= bytes.length;
            pdbs.push({ name: entry.name.split('/').pop()!.toLowerCase(), id: portablePdbId(bytes), bytes });
          }
          if (!pdbs.length) throw badRequest('package does not contain PDB files');
          return {
            name: found.name,
            version: found.version,
            fileName: `${nuspec.id}.${nuspec.version}.snupkg`.toLowerCase(),
          };
        },
      },
      announced,
    );
    for (const pdb of pdbs) {
      await this.deps.packages.addFile({
        owner,
        creator,
        type: 'nuget',
        isLead: false,
        data: Readable.from([pdb.bytes]),
        newVersionOnly: false,
        compositeKey: pdb.id,
        name: target!.name,
        version: target!.version,
        fileName: pdb.name,
      });
    }
    return nuspec!;
  }

  /** The PDB file `fileName` with PDB id `id` among the owner's symbols; undefined when none. */
  symbolFile(owner: UserRow, fileName: string, id: string) {
    return store.symbolFile(this.deps.db, owner.id, fileName.toLowerCase(), id.toLowerCase());
  }

  /** Every version of one package (any case of its id), in upload order. */
  async versionsOf(owner: UserRow, id: string): Promise<NugetVersion[]> {
    const rows = await store.nugetVersions(this.deps.db, owner.id, { lowerName: id.toLowerCase() });
    return rows.map(toVersion);
  }

  /** One version (the version compared in lower case); undefined when there is none. */
  async version(owner: UserRow, id: string, version: string): Promise<NugetVersion | undefined> {
    const lower = version.toLowerCase();
    return (await this.versionsOf(owner, id)).find((v) => v.version.toLowerCase() === lower);
  }

  /** Packages whose id contains `term` (is it, with `exact`), grouped by package, by id. */
  private async packagesMatching(owner: UserRow, term: string, exact: boolean): Promise<NugetVersion[][]> {
    const rows = await store.nugetVersions(
      this.deps.db,
      owner.id,
      exact ? { lowerName: term.toLowerCase() } : { search: term },
    );
    const byName = new Map<string, NugetVersion[]>();
    for (const r of rows) byName.set(r.lower_name, [...(byName.get(r.lower_name) ?? []), toVersion(r)]);
    return [...byName.values()];
  }

  /** v2 Search() and Packages(): the latest version of each matching package, a page of them. */
  async searchLatest(
    owner: UserRow,
    term: { value: string; exact: boolean },
    skip: number,
    take: number,
  ): Promise<Page<NugetVersion>> {
    const groups = await this.packagesMatching(owner, term.value, term.exact);
    const w = window(skip, take);
    const latest = groups.map((vs) =>
      vs.reduce((a, b) => (compareNugetVersions(a.version, b.version) >= 0 ? a : b)),
    );
    return { items: latest.slice(w.skip, w.skip + w.take), total: groups.length };
  }

  /** v3 query: every version of a page of matching packages; the total counts packages. */
  async searchPackages(
    owner: UserRow,
    term: string,
    skip: number,
    take: number,
  ): Promise<Page<NugetVersion>> {
    const groups = await this.packagesMatching(owner, term, false);
    const w = window(skip, take);
    return { items: groups.slice(w.skip, w.skip + w.take).flat(), total: groups.length };
  }

  /** v2 FindPackagesById(): a page of one package's versions; the total counts them all. */
  async findById(owner: UserRow, id: string, skip: number, take: number): Promise<Page<NugetVersion>> {
    const all = await this.versionsOf(owner, id);
    const w = window(skip, take);
    return { items: all.slice(w.skip, w.skip + w.take), total: all.length };
  }

  /** The .nuspec inside a stored .nupkg. */
  async nuspecOf(file: FileWithBlob): Promise<Buffer> {
    const stored = {
      size: Number(file.size),
      open: (range?: { start: number; end?: number }) =>
        this.deps.packages.open(
          file,
          range ? { start: range.start, end: range.end ?? Number(file.size) - 1 } : undefined,
          false,
        ),
    };
    const entries = await readZipDirectory(stored, 'the package');
    const entry = entries.find((e) => !e.name.includes('/') && e.name.toLowerCase().endsWith('.nuspec'));
    if (!entry) throw notFound('the package has no nuspec file');
    return readZipMember(stored, entry, 'the package', 3 << 20);
  }
}
