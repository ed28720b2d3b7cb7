// The steps of a job as `anvil runner` runs them, at the job's level or inside a composite action:
// `if:`, `env:`, `continue-on-error`, `timeout-minutes`, the files each step gets (GITHUB_OUTPUT,
// GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY) and what it wrote to them, `run:` scripts, and
// `uses:` actions: actions/checkout (runner-checkout.ts), JavaScript actions (runner-node.ts) with
// their `pre` (before the first step, for the job's own steps from repositories) and `post` (after
// the last, in reverse order, per `post-if`), and composite actions (their steps run here, with
// their own `inputs` and `steps` contexts, and their outputs mapped from them). An action's
// inputs are its `with:` over its action.yml defaults; a `required` input with neither fails the
// step.
import fs from 'node:fs';
import path from 'node:path';
import { condition, interpolate, type Value } from './expressions.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import { loadAction, parseUses, type ActionMeta, type ActionStore } from './runner-actions.js';
import { checkout } from './runner-checkout.js';
import { CommandReader, parseKeyValueFile } from './runner-commands.js';
import { NodeAction, inputEnv, isArtifactAction } from './runner-node.js';
import {
  isObj,
  resultName,
  str,
  type JobHost,
  type JobState,
  type Obj,
  type Scope,
  type StepOutcome,
} from './runner-types.js';

/** Composite actions inside composite actions, at most. */
const MAX_DEPTH = 10;

type Resolved =
  | { kind: 'checkout' }
  | { kind: 'node'; action: NodeAction }
  | { kind: 'composite'; meta: ActionMeta; dir: string; label: string; repository: string; ref: string };

export interface StepHooks {
  start(index: number): void;
  end(index: number, result: Result): void;
}

const failure = (): StepOutcome => ({ result: Result.FAILURE, outputs: {} });

const commands = new Map<string, boolean>();
function hasCommand(name: string): boolean {
  let found = commands.get(name);
  if (found === undefined) {
    found = (process.env['PATH'] ?? '')
      .split(path.delimiter)
      .some((d) => d && fs.existsSync(path.join(d, name)));
    commands.set(name, found);
  }
  return found;
}

/** The command line of a `shell:` value for a script file. */
export function shellCommand(shell: string, file: string): string[] {
  switch (shell) {
    case 'bash':
      return ['bash', '--noprofile', '--norc', '-eo', 'pipefail', file];
    case 'sh':
      return ['sh', '-e', file];
    case 'python':
      return ['python3', file];
    case 'node':
      return ['node', file];
    default: {
      const parts = shell.split(/\s+/).filter(Boolean);
      if (!parts.some((p) => p.includes('{0}'))) parts.push('{0}');
      return parts.map((p) => p.replace('{0}', file));
    }
  }
}

export class StepRunner {
  /** The action of each `uses:` step, looked up once (before the first step for `pre`). */
  private readonly resolved = new WeakMap<Obj, Promise<Resolved>>();

  constructor(
    private readonly host: JobHost,
    private readonly job: JobState,
    private readonly store: ActionStore,
  ) {}

  /** The environment expressions see at a level: the job's, under the composite step's. */
  private levelEnv(scope: Scope): Record<string, Value> {
    return { ...this.job.env, ...scope.env };
  }

  private stepName(step: Obj, index: number, scope: Scope): string {
    const run = str(step['run']);
    const fallback = run ? run.split('\n', 1)[0]! : (str(step['uses']) ?? `step ${index + 1}`);
    try {
      return interpolate(str(step['name']) ?? fallback, scope.ctx);
    } catch {
      return str(step['name']) ?? fallback;
    }
  }

  /** A step's `env:` over the level's: `own` without the job's env, `all` with it. */
  private stepEnv(step: Obj, scope: Scope): { own: Record<string, Value>; all: Record<string, Value> } {
    const own: Record<string, Value> = { ...scope.env };
    const all: Record<string, Value> = { ...this.job.env, ...own };
    scope.ctx.contexts['env'] = all;
    if (isObj(step['env'])) {
      for (const [k, v] of Object.entries(step['env'])) {
        all[k] = own[k] = interpolate(String(v ?? ''), scope.ctx);
      }
    }
    return { own, all };
  }

