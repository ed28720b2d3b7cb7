// HTTP routes for commit statuses: create and list by full SHA (/repos/{owner}/{repo}/statuses/{sha})
// and list or combine by branch, tag, SHA or revision (/repos/{owner}/{repo}/commits/{ref}/statuses|status;
// a ref that names nothing has no statuses, as in Forgejo, where Renovate reads a 404 as a deleted branch).
// Writing needs write access to the code; reading follows the repository's visibility.
import { Type, type Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { StatusService } from './service.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import type { RepoRow } from '../repos/tables.js';
import { toRepoJson } from '../repos/schemas.js';
import type { StatusRow } from './tables.js';
import {
  CombinedStatus,
  CommitStatus,
  CreateStatusOption,
  StatusListQuery,
  emptyCombinedStatus,
  toCombinedStatusJson,
  toCommitStatusJson,
} from './schemas.js';

const ShaParams = Type.Object({ owner: Type.String(), repo: Type.String(), sha: Type.String() });
const RefParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  ref: Type.String({
    description: "branch, tag, commit SHA (full or abbreviated) or revision ('/' in a branch name as %2F)",
  }),
});

export interface StatusesRoutesDeps {
  statuses: StatusService;
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function statusesRoutes(app: Api, deps: StatusesRoutesDeps): void {
  const { repos, statuses, users, paging, rootUrl } = deps;
  const tags = ['repository'];
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };

  /** Statuses as JSON, their creators fetched in one query. */
  async function statusesJson(request: FastifyRequest, repo: RepoRow, rows: StatusRow[]) {
    const ids = [...new Set(rows.map((r) => r.creator_id).filter((id): id is number => id !== null))];
    const [owner, creators] = await Promise.all([users.getById(repo.owner_id), users.getByIds(ids)]);
    const apiUrl = `${rootUrl}api/v1/repos/${owner!.name}/${repo.name}`;
    const jsonCtx = { rootUrl, viewer: request.viewer };
    return rows.map((r) =>
      toCommitStatusJson(r, r.creator_id === null ? undefined : creators.get(r.creator_id), apiUrl, jsonCtx),
    );
  }

  /** A page of the statuses of commit `sha` (none when `sha` is undefined: a ref that names nothing). */
  async function listReply(
    request: FastifyRequest,
    reply: FastifyReply,
    repo: RepoRow,
    sha: string | undefined,
    q: Static<typeof StatusListQuery>,
  ) {
    const page = pageOf(q, paging);
    const [rows, total] =
      sha === undefined ? [[], 0] : await statuses.list(repo, sha, { sort: q.sort, state: q.state }, page);
    return sendPage(
      request,
      reply,
      [await statusesJson(request, repo, rows), total],
      page,
      rootUrl,
      (j) => j,
    );
  }

  app.post(
    '/repos/:owner/:repo/statuses/:sha',
    {
      schema: {
        tags,
        summary: 'Create a commit status',
        description:
          'sha must be the full SHA of a commit of the repository: 422 for an abbreviated SHA, ' +
          '404 for an unknown commit. Needs write access to the code.',
        params: ShaParams,
        body: CreateStatusOption,
        response: { 201: CommitStatus },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { owner, repo: name, sha } = request.params;
      const { repo } = await repos.requireRepo(owner, name, request.viewer, 'write');
      const row = await statuses.create(repo, signedIn(request).user, sha, request.body);
      return reply.code(201).send((await statusesJson(request, repo, [row]))[0]!);
    },
  );

  app.get(
    '/repos/:owner/:repo/statuses/:sha',
    {
      schema: {
        tags,
        summary: "Get a commit's statuses",
        description:
          'sha must be the full SHA of a commit: 422 for an abbreviated SHA, 404 for an unknown one.',
        params: ShaParams,
        querystring: StatusListQuery,
        response: { 200: Type.Array(CommitStatus) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { owner, repo: name, sha } = request.params;
      const { repo } = await repos.requireRepo(owner, name, request.viewer);
      const full = await statuses.requireCommitSha(repo, sha);
      return listReply(request, reply, repo, full, request.query);
    },
  );

  app.get(
    '/repos/:owner/:repo/commits/:ref/statuses',
    {
      schema: {
        tags,
        summary: "Get a commit's statuses, by branch/tag/commit reference",
        description: 'None for a ref that names nothing (as in Forgejo: 200, not 404).',
        params: RefParams,
        querystring: StatusListQuery,
        response: { 200: Type.Array(CommitStatus) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { owner, repo: name, ref } = request.params;
      const { repo } = await repos.requireRepo(owner, name, request.viewer);
      const sha = await statuses.resolveRef(repo, ref);
      return listReply(request, reply, repo, sha, request.query);
    },
  );

  app.get(
    '/repos/:owner/:repo/commits/:ref/status',
    {
      schema: {
        tags,
        summary: "Get a commit's combined status, by branch/tag/commit reference",
        description:
          'The newest status of each context (paginated) and the combined state: the worst of ' +
          'them (error, failure, warning, pending, success); empty when the commit has no status. ' +
          "For a ref that names nothing, Forgejo's empty combined status (no sha, repository or URLs).",
        params: RefParams,
        querystring: Type.Object(PageFields),
        response: { 200: CombinedStatus },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { owner, repo: name, ref } = request.params;
      const { repo, access } = await repos.requireRepo(owner, name, request.viewer);
      const sha = await statuses.resolveRef(repo, ref);
      if (sha === undefined) return emptyCombinedStatus();
      const page = pageOf(request.query, paging);
      const { rows, total, state } = await statuses.combined(repo, sha, page);
      const ownerRow = (await users.getById(repo.owner_id))!;
      const repository = toRepoJson(repo, ownerRow, access, { rootUrl, viewer: request.viewer });
      setPageHeaders(request, reply, total, page, rootUrl);
      return toCombinedStatusJson(sha, state, await statusesJson(request, repo, rows), total, repository);
    },
  );
}
