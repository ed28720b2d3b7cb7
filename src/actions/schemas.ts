// JSON shapes of the actions API, as Forgejo's swagger names them (Secret, ActionVariable,
// RepoActionRun, ActionRunJob, ActionTask, DispatchWorkflowOption, RegistrationToken); runners
// follow Gitea's ActionRunner, which Forgejo's swagger does not describe.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { User, type UserJson } from '../users/schemas.js';
import type { JobRow, KvRow, RunnerRow, RunRow } from './tables.js';
import { labelName, parseLabels, RUNNER_OFFLINE_SECONDS } from './runners.js';

export const CreateOrUpdateSecretOption = Type.Object(
  { data: Type.String({ description: 'Data of the secret to update' }) },
  { title: 'CreateOrUpdateSecretOption' },
);

export const Secret = Type.Object(
  {
    name: Type.String({ description: "the secret's name" }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Secret', description: 'A secret: its value is never shown.' },
);

export const CreateVariableOption = Type.Object(
  { value: Type.String({ description: 'Value of the variable to create' }) },
  { title: 'CreateVariableOption' },
);

export const UpdateVariableOption = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'New name for the variable; empty keeps the name' })),
    value: Type.String({ description: 'Value of the variable to update' }),
  },
  { title: 'UpdateVariableOption' },
);

export const ActionVariable = Type.Object(
  {
    owner_id: Type.Integer({ description: 'the owner to which the variable belongs' }),
    repo_id: Type.Integer({ description: 'the repository to which the variable belongs' }),
    name: Type.String({ description: 'the name of the variable' }),
    data: Type.String({ description: 'the value of the variable' }),
  },
  { title: 'ActionVariable' },
);

export const RegistrationToken = Type.Object({ token: Type.String() }, { title: 'RegistrationToken' });

export const DispatchWorkflowOption = Type.Object(
  {
    ref: Type.String({ description: 'Git reference for the workflow' }),
    inputs: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'Input keys and values configured in the workflow file.',
      }),
    ),
    return_run_info: Type.Optional(
      Type.Boolean({ default: false, description: 'Flag to return the run info' }),
    ),
  },
  { title: 'DispatchWorkflowOption' },
);

export const DispatchWorkflowRun = Type.Object(
  {
    id: Type.Integer({ description: 'the workflow run id' }),
    run_number: Type.Integer({ description: 'a unique number for each run of a repository' }),
    jobs: Type.Array(Type.String(), { description: 'the jobs name' }),
  },
  { title: 'DispatchWorkflowRun' },
);

export const RepoActionRun = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    event: Type.String(),
    head_branch: Type.String(),
    head_sha: Type.String(),
    run_number: Type.Integer(),
    status: Type.String(),
    triggering_actor: Type.Union([User, Type.Null()]),
    url: Type.String(),
    workflow_id: Type.String(),
  },
  { title: 'RepoActionRun' },
);

export const ListRepoActionRunResponse = Type.Object(
  { total_count: Type.Integer(), workflow_runs: Type.Array(RepoActionRun) },
  { title: 'ListRepoActionRunResponse' },
);

export const ActionRunJob = Type.Object(
  {
    id: Type.Integer({ description: 'the action run job id' }),
    repo_id: Type.Integer({ description: 'the repository id' }),
    owner_id: Type.Integer({ description: 'the owner id' }),
    name: Type.String({ description: 'the action run job name' }),
    needs: Type.Array(Type.String(), { description: 'the action run job needed ids' }),
    runs_on: Type.Array(Type.String(), { description: 'the action run job labels to run on' }),
    task_id: Type.Integer({ description: 'the action run job latest task id' }),
    status: Type.String({ description: 'the action run job status' }),
  },
  { title: 'ActionRunJob' },
);

