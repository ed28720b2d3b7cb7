// Tables of the actions domain (see db/migrations/0012_actions.ts).
//
// Secrets and variables belong to an owner (a user or an organization: `owner_id`) or to a
// repository (`repo_id`); exactly one of the two is set. Runners and their registration tokens
// belong to an owner, a repository, or (neither set) to the whole instance.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface ActionSecretTable {
  id: Generated<number>;
  owner_id: number | null;
  repo_id: number | null;
  /** Upper case: letters, digits and `_`. */
  name: string;
  /** SecretBox ciphertext ("actions-secrets"); never returned. */
  data: string;
  created_unix: number;
  updated_unix: number;
}

export interface ActionVariableTable {
  id: Generated<number>;
  owner_id: number | null;
  repo_id: number | null;
  name: string;
  data: string;
  created_unix: number;
  updated_unix: number;
}

export interface ActionRunnerTokenTable {
  id: Generated<number>;
  owner_id: number | null;
  repo_id: number | null;
  /** SHA-256 of the token (hex), for looking it up when a runner registers. */
  token_hash: string;
  /** The token itself, SecretBox ciphertext ("actions-runner-registration"): shown again on request. */
  token: string;
  is_active: Generated<number>;
  created_unix: number;
}

export interface ActionRunnerTable {
  id: Generated<number>;
  uuid: string;
  name: string;
  owner_id: number | null;
  repo_id: number | null;
  /** SHA-256 of the runner's token (hex); the token is shown once, at registration. */
  token_hash: string;
  version: Generated<string>;
  /** JSON array of labels as declared ("name" or "name:scheme://..."). */
  labels: Generated<string>;
  last_online_unix: Generated<number>;
  last_active_unix: Generated<number>;
  /** Set by its managers on the runners page (migration 0046). */
  description: Generated<string>;
  created_unix: number;
  updated_unix: number;
}

export interface ActionRunTable {
  id: Generated<number>;
  repo_id: number;
  /** Per-repository run number, from 1. */
  run_number: number;
  /** The workflow file's name ("ci.yml"). */
  workflow_id: string;
  /** Path of the workflow file in the repository. */
  workflow_path: string;
  title: string;
  /** Who caused the run (-2 is the actions bot, which never does). */
  trigger_user_id: number;
  /** Full ref name ("refs/heads/main"). */
  ref: string;
  commit_sha: string;
  /** push, pull_request or workflow_dispatch. */
  event: string;
  /** The event payload (JSON) given to the jobs as github.event. */
  event_payload: string;
  status: string;
  started_unix: Generated<number>;
  stopped_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
  /** A pull_request run of a fork's branch: no secrets, and a writer approves it first. */
  is_fork_pull_request: Generated<number>;
  /** 1 while the run waits for a writer's approval (all its jobs blocked until approved_by is set). */
  need_approval: Generated<number>;
  approved_by: Generated<number>;
  /** `concurrency.group` as evaluated ('' for none): one run of a group at a time. */
  concurrency_group: Generated<string>;
  /** `concurrency.cancel-in-progress`: the run cancels the group's other runs when it is created. */
  concurrency_cancel: Generated<number>;
  /** Why the run failed before it had jobs (its workflow file is not valid); '' otherwise. */
  error: Generated<string>;
}

/** A cron spec of a workflow of the default branch, and when it fires next. */
export interface ActionScheduleTable {
  id: Generated<number>;
  repo_id: number;
  /** The workflow file's name ("nightly.yml"). */
  workflow_id: string;
  spec: string;
  next_unix: number;
  /** Who pushed the commit that scheduled it: the runs' trigger user. */
  trigger_user_id: number;
  created_unix: number;
}

