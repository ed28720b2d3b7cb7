// Tables of the container registry (see db/migrations/0037_container_uploads.ts).
import type { Selectable } from 'kysely';
import type { FileWithBlob } from '../tables.js';

export interface PackageBlobUploadTable {
  /** A random UUID: the upload's address is /v2/{image}/blobs/uploads/{id}. */
  id: string;
  owner_id: number;
  /** The image (lower case) the upload was started for. */
  image: string;
  bytes_received: number;
  parts: number;
  created_unix: number;
  updated_unix: number;
}

export interface ContainerTables {
  package_blob_upload: PackageBlobUploadTable;
}

export type UploadRow = Selectable<PackageBlobUploadTable>;

/** A file of an image with its blob and its version's name and metadata. */
export type ImageFile = FileWithBlob & { lower_version: string; metadata_json: string };
