// Queries of the Alpine registry: the owner's key pair, and the package files of a branch,
// repository and architecture (composite key `{branch}|{repository}|{architecture}`) with their
// version metadata and the file property alpine.metadata. No HTTP here.
import type { Db, Tx } from '../../db/database.js';
import { uniqueViolation } from '../../db/retry.js';
import { PropertyRef } from '../tables.js';
import type { AlpineKeyRow } from './tables.js';

type Q = Db | Tx;

export const PROP_BRANCH = 'alpine.branch';
export const PROP_REPOSITORY = 'alpine.repository';
export const PROP_ARCHITECTURE = 'alpine.architecture';
/** The file's metadata, as JSON (an AlpineFileMetadata). */
export const PROP_METADATA = 'alpine.metadata';

export function getKey(q: Q, ownerId: number): Promise<AlpineKeyRow | undefined> {
  return q.selectFrom('package_alpine_key').selectAll().where('owner_id', '=', ownerId).executeTakeFirst();
}

/** Stores a key pair unless the owner has one already (a concurrent creation is no error). */
export async function insertKey(q: Q, ownerId: number, privateKey: string, publicKey: string, now: number) {
  await q
    .insertInto('package_alpine_key')
    .values({ owner_id: ownerId, private_key: privateKey, public_key: publicKey, created_unix: now })
    .execute()
    .catch((err: unknown) => {
      if (!uniqueViolation(err)) throw err;
    });
}

export interface AlpineFileRow {
  file_id: number;
  composite_key: string;
  package_name: string;
  version: string;
  version_metadata: string;
  size: number;
  file_metadata: string | null;
}

/** The owner's package files under the composite keys, oldest first. */
export async function filesUnder(q: Q, ownerId: number, keys: string[]): Promise<AlpineFileRow[]> {
  const rows = await q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .leftJoin('package_property as m', (j) =>
      j
        .onRef('m.ref_id', '=', 'f.id')
        .on('m.ref_type', '=', PropertyRef.file)
        .on('m.name', '=', PROP_METADATA),
    )
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'alpine')
    .where('f.composite_key', 'in', keys)
    .select([
      'f.id as file_id',
      'f.composite_key',
      'p.name as package_name',
      'v.version',
      'v.metadata_json as version_metadata',
      'b.size',
      'm.value as file_metadata',
    ])
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({ ...r, file_id: Number(r.file_id), size: Number(r.size) }));
}

/** The package and version of the owner's file of that name under the composite key. */
export async function findFile(q: Q, ownerId: number, compositeKey: string, fileName: string) {
  return q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'alpine')
    .where('f.composite_key', '=', compositeKey)
    .where('f.lower_name', '=', fileName.toLowerCase())
    .select(['p.name', 'v.version'])
    .executeTakeFirst();
}
