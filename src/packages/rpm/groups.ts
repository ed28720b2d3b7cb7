// What the RPM and ALT Linux formats share about .rpm files in groups: a group's name, a file's
// name, finding and deleting one file, and the rebuilds of a group's repository files (one
// owner's at a time in this process; a change that finds its group's rebuild still queued joins
// it). Each format keeps its own index files and how it builds them.
import type { Identity } from '../../auth/identity.js';
import { badRequest } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import { GroupRebuilds } from '../rebuild.js';
import type { PackageService } from '../service.js';
import type { FileWithBlob } from '../tables.js';

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

/** A group: '' or `/`-separated segments of letters, digits and `._-` (not starting with a dot). */
export function checkGroup(value: string): string {
  const g = value.replace(/^\/+|\/+$/g, '');
  if (g === '') return '';
  if (g.length > 255 || !g.split('/').every((s) => SEGMENT.test(s)))
    throw badRequest(`invalid group [group: ${g.slice(0, 100)}]`);
  return g;
}

export const rpmFileName = (name: string, version: string, arch: string) => `${name}-${version}.${arch}.rpm`;

/** One .rpm of a format, as its routes name it. */
export interface RpmFileRef {
  group: string;
  name: string;
  version: string;
  arch: string;
}

type Packages = Pick<PackageService, 'requireVersion' | 'requireFile' | 'filesOf' | 'deleteFile'>;

/**
 * The .rpm files of one format ('rpm' or 'alt') in groups, with their rebuilds: `build` makes a
 * group's repository files (and removes them when the group has no package left).
 */
export class RpmGroups {
  private readonly rebuilds: GroupRebuilds;

  constructor(
    private readonly type: 'rpm' | 'alt',
    private readonly packages: Packages,
    build: (owner: UserRow, group: string) => Promise<void>,
  ) {
    this.rebuilds = new GroupRebuilds(build);
  }

  /** The .rpm `{name}-{version}.{arch}.rpm` of the group (404 when there is none). */
  async require(owner: UserRow, identity: Identity | null, ref: RpmFileRef): Promise<FileWithBlob> {
    const found = await this.packages.requireVersion(owner, this.type, ref.name, ref.version, identity);
    return this.packages.requireFile(
      found.version.id,
      rpmFileName(ref.name, ref.version, ref.arch),
      checkGroup(ref.group),
    );
  }

  /** Deletes one .rpm (the version goes with its last file) and rebuilds the group's files. */
  async delete(owner: UserRow, doer: UserRow, identity: Identity | null, ref: RpmFileRef): Promise<void> {
    const g = checkGroup(ref.group);
    const found = await this.packages.requireVersion(owner, this.type, ref.name, ref.version, identity);
    const file = await this.packages.requireFile(
      found.version.id,
      rpmFileName(ref.name, ref.version, ref.arch),
      g,
    );
    const last = (await this.packages.filesOf([found.version.id])).length === 1;
    await this.packages.deleteFile(found.pkg, found.version, file, doer);
    // The version's deletion is an event, which rebuilds every group of the owner.
    if (!last) await this.rebuild(owner, g);
  }

  /** Rebuilds the repository files of one group; see the header. */
  rebuild(owner: UserRow, group: string): Promise<void> {
    return this.rebuilds.run(owner, group);
  }
}
