// Creating runs, inside the caller's transaction: the run rows with their jobs (a job that needs
// others starts `blocked`), and what a run's place in its world holds back:
// - a pull request run from a fork that needs a writer's approval has every job `blocked` (so the
//   run is `blocked`) until RunControl.approve;
// - `concurrency:` (GitHub's rules, workflow level): the group is evaluated with the github and
//   inputs contexts; with `cancel-in-progress` the group's other runs are cancelled, otherwise the
//   group's pending (held) runs are cancelled and the new run is held while another of the group
//   is under way. RunnerService.releaseGroup starts the held run when the group's run ends.
// - job-level `concurrency:` (job-concurrency.ts): each job's group is evaluated here (github,
//   inputs and matrix), and the jobs ready at once enter their group.
// A held run is one whose jobs are all `blocked`.
import { nowUnix, type Tx } from '../db/database.js';
import type { RepoRow } from '../repos/tables.js';
import { ExpressionError, interpolate, type Value } from './expressions.js';
import { aggregateStatus, isDone, type RunRow } from './tables.js';
import * as store from './store.js';
import type { RunJob } from './reusable.js';
import type { CreationBase } from './reusable-inputs.js';
import { callWaits, type CallJobState } from './reusable-task.js';
import type { Concurrency, Workflow } from './workflow.js';
import { enterJobGroup, refreshRun } from './job-concurrency.js';

export interface WorkflowFile {
  /** Path in the repository. */
  path: string;
  /** File name: the workflow's id in the API ("ci.yml"). */
  name: string;
  content: string;
}

export interface RunEvent {
  event: 'push' | 'pull_request' | 'workflow_dispatch' | 'schedule';
  ref: string;
  sha: string;
  triggerUserId: number;
  title: string;
  payload: Record<string, unknown>;
  /** A pull request of a fork's branch (no secrets reach its jobs). */
  fork?: boolean;
  /** Its jobs wait for a writer's approval. */
  needApproval?: boolean;
}

export interface CreatedRun {
  run: RunRow;
  jobs: Array<{ name: string }>;
}

export interface InsertedRuns {
  created: CreatedRun[];
  /** Running tasks of runs that cancel-in-progress cancelled: to end once committed. */
  cancelTasks: number[];
  /** Runs cancelled (changed) besides the created ones. */
  changedRuns: number[];
}

