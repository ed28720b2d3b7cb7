// The Debian format: .deb files uploaded to a distribution and component, read for their control
// file (archive.ts), kept as files `{name}_{version}_{arch}.deb` of the package version with the
// composite key `{distribution}|{component}` and the file properties debian.distribution,
// .component, .architecture and .control (as in Forgejo); the version's metadata is Forgejo's
// (maintainer, project_url, description, dependencies). A file that exists is refused with 409.
//
// The repository files of a distribution (repository.ts) are rebuilt when a package joins or
// leaves it, not when they are read, and stored (package_debian_index). Rebuilds of one owner
// take turns in this process (a change that finds its distribution's rebuild still queued joins
// it); across processes each one writes only when the distribution has not
// changed since it read it (a stamp compared under the owner's locked key row), and starts over
// otherwise, so the stored files always end up describing the last state. Deletions that do not
// come through this format (the package API, cleanup rules, the site administration) reach it as
// package.deleted events.
import type { Readable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import { nowUnix, type Db } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import type { UserRow } from '../../users/tables.js';
import { GroupRebuilds, rebuildGroup } from '../rebuild.js';
import * as core from '../store.js';
import type { AddedFile, PackageService } from '../service.js';
import { PropertyRef, type FileWithBlob } from '../tables.js';
import { readDeb, type DebianPackage } from './archive.js';
import { buildDistribution, generateKeyPair } from './repository.js';
import * as store from './store.js';
import type { DebianIndexRow } from './tables.js';

/** Distribution and component names: letters, digits and `._-`, not starting with a dot. */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;
const HASHES = {
  md5sum: 'hash_md5',
  sha1: 'hash_sha1',
  sha256: 'hash_sha256',
  sha512: 'hash_sha512',
} as const;

export function checkRepoName(what: 'distribution' | 'component', value: string): string {
  const v = value.trim();
  if (!NAME.test(v)) throw badRequest(`invalid ${what} [${what}: ${v.slice(0, 100)}]`);
  return v;
}

export const debFileName = (name: string, version: string, architecture: string) =>
  `${name}_${version}_${architecture}.deb`;

export interface DebianServiceDeps {
  db: Db;
  packages: Pick<
    PackageService,
    'addFile' | 'requireVersion' | 'requireFile' | 'filesOf' | 'deleteFile' | 'getPackage'
  >;
  events: Pick<EventBus, 'on'>;
  /** Origin and Label of Release files. */
  origin: string;
  users: { getById(id: number): Promise<UserRow | undefined> };
}

export class DebianService {
  private readonly rebuilds = new GroupRebuilds((owner, distribution) => this.build(owner, distribution));
  private readonly db: Db;

  constructor(private readonly deps: DebianServiceDeps) {
    this.db = deps.db;
    deps.events.on('package.deleted', async (e) => {
      if (e.package.type !== 'debian') return;
      const owner = await deps.users.getById(e.package.ownerId);
      if (owner) await this.rebuildAll(owner);
    });
  }

  /** Uploads a .deb to the distribution's component and rebuilds the distribution's files. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    distribution: string,
    component: string,
    data: Readable,
    announced?: number,
  ): Promise<{ deb: DebianPackage; added: AddedFile }> {
    const dist = checkRepoName('distribution', distribution);
    const comp = checkRepoName('component', component);
    let deb: DebianPackage | undefined;
    const added = await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'debian',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: `${dist}|${comp}`,
        describe: async (stored) => {
          deb = await readDeb(stored);
          return {
            name: deb.name,
            version: deb.version,
            fileName: debFileName(deb.name, deb.version, deb.architecture),
            metadata: JSON.stringify(deb.metadata),
          };
        },
        inTransaction: async (tx, _pkg, _version, _created, fileId) => {
          const props: Array<[string, string]> = [
            [store.PROP_DISTRIBUTION, dist],
            [store.PROP_COMPONENT, comp],
            [store.PROP_ARCHITECTURE, deb!.architecture],
            [store.PROP_CONTROL, deb!.control],
          ];
          for (const [name, value] of props)
            await core.addProperty(tx, PropertyRef.file, fileId, name, value);
        },
      },
      announced,
    );
    await this.rebuild(owner, dist);
    return { deb: deb!, added };
  }

  /** The .deb of a version in a distribution's component (404 when there is none). */
  async requireDeb(
    owner: UserRow,
    identity: Identity | null,
    distribution: string,
    component: string,
    name: string,
    version: string,
    architecture: string,
  ): Promise<FileWithBlob> {
    const found = await this.deps.packages.requireVersion(owner, 'debian', name, version, identity);
    return this.deps.packages.requireFile(
      found.version.id,
      debFileName(name, version, architecture),
      `${distribution}|${component}`,
    );
  }

  /** Deletes one .deb (the version goes with its last file) and rebuilds the repository files. */
  async delete(
    owner: UserRow,
    doer: UserRow,
    identity: Identity | null,
    distribution: string,
    component: string,
    name: string,
    version: string,
    architecture: string,
  ): Promise<void> {
    const found = await this.deps.packages.requireVersion(owner, 'debian', name, version, identity);
    const file = await this.deps.packages.requireFile(
      found.version.id,
      debFileName(name, version, architecture),
      `${distribution}|${component}`,
    );
    const last = (await this.deps.packages.filesOf([found.version.id])).length === 1;
    await this.deps.packages.deleteFile(found.pkg, found.version, file, doer);
    // The version's deletion is an event, which rebuilds every distribution of the owner.
    if (!last) await this.rebuild(owner, distribution);
  }

  /** The owner's public key (armored), the pair made on first use. */
  async publicKey(owner: UserRow): Promise<string> {
    return (await this.keyOf(owner)).public_key;
  }

  /** The owner's OpenPGP key pair (made on first use); the Arch registry signs with it too. */
  async keyOf(owner: UserRow) {
    const existing = await store.getKey(this.db, owner.id);
    if (existing) return existing;
    const pair = await generateKeyPair(owner.name);
    await store.insertKey(this.db, owner.id, pair.privateKey, pair.publicKey, nowUnix());
    const stored = await store.getKey(this.db, owner.id);
    if (!stored) throw new Error(`the Debian key of ${owner.name} was not stored`);
    return stored;
  }

  /** A repository file of the distribution (`Release`, `main/binary-amd64/Packages.gz`, ...); 404 when there is none. */
  async indexFile(owner: UserRow, distribution: string, path: string): Promise<DebianIndexRow> {
    const row = await store.getIndexFile(this.db, owner.id, distribution, path);
    if (!row) throw notFound(`repository file does not exist [distribution: ${distribution}, path: ${path}]`);
    return row;
  }

  /** An index file by its digest (`{dir}/by-hash/{algorithm}/{hash}`, Acquire-By-Hash). */
  async indexFileByHash(
    owner: UserRow,
    distribution: string,
    dir: string,
    algorithm: string,
    hash: string,
  ): Promise<DebianIndexRow> {
    const column = HASHES[algorithm.toLowerCase() as keyof typeof HASHES];
    const row = column
      ? await store.getIndexFileByHash(this.db, owner.id, distribution, column, hash.toLowerCase())
      : undefined;
    if (!row || !row.path.startsWith(`${dir}/`)) throw notFound('repository file does not exist');
    return row;
  }

  /** Rebuilds the repository files of every distribution of the owner. */
  async rebuildAll(owner: UserRow): Promise<void> {
    for (const d of await store.distributionsOf(this.db, owner.id)) await this.rebuild(owner, d);
  }

  /**
   * Rebuilds the repository files of one distribution (removed when it has no package left). A
   * caller that finds a rebuild of the distribution queued and not yet started joins it: that one
   * reads the distribution after the caller's change, so several uploads at once cost two rebuilds
   * rather than one each.
   */
  rebuild(owner: UserRow, distribution: string): Promise<void> {
    return this.rebuilds.run(owner, distribution);
  }

  private async build(owner: UserRow, distribution: string): Promise<void> {
    const key = await this.keyOf(owner);
    await rebuildGroup(this.db, {
      stamp: (q) => store.distributionStamp(q, owner.id, distribution),
      lock: (tx) => store.lockKey(tx, owner.id),
      build: async () => {
        const files = await store.distributionFiles(this.db, owner.id, distribution);
        const now = new Date();
        const built = await buildDistribution({
          origin: this.deps.origin,
          distribution,
          files,
          privateKey: key.private_key,
          now,
        });
        return { now, files: built };
      },
      write: async (tx, { now, files }) => {
        const created = Math.floor(now.getTime() / 1000);
        await store.replaceIndex(
          tx,
          owner.id,
          distribution,
          files.map((f) => {
            const d = f.digests;
            return {
              owner_id: owner.id,
              distribution,
              path: f.path,
              content: f.content.toString('base64'),
              size: d.size,
              hash_md5: d.md5,
              hash_sha1: d.sha1,
              hash_sha256: d.sha256,
              hash_sha512: d.sha512,
              created_unix: created,
            };
          }),
        );
      },
    });
  }
}
