// `anvil runner`: a runner for Anvil's actions in the same package.
//   anvil runner register --instance URL --token T [--name N] [--labels self-hosted,host]
//       registers with a registration token and keeps the runner's uuid and token in a .runner
//       file (mode 0600);
//   anvil runner daemon [--once] [--cache-dir DIR] [--sandbox bwrap|none]
//       declares the runner's labels, then polls FetchTask and runs each task (runner-job.ts), in
//       a bubblewrap sandbox when bwrap is installed (runner-sandbox.ts) unless --sandbox none
//       (or `sandbox` in the .runner file) says to run on the host; with --once it runs one task
//       and exits (with the task's success). The actions jobs use are fetched into the cache
//       directory and kept there between tasks.
import fs from 'node:fs';
import os from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { AppError } from '../errors.js';
import { VERSION } from '../version.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import { RunnerClient, RunnerClientError } from './runner-client.js';
import { HOST_LABELS, TaskRun, defaultCacheDir } from './runner-job.js';
import { SANDBOX_MODES, findBwrap, type SandboxMode } from './runner-sandbox.js';

export interface RunnerFile {
  id: number;
  uuid: string;
  token: string;
  name: string;
  address: string;
  labels: string[];
  /** How jobs run: in a bubblewrap sandbox (the default) or on the host (`none`). */
  sandbox?: SandboxMode;
  /** Tasks run at a time (Forgejo's runner `capacity`; 1 when absent). */
  capacity?: number;
}

const fileOption = () =>
  new Option('--file <path>', 'where the runner keeps its registration').default('.runner');

function parseLabels(value: string): string[] {
  const labels = value
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  if (!labels.length) throw new InvalidArgumentError('at least one label is needed');
  return labels;
}

function parseSandbox(value: string): SandboxMode {
  if (!SANDBOX_MODES.includes(value as SandboxMode)) {
    throw new InvalidArgumentError(`must be one of ${SANDBOX_MODES.join(', ')}`);
  }
  return value as SandboxMode;
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`"${value}" is not a positive number of seconds`);
  return n;
}

const MAX_CAPACITY = 64;

function parseCapacity(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CAPACITY)
    throw new InvalidArgumentError(`"${value}" is not a whole number of tasks from 1 to ${MAX_CAPACITY}`);
  return n;
}

