// An `anvil runner` for a test file: registered with a registration token, then its daemon kept
// running until stop(); what it prints on stderr is kept for failure messages.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface TestRunner {
  /** Everything the daemon printed on stderr so far. */
  readonly stderr: string;
  /** Kills the daemon (and waits until it is gone). */
  stop(): Promise<void>;
}

/**
 * Registers a runner named `name` in `dir` (its working directory and HOME) with `token` and
 * `registerArgs` added, lets `configure` change the `.runner` file it wrote, then starts
 * `anvil runner daemon --interval 0.2` with `daemonArgs` added.
 */
export async function startRunner(opts: {
  cli: string;
  instance: string;
  token: string;
  name: string;
  dir: string;
  registerArgs?: string[];
  configure?: (runnerFile: string) => void;
  daemonArgs?: string[];
}): Promise<TestRunner> {
  const env = { PATH: process.env['PATH'], HOME: opts.dir, LANG: 'C' };
  const spawnCli = (args: string[]) =>
    spawn(process.execPath, [opts.cli, 'runner', ...args], {
      cwd: opts.dir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  const registered = await new Promise<{ code: number | null; err: string }>((resolve) => {
    const child = spawnCli([
      'register',
      '--instance',
      opts.instance,
      '--token',
      opts.token,
      '--name',
      opts.name,
      ...(opts.registerArgs ?? []),
    ]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, err }));
  });
  assert.equal(registered.code, 0, registered.err);
  opts.configure?.(path.join(opts.dir, '.runner'));
  const daemon: ChildProcess = spawnCli(['daemon', '--interval', '0.2', ...(opts.daemonArgs ?? [])]);
  let stderr = '';
  daemon.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return {
    get stderr() {
      return stderr;
    },
    async stop() {
      if (!daemon.pid || daemon.exitCode !== null || daemon.signalCode !== null) return;
      const exited = new Promise((r) => daemon.once('close', r));
      daemon.kill('SIGKILL');
      await exited;
    },
  };
}
