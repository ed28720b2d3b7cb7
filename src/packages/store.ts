// Queries on packages, versions, files, blobs and properties. No HTTP here.
import { sql, type Insertable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { PackageBlobTable, PackageFileTable, PackageTable, PackageVersionTable } from './tables.js';
import { PropertyRef } from './tables.js';
import type { PackageRow, VersionRow, BlobRow, FileWithBlob, VersionWithPackage } from './tables.js';

type Q = Db | Tx;

const CHUNK = 500;

/**
 * The version that holds a container image's blobs uploaded before a manifest names them
 * (Forgejo's internal `_upload` version): never listed, counted or cleaned up as a version.
 */
export const UPLOAD_VERSION = '_upload';

/** Leaves out internal versions (in a query joining package_version and package). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function notInternal(eb: any) {
  return eb.or([
    eb('package.type', '!=', 'container'),
    eb('package_version.lower_version', '!=', UPLOAD_VERSION),
  ]);
}

export function getPackageById(q: Q, id: number): Promise<PackageRow | undefined> {
  return q.selectFrom('package').selectAll().where('id', '=', id).executeTakeFirst();
}

export function getPackage(q: Q, ownerId: number, type: string, lowerName: string) {
  return q
    .selectFrom('package')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('type', '=', type)
    .where('lower_name', '=', lowerName)
    .executeTakeFirst();
}

/** The package, created when absent (a concurrent creation of the same package is no error). */
export async function ensurePackage(q: Q, row: Insertable<PackageTable>): Promise<PackageRow> {
  await q
    .insertInto('package')
    .values(row)
    .onConflict((oc) => oc.columns(['owner_id', 'type', 'lower_name']).doNothing())
    .execute();
  return (await getPackage(q, row.owner_id, row.type, row.lower_name))!;
}

export async function bumpRevision(q: Q, packageId: number): Promise<void> {
  await q
    .updateTable('package')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('id', '=', packageId)
    .execute();
}

export async function setRepo(q: Q, packageId: number, repoId: number | null): Promise<void> {
  await q.updateTable('package').set({ repo_id: repoId }).where('id', '=', packageId).execute();
}

export async function deletePackage(q: Q, packageId: number): Promise<void> {
  await q
    .deleteFrom('package_property')
    .where('ref_type', '=', PropertyRef.package)
    .where('ref_id', '=', packageId)
    .execute();
  await q.deleteFrom('package').where('id', '=', packageId).execute();
}

export function packagesOfOwner(q: Q, ownerId: number) {
  return q.selectFrom('package').selectAll().where('owner_id', '=', ownerId).execute();
}

export function getVersion(q: Q, packageId: number, lowerVersion: string) {
  return q
    .selectFrom('package_version')
    .selectAll()
    .where('package_id', '=', packageId)
    .where('lower_version', '=', lowerVersion)
    .executeTakeFirst();
}

export function versionsOf(q: Q, packageId: number) {
  return q
    .selectFrom('package_version')
    .selectAll()
    .where('package_id', '=', packageId)
    .orderBy('id')
    .execute();
}

/** The versions of the packages `ids`, each package's in id order. */
export async function versionsOfPackages(q: Q, ids: number[]): Promise<VersionRow[]> {
  const out: VersionRow[] = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    out.push(
      ...(await q
        .selectFrom('package_version')
        .selectAll()
        .where('package_id', 'in', part)
        .orderBy('id')
        .execute()),
    );
  }
  return out;
}

