// Workflow files: parsing (the `yaml` package, YAML 1.2, so `on` is a key and not `true`), the
// triggers of `on:` with their filters, and the jobs a run gets: `needs`, `runs-on` labels and
// `strategy.matrix` expansion (include/exclude as GitHub documents them). Each job carries the
// workflow reduced to itself, which is what a runner receives as the task's workflow_payload.
// `on.workflow_call` and the `uses:` of calling jobs are read here; reusable.ts expands the calls.
// Pure logic: no database, no git.
import type * as Croner from 'croner';
import picomatch from 'picomatch';
import type * as Yaml from 'yaml';
import { lazyModule } from '../lazy.js';

/** yaml and croner, loaded on first use (not at start-up). */
const yaml = lazyModule<typeof Yaml>('yaml');
const croner = lazyModule<typeof Croner>('croner');

/** Where workflows live, in order: the first of these directories that exists is used. */
export const WORKFLOW_DIRS = ['.forgejo/workflows', '.gitea/workflows', '.github/workflows'] as const;
/** Largest workflow file read. */
export const MAX_WORKFLOW_BYTES = 1024 * 1024;
/** Most jobs one matrix may expand to (GitHub's limit). */
const MAX_MATRIX = 256;

export class WorkflowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkflowError';
  }
}

export interface RefFilter {
  branches?: string[] | undefined;
  branchesIgnore?: string[] | undefined;
  tags?: string[] | undefined;
  tagsIgnore?: string[] | undefined;
  paths?: string[] | undefined;
  pathsIgnore?: string[] | undefined;
}

export interface PullRequestFilter extends RefFilter {
  types?: string[] | undefined;
}

export interface DispatchInput {
  description: string;
  required: boolean;
  default: string | undefined;
  type: string;
  options: string[];
}

export interface Triggers {
  push?: RefFilter;
  pull_request?: PullRequestFilter;
  workflow_dispatch?: { inputs: Record<string, DispatchInput> };
  /** `schedule: [{cron: ...}]`: POSIX cron specs of five fields, in UTC. */
  schedule?: string[];
  /** `workflow_call`: the workflow can be called by a job of another (reusable.ts). */
  workflow_call?: CallSpec;
}

/** An input of `on.workflow_call`: typed string, number or boolean. */
export interface CallInput {
  type: 'string' | 'number' | 'boolean';
  required: boolean;
  /** The default (expressions of the github context allowed), when there is one. */
  default: string | number | boolean | undefined;
}

/** `on.workflow_call`: its inputs, secrets and outputs (name → the `value` expression). */
export interface CallSpec {
  inputs: Record<string, CallInput>;
  secrets: Record<string, { required: boolean }>;
  outputs: Record<string, string>;
}

/** A job that calls a reusable workflow (`jobs.<id>.uses`). */
export interface JobCall {
  uses: string;
  /** `with:`, values as written (strings may hold expressions). */
  with: Record<string, string | number | boolean>;
  /** `secrets: inherit`, or the named secrets (values as written). */
  secrets: 'inherit' | Record<string, string>;
  /** The job's `if:` ('' when none). */
  if: string;
  /** Its matrix combination, when a matrix expanded it. */
  matrix: Record<string, unknown> | undefined;
}

/** `concurrency:` of a workflow or a job; `group` may hold expressions (github, inputs, vars). */
export interface Concurrency {
  group: string;
  cancelInProgress: boolean;
}

export interface WorkflowJob {
  /** The job's key in `jobs:`. */
  jobId: string;
  /** Display name; with the matrix values when the job was expanded. */
  name: string;
  needs: string[];
  runsOn: string[];
  /** The workflow reduced to this job, YAML. */
  payload: string;
  /** `strategy.max-parallel` (0: no limit). */
  maxParallel: number;
  /**
   * `strategy.max-parallel` written as an expression: read once the run's inputs are bound
   * (reusable-inputs.ts); a run whose jobs still have one when it is created fails, saying so.
   */
  maxParallelExpr?: string;
  /** `strategy.fail-fast` (true unless set false). */
  failFast: boolean;
  /** The reusable workflow the job calls, instead of steps of its own. */
  call?: JobCall;
  /** Job-level `concurrency:`, `${{ matrix.* }}` in its group already replaced. */
  concurrency?: Concurrency;
}

