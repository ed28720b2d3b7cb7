// HTTP routes for a user's access tokens. Creating, listing and deleting tokens needs a password
// (basic auth), never a token, so a leaked token cannot mint more.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { forbidden } from '../errors.js';
import { PageQuery, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { UserService } from '../users/service.js';
import type { TokenService } from './service.js';
import type { UserRow } from '../users/tables.js';
import type { FastifyRequest } from 'fastify';
import { AccessToken, CreateAccessTokenOption, toTokenJson } from './schemas.js';

const UsernameParams = Type.Object({ username: Type.String() });

export interface TokenRoutesDeps {
  users: Pick<UserService, 'requireUser'>;
  tokens: TokenService;
  paging: PagingSettings;
  rootUrl: string;
}

export function tokenRoutes(app: Api, deps: TokenRoutesDeps): void {
  const { users, tokens, paging, rootUrl } = deps;
  const auth = { scope: 'user', require: 'basic' } as const;

  /** The path's user, who must be the caller (administrators may act for anyone). */
  async function owner(request: FastifyRequest, username: string): Promise<UserRow> {
    const me = signedIn(request).user;
    const u = await users.requireUser(username);
    if (u.id !== me.id && !me.is_admin) throw forbidden('cannot manage the access tokens of another user');
    return u;
  }

  app.get(
    '/users/:username/tokens',
    {
      schema: {
        tags: ['user'],
        summary: "List the authenticated user's access tokens",
        params: UsernameParams,
        querystring: PageQuery,
        response: { 200: Type.Array(AccessToken) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const u = await owner(request, request.params.username);
      const page = pageOf(request.query, paging);
      const result = await tokens.list(u, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (t) => toTokenJson(t));
    },
  );

  app.post(
    '/users/:username/tokens',
    {
      schema: {
        tags: ['user'],
        summary: 'Create an access token',
        params: UsernameParams,
        body: CreateAccessTokenOption,
        response: { 201: AccessToken },
      },
      config: { auth },
    },
    async (request, reply) => {
      const u = await owner(request, request.params.username);
      const created = await tokens.create(u, request.body.name, request.body.scopes);
      return reply.code(201).send(toTokenJson(created.row, created.token));
    },
  );

  app.delete(
    '/users/:username/tokens/:token',
    {
      schema: {
        tags: ['user'],
        summary: 'Delete an access token (by id or name)',
        params: Type.Object({ username: Type.String(), token: Type.String() }),
        response: { 204: Type.Null() },
      },
      config: { auth },
    },
    async (request, reply) => {
      const u = await owner(request, request.params.username);
      await tokens.delete(u, request.params.token);
      return reply.code(204).send(null);
    },
  );
}
