// Web sessions: signing in and out of the browser interface, CSRF tokens, and sign-in throttling
// (throttle.ts). A session is a random cookie value whose SHA-256 is stored with its user and
// expiry; it is replaced at every sign-in (never reused from before), extended while used, and
// removed at sign-out and, whoever makes the change and however (web, API, CLI), in the same
// transaction as the user's password is set, the account suspended or prohibited from signing in
// (users/service.ts `onCredentialsChanged`), or deleted (a foreign key). Sessions are rows only, so
// this holds on every process at once. The API never reads a session.
import crypto from 'node:crypto';
import { nowUnix, type Db } from '../db/database.js';
import type { UserRow } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import * as store from './store.js';
import type { SignInThrottle } from './throttle.js';

const hash = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

export interface SessionUser {
  user: UserRow;
  /** The stored key of the session (the SHA-256 of its cookie). */
  key: string;
}

export interface SessionServiceDeps {
  db: Db;
  /** A new session records the sign-in; a change of the user's credentials ends its sessions. */
  users: Pick<UserService, 'touchLastLogin' | 'onCredentialsChanged'>;
  /** [security] SECRET_KEY, from which the CSRF key is derived (a random one when empty). */
  secretKey: string;
  /** Seconds a session lives without use ([session] SESSION_LIFE_TIME). */
  lifetime: number;
  /** The limiter of password sign-in (shared with Basic authentication). */
  throttle: SignInThrottle;
}

export class SessionService {
  private readonly csrfKey: Buffer;
  private readonly db: Db;
  private readonly users: SessionServiceDeps['users'];
  /** Seconds a session lives without use. */
  readonly lifetime: number;
  /** The limiter of password sign-in (shared with Basic authentication). */
  readonly throttle: SignInThrottle;

  constructor(deps: SessionServiceDeps) {
    this.db = deps.db;
    this.users = deps.users;
    this.lifetime = deps.lifetime;
    this.throttle = deps.throttle;
    this.csrfKey = Buffer.from(
      crypto.hkdfSync('sha256', deps.secretKey || crypto.randomBytes(32), 'anvil-csrf', 'anvil:csrf', 32),
    );
    // A new password, a suspension or a ban ends every session of the account.
    deps.users.onCredentialsChanged((tx, userId) => store.removeOfUser(tx, userId));
  }

  /** Signs `user` in: a new session, whose cookie value is returned (shown to the browser only). */
  async create(user: UserRow): Promise<string> {
    const value = crypto.randomBytes(32).toString('base64url');
    const now = nowUnix();
    await store.removeExpired(this.db, now);
    await store.insert(this.db, hash(value), user.id, now, now + this.lifetime);
    await this.users.touchLastLogin(user);
    return value;
  }

  /**
   * The signed-in user of a cookie value, or null (unknown, expired, or an account that may no
   * longer sign in). A session used after half its life is extended.
   */
  async resolve(value: string | undefined): Promise<SessionUser | null> {
    if (!value || value.length > 100) return null;
    const key = hash(value);
    const now = nowUnix();
    const found = await store.withUser(this.db, key, now);
    if (!found) return null;
    if (!found.user.is_active || found.user.prohibit_login) return null;
    if (found.expires - now < this.lifetime / 2) await store.extend(this.db, key, now + this.lifetime);
    return { user: found.user, key };
  }

  async destroy(value: string | undefined): Promise<void> {
    if (value) await store.remove(this.db, hash(value));
  }

  /**
   * The CSRF token of a browser: an HMAC of its CSRF cookie and the signed-in user, so a token
   * from before signing in (or of another user) is worthless after.
   */
  csrfToken(browserId: string, userId: number | null): string {
    return crypto
      .createHmac('sha256', this.csrfKey)
      .update(`${browserId}:${userId ?? 0}`)
      .digest('base64url');
  }

  checkCsrf(browserId: string | undefined, userId: number | null, presented: unknown): boolean {
    if (!browserId || typeof presented !== 'string') return false;
    const expected = Buffer.from(this.csrfToken(browserId, userId));
    const given = Buffer.from(presented);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  }

  /**
   * Checks a sign-in through the throttle (throttle.ts): refuses (429) while the account or the
   * address has failed too often. Returns the user, or undefined for wrong credentials.
   */
  signIn(login: string, password: string, address: string): Promise<UserRow | undefined> {
    return this.throttle.verify(login, password, address);
  }
}
