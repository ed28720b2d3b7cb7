// HTTP routes for repository lists: the signed-in user's, an owner's, and search.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { invalid, invalidField } from '../errors.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow } from '../users/tables.js';
import { ORDER_BY, type OrderBy } from './list-filter.js';
import type { RepoPresenter } from './present.js';
import { Repository } from './schemas.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';

export interface RepoListRoutesDeps {
  repos: Pick<RepoService, 'list'>;
  presenter: Pick<RepoPresenter, 'reposJson'>;
  users: Pick<UserService, 'getByName' | 'requireVisibleUser'>;
  orgs: Pick<OrgService, 'requireVisibleOrg'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function repoListRoutes(app: Api, deps: RepoListRoutesDeps): void {
  const { repos, presenter, users, orgs, paging, rootUrl } = deps;
  const scope: RouteAuth = { scope: 'repository' };
  const signed: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];

  const ListQuery = Type.Object({ ...PageFields, order_by: Type.Optional(Type.String()) });
  const orderOf = (v: string | undefined): OrderBy | undefined => {
    if (v === undefined || v === '') return undefined;
    if (!(v in ORDER_BY)) throw invalidField('order_by', `unknown order_by value: ${v}`);
    return v as OrderBy;
  };

  async function listReply(
    request: FastifyRequest,
    reply: Parameters<typeof sendPage>[1],
    result: [RepoRow[], number],
  ) {
    const page = pageOf(request.query as { page?: number; limit?: number }, paging);
    const body = await presenter.reposJson(result[0], request.viewer);
    return sendPage(request, reply, [body, result[1]], page, rootUrl, (r) => r);
  }

