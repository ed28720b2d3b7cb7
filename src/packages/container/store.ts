// Queries of the container registry: upload sessions, and finding blobs and manifests of an
// image by digest (a blob belongs to an image when a file of any of its versions names it). No HTTP.
import type { Insertable } from 'kysely';
import { nowUnix, type Db, type Tx } from '../../db/database.js';
import { ensurePackage, UPLOAD_VERSION } from '../store.js';
import type { FileWithBlob, PackageRow } from '../tables.js';
import type { ImageFile, PackageBlobUploadTable } from './tables.js';
import type { UploadRow } from './tables.js';

type Q = Db | Tx;

/** The image's package (made when absent). */
export function ensureImage(q: Q, ownerId: number, image: string): Promise<PackageRow> {
  return ensurePackage(q, {
    owner_id: ownerId,
    repo_id: null,
    type: 'container',
    name: image,
    lower_name: image,
    created_unix: nowUnix(),
  });
}

export async function insertUpload(q: Q, row: Insertable<PackageBlobUploadTable>): Promise<void> {
  await q.insertInto('package_blob_upload').values(row).execute();
}

export async function getUpload(q: Q, id: string): Promise<UploadRow | undefined> {
  const row = await q.selectFrom('package_blob_upload').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { ...row, bytes_received: Number(row.bytes_received), parts: Number(row.parts) };
}

/** Records a part received, if the upload still has `parts` parts (false: someone else wrote one). */
export async function addPart(q: Q, id: string, parts: number, size: number, now: number): Promise<boolean> {
  const r = await q
    .updateTable('package_blob_upload')
    .set((eb) => ({
      bytes_received: eb('bytes_received', '+', size),
      parts: eb('parts', '+', 1),
      updated_unix: now,
    }))
    .where('id', '=', id)
    .where('parts', '=', parts)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Of `ids`, the upload sessions that exist. */
export async function existingUploads(q: Q, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await q.selectFrom('package_blob_upload').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export async function deleteUpload(q: Q, id: string): Promise<boolean> {
  const r = await q.deleteFrom('package_blob_upload').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

function filesOfPackage(q: Q, packageId: number) {
  return q
    .selectFrom('package_file')
    .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
    .innerJoin('package_version', 'package_version.id', 'package_file.version_id')
    .selectAll('package_file')
    .select([
      'package_blob.size',
      'package_blob.hash_md5',
      'package_blob.hash_sha1',
      'package_blob.hash_sha256',
      'package_blob.hash_sha512',
      'package_version.lower_version',
      'package_version.metadata_json',
    ])
    .where('package_version.package_id', '=', packageId);
}

/** A file of the image naming the blob `sha256` (any version, the upload version included). */
export async function findBlob(q: Q, packageId: number, sha256: string): Promise<ImageFile | undefined> {
  return (await filesOfPackage(q, packageId)
    .where('package_blob.hash_sha256', '=', sha256)
    .orderBy('package_file.id')
    .executeTakeFirst()) as ImageFile | undefined;
}

/** The manifest files (lead files) of the image whose bytes have the digest `sha256`. */
export async function findManifests(q: Q, packageId: number, sha256: string): Promise<ImageFile[]> {
  return (await filesOfPackage(q, packageId)
    .where('package_blob.hash_sha256', '=', sha256)
    .where('package_file.is_lead', '=', 1)
    .orderBy('package_file.id')
    .execute()) as ImageFile[];
}

/** The manifest file of one version (a tag or a digest). */
export async function manifestOf(
  q: Q,
  packageId: number,
  lowerVersion: string,
): Promise<ImageFile | undefined> {
  return (await filesOfPackage(q, packageId)
    .where('package_version.lower_version', '=', lowerVersion)
    .where('package_file.is_lead', '=', 1)
    .executeTakeFirst()) as ImageFile | undefined;
}

/** Files of the image's upload version naming one of the blobs `blobIds`. */
export async function uploadFiles(q: Q, packageId: number, blobIds: number[]): Promise<FileWithBlob[]> {
  if (blobIds.length === 0) return [];
  return (await filesOfPackage(q, packageId)
    .where('package_version.lower_version', '=', UPLOAD_VERSION)
    .where('package_file.blob_id', 'in', blobIds)
    .execute()) as FileWithBlob[];
}

/** The image's tags (versions not named by a digest), in order, after `last`, at most `limit`. */
export async function tags(q: Q, packageId: number, last: string, limit: number): Promise<string[]> {
  let s = q
    .selectFrom('package_version')
    .select('lower_version')
    .where('package_id', '=', packageId)
    .where('lower_version', '!=', UPLOAD_VERSION)
    .where('lower_version', 'not like', 'sha256:%')
    .orderBy('lower_version');
  if (last) s = s.where('lower_version', '>', last);
  if (limit >= 0) s = s.limit(limit);
  return (await s.execute()).map((r) => r.lower_version);
}

/** Container packages with their owner's name, by owner and image name. */
export function containerPackages(q: Q) {
  return q
    .selectFrom('package')
    .innerJoin('user', 'user.id', 'package.owner_id')
    .select(['package.id', 'package.lower_name', 'package.repo_id', 'user.lower_name as owner'])
    .where('package.type', '=', 'container')
    .orderBy('user.lower_name')
    .orderBy('package.lower_name')
    .execute();
}

/** Removes upload sessions untouched since `before` (their parts go with the cleanup of tmp/); how many. */
export async function deleteStaleUploads(q: Q, before: number): Promise<number> {
  const r = await q.deleteFrom('package_blob_upload').where('updated_unix', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
