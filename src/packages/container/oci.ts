// The names, digests, errors and manifest metadata of the container registry (OCI distribution
// spec), shared by its services (service.ts: images and manifests; blobs.ts: blob uploads and
// reads; tokens.ts: /v2/token) and its routes. Nothing here touches the database or storage.
import { uniqueViolation } from '../../db/retry.js';

/** An error in the registry's own form: `{"errors":[{"code","message"}]}` with this status. */
export class OciError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const oci = (status: number, code: string, message: string) => new OciError(status, code, message);

export const MANIFEST_MAX = 10 << 20;
const RETRIES = 5;

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
/** An image name (lower case; path components separated by `/`). */
export const IMAGE = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;

export const INDEX_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
];
export const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];

export const isDigest = (ref: string) => DIGEST.test(ref);

/** The hex SHA-256 of a digest reference, or a 400 DIGEST_INVALID. */
export function shaOf(digest: string): string {
  const m = DIGEST.exec(digest);
  if (!m) throw oci(400, 'DIGEST_INVALID', `invalid or unsupported digest: ${digest}`);
  return m[1]!;
}

export function checkImage(image: string): void {
  if (image.length > 255 || !IMAGE.test(image))
    throw oci(400, 'NAME_INVALID', `invalid image name: ${image}`);
}

/** The stored version of a manifest reference: a tag as given (lower case), or a digest. */
export function versionOf(reference: string): string {
  if (isDigest(reference)) return reference;
  if (!TAG.test(reference)) throw oci(400, 'MANIFEST_INVALID', `invalid tag: ${reference}`);
  return reference.toLowerCase();
}

/** The name of the file a blob is within a version. */
export const fileNameOf = (sha: string) => `sha256_${sha}`;

/** What a version's metadata_json holds. */
export interface ManifestMetadata {
  mediaType: string;
  isTagged: boolean;
  platform?: string;
  manifests?: Array<{ digest: string; platform: string; size: number }>;
  labels?: Record<string, string>;
}

export function metadataOf(file: { metadata_json: string }): ManifestMetadata {
  try {
    return JSON.parse(file.metadata_json) as ManifestMetadata;
  } catch {
    return { mediaType: MANIFEST_TYPES[0]!, isTagged: false };
  }
}

function isUnique(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : '';
  return uniqueViolation(err) || /UNIQUE constraint|duplicate key/i.test(msg);
}

/** Runs a transaction again when a concurrent one of the same push won a unique index. */
export async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i < RETRIES && isUnique(err)) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
        continue;
      }
      throw err;
    }
  }
}
