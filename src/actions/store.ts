// Queries of the actions domain. No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type {
  ActionRunJobTable,
  ActionRunnerTable,
  ActionRunnerTokenTable,
  ActionRunTable,
  ActionSecretTable,
  ActionTaskTable,
} from './tables.js';
import { DONE_STATUSES } from './tables.js';
import type {
  KvRow,
  RunnerTokenRow,
  RunnerRow,
  RunRow,
  ScheduleRow,
  JobRow,
  TaskRow,
  NewJobRow,
  RunFilter,
  Scope,
} from './tables.js';

type Q = Db | Tx;

/** Secrets and variables share their shape; `table` says which. */
export type KvTable = 'action_secret' | 'action_variable';

// The two tables have the same columns: queries are typed against one of them.
const kv = (table: KvTable) => table as 'action_secret';

export function kvList(q: Q, table: KvTable, scope: Scope, limit: number, offset: number) {
  return paged(
    q
      .selectFrom(kv(table))
      .selectAll()
      .where('owner_id', scope.ownerId === null ? 'is' : '=', scope.ownerId)
      .where('repo_id', scope.repoId === null ? 'is' : '=', scope.repoId)
      .orderBy('name'),
    limit,
    offset,
  );
}

export function kvGet(q: Q, table: KvTable, scope: Scope, name: string): Promise<KvRow | undefined> {
  return q
    .selectFrom(kv(table))
    .selectAll()
    .where('owner_id', scope.ownerId === null ? 'is' : '=', scope.ownerId)
    .where('repo_id', scope.repoId === null ? 'is' : '=', scope.repoId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function kvInsert(q: Q, table: KvTable, row: Insertable<ActionSecretTable>): Promise<void> {
  await q.insertInto(kv(table)).values(row).execute();
}

export async function kvUpdate(
  q: Q,
  table: KvTable,
  id: number,
  patch: Updateable<ActionSecretTable>,
): Promise<void> {
  await q.updateTable(kv(table)).set(patch).where('id', '=', id).execute();
}

export async function kvDelete(q: Q, table: KvTable, id: number): Promise<void> {
  await q.deleteFrom(kv(table)).where('id', '=', id).execute();
}

/** The rows a job of `repo` sees: its owner's and its own (the caller lets the repository's win). */
export function kvForRepo(q: Q, table: KvTable, repo: { id: number; owner_id: number }): Promise<KvRow[]> {
  return q
    .selectFrom(kv(table))
    .selectAll()
    .where((eb) => eb.or([eb('owner_id', '=', repo.owner_id), eb('repo_id', '=', repo.id)]))
    .execute();
}

// Registration tokens

export function latestRunnerToken(q: Q, scope: Scope): Promise<RunnerTokenRow | undefined> {
  return q
    .selectFrom('action_runner_token')
    .selectAll()
    .where('owner_id', scope.ownerId === null ? 'is' : '=', scope.ownerId)
    .where('repo_id', scope.repoId === null ? 'is' : '=', scope.repoId)
    .where('is_active', '=', 1)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function insertRunnerToken(q: Q, row: Insertable<ActionRunnerTokenTable>): Promise<void> {
  await q.insertInto('action_runner_token').values(row).execute();
}

export function runnerTokenByHash(q: Q, hash: string): Promise<RunnerTokenRow | undefined> {
  return q.selectFrom('action_runner_token').selectAll().where('token_hash', '=', hash).executeTakeFirst();
}

// Runners

export async function insertRunner(q: Q, row: Insertable<ActionRunnerTable>): Promise<number> {
  return (await q.insertInto('action_runner').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function runnerByUuid(q: Q, uuid: string): Promise<RunnerRow | undefined> {
  return q.selectFrom('action_runner').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function runnerById(q: Q, id: number): Promise<RunnerRow | undefined> {
  return q.selectFrom('action_runner').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listRunners(q: Q, scope: Scope, limit: number, offset: number) {
  return paged(
    q
      .selectFrom('action_runner')
      .selectAll()
      .where('owner_id', scope.ownerId === null ? 'is' : '=', scope.ownerId)
      .where('repo_id', scope.repoId === null ? 'is' : '=', scope.repoId)
      .orderBy('id'),
    limit,
    offset,
  );
}

export async function updateRunner(q: Q, id: number, patch: Updateable<ActionRunnerTable>): Promise<void> {
  await q.updateTable('action_runner').set(patch).where('id', '=', id).execute();
}

export async function setRunnerDescription(q: Q, id: number, description: string): Promise<void> {
  await q.updateTable('action_runner').set({ description }).where('id', '=', id).execute();
}

export async function deleteRunner(q: Q, id: number): Promise<void> {
  await q.deleteFrom('action_runner').where('id', '=', id).execute();
}

/** Which of `ids` run a task right now. */
export async function busyRunners(q: Q, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await q
    .selectFrom('action_task')
    .select('runner_id')
    .distinct()
    .where('runner_id', 'in', ids)
    .where('status', '=', 'running')
    .execute();
  return new Set(rows.map((r) => r.runner_id!));
}

// Runs and jobs

export async function nextRunNumber(q: Q, repoId: number): Promise<number> {
  const r = await q
    .selectFrom('action_run')
    .select((eb) => eb.fn.max('run_number').as('n'))
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return Number(r?.n ?? 0) + 1;
}

export async function insertRun(q: Q, row: Insertable<ActionRunTable>): Promise<number> {
  return (await q.insertInto('action_run').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertJobs(q: Q, rows: NewJobRow[]): Promise<void> {
  if (rows.length) await q.insertInto('action_run_job').values(rows).execute();
}

export function runById(q: Q, id: number): Promise<RunRow | undefined> {
  return q.selectFrom('action_run').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function runsByIds(q: Q, ids: number[]): Promise<Map<number, RunRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('action_run').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export function listRuns(q: Q, repoId: number, f: RunFilter, limit: number, offset: number) {
  let s = q.selectFrom('action_run').selectAll().where('repo_id', '=', repoId);
  if (f.events?.length) s = s.where('event', 'in', f.events);
  if (f.statuses?.length) s = s.where('status', 'in', f.statuses);
  if (f.runNumber !== undefined) s = s.where('run_number', '=', f.runNumber);
  if (f.headSha) s = s.where('commit_sha', '=', f.headSha);
  if (f.workflowId) s = s.where('workflow_id', '=', f.workflowId);
  if (f.ref) s = s.where('ref', '=', f.ref);
  if (f.triggerUserId !== undefined) s = s.where('trigger_user_id', '=', f.triggerUserId);
  return paged(s.orderBy('run_number', 'desc'), limit, offset);
}

export async function updateRun(q: Q, id: number, patch: Updateable<ActionRunTable>): Promise<void> {
  await q.updateTable('action_run').set(patch).where('id', '=', id).execute();
}

export function jobsOfRun(q: Q, runId: number): Promise<JobRow[]> {
  return q.selectFrom('action_run_job').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}

export function listJobsOfRun(q: Q, runId: number, limit: number, offset: number) {
  return paged(
    q.selectFrom('action_run_job').selectAll().where('run_id', '=', runId).orderBy('id'),
    limit,
    offset,
  );
}

export function jobById(q: Q, id: number): Promise<JobRow | undefined> {
  return q.selectFrom('action_run_job').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateJob(q: Q, id: number, patch: Updateable<ActionRunJobTable>): Promise<void> {
  await q.updateTable('action_run_job').set(patch).where('id', '=', id).execute();
}

/** Moves a job from `from` to the values of `patch`; false when another request moved it first. */
export async function moveJob(
  q: Q,
  id: number,
  from: string,
  patch: Updateable<ActionRunJobTable>,
): Promise<boolean> {
  const r = await q
    .updateTable('action_run_job')
    .set(patch)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Waiting jobs, oldest first, that a runner of `scope` may take: a repository runner takes its
 * repository's, an owner's runner those of the owner's repositories, an instance runner any.
 */
export function waitingJobs(q: Q, scope: Scope, limit: number, afterId = 0): Promise<JobRow[]> {
  let s = q
    .selectFrom('action_run_job')
    .innerJoin('repository', 'repository.id', 'action_run_job.repo_id')
    .selectAll('action_run_job')
    .where('action_run_job.status', '=', 'waiting')
    .where('action_run_job.id', '>', afterId);
  if (scope.repoId !== null) s = s.where('action_run_job.repo_id', '=', scope.repoId);
  else if (scope.ownerId !== null) s = s.where('repository.owner_id', '=', scope.ownerId);
  return s.orderBy('action_run_job.id').limit(limit).execute();
}

// Tasks

export async function insertTask(q: Q, row: Insertable<ActionTaskTable>): Promise<number> {
  return (await q.insertInto('action_task').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function taskById(q: Q, id: number): Promise<TaskRow | undefined> {
  return q.selectFrom('action_task').selectAll().where('id', '=', id).executeTakeFirst();
}

export function taskByTokenHash(q: Q, hash: string): Promise<TaskRow | undefined> {
  return q.selectFrom('action_task').selectAll().where('token_hash', '=', hash).executeTakeFirst();
}

export async function updateTask(q: Q, id: number, patch: Updateable<ActionTaskTable>): Promise<void> {
  await q.updateTable('action_task').set(patch).where('id', '=', id).execute();
}

export async function tasksByIds(q: Q, ids: number[]): Promise<Map<number, TaskRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('action_task').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** The tasks of a repository, newest first, with their job and run. */
export function listTasks(q: Q, repoId: number, limit: number, offset: number) {
  return paged(
    q
      .selectFrom('action_task')
      .innerJoin('action_run_job', 'action_run_job.id', 'action_task.job_id')
      .innerJoin('action_run', 'action_run.id', 'action_task.run_id')
      .select([
        'action_task.id as id',
        'action_task.status as status',
        'action_task.created_unix as created_unix',
        'action_task.updated_unix as updated_unix',
        'action_run_job.name as job_name',
        'action_run.id as run_id',
        'action_run.run_number as run_number',
        'action_run.title as title',
        'action_run.event as event',
        'action_run.ref as ref',
        'action_run.commit_sha as commit_sha',
        'action_run.workflow_id as workflow_id',
        'action_run.started_unix as run_started_unix',
      ])
      .where('action_task.repo_id', '=', repoId)
      .orderBy('action_task.id', 'desc'),
    limit,
    offset,
  );
}

/** Running tasks not heard of since `before`. */
export function staleTasks(q: Q, before: number, limit: number): Promise<TaskRow[]> {
  return q
    .selectFrom('action_task')
    .selectAll()
    .where('status', '=', 'running')
    .where('updated_unix', '<', before)
    .orderBy('id')
    .limit(limit)
    .execute();
}

// Outputs and logs

/** Stores outputs a task has not sent before (the first value sent for a key stays). */
export async function addOutputs(q: Q, taskId: number, outputs: Array<[string, string]>): Promise<void> {
  if (outputs.length === 0) return;
  await q
    .insertInto('action_task_output')
    .values(outputs.map(([k, v]) => ({ task_id: taskId, output_key: k, output_value: v })))
    .onConflict((oc) => oc.columns(['task_id', 'output_key']).doNothing())
    .execute();
}

export async function outputsOf(q: Q, taskIds: number[]): Promise<Map<number, Record<string, string>>> {
  const out = new Map<number, Record<string, string>>();
  if (taskIds.length === 0) return out;
  const rows = await q.selectFrom('action_task_output').selectAll().where('task_id', 'in', taskIds).execute();
  for (const r of rows) {
    const o = out.get(r.task_id) ?? {};
    o[r.output_key] = r.output_value;
    out.set(r.task_id, o);
  }
  return out;
}

export async function outputKeys(q: Q, taskId: number): Promise<string[]> {
  const rows = await q
    .selectFrom('action_task_output')
    .select('output_key')
    .where('task_id', '=', taskId)
    .orderBy('output_key')
    .execute();
  return rows.map((r) => r.output_key);
}

export async function appendLogs(
  q: Q,
  taskId: number,
  first: number,
  rows: Array<{ timeMs: number; content: string }>,
): Promise<void> {
  // In slices: SQLite allows some thousands of bound values per statement.
  for (let i = 0; i < rows.length; i += 200) {
    await q
      .insertInto('action_task_log')
      .values(
        rows.slice(i, i + 200).map((r, j) => ({
          task_id: taskId,
          idx: first + i + j,
          time_ms: r.timeMs,
          content: r.content,
        })),
      )
      .execute();
  }
}

export function logsOf(q: Q, taskId: number) {
  return q
    .selectFrom('action_task_log')
    .select(['idx', 'time_ms', 'content'])
    .where('task_id', '=', taskId)
    .orderBy('idx')
    .execute();
}

// Disabled workflows

export async function disabledWorkflows(q: Q, repoId: number): Promise<Set<string>> {
  const rows = await q
    .selectFrom('action_workflow_disabled')
    .select('workflow_id')
    .where('repo_id', '=', repoId)
    .execute();
  return new Set(rows.map((r) => r.workflow_id));
}

export async function setWorkflowDisabled(q: Q, repoId: number, workflowId: string, disabled: boolean) {
  if (disabled) {
    await q
      .insertInto('action_workflow_disabled')
      .values({ repo_id: repoId, workflow_id: workflowId, created_unix: Math.floor(Date.now() / 1000) })
      .onConflict((oc) => oc.columns(['repo_id', 'workflow_id']).doNothing())
      .execute();
  } else {
    await q
      .deleteFrom('action_workflow_disabled')
      .where('repo_id', '=', repoId)
      .where('workflow_id', '=', workflowId)
      .execute();
  }
}

/** The newest run of a workflow, optionally on one ref and of one event (status badges). */
export function latestRunOf(
  q: Q,
  repoId: number,
  workflowId: string,
  ref: string | undefined,
  event: string | undefined,
): Promise<RunRow | undefined> {
  let s = q
    .selectFrom('action_run')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('workflow_id', '=', workflowId);
  if (ref) s = s.where('ref', '=', ref);
  if (event) s = s.where('event', '=', event);
  return s.orderBy('run_number', 'desc').limit(1).executeTakeFirst();
}

/** The workflow files that have runs in a repository (for the list's side when none is read). */
export async function runWorkflowIds(q: Q, repoId: number): Promise<string[]> {
  const rows = await q
    .selectFrom('action_run')
    .select('workflow_id')
    .distinct()
    .where('repo_id', '=', repoId)
    .execute();
  return rows.map((r) => r.workflow_id).sort();
}

/** Log rows of a task from row `from` on (at most `limit`). */
export function logsFrom(q: Q, taskId: number, from: number, limit: number) {
  return q
    .selectFrom('action_task_log')
    .select(['idx', 'time_ms', 'content'])
    .where('task_id', '=', taskId)
    .where('idx', '>=', from)
    .orderBy('idx')
    .limit(limit)
    .execute();
}

/** The rows of a task's log that start steps or report errors (the job page folds the log by them). */
export function logMarks(q: Q, taskId: number) {
  return q
    .selectFrom('action_task_log')
    .select(['idx', 'time_ms', 'content'])
    .where('task_id', '=', taskId)
    .where((eb) =>
      eb.or([
        eb('content', 'like', '\u2B52 %'),
        eb('content', 'like', '\u2B50 %'),
        eb('content', 'like', '::error::%'),
      ]),
    )
    .orderBy('idx')
    .execute();
}

// Concurrency groups

/** The runs of a repository's concurrency group that have not ended, oldest first. */
export function openRunsOfGroup(q: Q, repoId: number, group: string, exceptId: number): Promise<RunRow[]> {
  return q
    .selectFrom('action_run')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('concurrency_group', '=', group)
    .where('id', '!=', exceptId)
    .where('status', 'not in', [...DONE_STATUSES])
    .orderBy('id')
    .execute();
}

/** The jobs of a repository's job-level concurrency group that have not ended, oldest first. */
export function openJobsOfGroup(q: Q, repoId: number, group: string, exceptId: number): Promise<JobRow[]> {
  return q
    .selectFrom('action_run_job')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('concurrency_group', '=', group)
    .where('id', '!=', exceptId)
    .where('status', 'not in', [...DONE_STATUSES])
    .orderBy('id')
    .execute();
}

// Schedules

export function schedulesOf(q: Q, repoId: number): Promise<ScheduleRow[]> {
  return q.selectFrom('action_schedule').selectAll().where('repo_id', '=', repoId).execute();
}

export async function insertSchedules(q: Q, rows: Array<Omit<ScheduleRow, 'id'>>): Promise<void> {
  if (rows.length) await q.insertInto('action_schedule').values(rows).execute();
}

export async function deleteSchedules(q: Q, ids: number[]): Promise<void> {
  if (ids.length) await q.deleteFrom('action_schedule').where('id', 'in', ids).execute();
}

/** Schedules whose time has come, the earliest first. */
export function dueSchedules(q: Q, now: number, limit: number): Promise<ScheduleRow[]> {
  return q
    .selectFrom('action_schedule')
    .selectAll()
    .where('next_unix', '<=', now)
    .orderBy('next_unix')
    .limit(limit)
    .execute();
}

/** Moves a schedule's next time from `from` to `to`; false when another process did first. */
export async function claimSchedule(q: Q, id: number, from: number, to: number): Promise<boolean> {
  const r = await q
    .updateTable('action_schedule')
    .set({ next_unix: to })
    .where('id', '=', id)
    .where('next_unix', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
