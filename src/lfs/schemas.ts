// The Git LFS API's JSON (batch API, basic transfer adapter, locking API) and row-to-JSON.
import { PRESIGN_SECONDS } from '../storage/storage.js';
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import type { BatchResult } from './service.js';
import type { LockRow } from './tables.js';

/** The media type of every LFS request and response body. */
export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

/** Seconds the client may use an action's link (it carries the caller's own credentials). */
export const ACTION_EXPIRES_IN = 86400;

const Ref = Type.Optional(Type.Unknown({ description: 'the server ref the objects belong to (ignored)' }));

export const BatchRequest = Type.Object(
  {
    operation: Type.Enum(['upload', 'download']),
    transfers: Type.Optional(Type.Array(Type.String())),
    ref: Ref,
    objects: Type.Array(
      // Kept loose: a bad oid or size is an error of that object only, not of the request.
      Type.Object({ oid: Type.String(), size: Type.Number() }),
    ),
    hash_algo: Type.Optional(Type.String()),
  },
  { title: 'LfsBatchRequest' },
);
export type BatchRequest = Static<typeof BatchRequest>;

const Action = Type.Object({
  href: Type.String(),
  header: Type.Optional(Type.Record(Type.String(), Type.String())),
  expires_in: Type.Optional(Type.Integer()),
});
type ActionJson = Static<typeof Action>;

const BatchObjectResponse = Type.Object({
  oid: Type.String(),
  size: Type.Number(),
  authenticated: Type.Optional(Type.Boolean()),
  actions: Type.Optional(
    Type.Object({
      upload: Type.Optional(Action),
      verify: Type.Optional(Action),
      download: Type.Optional(Action),
    }),
  ),
  error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String() })),
});
type BatchObjectJson = Static<typeof BatchObjectResponse>;

export const BatchResponse = Type.Object(
  {
    transfer: Type.String(),
    objects: Type.Array(BatchObjectResponse),
    hash_algo: Type.String(),
  },
  { title: 'LfsBatchResponse' },
);
export type BatchResponseJson = Static<typeof BatchResponse>;

export const VerifyRequest = Type.Object({ oid: Type.String(), size: Type.Number() });

export const Lock = Type.Object(
  {
    id: Type.String(),
    path: Type.String(),
    locked_at: Type.String({ format: 'date-time' }),
    owner: Type.Object({ name: Type.String() }),
  },
  { title: 'LfsLock' },
);
export type LockJson = Static<typeof Lock>;

export const LockResponse = Type.Object({ lock: Lock, message: Type.Optional(Type.String()) });
export const CreateLockRequest = Type.Object({ path: Type.String(), ref: Ref });
export const LockListQuery = Type.Object({
  path: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer()),
  refspec: Type.Optional(Type.String()),
});
export const LockList = Type.Object({ locks: Type.Array(Lock), next_cursor: Type.Optional(Type.String()) });
export const VerifyLocksRequest = Type.Object({
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer()),
  ref: Ref,
});
export const VerifyLocksResponse = Type.Object({
  ours: Type.Array(Lock),
  theirs: Type.Array(Lock),
  next_cursor: Type.Optional(Type.String()),
});
export const UnlockRequest = Type.Object({ force: Type.Optional(Type.Boolean()), ref: Ref });

/** Error bodies of the LFS API. */
export const LfsError = Type.Object({
  message: Type.String(),
  request_id: Type.Optional(Type.String()),
  documentation_url: Type.Optional(Type.String()),
});

export function toLockJson(l: LockRow): LockJson {
  return {
    id: String(l.id),
    path: l.path,
    locked_at: isoTime(Number(l.created_unix)),
    owner: { name: l.owner_name },
  };
}

export interface ActionLinks {
  /** …/info/lfs of the repository, without a trailing slash. */
  base: string;
  /** The caller's Authorization header, carried so the client can use the links as it is. */
  authorization?: string | undefined;
}

/** One object of a batch response: its actions (links to this server) or its error. */
export function toBatchObjectJson(r: BatchResult, links: ActionLinks): BatchObjectJson {
  if ('error' in r) return { oid: r.oid, size: r.size, error: r.error };
  const out: BatchObjectJson = { oid: r.oid, size: r.size };
  if (r.action === 'none') return out;
  const header: Record<string, string> = links.authorization ? { Authorization: links.authorization } : {};
  const action = (href: string, extra: Record<string, string> = {}): ActionJson => ({
    href,
    header: { ...header, ...extra },
    expires_in: ACTION_EXPIRES_IN,
  });
  if (links.authorization) out.authenticated = true;
  const objectHref = `${links.base}/objects/${r.oid}`;
  out.actions =
    r.action === 'download'
      ? {
          // A presigned URL carries its own authorization (and expires sooner).
          download: r.href
            ? { href: r.href, header: {}, expires_in: Math.min(ACTION_EXPIRES_IN, PRESIGN_SECONDS) }
            : action(objectHref),
        }
      : {
          upload: action(objectHref),
          // git-lfs sends verify requests without an Accept header of its own (git-lfs#3662).
          verify: action(`${links.base}/verify`, { Accept: LFS_MEDIA_TYPE }),
        };
  return out;
}
