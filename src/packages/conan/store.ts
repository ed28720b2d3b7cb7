// Queries of the Conan registry: an owner's Conan files with their version, blob digest and upload
// time (revisions, references and searches are read from their composite keys), and the package
// information kept as a file property. No HTTP here.
import type { Db, Tx } from '../../db/database.js';
import { PropertyRef } from '../tables.js';
import { Prop } from './reference.js';

type Q = Db | Tx;

export interface ConanFileRow {
  id: number;
  version_id: number;
  package_name: string;
  version: string;
  name: string;
  composite_key: string;
  is_lead: number;
  created_unix: number;
  hash_md5: string;
}

/** The owner's Conan files, of one recipe name and version when given, in upload order. */
export async function conanFiles(
  q: Q,
  ownerId: number,
  only: { lowerName?: string; lowerVersion?: string } = {},
): Promise<ConanFileRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'conan');
  if (only.lowerName !== undefined) s = s.where('p.lower_name', '=', only.lowerName);
  if (only.lowerVersion !== undefined) s = s.where('v.lower_version', '=', only.lowerVersion);
  const rows = await s
    .select([
      'f.id',
      'f.version_id',
      'p.name as package_name',
      'v.version',
      'f.name',
      'f.composite_key',
      'f.is_lead',
      'f.created_unix',
      'b.hash_md5',
    ])
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    version_id: Number(r.version_id),
    is_lead: Number(r.is_lead),
    created_unix: Number(r.created_unix),
  }));
}

/** The conaninfo.txt contents (as JSON) kept on the files `ids`. */
export async function packageInfos(q: Q, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await q
    .selectFrom('package_property')
    .select(['ref_id', 'value'])
    .where('ref_type', '=', PropertyRef.file)
    .where('ref_id', 'in', ids)
    .where('name', '=', Prop.packageInfo)
    .execute();
  return new Map(rows.map((r) => [Number(r.ref_id), r.value]));
}
