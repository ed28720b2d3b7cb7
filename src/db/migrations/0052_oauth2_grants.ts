// The OAuth2 provider's state (Forgejo's oauth2_grant and oauth2_authorization_code):
// - a grant is a user's consent to one application (one per user and application), with the
//   scope consented to, the OpenID Connect nonce of the latest request, the counter that makes
//   refresh tokens single-use, and a generation every token carries: raising it (a secret
//   regenerated, a code or refresh token replayed) invalidates every token the grant issued;
// - an authorization code is short-lived and single-use: only its SHA-256 is kept, with the PKCE
//   challenge and the redirect URI it was issued for; a redeemed code stays (used_unix set) until
//   it expires, so a second redemption is recognised and revokes what the first issued.
// Deleting the user, the application or the grant removes what hangs on it.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('oauth2_grant'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('application_id', 'bigint', (c) =>
      c.notNull().references('oauth2_application.id').onDelete('cascade'),
    )
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(1))
    .addColumn('generation', 'bigint', (c) => c.notNull().defaultTo(1))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('oauth2_grant_user_application', ['user_id', 'application_id'])
    .execute();
  await db.schema
    .createIndex('oauth2_grant_application')
    .on('oauth2_grant')
    .column('application_id')
    .execute();

  await withId(db.schema.createTable('oauth2_authorization_code'), dialect)
    .addColumn('grant_id', 'bigint', (c) => c.notNull().references('oauth2_grant.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('code_challenge_method', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('valid_until', 'bigint', (c) => c.notNull())
    .addColumn('used_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('oauth2_authorization_code_grant')
    .on('oauth2_authorization_code')
    .column('grant_id')
    .execute();
  await db.schema
    .createIndex('oauth2_authorization_code_valid_until')
    .on('oauth2_authorization_code')
    .column('valid_until')
    .execute();
}
