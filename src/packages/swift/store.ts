// Queries of the Swift registry: the packages of an owner one of whose versions names a source
// repository URL (`GET /identifiers?url=`). No HTTP here.
import type { Db, Tx } from '../../db/database.js';
import { PropertyRef } from '../tables.js';
import { PROPERTY_REPOSITORY_URL } from './metadata.js';

type Q = Db | Tx;

/** The owner's Swift packages (id, name, linked repository) with a version naming `url`. */
export async function packagesByRepositoryUrl(
  q: Q,
  ownerId: number,
  url: string,
): Promise<Array<{ id: number; name: string }>> {
  const rows = await q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_property as pp', (j) =>
      j
        .onRef('pp.ref_id', '=', 'v.id')
        .on('pp.ref_type', '=', PropertyRef.version)
        .on('pp.name', '=', PROPERTY_REPOSITORY_URL),
    )
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'swift')
    .where('pp.value', '=', url)
    .select(['p.id', 'p.name'])
    .distinct()
    .orderBy('p.name')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name }));
}
