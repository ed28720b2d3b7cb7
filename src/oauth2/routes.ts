// /user/applications/oauth2: the caller's OAuth2 applications (list, create, read, edit, delete).
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { PageQuery, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { OAuth2Service } from './service.js';
import { CreateOAuth2ApplicationOptions, OAuth2Application, toOAuth2AppJson } from './schemas.js';

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

export interface OAuth2RoutesDeps {
  oauth2: OAuth2Service;
  paging: PagingSettings;
  rootUrl: string;
}

export function oauth2Routes(app: Api, deps: OAuth2RoutesDeps): void {
  const { oauth2, paging, rootUrl } = deps;
  const auth = { scope: 'user', require: 'signed' } as const;
  const input = (b: { name?: string; redirect_uris?: string[]; confidential_client?: boolean }) => ({
    name: b.name,
    redirectUris: b.redirect_uris,
    confidentialClient: b.confidential_client,
  });

  app.get(
    '/user/applications/oauth2',
    {
      schema: {
        tags: ['user'],
        summary: "List the authenticated user's oauth2 applications",
        querystring: PageQuery,
        response: { 200: Type.Array(OAuth2Application) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await oauth2.list(signedIn(request).user, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (a) => toOAuth2AppJson(a));
    },
  );

  app.post(
    '/user/applications/oauth2',
    {
      schema: {
        tags: ['user'],
        summary: 'Creates a new OAuth2 application',
        body: CreateOAuth2ApplicationOptions,
        response: { 201: OAuth2Application },
      },
      config: { auth },
    },
    async (request, reply) => {
      const created = await oauth2.create(signedIn(request).user, input(request.body));
      return reply.code(201).send(toOAuth2AppJson(created.row, created.secret));
    },
  );

  app.get(
    '/user/applications/oauth2/:id',
    {
      schema: {
        tags: ['user'],
        summary: 'Get an OAuth2 application',
        params: IdParams,
        response: { 200: OAuth2Application },
      },
      config: { auth },
    },
    async (request) => toOAuth2AppJson(await oauth2.get(signedIn(request).user, request.params.id)),
  );

  app.patch(
    '/user/applications/oauth2/:id',
    {
      schema: {
        tags: ['user'],
        summary: 'Update an OAuth2 application (the client id and secret stay)',
        params: IdParams,
        body: CreateOAuth2ApplicationOptions,
        response: { 200: OAuth2Application },
      },
      config: { auth },
    },
    async (request) =>
      toOAuth2AppJson(await oauth2.edit(signedIn(request).user, request.params.id, input(request.body))),
  );

  app.delete(
    '/user/applications/oauth2/:id',
    {
      schema: {
        tags: ['user'],
        summary: 'Delete an OAuth2 application',
        params: IdParams,
        response: { 204: Type.Null() },
      },
      config: { auth },
    },
    async (request, reply) => {
      await oauth2.delete(signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
