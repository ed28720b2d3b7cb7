// The token of /v2/token: `payload.signature` (HMAC-SHA256 with a key derived from [security]
// SECRET_KEY), naming the user, the scopes of the credential it was issued for and an expiry.
// Clients send it back as Bearer; routes.ts tells it apart from access tokens.
import crypto from 'node:crypto';
import type { Identity } from '../../auth/identity.js';
import { nowUnix } from '../../db/database.js';
import { unauthorized } from '../../errors.js';
import { formatScopes, storedScopes } from '../../tokens/scopes.js';
import type { UserService } from '../../users/service.js';

const TOKEN_TTL = 3600;

export interface RegistryTokensDeps {
  /** [security] SECRET_KEY (a random key for this process when unset). */
  secretKey: string;
  users: Pick<UserService, 'getById'>;
}

export class RegistryTokens {
  private readonly tokenKey: Buffer;

  constructor(private readonly deps: RegistryTokensDeps) {
    const secret = deps.secretKey || crypto.randomBytes(32).toString('hex');
    this.tokenKey = Buffer.from(
      crypto.hkdfSync('sha256', secret, 'anvil-container-token', 'anvil:container-registry-token', 32),
    );
  }

  /** A signed token for `identity` (null: anonymous), valid for `ttl` seconds (an hour). */
  issueToken(
    identity: Identity | null,
    ttl = TOKEN_TTL,
  ): { token: string; expiresIn: number; issuedAt: string } {
    const now = nowUnix();
    const payload = identity
      ? {
          u: identity.user.id,
          s: formatScopes(identity.scopes),
          ...(identity.tokenId !== undefined ? { t: identity.tokenId } : {}),
          ...(identity.repoId !== undefined ? { r: identity.repoId } : {}),
          e: now + ttl,
        }
      : { u: 0, e: now + ttl };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const sig = crypto.createHmac('sha256', this.tokenKey).update(body).digest('base64url');
    return { token: `${body}.${sig}`, expiresIn: ttl, issuedAt: new Date(now * 1000).toISOString() };
  }

  /**
   * The identity a registry token names: undefined when `token` is not one (another kind of
   * token), null for an anonymous one; a 401 when it is one but forged, expired or of a user gone.
   */
  async verifyToken(token: string): Promise<Identity | null | undefined> {
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return undefined;
    const expected = crypto.createHmac('sha256', this.tokenKey).update(m[1]!).digest();
    const given = Buffer.from(m[2]!, 'base64url');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      throw unauthorized('invalid registry token');
    }
    let p: { u?: unknown; s?: unknown; t?: unknown; r?: unknown; e?: unknown };
    try {
      p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as typeof p;
    } catch {
      throw unauthorized('invalid registry token');
    }
    if (typeof p.e !== 'number' || p.e < nowUnix()) throw unauthorized('the registry token has expired');
    if (p.u === 0) return null;
    const user = typeof p.u === 'number' ? await this.deps.users.getById(p.u) : undefined;
    if (!user) throw unauthorized('invalid registry token');
    return {
      user,
      method: 'token',
      scopes: storedScopes(typeof p.s === 'string' ? p.s : ''),
      ...(typeof p.t === 'number' ? { tokenId: p.t } : {}),
      ...(typeof p.r === 'number' ? { repoId: p.r } : {}),
    };
  }
}
