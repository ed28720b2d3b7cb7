// Tables of OAuth2 applications and the provider's grants and codes (see
// db/migrations/0030_oauth2_apps.ts and 0052_oauth2_grants.ts).
import type { Generated, Selectable } from 'kysely';

export interface OAuth2ApplicationTable {
  id: Generated<number>;
  /** The user who registered it. */
  uid: number;
  name: string;
  /** Public identifier of the client: a UUID. */
  client_id: string;
  /** SHA-256 of the client secret, hex; the secret itself is never stored. */
  client_secret_hash: string;
  /** JSON array of absolute URLs. */
  redirect_uris: Generated<string>;
  confidential_client: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

/** A user's consent to an application: one per user and application. */
export interface OAuth2GrantTable {
  id: Generated<number>;
  user_id: number;
  application_id: number;
  /** Raised at each token issue; a refresh token names the value it was issued at. */
  counter: Generated<number>;
  /** Every token carries it; raising it invalidates every token the grant issued. */
  generation: Generated<number>;
  /** The scope consented to, space-separated as requested. */
  scope: string;
  /** OpenID Connect nonce of the latest authorization request ('' when none). */
  nonce: string;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2AuthorizationCodeTable {
  id: Generated<number>;
  grant_id: number;
  /** SHA-256 of the code, hex. */
  code_hash: string;
  /** PKCE: '' and '' without. */
  code_challenge: string;
  code_challenge_method: string;
  redirect_uri: string;
  valid_until: number;
  /** When it was redeemed; 0 while unused. */
  used_unix: Generated<number>;
}

export interface OAuth2Tables {
  oauth2_application: OAuth2ApplicationTable;
  oauth2_grant: OAuth2GrantTable;
  oauth2_authorization_code: OAuth2AuthorizationCodeTable;
}

export type OAuth2AppRow = Selectable<OAuth2ApplicationTable>;
export type OAuth2GrantRow = Selectable<OAuth2GrantTable>;
export type OAuth2CodeRow = Selectable<OAuth2AuthorizationCodeTable>;

/** A grant as the user's settings list it: with its application's name. */
export interface OAuth2GrantListed extends OAuth2GrantRow {
  application_name: string;
}