export const ActionTask = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    head_branch: Type.String(),
    head_sha: Type.String(),
    run_number: Type.Integer(),
    event: Type.String(),
    display_title: Type.String(),
    status: Type.String(),
    workflow_id: Type.String(),
    url: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    run_started_at: Type.String({ format: 'date-time' }),
  },
  { title: 'ActionTask' },
);

export const ActionTaskResponse = Type.Object(
  { total_count: Type.Integer(), workflow_runs: Type.Array(ActionTask) },
  { title: 'ActionTaskResponse' },
);

export const ActionRunnerLabel = Type.Object(
  { id: Type.Integer(), name: Type.String(), type: Type.String() },
  { title: 'ActionRunnerLabel' },
);

export const ActionRunner = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    status: Type.String({ description: 'offline, idle or active' }),
    busy: Type.Boolean(),
    ephemeral: Type.Boolean(),
    version: Type.String(),
    labels: Type.Array(ActionRunnerLabel),
  },
  { title: 'ActionRunner' },
);

export const ActionRunnersResponse = Type.Object(
  { runners: Type.Array(ActionRunner), total_count: Type.Integer() },
  { title: 'ActionRunnersResponse' },
);

export type RepoActionRunJson = Static<typeof RepoActionRun>;

export function toSecretJson(row: KvRow): Static<typeof Secret> {
  return { name: row.name, created_at: isoTime(row.created_unix) };
}

export function toVariableJson(row: KvRow): Static<typeof ActionVariable> {
  return { owner_id: row.owner_id ?? 0, repo_id: row.repo_id ?? 0, name: row.name, data: row.data };
}

const shortRef = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, '');

export interface RepoLinks {
  rootUrl: string;
  /** "owner/name", URL-encoded parts. */
  fullName: string;
  ownerId: number;
}

export function toRunJson(run: RunRow, links: RepoLinks, actor: UserJson | null): RepoActionRunJson {
  return {
    id: run.id,
    name: run.title,
    event: run.event,
    head_branch: shortRef(run.ref),
    head_sha: run.commit_sha,
    run_number: run.run_number,
    status: run.status,
    triggering_actor: actor,
    url: `${links.rootUrl}${links.fullName}/actions/runs/${run.run_number}`,
    workflow_id: run.workflow_id,
  };
}

export function toJobJson(job: JobRow, ownerId: number): Static<typeof ActionRunJob> {
  return {
    id: job.id,
    repo_id: job.repo_id,
    owner_id: ownerId,
    name: job.name,
    needs: parseLabels(job.needs),
    runs_on: parseLabels(job.runs_on),
    task_id: job.task_id ?? 0,
    status: job.status,
  };
}

export interface TaskListRow {
  id: number;
  status: string;
  created_unix: number;
  updated_unix: number;
  job_name: string;
  run_id: number;
  run_number: number;
  title: string;
  event: string;
  ref: string;
  commit_sha: string;
  workflow_id: string;
  run_started_unix: number;
}

export function toTaskJson(t: TaskListRow, links: RepoLinks): Static<typeof ActionTask> {
  return {
    id: t.id,
    name: t.job_name,
    head_branch: shortRef(t.ref),
    head_sha: t.commit_sha,
    run_number: t.run_number,
    event: t.event,
    display_title: t.title,
    status: t.status,
    workflow_id: t.workflow_id,
    url: `${links.rootUrl}${links.fullName}/actions/runs/${t.run_number}`,
    created_at: isoTime(t.created_unix),
    updated_at: isoTime(t.updated_unix),
    run_started_at: isoTime(t.run_started_unix),
  };
}

export function toRunnerJson(r: RunnerRow, busy: boolean, now: number): Static<typeof ActionRunner> {
  const online = now - r.last_online_unix < RUNNER_OFFLINE_SECONDS;
  return {
    id: r.id,
    name: r.name,
    status: !online ? 'offline' : busy ? 'active' : 'idle',
    busy,
    ephemeral: false,
    version: r.version,
    labels: parseLabels(r.labels).map((l) => ({ id: 0, name: labelName(l), type: 'custom' })),
  };
}
