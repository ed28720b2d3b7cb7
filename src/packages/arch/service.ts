// The Arch Linux format: packages (`.pkg.tar.zst`, `.xz`, `.gz`) uploaded to a repository, read
// for their .PKGINFO (archive.ts), kept as files `{name}-{version}-{arch}.pkg.tar.{ext}` of the
// package version with the composite key `{repository}` and the file properties
// arch.repository, .architecture, .desc (the .PKGINFO fields) and .signature (a detached
// signature made at upload with the owner's OpenPGP key, the one the Debian registry signs with).
// A file that exists is refused with 409. Databases are built when asked for (repository.ts).
import type { Identity } from '../../auth/identity.js';
import type { Db } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as core from '../store.js';
import type { AddedFile, PackageService } from '../service.js';
import { PropertyRef, type FileWithBlob } from '../tables.js';
import { readArchPackage, type ArchPackage } from './archive.js';
import { buildDatabase, signDetached, signDetachedStream } from './repository.js';
import * as store from './store.js';

/** Repository names: letters, digits and `._-`, not starting with a dot. */
const REPOSITORY = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

export function checkRepository(value: string): string {
  if (!REPOSITORY.test(value)) throw badRequest(`invalid repository [repository: ${value.slice(0, 100)}]`);
  return value;
}

export interface OwnerKeys {
  keyOf(owner: UserRow): Promise<{ private_key: string; public_key: string }>;
}

export interface ArchServiceDeps {
  db: Db;
  packages: Pick<
    PackageService,
    'addFile' | 'requireVersion' | 'requireVersionFile' | 'deleteFile' | 'filesOf'
  >;
  keys: OwnerKeys;
}

/** `{name}-{version}-{arch}.pkg.tar.{ext}`: name, version and architecture (version is `pkgver-pkgrel`). */
export function parsePackageFileName(file: string) {
  const m = /^(.+)-([^-/]+-[^-/]+)-([^-/]+)\.pkg\.tar\.(zst|xz|gz)$/.exec(file);
  return m ? { name: m[1]!, version: m[2]!, architecture: m[3]! } : undefined;
}

export class ArchService {
  constructor(private readonly deps: ArchServiceDeps) {}

  /** Uploads a package to the repository, signed with the owner's key. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    repository: string,
    data: import('node:stream').Readable,
    announced: number | undefined,
  ): Promise<{ pkg: ArchPackage; added: AddedFile }> {
    const repo = checkRepository(repository);
    const key = await this.deps.keys.keyOf(owner);
    let pkg: ArchPackage | undefined;
    let signature = '';
    const added = await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'arch',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: repo,
        describe: async (stored) => {
          pkg = await readArchPackage(stored);
          const magic = await stored.open({ start: 0, end: 0 });
          let first = 0;
          for await (const c of magic) first = (c as Buffer)[0]!;
          const ext = first === 0x28 ? 'zst' : first === 0xfd ? 'xz' : 'gz';
          signature = (await signDetachedStream(key.private_key, await stored.open())).toString('base64');
          return {
            name: pkg.name,
            version: pkg.version,
            fileName: `${pkg.name}-${pkg.version}-${pkg.architecture}.pkg.tar.${ext}`,
            metadata: JSON.stringify({
              base: pkg.base,
              description: pkg.description,
              project_url: pkg.url || undefined,
              license: pkg.lists['LICENSE'],
              depends: pkg.lists['DEPENDS'],
            }),
          };
        },
        inTransaction: async (tx, _pkg, _version, _created, fileId) => {
          const props: Array<[string, string]> = [
            [store.PROP_REPOSITORY, repo],
            [store.PROP_ARCHITECTURE, pkg!.architecture],
            [store.PROP_DESC, JSON.stringify(pkg)],
            [store.PROP_SIGNATURE, signature],
          ];
          for (const [name, value] of props)
            await core.addProperty(tx, PropertyRef.file, fileId, name, value);
        },
      },
      announced,
    );
    return { pkg: pkg!, added };
  }

  /** A package file of the repository (404 when there is none). */
  async requirePackage(owner: UserRow, identity: Identity | null, repository: string, file: string) {
    const parsed = parsePackageFileName(file);
    if (!parsed) throw notFound(`package file does not exist [name: ${file}]`);
    return this.deps.packages.requireVersionFile(
      owner,
      'arch',
      parsed.name,
      parsed.version,
      file,
      identity,
      repository,
    );
  }

  /** The detached signature of a package file. */
  async signatureOf(file: FileWithBlob): Promise<Buffer> {
    const value = await store.fileProperty(this.deps.db, file.id, store.PROP_SIGNATURE);
    if (!value) throw notFound(`signature does not exist [name: ${file.name}.sig]`);
    return Buffer.from(value, 'base64');
  }

  /** The repository's database for the architecture (404 when it has no package). */
  async database(owner: UserRow, repository: string, architecture: string): Promise<Buffer> {
    const files = await store.repositoryFiles(this.deps.db, owner.id, repository);
    const db = await buildDatabase(files, architecture);
    if (!db) throw notFound(`repository does not exist [repository: ${repository}, arch: ${architecture}]`);
    return db;
  }

  /** The owner's signature of the database. */
  async databaseSignature(owner: UserRow, repository: string, architecture: string): Promise<Buffer> {
    const db = await this.database(owner, repository, architecture);
    return signDetached((await this.deps.keys.keyOf(owner)).private_key, db);
  }

  async publicKey(owner: UserRow): Promise<string> {
    return (await this.deps.keys.keyOf(owner)).public_key;
  }

  /** Deletes a package of the repository (the version goes with its last file). */
  async delete(
    owner: UserRow,
    doer: UserRow,
    identity: Identity | null,
    repository: string,
    name: string,
    version: string,
    architecture: string,
  ): Promise<void> {
    const found = await this.deps.packages.requireVersion(owner, 'arch', name, version, identity);
    const files = await this.deps.packages.filesOf([found.version.id]);
    const prefix = `${name}-${version}-${architecture}.pkg.tar.`;
    const file = files.find((f) => f.composite_key === repository && f.name.startsWith(prefix));
    if (!file) throw notFound(`package file does not exist [name: ${prefix}*]`);
    await this.deps.packages.deleteFile(found.pkg, found.version, file, doer);
  }
}
