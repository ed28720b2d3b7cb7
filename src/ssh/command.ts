// What an SSH session asks for, for the built-in server and `anvil serv` alike: a git service on a
// repository (upload-pack, receive-pack, upload-archive), `git-lfs-authenticate`, or nothing (a
// greeting). `prepare` checks the principal may do it and returns what to run; a push registers
// with the push pipeline, and `finishPush` records and announces it afterwards, as over HTTP.
import type { Logger } from 'pino';
import { AppError, invalid } from '../errors.js';
import { installHooks } from '../git/git.js';
import type { GitMetrics } from '../git/http.js';
import { completePush, type PushRegistry } from '../git/pushes.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { WikiService } from '../wiki/service.js';
import type { SshKeyService, SshPrincipal } from './service.js';
import { LFS_TOKEN_SECONDS } from './service.js';
import { parseGitRepoName } from '../git/repo-name.js';

export type GitService = 'upload-pack' | 'receive-pack' | 'upload-archive';

export type SshCommand =
  | { kind: 'greet' }
  | { kind: 'git'; service: GitService; owner: string; name: string; wiki: boolean }
  | { kind: 'lfs'; owner: string; name: string; operation: 'upload' | 'download' };

/** `owner/name(.git)` from a path git sends ('owner/repo.git', '/owner/repo.git'). */
function repoPath(raw: string): { owner: string; name: string } {
  const p = raw.replace(/^'(.*)'$/, '$1').replace(/^\//, '');
  const m = /^([\w.-]{1,255})\/([\w.-]{1,255})$/.exec(p);
  if (!m || m[1] === '.' || m[1] === '..' || m[2] === '.' || m[2] === '..') {
    throw invalid(`"${p.slice(0, 200)}" is not a repository path: use owner/repository.git`);
  }
  return { owner: m[1]!, name: m[2]!.replace(/\.git$/i, '') };
}

/** Reads the command line an SSH client sent; throws with a message for anything else. */
export function parseCommand(line: string | undefined): SshCommand {
  const cmd = (line ?? '').trim();
  if (!cmd) return { kind: 'greet' };
  const git = /^git[- ](upload-pack|receive-pack|upload-archive)\s+(\S+)$/.exec(cmd);
  if (git) {
    const { owner, name } = repoPath(git[2]!);
    return { kind: 'git', service: git[1] as GitService, owner, ...parseGitRepoName(name) };
  }
  const lfs = /^git-lfs-authenticate\s+(\S+)\s+(upload|download)(\s+\S+)?$/.exec(cmd);
  if (lfs) return { kind: 'lfs', ...repoPath(lfs[1]!), operation: lfs[2] as 'upload' | 'download' };
  throw invalid(`Anvil does not run "${cmd.split(/\s+/)[0]!.slice(0, 100)}" over SSH: only git commands`);
}

/** What a session runs once the command is allowed. */
export type Prepared =
  /** Text for standard output, then the exit code. */
  | { kind: 'text'; text: string }
  | {
      kind: 'git';
      service: GitService;
      /** The bare repository git runs in. */
      dir: string;
      /** Extra environment for git (the push pipeline's hook settings, GIT_PROTOCOL). */
      env: Record<string, string>;
      /** Set for a push: give it to finishPush once git has exited. */
      pushId?: string;
      /** Set for a push to a wiki (the repository's id): give it to finishWikiPush. */
      wikiOf?: number;
    };

/** A refusal git shows the user (on standard error), with the exit code 1. */
export class Refusal extends Error {}

export interface SshCommandsDeps {
  sshKeys: Pick<SshKeyService, 'authorize' | 'lfsToken'>;
  repos: Pick<RepoService, 'pathOf' | 'getById'>;
  users: Pick<UserService, 'getById'>;
  pushes: PushRegistry;
  refChanges: Pick<RefChanges, 'recordPush' | 'announcePush' | 'dropIntent'>;
  wiki: Pick<WikiService, 'ensure' | 'exists' | 'pathOf' | 'afterPush'>;
  metrics: GitMetrics;
  log: Logger;
  rootUrl: string;
  /** Where git's pre-receive hook reaches this server ([server] LOCAL_ROOT_URL). */
  localRootUrl: string;
}

export class SshCommands {
  constructor(private readonly deps: SshCommandsDeps) {}

  /**
   * Checks and prepares `line` for `principal`. `protocol` is the client's GIT_PROTOCOL;
   * `keyName` names the key in the greeting. Throws Refusal with the message to show.
   */
  async prepare(
    principal: SshPrincipal,
    line: string | undefined,
    protocol: string | undefined,
  ): Promise<Prepared> {
    const { sshKeys, repos, pushes, rootUrl, localRootUrl } = this.deps;
    try {
      const cmd = parseCommand(line);
      if (cmd.kind === 'greet') {
        const who = principal.kind === 'user' ? principal.user.name : 'deploy key';
        const key = principal.kind === 'user' ? principal.key.name : principal.keys[0]!.name;
        return {
          kind: 'text',
          text:
            `Hi there, ${who}! You've successfully authenticated with the key named ${key}, ` +
            `but Anvil does not provide shell access.\n`,
        };
      }
      if (cmd.kind === 'lfs') {
        const target = await sshKeys.authorize(principal, cmd.owner, cmd.name, cmd.operation === 'upload');
        const owner = await this.deps.users.getById(target.repo.owner_id);
        const token = sshKeys.lfsToken(target.pusher, target.repo, cmd.operation === 'upload');
        return {
          kind: 'text',
          text:
            JSON.stringify({
              header: { Authorization: `Bearer ${token}` },
              href: `${rootUrl}${owner!.name}/${target.repo.name}.git/info/lfs`,
              expires_in: LFS_TOKEN_SECONDS,
            }) + '\n',
        };
      }
      const write = cmd.service === 'receive-pack';
      const unit = cmd.wiki ? 'repo.wiki' : 'repo.code';
      const target = await sshKeys.authorize(principal, cmd.owner, cmd.name, write, unit);
      this.deps.metrics.gitOperation(cmd.service, 'ssh');
      const env: Record<string, string> = {};
      if (protocol && /^[\w=:.,-]{1,200}$/.test(protocol)) env['GIT_PROTOCOL'] = protocol;
      if (cmd.wiki) {
        // As over HTTP: a wiki turned off is refused; the first push creates it; no push pipeline.
        const { wiki } = this.deps;
        if (!target.repo.has_wiki) throw new Refusal('repository wiki is disabled');
        if (write) await wiki.ensure(target.repo);
        else if (!wiki.exists(target.repo))
          throw new Refusal('the wiki does not exist yet: create its first page');
        const dir = wiki.pathOf(target.repo);
        return { kind: 'git', service: cmd.service, dir, env, ...(write ? { wikiOf: target.repo.id } : {}) };
      }
      const dir = repos.pathOf(target.repo);
      if (!write) return { kind: 'git', service: cmd.service, dir, env };
      installHooks(dir);
      const begun = pushes.begin(target.repo, target.pusher, `${localRootUrl}api/internal/hook`);
      for (const [k, v] of Object.entries(begun.env)) if (v !== undefined) env[k] = v;
      return { kind: 'git', service: cmd.service, dir, env, pushId: begun.id };
    } catch (err) {
      if (err instanceof AppError) throw new Refusal(err.message);
      throw err;
    }
  }

  /** After a push to a wiki: its HEAD names a branch that exists (as after an HTTP push). */
  async finishWikiPush(repoId: number): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (repo) await this.deps.wiki.afterPush(repo);
  }

  /**
   * After `git receive-pack` exited: records what the push did (branches, sizes), then calls
   * `recorded` (the session may end: the API shows the push), then fires events and webhooks.
   */
  finishPush(pushId: string, recorded: () => void): Promise<void> {
    const { pushes, refChanges, log } = this.deps;
    return completePush(pushes, refChanges, pushId, log, recorded);
  }
}