export interface Workflow {
  /** `name:`, or the file's path when there is none. */
  name: string;
  triggers: Triggers;
  jobs: WorkflowJob[];
  /** The workflow's `concurrency:`, when it has one. */
  concurrency: Concurrency | undefined;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function strings(v: unknown, what: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number'))
    return v.map(String);
  throw new WorkflowError(`${what} must be a string or a list of strings`);
}

function refFilter(v: unknown, event: string): RefFilter {
  if (v === null || v === undefined) return {};
  if (!isObj(v)) throw new WorkflowError(`on.${event} must be a mapping`);
  return {
    branches: strings(v['branches'], `on.${event}.branches`),
    branchesIgnore: strings(v['branches-ignore'], `on.${event}.branches-ignore`),
    tags: strings(v['tags'], `on.${event}.tags`),
    tagsIgnore: strings(v['tags-ignore'], `on.${event}.tags-ignore`),
    paths: strings(v['paths'], `on.${event}.paths`),
    pathsIgnore: strings(v['paths-ignore'], `on.${event}.paths-ignore`),
  };
}

function dispatchInputs(v: unknown): Record<string, DispatchInput> {
  const inputs: Record<string, DispatchInput> = {};
  const raw = isObj(v) ? v['inputs'] : undefined;
  if (!isObj(raw)) return inputs;
  for (const [name, spec] of Object.entries(raw)) {
    const s = isObj(spec) ? spec : {};
    const def = s['default'];
    inputs[name] = {
      description: typeof s['description'] === 'string' ? s['description'] : '',
      required: s['required'] === true,
      default: def === undefined || def === null ? undefined : String(def),
      type: typeof s['type'] === 'string' ? s['type'] : 'string',
      options: Array.isArray(s['options']) ? s['options'].map(String) : [],
    };
  }
  return inputs;
}

const CALL_INPUT_TYPES = new Set(['string', 'number', 'boolean']);

/** `on.workflow_call`: typed inputs, secrets and outputs (each with a `value`). */
function callSpec(v: unknown): CallSpec {
  const spec: CallSpec = { inputs: {}, secrets: {}, outputs: {} };
  if (v === null || v === undefined) return spec;
  if (!isObj(v)) throw new WorkflowError('on.workflow_call must be a mapping');
  for (const [name, raw] of Object.entries(isObj(v['inputs']) ? v['inputs'] : {})) {
    const s = isObj(raw) ? raw : {};
    const type = s['type'] ?? 'string';
    if (typeof type !== 'string' || !CALL_INPUT_TYPES.has(type)) {
      throw new WorkflowError(`on.workflow_call.inputs.${name}.type must be string, number or boolean`);
    }
    const def = s['default'];
    if (def !== undefined && def !== null && !['string', 'number', 'boolean'].includes(typeof def)) {
      throw new WorkflowError(`on.workflow_call.inputs.${name}.default must be a ${type}`);
    }
    spec.inputs[name] = {
      type: type as CallInput['type'],
      required: s['required'] === true,
      default: def === null ? undefined : (def as CallInput['default']),
    };
  }
  for (const [name, raw] of Object.entries(isObj(v['secrets']) ? v['secrets'] : {})) {
    spec.secrets[name.toUpperCase()] = { required: isObj(raw) && raw['required'] === true };
  }
  for (const [name, raw] of Object.entries(isObj(v['outputs']) ? v['outputs'] : {})) {
    const value = isObj(raw) ? raw['value'] : undefined;
    if (typeof value !== 'string') throw new WorkflowError(`on.workflow_call.outputs.${name} needs a value`);
    spec.outputs[name] = value;
  }
  return spec;
}

/** A calling job's `uses`, `with`, `secrets` and `if`. */
function jobCall(jobId: string, job: Obj, combo: Combo | undefined): JobCall | undefined {
  const uses = job['uses'];
  if (uses === undefined) return undefined;
  if (typeof uses !== 'string' || !uses.trim())
    throw new WorkflowError(`jobs.${jobId}.uses must be a string`);
  if ('steps' in job) throw new WorkflowError(`jobs.${jobId} cannot have both uses and steps`);
  const w: JobCall['with'] = {};
  const rawWith = job['with'] ?? {};
  if (!isObj(rawWith)) throw new WorkflowError(`jobs.${jobId}.with must be a mapping`);
  for (const [k, v] of Object.entries(rawWith)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw new WorkflowError(`jobs.${jobId}.with.${k} must be a string, a number or a boolean`);
    }
    w[k] = v;
  }
  const rawSecrets = job['secrets'];
  let secrets: JobCall['secrets'] = {};
  if (rawSecrets === 'inherit') secrets = 'inherit';
  else if (isObj(rawSecrets)) {
    for (const [k, v] of Object.entries(rawSecrets)) secrets[k.toUpperCase()] = String(v ?? '');
  } else if (rawSecrets !== undefined && rawSecrets !== null) {
    throw new WorkflowError(`jobs.${jobId}.secrets must be inherit or a mapping`);
  }
  const cond = job['if'];
  return {
    uses: uses.trim(),
    with: w,
    secrets,
    if: cond === undefined || cond === null ? '' : String(cond),
    matrix: combo,
  };
}

