// Who is calling, independent of transport: the signed-in user, how they proved it, and what the
// credential allows. Resolved from credentials by `Authenticator`; used by the HTTP layer and git.
import net from 'node:net';
import { unauthorized } from '../errors.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import type { TokenService } from '../tokens/service.js';
import { ALL_SCOPES, type ScopeSet } from '../tokens/scopes.js';

/** How the caller proved who they are ('signature': a Chef signed request, packages/chef). */
export type AuthMethod = 'basic' | 'token' | 'proxy' | 'signature';

export interface Identity {
  user: UserRow;
  method: AuthMethod;
  scopes: ScopeSet;
  tokenId?: number;
  /** Set for an actions job token: the one repository it may write to (see actions/job-token.ts). */
  repoId?: number;
}

export function viewerOf(identity: Identity | null): Viewer | null {
  if (!identity) return null;
  return {
    id: identity.user.id,
    isAdmin: identity.user.is_admin === 1,
    publicOnly: identity.scopes.publicOnly,
    ...(identity.repoId !== undefined ? { repoId: identity.repoId } : {}),
  };
}

/** Resolves a token that is not an access token (an actions job token); undefined when unknown. */
export type TokenResolver = (token: string) => Promise<Identity | undefined>;

export interface Credentials {
  /** The value of the Authorization header, if any. */
  authorization?: string | undefined;
  /** A token from the `token` or `access_token` query parameter (deprecated by Forgejo, still accepted). */
  queryToken?: string | undefined;
  /** The reverse proxy's user header and the address the request came from. */
  proxyUser?: string | undefined;
  remoteAddress?: string | undefined;
  /** The second factor's passcode sent with a Basic password (X-Forgejo-OTP, else X-Gitea-OTP). */
  otp?: string | undefined;
  /**
   * A transport whose clients cannot send a passcode (git over HTTP): a password of an account with
   * two-factor authentication is refused there, as in Forgejo (a token works).
   */
  refuseSecondFactorPasswords?: boolean;
}

export interface ProxySettings {
  enabled: boolean;
  /** Header carrying the user name (REVERSE_PROXY_AUTHENTICATION_USER). */
  header: string;
  /** Addresses and CIDR ranges allowed to send it (REVERSE_PROXY_TRUSTED_PROXIES). */
  trusted: string[];
}

/** Checks a password for a sign-in name, throttled (sessions/throttle.ts); undefined when wrong. */
export interface PasswordCheck {
  verify(login: string, password: string, address?: string): Promise<UserRow | undefined>;
}

/** The second factor of an account's password (twofa/service.ts). */
export interface SecondFactorCheck {
  isEnrolled(userId: number): Promise<boolean>;
  /** 'none' when the account has none, else whether `otp` is a fresh passcode (then used up). */
  checkOtp(userId: number, otp: string | undefined): Promise<'none' | 'valid' | 'invalid'>;
}

export const SECOND_FACTOR_NEEDS_TOKEN =
  'Users with two-factor authentication enabled cannot perform HTTP/HTTPS operations via plain username and password. Please create and use a personal access token on the user settings page';

export interface AuthenticatorDeps {
  users: Pick<UserService, 'getByName'>;
  tokens: Pick<TokenService, 'resolve'>;
  /** The reverse proxy's user header ([service] and [security] REVERSE_PROXY_*). */
  proxy: ProxySettings;
  /** Where Basic authentication's passwords are checked: the sign-in throttle. */
  passwords: PasswordCheck;
  /** Accounts with two-factor authentication need a passcode beside a Basic password. */
  secondFactor?: SecondFactorCheck | undefined;
}

const BAD_CREDENTIALS = 'invalid username, password or token';
/** Forgejo's answer to a missing or wrong passcode beside a Basic password. */
const OTP_INVALID = 'invalid provided OTP';

export class Authenticator {
  private readonly trusted = new net.BlockList();
  private readonly resolvers: TokenResolver[] = [];

  readonly proxyHeader: string;

  private readonly users: AuthenticatorDeps['users'];
  private readonly tokens: AuthenticatorDeps['tokens'];
  private readonly proxy: ProxySettings;
  private readonly passwords: PasswordCheck;
  private readonly secondFactor: SecondFactorCheck | undefined;