  private withArgs(step: Obj, scope: Scope): Record<string, string> {
    const out: Record<string, string> = {};
    if (isObj(step['with'])) {
      for (const [k, v] of Object.entries(step['with'])) out[k] = interpolate(String(v ?? ''), scope.ctx);
    }
    return out;
  }

  /** Before the first step: fetches the actions the job's steps use, and runs their `pre`. */
  async prepare(steps: unknown[], scope: Scope): Promise<void> {
    const remote: Array<[Obj, string, number]> = [];
    steps.forEach((s, i) => {
      const uses = isObj(s) && s['run'] === undefined ? str(s['uses']) : undefined;
      if (!uses) return;
      try {
        if (parseUses(uses, this.job.defaultActionsUrl).kind === 'remote') remote.push([s as Obj, uses, i]);
      } catch {
        // the step itself says what is wrong with it
      }
    });
    // Fetched one after the other: the log says which is fetched when, and a failure is the step's.
    for (const [step, uses] of remote) await this.resolve(step, uses).catch(() => undefined);
    for (const [step, uses, i] of remote) {
      const r = await this.resolve(step, uses).catch(() => undefined);
      if (r?.kind !== 'node' || !r.action.has('pre')) continue;
      const name = `Pre ${this.stepName(step, i, scope)}`;
      scope.ctx.cancelled = this.host.cancelled;
      scope.ctx.contexts['env'] = this.levelEnv(scope);
      let outcome: StepOutcome;
      try {
        if (!condition(r.action.condition('pre'), scope.ctx)) {
          this.host.log(`Skipping ${name}`);
          continue;
        }
        this.host.log(`\u2B52 ${name}`);
        const { all } = this.stepEnv(step, scope);
        const id = str(step['id']) ?? `__${i}`;
        const env = this.actionEnv(
          r.action,
          all,
          this.inputs(r.action.meta, this.withArgs(step, scope), scope, uses),
        );
        outcome = await this.withFiles(all, scope, id, env, (e) => r.action.phase('pre', e, scope.deadline));
      } catch (err) {
        this.host.log(`::error::${(err as Error).message}`);
        outcome = failure();
      }
      if (outcome.result === Result.FAILURE) scope.ctx.failed = true;
    }
    scope.ctx.contexts['env'] = this.levelEnv(scope);
  }

  /** Runs steps in order, filling the level's `steps` context. */
  async runSteps(steps: unknown[], scope: Scope, hooks?: StepHooks): Promise<void> {
    for (let i = 0; i < steps.length; i++) {
      const step = isObj(steps[i]) ? (steps[i] as Obj) : {};
      const id = str(step['id']) ?? `__${i}`;
      hooks?.start(i);
      scope.ctx.cancelled = this.host.cancelled;
      const outcome = await this.runStep(step, id, i, scope);
      const coe = step['continue-on-error'];
      let continueOnError = coe === true;
      if (typeof coe === 'string') {
        try {
          continueOnError = interpolate(coe, scope.ctx).trim() === 'true';
        } catch {
          continueOnError = false;
        }
      }
      const conclusion =
        outcome.result === Result.FAILURE && continueOnError ? Result.SUCCESS : outcome.result;
      scope.steps[id] = {
        outputs: outcome.outputs,
        outcome: resultName(outcome.result),
        conclusion: resultName(conclusion),
      };
      if (conclusion === Result.FAILURE) scope.ctx.failed = true;
      hooks?.end(i, conclusion);
    }
    scope.ctx.contexts['env'] = this.levelEnv(scope);
  }

  /** The actions' `post` steps, last registered first, each per its `post-if`. */
  async runPosts(scope: Scope): Promise<void> {
    const posts = this.job.posts.splice(0).reverse();
    for (const post of posts) {
      scope.ctx.cancelled = this.host.cancelled;
      scope.ctx.contexts['env'] = this.levelEnv(scope);
      let outcome: StepOutcome;
      try {
        if (!condition(post.condition, scope.ctx)) {
          this.host.log(`Skipping ${post.name}`);
          continue;
        }
        this.host.log(`\u2B52 ${post.name}`);
        outcome = await post.run();
      } catch (err) {
        this.host.log(`::error::${(err as Error).message}`);
        outcome = failure();
      }
      if (outcome.result === Result.FAILURE) scope.ctx.failed = true;
    }
  }

