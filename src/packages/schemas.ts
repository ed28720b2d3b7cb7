// Forgejo's Package and PackageFile JSON (PackageFile's capital `Size` is Forgejo's), as TypeBox
// schemas, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { PageFields } from '../http/pagination.js';
import { Repository, toRepoJson, type RepositoryJson } from '../repos/schemas.js';
import type { RepoAccess } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { User, toUserJson, type UserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { GHOST_USER } from '../issues/schemas.js';
import { packageHtmlUrl } from './service.js';
import type { FileWithBlob, VersionWithPackage } from './tables.js';

export const Package = Type.Object(
  {
    id: Type.Integer({ description: 'id of the package version' }),
    owner: User,
    repository: Type.Union([Repository, Type.Null()]),
    creator: User,
    type: Type.String(),
    name: Type.String(),
    version: Type.String(),
    html_url: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Package' },
);
export type PackageJson = Static<typeof Package>;

export const PackageFile = Type.Object(
  {
    id: Type.Integer(),
    Size: Type.Integer(),
    name: Type.String(),
    md5: Type.String(),
    sha1: Type.String(),
    sha256: Type.String(),
    sha512: Type.String(),
  },
  { title: 'PackageFile' },
);
export type PackageFileJson = Static<typeof PackageFile>;

export const PackageListQuery = Type.Object({
  ...PageFields,
  type: Type.Optional(Type.String({ description: 'package type filter' })),
  q: Type.Optional(Type.String({ description: 'name filter' })),
});

export const OwnerParams = Type.Object({ owner: Type.String({ description: 'owner of the packages' }) });
export const PackageParams = Type.Object({
  owner: Type.String({ description: 'owner of the package' }),
  type: Type.String({ description: 'type of the package' }),
  name: Type.String({ description: 'name of the package' }),
});
export const VersionParams = Type.Object({
  ...PackageParams.properties,
  version: Type.String({ description: 'version of the package' }),
});
export const LinkParams = Type.Object({
  ...PackageParams.properties,
  repo_name: Type.String({ description: 'name of the repository to link' }),
});

export interface PackageJsonContext {
  rootUrl: string;
  viewer: Viewer | null;
  owner: UserRow;
  creators: Map<number, UserRow>;
  /** Linked repositories as their JSON (with the viewer's access), by id. */
  repos: Map<number, RepositoryJson>;
}

export function toPackageJson(v: VersionWithPackage, c: PackageJsonContext): PackageJson {
  const userCtx = { rootUrl: c.rootUrl, viewer: c.viewer };
  const creator = (v.creator_id !== null && c.creators.get(v.creator_id)) || GHOST_USER;
  return {
    id: v.id,
    owner: toUserJson(c.owner, userCtx),
    repository: (v.repo_id !== null && c.repos.get(v.repo_id)) || null,
    creator: toUserJson(creator, userCtx),
    type: v.type,
    name: v.name,
    version: v.version,
    html_url: packageHtmlUrl(c.rootUrl, c.owner.name, v.type, v.name, v.version),
    created_at: isoTime(v.created_unix),
  };
}

export function toPackageFileJson(f: FileWithBlob): PackageFileJson {
  return {
    id: f.id,
    Size: Number(f.size),
    name: f.name,
    md5: f.hash_md5,
    sha1: f.hash_sha1,
    sha256: f.hash_sha256,
    sha512: f.hash_sha512,
  };
}

export function repoJsonOf(
  repo: RepoRow,
  owner: UserRow,
  access: RepoAccess,
  ctx: { rootUrl: string; viewer: Viewer | null },
): RepositoryJson {
  return toRepoJson(repo, owner, access, ctx);
}

export type { UserJson };
