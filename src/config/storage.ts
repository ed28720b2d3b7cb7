// Where each kind of blob is stored, resolved from Forgejo's keys as Forgejo resolves them
// (modules/setting/storage.go):
//
//   [storage]            the defaults: STORAGE_TYPE = local | minio, PATH, MINIO_*, SERVE_DIRECT.
//   [storage.NAME]       a named storage; a kind's STORAGE_TYPE = NAME points at it.
//   [lfs] [attachment] [packages] [actions.artifacts] [avatar]
//                        the kind's own section. With STORAGE_TYPE = local or minio (and no
//                        [storage.local]/[storage.minio]) it is the whole configuration of that
//                        kind; otherwise its PATH, MINIO_BASE_PATH, MINIO_BUCKET and SERVE_DIRECT
//                        override the target section's.
//   [storage.lfs] ...    [storage.<kind name>] is the target when the kind's section names no type.
//
// Each kind gets a store of its own: its own directory, or its own base path in the bucket
// (MINIO_BASE_PATH, `<kind name>/` by default, under [storage]'s MINIO_BASE_PATH when that is set).
import path from 'node:path';

/** The stores Anvil keeps, one per kind of data (the keys of `Storage` in src/storage). */
export type StorageKind = 'lfs' | 'attachments' | 'artifacts' | 'packages' | 'avatars';
export const STORAGE_KINDS: StorageKind[] = ['lfs', 'attachments', 'artifacts', 'packages', 'avatars'];

export interface S3Settings {
  /** host[:port] (MINIO_ENDPOINT). */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  /** The region (MINIO_LOCATION). */
  location: string;
  useSsl: boolean;
  /** Prefix of every key of this kind in the bucket (MINIO_BASE_PATH), '' or ending in '/'. */
  basePath: string;
  /** auto (path-style except on AWS), dns (virtual hosts) or path (MINIO_BUCKET_LOOKUP). */
  bucketLookup: 'auto' | 'dns' | 'path';
  /** Downloads are redirected to presigned URLs (SERVE_DIRECT). */
  serveDirect: boolean;
}

export type StorageSettings = { type: 'local'; path: string } | { type: 'minio'; minio: S3Settings };

/** The reads `resolveStorage` needs (reader.ts's Reader; every key read is then a known key). */
export interface StorageReader {
  has(section: string): boolean;
  string(section: string, key: string, def: string): string;
  bool(section: string, key: string, def: boolean): boolean;
  fail(message: string): never;
}

interface KindSpec {
  /** Forgejo's storage name ([storage.NAME], the default base path). */
  name: string;
  /** The kind's own section. */
  section: string;
  /** A key naming the storage type before the section's own STORAGE_TYPE (avatars). */
  typeKey?: [string, string];
  /** Anvil's directory under APP_DATA_PATH when local (kept from before S3 existed). */
  dir: string;
}

const KINDS: Record<StorageKind, KindSpec> = {
  lfs: { name: 'lfs', section: 'lfs', dir: 'lfs' },
  attachments: { name: 'attachments', section: 'attachment', dir: 'attachments' },
  artifacts: { name: 'actions_artifacts', section: 'actions.artifacts', dir: 'artifacts' },
  packages: { name: 'packages', section: 'packages', dir: 'packages' },
  avatars: {
    name: 'avatars',
    section: 'avatar',
    typeKey: ['picture', 'AVATAR_STORAGE_TYPE'],
    dir: 'avatars',
  },
};

const TYPES = ['local', 'minio'];

/** How the target section was found (decides how PATH and MINIO_BASE_PATH combine with the name). */
type Found = 'typ' | 'default' | 'named' | 'sec';

