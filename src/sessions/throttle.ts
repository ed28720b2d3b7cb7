// Throttling of password sign-in, on every surface that takes a password: the web's sign-in form
// (sessions/service.ts) and Basic authentication (auth/identity.ts: the API, git over HTTP, LFS,
// the package registries), and the codes of the second factor (twofa/service.ts, under keys of
// their own). One limiter per account whatever form of its name was typed: failures
// count against the account's id when the name or e-mail address resolves to a person, else
// against the normalised name. Failures are rows in `login_failure` (so every process on the
// database sees them) and only count within the window: an account is never locked for longer
// than the window after its last counted failure. A failure is written down before the password
// is checked, so parallel guesses cannot slip past the limit; a success forgets the account's.
import { nowUnix, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import * as store from './store.js';

export interface ThrottleSettings {
  /** Seconds over which failures count ([security] LOGIN_THROTTLE_WINDOW). */
  window: number;
  /** Failures per account within the window before its password sign-in is refused. */
  maxPerAccount: number;
  /** Failures per address within the window (where the caller names the address). */
  maxPerAddress: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = { window: 15 * 60, maxPerAccount: 5, maxPerAddress: 20 };

export const TOO_MANY_FAILURES = 'Too many failed sign-in attempts. Please wait a few minutes and try again.';

/** The key a login name counts under when it names no account. */
export const normalisedLogin = (login: string): string => login.trim().toLowerCase();

export interface SignInThrottleDeps {
  db: Db;
  /** Who a sign-in name names, and the password check itself. */
  users: Pick<UserService, 'findByLogin' | 'checkPassword'>;
  settings?: ThrottleSettings | undefined;
}

export class SignInThrottle {
  private readonly db: Db;
  private readonly users: SignInThrottleDeps['users'];
  readonly settings: ThrottleSettings;

  constructor(deps: SignInThrottleDeps) {
    this.db = deps.db;
    this.users = deps.users;
    this.settings = deps.settings ?? DEFAULT_THROTTLE;
  }

  /**
   * Checks `password` for `login` (a user name or an e-mail address): the person, or undefined
   * for wrong credentials. Throws `too_many_requests` (429) while the account, or `address` when
   * given, has failed too often within the window.
   */
  async verify(login: string, password: string, address?: string): Promise<UserRow | undefined> {
    const user = await this.users.findByLogin(login.trim());
    const key = user ? `user:${user.id}` : `name:${normalisedLogin(login)}`;
    return this.guard(key, address, () => this.users.checkPassword(user, password));
  }

  /**
   * Runs `check` (a secret's check: a password, a second factor's code) under the limiter of
   * `key`: throws `too_many_requests` (429) while `key`, or `address` when given, has failed too
   * often within the window; a check that finds nothing (undefined) counts as a failure, one that
   * succeeds forgets the key's failures.
   */
  async guard<T>(
    key: string,
    address: string | undefined,
    check: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const { window, maxPerAccount, maxPerAddress } = this.settings;
    const now = nowUnix();
    const since = now - window;
    const over = async (extra: number) => {
      const n = await store.countFailures(this.db, key, address, since);
      return (
        n.byLogin >= maxPerAccount + extra || (address !== undefined && n.byAddress >= maxPerAddress + extra)
      );
    };
    if (await over(0)) throw new AppError('too_many_requests', TOO_MANY_FAILURES);
    const attempt = await store.addFailure(this.db, key, address ?? '', now);
    // Others tried at the same moment: only as many as the limit allows go on.
    if (await over(1)) {
      await store.removeFailure(this.db, attempt);
      throw new AppError('too_many_requests', TOO_MANY_FAILURES);
    }
    const found = await check();
    if (found === undefined) {
      await store.removeOldFailures(this.db, since);
      return undefined;
    }
    await store.clearFailures(this.db, key);
    return found;
  }
}
