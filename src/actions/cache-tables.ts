// Tables of the actions cache (see db/migrations/0062_action_cache.ts).
import type { Generated, Selectable } from 'kysely';

export type CacheStatus = 'reserved' | 'committing' | 'committed';

export interface ActionCacheTable {
  id: Generated<number>;
  repo_id: number;
  /** The ref the entry was saved from ("refs/heads/main"). */
  ref: string;
  cache_key: string;
  version: string;
  /** Hex SHA-256 of ref, version and key (unique within the repository). */
  key_hash: string;
  status: CacheStatus;
  size: Generated<number>;
  /** Key of the archive in `storage.artifacts` ('' until committed). */
  storage_key: string;
  created_unix: number;
  updated_unix: number;
  /** Last time a lookup returned it (eviction is by this). */
  used_unix: number;
}

export interface ActionCacheChunkTable {
  cache_id: number;
  start_offset: number;
  end_offset: number;
  storage_key: string;
  created_unix: number;
}

export interface CacheTables {
  action_cache: ActionCacheTable;
  action_cache_chunk: ActionCacheChunkTable;
}

export type CacheRow = Selectable<ActionCacheTable>;
export type CacheChunkRow = Selectable<ActionCacheChunkTable>;
