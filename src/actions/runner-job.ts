// How `anvil runner` runs one task on the host: the job of the task's workflow_payload, each
// `run:` step in a shell (bash, sh, python or a `command {0}` template) in a temporary workspace
// with the step's environment and the job's secrets, `uses: actions/checkout@...` done natively
// (a clone from Anvil over HTTP with the job token, kept as the repository's credentials as
// actions/checkout does), logs streamed with UpdateLog (secret values masked) and the result,
// step states and job outputs reported with UpdateTask. GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH,
// `if:`, `continue-on-error`, `timeout-minutes` and `::add-mask::` work as on GitHub.
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
import type { RunnerClient } from './runner-client.js';

/** Labels of jobs this runner runs on the host itself. */
export const HOST_LABELS = ['self-hosted', 'host'];
const DEFAULT_JOB_MINUTES = 360;
const FLUSH_MS = 1000;
const REPORT_MS = 5000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

interface StepOutcome {
  result: Result;
  outputs: Record<string, string>;
}

/** Parses `key=value` lines and `key<<DELIMITER` blocks (GITHUB_OUTPUT and GITHUB_ENV files). */
export function parseKeyValueFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, key, delim] = heredoc;
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
      out[key!.trim()] = value.join('\n');
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return out;
}

export class TaskRun {
  private readonly rows: Array<{ time: Timestamp; content: string }> = [];
  private acked = 0;
  private readonly masks = new Set<string>();
  private readonly steps: StepState[] = [];
  private cancelled = false;
  private current: ReturnType<typeof spawn> | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly startedAt = timestampNow();

  constructor(
    private readonly client: RunnerClient,
    private readonly task: Task,
    private readonly runnerName: string,
    private readonly say: (msg: string) => void = () => undefined,
  ) {
    for (const v of Object.values(task.secrets)) this.addMask(v);
    for (const k of ['ACTIONS_RUNTIME_TOKEN', 'gitea_runtime_token', 'token']) {
      const v = task.context?.[k];
      if (typeof v === 'string') this.addMask(v);
    }
  }

  private addMask(value: string): void {
    for (const part of [value, ...value.split('\n')]) {
      const t = part.trim();
      if (t.length >= 3) this.masks.add(t);
    }
  }

  private mask(s: string): string {
    let out = s;
    for (const m of [...this.masks].sort((a, b) => b.length - a.length)) {
      if (out.includes(m)) out = out.split(m).join('***');
    }
    return out;
  }

