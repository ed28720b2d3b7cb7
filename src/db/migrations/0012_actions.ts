// Actions: secrets and variables (of an owner or of a repository), runners and their registration
// tokens, workflow runs, their jobs, the tasks that run them (one per attempt), task outputs and
// log rows. Everything hangs off its repository or owner with ON DELETE CASCADE.
//
// Also the actions bot: a row of its own in `user` with the fixed id -2 (as Forgejo's actions
// user), of type 2 (neither a person nor an organization, so no list, search or sign-in ever
// finds it), so that what a job does with its job token (pushes, comments) has a poster that
// exists. Its name is reserved: nobody can create or rename an account to it.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await sql`INSERT INTO "user" (id, name, lower_name, full_name, email, lower_email, keep_email_private,
    type, visibility, is_active, prohibit_login, allow_create_organization, max_repo_creation,
    created_unix, updated_unix)
    VALUES (-2, 'anvil-actions', 'anvil-actions', 'Anvil Actions', 'anvil-actions@noreply.localhost',
    'anvil-actions@noreply.localhost', 1, 2, 0, 1, 0, 0, 0, ${now}, ${now})`.execute(db);

  // Secrets and variables: one of owner_id and repo_id is set; names are unique within each.
  for (const table of ['action_secret', 'action_variable']) {
    await withId(db.schema.createTable(table), dialect)
      .addColumn('owner_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
      .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_unix', 'bigint', (c) => c.notNull())
      .addColumn('updated_unix', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex(`${table}_owner_name`)
      .on(table)
      .columns(['owner_id', 'name'])
      .unique()
      .where(sql.ref('owner_id'), 'is not', null)
      .execute();
    await db.schema
      .createIndex(`${table}_repo_name`)
      .on(table)
      .columns(['repo_id', 'name'])
      .unique()
      .where(sql.ref('repo_id'), 'is not', null)
      .execute();
  }

  await withId(db.schema.createTable('action_runner_token'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('action_runner_token_scope')
    .on('action_runner_token')
    .columns(['owner_id', 'repo_id'])
    .execute();

  await withId(db.schema.createTable('action_runner'), dialect)
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('last_online_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_active_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('action_runner_owner').on('action_runner').column('owner_id').execute();
  await db.schema.createIndex('action_runner_repo').on('action_runner').column('repo_id').execute();

  await withId(db.schema.createTable('action_run'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('run_number', 'bigint', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('workflow_path', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('trigger_user_id', 'bigint', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('commit_sha', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('event_payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('stopped_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    // Also the index for "the runs of a repository, newest first".
    .addUniqueConstraint('action_run_repo_number', ['repo_id', 'run_number'])
    .execute();

  await withId(db.schema.createTable('action_run_job'), dialect)
    .addColumn('run_id', 'bigint', (c) => c.notNull().references('action_run.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('workflow_payload', 'text', (c) => c.notNull())
    .addColumn('needs', 'text', (c) => c.notNull())
    .addColumn('runs_on', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('task_id', 'bigint')
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('stopped_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('action_run_job_run').on('action_run_job').column('run_id').execute();
  // Runners look for waiting jobs.
  await db.schema
    .createIndex('action_run_job_status')
    .on('action_run_job')
    .columns(['status', 'id'])
    .execute();

  await withId(db.schema.createTable('action_task'), dialect)
    .addColumn('job_id', 'bigint', (c) => c.notNull().references('action_run_job.id').onDelete('cascade'))
    .addColumn('run_id', 'bigint', (c) => c.notNull())
    .addColumn('repo_id', 'bigint', (c) => c.notNull())
    .addColumn('runner_id', 'bigint', (c) => c.references('action_runner.id').onDelete('set null'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.unique())
    .addColumn('token_last_eight', 'text', (c) => c.notNull())
    .addColumn('log_length', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('log_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('log_complete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('stopped_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('action_task_job').on('action_task').column('job_id').execute();
  await db.schema.createIndex('action_task_repo').on('action_task').columns(['repo_id', 'id']).execute();
  await db.schema
    .createIndex('action_task_status')
    .on('action_task')
    .columns(['status', 'updated_unix'])
    .execute();

  await db.schema
    .createTable('action_task_output')
    .addColumn('task_id', 'bigint', (c) => c.notNull().references('action_task.id').onDelete('cascade'))
    .addColumn('output_key', 'text', (c) => c.notNull())
    .addColumn('output_value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_task_output_pk', ['task_id', 'output_key'])
    .execute();

  await db.schema
    .createTable('action_task_log')
    .addColumn('task_id', 'bigint', (c) => c.notNull().references('action_task.id').onDelete('cascade'))
    .addColumn('idx', 'bigint', (c) => c.notNull())
    .addColumn('time_ms', 'bigint', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_task_log_pk', ['task_id', 'idx'])
    .execute();
}
