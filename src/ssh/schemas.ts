// JSON shapes of SSH keys, as Forgejo's swagger names them: PublicKey, DeployKey and the options.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { Repository, toRepoJson, type RepoJsonContext } from '../repos/schemas.js';
import type { RepoRow } from '../repos/tables.js';
import type { RepoAccess } from '../repos/access.js';
import type { DeployKeyRow, PublicKeyRow } from './tables.js';

export const PublicKey = Type.Object(
  {
    id: Type.Integer(),
    key: Type.String(),
    url: Type.String(),
    title: Type.String(),
    fingerprint: Type.String({ description: 'SHA256 fingerprint, as ssh-keygen -l shows it' }),
    created_at: Type.String({ format: 'date-time' }),
    key_type: Type.String(),
    read_only: Type.Boolean(),
    user: Type.Optional(User),
  },
  { title: 'PublicKey' },
);

export const DeployKey = Type.Object(
  {
    id: Type.Integer(),
    key_id: Type.Integer(),
    key: Type.String(),
    url: Type.String(),
    title: Type.String(),
    fingerprint: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    read_only: Type.Boolean(),
    repository: Type.Optional(Repository),
  },
  { title: 'DeployKey' },
);

export const CreateKeyOption = Type.Object(
  {
    title: Type.String({ description: 'Title of the key to add' }),
    key: Type.String({ description: 'An armored SSH key to add' }),
    read_only: Type.Optional(
      Type.Boolean({ description: 'Describe if the key has only read access or read/write' }),
    ),
  },
  { title: 'CreateKeyOption' },
);

export const KeyListQuery = Type.Object({
  fingerprint: Type.Optional(Type.String({ description: 'fingerprint of the key' })),
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const DeployKeyListQuery = Type.Object({
  key_id: Type.Optional(Type.Integer({ description: 'the key_id to search for' })),
  fingerprint: Type.Optional(Type.String({ description: 'fingerprint of the key' })),
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});

export function toPublicKeyJson(
  k: PublicKeyRow,
  owner: UserRow,
  ctx: { rootUrl: string; viewer: Viewer | null },
): Static<typeof PublicKey> {
  return {
    id: k.id,
    key: k.content,
    url: `${ctx.rootUrl}api/v1/user/keys/${k.id}`,
    title: k.name,
    fingerprint: k.fingerprint,
    created_at: isoTime(k.created_unix),
    key_type: 'user',
    read_only: false,
    user: toUserJson(owner, ctx),
  };
}

export function toDeployKeyJson(
  k: DeployKeyRow,
  repo: RepoRow,
  owner: UserRow,
  access: RepoAccess,
  ctx: Pick<RepoJsonContext, 'rootUrl' | 'ssh' | 'viewer'>,
): Static<typeof DeployKey> {
  return {
    id: k.id,
    key_id: k.id,
    key: k.content,
    url: `${ctx.rootUrl}api/v1/repos/${owner.name}/${repo.name}/keys/${k.id}`,
    title: k.name,
    fingerprint: k.fingerprint,
    created_at: isoTime(k.created_unix),
    read_only: k.read_only === 1,
    repository: toRepoJson(repo, owner, access, ctx),
  };
}