  private log(line: string): void {
    const add = /^::add-mask::(.*)$/.exec(line);
    if (add) {
      this.addMask(add[1]!);
      return;
    }
    this.rows.push({ time: timestampNow(), content: this.mask(line) });
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
      if (r.state?.result === Result.CANCELLED && !this.cancelled) {
        this.cancelled = true;
        this.current?.kill('SIGTERM');
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
    if (this.cancelled) result = Result.CANCELLED;
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
          arch: process.arch === 'arm64' ? 'ARM64' : 'X64',
          name: this.runnerName,
          temp,
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
      GITHUB_RUN_ID: contextStr('run_id'),
      GITHUB_RUN_NUMBER: contextStr('run_number'),
      GITHUB_RUN_ATTEMPT: contextStr('run_attempt'),
      GITHUB_JOB: jobId,
      GITHUB_WORKFLOW: contextStr('workflow'),
      GITHUB_EVENT_NAME: contextStr('event_name'),
      GITHUB_ACTOR: contextStr('actor'),
      GITHUB_SERVER_URL: serverUrl,
      GITHUB_API_URL: contextStr('api_url'),
      RUNNER_OS: 'Linux',
      RUNNER_NAME: this.runnerName,
      RUNNER_TEMP: temp,
      ACTIONS_RUNTIME_TOKEN: contextStr('ACTIONS_RUNTIME_TOKEN') || contextStr('gitea_runtime_token'),
      ACTIONS_RESULTS_URL: contextStr('ACTIONS_RESULTS_URL') || `${serverUrl}/`,
      ACTIONS_RUNTIME_URL: `${serverUrl}/api/actions_pipeline/`,
    };
    const eventPath = path.join(temp, 'event.json');
    fs.writeFileSync(eventPath, JSON.stringify(event));
    baseEnv['GITHUB_EVENT_PATH'] = eventPath;

    const defaults = (o: unknown) =>
      isObj(o) && isObj(o['defaults']) && isObj(o['defaults']['run']) ? o['defaults']['run'] : {};
    const runDefaults = { ...defaults(doc), ...defaults(job) };
    const deadline = Date.now() + Number(job['timeout-minutes'] ?? DEFAULT_JOB_MINUTES) * 60_000;
    const extraPath: string[] = [];
    const steps = Array.isArray(job['steps']) ? job['steps'] : [];

    for (let i = 0; i < steps.length; i++) {
      const step = isObj(steps[i]) ? (steps[i] as Obj) : {};
      const id = str(step['id']) ?? `__${i}`;
      const run = str(step['run']);
      const uses = str(step['uses']);
      const name = interpolate(
        str(step['name']) ?? (run ? run.split('\n', 1)[0]! : (uses ?? `step ${i + 1}`)),
        ctx,
      );
      const state = create(StepStateSchema, {
        id: BigInt(i),
        startedAt: timestampNow(),
        logIndex: BigInt(this.rows.length),
      });
      this.steps.push(state);
      ctx.cancelled = this.cancelled;
      let outcome: StepOutcome;
      if (!condition(step['if'], ctx)) {
        this.log(`Skipping step ${name}`);
        outcome = { result: Result.SKIPPED, outputs: {} };
      } else {
        this.log(`⭒ ${name}`);
        const stepEnv: Record<string, Value> = { ...env };
        ctx.contexts['env'] = stepEnv;
        if (isObj(step['env'])) {
          for (const [k, v] of Object.entries(step['env'])) stepEnv[k] = interpolate(String(v ?? ''), ctx);
        }
        const files = {
          GITHUB_OUTPUT: path.join(temp, `output-${i}`),
          GITHUB_ENV: path.join(temp, `env-${i}`),
          GITHUB_PATH: path.join(temp, `path-${i}`),
          GITHUB_STEP_SUMMARY: path.join(temp, `summary-${i}`),
        };
        for (const f of Object.values(files)) fs.writeFileSync(f, '');
        const procEnv: NodeJS.ProcessEnv = { ...baseEnv, ...files, GITHUB_ACTION: id };
        for (const [k, v] of Object.entries(stepEnv)) procEnv[k] = String(v ?? '');
        if (extraPath.length) procEnv['PATH'] = [...extraPath, procEnv['PATH'] ?? ''].join(path.delimiter);
        const minutes = Number(step['timeout-minutes'] ?? 0);
        const stepDeadline = minutes > 0 ? Math.min(deadline, Date.now() + minutes * 60_000) : deadline;
        try {
          if (run !== undefined) {
            outcome = await this.runScript(
              interpolate(run, ctx),
              step,
              runDefaults,
              workspace,
              temp,
              i,
              procEnv,
              stepDeadline,
            );
          } else if (uses && /(^|\/)actions\/checkout(@|$)/.test(uses)) {
            const withArgs: Record<string, string> = {};
            if (isObj(step['with'])) {
              for (const [k, v] of Object.entries(step['with']))
                withArgs[k] = interpolate(String(v ?? ''), ctx);
            }
            outcome = await this.checkout(withArgs, ctx, workspace, procEnv, stepDeadline);
          } else {
            this.log(
              `::error::uses: ${uses ?? '(nothing)'} is not supported: anvil runner runs run: steps and actions/checkout`,
            );
            outcome = { result: Result.FAILURE, outputs: {} };
          }
        } catch (err) {
          this.log(`::error::${(err as Error).message}`);
          outcome = { result: Result.FAILURE, outputs: {} };
        }
        if (outcome.result === Result.SUCCESS || outcome.result === Result.FAILURE) {
          const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
          outcome.outputs = parseKeyValueFile(read(files.GITHUB_OUTPUT));
          for (const [k, v] of Object.entries(parseKeyValueFile(read(files.GITHUB_ENV)))) env[k] = v;
          for (const p of read(files.GITHUB_PATH)
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean)
            .reverse()) {
            extraPath.unshift(p);
          }
        }
        ctx.contexts['env'] = env;
      }
      const continueOnError = step['continue-on-error'] === true || step['continue-on-error'] === 'true';
      const conclusion =
        outcome.result === Result.FAILURE && continueOnError ? Result.SUCCESS : outcome.result;
      stepsCtx[id] = {
        outputs: outcome.outputs,
        outcome: resultName(outcome.result),
        conclusion: resultName(conclusion),
      };
      if (conclusion === Result.FAILURE) ctx.failed = true;
      state.result = conclusion;
      state.stoppedAt = timestampNow();
      state.logLength = BigInt(this.rows.length) - state.logIndex;
    }