export async function countVersions(q: Q, packageId: number): Promise<number> {
  const r = await q
    .selectFrom('package_version')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('package_id', '=', packageId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertVersion(q: Q, row: Insertable<PackageVersionTable>): Promise<VersionRow> {
  return q.insertInto('package_version').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateVersionMetadata(q: Q, versionId: number, metadata: string): Promise<void> {
  await q
    .updateTable('package_version')
    .set({ metadata_json: metadata })
    .where('id', '=', versionId)
    .execute();
}

export async function countDownload(q: Q, versionId: number): Promise<void> {
  await q
    .updateTable('package_version')
    .set((eb) => ({ download_count: eb('download_count', '+', 1) }))
    .where('id', '=', versionId)
    .execute();
}

export async function deleteVersion(q: Q, versionId: number): Promise<void> {
  await q
    .deleteFrom('package_property')
    .where('ref_type', '=', PropertyRef.version)
    .where('ref_id', '=', versionId)
    .execute();
  await q.deleteFrom('package_version').where('id', '=', versionId).execute();
}

export function getBlob(q: Q, sha256: string) {
  return q.selectFrom('package_blob').selectAll().where('hash_sha256', '=', sha256).executeTakeFirst();
}

/** Which of these SHA-256s have a blob row (for the sweep of orphaned blobs). */
export async function existingBlobs(q: Q, sha256s: string[]): Promise<Set<string>> {
  if (!sha256s.length) return new Set();
  const rows = await q
    .selectFrom('package_blob')
    .select('hash_sha256')
    .where('hash_sha256', 'in', sha256s)
    .execute();
  return new Set(rows.map((r) => r.hash_sha256));
}

/** The blob row for these digests, created when absent. */
export async function ensureBlob(q: Q, row: Insertable<PackageBlobTable>): Promise<BlobRow> {
  await q
    .insertInto('package_blob')
    .values(row)
    .onConflict((oc) => oc.column('hash_sha256').doNothing())
    .execute();
  return (await getBlob(q, row.hash_sha256))!;
}

/** Deletes the blob row if no file names it; whether it did. */
export async function deleteBlobIfUnreferenced(q: Q, id: number): Promise<boolean> {
  const r = await q
    .deleteFrom('package_blob')
    .where('id', '=', id)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('package_file').select('id').whereRef('blob_id', '=', 'package_blob.id')),
      ),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Removes the blobs among `ids` that no file names any more; returns their SHA-256s. */
export async function removeUnreferencedBlobs(q: Q, ids: number[]): Promise<string[]> {
  const out: string[] = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    const orphans = await q
      .selectFrom('package_blob')
      .select(['id', 'hash_sha256'])
      .where('id', 'in', part)
      .where((eb) =>
        eb.not(
          eb.exists(eb.selectFrom('package_file').select('id').whereRef('blob_id', '=', 'package_blob.id')),
        ),
      )
      .execute();
    if (orphans.length === 0) continue;
    await q
      .deleteFrom('package_blob')
      .where(
        'id',
        'in',
        orphans.map((o) => o.id),
      )
      .execute();
    out.push(...orphans.map((o) => o.hash_sha256));
  }
  return out;
}

function filesQuery(q: Q) {
  return q
    .selectFrom('package_file')
    .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
    .selectAll('package_file')
    .select([
      'package_blob.size',
      'package_blob.hash_md5',
      'package_blob.hash_sha1',
      'package_blob.hash_sha256',
      'package_blob.hash_sha512',
    ]);
}

export function getFile(q: Q, versionId: number, lowerName: string, compositeKey = '') {
  return filesQuery(q)
    .where('package_file.version_id', '=', versionId)
    .where('package_file.lower_name', '=', lowerName)
    .where('package_file.composite_key', '=', compositeKey)
    .executeTakeFirst() as Promise<FileWithBlob | undefined>;
}

/** The files of the versions `ids`, each version's in id order. */
export async function filesOfVersions(q: Q, ids: number[]): Promise<FileWithBlob[]> {
  const out: FileWithBlob[] = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const part = unique.slice(i, i + CHUNK);
    out.push(
      ...((await filesQuery(q)
        .where('package_file.version_id', 'in', part)
        .orderBy('package_file.id')
        .execute()) as FileWithBlob[]),
    );
  }
  return out;
}

