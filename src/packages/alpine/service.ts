// The Alpine format: packages (.apk) uploaded to a branch and repository, read for their .PKGINFO
// (archive.ts), kept as files `{name}-{version}.apk` of the package version with the composite key
// `{branch}|{repository}|{architecture}` and the file properties alpine.branch, .repository,
// .architecture and .metadata (the file's metadata JSON), as Forgejo keeps them. The same file
// again under the same key is refused with 409. Packages of architecture `noarch` are in every
// architecture's index and served under every architecture. Indexes are built when asked for
// (repository.ts), signed with the owner's RSA key (made on first use).
import type { Readable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import { nowUnix, type Db } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as core from '../store.js';
import type { AddedFile, PackageService } from '../service.js';
import { PropertyRef, type FileWithBlob } from '../tables.js';
import {
  ARCHITECTURE,
  NOARCH,
  readAlpinePackage,
  type AlpineFileMetadata,
  type AlpinePackage,
  type AlpineVersionMetadata,
} from './archive.js';
import { generateKeyPair, keyFileName, signedIndex } from './repository.js';
import * as store from './store.js';

/** Branch (`v3.19`, `edge`) and repository (`main`) names: letters, digits and `._+-`. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._+-]{0,99}$/;

export function checkLocation(branch: string, repository: string): void {
  if (!SEGMENT.test(branch) || !SEGMENT.test(repository)) {
    throw badRequest(
      `invalid branch or repository [branch: ${branch.slice(0, 100)}, repository: ${repository.slice(0, 100)}]`,
    );
  }
}

const keyOfFile = (branch: string, repository: string, architecture: string) =>
  `${branch}|${repository}|${architecture}`;

export interface AlpineServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile' | 'requireVersion' | 'requireFile' | 'deleteFile'>;
}

export class AlpineService {
  private readonly db: Db;
  /** Key pairs being made, by owner: one generation per owner at a time in this process. */
  private readonly making = new Map<number, Promise<void>>();

  constructor(private readonly deps: AlpineServiceDeps) {
    this.db = deps.db;
  }

  /** Uploads a package to the branch and repository. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    branch: string,
    repository: string,
    data: Readable,
    announced: number | undefined,
  ): Promise<{ pkg: AlpinePackage; added: AddedFile }> {
    checkLocation(branch, repository);
    let pkg: AlpinePackage | undefined;
    const added = await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'alpine',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: () => keyOfFile(branch, repository, pkg!.fileMetadata.architecture),
        describe: async (stored) => {
          pkg = await readAlpinePackage(stored);
          return {
            name: pkg.name,
            version: pkg.version,
            fileName: `${pkg.name}-${pkg.version}.apk`,
            metadata: JSON.stringify(pkg.versionMetadata),
          };
        },
        inTransaction: async (tx, _pkg, _version, _created, fileId) => {
          const props: Array<[string, string]> = [
            [store.PROP_BRANCH, branch],
            [store.PROP_REPOSITORY, repository],
            [store.PROP_ARCHITECTURE, pkg!.fileMetadata.architecture],
            [store.PROP_METADATA, JSON.stringify(pkg!.fileMetadata)],
          ];
          for (const [name, value] of props)
            await core.addProperty(tx, PropertyRef.file, fileId, name, value);
        },
      },
      announced,
    );
    return { pkg: pkg!, added };
  }

  /** The signed APKINDEX.tar.gz of the architecture (404 when it has no package). */
  async index(owner: UserRow, branch: string, repository: string, architecture: string): Promise<Buffer> {
    const own = keyOfFile(branch, repository, architecture);
    const keys = architecture === NOARCH ? [own] : [own, keyOfFile(branch, repository, NOARCH)];
    const rows = await store.filesUnder(this.db, owner.id, keys);
    if (!rows.length) {
      throw notFound(
        `package index does not exist [branch: ${branch}, repository: ${repository}, arch: ${architecture}]`,
      );
    }
    // The architecture's own packages first, then the noarch ones (as Forgejo lists them).
    rows.sort(
      (a, b) => Number(a.composite_key !== own) - Number(b.composite_key !== own) || a.file_id - b.file_id,
    );
    const packages = rows.map((r) => ({
      name: r.package_name,
      version: r.version,
      size: r.size,
      versionMetadata: JSON.parse(r.version_metadata || '{}') as AlpineVersionMetadata,
      fileMetadata: JSON.parse(r.file_metadata ?? '{"checksum":""}') as AlpineFileMetadata,
    }));
    const key = await this.keyOf(owner);
    return signedIndex(packages, architecture, {
      privateKey: key.private_key,
      fileName: keyFileName(owner.lower_name, key.public_key),
    });
  }

  /** A package file, under the architecture or else under noarch (404 when there is none). */
  async requirePackage(
    owner: UserRow,
    identity: Identity | null,
    branch: string,
    repository: string,
    architecture: string,
    fileName: string,
  ): Promise<FileWithBlob> {
    for (const arch of architecture === NOARCH ? [NOARCH] : [architecture, NOARCH]) {
      const found = await this.find(owner, identity, branch, repository, arch, fileName);
      if (found) return found.file;
    }
    throw notFound(`package file does not exist [name: ${fileName}]`);
  }

  private async find(
    owner: UserRow,
    identity: Identity | null,
    branch: string,
    repository: string,
    architecture: string,
    fileName: string,
  ) {
    if (!ARCHITECTURE.test(architecture)) return undefined;
    const compositeKey = keyOfFile(branch, repository, architecture);
    const row = await store.findFile(this.db, owner.id, compositeKey, fileName);
    if (!row) return undefined;
    const found = await this.deps.packages.requireVersion(owner, 'alpine', row.name, row.version, identity);
    const file = await this.deps.packages.requireFile(found.version.id, fileName, compositeKey);
    return { ...found, file };
  }

  /** Deletes a package file of the architecture (the version goes with its last file). */
  async delete(
    owner: UserRow,
    doer: UserRow,
    identity: Identity | null,
    branch: string,
    repository: string,
    architecture: string,
    fileName: string,
  ): Promise<void> {
    const found = await this.find(owner, identity, branch, repository, architecture, fileName);
    if (!found) throw notFound(`package file does not exist [name: ${fileName}]`);
    await this.deps.packages.deleteFile(found.pkg, found.version, found.file, doer);
  }

  /** The owner's public key (PEM) and the name apk knows it by. */
  async publicKey(owner: UserRow): Promise<{ pem: string; fileName: string }> {
    const key = await this.keyOf(owner);
    return { pem: key.public_key, fileName: keyFileName(owner.lower_name, key.public_key) };
  }

  /** The owner's RSA key pair, made on first use. */
  async keyOf(owner: UserRow) {
    for (;;) {
      const existing = await store.getKey(this.db, owner.id);
      if (existing) return existing;
      let making = this.making.get(owner.id);
      if (!making) {
        making = (async () => {
          const pair = await generateKeyPair();
          await store.insertKey(this.db, owner.id, pair.privateKey, pair.publicKey, nowUnix());
        })().finally(() => this.making.delete(owner.id));
        this.making.set(owner.id, making);
      }
      await making;
    }
  }
}
