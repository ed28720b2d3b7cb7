// The actions `anvil runner` runs: what a `uses:` names, fetching an action's repository into
// the runner's cache, and reading its action.yml.
//
// - `uses: owner/repo@ref` and `owner/repo/path@ref` come from the instance's
//   [actions] DEFAULT_ACTIONS_URL (sent with each task as `gitea_default_actions_url`, as Forgejo
//   does), `uses: https://host/owner/repo[/path]@ref` from that host, `uses: ./path` from the
//   workspace; actions/checkout is done by the runner itself, and Docker actions are refused.
// - A repository is fetched with git (the ref alone, shallow) into
//   <cache>/actions/<host-owner-repo-hash>/<commit>, once per commit: a branch or tag is looked up
//   with `git ls-remote` each job (a full commit id not even that), and a known commit is used
//   from the cache. An action on this instance is fetched with the job token.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { isObj, type Obj } from './runner-types.js';

export type ActionRef =
  | { kind: 'checkout' }
  | { kind: 'local'; path: string }
  | { kind: 'docker'; image: string }
  | { kind: 'remote'; url: string; repository: string; path: string; ref: string };

const NAME = /^[\w.-]+$/;

/** What a `uses:` value names. Throws with a message for the log when it names nothing. */
export function parseUses(uses: string, defaultActionsUrl: string): ActionRef {
  const u = uses.trim();
  if (u.startsWith('docker://')) return { kind: 'docker', image: u.slice('docker://'.length) };
  if (u === '.' || u.startsWith('./')) return { kind: 'local', path: u };
  const at = u.lastIndexOf('@');
  if (at <= 0 || at === u.length - 1) {
    throw new Error(`uses: ${uses} names no version: write owner/repo@ref (or ./path for a local action)`);
  }
  const name = u.slice(0, at);
  const ref = u.slice(at + 1);
  let base = defaultActionsUrl.replace(/\/+$/, '');
  let parts = name.split('/');
  const full = /^(https?:\/\/[^/]+)\/(.*)$/i.exec(name);
  if (full) {
    base = full[1]!;
    parts = full[2]!.split('/');
  }
  parts = parts.filter(Boolean);
  const [owner, repo, ...sub] = parts;
  if (!owner || !repo || !NAME.test(owner) || !NAME.test(repo) || sub.some((p) => p === '..')) {
    throw new Error(`uses: ${uses} is not owner/repo[/path]@ref or https://host/owner/repo[/path]@ref`);
  }
  const repository = `${owner}/${repo.replace(/\.git$/, '')}`;
  if (repository.toLowerCase() === 'actions/checkout' && !sub.length) return { kind: 'checkout' };
  return { kind: 'remote', url: `${base}/${repository}`, repository, path: sub.join('/'), ref };
}

export interface ActionInput {
  default?: unknown;
  required: boolean;
  deprecationMessage?: string;
}

export interface ActionMeta {
  name: string;
  inputs: Record<string, ActionInput>;
  outputs: Record<string, { value?: unknown }>;
  runs: Obj;
}

