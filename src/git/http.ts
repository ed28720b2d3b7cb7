// Git smart HTTP: /{owner}/{repo}.git/info/refs, git-upload-pack and git-receive-pack, served by
// the system git with --stateless-rpc. Bodies stream both ways (gzip request bodies are inflated
// on the fly); nothing is buffered whole. Protocol v2 passes through in the Git-Protocol header.
// /{owner}/{repo}.wiki.git serves the repository's wiki: access is the wiki unit's, a push creates
// the wiki when it has none yet, and runs none of the repository's push pipeline (no checks,
// records, events or actions; the wiki's size is not tracked).
import { spawn } from 'node:child_process';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, MovedError, forbidden, notFound, unauthorized } from '../errors.js';
import { movedTo, statusOf } from '../http/errors.js';
import { viewerOf, type Authenticator, type Identity } from '../auth/identity.js';
import { hasScope } from '../tokens/scopes.js';
import { AccessMode } from '../orgs/tables.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoRow } from '../repos/tables.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { WikiService } from '../wiki/service.js';
import { gitEnv, installHooks } from './git.js';
import { completePush, type PushRegistry } from './pushes.js';
import type { RefUpdate } from '../events/bus.js';
import { parseGitRepoName } from './repo-name.js';

type Service = 'git-upload-pack' | 'git-receive-pack';
const SERVICES = new Set<string>(['git-upload-pack', 'git-receive-pack']);

function pktLine(s: string): string {
  return (s.length + 4).toString(16).padStart(4, '0') + s;
}

/** Counts git operations by service and transport (ops/metrics.ts). */
export interface GitMetrics {
  gitOperation(service: string, transport: 'http' | 'ssh'): void;
}

export interface GitHttpRoutesDeps extends GitAuthDeps {
  repos: Pick<RepoService, 'requireRepo' | 'pathOf'>;
  pushes: PushRegistry;
  refChanges: Pick<RefChanges, 'recordPush' | 'announcePush' | 'dropIntent'>;
  wiki: Pick<WikiService, 'ensure' | 'exists' | 'pathOf' | 'afterPush'>;
  metrics: GitMetrics;
}

