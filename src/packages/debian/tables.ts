// Tables of the Debian registry (see db/migrations/0059_debian_repository.ts).
import type { Generated, Selectable } from 'kysely';

/** An owner's repository signing key pair (armored OpenPGP). */
export interface PackageDebianKeyTable {
  id: Generated<number>;
  owner_id: number;
  private_key: string;
  public_key: string;
  created_unix: number;
}

/** A repository file of a distribution, as served: `Release`, `main/binary-amd64/Packages.gz`, ... */
export interface PackageDebianIndexTable {
  id: Generated<number>;
  owner_id: number;
  distribution: string;
  path: string;
  /** The file's bytes, base64. */
  content: string;
  size: number;
  hash_md5: string;
  hash_sha1: string;
  hash_sha256: string;
  hash_sha512: string;
  created_unix: number;
}

export interface DebianTables {
  package_debian_key: PackageDebianKeyTable;
  package_debian_index: PackageDebianIndexTable;
}

export type DebianKeyRow = Selectable<PackageDebianKeyTable>;
export type DebianIndexRow = Selectable<PackageDebianIndexTable>;
