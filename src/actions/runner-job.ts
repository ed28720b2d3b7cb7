// How `anvil runner` runs one task on the host: the job of the task's workflow_payload in a
// temporary workspace, with the job's environment (GITHUB_*, RUNNER_*, ACTIONS_* for the artifact
// service), its secrets and contexts; the steps themselves are run by runner-steps.ts. Logs are
// streamed with UpdateLog (secret values and ::add-mask:: values masked) and the result, step
// states and job outputs reported with UpdateTask; a cancelled task's process is killed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parse } from 'yaml';
import { timestampNow, type Timestamp } from '@bufbuild/protobuf/wkt';
import { create } from '@bufbuild/protobuf';
import {
  LogRowSchema,
  Result,
  StepStateSchema,
  type StepState,
  type Task,
} from './gen/runner/v1/messages_pb.js';
import { condition, interpolate, type ExprContext, type Value } from './expressions.js';
import { ActionStore } from './runner-actions.js';
import { applyMasks, maskForms } from './runner-mask.js';
import { sandboxArgv, type SandboxPaths } from './runner-sandbox.js';
import type { CommandReader } from './runner-commands.js';
import type { RunnerClient } from './runner-client.js';
import { StepRunner } from './runner-steps.js';
import { isObj, resultName, type JobHost, type JobState, type Obj, type Scope } from './runner-types.js';

/** Labels of jobs this runner runs on the host itself. */
export const HOST_LABELS = ['self-hosted', 'host'];
const DEFAULT_JOB_MINUTES = 360;
const FLUSH_MS = 1000;
const REPORT_MS = 5000;
/** Rows that make the runner send the log at once rather than at the next tick. */
const FLUSH_ROWS = 200;

export interface TaskRunOptions {
  /** Where fetched actions (and RUNNER_TOOL_CACHE) are kept between tasks. */
  cacheDir?: string;
  /** The bwrap binary to run the job's processes in a sandbox with; on the host when absent. */
  bwrap?: string;
}

