// Tables of the attachments domain (see db/migrations/0008_attachments.ts).
import type { Generated, Selectable } from 'kysely';

export interface AttachmentTable {
  id: Generated<number>;
  /** Public name of the attachment (download links) and its storage key. */
  uuid: string;
  repo_id: number;
  /** The issue of an issue attachment, and of a comment attachment. */
  issue_id: number | null;
  comment_id: number | null;
  release_id: number | null;
  uploader_id: number;
  name: string;
  size: Generated<number>;
  download_count: Generated<number>;
  /** Set for a link to a file elsewhere (then there is no blob); '' otherwise. */
  external_url: Generated<string>;
  created_unix: number;
}

export interface AttachmentTables {
  attachment: AttachmentTable;
}

export type AttachmentRow = Selectable<AttachmentTable>;