  constructor(deps: AuthenticatorDeps) {
    const { proxy } = deps;
    this.users = deps.users;
    this.tokens = deps.tokens;
    this.proxy = proxy;
    this.passwords = deps.passwords;
    this.secondFactor = deps.secondFactor;
    this.proxyHeader = proxy.header.toLowerCase();
    for (const cidr of proxy.trusted) {
      const [addr, bits] = cidr.split('/');
      if (!addr) continue;
      const type = net.isIPv6(addr) ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.trusted.addAddress(addr, type);
      else this.trusted.addSubnet(addr, Number(bits), type);
    }
  }

  /**
   * The identity behind the credentials, or null when none were presented. Presented but wrong
   * credentials are a 401, whatever the route.
   */
  async authenticate(c: Credentials): Promise<Identity | null> {
    const header = c.authorization?.trim();
    if (header) {
      const space = header.indexOf(' ');
      const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
      const value = space < 0 ? '' : header.slice(space + 1).trim();
      if (scheme === 'token' || scheme === 'bearer') return this.byToken(value);
      if (scheme === 'basic') return this.byBasic(value, c);
      throw unauthorized(`unsupported authorization scheme: ${scheme}`);
    }
    if (c.queryToken) return this.byToken(c.queryToken);
    if (this.proxy.enabled && c.proxyUser && c.remoteAddress && this.isTrusted(c.remoteAddress)) {
      const user = await this.users.getByName(c.proxyUser);
      if (!user || user.type !== 0) throw unauthorized(BAD_CREDENTIALS);
      return { user, method: 'proxy', scopes: ALL_SCOPES };
    }
    return null;
  }

  /** Other kinds of token, tried when a presented token is not an access token. */
  addTokenResolver(resolver: TokenResolver): void {
    this.resolvers.push(resolver);
  }

  private async otherToken(token: string): Promise<Identity | undefined> {
    for (const resolve of this.resolvers) {
      const identity = await resolve(token);
      if (identity) return identity;
    }
    return undefined;
  }

  private isTrusted(addr: string): boolean {
    const plain = addr.startsWith('::ffff:') ? addr.slice(7) : addr;
    return this.trusted.check(plain, net.isIPv6(plain) ? 'ipv6' : 'ipv4');
  }

  private async byToken(token: string): Promise<Identity> {
    const hit = await this.tokens.resolve(token);
    if (!hit) {
      const other = await this.otherToken(token);
      if (other) return other;
      throw unauthorized(BAD_CREDENTIALS);
    }
    return { user: hit.user, method: 'token', scopes: hit.scopes, tokenId: hit.tokenId };
  }

  /** Basic auth: a password, or an access token given as the password (then the token's scopes apply). */
  private async byBasic(encoded: string, c: Credentials): Promise<Identity> {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw unauthorized(BAD_CREDENTIALS);
    const login = decoded.slice(0, colon);
    const secret = decoded.slice(colon + 1);
    const asToken = await this.tokens.resolve(secret);
    if (asToken) {
      const sameUser =
        login === '' ||
        login.toLowerCase() === asToken.user.lower_name ||
        login.toLowerCase() === asToken.user.lower_email ||
        login === 'x-oauth-basic';
      if (!sameUser) throw unauthorized(BAD_CREDENTIALS);
      return { user: asToken.user, method: 'token', scopes: asToken.scopes, tokenId: asToken.tokenId };
    }
    // A job token works with any user name (git clients send one).
    const other = secret ? await this.otherToken(secret) : undefined;
    if (other) return other;
    if (secret === 'x-oauth-basic' || secret === '') {
      const byName = await this.tokens.resolve(login);
      if (byName)
        return { user: byName.user, method: 'token', scopes: byName.scopes, tokenId: byName.tokenId };
    }
    // The one place Basic passwords are checked, for every surface (API, git, LFS, registries):
    // counted against the account as the web's sign-in form is (429 once it failed too often).
    const user = await this.passwords.verify(login, secret);
    if (!user) throw unauthorized(BAD_CREDENTIALS);
    // Two-factor authentication: a passcode beside the password, or a token where none can be sent.
    if (this.secondFactor) {
      if (c.refuseSecondFactorPasswords && (await this.secondFactor.isEnrolled(user.id))) {
        throw unauthorized(SECOND_FACTOR_NEEDS_TOKEN);
      }
      if ((await this.secondFactor.checkOtp(user.id, c.otp)) === 'invalid') throw unauthorized(OTP_INVALID);
    }
    return { user, method: 'basic', scopes: ALL_SCOPES };
  }
}
