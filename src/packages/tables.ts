// Tables of the packages domain (see db/migrations/0016_packages.ts).
import type { Generated, Selectable } from 'kysely';

export interface PackageTable {
  id: Generated<number>;
  owner_id: number;
  repo_id: number | null;
  /** The format: 'generic', 'npm', ... */
  type: string;
  name: string;
  lower_name: string;
  /** Raised by every change to the package's versions, files or properties. */
  revision: Generated<number>;
  created_unix: number;
}

export interface PackageVersionTable {
  id: Generated<number>;
  package_id: number;
  creator_id: number | null;
  version: string;
  lower_version: string;
  metadata_json: Generated<string>;
  download_count: Generated<number>;
  created_unix: number;
}

export interface PackageBlobTable {
  id: Generated<number>;
  size: number;
  hash_md5: string;
  hash_sha1: string;
  hash_sha256: string;
  hash_sha512: string;
  created_unix: number;
}

export interface PackageFileTable {
  id: Generated<number>;
  version_id: number;
  blob_id: number;
  name: string;
  lower_name: string;
  composite_key: Generated<string>;
  is_lead: Generated<number>;
  created_unix: number;
}

/** The formats, as `package.type` names them. */
export const PACKAGE_TYPES = [
  'generic',
  'npm',
  'maven',
  'pypi',
  'cargo',
  'conda',
  'container',
  'go',
  'composer',
  'debian',
  'rubygems',
  'rpm',
  'alt',
  'arch',
  'cran',
  'helm',
  'vagrant',
  'pub',
  'chef',
  'conan',
  'swift',
  'alpine',
  'nuget',
] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

/** What a property is attached to. */
export const PropertyRef = { version: 0, file: 1, package: 2 } as const;

export interface PackagePropertyTable {
  id: Generated<number>;
  ref_type: number;
  ref_id: number;
  name: string;
  value: string;
}

export interface PackageTables {
  package: PackageTable;
  package_version: PackageVersionTable;
  package_blob: PackageBlobTable;
  package_file: PackageFileTable;
  package_property: PackagePropertyTable;
}

export type PackageRow = Selectable<PackageTable>;
export type VersionRow = Selectable<PackageVersionTable>;
export type BlobRow = Selectable<PackageBlobTable>;
export type FileRow = Selectable<PackageFileTable>;

/** A file with its blob's size and digests. */
export type FileWithBlob = FileRow & {
  size: number;
  hash_md5: string;
  hash_sha1: string;
  hash_sha256: string;
  hash_sha512: string;
};
/** A version with its package (the rows of the /packages/{owner} list). */
export type VersionWithPackage = VersionRow & {
  owner_id: number;
  repo_id: number | null;
  type: string;
  name: string;
};
