// Queries of the RubyGems registry: every gem file of an owner with its version's metadata (the
// index files are built from one query). No HTTP here.
import type { Db, Tx } from '../../db/database.js';

type Q = Db | Tx;

export interface GemFileRow {
  name: string;
  version: string;
  metadata_json: string;
  file_name: string;
  hash_sha256: string;
  created_unix: number;
}

/**
 * The owner's gem files (one per version and platform), by name and upload order; of one gem, or
 * the one file of a name.
 */
export async function gemFiles(
  q: Q,
  ownerId: number,
  only: { lowerName?: string; fileName?: string } = {},
): Promise<GemFileRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'rubygems');
  if (only.lowerName !== undefined) s = s.where('p.lower_name', '=', only.lowerName);
  if (only.fileName !== undefined) s = s.where('f.lower_name', '=', only.fileName.toLowerCase());
  const rows = await s
    .select([
      'p.name',
      'v.version',
      'v.metadata_json',
      'f.name as file_name',
      'b.hash_sha256',
      'f.created_unix',
    ])
    .orderBy('p.lower_name')
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({ ...r, created_unix: Number(r.created_unix) }));
}
