// Forgejo's MigrateRepoOptions, CreatePushMirrorOption and PushMirror, and the row-to-JSON conversion.
import { Type } from 'typebox';
import { isoTime } from '../http/format.js';
import { formatGoDuration } from './duration.js';
import type { PushMirrorRow } from './tables.js';

export const GIT_SERVICES = ['git', 'github', 'gitea', 'gitlab', 'gogs', 'onedev', 'gitbucket', 'codebase'];

export const MigrateRepoOptions = Type.Object(
  {
    clone_addr: Type.String({ description: 'http(s) or git URL of the repository to migrate' }),
    repo_name: Type.String(),
    repo_owner: Type.Optional(
      Type.String({ description: 'Name of User or Organisation who will own Repo after migration' }),
    ),
    uid: Type.Optional(Type.Integer({ description: 'deprecated (only for backwards compatibility)' })),
    auth_username: Type.Optional(Type.String()),
    auth_password: Type.Optional(Type.String()),
    auth_token: Type.Optional(Type.String()),
    mirror: Type.Optional(Type.Boolean()),
    mirror_interval: Type.Optional(
      Type.String({ description: 'for a mirror: "8h0m0s", "10m" (the minimum), "0" never' }),
    ),
    private: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String()),
    service: Type.Optional(Type.Union(GIT_SERVICES.map((s) => Type.Literal(s)))),
    // Accepted for compatibility; only the git data is migrated (as the web migration of a plain git
    // service does), so these are ignored.
    issues: Type.Optional(Type.Boolean()),
    labels: Type.Optional(Type.Boolean()),
    milestones: Type.Optional(Type.Boolean()),
    pull_requests: Type.Optional(Type.Boolean()),
    releases: Type.Optional(Type.Boolean()),
    wiki: Type.Optional(Type.Boolean()),
    lfs: Type.Optional(Type.Boolean()),
    lfs_endpoint: Type.Optional(Type.String()),
  },
  { title: 'MigrateRepoOptions' },
);

export const CreatePushMirrorOption = Type.Object(
  {
    remote_address: Type.Optional(Type.String()),
    remote_username: Type.Optional(Type.String()),
    remote_password: Type.Optional(Type.String()),
    interval: Type.Optional(Type.String({ description: 'Go duration ("8h0m0s"); "0" only on commit' })),
    sync_on_commit: Type.Optional(Type.Boolean()),
    use_ssh: Type.Optional(Type.Boolean()),
    branch_filter: Type.Optional(Type.String()),
  },
  { title: 'CreatePushMirrorOption' },
);

export const PushMirror = Type.Object(
  {
    repo_name: Type.String(),
    remote_name: Type.String(),
    remote_address: Type.String(),
    created: Type.String({ format: 'date-time' }),
    last_update: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_error: Type.String(),
    interval: Type.String(),
    sync_on_commit: Type.Boolean(),
    public_key: Type.String(),
  },
  { title: 'PushMirror' },
);

export function toPushMirrorJson(m: PushMirrorRow, repoName: string) {
  return {
    repo_name: repoName,
    remote_name: m.remote_name,
    remote_address: m.remote_address,
    created: isoTime(m.created_unix),
    last_update: m.last_update_unix ? isoTime(m.last_update_unix) : null,
    last_error: m.last_error,
    interval: formatGoDuration(m.interval),
    sync_on_commit: m.sync_on_commit === 1,
    public_key: '',
  };
}
