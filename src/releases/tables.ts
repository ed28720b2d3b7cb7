// Tables of the releases domain (see db/migrations/0009_releases.ts).
import type { Generated, Selectable } from 'kysely';

export interface ReleaseTable {
  id: Generated<number>;
  repo_id: number;
  publisher_id: number;
  tag_name: string;
  lower_tag_name: string;
  target: Generated<string>;
  title: Generated<string>;
  note: Generated<string>;
  /** Commit of the tag; '' while a draft's tag does not exist. */
  sha1: Generated<string>;
  is_draft: Generated<number>;
  is_prerelease: Generated<number>;
  /** A row recording a bare tag, never shown as a release. */
  is_tag: Generated<number>;
  hide_archive_links: Generated<number>;
  created_unix: number;
}

export interface ReleaseTables {
  release: ReleaseTable;
}

export type ReleaseRow = Selectable<ReleaseTable>;
