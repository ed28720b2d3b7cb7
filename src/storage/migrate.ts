// `anvil admin storage migrate`: copies every blob of one backend into another (Forgejo's
// `forgejo migrate-storage`), while the server keeps reading from the old one.
//
// Each blob of the source's listing is streamed into the target under the same key, then the
// target's size is checked against the source's; a blob already on the target with the same size
// is skipped, so a rerun (after an interruption, or to catch blobs written during the first run)
// only copies what is missing. Nothing is deleted from the source: the operator switches the
// configuration to the target once a run reports nothing left to copy, and removes the old data
// afterwards.
import type { StorageKind, StorageSettings } from '../config/storage.js';
import { STORAGE_KINDS } from '../config/storage.js';
import { openBlobStore } from './backends.js';
import type { S3BlobStore } from './s3.js';
import type { BlobStore } from './storage.js';

export interface MigrateReport {
  kind: StorageKind | string;
  /** Blobs copied in this run. */
  copied: number;
  /** Blobs already on the target with the right size. */
  skipped: number;
  /** Bytes copied. */
  bytes: number;
  /** Blobs that failed (key and reason); the run goes on with the rest. */
  failed: Array<{ key: string; error: string }>;
}

/** Copies every blob of `from` missing on `to` (same key), checking each copy's size. */
export async function migrateStore(
  from: BlobStore,
  to: BlobStore,
  kind: string,
  onBlob?: (key: string, copied: boolean) => void,
): Promise<MigrateReport> {
  const report: MigrateReport = { kind, copied: 0, skipped: 0, bytes: 0, failed: [] };
  for await (const blob of from.list('')) {
    try {
      const there = await to.stat(blob.key);
      if (there && there.size === blob.size) {
        report.skipped++;
        onBlob?.(blob.key, false);
        continue;
      }
      const { size } = await to.put(blob.key, await from.open(blob.key));
      const check = await to.stat(blob.key);
      if (size !== blob.size || check?.size !== blob.size) {
        // The source changed under us (rewritten) or the copy is short: a rerun copies it again.
        await to.delete(blob.key);
        throw new Error(`size mismatch: source ${blob.size} bytes, copied ${check?.size ?? size}`);
      }
      report.copied++;
      report.bytes += size;
      onBlob?.(blob.key, true);
    } catch (err) {
      report.failed.push({ key: blob.key, error: (err as Error).message });
    }
  }
  return report;
}

/**
 * The stores of `kinds` as `from` and `to` describe them: each kind's configured settings when
 * its type is the wanted one, else the other type's defaults for that kind (resolved by the
 * caller with the wanted STORAGE_TYPE).
 */
export async function migrateStorage(
  kinds: StorageKind[],
  from: Record<StorageKind, StorageSettings>,
  to: Record<StorageKind, StorageSettings>,
  log: (line: string) => void,
): Promise<MigrateReport[]> {
  const reports: MigrateReport[] = [];
  for (const kind of kinds) {
    if (samePlace(from[kind], to[kind])) throw new Error(`the ${kind} source and target are the same store`);
    const source = await openBlobStore(from[kind]);
    const target = await openBlobStore(to[kind]);
    try {
      if (to[kind].type === 'minio') await (target as S3BlobStore).init();
      const r = await migrateStore(source, target, kind);
      log(
        `${kind}: ${r.copied} copied (${r.bytes} bytes), ${r.skipped} already there, ${r.failed.length} failed`,
      );
      for (const f of r.failed) log(`  ${kind} ${f.key}: ${f.error}`);
      reports.push(r);
    } finally {
      source.close?.();
      target.close?.();
    }
  }
  return reports;
}

/** --type values: Anvil's kinds, Forgejo's names for them, or all. */
const TYPE_NAMES: Record<string, StorageKind[]> = {
  all: STORAGE_KINDS,
  lfs: ['lfs'],
  attachments: ['attachments'],
  artifacts: ['artifacts'],
  'actions-artifacts': ['artifacts'],
  actions_artifacts: ['artifacts'],
  packages: ['packages'],
  avatars: ['avatars'],
  'repo-avatars': ['avatars'],
};

export function kindsOf(type: string): StorageKind[] {
  const kinds = TYPE_NAMES[type.toLowerCase()];
  if (!kinds) throw new Error(`--type: "${type}" must be one of ${Object.keys(TYPE_NAMES).join(', ')}`);
  return kinds;
}

/**
 * Each kind's `type` (local or minio) store: as configured when the kind is configured with that
 * type, else as it would be with [storage] STORAGE_TYPE set to it (`load` reads the configuration
 * with that override): a site on local disk names its bucket in [storage] MINIO_* before
 * migrating, and a site switched to S3 still finds its old directories.
 */
export function settingsFor(
  type: string,
  load: (storageType?: string) => Record<StorageKind, StorageSettings>,
): Record<StorageKind, StorageSettings> {
  if (type !== 'local' && type !== 'minio') throw new Error(`"${type}" must be local or minio`);
  const configured = load();
  const forced = load(type);
  const out = {} as Record<StorageKind, StorageSettings>;
  for (const kind of STORAGE_KINDS) {
    const s: StorageSettings = configured[kind].type === type ? configured[kind] : forced[kind];
    if (s.type !== type) throw new Error(`the ${kind} store is configured as ${s.type}, not ${type}`);
    out[kind] = s;
  }
  return out;
}

/** Whether two settings name the same place (migrating onto itself). */
export function samePlace(a: StorageSettings, b: StorageSettings): boolean {
  if (a.type === 'local' && b.type === 'local') return a.path === b.path;
  if (a.type === 'minio' && b.type === 'minio') {
    return (
      a.minio.endpoint === b.minio.endpoint &&
      a.minio.bucket === b.minio.bucket &&
      a.minio.basePath === b.minio.basePath
    );
  }
  return false;
}
