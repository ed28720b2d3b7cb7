// Repositories, collaborators, team access and branch records.
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  let t: CreateTableBuilder<'repository', string> = withId(db.schema.createTable('repository'), dialect)
    // No cascade: an owner's repositories (and their directories) go through the purge, never silently.
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('lower_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('website', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('original_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('default_branch', 'text', (c) => c.notNull())
    .addColumn('fork_id', 'bigint')
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('object_format_name', 'text', (c) => c.notNull().defaultTo('sha1'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addColumn('archived_unix', 'bigint', (c) => c.notNull().defaultTo(0));
  for (const [col, d] of [
    ['is_private', 0],
    ['is_empty', 1],
    ['is_archived', 0],
    ['is_mirror', 0],
    ['is_fork', 0],
    ['is_template', 0],
    ['num_forks', 0],
    ['num_stars', 0],
    ['num_watches', 0],
    ['has_issues', 1],
    ['has_wiki', 1],
    ['has_pull_requests', 1],
    ['has_projects', 1],
    ['has_releases', 1],
    ['has_packages', 1],
    ['has_actions', 1],
  ] as const) {
    t = t.addColumn(col, 'integer', (c) => c.notNull().defaultTo(d));
  }
  await t.addUniqueConstraint('repository_owner_lower_name', ['owner_id', 'lower_name']).execute();
  await db.schema
    .createIndex('repository_private_updated')
    .on('repository')
    .columns(['is_private', 'updated_unix'])
    .execute();
  await db.schema.createIndex('repository_fork').on('repository').column('fork_id').execute();
  await db.schema.createIndex('repository_lower_name').on('repository').column('lower_name').execute();

  await withId(db.schema.createTable('collaboration'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('mode', 'integer', (c) => c.notNull().defaultTo(2))
    .addUniqueConstraint('collaboration_repo_user', ['repo_id', 'user_id'])
    .execute();
  await db.schema.createIndex('collaboration_user').on('collaboration').column('user_id').execute();

  await withId(db.schema.createTable('team_repo'), dialect)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('team_id', 'bigint', (c) => c.notNull().references('team.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addUniqueConstraint('team_repo_team_repo', ['team_id', 'repo_id'])
    .execute();
  await db.schema.createIndex('team_repo_repo').on('team_repo').column('repo_id').execute();

  await withId(db.schema.createTable('branch'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('commit_id', 'text', (c) => c.notNull())
    .addColumn('commit_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('commit_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pusher_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('branch_repo_name', ['repo_id', 'name'])
    .execute();
}
