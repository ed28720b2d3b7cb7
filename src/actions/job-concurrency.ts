// Job-level `concurrency:` (GitHub's rules), inside the caller's transaction. A job's group is
// evaluated when its run is created (run-create.ts) and kept on its row. When the job becomes
// ready (no needs left, its run not held):
// - with `cancel-in-progress`, the group's other jobs that have not ended are cancelled (running
//   ones through their tasks, ended by the caller once committed) and the job waits for a runner;
// - otherwise a job of the group still held is cancelled (the newest ready one replaces it), and the
//   job is held (`blocked`, concurrency_held) while another job of the group waits or runs.
// When a job of a group ends, releaseJobGroup makes the oldest held job of the group waiting.
import type { Tx } from '../db/database.js';
import * as store from './store.js';
import { aggregateStatus, isDone, type JobRow } from './tables.js';

/** What entering groups changed beyond the job itself: to act on once committed. */
export interface GroupEffects {
  /** Running tasks to end as cancelled. */
  cancelTasks: number[];
  /** Runs whose jobs changed (besides the caller's). */
  changedRuns: number[];
}

export const noEffects = (): GroupEffects => ({ cancelTasks: [], changedRuns: [] });

/** Which of the group's open jobs a job entering it cancels, and whether it must wait. */
export function decideEntry(
  cancelInProgress: boolean,
  others: Array<Pick<JobRow, 'id' | 'status' | 'concurrency_held'>>,
): { cancel: number[]; wait: boolean } {
  const cancel: number[] = [];
  let wait = false;
  for (const o of others) {
    if (isDone(o.status)) continue;
    const held = o.status === 'blocked' && o.concurrency_held === 1;
    if (o.status === 'blocked' && !held) continue;
    if (cancelInProgress || held) cancel.push(o.id);
    else wait = true;
  }
  return { cancel, wait };
}

/** The run takes its jobs' aggregate status (stopped when all ended). */
export async function refreshRun(tx: Tx, runId: number, now: number): Promise<void> {
  const jobs = await store.jobsOfRun(tx, runId);
  await store.updateRun(tx, runId, {
    status: aggregateStatus(jobs.map((j) => j.status)),
    updated_unix: now,
    ...(jobs.every((j) => isDone(j.status)) ? { stopped_unix: now } : {}),
  });
}

/**
 * The ready job `job` (of a group) enters it: cancels what it replaces and returns whether it may
 * wait for a runner (`waiting`) or is held. Sets the job's status either way.
 */
export async function enterJobGroup(tx: Tx, job: JobRow, now: number, fx: GroupEffects): Promise<boolean> {
  const others = await store.openJobsOfGroup(tx, job.repo_id, job.concurrency_group, job.id);
  const { cancel, wait } = decideEntry(job.concurrency_cancel === 1, others);
  for (const id of cancel) {
    const other = others.find((o) => o.id === id)!;
    if (other.status === 'running') {
      if (other.task_id) fx.cancelTasks.push(other.task_id);
      continue;
    }
    const moved = await store.moveJob(tx, other.id, other.status, {
      status: 'cancelled',
      concurrency_held: 0,
      stopped_unix: now,
      updated_unix: now,
    });
    if (moved && other.run_id !== job.run_id) {
      await refreshRun(tx, other.run_id, now);
      fx.changedRuns.push(other.run_id);
    }
  }
  const status = wait ? 'blocked' : 'waiting';
  await store.updateJob(tx, job.id, { status, concurrency_held: wait ? 1 : 0, updated_unix: now });
  job.status = status;
  job.concurrency_held = wait ? 1 : 0;
  return !wait;
}

/**
 * After a job of `group` ended (or was cancelled): the oldest held job of the group becomes
 * waiting unless another one waits or runs. Returns the run of the job released, or 0.
 */
export async function releaseJobGroup(tx: Tx, repoId: number, group: string, now: number): Promise<number> {
  if (!group) return 0;
  const open = await store.openJobsOfGroup(tx, repoId, group, 0);
  if (open.some((j) => j.status === 'waiting' || j.status === 'running')) return 0;
  const next = open.find((j) => j.status === 'blocked' && j.concurrency_held === 1);
  if (!next) return 0;
  const moved = await store.moveJob(tx, next.id, 'blocked', {
    status: 'waiting',
    concurrency_held: 0,
    updated_unix: now,
  });
  if (!moved) return 0;
  await refreshRun(tx, next.run_id, now);
  return next.run_id;
}

/** releaseJobGroup for every group the run's jobs belong to; returns the runs released. */
export async function releaseGroupsOfRun(tx: Tx, runId: number, now: number): Promise<number[]> {
  const jobs = await store.jobsOfRun(tx, runId);
  const out: number[] = [];
  for (const group of new Set(jobs.map((j) => j.concurrency_group).filter(Boolean))) {
    const released = await releaseJobGroup(tx, jobs[0]!.repo_id, group, now);
    if (released) out.push(released);
  }
  return out;
}
