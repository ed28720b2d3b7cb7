// The OAuth2 provider's authorization step, as Forgejo's: /login/oauth/authorize checks the
// request (the client, its registered redirect URI, `response_type=code`, PKCE) and either answers
// at once (a code for a confidential client the user already authorized for this scope, or an
// error sent back to the client) or asks for the user's consent; /login/oauth/grant records the
// consent (the grant) and issues a code. Errors are sent back to the redirect URI as RFC 6749
// §4.1.2.1 says, except when the client or the redirect URI cannot be trusted: those are shown to
// the user and nothing is redirected. The grants a user gave are listed and revoked here too.
// Tokens are issued and checked by `OAuth2Tokens` (issuer.ts).
import crypto from 'node:crypto';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { notFound } from '../errors.js';
import { hashToken } from '../tokens/service.js';
import type { UserRow } from '../users/tables.js';
import { redirectUrisOf } from './service.js';
import { scopeCovers, scopeWords } from './scopes.js';
import * as store from './store.js';
import type { OAuth2AppRow, OAuth2GrantListed, OAuth2GrantRow } from './tables.js';

/** What an authorization request (or the consent form repeating it) says; '' for what it omits. */
export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  state: string;
  scope: string;
  nonce: string;
  code_challenge: string;
  code_challenge_method: string;
}

export type AuthorizeOutcome =
  /** Shown to the user: the client or its redirect URI cannot be trusted with a redirect. */
  | { kind: 'refused'; error: string; description: string }
  /** Where the browser goes next: the client's redirect URI with a code or an error. */
  | { kind: 'redirect'; location: string }
  /** The consent page. */
  | { kind: 'consent'; app: OAuth2AppRow; request: AuthorizationRequest };

/** Seconds an authorization code is valid (RFC 6749 §4.1.2 recommends at most ten minutes). */
export const CODE_LIFETIME = 600;

/** RFC 7636 §4.1: 43 to 128 unreserved characters (for the S256 challenge too, a base64url digest). */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Whether `uri` is one of the application's redirect URIs: exactly (RFC 6749 §3.1.2.3; no
 * prefixes, no added query), except that a public client's `http` loopback address may name any
 * port (RFC 8252 §7.3), as native applications listen on a free one.
 */
export function redirectAllowed(app: OAuth2AppRow, uri: string): boolean {
  if (!uri) return false;
  const registered = redirectUrisOf(app);
  if (registered.includes(uri)) return true;
  if (app.confidential_client) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !url.port) return false;
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname) && url.hostname !== '[::1]') return false;
  url.port = '';
  const portless = url.href;
  return registered.some((r) => URL.canParse(r) && new URL(r).href === portless);
}

/** `uri` with `params` added to its query (those of '' value left out). */
export function withQuery(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  return url.href;
}

export interface OAuth2ProviderDeps {
  db: Db;
  /** [oauth2] ENABLED: otherwise every step is a 404. */
  enabled: boolean;
}

export class OAuth2Provider {
  private readonly db: Db;
  readonly enabled: boolean;

  constructor(deps: OAuth2ProviderDeps) {
    this.db = deps.db;
    this.enabled = deps.enabled;
  }

  assertEnabled(): void {
    if (!this.enabled) throw notFound('OAuth2 is disabled on this server ([oauth2] ENABLED = false).');
  }

  /**
   * Checks an authorization request: a refusal to show, an error for the client, or the
   * application (and the request with its PKCE method settled).
   */
  private async check(
    req: AuthorizationRequest,
  ): Promise<Exclude<AuthorizeOutcome, { kind: 'consent' }> | { kind: 'ok'; app: OAuth2AppRow }> {
    this.assertEnabled();
    const app = req.client_id ? await store.getByClientId(this.db, req.client_id) : undefined;
    if (!app)
      return { kind: 'refused', error: 'unauthorized_client', description: 'Client ID not registered' };
    if (!redirectAllowed(app, req.redirect_uri)) {
      return { kind: 'refused', error: 'invalid_request', description: 'Unregistered Redirect URI' };
    }
    const fail = (error: string, description: string): { kind: 'redirect'; location: string } => ({
      kind: 'redirect',
      location: withQuery(req.redirect_uri, { error, error_description: description, state: req.state }),
    });
    if (req.response_type !== 'code') {
      return fail('unsupported_response_type', 'Only code response type is supported.');
    }
    // RFC 7636 §4.3: without a method, the challenge is plain.
    if (req.code_challenge && !req.code_challenge_method) req.code_challenge_method = 'plain';
    if (req.code_challenge_method) {
      if (req.code_challenge_method !== 'S256' && req.code_challenge_method !== 'plain') {
        return fail('invalid_request', 'unsupported code challenge method');
      }
      if (!PKCE_VALUE.test(req.code_challenge)) {
        return fail('invalid_request', 'invalid code challenge');
      }
    } else if (!app.confidential_client) {
      // RFC 8252 §8.1, RFC 7636 §4.4.1.
      return fail('invalid_request', 'PKCE is required for public clients');
    }
    return { kind: 'ok', app };
  }