export function readRunnerFile(file: string): RunnerFile {
  let data: RunnerFile;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8')) as RunnerFile;
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message} (register the runner first)`);
  }
  if (!data.uuid || !data.token || !data.address) throw new Error(`${file} is not a runner registration`);
  if (data.sandbox !== undefined && !SANDBOX_MODES.includes(data.sandbox)) {
    throw new Error(
      `${file}: sandbox must be one of ${SANDBOX_MODES.join(', ')} [got: ${String(data.sandbox)}]`,
    );
  }
  if (
    data.capacity !== undefined &&
    !(Number.isInteger(data.capacity) && data.capacity >= 1 && data.capacity <= MAX_CAPACITY)
  ) {
    throw new Error(
      `${file}: capacity must be a whole number from 1 to ${MAX_CAPACITY} [got: ${String(data.capacity)}]`,
    );
  }
  return data;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function register(opts: {
  instance: string;
  token: string;
  name?: string;
  labels: string[];
  file: string;
}) {
  let url: URL;
  try {
    url = new URL(opts.instance);
  } catch {
    throw new Error(`--instance must be the URL of the Anvil server [got: ${opts.instance}]`);
  }
  const address = url.toString().replace(/\/+$/, '');
  const name = opts.name ?? os.hostname();
  const client = new RunnerClient(address);
  const res = await client.register({ name, token: opts.token, version: VERSION.anvil, labels: opts.labels });
  const r = res.runner;
  if (!r) throw new Error('the server did not return the runner');
  const data: RunnerFile = {
    id: Number(r.id),
    uuid: r.uuid,
    token: r.token,
    name: r.name,
    address,
    labels: r.labels,
  };
  fs.writeFileSync(opts.file, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
  console.log(
    `Runner ${r.name} registered with ${address} (labels: ${r.labels.join(', ')}); saved in ${opts.file}.`,
  );
}

async function daemon(opts: {
  file: string;
  once: boolean;
  interval: number;
  wait?: number;
  cacheDir?: string;
  sandbox?: SandboxMode;
  capacity?: number;
}): Promise<number> {
  const reg = readRunnerFile(opts.file);
  const client = new RunnerClient(reg.address, { uuid: reg.uuid, token: reg.token });
  const say = (msg: string) => console.error(`[${reg.name}] ${msg}`);
  const mode = opts.sandbox ?? reg.sandbox ?? 'bwrap';
  const bwrap = mode === 'bwrap' ? findBwrap() : undefined;
  if (mode === 'none') say('sandbox off (sandbox: none): jobs run on the host');
  else if (!bwrap) say('bwrap (bubblewrap) is not installed: jobs run on the host, without a sandbox');
  else say(`jobs run in a sandbox (${bwrap})`);
  await client.declare({ version: VERSION.anvil, labels: reg.labels });
  say(`declared labels ${reg.labels.join(', ')}; waiting for tasks from ${reg.address}`);
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const until = opts.wait ? Date.now() + opts.wait * 1000 : Infinity;
  const capacity = opts.capacity ?? reg.capacity ?? 1;
  if (capacity > 1) say(`runs up to ${capacity} tasks at a time`);
  /** The tasks under way, each its promise of its result. */
  const running = new Set<Promise<Result>>();
  let version = 0n;
  while (!stopping) {
    // At capacity: wait for a task to end before asking for another.
    if (running.size >= capacity) {
      await Promise.race(running);
      continue;
    }
    let task;
    try {
      const res = await client.fetchTask({ tasksVersion: version });
      if (res.tasksVersion > version) version = res.tasksVersion;
      task = res.task;
      if (task) version = 0n;
    } catch (err) {
      if (err instanceof RunnerClientError && err.code === 'unauthenticated') {
        throw new Error('the server no longer knows this runner (was it deleted?): register it again');
      }
      say(`fetching a task failed: ${(err as Error).message}`);
    }
    if (task) {
      const t = task;
      say(`task ${t.id}: started`);
      const work: Promise<Result> = new TaskRun(client, t, reg.name, say, {
        cacheDir: opts.cacheDir ?? defaultCacheDir(),
        ...(bwrap ? { bwrap } : {}),
      })
        .run()
        .then(
          (result) => {
            say(`task ${t.id}: ${Result[result]?.toLowerCase() ?? result}`);
            return result;
          },
          (err: unknown) => {
            say(`task ${t.id}: the runner failed: ${(err as Error).message}`);
            return Result.FAILURE;
          },
        )
        .finally(() => running.delete(work));
      running.add(work);
      if (opts.once) {
        const result = await work;
        return result === Result.SUCCESS ? 0 : 1;
      }
      continue;
    }
    if (Date.now() > until) {
      say('no task came');
      return 2;
    }
    // Idle (or nothing more to take): poll again later, or as soon as a task under way ends.
    await Promise.race([sleep(opts.interval * 1000), ...running]);
  }
  await Promise.allSettled(running);
  return 0;
}

/** Failures reach the user as one line (`anvil: message`), not a stack trace. */
function plain<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('bad_request', err instanceof Error ? err.message : String(err));
    }
  };
}

/** The `runner` command with its `register` and `daemon` subcommands. */
export function runnerCommand(): Command {
  const runner = new Command('runner').description(
    `an actions runner for Anvil: runs jobs whose runs-on is ${HOST_LABELS.join(' or ')} on this host`,
  );

  runner
    .command('register')
    .description('register this runner with an Anvil server')
    .requiredOption('--instance <url>', 'URL of the Anvil server')
    .requiredOption('--token <token>', 'registration token (from .../actions/runners/registration-token)')
    .option('--name <name>', 'runner name (default: the host name)')
    .option('--labels <labels>', 'comma-separated labels', parseLabels, HOST_LABELS)
    .addOption(fileOption())
    .action(plain(register));

  runner
    .command('daemon')
    .description('fetch and run tasks')
    .addOption(fileOption())
    .option('--once', 'run one task, then exit with its success', false)
    .option('--interval <seconds>', 'seconds between polls when idle', parseSeconds, 2)
    .option('--wait <seconds>', 'with --once: give up when no task came in this time', parseSeconds)
    .option('--cache-dir <path>', 'where fetched actions are kept (default: ~/.cache/anvil-runner)')
    .option(
      '--capacity <n>',
      'tasks run at a time (default: 1, or "capacity" of the runner file)',
      parseCapacity,
    )
    .option(
      '--sandbox <mode>',
      'bwrap: run jobs in a bubblewrap sandbox (the default when installed); none: on the host',
      parseSandbox,
    )
    .action(
      plain(
        async (opts: {
          file: string;
          once: boolean;
          interval: number;
          wait?: number;
          cacheDir?: string;
          sandbox?: SandboxMode;
          capacity?: number;
        }) => {
          process.exitCode = await daemon(opts);
        },
      ),
    );

  return runner;
}
