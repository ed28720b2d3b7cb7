// Queries of the Helm repository: every chart file of an owner with its version (index.yaml is
// built from one query). No HTTP here.
import type { Db, Tx } from '../../db/database.js';

type Q = Db | Tx;

export interface ChartFileRow {
  name: string;
  version: string;
  metadata_json: string;
  file_name: string;
  hash_sha256: string;
  created_unix: number;
}

/** The owner's chart files (of one file name when given), by name and upload order. */
export async function chartFiles(q: Q, ownerId: number, fileName?: string): Promise<ChartFileRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'helm');
  if (fileName !== undefined) s = s.where('f.lower_name', '=', fileName.toLowerCase());
  const rows = await s
    .select([
      'p.name',
      'v.version',
      'v.metadata_json',
      'f.name as file_name',
      'b.hash_sha256',
      'v.created_unix',
    ])
    .orderBy('p.lower_name')
    .orderBy('v.id')
    .execute();
  return rows.map((r) => ({ ...r, created_unix: Number(r.created_unix) }));
}
