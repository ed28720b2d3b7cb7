// Helpers of the SSH tests: running programs asynchronously and making key pairs with ssh-keygen.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const RUN_LIMIT_MS = 120_000;

/**
 * Runs a program asynchronously (the server runs in this process); never throws on failure.
 * The program runs in its own process group: when it outlives `limitMs` the whole group is
 * killed (`git` and the `ssh` it started, which would otherwise hold the pipes open and the test
 * with them), and the result names what was killed.
 */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; limitMs?: number } = {},
): Promise<Run> {
  const limitMs = opts.limitMs ?? RUN_LIMIT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      stderr += `\n[killed after ${limitMs} ms: ${cmd} ${args.join(' ')}]`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, limitMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // 'exit' rather than 'close' once killed: a grandchild still holding a pipe must not hold us.
    const done = (code: number | null) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    };
    child.on('close', done);
    child.on('exit', (code) => {
      if (killed) done(code);
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** A new key pair in `dir`; returns the private key's path and the public key line. */
export async function makeKey(
  dir: string,
  name: string,
  type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519',
  bits?: number,
): Promise<{ file: string; pub: string; fingerprint: string }> {
  const file = path.join(dir, name);
  const args = ['-q', '-t', type, '-N', '', '-C', `${name}@test`, '-f', file];
  if (bits) args.push('-b', String(bits));
  const r = await run('ssh-keygen', args);
  assert.equal(r.code, 0, r.stderr);
  const fp = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`]);
  return {
    file,
    pub: fs.readFileSync(`${file}.pub`, 'utf8').trim(),
    fingerprint: fp.stdout.split(' ')[1]!,
  };
}
