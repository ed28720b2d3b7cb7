// Queries of the Chef registry: the accounts' public keys, and every cookbook version of an owner
// with its metadata and archive size (the universe, lists and metadata answers are built from one
// query). No HTTP here.
import type { Db, Tx } from '../../db/database.js';

type Q = Db | Tx;

export async function publicKey(q: Q, ownerId: number): Promise<string | undefined> {
  const row = await q
    .selectFrom('package_chef_key')
    .select('public_pem')
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
  return row?.public_pem;
}

/** Sets the account's public key (replacing the one it had). */
export async function setPublicKey(q: Q, ownerId: number, pem: string, now: number): Promise<void> {
  await q
    .insertInto('package_chef_key')
    .values({ owner_id: ownerId, public_pem: pem, created_unix: now })
    .onConflict((oc) => oc.column('owner_id').doUpdateSet({ public_pem: pem, created_unix: now }))
    .execute();
}

export interface CookbookVersionRow {
  name: string;
  lower_name: string;
  version: string;
  metadata_json: string;
  created_unix: number;
  version_id: number;
  size: number;
}

/** The owner's cookbook versions (of one cookbook when given), by name and upload order. */
export async function cookbookVersions(
  q: Q,
  ownerId: number,
  lowerName?: string,
): Promise<CookbookVersionRow[]> {
  let s = q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .leftJoin('package_file as f', (j) => j.onRef('f.version_id', '=', 'v.id').on('f.is_lead', '=', 1))
    .leftJoin('package_blob as b', 'b.id', 'f.blob_id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'chef');
  if (lowerName !== undefined) s = s.where('p.lower_name', '=', lowerName);
  const rows = await s
    .select([
      'p.name',
      'p.lower_name',
      'v.version',
      'v.metadata_json',
      'v.created_unix',
      'v.id as version_id',
      'b.size',
    ])
    .orderBy('p.lower_name')
    .orderBy('v.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    created_unix: Number(r.created_unix),
    version_id: Number(r.version_id),
    size: Number(r.size ?? 0),
  }));
}
