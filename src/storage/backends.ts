// The blob store of each kind of data, as the configuration says ([storage] and the kinds'
// sections, resolved in config/storage.ts): a directory, or a bucket (and base path) on an
// S3-compatible server.
import type { StorageSettings, StorageKind } from '../config/storage.js';
import { STORAGE_KINDS } from '../config/storage.js';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3BlobStore } from './s3.js';
import { LocalBlobStore, type BlobStore, type Storage } from './storage.js';

/**
 * A store as `settings` say; the S3 backend (and the AWS SDK under it) is loaded only when some
 * kind is on S3, so a site on local disk never pays its memory.
 */
export async function openBlobStore(
  settings: StorageSettings,
  clients?: Map<string, S3Client>,
): Promise<BlobStore> {
  if (settings.type === 'local') return new LocalBlobStore(settings.path);
  const { S3BlobStore, clientIdentity, s3Client } = await import('./s3.js');
  if (!clients) return new S3BlobStore(settings.minio);
  // Kinds on the same server and account share one client (its sockets and middleware).
  const id = clientIdentity(settings.minio);
  let client = clients.get(id);
  if (!client) clients.set(id, (client = s3Client(settings.minio)));
  return new S3BlobStore(settings.minio, client);
}

/**
 * Every kind's store; S3 buckets that are missing are created (as Forgejo does at start-up), so
 * an unreachable server stops start-up with its error.
 */
export async function openStorage(settings: Record<StorageKind, StorageSettings>): Promise<Storage> {
  const out = {} as Storage;
  const created = new Set<string>();
  const clients = new Map<string, S3Client>();
  for (const kind of STORAGE_KINDS) {
    const s = settings[kind];
    const store = await openBlobStore(s, clients);
    if (s.type === 'minio') {
      const id = `${s.minio.endpoint}/${s.minio.bucket}`;
      if (!created.has(id)) await (store as S3BlobStore).init();
      created.add(id);
    }
    out[kind] = store;
  }
  return out;
}

/** Closes the stores' connections (S3 clients' sockets; a shared client closes once and for all). */
export function closeStorage(storage: Storage): void {
  for (const kind of STORAGE_KINDS) storage[kind].close?.();
}