    const outputs: Record<string, string> = {};
    if (isObj(job['outputs'])) {
      for (const [k, v] of Object.entries(job['outputs'])) outputs[k] = interpolate(String(v ?? ''), ctx);
    }
    return {
      result: ctx.failed ? Result.FAILURE : this.cancelled ? Result.CANCELLED : Result.SUCCESS,
      outputs,
    };
  }

  private async runScript(
    script: string,
    step: Obj,
    runDefaults: Obj,
    workspace: string,
    temp: string,
    index: number,
    env: NodeJS.ProcessEnv,
    deadline: number,
  ): Promise<StepOutcome> {
    const shell = str(step['shell']) ?? str(runDefaults['shell']) ?? (hasCommand('bash') ? 'bash' : 'sh');
    const ext = shell === 'python' ? '.py' : shell === 'node' ? '.js' : '.sh';
    const file = path.join(temp, `step-${index}${ext}`);
    fs.writeFileSync(file, script.endsWith('\n') ? script : `${script}\n`);
    const argv = shellCommand(shell, file);
    const dir = str(step['working-directory']) ?? str(runDefaults['working-directory']);
    const cwd = dir ? path.resolve(workspace, dir) : workspace;
    const code = await this.exec(argv, cwd, env, deadline);
    if (code !== 0) this.log(`::error::Process completed with exit code ${code}.`);
    return { result: code === 0 ? Result.SUCCESS : Result.FAILURE, outputs: {} };
  }

  /** actions/checkout: the repository (or `with.repository`) at the run's commit (or `with.ref`). */
  private async checkout(
    withArgs: Record<string, string>,
    ctx: ExprContext,
    workspace: string,
    env: NodeJS.ProcessEnv,
    deadline: number,
  ): Promise<StepOutcome> {
    const github = ctx.contexts['github'] as Record<string, Value>;
    const secrets = ctx.contexts['secrets'] as Record<string, string>;
    const server = String(github['server_url'] ?? '');
    const repository = withArgs['repository'] || String(github['repository'] ?? '');
    const token = withArgs['token'] || secrets['GITHUB_TOKEN'] || String(github['token'] ?? '');
    const dest = path.resolve(workspace, withArgs['path'] ?? '.');
    if (dest !== workspace && !dest.startsWith(workspace + path.sep))
      throw new Error('checkout path must be inside the workspace');
    fs.mkdirSync(dest, { recursive: true });
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    this.addMask(basic);
    const sameRepo = repository === github['repository'];
    const wanted = withArgs['ref'] || (sameRepo ? String(github['sha'] ?? '') : '');
    const ref = sameRepo && !withArgs['ref'] ? String(github['ref'] ?? '') : '';
    const depth =
      withArgs['fetch-depth'] === '0' ? [] : [`--depth=${Number(withArgs['fetch-depth'] || 1) || 1}`];
    const gitEnv = { ...env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
    const git = (args: string[]) => this.exec(['git', ...args], dest, gitEnv, deadline);
    const url = `${server}/${repository}.git`;
    this.log(`Checking out ${repository} (${wanted || 'default branch'}) from ${url}`);
    const steps: string[][] = [
      ['init', '-q'],
      ['config', '--local', `http.${server}/.extraheader`, `AUTHORIZATION: basic ${basic}`],
      ['remote', 'add', 'origin', url],
    ];
    if (ref.startsWith('refs/heads/') && /^[0-9a-f]{40,64}$/.test(wanted)) {
      const branch = ref.slice('refs/heads/'.length);
      steps.push([
        'fetch',
        '--no-tags',
        '-q',
        ...depth,
        'origin',
        `+${wanted}:refs/remotes/origin/${branch}`,
      ]);
      steps.push(['checkout', '-q', '-B', branch, `refs/remotes/origin/${branch}`]);
    } else {
      steps.push(['fetch', '--no-tags', '-q', ...depth, 'origin', wanted || 'HEAD']);
      steps.push(['checkout', '-q', '--detach', 'FETCH_HEAD']);
    }
    for (const args of steps) {
      const code = await git(args);
      if (code !== 0) {
        this.log(`::error::git ${args[0]} failed with exit code ${code}`);
        return { result: Result.FAILURE, outputs: {} };
      }
    }
    return { result: Result.SUCCESS, outputs: {} };
  }

  /** Runs a command, its output going to the log line by line; resolves with its exit code. */
  private exec(argv: string[], cwd: string, env: NodeJS.ProcessEnv, deadline: number): Promise<number> {
    return new Promise((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      this.current = child;
      const kill = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
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
        this.current = undefined;
        resolve(exit);
      };
      for (const stream of [child.stdout, child.stderr]) {
        const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
        rl.on('line', (line) => this.log(line));
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

function resultName(r: Result): string {
  return r === Result.SUCCESS
    ? 'success'
    : r === Result.FAILURE
      ? 'failure'
      : r === Result.CANCELLED
        ? 'cancelled'
        : r === Result.SKIPPED
          ? 'skipped'
          : '';
}

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
