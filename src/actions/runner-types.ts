// What the parts of `anvil runner` that run a job share: the job's state on the host, the scope
// of a list of steps (the job's, or a composite action's), and how they reach the log and run
// processes (implemented by TaskRun in runner-job.ts).
import type { ExprContext, Value } from './expressions.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import type { CommandReader } from './runner-commands.js';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : String(v);

/** A result as the `steps` and `needs` contexts name it. */
export function resultName(r: Result): string {
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

export interface StepOutcome {
  result: Result;
  outputs: Record<string, string>;
}

/** The log and the processes of a task. */
export interface JobHost {
  /** Logs a line of the runner's own (masked). */
  log(line: string): void;
  addMask(value: string): void;
  /**
   * Runs a command; its output lines go through `commands` (workflow commands) when given, else
   * straight to the log. Resolves with the exit code (killed at the deadline).
   */
  exec(
    argv: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    deadline: number,
    commands?: CommandReader,
  ): Promise<number>;
  /** Whether the server cancelled the task. */
  readonly cancelled: boolean;
}

/** A step that runs after the job's steps (an action's `post`), in reverse order of registration. */
export interface PostStep {
  name: string;
  /** `post-if` (default `always()`), evaluated in the job's context when its turn comes. */
  condition: string;
  run(): Promise<StepOutcome>;
}

/** What every step of a job shares. */
export interface JobState {
  workspace: string;
  temp: string;
  /** The environment every process gets (GITHUB_*, RUNNER_*, ACTIONS_*). */
  baseEnv: NodeJS.ProcessEnv;
  /** The job's `env` (workflow and job level), to which GITHUB_ENV adds. */
  env: Record<string, Value>;
  /** Directories GITHUB_PATH added, first first. */
  extraPath: string[];
  /** `defaults.run` of the workflow and the job. */
  runDefaults: Obj;
  /** When the job times out (ms since the epoch). */
  deadline: number;
  /** ACTIONS_STEP_DEBUG: `::debug::` lines are shown. */
  debug: boolean;
  /** Where `uses: owner/repo@ref` actions come from. */
  defaultActionsUrl: string;
  posts: PostStep[];
  /** A counter for the names of the files steps get. */
  files: number;
}

/** The steps of the job, or of one composite action. */
export interface Scope {
  ctx: ExprContext;
  /** The `steps` context of this level. */
  steps: Record<string, Value>;
  /** `env` of the composite action's step, seen by the steps inside (empty for the job). */
  env: Record<string, Value>;
  /** Variables the processes of this level get but expressions do not see (GITHUB_ACTION_PATH). */
  procEnv: Record<string, string>;
  /** 0 for the job's steps, 1 inside a composite action, ... */
  depth: number;
  /** When the steps of this level time out (the composite action's step's timeout inside one). */
  deadline: number;
}
