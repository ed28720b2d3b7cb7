// Queries of the Arch registry: the package files of a repository with their architecture, desc
// fields and signature (file properties `arch.*`). No HTTP here.
import type { Db, Tx } from '../../db/database.js';
import { PropertyRef } from '../tables.js';

type Q = Db | Tx;

export const PROP_REPOSITORY = 'arch.repository';
export const PROP_ARCHITECTURE = 'arch.architecture';
/** The package's .PKGINFO fields, as JSON (an ArchPackage). */
export const PROP_DESC = 'arch.desc';
/** The package's detached OpenPGP signature, base64. */
export const PROP_SIGNATURE = 'arch.signature';

export interface ArchFileRow {
  file_id: number;
  name: string;
  size: number;
  hash_md5: string;
  hash_sha256: string;
  created_unix: number;
  architecture: string | null;
  desc: string | null;
  signature: string | null;
}

/** The owner's package files in the repository (composite key `{repository}`), oldest first. */
export async function repositoryFiles(q: Q, ownerId: number, repository: string): Promise<ArchFileRow[]> {
  const rows = await q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .leftJoin('package_property as a', (j) =>
      j
        .onRef('a.ref_id', '=', 'f.id')
        .on('a.ref_type', '=', PropertyRef.file)
        .on('a.name', '=', PROP_ARCHITECTURE),
    )
    .leftJoin('package_property as d', (j) =>
      j.onRef('d.ref_id', '=', 'f.id').on('d.ref_type', '=', PropertyRef.file).on('d.name', '=', PROP_DESC),
    )
    .leftJoin('package_property as s', (j) =>
      j
        .onRef('s.ref_id', '=', 'f.id')
        .on('s.ref_type', '=', PropertyRef.file)
        .on('s.name', '=', PROP_SIGNATURE),
    )
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'arch')
    .where('f.composite_key', '=', repository)
    .select([
      'f.id as file_id',
      'f.name',
      'b.size',
      'b.hash_md5',
      'b.hash_sha256',
      'f.created_unix',
      'a.value as architecture',
      'd.value as desc',
      's.value as signature',
    ])
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    file_id: Number(r.file_id),
    size: Number(r.size),
    created_unix: Number(r.created_unix),
  }));
}

/** A property of a file (the signature of a package). */
export async function fileProperty(q: Q, fileId: number, name: string): Promise<string | undefined> {
  const row = await q
    .selectFrom('package_property')
    .select('value')
    .where('ref_type', '=', PropertyRef.file)
    .where('ref_id', '=', fileId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.value;
}
