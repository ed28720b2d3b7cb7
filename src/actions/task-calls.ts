// What RunnerService (runners.ts) asks of reusable workflows when a runner takes a job: the needs
// context of the job (reusable-task.ts: relative to its workflow, callers' outputs evaluated), and
// for a job a called workflow brought in, its inputs and secrets from its callers; a caller's `if`
// that is false skips the job, a value that cannot be had fails it with the reason in its log.
// And the strategy of a matrix of calls, where runners.ts applies a matrix job's: max-parallel
// (callHeld) and fail-fast (callFailFast).
import type { JsonObject } from '@bufbuild/protobuf';
import { nowUnix, type Db } from '../db/database.js';
import { ExpressionError, type Value } from './expressions.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import type { CallFrame } from './reusable.js';
import {
  callWaits,
  cancelledByCall,
  needsContext,
  parseFrames,
  payloadWithInputs,
  prefixOf,
  resolveFrames,
  type RunJobView,
} from './reusable-task.js';
import * as store from './store.js';
import type { JobRow } from './tables.js';
import { WorkflowError } from './workflow.js';

export function resultOf(status: string): Result {
  switch (status) {
    case 'success':
      return Result.SUCCESS;
    case 'failure':
      return Result.FAILURE;
    case 'cancelled':
      return Result.CANCELLED;
    case 'skipped':
      return Result.SKIPPED;
    default:
      return Result.UNSPECIFIED;
  }
}

/** A called job is not run: skipped (a caller's `if`), or failed with `message`. */
export class CallOutcome extends Error {
  constructor(
    readonly skip: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'CallOutcome';
  }
}

const labels = (json: string): string[] => {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

/** The jobs of a run with the outputs of their latest tasks. */
export async function runJobViews(db: Db, runId: number): Promise<RunJobView[]> {
  const jobs = await store.jobsOfRun(db, runId);
  const outputs = await store.outputsOf(
    db,
    jobs.map((j) => j.task_id).filter((id): id is number => id !== null),
  );
  return jobs.map((j) => ({
    job_id: j.job_id,
    status: j.status,
    outputs: (j.task_id ? outputs.get(j.task_id) : undefined) ?? {},
    frames: parseFrames(j.call_info),
  }));
}

/** The outputs and result of the jobs `job` needs, as a task carries them. */
export function taskNeeds(
  views: RunJobView[],
  job: JobRow,
): Record<string, { outputs: Record<string, string>; result: Result }> {
  const ctx = needsContext(views, labels(job.needs), prefixOf(job.job_id));
  return Object.fromEntries(
    Object.entries(ctx).map(([k, d]) => [k, { outputs: d.outputs, result: resultOf(d.result) }]),
  );
}

/**
 * The workflow and secrets of a job: its own for the run's jobs; for a called job, with the
 * inputs and secrets its callers give it. Throws CallOutcome when it does not run.
 */
export function calledJob(
  job: JobRow,
  views: RunJobView[],
  github: JsonObject,
  sv: { secrets: Record<string, string>; vars: Record<string, string> },
  event: JsonObject,
): { payload: string; secrets: Record<string, string> } {
  const frames = parseFrames(job.call_info);
  if (!frames.length) return { payload: job.workflow_payload, secrets: { ...sv.secrets } };
  const given = event['inputs'];
  const inputs =
    given && typeof given === 'object' && !Array.isArray(given) ? (given as Record<string, Value>) : {};
  try {
    const r = resolveFrames(
      frames,
      { github: github as Record<string, Value>, vars: sv.vars, secrets: sv.secrets, inputs },
      (keys, prefix) => needsContext(views, keys, prefix),
    );
    if (r.skip) throw new CallOutcome(true, 'skipped');
    return { payload: payloadWithInputs(job.workflow_payload, r.inputs), secrets: { ...r.secrets } };
  } catch (err) {
    if (err instanceof ExpressionError || err instanceof WorkflowError) {
      const caller = frames[frames.length - 1]!.caller;
      throw new CallOutcome(false, `the call of job ${caller} failed: ${err.message}`);
    }
    throw err;
  }
}

/** A called job that does not run: its task's log says why. */
export async function endCalledJob(db: Db, taskId: number, outcome: CallOutcome): Promise<void> {
  const content = outcome.skip ? 'Skipped: the condition (if) of its calling job is false' : outcome.message;
  await store.appendLogs(db, taskId, 0, [{ timeMs: Date.now(), content }]);
  await store.updateTask(db, taskId, {
    log_length: 1,
    log_size: Buffer.byteLength(content),
    log_complete: 1,
    updated_unix: nowUnix(),
  });
}

/** The call frames of jobs, read once per row. */
const framesOf = new WeakMap<JobRow, CallFrame[]>();
function frames(job: JobRow): CallFrame[] {
  let f = framesOf.get(job);
  if (!f) framesOf.set(job, (f = parseFrames(job.call_info)));
  return f;
}

/** Whether `job`, its needs met, waits for the max-parallel of a matrix of calls it is under. */
export function callHeld(job: JobRow, jobs: JobRow[]): boolean {
  if (!job.call_info) return false;
  return callWaits(
    frames(job),
    jobs.map((j) => ({ frames: frames(j), status: j.status })),
  );
}

/** Whether `job` is cancelled when `failed` fails: another call of a fail-fast matrix of calls. */
export const callFailFast = (failed: JobRow, job: JobRow): boolean =>
  failed.call_info !== null && job.call_info !== null && cancelledByCall(frames(failed), frames(job));
