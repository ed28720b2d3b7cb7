// Tables of the RPM registry (see db/migrations/0064_rpm_repository.ts). Its signing key is the
// owner's package_debian_key: one OpenPGP key pair per owner signs both formats' repositories.
import type { Generated, Selectable } from 'kysely';

/** A repodata file of a group, as served: `repomd.xml`, `primary.xml.gz`, ... */
export interface PackageRpmIndexTable {
  id: Generated<number>;
  owner_id: number;
  /** The group (`el9/stable`), '' for the owner's root repository. */
  group_name: string;
  path: string;
  /** The file's bytes, base64. */
  content: string;
  size: number;
  created_unix: number;
}

export interface RpmTables {
  package_rpm_index: PackageRpmIndexTable;
}

export type RpmIndexRow = Selectable<PackageRpmIndexTable>;
