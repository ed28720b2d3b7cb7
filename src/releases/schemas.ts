// Forgejo's Release JSON and release options as TypeBox schemas, and the conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { PageFields } from '../http/pagination.js';
import { Attachment, toAttachmentJson } from '../attachments/schemas.js';
import { escapeSegments, type AttachmentRow } from '../attachments/service.js';
import { TagArchiveDownloadCount } from '../git/data-schemas.js';
import { User, toUserJson, type UserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import type { ReleaseRow } from './tables.js';

export const Release = Type.Object(
  {
    id: Type.Integer(),
    tag_name: Type.String(),
    target_commitish: Type.String(),
    name: Type.String(),
    body: Type.String(),
    url: Type.String(),
    html_url: Type.String(),
    tarball_url: Type.String(),
    zipball_url: Type.String(),
    hide_archive_links: Type.Boolean(),
    upload_url: Type.String(),
    draft: Type.Boolean(),
    prerelease: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    published_at: Type.String({ format: 'date-time' }),
    author: User,
    assets: Type.Array(Attachment),
    archive_download_count: TagArchiveDownloadCount,
  },
  { title: 'Release', description: 'Release represents a repository release' },
);
export type ReleaseJson = Static<typeof Release>;

export const CreateReleaseOption = Type.Object(
  {
    tag_name: Type.String({ minLength: 1 }),
    target_commitish: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    body: Type.Optional(Type.String()),
    draft: Type.Optional(Type.Boolean()),
    prerelease: Type.Optional(Type.Boolean()),
    hide_archive_links: Type.Optional(Type.Boolean()),
  },
  { title: 'CreateReleaseOption', description: 'CreateReleaseOption options when creating a release' },
);

export const EditReleaseOption = Type.Object(
  {
    tag_name: Type.Optional(Type.String()),
    target_commitish: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    body: Type.Optional(Type.String()),
    draft: Type.Optional(Type.Boolean()),
    prerelease: Type.Optional(Type.Boolean()),
    hide_archive_links: Type.Optional(Type.Boolean()),
  },
  { title: 'EditReleaseOption', description: 'EditReleaseOption options when editing a release' },
);

export const ReleaseListQuery = Type.Object({
  draft: Type.Optional(
    Type.Boolean({
      description: 'filter (exclude / include) drafts, if you dont have repo write access none will show',
    }),
  ),
  'pre-release': Type.Optional(Type.Boolean({ description: 'filter (exclude / include) pre-releases' })),
  q: Type.Optional(Type.String({ description: 'Search string' })),
  per_page: Type.Optional(Type.Integer({ description: 'page size of results, deprecated - use limit' })),
  ...PageFields,
});

export interface ReleaseLinks {
  rootUrl: string;
  /** owner/repo as it appears in URLs. */
  fullName: string;
  viewer: Viewer | null;
}

/** Forgejo's stand-in for an account that no longer exists. */
export function ghostUserJson(rootUrl: string): UserJson {
  return {
    id: -1,
    login: 'Ghost',
    username: 'Ghost',
    login_name: '',
    source_id: 0,
    full_name: '',
    email: `ghost@noreply.${new URL(rootUrl).hostname}`,
    avatar_url: `${rootUrl}assets/img/avatar_default.png`,
    html_url: `${rootUrl}Ghost`,
    language: '',
    is_admin: false,
    last_login: isoTime(0),
    created: isoTime(0),
    restricted: false,
    active: false,
    prohibit_login: false,
    location: '',
    pronouns: '',
    website: '',
    description: '',
    visibility: 'public',
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
  };
}

export function toReleaseJson(
  r: ReleaseRow,
  publisher: UserRow | undefined,
  assets: AttachmentRow[],
  links: ReleaseLinks,
): ReleaseJson {
  const api = `${links.rootUrl}api/v1/repos/${links.fullName}/releases/${r.id}`;
  const html = `${links.rootUrl}${links.fullName}`;
  const tag = escapeSegments(r.tag_name);
  const time = isoTime(r.created_unix);
  return {
    id: r.id,
    tag_name: r.tag_name,
    target_commitish: r.target,
    name: r.title,
    body: r.note,
    url: api,
    html_url: `${html}/releases/tag/${tag}`,
    tarball_url: `${html}/archive/${tag}.tar.gz`,
    zipball_url: `${html}/archive/${tag}.zip`,
    hide_archive_links: r.hide_archive_links === 1,
    upload_url: `${api}/assets`,
    draft: r.is_draft === 1,
    prerelease: r.is_prerelease === 1,
    created_at: time,
    published_at: time,
    author: publisher ? toUserJson(publisher, links) : ghostUserJson(links.rootUrl),
    assets: assets.map((a) => toAttachmentJson(a, links.rootUrl)),
    archive_download_count: { zip: 0, tar_gz: 0 },
  };
}
