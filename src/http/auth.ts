// The one place where API requests are authenticated and checked against what their route
// declares: sign-in, token-only, basic-only, site admin, and the token scope category.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, notFound, unauthorized } from '../errors.js';
import { viewerOf, type Authenticator, type Identity } from '../auth/identity.js';
import type { UserService } from '../users/service.js';
import type { Viewer } from '../users/tables.js';
import { hasScope, type ScopeCategory, type ScopeLevel } from '../tokens/scopes.js';

export interface RouteAuth {
  /** Token scope category the route belongs to; the level follows the method unless `level` says. */
  scope?: ScopeCategory;
  level?: ScopeLevel;
  /** 'signed': any credential; 'token': an access token only; 'basic': a password (or reverse proxy) only. */
  require?: 'signed' | 'token' | 'basic';
  /** Site administrators only. */
  admin?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    identity: Identity | null;
    viewer: Viewer | null;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The signed-in identity of a route that declared `require`; a type guard for handlers. */
export function signedIn(request: FastifyRequest): Identity {
  if (!request.identity) throw unauthorized('token is required');
  return request.identity;
}

export function signedViewer(request: FastifyRequest): Viewer {
  return viewerOf(signedIn(request))!;
}

export interface AuthHookDeps {
  auth: Pick<Authenticator, 'authenticate' | 'proxyHeader'>;
  /** Whether the account may act at all, and the account a `Sudo` names. */
  users: SudoUsers;
}

/** What the hook asks of accounts (users/service.ts). */
export type SudoUsers = Pick<UserService, 'assertMayAct' | 'getByName'>;

export function registerAuth(app: FastifyInstance, deps: AuthHookDeps): void {
  const { auth, users } = deps;
  app.decorateRequest('identity', null);
  app.decorateRequest('viewer', null);

  app.addHook('onRequest', async (request) => {
    const q = request.query as Record<string, unknown>;
    const queryToken = typeof q['token'] === 'string' ? q['token'] : q['access_token'];
    let identity = await auth.authenticate({
      authorization: request.headers.authorization,
      queryToken: typeof queryToken === 'string' ? queryToken : undefined,
      proxyUser: header(request, auth.proxyHeader),
      remoteAddress: request.socket.remoteAddress,
      otp: header(request, 'x-forgejo-otp') || header(request, 'x-gitea-otp'),
    });
    if (identity) {
      users.assertMayAct(identity.user);
      identity = await applySudo(request, identity, users);
    }
    request.identity = identity;
    request.viewer = viewerOf(identity);

    const rule = request.routeOptions.config.auth;
    if (!rule) return;
    if ((rule.require || rule.admin) && !identity) throw unauthorized('token is required');
    if (rule.require === 'token' && identity?.method !== 'token') throw unauthorized('token is required');
    if (rule.require === 'basic' && identity && identity.method === 'token')
      throw unauthorized('auth required');
    if (rule.scope && identity) {
      const level = rule.level ?? (READ_METHODS.has(request.method) ? 'read' : 'write');
      if (!hasScope(identity.scopes, rule.scope, level)) {
        throw forbidden(`token does not have at least one of required scope(s): [${level}:${rule.scope}]`);
      }
    }
    if (rule.admin && !identity!.user.is_admin) throw forbidden('user should be the site admin');
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `Sudo` header or `sudo` query: a site administrator acts as another user. */
async function applySudo(request: FastifyRequest, identity: Identity, users: SudoUsers): Promise<Identity> {
  const q = request.query as Record<string, unknown>;
  const target = header(request, 'sudo') ?? (typeof q['sudo'] === 'string' ? q['sudo'] : undefined);
  if (!target) return identity;
  if (!identity.user.is_admin) throw forbidden('Only administrators allowed to sudo.');
  const user = await users.getByName(target);
  if (!user || user.type !== 0) throw notFound(`user does not exist [name: ${target}]`);
  return { ...identity, user };
}
