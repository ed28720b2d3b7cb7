// Accounts (people and organizations share the user table, as in Forgejo), access tokens,
// organization membership and teams.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('user'), dialect)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('lower_name', 'text', (c) => c.notNull().unique())
    .addColumn('full_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('lower_email', 'text', (c) => c.notNull())
    .addColumn('keep_email_private', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('passwd', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('must_change_password', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('login_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('login_source', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('visibility', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('prohibit_login', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('restricted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('allow_create_organization', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('max_repo_creation', 'integer', (c) => c.notNull().defaultTo(-1))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('website', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('location', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('pronouns', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('repo_admin_change_team_access', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addColumn('last_login_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // E-mail addresses are unique among people; organizations may share or omit one.
  if (dialect === 'mysql') {
    // MySQL has no partial index: a hidden generated column holds the address of people only
    // (NULL for others, which a unique index lets repeat).
    await sql`ALTER TABLE "user" ADD COLUMN lower_email_individual varchar(255)
      AS (CASE WHEN type = 0 THEN lower_email END) VIRTUAL INVISIBLE`.execute(db);
    await sql`CREATE UNIQUE INDEX user_lower_email_individual ON "user" (lower_email_individual)`.execute(db);
  } else {
    await sql`CREATE UNIQUE INDEX user_lower_email_individual ON "user" (lower_email) WHERE type = 0`.execute(
      db,
    );
  }
  await db.schema.createIndex('user_type_admin').on('user').columns(['type', 'is_admin']).execute();
  await db.schema.createIndex('user_login').on('user').columns(['login_source', 'login_name']).execute();

  await withId(db.schema.createTable('access_token'), dialect)
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_last_eight', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('access_token_uid_name', ['uid', 'name'])
    .execute();

  await withId(db.schema.createTable('org_user'), dialect)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('org_user_org_uid', ['org_id', 'uid'])
    .execute();
  await db.schema.createIndex('org_user_uid').on('org_user').column('uid').execute();

  await withId(db.schema.createTable('team'), dialect)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('lower_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('authorize', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('includes_all_repositories', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_create_org_repo', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('team_org_lower_name', ['org_id', 'lower_name'])
    .execute();

  await withId(db.schema.createTable('team_user'), dialect)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('team_id', 'bigint', (c) => c.notNull().references('team.id').onDelete('cascade'))
    .addColumn('uid', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addUniqueConstraint('team_user_team_uid', ['team_id', 'uid'])
    .execute();
  await db.schema.createIndex('team_user_uid').on('team_user').columns(['uid', 'org_id']).execute();

  await withId(db.schema.createTable('team_unit'), dialect)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('team_id', 'bigint', (c) => c.notNull().references('team.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('access_mode', 'integer', (c) => c.notNull())
    .addUniqueConstraint('team_unit_team_type', ['team_id', 'type'])
    .execute();
}
