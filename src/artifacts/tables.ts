// Tables of the artifacts domain (see db/migrations/0013_artifacts.ts).
import type { Generated, Selectable } from 'kysely';

export type ArtifactStatus = 'pending' | 'uploaded';

export interface ActionArtifactTable {
  id: Generated<number>;
  repo_id: number;
  run_id: number;
  job_id: number;
  name: string;
  status: ArtifactStatus;
  /** Bytes and hex SHA-256 of the content received so far (0 and '' before any upload). */
  size: Generated<number>;
  sha256: Generated<string>;
  /** Key of the content in `storage.artifacts`. */
  storage_key: string;
  expires_unix: number;
  created_unix: number;
  updated_unix: number;
}

/** A block of an upload in progress (`comp=block`), until the block list is committed. */
export interface ActionArtifactBlockTable {
  artifact_id: number;
  block_id: string;
  storage_key: string;
  size: number;
  created_unix: number;
}

export interface ArtifactTables {
  action_artifact: ActionArtifactTable;
  action_artifact_block: ActionArtifactBlockTable;
}

export type ArtifactRow = Selectable<ActionArtifactTable>;
export type BlockRow = Selectable<ActionArtifactBlockTable>;