/** The action.yml (or action.yaml) of the action in `dir`. */
export function loadAction(dir: string, label: string): ActionMeta {
  const file = ['action.yml', 'action.yaml'].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
  if (!file) {
    const docker = fs.existsSync(path.join(dir, 'Dockerfile'));
    throw new Error(
      docker
        ? `${label} is a Docker action (a Dockerfile without action.yml): anvil runner does not run Docker actions`
        : `${label}: no action.yml or action.yaml in the action's directory`,
    );
  }
  let doc: unknown;
  try {
    doc = parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${label}: ${path.basename(file)} does not parse: ${(err as Error).message}`);
  }
  if (!isObj(doc) || !isObj(doc['runs'])) throw new Error(`${label}: ${path.basename(file)} has no runs:`);
  const inputs: Record<string, ActionInput> = {};
  if (isObj(doc['inputs'])) {
    for (const [k, v] of Object.entries(doc['inputs'])) {
      const o = isObj(v) ? v : {};
      inputs[k] = {
        default: o['default'],
        required: o['required'] === true || o['required'] === 'true',
        ...(typeof o['deprecationMessage'] === 'string'
          ? { deprecationMessage: o['deprecationMessage'] }
          : {}),
      };
    }
  }
  const outputs: Record<string, { value?: unknown }> = {};
  if (isObj(doc['outputs'])) {
    for (const [k, v] of Object.entries(doc['outputs'])) outputs[k] = isObj(v) ? { value: v['value'] } : {};
  }
  return { name: String(doc['name'] ?? label), inputs, outputs, runs: doc['runs'] };
}

interface Git {
  code: number;
  stdout: string;
  stderr: string;
}

function git(args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Git> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      { cwd, env, timeout: Math.max(1000, timeoutMs), maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || (err?.message ?? '')) });
      },
    );
  });
}

/** The last line git printed on stderr (its "fatal: ..."). */
const gitError = (r: Git) =>
  r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .pop() ?? `exit code ${r.code}`;

const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/** Fetches actions' repositories for one task, from and into the runner's cache. */
/** Fetches under way in this process (a runner running several tasks), by cache directory. */
const FETCHING = new Map<string, Promise<string>>();

export class ActionStore {
  private readonly memo = new Map<string, Promise<string>>();

  /**
   * @param dir the runner's action cache
   * @param log a line for the job's log
   * @param auth the Authorization header for URLs under `origin` (the job token on this instance)
   */
  constructor(
    private readonly dir: string,
    private readonly log: (line: string) => void,
    private readonly auth: { origin: string; header: string } | undefined,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** The directory of the repository's checkout at the ref (shared; not to be written to). */
  fetch(ref: Extract<ActionRef, { kind: 'remote' }>, deadline: number): Promise<string> {
    const key = `${ref.url}@${ref.ref}`;
    let p = this.memo.get(key);
    if (!p) {
      p = this.load(ref, deadline);
      this.memo.set(key, p);
    }
    return p;
  }

  private gitEnv(url: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...this.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
    if (this.auth && (url === this.auth.origin || url.startsWith(`${this.auth.origin}/`))) {
      env['GIT_CONFIG_COUNT'] = '1';
      env['GIT_CONFIG_KEY_0'] = `http.${this.auth.origin}/.extraheader`;
      env['GIT_CONFIG_VALUE_0'] = this.auth.header;
    }
    return env;
  }

  private async load(ref: Extract<ActionRef, { kind: 'remote' }>, deadline: number): Promise<string> {
    const label = `${ref.repository}@${ref.ref}`;
    const env = this.gitEnv(ref.url);
    const left = () => deadline - Date.now();
    const slug = ref.url
      .replace(/^https?:\/\//i, '')
      .replace(/[^\w.-]+/g, '-')
      .slice(0, 80);
    const hash = crypto.createHash('sha256').update(ref.url).digest('hex').slice(0, 12);
    const parent = path.join(this.dir, `${slug}-${hash}`);
    fs.mkdirSync(parent, { recursive: true });

    let commit = FULL_SHA.test(ref.ref) ? ref.ref.toLowerCase() : '';
    let wanted = commit;
    if (!commit) {
      const names = ref.ref.startsWith('refs/')
        ? [ref.ref]
        : [`refs/tags/${ref.ref}`, `refs/heads/${ref.ref}`];
      // A tag's `^{}` line is its commit (ls-remote matches it only by that name).
      const patterns = names.flatMap((n) => (n.startsWith('refs/tags/') ? [n, `${n}^{}`] : [n]));
      const r = await git(['ls-remote', '--', ref.url, ...patterns], parent, env, left());
      if (r.code !== 0) throw new Error(`cannot read the action ${label} at ${ref.url}: ${gitError(r)}`);
      const found = new Map<string, string>();
      for (const line of r.stdout.split('\n')) {
        const [oid, name] = line.trim().split(/\s+/);
        if (oid && name) found.set(name, oid);
      }
      for (const n of names) {
        const oid = found.get(`${n}^{}`) ?? found.get(n);
        if (oid) {
          commit = oid.toLowerCase();
          wanted = n;
          break;
        }
      }
      if (!commit) throw new Error(`the action ${label}: ${ref.url} has no branch or tag ${ref.ref}`);
    }
    const cached = path.join(parent, commit);
    // Another task of this runner fetching the same commit: its copy is this one's.
    const pending = FETCHING.get(cached);
    if (pending) await pending.catch(() => undefined);
    if (fs.existsSync(cached)) {
      this.log(`Using the action ${label} (${commit.slice(0, 12)}) from the runner's cache`);
      return cached;
    }

    this.log(`Getting the action ${label} from ${ref.url} (${commit.slice(0, 12)})`);
    const fetching = this.fetchInto(parent, ref.url, label, wanted, commit, env, left);
    FETCHING.set(cached, fetching);
    try {
      return await fetching;
    } finally {
      FETCHING.delete(cached);
    }
  }

  /** Fetches `wanted` (the commit `commit`) of `url` into the cache directory `parent`. */
  private async fetchInto(
    parent: string,
    url: string,
    label: string,
    wanted: string,
    commit: string,
    env: NodeJS.ProcessEnv,
    left: () => number,
  ): Promise<string> {
    const ref = { url };
    const tmp = fs.mkdtempSync(path.join(parent, '.fetch-'));
    try {
      const run = async (args: string[]) => {
        const r = await git(args, tmp, env, left());
        if (r.code !== 0) throw new Error(`cannot fetch the action ${label} from ${ref.url}: ${gitError(r)}`);
        return r;
      };
      await run(['init', '-q']);
      const shallow = await git(
        ['fetch', '-q', '--depth=1', '--no-tags', '--', ref.url, wanted],
        tmp,
        env,
        left(),
      );
      if (shallow.code !== 0) {
        // A server that refuses to send a commit by its id sends it with its branches and tags.
        if (wanted !== commit) throw new Error(`cannot fetch the action ${label}: ${gitError(shallow)}`);
        await run([
          'fetch',
          '-q',
          '--no-tags',
          '--',
          ref.url,
          '+refs/heads/*:refs/h/*',
          '+refs/tags/*:refs/t/*',
        ]);
      }
      await run(['checkout', '-q', '--detach', wanted === commit ? commit : 'FETCH_HEAD']);
      const head = (await run(['rev-parse', 'HEAD'])).stdout.trim().toLowerCase();
      fs.rmSync(path.join(tmp, '.git'), { recursive: true, force: true });
      const dest = path.join(parent, head);
      try {
        fs.renameSync(tmp, dest);
      } catch (err) {
        // Another task put the same commit in the cache first.
        if (!fs.existsSync(dest)) throw err;
        fs.rmSync(tmp, { recursive: true, force: true });
      }
      return dest;
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }
}
