// Tables of the lfs domain (see db/migrations/0004_lfs.ts).
import type { Generated, Selectable } from 'kysely';

/** An LFS object a repository holds. The blob itself is in storage, shared by oid. */
export interface LfsMetaObjectTable {
  id: Generated<number>;
  /** Hex SHA-256 of the content. */
  oid: string;
  size: number;
  repository_id: number;
  created_unix: number;
}

/** A file lock (Git LFS locking API): one per path and repository. */
export interface LfsLockTable {
  id: Generated<number>;
  repo_id: number;
  owner_id: number;
  /** Normalized path relative to the repository's root. */
  path: string;
  created_unix: number;
}

export interface LfsTables {
  lfs_meta_object: LfsMetaObjectTable;
  lfs_lock: LfsLockTable;
}

export type MetaRow = Selectable<LfsMetaObjectTable>;
export type LockRow = Selectable<LfsLockTable> & { owner_name: string };
