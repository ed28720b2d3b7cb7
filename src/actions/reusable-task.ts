// The called side of reusable workflows (reusable.ts expanded them), when a runner takes a job:
// - `needs`: a job's needs context names its needs relative to its own workflow (a called job's
//   "build" is the run's "call/build"); the needs of its caller are not in it (they only order
//   it). A need that is a calling job has the called workflow's `outputs` (their `value`
//   expressions evaluated over the called jobs' outputs and results) and their aggregate result.
// - the calls it is under, outermost first: each caller's `if` (false: the job is skipped), its
//   `with:` over the inputs' defaults (typed as the inputs say), and its `secrets:` (inherit, or
//   the named ones evaluated over the caller's secrets) give the next level its inputs and
//   secrets; the job gets the innermost ones.
// - a matrix of calls (each combination one call, CallFrame.leg) keeps its caller's strategy, as
//   a matrix job's legs do (runners.ts): with max-parallel N, the jobs of a call not started wait
//   while N calls are under way (callWaits); with fail-fast, a job that fails cancels the jobs of
//   the other calls not ended (cancelledByCall).
// - `inputs` in the job's expressions (`inputs.x`, `inputs['x']`, `toJSON(inputs)`) is replaced
//   by literals of the values (reusable-inputs.ts), so a runner evaluates them without knowing of
//   calls; a boolean input is `true` or `false`, a number input a number.
import type * as Yaml from 'yaml';
import { lazyModule } from '../lazy.js';
import { bindContext, condition, ExpressionError, interpolate, type Value } from './expressions.js';
import { EMPTY, typed, withValue } from './reusable-inputs.js';
import type { CallFrame } from './reusable.js';
import { aggregateStatus, isDone } from './tables.js';

const yaml = lazyModule<typeof Yaml>('yaml');

export interface NeedData {
  outputs: Record<string, string>;
  result: string;
}

/** A job of the run as needs see it. */
export interface RunJobView {
  job_id: string;
  status: string;
  outputs: Record<string, string>;
  frames: CallFrame[];
}

/** The call frames kept on a job (its call_info column). */
export function parseFrames(json: string | null | undefined): CallFrame[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as CallFrame[]) : [];
  } catch {
    return [];
  }
}

/** The key prefix of the workflow a job (or caller) key is in: "" for the run's own. */
export const prefixOf = (key: string): string => key.slice(0, key.lastIndexOf('/') + 1);

const resultOf = (statuses: string[]) =>
  statuses.every((s) => s === 'skipped') ? 'skipped' : aggregateStatus(statuses);

/** The outputs and result of the run's job `key` (matrix legs merged), or of the calls of a caller. */
export function needData(jobs: RunJobView[], key: string): NeedData {
  const own = jobs.filter((j) => j.job_id === key);
  if (own.length) {
    const outputs: Record<string, string> = {};
    for (const j of own) Object.assign(outputs, j.outputs);
    return { outputs, result: resultOf(own.map((j) => j.status)) };
  }
  const under = jobs.filter((j) => j.job_id.startsWith(`${key}/`));
  if (!under.length) return { outputs: {}, result: 'skipped' };
  const frame = under.flatMap((j) => j.frames).find((f) => f.caller === key);
  const children = new Set(under.map((j) => j.job_id.slice(key.length + 1).split('/', 1)[0]!));
  const jobsCtx: Record<string, Value> = {};
  for (const c of children) jobsCtx[c] = { ...needData(jobs, `${key}/${c}`) };
  const outputs: Record<string, string> = {};
  for (const [name, expr] of Object.entries(frame?.outputs ?? {})) {
    try {
      outputs[name] = interpolate(expr, { contexts: { jobs: jobsCtx }, failed: false, cancelled: false });
    } catch {
      outputs[name] = '';
    }
  }
  return { outputs, result: resultOf(under.map((j) => j.status)) };
}

/** The needs context of a job of the workflow at `prefix` that needs the run's jobs `keys`. */
export function needsContext(jobs: RunJobView[], keys: string[], prefix: string): Record<string, NeedData> {
  const out: Record<string, NeedData> = {};
  for (const key of keys) {
    if (!key.startsWith(prefix) || key.slice(prefix.length).includes('/')) continue;
    out[key.slice(prefix.length)] = needData(jobs, key);
  }
  return out;
}

export interface CallBase {
  github: Record<string, Value>;
  vars: Record<string, string>;
  secrets: Record<string, string>;
  /** The inputs of the run's own workflow (a dispatch's). */
  inputs: Record<string, Value>;
}

export type CallResolution =
  { skip: true } | { skip: false; inputs: Record<string, Value>; secrets: Record<string, string> };

