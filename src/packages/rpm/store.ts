// Queries of the RPM registry: the files of a group (composite key = the group, as in Forgejo)
// with their metadata (file properties `rpm.architecture`, `rpm.metadata`), a change stamp of a
// group, and the stored repodata files. The owner's key is the Debian registry's (debian/store).
// No HTTP here.
import { sql, SqliteAdapter, type Insertable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { PropertyRef } from '../tables.js';
import type { PackageRpmIndexTable, RpmIndexRow } from './tables.js';

type Q = Db | Tx;

export const PROP_ARCHITECTURE = 'rpm.architecture';
export const PROP_METADATA = 'rpm.metadata';
/** The file's entries in primary/filelists/other.xml as JSON, rendered by the first rebuild that lists it. */
export const PROP_FRAGMENTS = 'rpm.repodata';

/** The formats whose packages are .rpm files in groups: RPM's and ALT Linux's (src/packages/alt). */
export type RpmFormat = 'rpm' | 'alt';
/** Their tables of repository files, of the same shape. */
export type IndexTable = 'package_rpm_index' | 'package_alt_index';

function groupFilesQuery(q: Q, ownerId: number, group: string, type: RpmFormat) {
  return q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', type)
    .where('f.composite_key', '=', group);
}

export interface RpmFileRow {
  file_id: number;
  name: string;
  package_name: string;
  version: string;
  size: number;
  hash_sha256: string;
  hash_md5: string;
  created_unix: number;
  metadata: string | null;
}

/** Every package file of the group, with its stored metadata. */
export async function groupFiles(
  q: Q,
  ownerId: number,
  group: string,
  type: RpmFormat = 'rpm',
): Promise<RpmFileRow[]> {
  const rows = await groupFilesQuery(q, ownerId, group, type)
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .leftJoin('package_property as m', (j) =>
      j
        .onRef('m.ref_id', '=', 'f.id')
        .on('m.ref_type', '=', PropertyRef.file)
        .on('m.name', '=', PROP_METADATA),
    )
    .select([
      'f.id as file_id',
      'f.name',
      'p.name as package_name',
      'v.version',
      'b.size',
      'b.hash_sha256',
      'b.hash_md5',
      'f.created_unix',
      'm.value as metadata',
    ])
    .orderBy('p.lower_name')
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    file_id: Number(r.file_id),
    size: Number(r.size),
    created_unix: Number(r.created_unix),
  }));
}

export interface RpmEntryRow extends Omit<RpmFileRow, 'metadata'> {
  /** The stored entries (JSON of RpmFragments), null until a rebuild has rendered them. */
  fragments: string | null;
  /** The file's metadata, read only while its entries are not stored. */
  metadata: string | null;
}

/**
 * Every RPM file of the group in the index's order, with its stored entries, and its metadata
 * where those are not stored yet: one query.
 */
export async function groupEntries(q: Q, ownerId: number, group: string): Promise<RpmEntryRow[]> {
  const rows = await groupFilesQuery(q, ownerId, group, 'rpm')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .leftJoin('package_property as r', (j) =>
      j
        .onRef('r.ref_id', '=', 'f.id')
        .on('r.ref_type', '=', PropertyRef.file)
        .on('r.name', '=', PROP_FRAGMENTS),
    )
    .leftJoin('package_property as m', (j) =>
      j
        .onRef('m.ref_id', '=', 'f.id')
        .on('m.ref_type', '=', PropertyRef.file)
        .on('m.name', '=', PROP_METADATA)
        .on('r.id', 'is', null),
    )
    .select([
      'f.id as file_id',
      'f.name',
      'p.name as package_name',
      'v.version',
      'b.size',
      'b.hash_sha256',
      'b.hash_md5',
      'f.created_unix',
      'r.value as fragments',
      'm.value as metadata',
    ])
    .orderBy('p.lower_name')
    .orderBy('f.id')
    .execute();
  return rows.map((r) => ({
    ...r,
    file_id: Number(r.file_id),
    size: Number(r.size),
    created_unix: Number(r.created_unix),
  }));
}

/** Stores the files' rendered entries (replacing any a concurrent rebuild stored). */
export async function storeFragments(tx: Tx, entries: Array<{ fileId: number; value: string }>) {
  const ids = entries.map((e) => e.fileId);
  for (let i = 0; i < ids.length; i += 500) {
    await tx
      .deleteFrom('package_property')
      .where('ref_type', '=', PropertyRef.file)
      .where('name', '=', PROP_FRAGMENTS)
      .where('ref_id', 'in', ids.slice(i, i + 500))
      .execute();
  }
  for (let i = 0; i < entries.length; i += 100) {
    await tx
      .insertInto('package_property')
      .values(
        entries.slice(i, i + 100).map((e) => ({
          ref_type: PropertyRef.file,
          ref_id: e.fileId,
          name: PROP_FRAGMENTS,
          value: e.value,
        })),
      )
      .execute();
  }
}

/** What changes whenever a file joins or leaves the group: the count and the sum of the file ids. */
export async function groupStamp(
  q: Q,
  ownerId: number,
  group: string,
  type: RpmFormat = 'rpm',
): Promise<string> {
  const row = await groupFilesQuery(q, ownerId, group, type)
    .select([sql<number>`count(*)`.as('n'), sql<number | null>`sum(f.id)`.as('s')])
    .executeTakeFirst();
  return `${Number(row?.n ?? 0)}:${Number(row?.s ?? 0)}`;
}

/** The groups the owner has packages or repodata files in. */
export async function groupsOf(
  q: Q,
  ownerId: number,
  type: RpmFormat = 'rpm',
  table: IndexTable = 'package_rpm_index',
): Promise<string[]> {
  const withFiles = await q
    .selectFrom('package as p')
    .innerJoin('package_version as v', 'v.package_id', 'p.id')
    .innerJoin('package_file as f', 'f.version_id', 'v.id')
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', type)
    .select('f.composite_key as value')
    .distinct()
    .execute();
  const indexed = await q
    .selectFrom(table)
    .where('owner_id', '=', ownerId)
    .select('group_name as value')
    .distinct()
    .execute();
  return [...new Set([...withFiles, ...indexed].map((r) => r.value))].sort();
}

/** Replaces the repodata files of the group. */
export async function replaceIndex(
  tx: Tx,
  ownerId: number,
  group: string,
  rows: Array<Insertable<PackageRpmIndexTable>>,
  table: IndexTable = 'package_rpm_index',
): Promise<void> {
  await tx.deleteFrom(table).where('owner_id', '=', ownerId).where('group_name', '=', group).execute();
  for (const row of rows) await tx.insertInto(table).values(row).execute();
}

export function getIndexFile(
  q: Q,
  ownerId: number,
  group: string,
  path: string,
  table: IndexTable = 'package_rpm_index',
) {
  return q
    .selectFrom(table)
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('group_name', '=', group)
    .where('path', '=', path)
    .executeTakeFirst() as Promise<RpmIndexRow | undefined>;
}

/** Holds the owner's user row until the transaction ends (SQLite's writes take turns anyway). */
export async function lockOwner(tx: Tx, ownerId: number): Promise<void> {
  if (tx.getExecutor().adapter instanceof SqliteAdapter) return;
  await tx.selectFrom('user').select('id').where('id', '=', ownerId).forUpdate().execute();
}
