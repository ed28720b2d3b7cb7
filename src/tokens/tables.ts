import type { Generated, Selectable } from 'kysely';

export interface AccessTokenTable {
  id: Generated<number>;
  uid: number;
  name: string;
  /** SHA-256 of the token, hex; the token itself is never stored. */
  token_hash: string;
  token_last_eight: string;
  /** Normalized, comma-separated scope string; '' for tokens made before scopes existed (means all). */
  scope: string;
  created_unix: number;
  updated_unix: number;
}

export interface TokenTables {
  access_token: AccessTokenTable;
}

export type TokenRow = Selectable<AccessTokenTable>;
