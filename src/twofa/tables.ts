// Tables of the two-factor domain (see db/migrations/0044_two_factor.ts).
import type { Generated, Selectable } from 'kysely';

/** A user's TOTP enrolment (Forgejo's two_factor). */
export interface TwoFactorTable {
  id: Generated<number>;
  /** The enrolled user; one row per user. */
  uid: number;
  /** The base32 TOTP secret, encrypted (auth/secrets.ts SecretBox, purpose "two-factor"). */
  secret: string;
  /** Salt and PBKDF2-SHA256 hash (hex) of the recovery code; '' once the code was used. */
  scratch_salt: string;
  scratch_hash: string;
  /** The passcode last accepted, and the TOTP time step it belonged to (no step at or before it is accepted again). */
  last_used_passcode: string | null;
  last_used_step: number | null;
  created_unix: number;
  updated_unix: number;
}

export type TwoFactorRow = Selectable<TwoFactorTable>;

export interface TwoFactorTables {
  two_factor: TwoFactorTable;
}
