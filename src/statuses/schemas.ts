// Forgejo's CommitStatus, CombinedStatus and CreateStatusOption, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { User, toUserJson, type UserJsonContext } from '../users/schemas.js';
import type { UserRow } from '../users/tables.js';
import { Repository, type RepositoryJson } from '../repos/schemas.js';
import { LIST_SORTS } from './store.js';
import { STATES, type CommitState } from './service.js';
import type { StatusRow } from './tables.js';

export const CommitStatusState = Type.Union(
  STATES.map((s) => Type.Literal(s)),
  { description: 'pending, success, error, failure or warning' },
);

export const CreateStatusOption = Type.Object(
  {
    state: CommitStatusState,
    target_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    context: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { title: 'CreateStatusOption' },
);

export const StatusListQuery = Type.Object({
  sort: Type.Optional(
    Type.Union(
      LIST_SORTS.map((k) => Type.Literal(k)),
      {
        description: 'oldest, recentupdate, leastupdate, leastindex or highestindex (default: newest first)',
      },
    ),
  ),
  state: Type.Optional(CommitStatusState),
  page: Type.Optional(Type.Integer({ description: 'page number of results to return (1-based)' })),
  limit: Type.Optional(Type.Integer({ description: 'page size of results' })),
});

export const CommitStatus = Type.Object(
  {
    id: Type.Integer({ description: 'the number of the status among those of its commit' }),
    status: Type.String({ description: 'pending, success, error, failure or warning' }),
    target_url: Type.String(),
    description: Type.String(),
    url: Type.String(),
    context: Type.String(),
    creator: Type.Union([User, Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'CommitStatus' },
);
export type CommitStatusJson = Static<typeof CommitStatus>;

export const CombinedStatus = Type.Object(
  {
    state: Type.String({
      description: 'the worst state of the newest status of each context; empty when there is none',
    }),
    sha: Type.String(),
    total_count: Type.Integer({ description: 'number of contexts' }),
    statuses: Type.Array(CommitStatus),
    repository: Type.Union([Repository, Type.Null()]),
    commit_url: Type.String(),
    url: Type.String(),
  },
  { title: 'CombinedStatus' },
);
export type CombinedStatusJson = Static<typeof CombinedStatus>;

/** `repoApiUrl` is the repository's API URL (…/api/v1/repos/{owner}/{repo}). */
export function toCommitStatusJson(
  s: StatusRow,
  creator: UserRow | undefined,
  repoApiUrl: string,
  ctx: UserJsonContext,
): CommitStatusJson {
  return {
    id: s.status_index,
    status: s.state,
    target_url: s.target_url,
    description: s.description,
    url: `${repoApiUrl}/statuses/${s.sha}`,
    context: s.context,
    creator: creator ? toUserJson(creator, ctx) : null,
    created_at: isoTime(s.created_unix),
    updated_at: isoTime(s.updated_unix),
  };
}

export function toCombinedStatusJson(
  sha: string,
  state: CommitState | null,
  statuses: CommitStatusJson[],
  total: number,
  repository: RepositoryJson,
): CombinedStatusJson {
  const commitUrl = `${repository.url}/commits/${sha}`;
  return {
    state: state ?? '',
    sha,
    total_count: total,
    statuses,
    repository,
    commit_url: commitUrl,
    url: `${commitUrl}/status`,
  };
}

/** Forgejo's answer for a ref that names nothing: its zero CombinedStatus (no commit, repository or URLs). */
export function emptyCombinedStatus(): CombinedStatusJson {
  return { state: '', sha: '', total_count: 0, statuses: [], repository: null, commit_url: '', url: '' };
}
