// Tables of the mirrors domain (see db/migrations/0006_mirrors.ts).
import type { Generated, Selectable } from 'kysely';

/** A pull mirror: the repository `repo_id` follows `remote_address`. */
export interface MirrorTable {
  id: Generated<number>;
  repo_id: number;
  /** Without credentials. */
  remote_address: string;
  /** Encrypted {"username","password"} (auth/secrets.ts), or empty. */
  credentials: Generated<string>;
  /** Seconds between updates; 0: only on request. */
  interval: number;
  enable_prune: Generated<number>;
  created_unix: number;
  /** Last successful update. */
  updated_unix: Generated<number>;
  next_update_unix: Generated<number>;
  last_error: Generated<string>;
}

/** A push mirror: the repository `repo_id` is pushed to `remote_address`. */
export interface PushMirrorTable {
  id: Generated<number>;
  repo_id: number;
  remote_name: string;
  remote_address: string;
  credentials: Generated<string>;
  sync_on_commit: Generated<number>;
  interval: number;
  created_unix: number;
  /** Last attempt, successful or not (as Forgejo). */
  last_update_unix: Generated<number>;
  next_update_unix: Generated<number>;
  last_error: Generated<string>;
}

export interface MirrorTables {
  mirror: MirrorTable;
  push_mirror: PushMirrorTable;
}

export type MirrorRow = Selectable<MirrorTable>;
export type PushMirrorRow = Selectable<PushMirrorTable>;
