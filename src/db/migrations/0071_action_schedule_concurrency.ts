// Scheduled workflows (`on.schedule`): one row per cron spec of a workflow file of the default
// branch, with the next time it fires; every node's scheduler claims a due row by moving its
// next_unix on (a compare-and-set), so each time fires once across nodes. And on runs, as Forgejo
// names them: a pull request run from a fork waits for a writer's approval (need_approval,
// approved_by; is_fork_pull_request keeps secrets from it), and a run's concurrency group
// (concurrency_group, concurrency_cancel) holds it while another of the group runs. On jobs, their
// matrix's strategy: max_parallel (0: no limit) and fail_fast (1 by default, as GitHub).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('action_schedule'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('workflow_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('spec', 'varchar(255)', (c) => c.notNull())
    .addColumn('next_unix', 'bigint', (c) => c.notNull())
    .addColumn('trigger_user_id', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('action_schedule_repo_workflow_spec', ['repo_id', 'workflow_id', 'spec'])
    .execute();
  await db.schema.createIndex('action_schedule_next').on('action_schedule').column('next_unix').execute();
  for (const [name, type] of [
    ['is_fork_pull_request', 'smallint'],
    ['need_approval', 'smallint'],
    ['approved_by', 'bigint'],
    ['concurrency_cancel', 'smallint'],
  ] as const) {
    await db.schema
      .alterTable('action_run')
      .addColumn(name, type, (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable('action_run')
    .addColumn('concurrency_group', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute();
  // Why a run failed before it had jobs (a workflow file that is not valid).
  await db.schema
    .alterTable('action_run')
    .addColumn('error', 'varchar(1000)', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('action_run_job')
    .addColumn('max_parallel', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('action_run_job')
    .addColumn('fail_fast', 'smallint', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createIndex('action_run_concurrency')
    .on('action_run')
    .columns(['repo_id', 'concurrency_group'])
    .execute();
}