  private async runStep(step: Obj, id: string, index: number, scope: Scope): Promise<StepOutcome> {
    scope.ctx.contexts['env'] = this.levelEnv(scope);
    const name = this.stepName(step, index, scope);
    try {
      if (!condition(step['if'], scope.ctx)) {
        this.host.log(`Skipping step ${name}`);
        return { result: Result.SKIPPED, outputs: {} };
      }
    } catch (err) {
      this.host.log(`::error::${name}: if: ${(err as Error).message}`);
      return failure();
    }
    this.host.log(`\u2B52 ${name}`);
    try {
      const { own, all } = this.stepEnv(step, scope);
      const minutes = Number(step['timeout-minutes'] ?? 0);
      const deadline = minutes > 0 ? Math.min(scope.deadline, Date.now() + minutes * 60_000) : scope.deadline;
      const run = str(step['run']);
      const uses = str(step['uses']);
      if (run !== undefined) {
        const script = interpolate(run, scope.ctx);
        return await this.withFiles(all, scope, id, {}, (env) =>
          this.runScript(script, step, scope, env, deadline),
        );
      }
      if (uses) return await this.runUses(step, uses, { id, name, own, all, deadline }, scope);
      throw new Error(`the step ${name} has neither run: nor uses:`);
    } catch (err) {
      this.host.log(`::error::${(err as Error).message}`);
      return failure();
    } finally {
      scope.ctx.contexts['env'] = this.levelEnv(scope);
    }
  }

  /**
   * Runs `run` with the step's files and environment (`extra` last), then takes what the step
   * wrote: its outputs, and the job's new environment variables and PATH entries.
   */
  private async withFiles(
    stepEnv: Record<string, Value>,
    scope: Scope,
    actionId: string,
    extra: Record<string, string>,
    run: (env: NodeJS.ProcessEnv) => Promise<StepOutcome>,
  ): Promise<StepOutcome> {
    const n = this.job.files++;
    const files = {
      GITHUB_OUTPUT: path.join(this.job.temp, `output-${n}`),
      GITHUB_ENV: path.join(this.job.temp, `env-${n}`),
      GITHUB_PATH: path.join(this.job.temp, `path-${n}`),
      GITHUB_STEP_SUMMARY: path.join(this.job.temp, `summary-${n}`),
    };
    for (const f of Object.values(files)) fs.writeFileSync(f, '');
    const env: NodeJS.ProcessEnv = {
      ...this.job.baseEnv,
      ...scope.procEnv,
      ...files,
      GITHUB_ACTION: actionId,
    };
    for (const [k, v] of Object.entries(stepEnv)) env[k] = String(v ?? '');
    Object.assign(env, extra);
    if (this.job.extraPath.length)
      env['PATH'] = [...this.job.extraPath, env['PATH'] ?? ''].join(path.delimiter);
    const outcome = await run(env);
    const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
    outcome.outputs = { ...outcome.outputs, ...parseKeyValueFile(read(files.GITHUB_OUTPUT)) };
    for (const [k, v] of Object.entries(parseKeyValueFile(read(files.GITHUB_ENV)))) this.job.env[k] = v;
    const added = read(files.GITHUB_PATH)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    this.job.extraPath.unshift(...added.reverse());
    return outcome;
  }

