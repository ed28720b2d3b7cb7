// Reusable workflows (`on: workflow_call`, called by `jobs.<id>.uses`), expanded into the caller's
// run when it is created, as GitHub shows them: the called workflow's jobs become jobs of the run
// named "<caller> / <job>", keyed "<caller key>/<job key>" (a job key has no `/`), their needs
// rewired (a called job also needs what its caller needs; a job that needs the caller needs all
// of its called jobs, runners.ts matches the key as a prefix). Each expanded job keeps the calls it
// is under (its CallFrames, outermost first) so that, when a runner takes it, reusable-task.ts
// evaluates the callers' `if`, `with` and `secrets` and gives the job its inputs and secrets;
// runners and the runner protocol see ordinary jobs. The inputs known when the run is created
// are read in the called jobs' runs-on, strategy and name (reusable-inputs.ts); each call of a
// matrix of calls is numbered (its leg) and keeps its caller's max-parallel and fail-fast.
//
// A reference is `./<dir>/workflows/x.yml` (the same repository at the same commit as the file
// that holds it) or `owner/repo/<dir>/workflows/x.yml@ref` (another repository of the instance the
// run's repository owner may read, or a public one). Calls nest at most MAX_CALL_DEPTH levels
// (GitHub's four: the caller and three called workflows) and may not form a cycle.
import { isValidRefName, objectInfo, readBlob, resolveRef } from '../git/data.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import { UserType, type Viewer } from '../users/tables.js';
import type { Value } from './expressions.js';
import { knownInputs, withKnownInputs, type CreationBase } from './reusable-inputs.js';
import {
  MAX_WORKFLOW_BYTES,
  parseWorkflow,
  WorkflowError,
  type CallSpec,
  type JobCall,
  type Workflow,
  type WorkflowJob,
} from './workflow.js';

/** Most levels of workflows a call chain may have, the caller's included (GitHub's limit). */
export const MAX_CALL_DEPTH = 4;
/** Most jobs a run may have once its calls are expanded. */
const MAX_RUN_JOBS = 256;
/** Most characters of the calls kept on one job. */
const MAX_FRAMES_CHARS = 60_000;

/** Where a workflow file was read: its repository, commit and path. */
export interface CallSite {
  repoId: number;
  commit: string;
  path: string;
}

/** A `uses:` of a job: a file of the same repository, or of another one at a ref. */
export type CallRef =
  | { kind: 'local'; path: string }
  | { kind: 'remote'; owner: string; repo: string; path: string; ref: string };

/** A call on the way from the run's workflow down to a job: what its calling job gave. */
export interface CallFrame {
  /** The calling job's key in the run ("call", "call/inner"). */
  caller: string;
  /** The jobs the calling job needs (keys in the run). */
  needs: string[];
  with: JobCall['with'];
  secrets: JobCall['secrets'];
  if: string;
  matrix?: Record<string, unknown> | undefined;
  /** Which combination of the caller's matrix this call is (none without a matrix). */
  leg?: number | undefined;
  /** The caller's `strategy.max-parallel` (0: no limit) and `fail-fast`, over its calls. */
  maxParallel?: number | undefined;
  failFast?: boolean | undefined;
  /** The called workflow's `on.workflow_call` inputs and outputs. */
  inputs: CallSpec['inputs'];
  outputs: CallSpec['outputs'];
}

/** A job of a run: a workflow's job with the calls it is under (none for the run's own jobs). */
export interface RunJob extends WorkflowJob {
  frames: CallFrame[];
}

/** A called workflow: where it was read, parsed, and its text (to read again with its inputs). */
export interface Loaded {
  site: CallSite;
  wf: Workflow;
  content?: string;
}

export type LoadWorkflow = (ref: CallRef, from: CallSite) => Promise<Loaded>;

const WF_PATH = /^\.(?:forgejo|gitea|github)\/workflows\/[^/]+\.ya?ml$/;
const NAME = /^[\w.-]+$/;

/** Reads a job's `uses:`; throws WorkflowError when it names no reusable workflow. */
export function parseUses(uses: string, job: string): CallRef {
  if (uses.startsWith('./')) {
    const path = uses.slice(2);
    if (WF_PATH.test(path)) return { kind: 'local', path };
  } else {
    const at = uses.lastIndexOf('@');
    const parts = (at > 0 ? uses.slice(0, at) : '').split('/');
    const ref = at > 0 ? uses.slice(at + 1) : '';
    const [owner, repo] = parts;
    const path = parts.slice(2).join('/');
    if (owner && repo && NAME.test(owner) && NAME.test(repo) && WF_PATH.test(path) && ref) {
      return { kind: 'remote', owner, repo, path, ref };
    }
  }
  throw new WorkflowError(
    `job ${job}: uses "${uses}" is not a reusable workflow (./.forgejo/workflows/x.yml, or owner/repo/.forgejo/workflows/x.yml@ref)`,
  );
}

