// The real git client for tests: an isolated HOME (no user configuration), no prompts, and helpers
// for working copies, commits, pushes and ls-remote against Anvil's smart HTTP.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class GitClient {
  readonly home: string;

  constructor() {
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-home-'));
  }

  env(): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      HOME: this.home,
      LANG: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Tester',
      GIT_AUTHOR_EMAIL: 'tester@example.com',
      GIT_COMMITTER_NAME: 'Tester',
      GIT_COMMITTER_EMAIL: 'tester@example.com',
    };
  }

  /** Runs git; resolves with stdout, rejects with an Error carrying stderr. */
  async git(args: string[], cwd?: string): Promise<string> {
    try {
      const r = await run('git', args, {
        cwd: cwd ?? this.home,
        env: this.env(),
        maxBuffer: 64 << 20,
        timeout: 180_000,
        killSignal: 'SIGKILL',
      });
      return r.stdout;
    } catch (err) {
      const e = err as Error & { stderr?: string };
      throw new Error(`git ${args.join(' ')}: ${e.stderr ?? e.message}`);
    }
  }

  /** Exit status and output of git, never throwing. */
  async tryGit(args: string[], cwd?: string): Promise<{ ok: boolean; out: string }> {
    try {
      return { ok: true, out: await this.git(args, cwd) };
    } catch (err) {
      return { ok: false, out: (err as Error).message };
    }
  }

  /** refname → oid of a remote (heads and tags). */
  async lsRemote(url: string): Promise<Map<string, string>> {
    const out = await this.git(['ls-remote', '--heads', '--tags', url]);
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const [oid, ref] = line.split('\t');
      if (oid && ref) refs.set(ref, oid);
    }
    return refs;
  }

  /** A fresh working copy with one commit on `branch`. */
  async workTree(branch = 'main'): Promise<string> {
    const dir = fs.mkdtempSync(path.join(this.home, 'wt-'));
    await this.git(['init', '--quiet', `--initial-branch=${branch}`], dir);
    return dir;
  }

  /** Writes a file and commits it; returns the new commit id. */
  async commit(dir: string, file: string, content: string, message = `change ${file}`): Promise<string> {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
    await this.git(['add', file], dir);
    await this.git(['commit', '--quiet', '-m', message], dir);
    return (await this.git(['rev-parse', 'HEAD'], dir)).trim();
  }

  cleanup(): void {
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** The clone URL of owner/repo on a test server, with credentials in it when given. */
export function repoUrl(base: string, owner: string, repo: string, cred?: [string, string]): string {
  const u = new URL(`${base}/${owner}/${repo}.git`);
  if (cred) {
    u.username = encodeURIComponent(cred[0]);
    u.password = encodeURIComponent(cred[1]);
  }
  return u.toString();
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  stepMs = 100,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
