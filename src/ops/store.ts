// The numbers operations read: a database ping, queue depths, and Forgejo's statistics counts.
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export async function ping(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Webhook deliveries not yet delivered, actions jobs waiting for a runner. */
export async function queueDepths(db: Db): Promise<{ webhook: number; actions: number }> {
  const [hooks, jobs] = await Promise.all([
    db
      .selectFrom('hook_task')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('is_delivered', '=', 0)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('action_run_job')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('status', '=', 'waiting')
      .executeTakeFirstOrThrow(),
  ]);
  return { webhook: Number(hooks.n), actions: Number(jobs.n) };
}

/** Forgejo's statistics (GetStatistic): rows of each kind, in one query. */
export async function counts(db: Db): Promise<Record<string, number>> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 0).as('users'),
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 1).as('organizations'),
      eb.selectFrom('repository').select(eb.fn.countAll().as('n')).as('repositories'),
      eb.selectFrom('issue').select(eb.fn.countAll().as('n')).as('issues'),
      eb.selectFrom('release').select(eb.fn.countAll().as('n')).as('releases'),
      eb.selectFrom('webhook').select(eb.fn.countAll().as('n')).as('webhooks'),
    ])
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}
