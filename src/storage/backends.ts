// The blob store of each kind of data, as the configuration says ([storage] and the kinds'
// sections, resolved in config/storage.ts): a directory, or a bucket (and base path) on an
// S3-compatible server.
import type { StorageSettings, StorageKind } from '../config/storage.js';
import { STORAGE_KINDS } from '../config/storage.js';
import { S3BlobStore } from './s3.js';
import { LocalBlobStore, type BlobStore, type Storage } from './storage.js';

export function openBlobStore(settings: StorageSettings): BlobStore {
  return settings.type === 'local' ? new LocalBlobStore(settings.path) : new S3BlobStore(settings.minio);
}

/**
 * Every kind's store; S3 buckets that are missing are created (as Forgejo does at start-up), so
 * an unreachable server stops start-up with its error.
 */
export async function openStorage(settings: Record<StorageKind, StorageSettings>): Promise<Storage> {
  const out = {} as Storage;
  const created = new Set<string>();
  for (const kind of STORAGE_KINDS) {
    const store = openBlobStore(settings[kind]);
    if (store instanceof S3BlobStore) {
      const id = `${store.settings.endpoint}/${store.bucket}`;
      if (!created.has(id)) await store.init();
      created.add(id);
    }
    out[kind] = store;
  }
  return out;
}

/** Closes the stores' connections (S3 clients' sockets). */
export function closeStorage(storage: Storage): void {
  for (const kind of STORAGE_KINDS) storage[kind].close?.();
}