export async function insertFile(q: Q, row: Insertable<PackageFileTable>): Promise<number> {
  return (await q.insertInto('package_file').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function deleteFiles(q: Q, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    await q
      .deleteFrom('package_property')
      .where('ref_type', '=', PropertyRef.file)
      .where('ref_id', 'in', part)
      .execute();
    await q.deleteFrom('package_file').where('id', 'in', part).execute();
  }
}

function versionListQuery(q: Q) {
  return q
    .selectFrom('package_version')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .selectAll('package_version')
    .select(['package.owner_id', 'package.repo_id', 'package.type', 'package.name']);
}

/**
 * One page of an owner's versions, newest first, optionally of one type, with `q` in the name, or
 * of the packages linked to one repository.
 */
export function listVersions(
  q: Q,
  ownerId: number,
  f: { type?: string | undefined; q?: string | undefined; repoId?: number | undefined },
  limit: number,
  offset: number,
): Promise<[VersionWithPackage[], number]> {
  let s = versionListQuery(q).where('package.owner_id', '=', ownerId).where(notInternal);
  if (f.repoId !== undefined) s = s.where('package.repo_id', '=', f.repoId);
  if (f.type) s = s.where('package.type', '=', f.type);
  if (f.q) s = s.where('package.lower_name', 'like', `%${escapeLike(f.q.toLowerCase())}%`);
  return paged(s.orderBy('package_version.id', 'desc'), limit, offset) as Promise<
    [VersionWithPackage[], number]
  >;
}

/**
 * One page of an owner's packages (of one type, with `q` in the name, or linked to one
 * repository), each as its latest version with the number of versions it has, the most recently
 * published first: one query (and its count).
 */
export function listPackages(
  q: Q,
  ownerId: number,
  f: { type?: string | undefined; q?: string | undefined; repoId?: number | undefined },
  limit: number,
  offset: number,
): Promise<[Array<VersionWithPackage & { version_count: number | string }>, number]> {
  const latest = q
    .selectFrom('package_version')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .where('package.owner_id', '=', ownerId)
    .where(notInternal)
    .groupBy('package_version.package_id')
    .select([
      'package_version.package_id',
      (eb) => eb.fn.max('package_version.id').as('latest_id'),
      (eb) => eb.fn.countAll().as('version_count'),
    ]);
  let s = versionListQuery(q)
    .innerJoin(latest.as('latest'), 'latest.latest_id', 'package_version.id')
    .select('latest.version_count')
    .where('package.owner_id', '=', ownerId);
  if (f.repoId !== undefined) s = s.where('package.repo_id', '=', f.repoId);
  if (f.type) s = s.where('package.type', '=', f.type);
  if (f.q) s = s.where('package.lower_name', 'like', `%${escapeLike(f.q.toLowerCase())}%`);
  return paged(s.orderBy('package_version.id', 'desc'), limit, offset) as Promise<
    [Array<VersionWithPackage & { version_count: number | string }>, number]
  >;
}

/** One page of every owner's versions (site administration), newest first, with their files' total size. */
export function listAllVersions(
  q: Q,
  f: { type?: string | undefined; q?: string | undefined },
  limit: number,
  offset: number,
): Promise<[Array<VersionWithPackage & { total_size: number | string | null }>, number]> {
  let s = versionListQuery(q)
    .where(notInternal)
    .select((eb) =>
      eb
        .selectFrom('package_file')
        .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
        .select((e) => e.fn.sum<number>('package_blob.size').as('s'))
        .whereRef('package_file.version_id', '=', 'package_version.id')
        .as('total_size'),
    );
  if (f.type) s = s.where('package.type', '=', f.type);
  if (f.q) s = s.where('package.lower_name', 'like', `%${escapeLike(f.q.toLowerCase())}%`);
  return paged(s.orderBy('package_version.id', 'desc'), limit, offset) as Promise<
    [Array<VersionWithPackage & { total_size: number | string | null }>, number]
  >;
}

/** A version with its package's owner, type and name. */
export function versionWithPackage(q: Q, versionId: number): Promise<VersionWithPackage | undefined> {
  return versionListQuery(q).where('package_version.id', '=', versionId).executeTakeFirst() as Promise<
    VersionWithPackage | undefined
  >;
}

/** The packages of a type whose name holds `text`, by name, with their newest version. */
export function searchPackages(
  q: Q,
  ownerId: number,
  type: string,
  text: string,
  limit: number,
  offset: number,
): Promise<[PackageRow[], number]> {
  let s = q.selectFrom('package').selectAll().where('owner_id', '=', ownerId).where('type', '=', type);
  if (text) s = s.where('lower_name', 'like', `%${escapeLike(text.toLowerCase())}%`);
  return paged(s.orderBy('lower_name'), limit, offset);
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

// Properties

export function properties(q: Q, refType: number, refIds: number[], name?: string) {
  if (refIds.length === 0) return Promise.resolve([]);
  let s = q
    .selectFrom('package_property')
    .selectAll()
    .where('ref_type', '=', refType)
    .where('ref_id', 'in', refIds);
  if (name !== undefined) s = s.where('name', '=', name);
  return s.orderBy('id').execute();
}

export async function addProperty(q: Q, refType: number, refId: number, name: string, value: string) {
  await q.insertInto('package_property').values({ ref_type: refType, ref_id: refId, name, value }).execute();
}

export async function deleteProperties(
  q: Q,
  refType: number,
  refIds: number[],
  name: string,
  value?: string,
): Promise<void> {
  if (refIds.length === 0) return;
  let s = q
    .deleteFrom('package_property')
    .where('ref_type', '=', refType)
    .where('ref_id', 'in', refIds)
    .where('name', '=', name);
  if (value !== undefined) s = s.where('value', '=', value);
  await s.execute();
}

// Quota and limits

/** Bytes of package files per owner (a blob counts once per file that names it). */
export async function ownerTotals(
  q: Q,
  ownerId?: number,
): Promise<Array<{ owner_id: number; total: number }>> {
  let s = q
    .selectFrom('package_file')
    .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
    .innerJoin('package_version', 'package_version.id', 'package_file.version_id')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .select(['package.owner_id', (eb) => eb.fn.sum<number>('package_blob.size').as('total')])
    .groupBy('package.owner_id');
  if (ownerId !== undefined) s = s.where('package.owner_id', '=', ownerId);
  return (await s.execute()).map((r) => ({ owner_id: Number(r.owner_id), total: Number(r.total) }));
}

export async function ownerVersionCount(q: Q, ownerId: number): Promise<number> {
  const r = await q
    .selectFrom('package_version')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('package.owner_id', '=', ownerId)
    .where(notInternal)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One page of an owner's versions with their total size, for /user/quota/packages. */
export function quotaItems(
  q: Q,
  ownerId: number,
  limit: number,
  offset: number,
  bySize = false,
): Promise<[Array<{ id: number; name: string; type: string; version: string; size: number }>, number]> {
  const query = q
    .selectFrom('package_version')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .select([
      'package_version.id',
      'package.name',
      'package.type',
      'package_version.version',
      (eb) =>
        eb
          .selectFrom('package_file')
          .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
          .select((e) => e.fn.coalesce(e.fn.sum<number>('package_blob.size'), e.lit(0)).as('s'))
          .whereRef('package_file.version_id', '=', 'package_version.id')
          .as('size'),
    ])
    .where('package.owner_id', '=', ownerId)
    .where(notInternal)
    .$if(bySize, (s) => s.orderBy(sql.ref('size'), 'desc'))
    .orderBy('package_version.id');
  type Row = { id: number; name: string; type: string; version: string; size: number };
  // Largest first (the storage overview's list): not counted.
  if (bySize)
    return query
      .limit(limit)
      .offset(offset)
      .execute()
      .then((rows) => [rows as Row[], -1]);
  return paged(query, limit, offset) as Promise<[Row[], number]>;
}

/**
 * The highest access mode `userId` has on the packages of organization `orgId` through its teams:
 * owners' and admin teams' authorize, otherwise the `repo.packages` unit's mode.
 */
export async function teamPackageMode(q: Q, orgId: number, userId: number): Promise<number> {
  const rows = await q
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .leftJoin('team_unit', (j) =>
      j.onRef('team_unit.team_id', '=', 'team.id').on('team_unit.type', '=', 'repo.packages'),
    )
    .select(['team.authorize as authorize', 'team_unit.access_mode as mode'])
    .where('team.org_id', '=', orgId)
    .where('team_user.uid', '=', userId)
    .execute();
  let best = 0;
  for (const r of rows) best = Math.max(best, r.authorize >= 3 ? r.authorize : (r.mode ?? 0));
  return best;
}