export interface ActionRunJobTable {
  id: Generated<number>;
  run_id: number;
  repo_id: number;
  /** The job's key in the workflow (several jobs share it when a matrix expands it). */
  job_id: string;
  /** Display name (with the matrix values when expanded). */
  name: string;
  /** The workflow reduced to this one job, YAML: the task's workflow_payload. */
  workflow_payload: string;
  /** JSON array of the job keys this job needs. */
  needs: string;
  /** JSON array of runs-on labels. */
  runs_on: string;
  status: string;
  /** `strategy.max-parallel` of its matrix: at most this many of its siblings run at once (0: any). */
  max_parallel: Generated<number>;
  /** `strategy.fail-fast` (GitHub's default, true): a failed sibling of its matrix cancels it. */
  fail_fast: Generated<number>;
  /** The calls of reusable workflows the job is under (JSON CallFrame list; null: none). Migration 0074. */
  call_info: Generated<string | null>;
  /** Job-level `concurrency.group` as evaluated ('' for none). Migration 0078. */
  concurrency_group: Generated<string>;
  /** Its `cancel-in-progress`: it cancels the group's other jobs when it becomes ready. */
  concurrency_cancel: Generated<number>;
  /** `blocked` because another job of its group runs (job-concurrency.ts releases it). */
  concurrency_held: Generated<number>;
  /** The latest task that ran the job. */
  task_id: number | null;
  attempt: Generated<number>;
  started_unix: Generated<number>;
  stopped_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export interface ActionTaskTable {
  id: Generated<number>;
  job_id: number;
  run_id: number;
  repo_id: number;
  runner_id: number | null;
  attempt: number;
  status: string;
  /** SHA-256 (hex) of the job token while the task runs; null once it has stopped. */
  token_hash: string | null;
  token_last_eight: string;
  /** Rows of log received. */
  log_length: Generated<number>;
  /** Bytes of log content received. */
  log_size: Generated<number>;
  /** The runner said no more rows will come. */
  log_complete: Generated<number>;
  started_unix: Generated<number>;
  stopped_unix: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export interface ActionTaskOutputTable {
  task_id: number;
  output_key: string;
  output_value: string;
}

export interface ActionTaskLogTable {
  task_id: number;
  /** Row number in the task's log, from 0. */
  idx: number;
  /** Milliseconds since the epoch. */
  time_ms: number;
  content: string;
}

/** A workflow file a repository's writers disabled (migration 0056). */
export interface ActionWorkflowDisabledTable {
  repo_id: number;
  /** The workflow file's name ("ci.yml"), as action_run.workflow_id. */
  workflow_id: string;
  created_unix: number;
}

export interface ActionsTables {
  action_secret: ActionSecretTable;
  action_variable: ActionVariableTable;
  action_runner_token: ActionRunnerTokenTable;
  action_runner: ActionRunnerTable;
  action_run: ActionRunTable;
  action_run_job: ActionRunJobTable;
  action_task: ActionTaskTable;
  action_task_output: ActionTaskOutputTable;
  action_task_log: ActionTaskLogTable;
  action_workflow_disabled: ActionWorkflowDisabledTable;
  action_schedule: ActionScheduleTable;
}

export type KvRow = Selectable<ActionSecretTable>;
export type RunnerTokenRow = Selectable<ActionRunnerTokenTable>;
export type RunnerRow = Selectable<ActionRunnerTable>;
export type RunRow = Selectable<ActionRunTable>;
export type ScheduleRow = Selectable<ActionScheduleTable>;
export type JobRow = Selectable<ActionRunJobTable>;
export type TaskRow = Selectable<ActionTaskTable>;
export type NewJobRow = Insertable<ActionRunJobTable>;

/**
 * Whose secrets, variables or runners: an owner's (user or organization), a repository's, or —
 * for runners and their registration tokens only — the instance's (both null).
 */
export interface Scope {
  ownerId: number | null;
  repoId: number | null;
}

/** What a list of runs is narrowed to (GET .../actions/runs). */
export interface RunFilter {
  events?: string[] | undefined;
  statuses?: string[] | undefined;
  runNumber?: number | undefined;
  headSha?: string | undefined;
  /** The workflow file's name (the web page's `?workflow=`). */
  workflowId?: string | undefined;
  /** Full ref name ("refs/heads/main"). */
  ref?: string | undefined;
  triggerUserId?: number | undefined;
}

/** Statuses of runs, jobs and tasks that are final, as Forgejo names them. */
export const DONE_STATUSES = ['success', 'failure', 'cancelled', 'skipped'] as const;
export const isDone = (status: string): boolean => (DONE_STATUSES as readonly string[]).includes(status);

/**
 * The run's status from its jobs' (Forgejo's aggregation): all succeeded or skipped → success;
 * else any cancelled → cancelled; any failed → failure; any running, or some done and others
 * still to run → running; then waiting, blocked.
 */
export function aggregateStatus(statuses: string[]): string {
  if (statuses.length === 0) return 'success';
  if (statuses.every((s) => s === 'success' || s === 'skipped')) return 'success';
  for (const s of ['cancelled', 'failure', 'running']) {
    if (statuses.includes(s)) return s;
  }
  if (statuses.some((s) => s === 'success' || s === 'skipped')) return 'running';
  return statuses.includes('waiting') ? 'waiting' : 'blocked';
}