/** What is known of a run before it is made: its github context (no run ids) and a dispatch's inputs. */
export function creationBase(ev: RunEvent, repoFullName: string): CreationBase {
  const pull = ev.payload['pull_request'] as { head?: { ref?: string }; base?: { ref?: string } } | undefined;
  const github: Record<string, Value> = {
    ref: ev.ref,
    ref_name: ev.ref.replace(/^refs\/(heads|tags)\//, ''),
    sha: ev.sha,
    event_name: ev.event,
    event: ev.payload as Value,
    repository: repoFullName,
    repository_owner: repoFullName.split('/')[0] ?? '',
    head_ref: pull?.head?.ref ?? '',
    base_ref: pull?.base?.ref ?? '',
  };
  return { github, inputs: (ev.payload['inputs'] ?? {}) as Record<string, Value> };
}

/** The `concurrency.group` of a run, its expressions evaluated ('' for none); at most 255 characters. */
export function groupOf(
  wf: Workflow,
  ev: RunEvent,
  repoFullName: string,
  run: { id: number; run_number: number },
  c: Concurrency | undefined = wf.concurrency,
): string {
  if (!c) return '';
  const base = creationBase(ev, repoFullName);
  const github: Record<string, Value> = {
    ...base.github,
    workflow: wf.name,
    run_id: String(run.id),
    run_number: String(run.run_number),
  };
  const inputs = base.inputs;
  let group: string;
  try {
    group = interpolate(c.group, { contexts: { github, inputs }, failed: false, cancelled: false });
  } catch (err) {
    if (!(err instanceof ExpressionError)) throw err;
    group = c.group;
  }
  return group.trim().slice(0, 255);
}

/** A workflow file to run, or one that could not be read (its run fails at once, saying why). */
export type RunItem =
  { file: WorkflowFile; wf: Workflow; jobs?: RunJob[] } | { file: WorkflowFile; error: string };

export async function insertRuns(
  tx: Tx,
  repo: RepoRow,
  repoFullName: string,
  items: RunItem[],
  ev: RunEvent,
): Promise<InsertedRuns> {
  const now = nowUnix();
  let number = await store.nextRunNumber(tx, repo.id);
  const out: InsertedRuns = { created: [], cancelTasks: [], changedRuns: [] };
  for (const item of items) {
    const { file } = item;
    if ('error' in item) {
      out.created.push(await insertInvalidRun(tx, repo, file, ev, item.error, number++, now));
      continue;
    }
    const { wf } = item;
    const jobs = item.jobs ?? wf.jobs.map((j) => ({ ...j, frames: [] }));
    const held = ev.needApproval === true;
    const runNumber = number++;
    const runId = await store.insertRun(tx, {
      repo_id: repo.id,
      run_number: runNumber,
      workflow_id: file.name,
      workflow_path: file.path,
      title: ev.title.slice(0, 255),
      trigger_user_id: ev.triggerUserId,
      ref: ev.ref,
      commit_sha: ev.sha,
      event: ev.event,
      event_payload: JSON.stringify(ev.payload),
      status: held ? 'blocked' : 'waiting',
      created_unix: now,
      updated_unix: now,
      is_fork_pull_request: ev.fork ? 1 : 0,
      need_approval: held ? 1 : 0,
    });
    // Of a matrix with max-parallel N, the first N wait; the others start as those end. So do
    // the calls of a matrix of calls (reusable-task.ts).
    const started = new Map<string, number>();
    const calls: CallJobState[] = [];
    await store.insertJobs(
      tx,
      jobs.map((j) => {
        let status = held || j.needs.length ? 'blocked' : 'waiting';
        if (status === 'waiting' && j.maxParallel > 0) {
          const n = started.get(j.jobId) ?? 0;
          if (n >= j.maxParallel) status = 'blocked';
          else started.set(j.jobId, n + 1);
        }
        if (status === 'waiting' && callWaits(j.frames, calls)) status = 'blocked';
        if (j.frames.length) calls.push({ frames: j.frames, status });
        return {
          run_id: runId,
          repo_id: repo.id,
          job_id: j.jobId,
          name: j.name.slice(0, 255),
          workflow_payload: j.payload,
          needs: JSON.stringify(j.needs),
          runs_on: JSON.stringify(j.runsOn),
          status,
          max_parallel: j.maxParallel,
          fail_fast: j.failFast ? 1 : 0,
          call_info: j.frames.length ? JSON.stringify(j.frames) : null,
          concurrency_group: groupOf(
            wf,
            ev,
            repoFullName,
            { id: runId, run_number: runNumber },
            j.concurrency,
          ),
          concurrency_cancel: j.concurrency?.cancelInProgress ? 1 : 0,
          created_unix: now,
          updated_unix: now,
        };
      }),
    );
    const group = groupOf(wf, ev, repoFullName, { id: runId, run_number: runNumber });
    if (group) {
      const cancel = wf.concurrency!.cancelInProgress;
      await store.updateRun(tx, runId, { concurrency_group: group, concurrency_cancel: cancel ? 1 : 0 });
      await enterGroup(tx, repo.id, runId, group, cancel, now, out);
    }
    // Job-level groups: the jobs ready now enter theirs (the others when they become ready).
    let entered = false;
    for (const job of await store.jobsOfRun(tx, runId)) {
      if (job.status !== 'waiting' || !job.concurrency_group) continue;
      await enterJobGroup(tx, job, now, out);
      entered = true;
    }
    if (entered) await refreshRun(tx, runId, now);
    out.created.push({
      run: (await store.runById(tx, runId))!,
      jobs: jobs.map((j) => ({ name: j.name })),
    });
  }
  return out;
}

/** The run of a workflow file that is not valid: failed from the start, without jobs, with the reason. */
async function insertInvalidRun(
  tx: Tx,
  repo: RepoRow,
  file: WorkflowFile,
  ev: RunEvent,
  error: string,
  runNumber: number,
  now: number,
): Promise<CreatedRun> {
  const runId = await store.insertRun(tx, {
    repo_id: repo.id,
    run_number: runNumber,
    workflow_id: file.name,
    workflow_path: file.path,
    title: ev.title.slice(0, 255),
    trigger_user_id: ev.triggerUserId,
    ref: ev.ref,
    commit_sha: ev.sha,
    event: ev.event,
    event_payload: JSON.stringify(ev.payload),
    status: 'failure',
    created_unix: now,
    updated_unix: now,
    started_unix: now,
    stopped_unix: now,
    error: error.slice(0, 1000),
  });
  return { run: (await store.runById(tx, runId))!, jobs: [] };
}

/** The new run `runId` joins `group`: cancels what it replaces, and waits while another runs. */
async function enterGroup(
  tx: Tx,
  repoId: number,
  runId: number,
  group: string,
  cancelInProgress: boolean,
  now: number,
  out: InsertedRuns,
): Promise<void> {
  const others = await store.openRunsOfGroup(tx, repoId, group, runId);
  let busy = false;
  for (const other of others) {
    if (cancelInProgress || other.status === 'blocked') {
      out.cancelTasks.push(...(await cancelRun(tx, other.id, now)));
      out.changedRuns.push(other.id);
    } else {
      busy = true;
    }
  }
  if (busy) await hold(tx, runId, now);
}

/** Every job of the run `blocked` (and so the run): it waits for its group. */
async function hold(tx: Tx, runId: number, now: number): Promise<void> {
  for (const job of await store.jobsOfRun(tx, runId)) {
    if (job.status === 'waiting') await store.updateJob(tx, job.id, { status: 'blocked', updated_unix: now });
  }
  await store.updateRun(tx, runId, { status: 'blocked', updated_unix: now });
}

/**
 * Cancels a run's jobs that have not started; returns the tasks of its running jobs (ended as
 * cancelled by the caller once committed, as RunControl.cancel does).
 */
export async function cancelRun(tx: Tx, runId: number, now: number): Promise<number[]> {
  const jobs = await store.jobsOfRun(tx, runId);
  const tasks: number[] = [];
  for (const job of jobs) {
    if (job.status === 'waiting' || job.status === 'blocked') {
      const moved = await store.moveJob(tx, job.id, job.status, {
        status: 'cancelled',
        stopped_unix: now,
        updated_unix: now,
      });
      if (moved) job.status = 'cancelled';
    } else if (job.status === 'running' && job.task_id) {
      tasks.push(job.task_id);
    }
  }
  await store.updateRun(tx, runId, {
    status: aggregateStatus(jobs.map((j) => j.status)),
    updated_unix: now,
    ...(jobs.every((j) => isDone(j.status)) ? { stopped_unix: now } : {}),
  });
  return tasks;
}