  private async runScript(
    script: string,
    step: Obj,
    scope: Scope,
    env: NodeJS.ProcessEnv,
    deadline: number,
  ): Promise<StepOutcome> {
    const defaults = scope.depth === 0 ? this.job.runDefaults : {};
    const shell = str(step['shell']) ?? str(defaults['shell']) ?? (hasCommand('bash') ? 'bash' : 'sh');
    const ext = shell === 'python' ? '.py' : shell === 'node' ? '.js' : '.sh';
    const file = path.join(this.job.temp, `step-${this.job.files++}${ext}`);
    fs.writeFileSync(file, script.endsWith('\n') ? script : `${script}\n`);
    const dir = str(step['working-directory']) ?? str(defaults['working-directory']);
    const cwd = dir ? path.resolve(this.job.workspace, interpolate(dir, scope.ctx)) : this.job.workspace;
    const reader = new CommandReader(this.host, this.job.debug);
    const code = await this.host.exec(shellCommand(shell, file), cwd, env, deadline, reader);
    if (code !== 0) this.host.log(`::error::Process completed with exit code ${code}.`);
    return { result: code === 0 ? Result.SUCCESS : Result.FAILURE, outputs: reader.outputs };
  }

  private resolve(step: Obj, uses: string): Promise<Resolved> {
    let p = this.resolved.get(step);
    if (!p) {
      p = this.load(uses);
      p.catch(() => undefined);
      this.resolved.set(step, p);
    }
    return p;
  }

  private async load(uses: string): Promise<Resolved> {
    const ref = parseUses(uses, this.job.defaultActionsUrl);
    if (ref.kind === 'checkout') return { kind: 'checkout' };
    if (ref.kind === 'docker') {
      throw new Error(`uses: ${uses}: anvil runner does not run Docker actions (it runs jobs on the host)`);
    }
    const workspace = this.job.workspace;
    let dir: string;
    let repository = '';
    let version = '';
    if (ref.kind === 'local') {
      dir = path.resolve(workspace, ref.path);
      if (dir !== workspace && !dir.startsWith(workspace + path.sep)) {
        throw new Error(`uses: ${uses} is outside the workspace`);
      }
      if (!fs.existsSync(dir)) {
        throw new Error(`uses: ${uses}: the workspace has no ${ref.path} (check the repository out first)`);
      }
    } else {
      const root = await this.store.fetch(ref, this.job.deadline);
      dir = path.join(root, ref.path);
      repository = ref.repository;
      version = ref.ref;
      if (!fs.existsSync(dir)) throw new Error(`uses: ${uses}: ${ref.repository} has no ${ref.path}`);
    }
    const label = `uses: ${uses}`;
    const meta = loadAction(dir, label);
    const using = String(meta.runs['using'] ?? '').toLowerCase();
    if (/^node\d+$/.test(using)) {
      if (typeof meta.runs['main'] !== 'string') throw new Error(`${label}: its action.yml has no runs.main`);
      return {
        kind: 'node',
        action: new NodeAction(this.host, this.job, dir, meta, label, repository, version),
      };
    }
    if (using === 'composite') return { kind: 'composite', meta, dir, label, repository, ref: version };
    if (using === 'docker')
      throw new Error(`${label} is a Docker action: anvil runner does not run Docker actions`);
    throw new Error(`${label}: runs.using "${using}" is not supported (node20, node24 or composite)`);
  }

  /** An action's inputs: `with:` over the defaults of its action.yml. */
  private inputs(
    meta: ActionMeta,
    given: Record<string, string>,
    scope: Scope,
    label: string,
  ): Record<string, string> {
    const out: Record<string, string> = {};
    const declared = new Map(Object.keys(meta.inputs).map((k) => [k.toLowerCase(), k]));
    const unexpected: string[] = [];
    for (const [k, v] of Object.entries(given)) {
      const name = declared.get(k.toLowerCase());
      if (!name) unexpected.push(k);
      out[name ?? k] = v;
    }
    if (unexpected.length) {
      this.host.log(
        `::warning::Unexpected input(s) ${unexpected.map((k) => `'${k}'`).join(', ')}, valid inputs are [${[...declared.values()].map((k) => `'${k}'`).join(', ')}]`,
      );
    }
    const missing: string[] = [];
    for (const [name, input] of Object.entries(meta.inputs)) {
      if (name in out) {
        if (input.deprecationMessage) {
          this.host.log(
            `::warning::Input '${name}' has been deprecated with message: ${input.deprecationMessage}`,
          );
        }
        continue;
      }
      if (input.default !== undefined && input.default !== null) {
        out[name] = interpolate(String(input.default), scope.ctx);
      } else if (input.required) {
        missing.push(name);
      }
    }
    if (missing.length) throw new Error(`${label}: input required and not supplied: ${missing.join(', ')}`);
    return out;
  }

