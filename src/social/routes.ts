// /api/v1 routes for stars, watchers and follows, as Forgejo serves them: check (204 or 404),
// star/follow (204), unstar/unfollow (204), and the lists (paged, only what the viewer may see).
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, type RouteAuth } from '../http/auth.js';
import { PageQuery, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { notFound } from '../errors.js';
import { isoTime } from '../http/format.js';
import { RepoParams } from '../http/params.js';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { Repository, type RepositoryJson } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import type { SocialService } from './service.js';
import { UserType } from '../users/tables.js';

const NoContent = { 204: Type.Null() };
const UsernameParams = Type.Object({ username: Type.String() });

/** What a repository list filters by (repos/ ListFilter). */
type ListFilter = Parameters<RepoService['list']>[0];

export interface SocialRoutesDeps {
  repos: Pick<RepoService, 'requireRepo' | 'list'>;
  users: Pick<UserService, 'requireAccount' | 'requireUser' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee' | 'requireVisibleOrg' | 'requireOwner'>;
  social: SocialService;
  /** Repositories as JSON (repos/present.ts). */
  reposJson: (rows: RepoRow[], viewer: Viewer | null) => Promise<RepositoryJson[]>;
  paging: PagingSettings;
  rootUrl: string;
}

export function socialRoutes(app: Api, deps: SocialRoutesDeps): void {
  const { repos, users, orgs, social, reposJson, paging, rootUrl } = deps;
  const userRead: RouteAuth = { scope: 'user' };
  const userSigned: RouteAuth = { scope: 'user', require: 'signed' };
  const repoRead: RouteAuth = { scope: 'repository' };

  /** An account the viewer may see (organizations included), else 404. */
  async function visibleAccount(name: string, viewer: Viewer | null): Promise<UserRow> {
    const u = await users.requireAccount(name);
    const visible = u.type === UserType.Organization ? await orgs.canSee(viewer, u) : users.canSee(viewer, u);
    if (!visible) throw notFound(`user does not exist [name: ${name}]`);
    return u;
  }

  const repoOf = async (request: FastifyRequest) => {
    const { owner, repo } = request.params as { owner: string; repo: string };
    return (await repos.requireRepo(owner, repo, request.viewer, 'read')).repo;
  };

  /** A page of users, those the viewer cannot see left out. */
  const sendUsers = (request: FastifyRequest, reply: FastifyReply, result: [UserRow[], number]) => {
    const page = pageOf(request.query as Record<string, unknown>, paging);
    const visible = result[0].filter((u) => users.canSee(request.viewer, u));
    return sendPage(request, reply, [visible, result[1]], page, rootUrl, (u) =>
      toUserJson(u, { rootUrl, viewer: request.viewer }),
    );
  };

  /** A page of repositories `filter` selects among those the viewer may read. */
  async function sendRepos(request: FastifyRequest, reply: FastifyReply, filter: ListFilter) {
    const page = pageOf(request.query as Record<string, unknown>, paging);
    const viewer = request.viewer;
    const [rows, total] = await repos.list(
      {
        ...filter,
        viewerId: viewer === null || viewer.publicOnly ? null : viewer.isAdmin ? undefined : viewer.id,
        orderBy: 'alphabetically',
      },
      page.limit,
      page.offset,
    );
    const json = await reposJson(rows, viewer);
    return sendPage(request, reply, [json, total], page, rootUrl, (r) => r);
  }

  // Stars

  app.get(
    '/repos/:owner/:repo/stargazers',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoListStargazers',
        summary: "List a repo's stargazers",
        params: RepoParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: repoRead },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      return sendUsers(request, reply, await social.stargazers(repo, pageOf(request.query, paging)));
    },
  );

  app.get(
    '/user/starred',
    {
      schema: {
        tags: ['user'],
        operationId: 'userCurrentListStarred',
        summary: 'The repos that the authenticated user has starred',
        querystring: PageQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: userSigned },
    },
    async (request, reply) => sendRepos(request, reply, { starredBy: signedIn(request).user.id }),
  );

  app.get(
    '/users/:username/starred',
    {
      schema: {
        tags: ['user'],
        operationId: 'userListStarred',
        summary: 'The repos that the given user has starred',
        params: UsernameParams,
        querystring: PageQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount(request.params.username, request.viewer);
      return sendRepos(request, reply, { starredBy: u.id });
    },
  );

  const starSchema = (operationId: string, summary: string) => ({
    tags: ['user'],
    operationId,
    summary,
    params: RepoParams,
    response: NoContent,
  });

  app.get(
    '/user/starred/:owner/:repo',
    {
      schema: starSchema('userCurrentCheckStarring', 'Whether the authenticated is starring the repo'),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      if (!(await social.isStarred(signedIn(request).user, repo))) throw notFound();
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/user/starred/:owner/:repo',
    {
      schema: starSchema('userCurrentPutStar', 'Star the given repo'),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      await social.star(signedIn(request).user, await repoOf(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/user/starred/:owner/:repo',
    {
      schema: starSchema('userCurrentDeleteStar', 'Unstar the given repo'),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      await social.unstar(signedIn(request).user, await repoOf(request));
      return reply.code(204).send(null);
    },
  );

  // Watchers

  app.get(
    '/repos/:owner/:repo/subscribers',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoListSubscribers',
        summary: "List a repo's watchers",
        params: RepoParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: repoRead },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      return sendUsers(request, reply, await social.watchers(repo, pageOf(request.query, paging)));
    },
  );

  app.get(
    '/user/subscriptions',
    {
      schema: {
        tags: ['user'],
        operationId: 'userCurrentListSubscriptions',
        summary: 'List repositories watched by the authenticated user',
        querystring: PageQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: userSigned },
    },
    async (request, reply) => sendRepos(request, reply, { watchedBy: signedIn(request).user.id }),
  );

  app.get(
    '/users/:username/subscriptions',
    {
      schema: {
        tags: ['user'],
        operationId: 'userListSubscriptions',
        summary: 'List the repositories watched by a user',
        params: UsernameParams,
        querystring: PageQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount(request.params.username, request.viewer);
      return sendRepos(request, reply, { watchedBy: u.id });
    },
  );

  // Follows

  const listSchema = (operationId: string, summary: string, withUser: boolean) => ({
    tags: ['user'],
    operationId,
    summary,
    ...(withUser ? { params: UsernameParams } : {}),
    querystring: PageQuery,
    response: { 200: Type.Array(User) },
  });

  app.get(
    '/user/followers',
    {
      schema: listSchema('userCurrentListFollowers', "List the authenticated user's followers", false),
      config: { auth: userSigned },
    },
    async (request, reply) =>
      sendUsers(
        request,
        reply,
        await social.followers(signedIn(request).user, pageOf(request.query, paging)),
      ),
  );

  app.get(
    '/user/following',
    {
      schema: listSchema(
        'userCurrentListFollowing',
        'List the users that the authenticated user is following',
        false,
      ),
      config: { auth: userSigned },
    },
    async (request, reply) =>
      sendUsers(
        request,
        reply,
        await social.following(signedIn(request).user, pageOf(request.query, paging)),
      ),
  );

  app.get(
    '/users/:username/followers',
    {
      schema: listSchema('userListFollowers', "List the given user's followers", true),
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount((request.params as { username: string }).username, request.viewer);
      return sendUsers(request, reply, await social.followers(u, pageOf(request.query, paging)));
    },
  );

  app.get(
    '/users/:username/following',
    {
      schema: listSchema('userListFollowing', 'List the users that the given user is following', true),
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount((request.params as { username: string }).username, request.viewer);
      return sendUsers(request, reply, await social.following(u, pageOf(request.query, paging)));
    },
  );

  app.get(
    '/users/:username/following/:target',
    {
      schema: {
        tags: ['user'],
        operationId: 'userCheckFollowing',
        summary: 'Check if one user is following another user',
        params: Type.Object({ username: Type.String(), target: Type.String() }),
        response: NoContent,
      },
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount(request.params.username, request.viewer);
      const target = await visibleAccount(request.params.target, request.viewer);
      if (!(await social.isFollowing(u, target))) throw notFound();
      return reply.code(204).send(null);
    },
  );

  const followSchema = (operationId: string, summary: string) => ({
    tags: ['user'],
    operationId,
    summary,
    params: UsernameParams,
    response: NoContent,
  });

  app.get(
    '/user/following/:username',
    {
      schema: followSchema(
        'userCurrentCheckFollowing',
        'Check whether a user is followed by the authenticated user',
      ),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      const target = await visibleAccount(request.params.username, request.viewer);
      if (!(await social.isFollowing(signedIn(request).user, target))) throw notFound();
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/user/following/:username',
    {
      schema: followSchema('userCurrentPutFollow', 'Follow a user'),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      const target = await visibleAccount(request.params.username, request.viewer);
      await social.follow(signedIn(request).user, target);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/user/following/:username',
    {
      schema: followSchema('userCurrentDeleteFollow', 'Unfollow a user'),
      config: { auth: userSigned },
    },
    async (request, reply) => {
      const target = await visibleAccount(request.params.username, request.viewer);
      await social.unfollow(signedIn(request).user, target);
      return reply.code(204).send(null);
    },
  );

  // Blocking (Forgejo's /user/block, /orgs/{org}/block and their lists)

  const BlockedUser = Type.Object(
    { block_id: Type.Integer(), created_at: Type.String({ format: 'date-time' }) },
    { title: 'BlockedUser' },
  );
  const orgSigned: RouteAuth = { scope: 'organization', require: 'signed' };
  const OrgUserParams = Type.Object({ org: Type.String(), username: Type.String() });

  /** The organization `name` when the signed-in caller owns it (403 for members, 404 when hidden). */
  async function ownedOrg(request: FastifyRequest, name: string): Promise<UserRow> {
    const viewer = { id: signedIn(request).user.id, isAdmin: signedIn(request).user.is_admin === 1 };
    const org = await orgs.requireVisibleOrg(name, viewer);
    await orgs.requireOwner(org, viewer);
    return org;
  }

  for (const [level, prefix] of [
    ['user', '/user'],
    ['org', '/orgs/:org'],
  ] as const) {
    const auth = level === 'user' ? userSigned : orgSigned;
    const params = level === 'user' ? UsernameParams : OrgUserParams;
    const blocker = (request: FastifyRequest) =>
      level === 'user'
        ? Promise.resolve(signedIn(request).user)
        : ownedOrg(request, (request.params as { org: string }).org);
    const ids = level === 'user' ? ['userBlockUser', 'userUnblockUser'] : ['orgBlockUser', 'orgUnblockUser'];
    for (const [verb, operationId] of [
      ['block', ids[0]!],
      ['unblock', ids[1]!],
    ] as const) {
      app.put(
        `${prefix}/${verb}/:username`,
        {
          schema: {
            tags: [level === 'user' ? 'user' : 'organization'],
            operationId,
            summary: `${verb === 'block' ? 'Block' : 'Unblock'} a user`,
            params,
            response: NoContent,
          },
          config: { auth },
        },
        async (request, reply) => {
          const who = await blocker(request);
          const target = await users.requireUser((request.params as { username: string }).username);
          if (verb === 'block') await social.block(who, target);
          else await social.unblock(who, target);
          return reply.code(204).send(null);
        },
      );
    }
    app.get(
      `${prefix}/list_blocked`,
      {
        schema: {
          tags: [level === 'user' ? 'user' : 'organization'],
          operationId: level === 'user' ? 'userListBlockedUsers' : 'orgListBlockedUsers',
          summary: 'List the users blocked',
          params: level === 'user' ? Type.Object({}) : Type.Object({ org: Type.String() }),
          querystring: PageQuery,
          response: { 200: Type.Array(BlockedUser) },
        },
        config: {
          auth:
            level === 'user'
              ? { scope: 'user', require: 'signed' }
              : { scope: 'organization', require: 'signed' },
        },
      },
      async (request, reply) => {
        const who = await blocker(request);
        const page = pageOf(request.query, paging);
        const result = await social.blocked(who, page);
        return sendPage(request, reply, result, page, rootUrl, (b) => ({
          block_id: b.block_id,
          created_at: isoTime(b.created_unix),
        }));
      },
    );
  }
}
