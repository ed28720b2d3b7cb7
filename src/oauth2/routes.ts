// /user/applications/oauth2: the caller's OAuth2 applications (list, create, read, edit, delete);
// and the OAuth2 provider's endpoints that clients call (not browsers), outside /api/v1 and the
// web pages' session and CSRF checks, at Forgejo's addresses: the token endpoint
// (/login/oauth/access_token, a form or JSON, the client's credentials in the body or as HTTP
// Basic), userinfo, introspection, and the OpenID Connect discovery document. The authorization
// step is a web page (consent-pages.tsx). No JWKS: every token is HS256 (issuer.ts).
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { registerBodyParsing } from '../http/bodies.js';
import { notFound } from '../errors.js';
import { TokenError, secretMatches, type OAuth2Tokens, type TokenRequest } from './issuer.js';
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

export interface OAuth2ProviderRoutesDeps {
  tokens: Pick<
    OAuth2Tokens,
    'token' | 'checkAccessToken' | 'userInfo' | 'introspect' | 'authenticateClient' | 'issuer' | 'settings'
  >;
}

/** A field of a form or JSON body: its text ('' when absent; the first when sent several times). */
function field(body: unknown, name: string): string {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  return '';
}

const TOKEN_FIELDS = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'code_verifier',
  'redirect_uri',
  'refresh_token',
] as const;

/** The bearer of an `Authorization: Bearer …` (or `token …`) header, or ''. */
function bearerOf(request: FastifyRequest): string {
  const m = /^(?:bearer|token)\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return m?.[1] ?? '';
}

function refuse(reply: FastifyReply, scheme: 'Basic' | 'Bearer'): FastifyReply {
  return reply
    .code(401)
    .header('WWW-Authenticate', `${scheme} realm=""`)
    .type('text/plain; charset=utf-8')
    .send('no valid authorization');
}

export function oauth2ProviderRoutes(app: FastifyInstance, deps: OAuth2ProviderRoutesDeps): void {
  const { tokens } = deps;
  const { enabled, rootUrl } = tokens.settings;
  registerBodyParsing(app);
  app.addHook('onRequest', async () => {
    if (!enabled) throw notFound('OAuth2 is disabled on this server ([oauth2] ENABLED = false).');
  });

  app.get('/.well-known/openid-configuration', { schema: { hide: true } }, async () => ({
    issuer: tokens.issuer,
    authorization_endpoint: `${rootUrl}login/oauth/authorize`,
    token_endpoint: `${rootUrl}login/oauth/access_token`,
    userinfo_endpoint: `${rootUrl}login/oauth/userinfo`,
    introspection_endpoint: `${rootUrl}login/oauth/introspect`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    id_token_signing_alg_values_supported: ['HS256'],
    subject_types_supported: ['public'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    scopes_supported: ['openid', 'profile', 'email', 'groups'],
    claims_supported: [
      'aud',
      'exp',
      'iat',
      'iss',
      'sub',
      'name',
      'preferred_username',
      'profile',
      'picture',
      'website',
      'locale',
      'updated_at',
      'email',
      'email_verified',
      'groups',
    ],
    code_challenge_methods_supported: ['plain', 'S256'],
  }));

  app.post('/login/oauth/access_token', { schema: { hide: true } }, async (request, reply) => {
    const req = Object.fromEntries(
      TOKEN_FIELDS.map((f) => [f, field(request.body, f)]),
    ) as unknown as TokenRequest;
    reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    try {
      return await tokens.token(req, request.headers.authorization);
    } catch (err) {
      if (!(err instanceof TokenError)) throw err;
      if (err.status === 401) reply.header('WWW-Authenticate', 'Basic realm=""');
      return reply.code(err.status).send({ error: err.error, error_description: err.description });
    }
  });

  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    const holder = await tokens.checkAccessToken(bearerOf(request));
    if (!holder) return refuse(reply, 'Bearer');
    return reply.header('Cache-Control', 'no-store').send(await tokens.userInfo(holder));
  };
  app.get('/login/oauth/userinfo', { schema: { hide: true } }, userinfo);
  app.post('/login/oauth/userinfo', { schema: { hide: true } }, userinfo);

  // RFC 7662: the caller authenticates as a client with its secret, by HTTP Basic (as Forgejo).
  app.post('/login/oauth/introspect', { schema: { hide: true } }, async (request, reply) => {
    const header = request.headers.authorization ?? '';
    if (!/^basic\s/i.test(header)) return refuse(reply, 'Basic');
    let client;
    try {
      client = await tokens.authenticateClient({ client_id: '', client_secret: '' }, header);
    } catch (err) {
      if (err instanceof TokenError) return refuse(reply, 'Basic');
      throw err;
    }
    // A public client names itself only: that is no authentication here.
    if (!secretMatches(client.app, client.presented)) return refuse(reply, 'Basic');
    return reply
      .header('Cache-Control', 'no-store')
      .send(await tokens.introspect(field(request.body, 'token')));
  });
}