const hasExpr = (v: unknown) => typeof v === 'string' && v.includes('${{');

/**
 * Checks a call against the called workflow's `on.workflow_call`: every `with:` key an input,
 * every required input given (or defaulted), literal values of the input's type, named secrets
 * declared and required ones given. Throws WorkflowError saying what is wrong.
 */
export function checkCall(call: JobCall, spec: CallSpec, job: string, path: string): void {
  for (const [k, v] of Object.entries(call.with)) {
    const input = spec.inputs[k];
    if (!input) throw new WorkflowError(`job ${job}: input "${k}" is not an input of ${path}`);
    if (hasExpr(v)) continue;
    if (input.type === 'boolean' && typeof v !== 'boolean' && v !== 'true' && v !== 'false') {
      throw new WorkflowError(`job ${job}: input "${k}" of ${path} must be a boolean`);
    }
    if (input.type === 'number' && (v === '' || typeof v === 'boolean' || !Number.isFinite(Number(v)))) {
      throw new WorkflowError(`job ${job}: input "${k}" of ${path} must be a number`);
    }
  }
  for (const [k, input] of Object.entries(spec.inputs)) {
    if (input.required && !(k in call.with) && input.default === undefined) {
      throw new WorkflowError(`job ${job}: required input "${k}" of ${path} was not given`);
    }
  }
  if (call.secrets === 'inherit') return;
  for (const k of Object.keys(call.secrets)) {
    if (!spec.secrets[k]) throw new WorkflowError(`job ${job}: secret ${k} is not a secret of ${path}`);
  }
  for (const [k, s] of Object.entries(spec.secrets)) {
    if (s.required && !(k in call.secrets)) {
      throw new WorkflowError(`job ${job}: required secret ${k} of ${path} was not given`);
    }
  }
}

const siteKey = (s: CallSite) => `${s.repoId}@${s.commit}:${s.path}`;

interface Level {
  prefix: string;
  namePrefix: string;
  frames: CallFrame[];
  outerNeeds: string[];
  site: CallSite;
  chain: string[];
  depth: number;
  /** The inputs of this level's workflow known when the run is created (reusable-inputs.ts). */
  inputs: Record<string, Value>;
}

/**
 * The jobs of a run of `wf` (read at `site`): its own, and in place of each calling job the jobs
 * of the workflow it calls, recursively. Throws WorkflowError for a call that cannot be made.
 */
export async function expandCalls(
  wf: Workflow,
  site: CallSite,
  load: LoadWorkflow,
  base: CreationBase = { github: {}, inputs: {} },
): Promise<RunJob[]> {
  const out: RunJob[] = [];
  if (!wf.jobs.some((j) => j.call)) return wf.jobs.map((j) => ({ ...j, frames: [] }));
  const top: Level = {
    prefix: '',
    namePrefix: '',
    frames: [],
    outerNeeds: [],
    site,
    chain: [siteKey(site)],
    depth: 1,
    inputs: base.inputs,
  };
  await expand(wf.jobs, top, load, base, out);
  return out;
}