  app.get(
    '/user/repos',
    {
      schema: {
        tags: ['user'],
        summary: 'List the repos that the authenticated user owns or can reach',
        description:
          'order_by: size (smallest first), reversesize, alphabetically, newest, recentupdate, ...',
        querystring: ListQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const me = signedIn(request).user;
      const result = await repos.list(
        {
          memberOf: me.id,
          // A public-only token lists only public repositories.
          ...(request.viewer?.publicOnly ? { viewerId: null, publicOnly: true } : {}),
          // Forgejo lists them by name unless order_by says otherwise.
          orderBy: orderOf(request.query.order_by) ?? 'alphabetically',
        },
        page.limit,
        page.offset,
      );
      return listReply(request, reply, result);
    },
  );

  for (const [url, kind] of [
    ['/users/:owner/repos', 'user'],
    ['/orgs/:owner/repos', 'organization'],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags: [kind],
          summary:
            kind === 'user' ? 'List the repos owned by the given user' : "List an organization's repos",
          params: Type.Object({ owner: Type.String() }),
          querystring: ListQuery,
          response: { 200: Type.Array(Repository) },
        },
        config: { auth: scope },
      },
      async (request, reply) => {
        const page = pageOf(request.query, paging);
        // /users/{name}/repos also answers for organizations, as in Forgejo.
        const account = kind === 'user' ? await users.getByName(request.params.owner) : undefined;
        const owner: UserRow =
          kind === 'organization' || account?.type === UserType.Organization
            ? await orgs.requireVisibleOrg(request.params.owner, request.viewer)
            : await users.requireVisibleUser(request.params.owner, request.viewer);
        const viewer = request.viewer;
        const result = await repos.list(
          {
            ownerId: owner.id,
            viewerId: viewer?.isAdmin && !viewer.publicOnly ? undefined : (viewer?.id ?? null),
            publicOnly: viewer?.publicOnly,
            restricted: request.identity?.user.restricted === 1,
            orderBy: orderOf(request.query.order_by),
          },
          page.limit,
          page.offset,
        );
        return listReply(request, reply, result);
      },
    );
  }

  app.get(
    '/repos/search',
    {
      schema: {
        tags,
        summary: 'Search for repositories',
        querystring: Type.Object({
          ...PageFields,
          q: Type.Optional(Type.String({ description: 'keyword; several keywords separated by commas' })),
          includeDesc: Type.Optional(Type.Boolean()),
          topic: Type.Optional(Type.Boolean({ description: 'the keywords are topics, matched whole' })),
          uid: Type.Optional(Type.Integer()),
          team_id: Type.Optional(Type.Integer()),
          private: Type.Optional(Type.Boolean()),
          is_private: Type.Optional(Type.Boolean()),
          template: Type.Optional(Type.Boolean()),
          archived: Type.Optional(Type.Boolean()),
          mode: Type.Optional(Type.String({ description: 'fork, source, mirror or collaborative' })),
          exclusive: Type.Optional(Type.Boolean()),
          sort: Type.Optional(
            Type.String({
              description: 'alpha (default), created, updated, size, git_size, id, stars, forks',
            }),
          ),
          order: Type.Optional(Type.String({ description: 'asc (default) or desc' })),
        }),
        response: { 200: Type.Object({ ok: Type.Boolean(), data: Type.Array(Repository) }) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const q = request.query;
      const page = pageOf(q, paging);
      const viewer = request.viewer;
      const sorts: Record<string, [OrderBy, OrderBy]> = {
        alpha: ['alphabetically', 'reversealphabetically'],
        created: ['oldest', 'newest'],
        updated: ['leastupdate', 'recentupdate'],
        size: ['size', 'reversesize'],
        git_size: ['gitsize', 'reversegitsize'],
        id: ['id', 'reverseid'],
        stars: ['feweststars', 'moststars'],
        forks: ['fewestforks', 'mostforks'],
      };
      let orderBy: OrderBy = 'alphabetically';
      if (q.sort) {
        const sort = sorts[q.sort];
        if (!sort) throw invalid(`Invalid sort mode: "${q.sort}"`);
        const order = q.order || 'asc';
        if (order !== 'asc' && order !== 'desc') throw invalid(`Invalid sort order: "${order}"`);
        orderBy = order === 'desc' ? sort[1] : sort[0];
      }
      const mode = q.mode ?? '';
      if (!['', 'fork', 'source', 'mirror', 'collaborative'].includes(mode)) {
        throw invalid(`Invalid search mode: "${mode}"`);
      }
      // `private=false` (or a public-only token) leaves only public repositories of public owners.
      const withPrivate = viewer !== null && !viewer.publicOnly && q.private !== false;
      const uid = q.uid && q.uid > 0 ? q.uid : undefined;
      const result = await repos.list(
        {
          keywords: (q.q ?? '')
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
          includeDescription: q.includeDesc === true,
          topicOnly: q.topic === true,
          // uid: repositories the user owns or reaches; `exclusive`: owns only; `collaborative`: reaches only.
          ownerId: uid && q.exclusive && mode !== 'collaborative' ? uid : undefined,
          memberOf: uid && !q.exclusive && mode !== 'collaborative' ? uid : undefined,
          collaboratorOf: uid && mode === 'collaborative' ? uid : undefined,
          teamId: q.team_id && q.team_id > 0 ? q.team_id : undefined,
          viewerId: !withPrivate ? null : viewer.isAdmin ? undefined : viewer.id,
          publicOnly: !withPrivate,
          restricted: request.identity?.user.restricted === 1,
          isPrivate: q.is_private,
          isTemplate: q.template,
          isArchived: q.archived,
          isFork: mode === 'fork' ? true : mode === 'source' ? false : undefined,
          isMirror:
            mode === 'mirror' ? true : mode === 'source' || mode === 'collaborative' ? false : undefined,
          orderBy,
        },
        page.limit,
        page.offset,
      );
      const body = await presenter.reposJson(result[0], viewer);
      return { ok: true, data: sendPage(request, reply, [body, result[1]], page, rootUrl, (r) => r) };
    },
  );
}
