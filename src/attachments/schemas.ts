// Forgejo's Attachment JSON and EditAttachmentOptions as TypeBox schemas, and the conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import type { AttachmentRow } from './tables.js';

export const Attachment = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    size: Type.Integer(),
    download_count: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    uuid: Type.String(),
    browser_download_url: Type.String(),
    type: Type.Union([Type.Literal('attachment'), Type.Literal('external')]),
  },
  { title: 'Attachment', description: 'Attachment a generic attachment' },
);
export type AttachmentJson = Static<typeof Attachment>;

export const EditAttachmentOptions = Type.Object(
  {
    name: Type.Optional(Type.String()),
    browser_download_url: Type.Optional(
      Type.String({ description: '(Can only be set if existing attachment is of external type)' }),
    ),
  },
  { title: 'EditAttachmentOptions', description: 'EditAttachmentOptions options for editing attachments' },
);

/** The multipart form of an upload, for the API description (the body is read as a stream). */
export const AttachmentForm = Type.Object({
  attachment: Type.Optional(Type.String({ format: 'binary', description: 'attachment to upload' })),
});

export const ReleaseAttachmentForm = Type.Object({
  attachment: Type.Optional(
    Type.String({
      format: 'binary',
      description: 'attachment to upload (this parameter is incompatible with `external_url`)',
    }),
  ),
  external_url: Type.Optional(
    Type.String({ description: 'url to external asset (this parameter is incompatible with `attachment`)' }),
  ),
});

export const UploadQuery = Type.Object({
  name: Type.Optional(Type.String({ description: 'name of the attachment' })),
  updated_at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "time of the attachment's creation. This is a timestamp in RFC 3339 format",
    }),
  ),
});

/** Where an attachment is downloaded: Anvil's /attachments/{uuid}, or the external link. */
export function downloadUrl(a: AttachmentRow, rootUrl: string): string {
  return a.external_url || `${rootUrl}attachments/${a.uuid}`;
}

export function toAttachmentJson(a: AttachmentRow, rootUrl: string): AttachmentJson {
  return {
    id: a.id,
    name: a.name,
    size: Number(a.size),
    download_count: Number(a.download_count),
    created_at: isoTime(a.created_unix),
    uuid: a.uuid,
    browser_download_url: downloadUrl(a, rootUrl),
    type: a.external_url ? 'external' : 'attachment',
  };
}
