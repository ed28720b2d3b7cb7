// The OAuth2 provider's tokens, as Forgejo's: POST /login/oauth/access_token exchanges a code
// (grant_type=authorization_code, the client authenticated by its secret or, for a public client,
// by the PKCE verifier) or a refresh token (grant_type=refresh_token) for an access token, a
// refresh token and, when the grant's scope has `openid`, an id_token. Every token is an HS256 JWT
// naming its grant (`gnt`), its type (`tt`: 0 access, 1 refresh), the grant's generation (`gen`)
// and, for a refresh token, the grant's counter (`cnt`); nothing of a token is stored. A token
// works while its grant exists at that generation: revoking the grant (or deleting the application
// or the user) stops every token at once, and a new client secret (store.invalidateIssued) or a
// replay moves the generation on. Refresh tokens work once ([oauth2] INVALIDATE_REFRESH_TOKENS):
// each issue raises the counter; an older refresh token presented again, like a code redeemed a
// second time, revokes the grant (RFC 6749 §4.1.2 and §10.4, RFC 9700 §4.14).
//
// Keys: the server's tokens are signed with [oauth2] JWT_SECRET, else a key derived from
// [security] SECRET_KEY. An id_token is signed, as OpenID Connect §10.1 has it for HS256, with
// the client secret of a confidential client (presented in the same request); a public client,
// which has none, gets it signed with the server's key (it receives it straight from this
// endpoint, OpenID Connect §3.1.3.7).
import crypto from 'node:crypto';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import type { Authenticator, Identity } from '../auth/identity.js';
import { hashToken } from '../tokens/service.js';
import type { ScopeSet } from '../tokens/scopes.js';
import type { OrgService } from '../orgs/service.js';
import { avatarPath } from '../users/avatars.js';
import type { UserRow } from '../users/tables.js';
import { signJwt, verifyJwt } from './jwt.js';
import { apiScopesOf, hasScopeWord } from './scopes.js';
import * as store from './store.js';
import type { OAuth2AppRow, OAuth2GrantRow } from './tables.js';

/** An error of the token endpoint (RFC 6749 §5.2): its JSON body and status. */
export class TokenError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(`${error}: ${description}`);
    this.name = 'TokenError';
  }
}

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  id_token?: string;
}

/** What a token request says (form or JSON fields), '' for what it omits. */
export interface TokenRequest {
  grant_type: string;
  client_id: string;
  client_secret: string;
  code: string;
  code_verifier: string;
  redirect_uri: string;
  refresh_token: string;
}

export interface TokenSettings {
  /** [oauth2] ENABLED. */
  enabled: boolean;
  /** Seconds an access token (and an id_token) is valid. */
  accessTokenTtl: number;
  /** Seconds a refresh token is valid. */
  refreshTokenTtl: number;
  /** Whether a refresh token works once. */
  invalidateRefreshTokens: boolean;
  /** [oauth2] JWT_SECRET (base64 of 32 bytes), or ''. */
  jwtSecret: string;
  /** [security] SECRET_KEY, from which the key is derived without JWT_SECRET. */
  secretKey: string;
  /** [server] ROOT_URL, ending in '/'. */
  rootUrl: string;
}

/** The HS256 key of the server's tokens. */
export function signingKey(jwtSecret: string, secretKey: string): Buffer {
  if (jwtSecret) return Buffer.from(jwtSecret, 'base64');
  if (!secretKey) throw new Error('[security] SECRET_KEY is not set: OAuth2 tokens cannot be signed');
  return Buffer.from(crypto.hkdfSync('sha256', secretKey, 'anvil-oauth2-jwt', 'anvil:v1:oauth2-jwt', 32));
}

const ACCESS = 0;
const REFRESH = 1;

const isId = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n > 0;

/** Whether `secret` is the application's client secret (digests compared in constant time). */
export function secretMatches(app: OAuth2AppRow, secret: string): boolean {
  if (!secret) return false;
  const given = Buffer.from(hashToken(secret));
  const stored = Buffer.from(app.client_secret_hash);
  return given.length === stored.length && crypto.timingSafeEqual(given, stored);
}