async function expand(
  jobs: WorkflowJob[],
  at: Level,
  load: LoadWorkflow,
  base: CreationBase,
  out: RunJob[],
): Promise<void> {
  // The calls of a matrix, in the order of its combinations.
  const legs = new Map<string, number>();
  for (const j of jobs) {
    if (j.jobId.includes('/')) throw new WorkflowError(`job key "${j.jobId}" may not contain "/"`);
    const key = at.prefix + j.jobId;
    const needs = [...new Set([...j.needs.map((n) => at.prefix + n), ...at.outerNeeds])];
    const name = at.namePrefix + j.name;
    const { call, ...plain } = j;
    if (!call) {
      out.push({ ...plain, jobId: key, name, needs, frames: at.frames });
      if (out.length > MAX_RUN_JOBS) throw new WorkflowError(`a run may have at most ${MAX_RUN_JOBS} jobs`);
      continue;
    }
    const ref = parseUses(call.uses, key);
    const { site, wf, content } = await load(ref, at.site);
    const id = siteKey(site);
    if (at.chain.includes(id)) {
      throw new WorkflowError(`job ${key}: ${site.path} is called in a cycle (a workflow calls itself)`);
    }
    if (at.depth >= MAX_CALL_DEPTH) {
      throw new WorkflowError(
        `job ${key}: reusable workflows nest at most ${MAX_CALL_DEPTH} levels deep (the caller and ${MAX_CALL_DEPTH - 1} called workflows)`,
      );
    }
    const spec = wf.triggers.workflow_call;
    if (!spec) throw new WorkflowError(`job ${key}: ${site.path} has no workflow_call trigger`);
    checkCall(call, spec, key, site.path);
    const leg = call.matrix === undefined ? undefined : (legs.get(j.jobId) ?? 0);
    if (leg !== undefined) legs.set(j.jobId, leg + 1);
    const frame: CallFrame = {
      caller: key,
      needs,
      with: call.with,
      secrets: call.secrets,
      if: call.if,
      matrix: call.matrix,
      ...(leg === undefined ? {} : { leg, maxParallel: j.maxParallel, failFast: j.failFast }),
      inputs: spec.inputs,
      outputs: spec.outputs,
    };
    const inputs = knownInputs(call, spec, at.inputs, base);
    const called =
      content === undefined
        ? wf
        : withKnownInputs(content, site.path, wf, Object.keys(spec.inputs), inputs, base);
    const frames = [...at.frames, frame];
    // Kept on each called job (a TEXT column): a few kilobytes at most in practice.
    if (JSON.stringify(frames).length > MAX_FRAMES_CHARS) {
      throw new WorkflowError(`job ${key}: the inputs, secrets and outputs of its calls are too large`);
    }
    await expand(
      called.jobs,
      {
        prefix: `${key}/`,
        namePrefix: `${name} / `,
        frames,
        outerNeeds: needs,
        site,
        chain: [...at.chain, id],
        depth: at.depth + 1,
        inputs,
      },
      load,
      base,
      out,
    );
  }
}

/** Whether the run's job `key` is the job `need` names, or one of the jobs it calls. */
export const coversKey = (need: string, key: string): boolean => key === need || key.startsWith(`${need}/`);

export interface LoaderDeps {
  repos: Pick<RepoService, 'getById' | 'pathOf' | 'access' | 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
}

/**
 * The loader of called workflows for a run of `runRepo`: `./` files from the repository and
 * commit of the calling file, others from a repository the run's repository owner may read
 * (public ones, those of the same owner, or readable by the owner when it is a user). What cannot
 * be read is said the same way whether or not it exists. Loads are cached per run.
 */
export function workflowLoader(deps: LoaderDeps, runRepo: RepoRow): LoadWorkflow {
  const cache = new Map<string, Promise<Loaded>>();
  const read = async (repo: RepoRow, commit: string, path: string, uses: string) => {
    const dir = deps.repos.pathOf(repo);
    const info = await objectInfo(dir, `${commit}:${path}`);
    if (!info || info.type !== 'blob') throw new WorkflowError(`${uses}: the workflow file does not exist`);
    if (info.size > MAX_WORKFLOW_BYTES) throw new WorkflowError(`${uses}: the workflow file is too large`);
    const content = (await readBlob(dir, info.oid)).toString('utf8');
    return { site: { repoId: repo.id, commit, path }, wf: parseWorkflow(content, path), content };
  };
  const remote = async (ref: Extract<CallRef, { kind: 'remote' }>) => {
    const uses = `${ref.owner}/${ref.repo}/${ref.path}@${ref.ref}`;
    const missing = new WorkflowError(`${uses}: no such repository, or it cannot be read by this one`);
    const admin: Viewer = { id: 0, isAdmin: true };
    let repo: RepoRow;
    try {
      repo = (await deps.repos.requireRepo(ref.owner, ref.repo, admin)).repo;
    } catch {
      throw missing;
    }
    if (repo.owner_id !== runRepo.owner_id) {
      // Read as the run's repository owner reads (an organization: as anyone does).
      const owner = await deps.users.getById(runRepo.owner_id);
      const viewer = owner && owner.type === UserType.Individual ? { id: owner.id, isAdmin: false } : null;
      if ((await deps.repos.access(repo, viewer)).mode < AccessMode.read) throw missing;
    }
    const resolved =
      repo.is_empty || !isValidRefName(ref.ref)
        ? undefined
        : await resolveRef(deps.repos.pathOf(repo), ref.ref);
    if (!resolved) throw new WorkflowError(`${uses}: ref ${ref.ref} does not exist`);
    return read(repo, resolved.oid, ref.path, uses);
  };
  return (ref, from) => {
    const k = ref.kind === 'local' ? `${from.repoId}@${from.commit}:${ref.path}` : JSON.stringify(ref);
    let p = cache.get(k);
    if (!p) {
      p =
        ref.kind === 'local'
          ? deps.repos.getById(from.repoId).then((repo) => {
              if (!repo) throw new WorkflowError(`./${ref.path}: the repository no longer exists`);
              return read(repo, from.commit, ref.path, `./${ref.path}`);
            })
          : remote(ref);
      cache.set(k, p);
    }
    return p;
  };
}