  /** What a JavaScript action's processes get on top of the step's environment. */
  private actionEnv(
    action: NodeAction,
    stepEnv: Record<string, Value>,
    inputs: Record<string, string>,
  ): Record<string, string> {
    const env: Record<string, string> = {
      ...inputEnv(inputs),
      GITHUB_ACTION_PATH: action.dir,
      GITHUB_ACTION_REPOSITORY: action.repository,
      GITHUB_ACTION_REF: action.ref,
    };
    if (isArtifactAction(action.repository) && stepEnv['GITHUB_SERVER_URL'] === undefined) {
      env['GITHUB_SERVER_URL'] = 'https://github.com';
    }
    return env;
  }

  private async runUses(
    step: Obj,
    uses: string,
    s: { id: string; name: string; own: Record<string, Value>; all: Record<string, Value>; deadline: number },
    scope: Scope,
  ): Promise<StepOutcome> {
    const resolved = await this.resolve(step, uses);
    const given = this.withArgs(step, scope);
    if (resolved.kind === 'checkout') {
      return this.withFiles(s.all, scope, s.id, {}, (env) =>
        checkout(this.host, given, scope.ctx, this.job.workspace, env, s.deadline),
      );
    }
    if (resolved.kind === 'composite') return this.runComposite(resolved, given, s, scope);
    const action = resolved.action;
    const env = this.actionEnv(action, s.all, this.inputs(action.meta, given, scope, action.label));
    if (action.has('post')) {
      const stepEnv = { ...s.all };
      this.job.posts.push({
        name: `Post ${s.name}`,
        condition: action.condition('post'),
        run: () =>
          this.withFiles(stepEnv, scope, s.id, env, (e) => action.phase('post', e, this.job.deadline)),
      });
    }
    return this.withFiles(s.all, scope, s.id, env, (e) => action.phase('main', e, s.deadline));
  }

  private async runComposite(
    r: Extract<Resolved, { kind: 'composite' }>,
    given: Record<string, string>,
    s: { id: string; own: Record<string, Value>; deadline: number },
    scope: Scope,
  ): Promise<StepOutcome> {
    if (scope.depth >= MAX_DEPTH)
      throw new Error(`${r.label}: composite actions nest more than ${MAX_DEPTH} deep`);
    const steps = r.meta.runs['steps'];
    if (!Array.isArray(steps)) throw new Error(`${r.label}: a composite action needs runs.steps`);
    const inputs = this.inputs(r.meta, given, scope, r.label);
    const github = {
      ...(isObj(scope.ctx.contexts['github']) ? (scope.ctx.contexts['github'] as Record<string, Value>) : {}),
      action: s.id,
      action_path: r.dir,
      action_repository: r.repository,
      action_ref: r.ref,
    };
    // A composite action sees no secrets (as on GitHub): what it needs comes as inputs.
    const { secrets: _secrets, ...contexts } = scope.ctx.contexts;
    const stepsCtx: Record<string, Value> = {};
    const inner: Scope = {
      ctx: {
        contexts: { ...contexts, github, inputs, steps: stepsCtx },
        failed: false,
        cancelled: scope.ctx.cancelled,
      },
      steps: stepsCtx,
      env: s.own,
      procEnv: {
        ...scope.procEnv,
        GITHUB_ACTION_PATH: r.dir,
        GITHUB_ACTION_REPOSITORY: r.repository,
        GITHUB_ACTION_REF: r.ref,
      },
      depth: scope.depth + 1,
      deadline: s.deadline,
    };
    await this.runSteps(steps, inner);
    const outputs: Record<string, string> = {};
    for (const [k, o] of Object.entries(r.meta.outputs)) {
      try {
        outputs[k] = interpolate(String(o.value ?? ''), inner.ctx);
      } catch (err) {
        this.host.log(`::error::${r.label}: output ${k}: ${(err as Error).message}`);
        inner.ctx.failed = true;
      }
    }
    return { result: inner.ctx.failed ? Result.FAILURE : Result.SUCCESS, outputs };
  }
}
