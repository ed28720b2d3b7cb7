// Queries of the CRAN registry: every file of an owner's R packages with its version's metadata,
// its blob's MD5 (the PACKAGES index's MD5sum) and the properties that tell source and binary
// files apart. No HTTP here.
import type { Db, Tx } from '../../db/database.js';

type Q = Db | Tx;

export interface CranFileRow {
  file_id: number;
  name: string;
  version: string;
  metadata_json: string;
  file_name: string;
  composite_key: string;
  hash_md5: string;
}

/** The owner's CRAN files (of one file name when given), by package name and upload order. */
export async function cranFiles(q: Q, ownerId: number, fileName?: string): Promise<CranFileRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'cran');
  if (fileName !== undefined) s = s.where('f.lower_name', '=', fileName.toLowerCase());
  const rows = await s
    .select([
      'f.id as file_id',
      'p.name',
      'v.version',
      'v.metadata_json',
      'f.name as file_name',
      'f.composite_key',
      'b.hash_md5',
    ])
    .orderBy('p.lower_name')
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({ ...r, file_id: Number(r.file_id) }));
}
