// The Go format: module zips as `go mod download` fetches them from a GOPROXY. The zip names its
// module and version in its file paths (every file is under `{module}@{version}/`, as Go's
// module zip format has it), read back from the stored file once uploaded; the go.mod at the
// module's root (or `module {path}` when there is none) is kept as the version property `go.mod`
// (as in Forgejo). A version that exists is refused with 409. Lookups take the paths and versions
// of the GOPROXY protocol, where an upper-case letter is written `!` and the letter in lower case.
import type { Readable } from 'node:stream';
import { badRequest, notFound } from '../../errors.js';
import type { Identity } from '../../auth/identity.js';
import type { UserRow } from '../../users/tables.js';
import * as store from '../store.js';
import type { PackageService, StoredFile } from '../service.js';
import { compareSemver, isPrerelease, isSemver } from '../semver.js';
import { PropertyRef, type PackageRow, type VersionRow } from '../tables.js';
import { readZipDirectory, readZipMember } from '../zip.js';

export const GO_MOD = 'go.mod';
/** Go's own limit on a go.mod (https://go.dev/ref/mod#zip-path-size-constraints). */
const MAX_GO_MOD = 16 << 20;
/** A path element of a module path: letters, digits and `-._~`, neither starting nor ending with a dot. */
const ELEMENT = /^[A-Za-z0-9_~-](?:[A-Za-z0-9._~-]*[A-Za-z0-9_~-])?$/;

/** A module version: `v` and a semantic version (`v1.2.3`, `v2.0.0-rc.1`, `v3.0.0+incompatible`). */
export const isModuleVersion = (v: string) => v.startsWith('v') && isSemver(v.slice(1));

/**
 * Whether `path` is a module path the go command can fetch: slash-separated elements of
 * letters, digits and `-._~`, the first one a host name (lower case, with a dot); at most 255
 * characters (the package name's limit).
 */
export function isModulePath(path: string): boolean {
  if (path.length > 255) return false;
  const elements = path.split('/');
  const host = elements[0]!;
  if (!/^[a-z0-9.-]+$/.test(host) || !host.includes('.') || host.startsWith('-')) return false;
  return elements.every((e) => ELEMENT.test(e));
}

/** A module path or version as the GOPROXY protocol writes it (`!a` for `A`) back to itself; undefined when malformed. */
export function unescapeModule(escaped: string): string | undefined {
  if (/[A-Z]/.test(escaped)) return undefined;
  let bad = false;
  const out = escaped.replace(/!(.?)/g, (_m, c: string) => {
    if (!/^[a-z]$/.test(c)) bad = true;
    return c.toUpperCase();
  });
  return bad ? undefined : out;
}

/** What a module zip says of itself. */
export interface ModuleZip {
  name: string;
  version: string;
  goMod: string;
}

/**
 * The module path, version and go.mod of a module zip (400 when it is no zip, when a file is not
 * under one `{module}@{version}/`, or when either is invalid).
 */
export async function readModuleZip(file: StoredFile): Promise<ModuleZip> {
  const what = 'the module zip';
  const files = (await readZipDirectory(file, what)).filter((e) => !e.name.endsWith('/'));
  const m = /^([^@]+)@([^/]+)\//.exec(files[0]?.name ?? '');
  if (!m) throw badRequest(`${what} has no files under {module}@{version}/`);
  const [, name, version] = m as unknown as [string, string, string];
  if (!isModulePath(name)) throw badRequest(`invalid module path [name: ${name}]`);
  if (!isModuleVersion(version)) {
    throw badRequest(`invalid module version, not v and a semantic version [version: ${version}]`);
  }
  const prefix = `${name}@${version}/`;
  const stray = files.find((e) => !e.name.startsWith(prefix));
  if (stray) throw badRequest(`${what} has ${stray.name} outside ${prefix}`);
  const goModEntry = files.find((e) => e.name === `${prefix}go.mod`);
  const goMod = goModEntry
    ? (await readZipMember(file, goModEntry, what, MAX_GO_MOD)).toString('utf8')
    : `module ${name}\n`;
  return { name, version, goMod };
}

export interface GoServiceDeps {
  packages: PackageService;
}

export class GoService {
  private readonly packages: PackageService;

  constructor(deps: GoServiceDeps) {
    this.packages = deps.packages;
  }

  /** Uploads a module zip: the module and version it names (409 when that version exists). */
  async upload(owner: UserRow, creator: UserRow, data: Readable, announced?: number): Promise<ModuleZip> {
    let module: ModuleZip | undefined;
    await this.packages.addFile(
      {
        owner,
        creator,
        type: 'go',
        isLead: true,
        data,
        newVersionOnly: true,
        describe: async (stored) => {
          module = await readModuleZip(stored);
          return { name: module.name, version: module.version, fileName: `${module.version}.zip` };
        },
        inTransaction: async (tx, _pkg, v) => {
          await store.addProperty(tx, PropertyRef.version, v.id, GO_MOD, module!.goMod);
        },
      },
      announced,
    );
    return module!;
  }

  /** The module `name` of `owner` (404 when there is none or the caller may not read it). */
  requireModule(owner: UserRow, name: string, identity: Identity | null): Promise<PackageRow> {
    return this.packages.requirePackage(owner, 'go', name, identity);
  }

  /** Its versions, in upload order (`@v/list`). */
  async versions(pkg: PackageRow): Promise<string[]> {
    return (await this.packages.versionsOf(pkg)).map((v) => v.version);
  }

  /**
   * A version of the module, or for `latest` the highest release (the highest pre-release when
   * there is none), which the go command asks for when `@v/list` offers it nothing.
   */
  async requireVersion(pkg: PackageRow, version: string): Promise<VersionRow> {
    const versions = await this.packages.versionsOf(pkg);
    let found: VersionRow | undefined;
    if (version === 'latest') {
      const releases = versions.filter((v) => !isPrerelease(v.version.slice(1)));
      for (const v of releases.length ? releases : versions) {
        if (!found || compareSemver(v.version.slice(1), found.version.slice(1)) > 0) found = v;
      }
    } else found = versions.find((v) => v.lower_version === version.toLowerCase());
    if (!found) throw notFound(`package version does not exist [name: ${pkg.name}, version: ${version}]`);
    return found;
  }

  /** The `.info` document of a version. */
  info(version: VersionRow): { Version: string; Time: string } {
    return {
      Version: version.version,
      Time: new Date(version.created_unix * 1000).toISOString().replace('.000Z', 'Z'),
    };
  }

  /** The go.mod of a version. */
  async goMod(pkg: PackageRow, version: VersionRow): Promise<string> {
    const [prop] = await this.packages.properties(PropertyRef.version, [version.id], GO_MOD);
    return prop?.value ?? `module ${pkg.name}\n`;
  }
}