export function gitHttpRoutes(app: FastifyInstance, deps: GitHttpRoutesDeps): void {
  const { repos, pushes, refChanges, metrics } = deps;
  const wikis = deps.wiki;

  // Request bodies of the pack services reach the handler as the raw stream.
  app.addContentTypeParser(
    ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'],
    (_request, payload, done) => done(null, payload),
  );

  /** Sends a refusal git shows to the user; 401s ask git for credentials. */
  function refuse(reply: FastifyReply, err: AppError): FastifyReply {
    const status = statusOf[err.kind];
    if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="Anvil"');
    return reply.code(status).type('text/plain; charset=utf-8').send(`${err.message}\n`);
  }

  /**
   * Finds the repository (or wiki) the URL segment `segment` names and checks the caller may use
   * `service` on it; `dir` is the git directory to serve.
   */
  const authorize = async (request: FastifyRequest, owner: string, segment: string, service: Service) => {
    const { name, wiki } = parseGitRepoName(segment);
    const write = service === 'git-receive-pack';
    const target = await authorizeGit(deps, request, owner, name, write, wiki ? 'repo.wiki' : 'repo.code');
    if (!wiki) return { ...target, wiki, dir: repos.pathOf(target.repo) };
    // As Forgejo: a wiki turned off is refused, not hidden (the repository is visible anyway).
    if (!target.repo.has_wiki) throw forbidden('repository wiki is disabled');
    // The first push creates the wiki; reading one that does not exist yet finds nothing.
    if (write) await wikis.ensure(target.repo);
    else if (!wikis.exists(target.repo)) {
      throw notFound('the wiki does not exist yet: create its first page');
    }
    return { ...target, wiki, dir: wikis.pathOf(target.repo) };
  };

  const guarded =
    (fn: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        return await fn(request, reply);
      } catch (err) {
        // A former name: git follows the redirect (and keeps using the new URL).
        const location = err instanceof MovedError ? movedTo(request, err) : undefined;
        if (location) return reply.code(307).header('Location', location).send();
        if (err instanceof AppError) return refuse(reply, err.kind === 'moved' ? notFound() : err);
        throw err;
      }
    };

  type Params = { owner: string; repo: string };

  app.get<{ Params: Params; Querystring: { service?: string } }>(
    '/:owner/:repo/info/refs',
    { schema: { hide: true } },
    guarded(async (request, reply) => {
      const { owner, repo: name } = request.params as Params;
      const service = (request.query as { service?: string }).service ?? '';
      if (!SERVICES.has(service)) {
        return refuse(reply, forbidden('only the smart HTTP protocol is supported: use a git client'));
      }
      const { dir } = await authorize(request, owner, name, service as Service);
      const child = spawn('git', [service.slice(4), '--stateless-rpc', '--advertise-refs', dir], {
        env: gitEnv(protocolEnv(request)),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stderr.on('data', (d: Buffer) => request.log.debug({ git: d.toString() }, 'git advertise-refs'));
      reply.raw.writeHead(200, {
        'content-type': `application/x-${service}-advertisement`,
        'cache-control': 'no-cache, max-age=0, must-revalidate',
      });
      reply.hijack();
      // As git http-backend: protocol v2 starts with its capability advertisement, v0 with this line.
      if (!/(^|:)version=2(:|$)/.test(String(protocolEnv(request)['GIT_PROTOCOL'] ?? ''))) {
        reply.raw.write(pktLine(`# service=${service}\n`) + '0000');
      }
      child.stdout.pipe(reply.raw);
      reply.raw.on('close', () => child.kill());
      await new Promise<void>((resolve) => child.on('close', () => resolve()));
    }),
  );

  for (const service of SERVICES as Set<Service>) {
    app.post<{ Params: Params }>(
      `/:owner/:repo/${service}`,
      { schema: { hide: true } },
      guarded(async (request, reply) => {
        const { owner, repo: name } = request.params as Params;
        const { repo, identity, wiki, dir } = await authorize(request, owner, name, service);
        metrics.gitOperation(service, 'http');
        let env: NodeJS.ProcessEnv = protocolEnv(request);
        let pushId: string | undefined;
        if (service === 'git-receive-pack' && !wiki) {
          const local = request.socket.localAddress ?? '127.0.0.1';
          const host = local.includes(':') ? `[${local.replace(/^::ffff:/, '')}]` : local;
          installHooks(repos.pathOf(repo));
          const begun = pushes.begin(
            repo,
            identity!.user,
            `http://${host}:${request.socket.localPort}/api/internal/hook`,
          );
          pushId = begun.id;
          env = { ...env, ...begun.env };
        }
        // A push's response ends once what follows it is done (see below).
        const holdEnd = pushId !== undefined || (wiki && service === 'git-receive-pack');
        const input = request.body as Readable;
        const child = spawn('git', [service.slice(4), '--stateless-rpc', dir], {
          env: gitEnv(env),
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => {
          if (stderr.length < 4000) stderr += d.toString();
        });
        // git sends large requests (big fetch negotiations) gzip-compressed: inflate on the way.
        const gzipped = /^\s*(x-)?gzip\s*$/i.test(String(request.headers['content-encoding'] ?? ''));
        // A client that went away or a body that does not inflate: git must not wait for more.
        // (No pipeline(): it would destroy the request, and with it the socket of the answer.)
        let inputFailed = false;
        const fail = () => {
          if (inputFailed) return;
          inputFailed = true;
          child.kill();
        };
        input.on('error', fail);
        input.on('close', () => {
          if (!input.readableEnded) fail();
        });
        child.stdin.on('error', () => undefined); // git stopped reading: it says why on stdout
        if (gzipped) {
          const gunzip = zlib.createGunzip();
          gunzip.on('error', fail);
          input.pipe(gunzip).pipe(child.stdin);
        } else {
          input.pipe(child.stdin);
        }
        reply.hijack();
        // The status goes out with git's first bytes: a request git cannot even read (a body
        // that does not inflate) is then still a 400 rather than an empty 200.
        let started = false;
        const start = () => {
          if (started) return;
          started = true;
          reply.raw.writeHead(200, {
            'content-type': `application/x-${service}-result`,
            'cache-control': 'no-cache, max-age=0, must-revalidate',
          });
        };
        child.stdout.once('data', (first: Buffer) => {
          start();
          reply.raw.write(first);
          // For a push, the response ends only once the database knows what the push did, so
          // the API shows the new branches and size as soon as `git push` returns.
          child.stdout.pipe(reply.raw, { end: !holdEnd });
        });
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        if (!started) {
          if (inputFailed) {
            reply.raw.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
            reply.raw.end('the request body could not be read\n');
          } else {
            start();
            if (!holdEnd) reply.raw.end();
          }
        }
        if (code !== 0 && !inputFailed)
          request.log.warn({ code, stderr: stderr.slice(0, 2000), service }, 'git service failed');
        if (wiki && service === 'git-receive-pack') {
          await wikis.afterPush(repo).catch((err: unknown) => {
            request.log.error({ err, repoId: repo.id }, 'after a wiki push');
          });
          if (!reply.raw.writableEnded) reply.raw.end();
        }
        if (pushId) {
          await completePush(pushes, refChanges, pushId, request.log, () => {
            if (!reply.raw.writableEnded) reply.raw.end();
          });
        }
      }),
    );
  }

  // The pre-receive hook's callback: only git processes started by this server know the token.
  app.post<{ Body: { pushId: string; updates: RefUpdate[]; env: Record<string, string | undefined> } }>(
    '/api/internal/hook/pre-receive',
    { schema: { hide: true } },
    async (request, reply) => {
      const presented = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!pushes.validToken(presented))
        return reply.code(401).send({ ok: false, message: 'invalid internal token' });
      const { pushId, updates, env } = request.body;
      const gitEnvForQuarantine: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(env ?? {})) if (v) gitEnvForQuarantine[k] = v;
      const refusal = await pushes.preReceive(pushId, updates ?? [], gitEnvForQuarantine);
      return reply.send(refusal ? { ok: false, message: refusal } : { ok: true });
    },
  );
}

