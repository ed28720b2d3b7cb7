// Queries of the Debian registry: the files of a distribution with their component, architecture
// and control file (file properties `debian.*`, as Forgejo names them), a change stamp of a
// distribution, the owner's key pair, and the stored repository files. No HTTP here.
import { sql, SqliteAdapter, type Insertable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { PropertyRef } from '../tables.js';
import type { DebianIndexRow, DebianKeyRow, PackageDebianIndexTable } from './tables.js';

type Q = Db | Tx;

export const PROP_DISTRIBUTION = 'debian.distribution';
export const PROP_COMPONENT = 'debian.component';
export const PROP_ARCHITECTURE = 'debian.architecture';
export const PROP_CONTROL = 'debian.control';

/**
 * The owner's Debian files in the distribution: those whose composite key is
 * `{distribution}|{component}` (from the owner's packages down, through their unique indexes).
 */
function distributionFilesQuery(q: Q, ownerId: number, distribution: string) {
  // Distribution names hold letters, digits and `._-`: `_` is LIKE's only wildcard among them.
  const prefix = `${distribution.replace(/[!%_]/g, (c) => `!${c}`)}|%`;
  return q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'debian')
    .where(sql<boolean>`f.composite_key like ${prefix} escape '!'`);
}

export interface DebianFileRow {
  file_id: number;
  name: string;
  package_name: string;
  version: string;
  size: number;
  hash_md5: string;
  hash_sha1: string;
  hash_sha256: string;
  hash_sha512: string;
  component: string | null;
  architecture: string | null;
  control: string | null;
}

/** Every package file of the distribution, with its component, architecture and control file. */
export async function distributionFiles(
  q: Q,
  ownerId: number,
  distribution: string,
): Promise<DebianFileRow[]> {
  const rows = await distributionFilesQuery(q, ownerId, distribution)
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .leftJoin('package_property as c', (j) =>
      j
        .onRef('c.ref_id', '=', 'f.id')
        .on('c.ref_type', '=', PropertyRef.file)
        .on('c.name', '=', PROP_COMPONENT),
    )
    .leftJoin('package_property as a', (j) =>
      j
        .onRef('a.ref_id', '=', 'f.id')
        .on('a.ref_type', '=', PropertyRef.file)
        .on('a.name', '=', PROP_ARCHITECTURE),
    )
    .leftJoin('package_property as ctl', (j) =>
      j
        .onRef('ctl.ref_id', '=', 'f.id')
        .on('ctl.ref_type', '=', PropertyRef.file)
        .on('ctl.name', '=', PROP_CONTROL),
    )
    .select([
      'f.id as file_id',
      'f.name',
      'p.name as package_name',
      'v.version',
      'b.size',
      'b.hash_md5',
      'b.hash_sha1',
      'b.hash_sha256',
      'b.hash_sha512',
      'c.value as component',
      'a.value as architecture',
      'ctl.value as control',
    ])
    .orderBy('p.lower_name')
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({ ...r, file_id: Number(r.file_id), size: Number(r.size) }));
}

/**
 * What changes whenever a file joins or leaves the distribution: the count and the sum of the
 * file ids (a new file's id is above every id there was, so no change keeps both).
 */
export async function distributionStamp(q: Q, ownerId: number, distribution: string): Promise<string> {
  const row = await distributionFilesQuery(q, ownerId, distribution)
    .select([sql<number>`count(*)`.as('n'), sql<number | null>`sum(f.id)`.as('s')])
    .executeTakeFirst();
  return `${Number(row?.n ?? 0)}:${Number(row?.s ?? 0)}`;
}

/** The distributions the owner has packages or repository files in. */
export async function distributionsOf(q: Q, ownerId: number): Promise<string[]> {
  const withFiles = await q
    .selectFrom('package_property as d')
    .innerJoin('package_file as f', 'f.id', 'd.ref_id')
    .innerJoin('package_version as v', 'v.id', 'f.version_id')
    .innerJoin('package as p', 'p.id', 'v.package_id')
    .where('d.ref_type', '=', PropertyRef.file)
    .where('d.name', '=', PROP_DISTRIBUTION)
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'debian')
    .select('d.value')
    .distinct()
    .execute();
  const indexed = await q
    .selectFrom('package_debian_index')
    .where('owner_id', '=', ownerId)
    .select('distribution as value')
    .distinct()
    .execute();
  return [...new Set([...withFiles, ...indexed].map((r) => r.value))].sort();
}

export function getKey(q: Q, ownerId: number): Promise<DebianKeyRow | undefined> {
  return q.selectFrom('package_debian_key').selectAll().where('owner_id', '=', ownerId).executeTakeFirst();
}

/** Stores a key pair unless the owner has one already (a concurrent creation is no error). */
export async function insertKey(q: Q, ownerId: number, privateKey: string, publicKey: string, now: number) {
  await q
    .insertInto('package_debian_key')
    .values({ owner_id: ownerId, private_key: privateKey, public_key: publicKey, created_unix: now })
    .execute()
    .catch((err: unknown) => {
      if (!/UNIQUE constraint|duplicate key|Duplicate entry/i.test(err instanceof Error ? err.message : ''))
        throw err;
    });
}

/**
 * Holds the owner's key row until the transaction ends, so that rebuilds of one owner's
 * repository files on several processes run one after the other (SQLite has one writer anyway).
 */
export async function lockKey(tx: Tx, ownerId: number): Promise<void> {
  if (tx.getExecutor().adapter instanceof SqliteAdapter) return;
  await tx
    .selectFrom('package_debian_key')
    .select('id')
    .where('owner_id', '=', ownerId)
    .forUpdate()
    .execute();
}

/** Replaces the repository files of the distribution. */
export async function replaceIndex(
  tx: Tx,
  ownerId: number,
  distribution: string,
  rows: Array<Insertable<PackageDebianIndexTable>>,
): Promise<void> {
  await tx
    .deleteFrom('package_debian_index')
    .where('owner_id', '=', ownerId)
    .where('distribution', '=', distribution)
    .execute();
  for (const row of rows) await tx.insertInto('package_debian_index').values(row).execute();
}

export function getIndexFile(q: Q, ownerId: number, distribution: string, path: string) {
  return q
    .selectFrom('package_debian_index')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('distribution', '=', distribution)
    .where('path', '=', path)
    .executeTakeFirst() as Promise<DebianIndexRow | undefined>;
}

/** A repository file of the distribution by its digest (Acquire-By-Hash). */
export function getIndexFileByHash(
  q: Q,
  ownerId: number,
  distribution: string,
  column: 'hash_md5' | 'hash_sha1' | 'hash_sha256' | 'hash_sha512',
  hash: string,
) {
  return q
    .selectFrom('package_debian_index')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('distribution', '=', distribution)
    .where(column, '=', hash)
    .executeTakeFirst() as Promise<DebianIndexRow | undefined>;
}