/** The runner's cache by default: $XDG_CACHE_HOME/anvil-runner, else ~/.cache/anvil-runner. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache'), 'anvil-runner');
}

export class TaskRun implements JobHost {
  private readonly rows: Array<{ time: Timestamp; content: string }> = [];
  private acked = 0;
  private readonly masks = new Set<string>();
  private readonly steps: StepState[] = [];
  private wasCancelled = false;
  private readonly running = new Set<() => void>();
  private sandbox: SandboxPaths | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly startedAt = timestampNow();

  constructor(
    private readonly client: RunnerClient,
    private readonly task: Task,
    private readonly runnerName: string,
    private readonly say: (msg: string) => void = () => undefined,
    private readonly options: TaskRunOptions = {},
  ) {
    for (const v of Object.values(task.secrets)) this.addMask(v);
    for (const k of ['ACTIONS_RUNTIME_TOKEN', 'gitea_runtime_token', 'token']) {
      const v = task.context?.[k];
      if (typeof v === 'string') this.addMask(v);
    }
  }

  get cancelled(): boolean {
    return this.wasCancelled;
  }

  addMask(value: string): void {
    for (const form of maskForms(value)) this.masks.add(form);
  }

  log(line: string): void {
    this.rows.push({ time: timestampNow(), content: applyMasks(line, this.masks) });
    if (this.rows.length - this.acked >= FLUSH_ROWS) void this.flush();
  }

  /** Sends the rows the server has not acknowledged. */
  private flush(noMore = false): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const pending = this.rows.slice(this.acked);
      if (!pending.length && !noMore) return;
      const r = await this.client.updateLog({
        taskId: this.task.id,
        index: BigInt(this.acked),
        rows: pending.map((row) => create(LogRowSchema, row)),
        noMore,
      });
      this.acked = Math.max(this.acked, Number(r.ackIndex));
    });
    return this.flushing.catch((err: unknown) => this.say(`log upload failed: ${(err as Error).message}`));
  }

  /** Reports the task still running; learns whether the server cancelled it. */
  private async report(): Promise<void> {
    try {
      const r = await this.client.updateTask({
        state: { id: this.task.id, result: Result.UNSPECIFIED, startedAt: this.startedAt, steps: this.steps },
      });
      if (r.state?.result === Result.CANCELLED && !this.wasCancelled) {
        this.wasCancelled = true;
        for (const kill of this.running) kill();
      }
    } catch (err) {
      this.say(`state report failed: ${(err as Error).message}`);
    }
  }

  /** Runs the task to its end and reports it; returns its result. */
  async run(): Promise<Result> {
    const flushTimer = setInterval(() => void this.flush(), FLUSH_MS);
    const reportTimer = setInterval(() => void this.report(), REPORT_MS);
    let result: Result = Result.FAILURE;
    let outputs: Record<string, string> = {};
    const base = fs.mkdtempSync(path.join(os.tmpdir(), `anvil-runner-${this.task.id}-`));
    try {
      await this.report();
      ({ result, outputs } = await this.runJob(base));
    } catch (err) {
      this.log(`::error::${(err as Error).message}`);
      result = Result.FAILURE;
    } finally {
      clearInterval(flushTimer);
      clearInterval(reportTimer);
      fs.rmSync(base, { recursive: true, force: true });
    }
    if (this.wasCancelled) result = Result.CANCELLED;
    this.log(
      `Job ${result === Result.SUCCESS ? 'succeeded' : result === Result.SKIPPED ? 'skipped' : 'failed'}`,
    );
    await this.flush(true);
    await this.client.updateTask({
      state: {
        id: this.task.id,
        result,
        startedAt: this.startedAt,
        stoppedAt: timestampNow(),
        steps: this.steps,
      },
      outputs,
    });
    return result;
  }

  private async runJob(base: string): Promise<{ result: Result; outputs: Record<string, string> }> {
    const doc = parse(Buffer.from(this.task.workflowPayload ?? new Uint8Array()).toString('utf8')) as unknown;
    const jobs = isObj(doc) && isObj(doc['jobs']) ? doc['jobs'] : {};
    const [jobId, rawJob] = Object.entries(jobs)[0] ?? [];
    if (!jobId || !isObj(rawJob)) throw new Error('the task has no job');
    const job = rawJob;
    const wfEnv = isObj(doc) && isObj(doc['env']) ? doc['env'] : {};
    const labels = (Array.isArray(job['runs-on']) ? job['runs-on'] : [job['runs-on']]).map((l) =>
      String(l ?? ''),
    );
    if (!labels.some((l) => HOST_LABELS.includes(l))) {
      throw new Error(
        `anvil runner runs jobs on the host only (runs-on: ${HOST_LABELS.join(' or ')}); this job runs on ${labels.join(', ')}`,
      );
    }

    const workspace = path.join(base, 'workspace');
    const temp = path.join(base, 'temp');
    const home = path.join(base, 'home');
    for (const d of [workspace, temp, home]) fs.mkdirSync(d, { recursive: true });
    const cacheDir = this.options.cacheDir ?? path.join(os.tmpdir(), 'anvil-runner-cache');
    const toolCache = path.join(cacheDir, 'tool-cache');
    fs.mkdirSync(toolCache, { recursive: true });
    fs.mkdirSync(path.join(cacheDir, 'actions'), { recursive: true });
    if (this.options.bwrap) {
      this.sandbox = { jobDir: base, readOnly: [path.join(cacheDir, 'actions')], readWrite: [toolCache] };
    }

    const github = { ...(this.task.context ?? {}) } as Record<string, Value>;
    github['workspace'] = workspace;
    const event = isObj(github['event']) ? (github['event'] as Record<string, Value>) : {};
    const matrix: Record<string, Value> = {};
    const strategy = isObj(job['strategy']) ? job['strategy'] : {};
    if (isObj(strategy['matrix'])) {
      for (const [k, v] of Object.entries(strategy['matrix']))
        matrix[k] = (Array.isArray(v) ? v[0] : v) as Value;
    }
    const needs: Record<string, Value> = {};
    for (const [k, n] of Object.entries(this.task.needs)) {
      needs[k] = { outputs: { ...n.outputs }, result: resultName(n.result) };
    }
    const stepsCtx: Record<string, Value> = {};
    const env: Record<string, Value> = {};
    const arch = process.arch === 'arm64' ? 'ARM64' : process.arch === 'arm' ? 'ARM' : 'X64';
    const ctx: ExprContext = {
      contexts: {
        github,
        env,
        secrets: { ...this.task.secrets },
        vars: { ...this.task.vars },
        matrix,
        needs,
        steps: stepsCtx,
        inputs: isObj(event['inputs']) ? event['inputs'] : {},
        runner: {
          os: 'Linux',
          arch,
          name: this.runnerName,
          temp,
          tool_cache: toolCache,
          environment: 'self-hosted',
        },
        job: { status: 'success' },
        strategy: { 'fail-fast': true, 'job-index': 0, 'job-total': 1 },
      },
      failed: false,
      cancelled: false,
    };
    const evalEnv = (map: unknown) => {
      if (!isObj(map)) return;
      for (const [k, v] of Object.entries(map)) env[k] = interpolate(String(v ?? ''), ctx);
    };
    evalEnv(wfEnv);
    evalEnv(job['env']);

    if (job['if'] !== undefined && !condition(job['if'], ctx)) {
      this.log(`Skipping job ${jobId}: its if condition is false`);
      return { result: Result.SKIPPED, outputs: {} };
    }

    const contextStr = (k: string) => (typeof github[k] === 'string' ? (github[k] as string) : '');
    const serverUrl = contextStr('server_url');
    const debug = [this.task.secrets['ACTIONS_STEP_DEBUG'], this.task.vars['ACTIONS_STEP_DEBUG']].some(
      (v) => v?.toLowerCase() === 'true',
    );
    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: home,
      LANG: process.env['LANG'] ?? 'C.UTF-8',
      TMPDIR: temp,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITEA_ACTIONS: 'true',
      FORGEJO_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_REPOSITORY: contextStr('repository'),
      GITHUB_REPOSITORY_OWNER: contextStr('repository_owner'),
      GITHUB_SHA: contextStr('sha'),
      GITHUB_REF: contextStr('ref'),
      GITHUB_REF_NAME: contextStr('ref_name'),
      GITHUB_REF_TYPE: contextStr('ref_type'),
      GITHUB_HEAD_REF: contextStr('head_ref'),
      GITHUB_BASE_REF: contextStr('base_ref'),
      GITHUB_RUN_ID: contextStr('run_id'),
      GITHUB_RUN_NUMBER: contextStr('run_number'),
      GITHUB_RUN_ATTEMPT: contextStr('run_attempt'),
      GITHUB_RETENTION_DAYS: contextStr('retention_days'),
      GITHUB_JOB: jobId,
      GITHUB_WORKFLOW: contextStr('workflow'),
      GITHUB_EVENT_NAME: contextStr('event_name'),
      GITHUB_ACTOR: contextStr('actor'),
      GITHUB_TRIGGERING_ACTOR: contextStr('triggering_actor'),
      GITHUB_SERVER_URL: serverUrl,
      GITHUB_API_URL: contextStr('api_url'),
      GITHUB_GRAPHQL_URL: contextStr('graphql_url'),
      RUNNER_OS: 'Linux',
      RUNNER_ARCH: arch,
      RUNNER_NAME: this.runnerName,
      RUNNER_ENVIRONMENT: 'self-hosted',
      RUNNER_TEMP: temp,
      RUNNER_TOOL_CACHE: toolCache,
      RUNNER_WORKSPACE: base,
      ...(debug ? { RUNNER_DEBUG: '1' } : {}),
      ACTIONS_RUNTIME_TOKEN: contextStr('ACTIONS_RUNTIME_TOKEN') || contextStr('gitea_runtime_token'),
      ACTIONS_RESULTS_URL: contextStr('ACTIONS_RESULTS_URL') || `${serverUrl}/`,
      ACTIONS_RUNTIME_URL: `${serverUrl}/api/actions_pipeline/`,
      ACTIONS_CACHE_URL: `${serverUrl}/api/actions_cache/`,
    };
    const eventPath = path.join(temp, 'event.json');
    fs.writeFileSync(eventPath, JSON.stringify(event));
    baseEnv['GITHUB_EVENT_PATH'] = eventPath;

    const defaults = (o: unknown) =>
      isObj(o) && isObj(o['defaults']) && isObj(o['defaults']['run']) ? o['defaults']['run'] : {};
    const deadline = Date.now() + Number(job['timeout-minutes'] ?? DEFAULT_JOB_MINUTES) * 60_000;
    // `self` is Forgejo's name for this instance (a server resolves it before sending it).
    const actionsUrl = contextStr('gitea_default_actions_url') || contextStr('forgejo_default_actions_url');
    const state: JobState = {
      workspace,
      temp,
      baseEnv,
      env,
      extraPath: [],
      runDefaults: { ...defaults(doc), ...defaults(job) },
      deadline,
      debug,
      defaultActionsUrl: !actionsUrl || actionsUrl === 'self' ? serverUrl : actionsUrl,
      posts: [],
      files: 0,
    };
    // Actions on this instance are fetched with the job token (private ones the job may read).
    const token = contextStr('token');
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
    this.addMask(header.slice('AUTHORIZATION: basic '.length));
    const store = new ActionStore(
      path.join(cacheDir, 'actions'),
      (line) => this.log(line),
      serverUrl && token ? { origin: serverUrl, header } : undefined,
      { PATH: process.env['PATH'], HOME: home, LANG: baseEnv['LANG'] },
    );
    const runner = new StepRunner(this, state, store);
    const scope: Scope = { ctx, steps: stepsCtx, env: {}, procEnv: {}, depth: 0, deadline };
    const steps = Array.isArray(job['steps']) ? (job['steps'] as unknown[]) : [];

    await runner.prepare(steps, scope);
    await runner.runSteps(steps, scope, {
      // The server learns of each step as it starts and ends, not only at the next report.
      start: (i) => {
        this.steps.push(
          create(StepStateSchema, {
            id: BigInt(i),
            startedAt: timestampNow(),
            logIndex: BigInt(this.rows.length),
          }),
        );
        void this.flush().then(() => this.report());
      },
      end: (i, result) => {
        const s = this.steps[i]!;
        s.result = result;
        s.stoppedAt = timestampNow();
        s.logLength = BigInt(this.rows.length) - s.logIndex;
        void this.flush().then(() => this.report());
      },
    });
    await runner.runPosts(scope);

    ctx.contexts['env'] = env;
    const outputs: Record<string, string> = {};
    if (isObj(job['outputs'])) {
      for (const [k, v] of Object.entries(job['outputs'] as Obj)) {
        outputs[k] = interpolate(String(v ?? ''), ctx);
      }
    }
    return {
      result: ctx.failed ? Result.FAILURE : this.wasCancelled ? Result.CANCELLED : Result.SUCCESS,
      outputs,
    };
  }
  /**
   * Runs a command, its output going to the log line by line (through `commands`, the workflow
   * commands, when given); resolves with its exit code.
   */
  exec(
    argv: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    deadline: number,
    commands?: CommandReader,
  ): Promise<number> {
    return new Promise((resolve) => {
      // In the sandbox, killing bwrap ends its PID namespace, so every process of the step.
      const full = this.sandbox ? sandboxArgv(this.options.bwrap!, argv, cwd, this.sandbox) : argv;
      // Its own process group, so that a kill reaches the children it started too.
      const child = spawn(full[0]!, full.slice(1), {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const kill = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      this.running.add(kill);
      if (this.wasCancelled) kill();
      const timer = setTimeout(
        () => {
          this.log('::error::The step timed out.');
          kill();
        },
        Math.max(0, deadline - Date.now()),
      );
      let open = 2;
      let exit: number | undefined;
      const done = () => {
        if (open > 0 || exit === undefined) return;
        clearTimeout(timer);
        this.running.delete(kill);
        resolve(exit);
      };
      for (const stream of [child.stdout, child.stderr]) {
        const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
        rl.on('line', (line) => (commands ? commands.line(line) : this.log(line)));
        rl.on('close', () => {
          open--;
          done();
        });
      }
      child.on('error', (err) => {
        this.log(`::error::${err.message}`);
        exit = 127;
        open = 0;
        done();
      });
      child.on('close', (code, signal) => {
        exit = code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1);
        done();
      });
    });
  }
}
