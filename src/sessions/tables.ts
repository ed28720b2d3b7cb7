// Tables of the sessions domain (see db/migrations/0018_web_sessions.ts).
import type { Generated } from 'kysely';

export interface WebSessionTable {
  /** SHA-256 (hex) of the cookie's value. */
  id_hash: string;
  user_id: number;
  created_unix: number;
  expires_unix: number;
}

export interface LoginFailureTable {
  id: Generated<number>;
  /**
   * What the failure counts against: `user:<id>` of the account, or `name:<login>` (lower-cased);
   * `twofa:<id>` for a second factor's code.
   */
  login: string;
  /** Where it came from ('' when the surface does not say). */
  address: string;
  created_unix: number;
}

export interface SessionTables {
  web_session: WebSessionTable;
  login_failure: LoginFailureTable;
}