/**
 * The next time (Unix seconds, after `afterUnix`) a cron spec fires, read as GitHub does: five
 * fields (minute hour day-of-month month day-of-week), UTC, day-of-month and day-of-week either
 * matching when both are restricted. Throws WorkflowError for a spec that is not one.
 */
export function nextCronTime(spec: string, afterUnix: number): number {
  const fields = spec.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new WorkflowError(`schedule "${spec}" must have five fields (minute hour day month weekday)`);
  }
  let next: Date | null;
  try {
    const cron = new (croner().Cron)(fields.join(' '), {
      timezone: 'UTC',
      paused: true,
      mode: '5-part',
      domAndDow: false,
    });
    next = cron.nextRun(new Date(afterUnix * 1000));
  } catch (err) {
    throw new WorkflowError(`schedule "${spec}" is not a cron expression: ${(err as Error).message}`);
  }
  if (!next) throw new WorkflowError(`schedule "${spec}" never fires`);
  return Math.floor(next.getTime() / 1000);
}

function schedules(v: unknown): string[] {
  if (!Array.isArray(v)) throw new WorkflowError('on.schedule must be a list of {cron: ...}');
  return v.map((entry) => {
    const spec = isObj(entry) ? entry['cron'] : undefined;
    if (typeof spec !== 'string') throw new WorkflowError('each on.schedule entry needs a cron string');
    nextCronTime(spec, 0);
    return spec.trim();
  });
}

/** `concurrency:` (a group name, or {group, cancel-in-progress}). */
export function parseConcurrency(v: unknown, where: string): Concurrency | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number') {
    return String(v).trim() ? { group: String(v), cancelInProgress: false } : undefined;
  }
  if (!isObj(v)) throw new WorkflowError(`${where} must be a group name or a mapping with group`);
  const group = v['group'];
  if (typeof group !== 'string' && typeof group !== 'number') {
    throw new WorkflowError(`${where}.group must be a string`);
  }
  const cancel = v['cancel-in-progress'];
  if (cancel !== undefined && typeof cancel !== 'boolean' && typeof cancel !== 'string') {
    throw new WorkflowError(`${where}.cancel-in-progress must be true or false`);
  }
  return { group: String(group), cancelInProgress: cancel === true || cancel === 'true' };
}

