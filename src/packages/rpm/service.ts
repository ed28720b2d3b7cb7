// The RPM format: .rpm files uploaded to a group (a path such as `el9/stable`, '' for the owner's
// root repository), read for their header (header.ts), kept as files `{name}-{version}.{arch}.rpm`
// of the package version `{version}-{release}` with the group as composite key and the file
// properties rpm.architecture and rpm.metadata (everything repodata lists). A file that exists is
// refused with 409.
//
// The repodata files of a group (repodata.ts) are rebuilt from the stored metadata when a package
// joins or leaves it (no package file is read again; each file's entries are rendered once, at
// upload, and kept in its property rpm.repodata, so a rebuild only assembles them), not when they are read, as the Debian
// registry does: rebuilds of one owner take turns in this process (a change that finds its group's
// rebuild still queued joins it), and across processes each writes only when the group has not
// changed since it read it (a stamp compared under the owner's locked key row). Deletions that do
// not come through this format reach it as package.deleted events. The signing key is the owner's
// Debian registry key.
import type { Readable } from 'node:stream';
import { nowUnix, type Db } from '../../db/database.js';
import { notFound } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import type { UserRow } from '../../users/tables.js';
import { generateKeyPair } from '../debian/repository.js';
import * as keys from '../debian/store.js';
import * as core from '../store.js';
import { rebuildGroup } from '../rebuild.js';
import type { AddedFile, PackageService } from '../service.js';
import { PropertyRef } from '../tables.js';
import { readRpm, type RpmMetadata, type RpmPackage } from './header.js';
import { buildRepodata, fragmentsOf, type IndexedRpm, type RpmFragments } from './repodata.js';
import { checkGroup, RpmGroups, rpmFileName } from './groups.js';
import * as store from './store.js';
import type { RpmIndexRow } from './tables.js';

/** What a file's repodata entries are rendered from. */
function indexed(
  packageName: string,
  version: string,
  f: { name: string; size: number; hash_sha256: string; created_unix: number },
  metadata: RpmMetadata,
): IndexedRpm {
  const href = ['package', packageName, version, metadata.arch, f.name].map(encodeURIComponent).join('/');
  return { metadata, href, size: f.size, sha256: f.hash_sha256, created: f.created_unix };
}

export interface RpmServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile' | 'requireVersion' | 'requireFile' | 'filesOf' | 'deleteFile'>;
  events: Pick<EventBus, 'on'>;
  users: { getById(id: number): Promise<UserRow | undefined> };
}

export class RpmService {
  /** Its .rpm files in groups: finding one, deleting one (the routes call these). */
  readonly groups: RpmGroups;
  private readonly db: Db;

  constructor(private readonly deps: RpmServiceDeps) {
    this.db = deps.db;
    this.groups = new RpmGroups('rpm', deps.packages, (owner, group) => this.build(owner, group));
    deps.events.on('package.deleted', async (e) => {
      if (e.package.type !== 'rpm') return;
      const owner = await deps.users.getById(e.package.ownerId);
      if (owner) for (const g of await store.groupsOf(this.db, owner.id)) await this.rebuild(owner, g);
    });
  }

  /** Uploads an .rpm to the group and rebuilds the group's repodata. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    group: string,
    data: Readable,
    announced?: number,
  ): Promise<{ rpm: RpmPackage; added: AddedFile }> {
    const g = checkGroup(group);
    let rpm: RpmPackage | undefined;
    const added = await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'rpm',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: g,
        describe: async (stored) => {
          rpm = await readRpm(stored);
          const m = rpm.metadata;
          return {
            name: rpm.name,
            version: rpm.version,
            fileName: rpmFileName(rpm.name, rpm.version, rpm.arch),
            metadata: JSON.stringify({
              license: m.license || undefined,
              project_url: m.url || undefined,
              summary: m.summary || undefined,
              description: m.description || undefined,
            }),
          };
        },
        inTransaction: async (tx, pkg, version, _created, fileId, file) => {
          await core.addProperty(tx, PropertyRef.file, fileId, store.PROP_ARCHITECTURE, rpm!.arch);
          // Its repodata entries, rendered once: rebuilds assemble them.
          const fragments = fragmentsOf(indexed(pkg.name, version.version, file, rpm!.metadata));
          await store.storeFragments(tx, [{ fileId, value: JSON.stringify(fragments) }]);
          await core.addProperty(
            tx,
            PropertyRef.file,
            fileId,
            store.PROP_METADATA,
            JSON.stringify(rpm!.metadata),
          );
        },
      },
      announced,
    );
    await this.rebuild(owner, g);
    return { rpm: rpm!, added };
  }

  /** The owner's public key (armored), the pair made on first use (shared with the Debian registry). */
  async publicKey(owner: UserRow): Promise<string> {
    return (await this.keyOf(owner)).public_key;
  }

  private async keyOf(owner: UserRow) {
    const existing = await keys.getKey(this.db, owner.id);
    if (existing) return existing;
    const pair = await generateKeyPair(owner.name);
    await keys.insertKey(this.db, owner.id, pair.privateKey, pair.publicKey, nowUnix());
    const stored = await keys.getKey(this.db, owner.id);
    if (!stored) throw new Error(`the signing key of ${owner.name} was not stored`);
    return stored;
  }

  /** A repodata file of the group (`repomd.xml`, `primary.xml.gz`, ...); 404 when there is none. */
  async indexFile(owner: UserRow, group: string, path: string): Promise<RpmIndexRow> {
    const row = await store.getIndexFile(this.db, owner.id, checkGroup(group), path);
    if (!row) throw notFound(`repository file does not exist [group: ${group}, path: ${path}]`);
    return row;
  }

  /** Rebuilds the repodata of one group (removed when it has no package left); see the header. */
  rebuild(owner: UserRow, group: string): Promise<void> {
    return this.groups.rebuild(owner, group);
  }

  private async build(owner: UserRow, group: string): Promise<void> {
    const key = await this.keyOf(owner);
    await rebuildGroup(this.db, {
      stamp: (q) => store.groupStamp(q, owner.id, group),
      lock: (tx) => keys.lockKey(tx, owner.id),
      build: async () => {
        const rows = await store.groupEntries(this.db, owner.id, group);
        // Each file's entries are rendered once, at its upload (or by the first rebuild that lists
        // it, for a file stored before), and kept beside it; rebuilds only assemble them.
        const rendered: Array<{ fileId: number; value: string }> = [];
        const pkgs: RpmFragments[] = [];
        for (const f of rows) {
          if (f.fragments) {
            pkgs.push(JSON.parse(f.fragments) as RpmFragments);
            continue;
          }
          if (!f.metadata) continue;
          const metadata = JSON.parse(f.metadata) as RpmMetadata;
          const fragments = fragmentsOf(indexed(f.package_name, f.version, f, metadata));
          pkgs.push(fragments);
          rendered.push({ fileId: f.file_id, value: JSON.stringify(fragments) });
        }
        const now = nowUnix();
        return { rendered, now, files: await buildRepodata(pkgs, key.private_key, now) };
      },
      write: async (tx, { rendered, now, files }) => {
        if (rendered.length) await store.storeFragments(tx, rendered);
        await store.replaceIndex(
          tx,
          owner.id,
          group,
          files.map((f) => ({
            owner_id: owner.id,
            group_name: group,
            path: f.path,
            content: f.content.toString('base64'),
            size: f.content.length,
            created_unix: now,
          })),
        );
      },
    });
  }
}
