// Web sessions: signing in and out of the browser interface, CSRF tokens, and sign-in throttling.
// A session is a random cookie value whose SHA-256 is stored with its user and expiry; it is
// replaced at every sign-in (never reused from before), extended while used, and removed at sign-out
// and when the password changes. Sessions are for the web interface only: the API never reads them.
import crypto from 'node:crypto';
import { nowUnix, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import * as store from './store.js';

const hash = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** Failed sign-ins counted over this window. */
export const THROTTLE_WINDOW = 15 * 60;
/** Failures per login name, and per address, within the window before sign-in is refused. */
export const MAX_FAILURES_PER_LOGIN = 5;
export const MAX_FAILURES_PER_ADDRESS = 20;

export interface SessionUser {
  user: UserRow;
  /** The stored key of the session (the SHA-256 of its cookie). */
  key: string;
}

export interface SessionServiceDeps {
  db: Db;
  /** Sign-in checks the password; a new session records the sign-in. */
  users: Pick<UserService, 'verifyCredentials' | 'touchLastLogin'>;
  /** [security] SECRET_KEY, from which the CSRF key is derived (a random one when empty). */
  secretKey: string;
  /** Seconds a session lives without use ([session] SESSION_LIFE_TIME). */
  lifetime: number;
}

export class SessionService {
  private readonly csrfKey: Buffer;
  private readonly db: Db;
  private readonly users: SessionServiceDeps['users'];
  /** Seconds a session lives without use. */
  readonly lifetime: number;

  constructor(deps: SessionServiceDeps) {
    this.db = deps.db;
    this.users = deps.users;
    this.lifetime = deps.lifetime;
    this.csrfKey = Buffer.from(
      crypto.hkdfSync('sha256', deps.secretKey || crypto.randomBytes(32), 'anvil-csrf', 'anvil:csrf', 32),
    );
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

  /** Ends every session of the user but `keep` (after a password change). */
  async destroyOthers(userId: number, keep?: string): Promise<void> {
    await store.removeOfUser(this.db, userId, keep);
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
   * Checks a sign-in: refuses (429) while the login name or the address has failed too often,
   * counts a failure, and forgets the name's failures after a success. Returns the user, or
   * undefined for wrong credentials.
   */
  async signIn(login: string, password: string, address: string): Promise<UserRow | undefined> {
    const name = login.trim().toLowerCase();
    const now = nowUnix();
    const since = now - THROTTLE_WINDOW;
    const failures = await store.countFailures(this.db, name, address, since);
    if (failures.byLogin >= MAX_FAILURES_PER_LOGIN || failures.byAddress >= MAX_FAILURES_PER_ADDRESS) {
      throw new AppError(
        'too_many_requests',
        'Too many failed sign-in attempts. Please wait a few minutes and try again.',
      );
    }
    const user = await this.users.verifyCredentials(name, password);
    if (!user) {
      await store.addFailure(this.db, name, address, now);
      await store.removeOldFailures(this.db, since - THROTTLE_WINDOW);
      return undefined;
    }
    await store.clearFailures(this.db, name);
    return user;
  }
}
