// Tables of OAuth2 applications (see db/migrations/0030_oauth2_apps.ts).
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

export interface OAuth2Tables {
  oauth2_application: OAuth2ApplicationTable;
}

export type OAuth2AppRow = Selectable<OAuth2ApplicationTable>;