function targetSection(r: StorageReader, spec: KindSpec): { sec: string; found: Found; type: string } {
  let typ = spec.typeKey ? r.string(spec.typeKey[0], spec.typeKey[1], '') : '';
  if (!typ) {
    typ = r.string(spec.section, 'STORAGE_TYPE', '');
    if (TYPES.includes(typ) && !r.has(`storage.${typ}`))
      return { sec: spec.section, found: 'sec', type: typ };
  }
  const byType = (t: string): { sec: string; found: Found; type: string } | undefined => {
    const sec = `storage.${t}`;
    if (!r.has(sec)) {
      if (!TYPES.includes(t))
        r.fail(`[${spec.section}] STORAGE_TYPE: no section [${sec}] for storage "${t}"`);
      return undefined;
    }
    const type = r.string(sec, 'STORAGE_TYPE', TYPES.includes(t) ? t : '');
    if (!TYPES.includes(type)) r.fail(`[${sec}] STORAGE_TYPE: "${type}" must be local or minio`);
    return { sec, found: 'typ', type };
  };
  if (typ) {
    const hit = byType(typ);
    if (hit) return hit;
  }
  const named = `storage.${spec.name}`;
  if (r.has(named)) {
    const t = r.string(named, 'STORAGE_TYPE', '');
    if (t === '') {
      if (r.string(named, 'PATH', '') !== '') return { sec: named, found: 'named', type: 'local' };
    } else {
      return byType(t) ?? { sec: named, found: 'named', type: t };
    }
  }
  const type = r.string('storage', 'STORAGE_TYPE', 'local');
  if (!TYPES.includes(type)) r.fail(`[storage] STORAGE_TYPE: "${type}" must be local or minio`);
  return { sec: 'storage', found: 'default', type };
}

export function resolveStorage(r: StorageReader, kind: StorageKind, appDataPath: string): StorageSettings {
  const spec = KINDS[kind];
  const target = targetSection(r, spec);
  const over =
    target.found === 'sec'
      ? undefined
      : r.has(spec.section)
        ? spec.section
        : target.found !== 'named' && r.has(`storage.${spec.name}`)
          ? `storage.${spec.name}`
          : undefined;
  const shared = target.found === 'default' || target.found === 'typ';
  if (target.type === 'local') {
    const targetPath = r.string(target.sec, 'PATH', '');
    let fallback = path.join(appDataPath, spec.dir);
    if (targetPath) {
      fallback = path.resolve(appDataPath, shared ? path.join(targetPath, spec.dir) : targetPath);
    }
    const own = over ? r.string(over, 'PATH', '') : '';
    return {
      type: 'local',
      path: own
        ? path.resolve(targetPath ? path.resolve(appDataPath, targetPath) : appDataPath, own)
        : fallback,
    };
  }
  const s = target.sec;
  const lookup = r.string(s, 'MINIO_BUCKET_LOOKUP', 'auto').toLowerCase();
  if (!['auto', 'dns', 'path'].includes(lookup)) {
    r.fail(`[${s}] MINIO_BUCKET_LOOKUP: "${lookup}" must be auto, dns or path`);
  }
  const base = r.string(s, 'MINIO_BASE_PATH', '');
  let basePath = base ? (shared ? `${base.replace(/\/+$/, '')}/${spec.name}/` : base) : `${spec.name}/`;
  let bucket = r.string(s, 'MINIO_BUCKET', 'gitea');
  let serveDirect = r.bool(s, 'SERVE_DIRECT', false);
  if (over) {
    serveDirect = r.bool(over, 'SERVE_DIRECT', serveDirect);
    basePath = r.string(over, 'MINIO_BASE_PATH', basePath);
    bucket = r.string(over, 'MINIO_BUCKET', bucket);
  }
  basePath = basePath.replace(/^\/+/, '');
  if (basePath && !basePath.endsWith('/')) basePath += '/';
  return {
    type: 'minio',
    minio: {
      endpoint: r.string(s, 'MINIO_ENDPOINT', 'localhost:9000'),
      accessKeyId: r.string(s, 'MINIO_ACCESS_KEY_ID', ''),
      secretAccessKey: r.string(s, 'MINIO_SECRET_ACCESS_KEY', ''),
      bucket,
      location: r.string(s, 'MINIO_LOCATION', 'us-east-1'),
      useSsl: r.bool(s, 'MINIO_USE_SSL', false),
      basePath,
      bucketLookup: lookup as S3Settings['bucketLookup'],
      serveDirect,
    },
  };
}
