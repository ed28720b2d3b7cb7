// Job-level `concurrency:`: a job's group as evaluated when its run was created ('' for none),
// whether it cancels the group's other jobs (cancel-in-progress), and whether it is held
// (`blocked` while another job of the group runs; job-concurrency.ts releases it).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('action_run_job')
    .addColumn('concurrency_group', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute();
  for (const name of ['concurrency_cancel', 'concurrency_held']) {
    await db.schema
      .alterTable('action_run_job')
      .addColumn(name, 'smallint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .createIndex('action_run_job_concurrency')
    .on('action_run_job')
    .columns(['repo_id', 'concurrency_group'])
    .execute();
}