export interface GitTarget {
  repo: RepoRow;
  identity: Identity | null;
  access: RepoAccess;
}

/** Who the caller is and what they may do with a repository (shared with LFS). */
export interface GitAuthDeps {
  auth: Pick<Authenticator, 'authenticate'>;
  users: Pick<UserService, 'assertMayAct'>;
  repos: Pick<RepoService, 'requireRepo'>;
}

/**
 * Who may read (fetch, LFS download) or write (push, LFS upload and locks) the repository
 * `owner/name` over HTTP: basic auth with a password or a token as password, or a token header;
 * anonymous callers read public repositories. Throws 401 when credentials are needed (also for a
 * repository an anonymous caller cannot see), 404 for an unknown repository, 403 for a missing
 * scope or access, an archived repository or a mirror when writing. Shared by smart HTTP and LFS.
 */

export async function authorizeGit(
  deps: GitAuthDeps,
  request: FastifyRequest,
  owner: string,
  name: string,
  write: boolean,
  unit: 'repo.code' | 'repo.wiki' = 'repo.code',
): Promise<GitTarget> {
  const identity = await deps.auth.authenticate({
    authorization: request.headers.authorization,
    refuseSecondFactorPasswords: true,
  });
  if (identity) deps.users.assertMayAct(identity.user);
  const repoName = name.replace(/\.git$/i, '');
  // As in Forgejo, pulling a repository anyone may read needs no permission and no token scope,
  // whoever the credentials belong to (a restricted user, a token for something else).
  const publicPull = async (): Promise<GitTarget | undefined> => {
    if (write) return undefined;
    const open = await deps.repos.requireRepo(owner, repoName, null, 'read', unit).catch(() => undefined);
    return open && { repo: open.repo, identity, access: open.access };
  };
  let found;
  try {
    found = await deps.repos.requireRepo(owner, repoName, viewerOf(identity), 'read', unit);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'not_found') {
      // Anonymous callers are asked to sign in rather than told the repository does not exist.
      if (!identity) throw unauthorized('authentication required');
      const open = await publicPull();
      if (open) return open;
    }
    throw err;
  }
  const { repo, access } = found;
  if (
    identity &&
    identity.method === 'token' &&
    !hasScope(identity.scopes, 'repository', write ? 'write' : 'read')
  ) {
    const open = await publicPull();
    if (open) return open;
    throw forbidden(
      `token does not have at least one of required scope(s): [${write ? 'write' : 'read'}:repository]`,
    );
  }
  if (write) {
    if (!identity) throw unauthorized('authentication required to push');
    if ((access.units.get(unit) ?? 0) < AccessMode.write) {
      throw forbidden(`${identity.user.name} has no write access to ${owner}/${repoName}`);
    }
    if (repo.is_archived) throw forbidden(`${owner}/${repoName} is archived: pushing is not possible`);
    if (repo.is_mirror) throw forbidden(`${owner}/${repoName} is a mirror: pushing is not possible`);
  }
  // The wiki unit may be out of reach where the repository is not (team units).
  if (unit === 'repo.wiki' && (access.units.get(unit) ?? 0) < AccessMode.read) {
    throw identity
      ? forbidden(`${identity.user.name} has no read access to ${owner}/${repoName}`)
      : unauthorized('authentication required');
  }
  return { repo, identity, access };
}

/** Protocol v2 and friends: git reads the Git-Protocol header's value from GIT_PROTOCOL. */
function protocolEnv(request: FastifyRequest): NodeJS.ProcessEnv {
  const v = request.headers['git-protocol'];
  const value = Array.isArray(v) ? v[0] : v;
  return value && /^[\w=:.,-]+$/.test(value) ? { GIT_PROTOCOL: value } : {};
}