/** The events of `on:` Anvil reads (push, pull_request, workflow_dispatch, schedule, workflow_call); others are ignored. */
export function parseTriggers(on: unknown): Triggers {
  const t: Triggers = {};
  const add = (event: string, spec: unknown) => {
    if (event === 'push') t.push = refFilter(spec, event);
    else if (event === 'pull_request') {
      const f: PullRequestFilter = refFilter(spec, event);
      f.types = isObj(spec) ? strings(spec['types'], 'on.pull_request.types') : undefined;
      t.pull_request = f;
    } else if (event === 'workflow_dispatch') t.workflow_dispatch = { inputs: dispatchInputs(spec) };
    else if (event === 'schedule') t.schedule = schedules(spec);
    else if (event === 'workflow_call') t.workflow_call = callSpec(spec);
  };
  if (typeof on === 'string') add(on, null);
  else if (Array.isArray(on)) for (const e of on) add(String(e), null);
  else if (isObj(on)) for (const [e, spec] of Object.entries(on)) add(e, spec);
  else throw new WorkflowError('`on` must name the events that trigger the workflow');
  return t;
}

/** A workflow file's content, parsed; throws WorkflowError saying what is wrong. */
export function parseWorkflow(content: string, path: string): Workflow {
  let doc: unknown;
  try {
    doc = yaml().parse(content, { maxAliasCount: 100 });
  } catch (err) {
    throw new WorkflowError(`${path} is not valid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObj(doc)) throw new WorkflowError(`${path} is not a workflow (a mapping with on and jobs)`);
  unknownKeys(doc, WORKFLOW_KEYS, path);
  if (!('on' in doc)) throw new WorkflowError(`${path} has no \`on\``);
  const triggers = parseTriggers(doc['on']);
  const jobs = doc['jobs'];
  if (!isObj(jobs) || Object.keys(jobs).length === 0) throw new WorkflowError(`${path} has no jobs`);
  const name = typeof doc['name'] === 'string' && doc['name'].trim() ? doc['name'].trim() : path;
  return {
    name,
    triggers,
    jobs: expandJobs(doc, jobs),
    concurrency: parseConcurrency(doc['concurrency'], 'concurrency'),
  };
}

/** The keys GitHub reads in a workflow and in a job: any other is a mistake, said so. */
const WORKFLOW_KEYS = new Set([
  'name',
  'run-name',
  'on',
  'env',
  'defaults',
  'concurrency',
  'permissions',
  'jobs',
]);
const JOB_KEYS = new Set([
  'name',
  'runs-on',
  'needs',
  'if',
  'permissions',
  'environment',
  'concurrency',
  'outputs',
  'env',
  'defaults',
  'steps',
  'timeout-minutes',
  'strategy',
  'continue-on-error',
  'container',
  'services',
  'uses',
  'with',
  'secrets',
]);

function unknownKeys(o: Obj, known: Set<string>, where: string): void {
  const bad = Object.keys(o).filter((k) => !known.has(k));
  if (bad.length) {
    throw new WorkflowError(
      `${where}: unknown key${bad.length > 1 ? 's' : ''} ${bad.map((k) => `"${k}"`).join(', ')}`,
    );
  }
}

function needsOf(jobId: string, job: Obj, all: Obj): string[] {
  const needs = strings(job['needs'], `jobs.${jobId}.needs`) ?? [];
  for (const n of needs) {
    if (!(n in all)) throw new WorkflowError(`job ${jobId} needs ${n}, which is not a job of the workflow`);
  }
  return needs;
}

/** Throws when `needs` make a cycle. */
function checkAcyclic(needs: Map<string, string[]>): void {
  const state = new Map<string, 1 | 2>();
  const visit = (id: string, path: string[]) => {
    if (state.get(id) === 2) return;
    if (state.get(id) === 1)
      throw new WorkflowError(`jobs need each other in a cycle: ${[...path, id].join(' → ')}`);
    state.set(id, 1);
    for (const n of needs.get(id) ?? []) visit(n, [...path, id]);
    state.set(id, 2);
  };
  for (const id of needs.keys()) visit(id, []);
}

type Combo = Record<string, unknown>;

/** The combinations of a `strategy.matrix` mapping, include and exclude applied. */
export function expandMatrix(matrix: Obj): Combo[] {
  const keys = Object.keys(matrix).filter((k) => k !== 'include' && k !== 'exclude');
  let combos: Combo[] = [{}];
  for (const k of keys) {
    const values = Array.isArray(matrix[k]) ? (matrix[k] as unknown[]) : [matrix[k]];
    const next: Combo[] = [];
    for (const c of combos) for (const v of values) next.push({ ...c, [k]: v });
    combos = next;
    if (combos.length > MAX_MATRIX) throw new WorkflowError(`a matrix may have at most ${MAX_MATRIX} jobs`);
  }
  if (keys.length === 0) combos = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const excludes = Array.isArray(matrix['exclude']) ? matrix['exclude'].filter(isObj) : [];
  combos = combos.filter((c) => !excludes.some((e) => Object.entries(e).every(([k, v]) => same(c[k], v))));
  const base = combos.map((c) => ({ ...c }));
  const includes = Array.isArray(matrix['include']) ? matrix['include'].filter(isObj) : [];
  for (const inc of includes) {
    let used = false;
    combos.forEach((c, i) => {
      // An entry extends the combinations whose original values it does not change.
      const fits = Object.entries(inc).every(([k, v]) => !keys.includes(k) || same(base[i]![k], v));
      if (fits && keys.length > 0) {
        Object.assign(c, inc);
        used = true;
      }
    });
    if (!used) combos.push({ ...inc });
  }
  if (combos.length > MAX_MATRIX) throw new WorkflowError(`a matrix may have at most ${MAX_MATRIX} jobs`);
  return combos;
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** `${{ matrix.key }}` replaced by its value (the only expressions evaluated on the server). */
function withMatrix(text: string, combo: Combo | undefined): string {
  if (!combo) return text;
  return text.replace(/\$\{\{\s*matrix\.([\w-]+)\s*\}\}/g, (whole, k: string) =>
    k in combo ? show(combo[k]) : whole,
  );
}

function runsOnOf(jobId: string, job: Obj, combo: Combo | undefined): string[] {
  let v = job['runs-on'];
  if (isObj(v)) v = v['labels'];
  const labels = strings(v, `jobs.${jobId}.runs-on`) ?? [];
  return labels.map((l) => withMatrix(l, combo).trim()).filter(Boolean);
}

function expandJobs(doc: Obj, jobs: Obj): WorkflowJob[] {
  const needs = new Map<string, string[]>();
  for (const [jobId, job] of Object.entries(jobs)) {
    if (!isObj(job)) throw new WorkflowError(`job ${jobId} must be a mapping`);
    unknownKeys(job, JOB_KEYS, `jobs.${jobId}`);
    needs.set(jobId, needsOf(jobId, job, jobs));
  }
  checkAcyclic(needs);
  const top: Obj = {};
  for (const [k, v] of Object.entries(doc)) if (k !== 'jobs') top[k] = v;
  const out: WorkflowJob[] = [];
  for (const [jobId, raw] of Object.entries(jobs)) {
    const job = raw as Obj;
    const strategy = isObj(job['strategy']) ? job['strategy'] : undefined;
    const matrix = strategy && isObj(strategy['matrix']) ? strategy['matrix'] : undefined;
    const combos: Array<Combo | undefined> = matrix ? expandMatrix(matrix) : [undefined];
    const maxRaw = strategy?.['max-parallel'];
    const maxExpr = typeof maxRaw === 'string' && maxRaw.includes('${{') ? maxRaw : undefined;
    const maxParallel = maxExpr !== undefined || maxRaw === undefined || maxRaw === null ? 0 : Number(maxRaw);
    if (!Number.isInteger(maxParallel) || maxParallel < 0) {
      throw new WorkflowError(`jobs.${jobId}.strategy.max-parallel must be a positive whole number`);
    }
    const failFast = strategy?.['fail-fast'] !== false && strategy?.['fail-fast'] !== 'false';
    const conc = parseConcurrency(job['concurrency'], `jobs.${jobId}.concurrency`);
    for (const combo of combos.length ? combos : [undefined]) {
      const given = typeof job['name'] === 'string' ? job['name'] : undefined;
      let name = given ? withMatrix(given, combo) : jobId;
      if (!given && combo && Object.keys(combo).length) {
        name = `${jobId} (${Object.values(combo).map(show).join(', ')})`;
      }
      const runsOn = runsOnOf(jobId, job, combo);
      const single: Obj = { ...job, name, 'runs-on': runsOn };
      if (combo && strategy) {
        single['strategy'] = {
          ...strategy,
          matrix: Object.fromEntries(Object.entries(combo).map(([k, v]) => [k, [v]])),
        };
      }
      const call = jobCall(jobId, job, combo);
      out.push({
        jobId,
        name,
        needs: needs.get(jobId)!,
        runsOn,
        payload: yaml().stringify({ ...top, jobs: { [jobId]: single } }, { aliasDuplicateObjects: false }),
        maxParallel,
        ...(maxExpr === undefined ? {} : { maxParallelExpr: maxExpr }),
        failFast,
        ...(call ? { call } : {}),
        ...(conc ? { concurrency: { ...conc, group: withMatrix(conc.group, combo) } } : {}),
      });
    }
  }
  return out;
}

// Filters

const matchers = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = matchers.get(pattern);
  if (!m) {
    m = picomatch(pattern, { dot: true, nonegate: true });
    if (matchers.size < 2000) matchers.set(pattern, m);
  }
  return m;
}

/**
 * Whether `name` is selected by `patterns` as GitHub filters are read: in order, a pattern selects
 * what it matches, a `!pattern` deselects it again; the last one that matches decides.
 */
export function matchPatterns(patterns: string[], name: string): boolean {
  let selected = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (glob(p.slice(1))(name)) selected = false;
    } else if (glob(p)(name)) {
      selected = true;
    }
  }
  return selected;
}