  /**
   * GET /login/oauth/authorize for the signed-in `user`. A confidential client the user already
   * authorized for (at least) this scope gets its code without asking again; a public client is
   * always asked about (RFC 6749 §10.2), as in Forgejo.
   */
  async authorize(user: UserRow, req: AuthorizationRequest): Promise<AuthorizeOutcome> {
    const checked = await this.check(req);
    if (checked.kind !== 'ok') return checked;
    const { app } = checked;
    const grant = await store.grantOf(this.db, user.id, app.id);
    if (grant && app.confidential_client && scopeCovers(grant.scope, req.scope)) {
      return { kind: 'redirect', location: await this.issueCode(grant, req) };
    }
    return { kind: 'consent', app, request: req };
  }

  /**
   * POST /login/oauth/grant: the user's answer on the consent page (the request is checked again:
   * the form is only what the page held). Granted: the grant (made, or its scope set to this
   * request's) and a code; refused: `access_denied` for the client.
   */
  async grant(user: UserRow, req: AuthorizationRequest, granted: boolean): Promise<AuthorizeOutcome> {
    const checked = await this.check({ ...req, response_type: 'code' });
    if (checked.kind !== 'ok') return checked;
    if (!granted) {
      return {
        kind: 'redirect',
        location: withQuery(req.redirect_uri, {
          error: 'access_denied',
          error_description: 'the request is denied',
          state: req.state,
        }),
      };
    }
    const scope = scopeWords(req.scope).join(' ');
    const grant = await transaction(this.db, async (tx) => {
      const now = nowUnix();
      await store.insertGrantIfAbsent(tx, {
        user_id: user.id,
        application_id: checked.app.id,
        scope,
        nonce: '',
        created_unix: now,
        updated_unix: now,
      });
      const row = (await store.grantOf(tx, user.id, checked.app.id))!;
      if (row.scope !== scope) {
        await store.updateGrant(tx, row.id, { scope, updated_unix: now });
        row.scope = scope;
      }
      return row;
    });
    return { kind: 'redirect', location: await this.issueCode(grant, req) };
  }

  /** A new single-use code of `grant` (only its digest kept): the client's redirect URI with it. */
  private async issueCode(grant: OAuth2GrantRow, req: AuthorizationRequest): Promise<string> {
    const code = `gta_${crypto.randomBytes(32).toString('base64url')}`;
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      await store.removeExpiredCodes(tx, now);
      await store.insertCode(tx, {
        grant_id: grant.id,
        code_hash: hashToken(code),
        code_challenge: req.code_challenge,
        code_challenge_method: req.code_challenge ? req.code_challenge_method : '',
        redirect_uri: req.redirect_uri,
        valid_until: now + CODE_LIFETIME,
      });
      // The id_token of this authorization carries this request's nonce (OpenID Connect §3.1.2.1).
      await store.updateGrant(tx, grant.id, { nonce: req.nonce.slice(0, 255), updated_unix: now });
    });
    return withQuery(req.redirect_uri, { code, state: req.state });
  }

  /** Who registered the application (the consent page names them). */
  creatorOf(app: OAuth2AppRow): Promise<{ name: string } | undefined> {
    return store.userName(this.db, app.uid);
  }

  /** The applications `user` authorized, with their names. */
  listGrants(user: UserRow): Promise<OAuth2GrantListed[]> {
    return store.grantsOfUser(this.db, user.id);
  }

  /**
   * Revokes the user's grant `grantId` of application `appId`: its codes and every token it issued
   * stop working at once (they are checked against the grant on every use). 404 for another's.
   */
  async revokeGrant(user: UserRow, appId: number, grantId: number): Promise<void> {
    const grant = await store.grantById(this.db, grantId);
    if (!grant || grant.user_id !== user.id || grant.application_id !== appId) {
      throw notFound('The OAuth2 grant does not exist.');
    }
    await store.removeGrant(this.db, grant.id, user.id);
  }
}