/** Whether the PKCE `verifier` answers the code's challenge (RFC 7636 §4.6). */
function pkceMatches(code: { code_challenge: string; code_challenge_method: string }, verifier: string) {
  if (!code.code_challenge) return true;
  if (!verifier) return false;
  const expected =
    code.code_challenge_method === 'S256'
      ? crypto.createHash('sha256').update(verifier).digest('base64url')
      : verifier;
  const a = Buffer.from(expected);
  const b = Buffer.from(code.code_challenge);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** A valid access token's user, API scopes, grant and application. */
export interface AccessTokenHolder {
  user: UserRow;
  scopes: ScopeSet;
  grantId: number;
  appId: number;
  /** The grant's scope words as consented ('openid profile ...'). */
  scope: string;
  exp: number;
  iat: number;
}

export interface OAuth2TokensDeps {
  db: Db;
  /** OAuth2 access tokens are accepted wherever access tokens are (the API, git, LFS). */
  auth: Pick<Authenticator, 'addTokenResolver'>;
  /** The `groups` claim: the user's organizations and teams. */
  orgs: Pick<OrgService, 'listOrgsOfUser' | 'listTeamsOfUser'>;
  settings: TokenSettings;
}

/** Organizations and teams listed for the `groups` claim, at most. */
const MAX_GROUPS = 1000;

export class OAuth2Tokens {
  private readonly db: Db;
  private readonly orgs: OAuth2TokensDeps['orgs'];
  readonly settings: Readonly<TokenSettings>;
  private signing: Buffer | undefined;

  constructor(deps: OAuth2TokensDeps) {
    this.db = deps.db;
    this.orgs = deps.orgs;
    this.settings = deps.settings;
    deps.auth.addTokenResolver((token) => this.resolveIdentity(token));
  }

  /**
   * The JWT key, derived when first needed: the CLI's commands (an administrator made before the
   * first `anvil web` wrote SECRET_KEY) never sign or check a token.
   */
  private get key(): Buffer {
    return (this.signing ??= signingKey(this.settings.jwtSecret, this.settings.secretKey));
  }

  /** The issuer of the id_tokens: ROOT_URL without its final slash, as Forgejo. */
  get issuer(): string {
    return this.settings.rootUrl.replace(/\/$/, '');
  }

  private async resolveIdentity(token: string): Promise<Identity | undefined> {
    const holder = await this.checkAccessToken(token);
    return holder && { user: holder.user, method: 'token', scopes: holder.scopes };
  }

  /** The holder of a valid access token of a grant that still stands; undefined otherwise. */
  async checkAccessToken(token: string): Promise<AccessTokenHolder | undefined> {
    if (!this.settings.enabled) return undefined;
    const claims = verifyJwt(this.key, token);
    if (!claims || claims['tt'] !== ACCESS || !isId(claims['gnt']) || !isId(claims['gen'])) return undefined;
    const hit = await store.grantWithUser(this.db, claims['gnt']);
    if (!hit || hit.grant.generation !== claims['gen']) return undefined;
    return {
      user: hit.user,
      scopes: apiScopesOf(hit.grant.scope),
      grantId: hit.grant.id,
      appId: hit.grant.application_id,
      scope: hit.grant.scope,
      exp: claims['exp'] as number,
      iat: typeof claims['iat'] === 'number' ? claims['iat'] : 0,
    };
  }

  /**
   * The client of a request: Basic credentials (RFC 6749 §2.3.1, each part form-encoded) or the
   * body's fields, which must agree when both are given. A confidential client must present its
   * secret; a public one is named only (its code is bound by PKCE).
   */
  async authenticateClient(
    req: Pick<TokenRequest, 'client_id' | 'client_secret'>,
    authorization: string | undefined,
  ): Promise<{ app: OAuth2AppRow; secret: string; presented: string }> {
    let { client_id: clientId, client_secret: secret } = req;
    const m = /^basic\s+(\S+)$/i.exec(authorization?.trim() ?? '');
    if (m) {
      const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new TokenError('invalid_request', 'cannot parse basic auth header');
      const [id, pass] = [decoded.slice(0, colon), decoded.slice(colon + 1)].map(formDecode) as [
        string,
        string,
      ];
      if ((clientId && clientId !== id) || (secret && secret !== pass)) {
        throw new TokenError(
          'invalid_request',
          'client credentials in the body differ from the Authorization header',
        );
      }
      clientId = id;
      secret = pass;
    }
    if (!clientId) throw new TokenError('invalid_client', 'client_id is required', 401);
    const app = await store.getByClientId(this.db, clientId);
    if (!app) throw new TokenError('invalid_client', `cannot load client with client id: "${clientId}"`, 401);
    if (app.confidential_client && !secretMatches(app, secret)) {
      throw new TokenError(
        'invalid_client',
        secret ? 'invalid client secret' : 'invalid empty client secret',
        401,
      );
    }
    return { app, secret: app.confidential_client ? secret : '', presented: secret };
  }

  /** POST /login/oauth/access_token. */
  async token(req: TokenRequest, authorization: string | undefined): Promise<TokenResponse> {
    if (req.grant_type !== 'authorization_code' && req.grant_type !== 'refresh_token') {
      throw new TokenError(
        'unsupported_grant_type',
        'Only refresh_token or authorization_code grant type is supported',
      );
    }
    const { app, secret } = await this.authenticateClient(req, authorization);
    const outcome = await transaction(this.db, (tx) =>
      req.grant_type === 'authorization_code'
        ? this.redeemCode(tx, app, secret, req)
        : this.refresh(tx, app, secret, req),
    );
    // A replay's revocation is committed before its refusal is answered.
    if (outcome instanceof TokenError) throw outcome;
    return outcome;
  }

  private async redeemCode(
    tx: Tx,
    app: OAuth2AppRow,
    secret: string,
    req: TokenRequest,
  ): Promise<TokenResponse | TokenError> {
    if (!req.code) return new TokenError('invalid_request', 'code is required');
    const digest = hashToken(req.code);
    const code = await store.codeByHash(tx, digest);
    if (!code || !crypto.timingSafeEqual(Buffer.from(code.code_hash), Buffer.from(digest))) {
      return new TokenError('invalid_grant', 'the authorization code is invalid');
    }
    const grant = await store.grantById(tx, code.grant_id);
    if (!grant || grant.application_id !== app.id) {
      return new TokenError('invalid_grant', 'the authorization code is invalid');
    }
    const now = nowUnix();
    const replayed = async () => {
      await store.removeGrant(tx, grant.id);
      return new TokenError(
        'invalid_grant',
        'the authorization code was already used: the tokens issued with it are revoked',
      );
    };
    if (code.used_unix !== 0) return replayed();
    if (code.valid_until < now) return new TokenError('invalid_grant', 'the authorization code has expired');
    // These leave the code unused: a request that could not have redeemed it does not spend it.
    if (req.redirect_uri && req.redirect_uri !== code.redirect_uri) {
      return new TokenError('invalid_grant', 'unexpected redirect URI');
    }
    if (!pkceMatches(code, req.code_verifier)) {
      return new TokenError('invalid_grant', 'failed PKCE code challenge');
    }
    if (!(await store.redeemCode(tx, code.id, now))) return replayed();
    return this.issue(tx, app, grant, secret, now);
  }

  private async refresh(
    tx: Tx,
    app: OAuth2AppRow,
    secret: string,
    req: TokenRequest,
  ): Promise<TokenResponse | TokenError> {
    const claims = req.refresh_token ? verifyJwt(this.key, req.refresh_token) : undefined;
    if (!claims || claims['tt'] !== REFRESH || !isId(claims['gnt']) || !isId(claims['gen'])) {
      return new TokenError('invalid_grant', 'the refresh token is invalid or has expired');
    }
    const grant = await store.grantById(tx, claims['gnt']);
    if (!grant || grant.application_id !== app.id || grant.generation !== claims['gen']) {
      return new TokenError('invalid_grant', 'the refresh token is invalid or has been revoked');
    }
    if (this.settings.invalidateRefreshTokens && claims['cnt'] !== grant.counter) {
      await store.removeGrant(tx, grant.id);
      return new TokenError('invalid_grant', 'the refresh token was already used: the grant is revoked');
    }
    return this.issue(tx, app, grant, secret, nowUnix());
  }

  /** New tokens of `grant` (its counter raised first when refresh tokens work once). */
  private async issue(
    tx: Tx,
    app: OAuth2AppRow,
    grant: OAuth2GrantRow,
    secret: string,
    now: number,
  ): Promise<TokenResponse | TokenError> {
    const hit = await store.grantWithUser(tx, grant.id);
    if (!hit || !hit.user.is_active || hit.user.prohibit_login) {
      return new TokenError('invalid_grant', 'the user may not sign in');
    }
    let counter = grant.counter;
    if (this.settings.invalidateRefreshTokens) {
      if (!(await store.advanceCounter(tx, grant.id, counter, now))) {
        // Another request moved it between our read and our write: one of them is a replay.
        await store.removeGrant(tx, grant.id);
        return new TokenError('invalid_grant', 'the refresh token was already used: the grant is revoked');
      }
      counter += 1;
    }
    const { accessTokenTtl, refreshTokenTtl } = this.settings;
    const base = { gnt: grant.id, gen: grant.generation, iat: now };
    const response: TokenResponse = {
      access_token: signJwt(this.key, { ...base, tt: ACCESS, exp: now + accessTokenTtl, jti: jti() }),
      token_type: 'bearer',
      expires_in: accessTokenTtl,
      refresh_token: signJwt(this.key, {
        ...base,
        tt: REFRESH,
        cnt: counter,
        exp: now + refreshTokenTtl,
        jti: jti(),
      }),
    };
    if (hasScopeWord(grant.scope, 'openid')) {
      const claims = await this.idTokenClaims(hit.user, grant, app, now);
      response.id_token = signJwt(secret || this.key, claims);
    }
    return response;
  }

  private async idTokenClaims(user: UserRow, grant: OAuth2GrantRow, app: OAuth2AppRow, now: number) {
    const claims: Record<string, unknown> = {
      iss: this.issuer,
      sub: String(user.id),
      aud: [app.client_id],
      iat: now,
      exp: now + this.settings.accessTokenTtl,
    };
    if (grant.nonce) claims['nonce'] = grant.nonce;
    if (hasScopeWord(grant.scope, 'profile')) Object.assign(claims, this.profileClaims(user));
    if (hasScopeWord(grant.scope, 'email')) {
      claims['email'] = user.email;
      claims['email_verified'] = user.is_active === 1;
    }
    if (hasScopeWord(grant.scope, 'groups')) claims['groups'] = await this.groupsOf(user);
    return claims;
  }

  private profileClaims(user: UserRow): Record<string, unknown> {
    return {
      name: user.full_name || user.name,
      preferred_username: user.name,
      profile: `${this.settings.rootUrl}${encodeURIComponent(user.name)}`,
      picture: this.pictureOf(user),
      website: user.website,
      locale: user.language,
      updated_at: user.updated_unix,
    };
  }

  private pictureOf(user: UserRow): string {
    return `${this.settings.rootUrl}${avatarPath(user)}`;
  }

  /** Forgejo's groups: each organization of the user, and `org:team` for each team of theirs. */
  async groupsOf(user: UserRow): Promise<string[]> {
    const viewer = { id: user.id, isAdmin: false };
    const [[orgs], [teams]] = await Promise.all([
      this.orgs.listOrgsOfUser(user, viewer, MAX_GROUPS, 0),
      this.orgs.listTeamsOfUser(user, MAX_GROUPS, 0),
    ]);
    const groups: string[] = [];
    for (const org of orgs) {
      groups.push(org.name);
      for (const t of teams) if (t.org_id === org.id) groups.push(`${org.name}:${t.lower_name}`);
    }
    return groups;
  }

  /** GET/POST /login/oauth/userinfo (OpenID Connect §5.3), for an access token's holder. */
  async userInfo(holder: AccessTokenHolder) {
    const { user } = holder;
    const groups = await this.groupsOf(user);
    return {
      sub: String(user.id),
      name: user.full_name || user.name,
      preferred_username: user.name,
      email: user.email,
      picture: this.pictureOf(user),
      ...(groups.length ? { groups } : {}),
    };
  }

  /**
   * POST /login/oauth/introspect (RFC 7662) for an authenticated client: whether `token` is an
   * access or refresh token that works now, with its scope, user and client.
   */
  async introspect(token: string) {
    const claims = token ? verifyJwt(this.key, token) : undefined;
    if (!claims || !isId(claims['gnt']) || !isId(claims['gen'])) return { active: false };
    const hit = await store.grantWithUser(this.db, claims['gnt']);
    const app = hit && (await store.getById(this.db, hit.grant.application_id));
    if (!hit || !app || hit.grant.generation !== claims['gen']) return { active: false };
    if (claims['tt'] === REFRESH && this.settings.invalidateRefreshTokens) {
      const grant = await store.grantById(this.db, hit.grant.id);
      if (!grant || grant.counter !== claims['cnt']) return { active: false };
    }
    return {
      active: true,
      scope: hit.grant.scope,
      username: hit.user.name,
      token_type: claims['tt'] === REFRESH ? 'refresh_token' : 'access_token',
      iss: this.issuer,
      aud: [app.client_id],
      sub: String(hit.user.id),
      exp: claims['exp'],
      iat: claims['iat'],
    };
  }
}

const jti = () => crypto.randomBytes(9).toString('base64url');

/** A part of Basic client credentials: form-encoded (RFC 6749 §2.3.1); taken as is when not. */
function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
