// Reusable workflows (`workflow_call`): a job of a run that a called workflow brought in keeps the
// calls it is under (JSON of reusable.ts's CallFrame list, outermost first; null for the run's
// own jobs), read when a runner takes the job.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('action_run_job').addColumn('call_info', 'text').execute();
}
