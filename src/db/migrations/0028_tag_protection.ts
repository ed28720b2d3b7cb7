// Tag protection rules, as Forgejo keeps them (its `protected_tag`): a name pattern (a glob, or a
// regular expression between slashes) and the users and teams allowed to create, move or delete
// the tags it matches. Both hang off their repository with ON DELETE CASCADE; deleting a user or a
// team removes it from every allow-list.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('protected_tag'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name_pattern', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    // Also the index for "the rules of a repository".
    .addUniqueConstraint('protected_tag_repo_pattern', ['repo_id', 'name_pattern'])
    .execute();

  // One row per allow-listed user or team (exactly one of the two ids is set).
  await withId(db.schema.createTable('protected_tag_whitelist'), dialect)
    .addColumn('tag_rule_id', 'bigint', (c) => c.notNull().references('protected_tag.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('team_id', 'bigint', (c) => c.references('team.id').onDelete('cascade'))
    .execute();
  await db.schema
    .createIndex('protected_tag_whitelist_rule')
    .on('protected_tag_whitelist')
    .column('tag_rule_id')
    .execute();
  await db.schema
    .createIndex('protected_tag_whitelist_user')
    .on('protected_tag_whitelist')
    .column('user_id')
    .execute();
  await db.schema
    .createIndex('protected_tag_whitelist_team')
    .on('protected_tag_whitelist')
    .column('team_id')
    .execute();
}
