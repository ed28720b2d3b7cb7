// JavaScript actions (`runs.using: node20`, `node24`, ...) as `anvil runner` runs them: each of
// `pre`, `main` and `post` with the Node.js that runs the runner, in the workspace, with the step's
// environment, the inputs as INPUT_<NAME> (GitHub's mangling: spaces to _, upper case) and the
// action's state: what `pre` saved (GITHUB_STATE or ::save-state::) is STATE_<name> in `main`, and
// what both saved in `post`.
import fs from 'node:fs';
import path from 'node:path';
import { Result } from './gen/runner/v1/messages_pb.js';
import type { ActionMeta } from './runner-actions.js';
import { CommandReader, parseKeyValueFile } from './runner-commands.js';
import type { JobHost, JobState, StepOutcome } from './runner-types.js';

export type Phase = 'pre' | 'main' | 'post';

/** The INPUT_* variables of a JavaScript action's inputs. */
export function inputEnv(inputs: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.replace(/ /g, '_').toUpperCase()}`] = v;
  return env;
}

/**
 * Whether an action is one of the artifact actions (actions/upload-artifact, download-artifact
 * and their forks): their @actions/artifact refuses any GITHUB_SERVER_URL but github.com's, so
 * they get that one (see docs/actions.md).
 */
export const isArtifactAction = (repository: string) =>
  /(^|\/)(?:[\w.-]*-)?(upload|download)-artifact$/i.test(repository);

/** One use of a JavaScript action (one step): its phases share the action's state. */
export class NodeAction {
  private readonly state: Record<string, string> = {};

  constructor(
    private readonly host: JobHost,
    private readonly job: JobState,
    readonly dir: string,
    readonly meta: ActionMeta,
    readonly label: string,
    readonly repository: string,
    readonly ref: string,
  ) {}

  has(phase: Phase): boolean {
    const v = this.meta.runs[phase];
    return typeof v === 'string' && v.trim() !== '';
  }

  /** `pre-if` or `post-if` (default `always()`). */
  condition(phase: 'pre' | 'post'): string {
    const v = this.meta.runs[`${phase}-if`];
    return v === undefined || v === null || v === '' ? 'always()' : String(v);
  }

  /** Runs a phase with the step's environment (its files and INPUT_* included). */
  async phase(phase: Phase, env: NodeJS.ProcessEnv, deadline: number): Promise<StepOutcome> {
    const script = String(this.meta.runs[phase]);
    const file = path.resolve(this.dir, script);
    if (!file.startsWith(this.dir + path.sep) || !fs.existsSync(file)) {
      throw new Error(`${this.label}: runs.${phase} names ${script}, which the action does not have`);
    }
    const stateFile = path.join(this.job.temp, `state-${this.job.files++}`);
    fs.writeFileSync(stateFile, '');
    const procEnv: NodeJS.ProcessEnv = { ...env, GITHUB_STATE: stateFile };
    for (const [k, v] of Object.entries(this.state)) procEnv[`STATE_${k}`] = v;
    const commands = new CommandReader(this.host, this.job.debug);
    const code = await this.host.exec(
      [process.execPath, file],
      this.job.workspace,
      procEnv,
      deadline,
      commands,
    );
    Object.assign(this.state, commands.state, parseKeyValueFile(fs.readFileSync(stateFile, 'utf8')));
    if (code !== 0) this.host.log(`::error::${this.label} (${phase}) failed with exit code ${code}.`);
    return { result: code === 0 ? Result.SUCCESS : Result.FAILURE, outputs: commands.outputs };
  }
}