/**
 * The inputs and secrets a job gets from the calls it is under (outermost first), or skip when a
 * caller's `if` is false. Throws ExpressionError or WorkflowError for a value that cannot be had.
 */
export function resolveFrames(
  frames: CallFrame[],
  base: CallBase,
  needsOf: (keys: string[], prefix: string) => Record<string, NeedData>,
): CallResolution {
  let inputs = base.inputs;
  let secrets = base.secrets;
  for (const frame of frames) {
    const needs = needsOf(frame.needs, prefixOf(frame.caller));
    const contexts: Record<string, Value> = {
      github: base.github,
      vars: base.vars,
      inputs,
      matrix: (frame.matrix ?? {}) as Value,
      needs: needs as unknown as Value,
    };
    const ctx = { contexts, failed: false, cancelled: false };
    if (frame.if && !condition(frame.if, ctx)) return { skip: true };
    const next: Record<string, Value> = {};
    for (const [name, spec] of Object.entries(frame.inputs)) {
      const raw = Object.hasOwn(frame.with, name) ? frame.with[name] : spec.default;
      if (raw === undefined) {
        next[name] = EMPTY[spec.type] ?? '';
        continue;
      }
      next[name] = typed(withValue(raw, ctx), spec.type, name);
    }
    if (frame.secrets !== 'inherit') {
      const scope = { ...ctx, contexts: { ...contexts, secrets } };
      const named: Record<string, string> = {};
      for (const [k, expr] of Object.entries(frame.secrets)) named[k] = interpolate(expr, scope);
      secrets = named;
    }
    inputs = next;
  }
  return { skip: false, inputs, secrets };
}

/** An expression with the `inputs` context (outside its string literals) replaced by the values. */
export function exprWithInputs(expr: string, inputs: Record<string, Value>): string {
  try {
    return bindContext(expr, 'inputs', inputs);
  } catch (err) {
    // One that cannot be read is left as it is: the runner says why.
    if (err instanceof ExpressionError) return expr;
    throw err;
  }
}

/** A job's workflow (YAML) with its `inputs.x` references replaced by the values. */
export function payloadWithInputs(payload: string, inputs: Record<string, Value>): string {
  const inText = (s: string) =>
    s.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => `\${{${exprWithInputs(e, inputs)}}}`);
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') {
      // A bare `if:` condition is an expression without `${{ }}`.
      return key === 'if' && !v.includes('${{') ? exprWithInputs(v, inputs) : inText(v);
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, ''));
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    }
    return v;
  };
  const doc = yaml().parse(payload) as unknown;
  return yaml().stringify(walk(doc, ''), { aliasDuplicateObjects: false });
}

/** A job of a run as a matrix of calls sees it. */
export interface CallJobState {
  frames: CallFrame[];
  status: string;
}

/** The calls of the caller of `frames[k]` in the call (outer frames, with their legs) it is in. */
const callerKey = (frames: CallFrame[], k: number): string =>
  JSON.stringify(frames.slice(0, k + 1).map((f, i) => (i < k ? [f.caller, f.leg ?? -1] : [f.caller])));

/**
 * Whether a called job whose needs are met waits: under a matrix of calls with max-parallel N,
 * its call has not started (none of its jobs left `blocked`) while N others are under way
 * (started, not all of their jobs done). `jobs` are the run's jobs (it among them or not).
 */
export function callWaits(frames: CallFrame[], jobs: CallJobState[]): boolean {
  for (let k = 0; k < frames.length; k++) {
    const f = frames[k]!;
    if (!f.maxParallel || f.leg === undefined) continue;
    const key = callerKey(frames, k);
    const legs = new Map<number, string[]>();
    for (const j of jobs) {
      if (j.frames.length <= k || callerKey(j.frames, k) !== key) continue;
      const leg = j.frames[k]!.leg ?? -1;
      legs.set(leg, [...(legs.get(leg) ?? []), j.status]);
    }
    const underWay = (s: string[]) => s.some((x) => x !== 'blocked') && !s.every(isDone);
    if (underWay(legs.get(f.leg) ?? [])) continue;
    if ([...legs.values()].filter(underWay).length >= f.maxParallel) return true;
  }
  return false;
}

/** Whether a job under `other` is of another call of a fail-fast matrix of calls that `failed` is under. */
export function cancelledByCall(failed: CallFrame[], other: CallFrame[]): boolean {
  return failed.some(
    (f, k) =>
      f.failFast === true &&
      f.leg !== undefined &&
      other.length > k &&
      other[k]!.leg !== f.leg &&
      callerKey(other, k) === callerKey(failed, k),
  );
}