/** Whether a branch or tag `ref` passes the branch/tag filters of `f`. */
export function matchRef(f: RefFilter, ref: string): boolean {
  const hasBranch = f.branches !== undefined || f.branchesIgnore !== undefined;
  const hasTag = f.tags !== undefined || f.tagsIgnore !== undefined;
  if (ref.startsWith('refs/heads/')) {
    const name = ref.slice('refs/heads/'.length);
    if (!hasBranch) return !hasTag;
    if (f.branches && !matchPatterns(f.branches, name)) return false;
    if (f.branchesIgnore && matchPatterns(f.branchesIgnore, name)) return false;
    return true;
  }
  if (ref.startsWith('refs/tags/')) {
    const name = ref.slice('refs/tags/'.length);
    if (!hasTag) return !hasBranch;
    if (f.tags && !matchPatterns(f.tags, name)) return false;
    if (f.tagsIgnore && matchPatterns(f.tagsIgnore, name)) return false;
    return true;
  }
  return false;
}

export const hasPathFilter = (f: RefFilter): boolean => f.paths !== undefined || f.pathsIgnore !== undefined;

/** Whether the changed `files` pass the path filters of `f`. */
export function matchPaths(f: RefFilter, files: string[]): boolean {
  if (f.paths && !files.some((file) => matchPatterns(f.paths!, file))) return false;
  if (f.pathsIgnore && files.every((file) => matchPatterns(f.pathsIgnore!, file))) return false;
  return true;
}

/** The inputs of a dispatch: defaults filled in; throws WorkflowError for a missing or bad one. */
export function resolveInputs(
  spec: Record<string, DispatchInput>,
  given: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, input] of Object.entries(spec)) {
    const value = Object.hasOwn(given, name) ? given[name] : input.default;
    if (value === undefined || (input.required && value === '')) {
      if (input.required) throw new WorkflowError(`required input "${name}" was not given`);
      continue;
    }
    if (input.type === 'choice' && input.options.length && !input.options.includes(value)) {
      throw new WorkflowError(`input "${name}" must be one of: ${input.options.join(', ')}`);
    }
    if (input.type === 'boolean' && value !== 'true' && value !== 'false') {
      throw new WorkflowError(`input "${name}" must be true or false`);
    }
    if (input.type === 'number' && value !== '' && !Number.isFinite(Number(value))) {
      throw new WorkflowError(`input "${name}" must be a number`);
    }
    out[name] = value;
  }
  return out;
}
