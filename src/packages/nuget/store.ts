// Queries of the NuGet registry: an owner's package versions with their metadata, download count
// and .nupkg size (every feed, search and registration answer is built from one query). No HTTP
// here.
import type { Db, Tx } from '../../db/database.js';

type Q = Db | Tx;

export interface NugetVersionRow {
  name: string;
  lower_name: string;
  version: string;
  metadata_json: string;
  created_unix: number;
  download_count: number;
  size: number;
}

/**
 * The owner's NuGet versions by name and upload order: of one package (`lowerName`), or of the
 * packages whose lower-case name contains `search`.
 */
export async function nugetVersions(
  q: Q,
  ownerId: number,
  only: { lowerName?: string; search?: string } = {},
): Promise<NugetVersionRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .leftJoin('package_file as f', (j) => j.onRef('f.version_id', '=', 'v.id').on('f.is_lead', '=', 1))
    .leftJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'nuget');
  if (only.lowerName !== undefined) s = s.where('p.lower_name', '=', only.lowerName);
  if (only.search) {
    const escaped = only.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    s = s.where('p.lower_name', 'like', `%${escaped}%`);
  }
  const rows = await s
    .select([
      'p.name',
      'p.lower_name',
      'v.version',
      'v.metadata_json',
      'v.created_unix',
      'v.download_count',
      'b.size',
    ])
    .orderBy('p.lower_name')
    .orderBy('v.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    created_unix: Number(r.created_unix),
    download_count: Number(r.download_count),
    size: Number(r.size ?? 0),
  }));
}

/** The file id of the owner's PDB `lowerFileName` kept under PDB id `id` (a symbols package's). */
export async function symbolFile(
  q: Q,
  ownerId: number,
  lowerFileName: string,
  id: string,
): Promise<{ fileId: number; versionId: number } | undefined> {
  const row = await q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'nuget')
    .where('f.lower_name', '=', lowerFileName)
    .where('f.composite_key', '=', id)
    .select(['f.id as fileId', 'v.id as versionId'])
    .executeTakeFirst();
  return row ? { fileId: Number(row.fileId), versionId: Number(row.versionId) } : undefined;
}
