// The ALT Linux format (apt-rpm): .rpm files uploaded to a group ('' for the owner's root
// repository), read by the RPM registry's header reader (rpm/header.ts), kept as files
// `{name}-{version}.{arch}.rpm` of the package version `[{epoch}-]{version}-{release}` (Forgejo's
// ALT version) with the group as composite key and the file properties rpm.group,
// rpm.architecture and rpm.metadata (what the pkglist lists, with the BLAKE2b of the file). A file
// that exists is refused with 409.
//
// The repository files of a group (pkglist.ts) are rebuilt from the stored metadata when a package
// joins or leaves it, as the RPM registry does (same queries, its own table package_alt_index):
// rebuilds of one owner take turns in this process, and across processes each writes only when the
// group has not changed since it read it (a stamp compared under the owner's locked user row).
// Deletions that do not come through this format reach it as package.deleted events.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { nowUnix, type Db } from '../../db/database.js';
import { notFound } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import type { UserRow } from '../../users/tables.js';
import { rebuildGroup } from '../rebuild.js';
import * as core from '../store.js';
import type { AddedFile, PackageService, StoredFile } from '../service.js';
import { PropertyRef } from '../tables.js';
import { rawEntries, readRpm, TAG, type RpmPackage } from '../rpm/header.js';
import { checkGroup, RpmGroups, rpmFileName } from '../rpm/groups.js';
import * as store from '../rpm/store.js';
import type { RpmIndexRow } from '../rpm/tables.js';
import { buildAltRepository, type AltMetadata, type IndexedAltRpm } from './pkglist.js';

const TABLE = 'package_alt_index';
export const PROP_GROUP = 'rpm.group';

export interface AltServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile' | 'requireVersion' | 'requireFile' | 'filesOf' | 'deleteFile'>;
  events: Pick<EventBus, 'on'>;
  users: { getById(id: number): Promise<UserRow | undefined> };
  /** The Label and Origin of the release files. */
  label: string;
}

async function blake2b(file: StoredFile): Promise<string> {
  const h = crypto.createHash('blake2b512');
  for await (const c of await file.open()) h.update(c as Buffer);
  return h.digest('hex');
}

/** Forgejo's ALT version: the epoch, when there is one, before `{version}-{release}`. */
const altVersion = (rpm: RpmPackage) =>
  rpm.metadata.epoch !== '0' ? `${rpm.metadata.epoch}-${rpm.version}` : rpm.version;

export class AltService {
  /** Its .rpm files in groups: finding one, deleting one (the routes call these). */
  readonly groups: RpmGroups;
  private readonly db: Db;

  constructor(private readonly deps: AltServiceDeps) {
    this.db = deps.db;
    this.groups = new RpmGroups('alt', deps.packages, (owner, group) => this.build(owner, group));
    deps.events.on('package.deleted', async (e) => {
      if (e.package.type !== 'alt') return;
      const owner = await deps.users.getById(e.package.ownerId);
      if (owner)
        for (const g of await store.groupsOf(this.db, owner.id, 'alt', TABLE)) await this.rebuild(owner, g);
    });
  }

  /** Uploads an .rpm to the group and rebuilds the group's repository files. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    group: string,
    data: Readable,
    announced?: number,
  ): Promise<{ added: AddedFile }> {
    const g = checkGroup(group);
    let metadata: AltMetadata | undefined;
    const added = await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'alt',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: g,
        describe: async (stored) => {
          const rpm = await readRpm(stored);
          const h = rpm.header;
          const m = rpm.metadata;
          metadata = {
            ...m,
            requires: rawEntries(h, TAG.requireName, TAG.requireFlags, TAG.requireVersion),
            provides: rawEntries(h, TAG.provideName, TAG.provideFlags, TAG.provideVersion),
            conflicts: rawEntries(h, TAG.conflictName, TAG.conflictFlags, TAG.conflictVersion),
            obsoletes: rawEntries(h, TAG.obsoleteName, TAG.obsoleteFlags, TAG.obsoleteVersion),
            blake2b: await blake2b(stored),
          };
          const version = altVersion(rpm);
          return {
            name: rpm.name,
            version,
            fileName: rpmFileName(rpm.name, version, rpm.arch),
            metadata: JSON.stringify({
              license: m.license || undefined,
              project_url: /^https?:\/\//.test(m.url) ? m.url : undefined,
              summary: m.summary || undefined,
              description: m.description || undefined,
            }),
          };
        },
        inTransaction: async (tx, _pkg, _version, _created, fileId) => {
          await core.addProperty(tx, PropertyRef.file, fileId, PROP_GROUP, g);
          await core.addProperty(tx, PropertyRef.file, fileId, store.PROP_ARCHITECTURE, metadata!.arch);
          await core.addProperty(tx, PropertyRef.file, fileId, store.PROP_METADATA, JSON.stringify(metadata));
        },
      },
      announced,
    );
    await this.rebuild(owner, g);
    return { added };
  }

  /** A repository file of the group (`{arch}/base/pkglist.classic`, ...); 404 when there is none. */
  async indexFile(owner: UserRow, group: string, path: string): Promise<RpmIndexRow> {
    const row = await store.getIndexFile(this.db, owner.id, checkGroup(group), path, TABLE);
    if (!row) throw notFound(`repository file does not exist [group: ${group}, path: ${path}]`);
    return row;
  }

  /** Rebuilds the repository files of one group (removed when it has no package left). */
  rebuild(owner: UserRow, group: string): Promise<void> {
    return this.groups.rebuild(owner, group);
  }

  private async build(owner: UserRow, group: string): Promise<void> {
    await rebuildGroup(this.db, {
      stamp: (q) => store.groupStamp(q, owner.id, group, 'alt'),
      lock: (tx) => store.lockOwner(tx, owner.id),
      build: async () => {
        const files = await store.groupFiles(this.db, owner.id, group, 'alt');
        const pkgs: IndexedAltRpm[] = files
          .filter((f) => f.metadata)
          .map((f) => ({
            metadata: JSON.parse(f.metadata!) as AltMetadata,
            fileName: f.name,
            size: f.size,
            md5: f.hash_md5,
          }));
        const now = nowUnix();
        return { now, files: await buildAltRepository(pkgs, this.deps.label, now) };
      },
      write: (tx, { now, files }) =>
        store.replaceIndex(
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
          TABLE,
        ),
    });
  }
}
