// The inputs of a called workflow (`on.workflow_call.inputs`) as an expression context:
// - their values: a calling job's `with:` over the defaults, evaluated in its contexts and typed
//   as the inputs say (a boolean input is true or false, a number one a number);
// - when the run is created, the inputs known then (those that need neither needs, secrets nor
//   vars) are read where the server reads the called workflow: a job's `runs-on`, `strategy`
//   (matrix, max-parallel, fail-fast), `name` and `concurrency`;
// - when a runner takes a called job (reusable-task.ts), `inputs` in its expressions is replaced
//   by literals of the values, so that any runner evaluates them without knowing of calls.
// Pure logic: no database, no git.
import type * as Yaml from 'yaml';
import { lazyModule } from '../lazy.js';
import {
  bindContext,
  contextRefs,
  evaluate,
  ExpressionError,
  interpolate,
  show,
  type ExprContext,
  type Value,
} from './expressions.js';
import { parseWorkflow, WorkflowError, type CallSpec, type JobCall, type Workflow } from './workflow.js';

const yaml = lazyModule<typeof Yaml>('yaml');

const WHOLE = /^\s*\$\{\{([\s\S]*)\}\}\s*$/;
const EXPR = /\$\{\{([\s\S]*?)\}\}/g;

/** An input's value as its type says; throws WorkflowError for one that is not of it. */
export function typed(v: Value, type: string, name: string): Value {
  if (type === 'boolean') {
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    throw new WorkflowError(`input "${name}" must be a boolean, not "${show(v)}"`);
  }
  if (type === 'number') {
    const n = typeof v === 'number' ? v : v === '' || v === null ? NaN : Number(v);
    if (!Number.isFinite(n)) throw new WorkflowError(`input "${name}" must be a number, not "${show(v)}"`);
    return n;
  }
  return show(v);
}

/** The value of an input not given and without default. */
export const EMPTY: Record<string, Value> = { string: '', number: 0, boolean: false };

/** A `with:` value (or default): a `${{ }}` that is the whole of it keeps its value's type. */
export function withValue(raw: string | number | boolean, ctx: ExprContext): Value {
  if (typeof raw !== 'string' || !raw.includes('${{')) return raw;
  const whole = WHOLE.exec(raw);
  return whole && !whole[1]!.includes('}}') ? evaluate(whole[1]!, ctx) : interpolate(raw, ctx);
}

/** What is known of a run when it is created: its github context (run ids aside), a dispatch's inputs. */
export interface CreationBase {
  github: Record<string, Value>;
  inputs: Record<string, Value>;
}

/** Whether every context `expr` reads is known: matrix, the `known` inputs, keys of `github`. */
function readsKnown(
  expr: string,
  github: Record<string, Value>,
  known: Record<string, Value>,
  matrix: boolean,
) {
  return contextRefs(expr).every(
    (r) =>
      (r.name === 'matrix' && matrix) ||
      (r.name === 'github' && r.key !== undefined && Object.hasOwn(github, r.key)) ||
      (r.name === 'inputs' && r.key !== undefined && Object.hasOwn(known, r.key)),
  );
}

/**
 * The inputs of a call known when the run is created: those whose `with:` (or default) reads only
 * the matrix, the github context and known inputs of the calling workflow. The others are had
 * when a runner takes the job (resolveFrames), as are the ones that cannot be evaluated here.
 */
export function knownInputs(
  call: JobCall,
  spec: CallSpec,
  outer: Record<string, Value>,
  base: CreationBase,
): Record<string, Value> {
  const out: Record<string, Value> = {};
  const ctx: ExprContext = {
    contexts: { github: base.github, inputs: outer, matrix: (call.matrix ?? {}) as Value },
    failed: false,
    cancelled: false,
  };
  for (const [name, input] of Object.entries(spec.inputs)) {
    const raw = Object.hasOwn(call.with, name) ? call.with[name] : input.default;
    if (raw === undefined) {
      out[name] = EMPTY[input.type] ?? '';
      continue;
    }
    try {
      const exprs = typeof raw === 'string' ? [...raw.matchAll(EXPR)].map((m) => m[1]!) : [];
      if (!exprs.every((e) => readsKnown(e, base.github, outer, call.matrix !== undefined))) continue;
      out[name] = typed(withValue(raw, ctx), input.type, name);
    } catch (err) {
      if (!(err instanceof ExpressionError || err instanceof WorkflowError)) throw err;
    }
  }
  return out;
}

/** The keys of a job the server reads when the run is created. */
const SERVER_KEYS = ['runs-on', 'strategy', 'name', 'concurrency'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The workflow (`content` at `path`; a called one, or a dispatched one) with the expressions of
 * `inputs` (named `names`, with the `known` values) in its jobs' runs-on, strategy, name and
 * concurrency evaluated (with the github context): a whole-value expression keeps its type (a
 * matrix list from fromJSON). `wf` itself when they have none. Throws WorkflowError for one
 * that reads an input known only when the job runs.
 */
export function withKnownInputs(
  content: string,
  path: string,
  wf: Workflow,
  names: readonly string[],
  known: Record<string, Value>,
  base: CreationBase,
): Workflow {
  const doc = yaml().parse(content, { maxAliasCount: 100 }) as unknown;
  const jobs = isObj(doc) && isObj(doc['jobs']) ? doc['jobs'] : undefined;
  if (!jobs) return wf;
  let changed = false;
  const ctx: ExprContext = { contexts: { github: base.github }, failed: false, cancelled: false };
  const one = (expr: string, where: string): { expr: string; value?: Value } => {
    let refs;
    try {
      refs = contextRefs(expr);
    } catch {
      return { expr };
    }
    const inputs = refs.filter((r) => r.name === 'inputs');
    if (!inputs.length) return { expr };
    for (const r of inputs) {
      if (r.key === undefined ? names.some((k) => !Object.hasOwn(known, k)) : !Object.hasOwn(known, r.key)) {
        throw new WorkflowError(
          `${where} reads inputs${r.key === undefined ? '' : `.${r.key}`}, which is had only when the job runs (its value reads needs, secrets or vars); Anvil reads ${where} when the run is created`,
        );
      }
    }
    changed = true;
    const bound = bindContext(expr, 'inputs', known);
    if (!readsKnown(bound, base.github, {}, false)) return { expr: bound };
    try {
      return { expr: bound, value: evaluate(bound, ctx) };
    } catch (err) {
      if (err instanceof ExpressionError) throw new WorkflowError(`${where}: ${err.message}`);
      throw err;
    }
  };
  const walk = (v: unknown, where: string): unknown => {
    if (typeof v === 'string' && v.includes('${{')) {
      const whole = WHOLE.exec(v);
      if (whole && !whole[1]!.includes('}}')) {
        const r = one(whole[1]!, where);
        return 'value' in r ? r.value : `\${{${r.expr}}}`;
      }
      return v.replace(EXPR, (_, e: string) => {
        const r = one(e, where);
        return 'value' in r ? show(r.value) : `\${{${r.expr}}}`;
      });
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, where));
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, where)]));
    return v;
  };
  for (const [id, job] of Object.entries(jobs)) {
    if (!isObj(job)) continue;
    for (const key of SERVER_KEYS) {
      if (key in job) job[key] = walk(job[key], `jobs.${id}.${key}`);
    }
  }
  if (!changed) return wf;
  try {
    return parseWorkflow(yaml().stringify(doc, { aliasDuplicateObjects: false }), path);
  } catch (err) {
    if (err instanceof WorkflowError) throw new WorkflowError(`${path} with its inputs: ${err.message}`);
    throw err;
  }
}
