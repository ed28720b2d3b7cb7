// Branch protection rules (with their user and team allow-lists) and commit statuses (with the
// per-commit counter that numbers them). Everything hangs off its repository with ON DELETE
// CASCADE, so deleting a repository removes its rules and statuses in the same statement.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

const FLAGS = [
  'enable_push',
  'enable_push_whitelist',
  'push_whitelist_deploy_keys',
  'enable_merge_whitelist',
  'enable_status_check',
  'enable_approvals_whitelist',
  'block_on_rejected_reviews',
  'block_on_official_review_requests',
  'block_on_outdated_branch',
  'dismiss_stale_approvals',
  'ignore_stale_approvals',
  'require_signed_commits',
  'apply_to_admins',
] as const;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  let rule = withId(db.schema.createTable('protected_branch'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    // A branch name or a glob over branch names; unique per repository (case-sensitive, as in Forgejo).
    .addColumn('rule_name', 'text', (c) => c.notNull());
  for (const flag of FLAGS) rule = rule.addColumn(flag, 'integer', (c) => c.notNull().defaultTo(0));
  await rule
    .addColumn('status_check_contexts', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('required_approvals', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('protected_file_patterns', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('unprotected_file_patterns', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    // Also the index for "the rules of a repository".
    .addUniqueConstraint('protected_branch_repo_rule', ['repo_id', 'rule_name'])
    .execute();

  // One row per allow-listed user or team of a rule: kind is push, merge or approvals. Deleting
  // the user or team removes it from every list.
  await withId(db.schema.createTable('protected_branch_whitelist'), dialect)
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('protected_branch.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('team_id', 'bigint', (c) => c.references('team.id').onDelete('cascade'))
    .execute();
  await db.schema
    .createIndex('protected_branch_whitelist_rule')
    .on('protected_branch_whitelist')
    .column('rule_id')
    .execute();
  await db.schema
    .createIndex('protected_branch_whitelist_user')
    .on('protected_branch_whitelist')
    .column('user_id')
    .execute();
  await db.schema
    .createIndex('protected_branch_whitelist_team')
    .on('protected_branch_whitelist')
    .column('team_id')
    .execute();

  // Statuses are numbered per (repository, commit) as in Forgejo: the number is the API's `id`.
  await withId(db.schema.createTable('commit_status'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('status_index', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('context', 'text', (c) => c.notNull().defaultTo(''))
    // A deleted creator leaves the status in place, without a creator.
    .addColumn('creator_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('commit_status_repo_sha')
    .on('commit_status')
    .columns(['repo_id', 'sha'])
    .execute();
  await db.schema
    .createIndex('commit_status_repo_sha_context')
    .on('commit_status')
    .columns(['repo_id', 'sha', 'context'])
    .execute();
  await db.schema
    .createIndex('commit_status_repo_sha_index')
    .on('commit_status')
    .columns(['repo_id', 'sha', 'status_index'])
    .unique()
    .execute();
  await db.schema.createIndex('commit_status_creator').on('commit_status').column('creator_id').execute();

  // The last number handed out per (repository, commit): incremented with one atomic upsert.
  await withId(db.schema.createTable('commit_status_index'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('max_index', 'bigint', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('commit_status_index_repo_sha', ['repo_id', 'sha'])
    .execute();
}
