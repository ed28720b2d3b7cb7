// HTTP routes for migration and mirrors: POST /repos/migrate, POST /repos/{owner}/{repo}/mirror-sync
// and the push mirrors of a repository.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { RepoPresenter } from '../repos/present.js';
import { Repository } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import { CreatePushMirrorOption, MigrateRepoOptions, PushMirror, toPushMirrorJson } from './schemas.js';
import type { MirrorService } from './service.js';

const MirrorParams = Type.Object({ owner: Type.String(), repo: Type.String(), name: Type.String() });

export interface MirrorsRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  mirrors: MirrorService;
  presenter: Pick<RepoPresenter, 'repoJson'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function mirrorsRoutes(app: Api, deps: MirrorsRoutesDeps): void {
  const { repos, mirrors, presenter, paging, rootUrl } = deps;
  const signed: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];

  app.post(
    '/repos/migrate',
    {
      schema: {
        tags,
        summary: 'Migrate a remote git repository',
        description:
          'Clones the git data of an http(s) or git URL (never a local path) into a new repository; ' +
          'with `mirror` the repository keeps following the remote every `mirror_interval`. Hosts ' +
          'are checked against [migrations] ALLOWED_DOMAINS, BLOCKED_DOMAINS and ALLOW_LOCALNETWORKS ' +
          '(422 when refused). Issues, pull requests and other metadata flags are accepted and ' +
          'ignored: only the git data is migrated, as the web migration of a plain git service does.',
        body: MigrateRepoOptions,
        response: { 201: Repository },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const b = request.body;
      const repo = await mirrors.migrate(signedIn(request).user, {
        cloneAddr: b.clone_addr,
        repoName: b.repo_name,
        repoOwner: b.repo_owner,
        uid: b.uid,
        authUsername: b.auth_username,
        authPassword: b.auth_password,
        authToken: b.auth_token,
        mirror: b.mirror,
        mirrorInterval: b.mirror_interval,
        private: b.private,
        description: b.description,
      });
      return reply.code(201).send(await presenter.repoJson(repo, request.viewer));
    },
  );

  app.post(
    '/repos/:owner/:repo/mirror-sync',
    {
      schema: {
        tags,
        summary: 'Sync a mirrored repository',
        description: 'Queues an update of the pull mirror from its remote; answers at once.',
        params: RepoParams,
        response: { 200: Type.Null({ description: 'empty' }) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'write',
      );
      await mirrors.requestPullSync(repo);
      // An empty body, as Forgejo answers.
      return reply.code(200).send(undefined as unknown as null);
    },
  );

  app.post(
    '/repos/:owner/:repo/push_mirrors-sync',
    {
      schema: {
        tags,
        summary: 'Sync all push mirrored repository',
        description: 'Pushes to every push mirror now; failures are recorded in their last_error.',
        params: RepoParams,
        response: { 200: Type.Null({ description: 'empty' }) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      await mirrors.syncAllPushMirrors(repo);
      // An empty body, as Forgejo answers.
      return reply.code(200).send(undefined as unknown as null);
    },
  );

  app.get(
    '/repos/:owner/:repo/push_mirrors',
    {
      schema: {
        tags,
        summary: 'Get all push mirrors of the repository',
        params: RepoParams,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(PushMirror) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      const result = await mirrors.listPushMirrors(repo, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (m) => toPushMirrorJson(m, repo.name));
    },
  );

  app.post(
    '/repos/:owner/:repo/push_mirrors',
    {
      schema: {
        tags,
        summary: 'Set up a new push mirror in a repository',
        description:
          'Credentials are encrypted at rest and never shown; with sync_on_commit every push is ' +
          'pushed on to the mirror right after it, in the background. `interval` is a Go duration ' +
          '("8h0m0s"; "0" disables the schedule).',
        params: RepoParams,
        body: CreatePushMirrorOption,
        response: { 200: PushMirror },
      },
      config: { auth: signed },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      const b = request.body;
      const m = await mirrors.createPushMirror(repo, {
        remoteAddress: b.remote_address,
        remoteUsername: b.remote_username,
        remotePassword: b.remote_password,
        interval: b.interval,
        syncOnCommit: b.sync_on_commit,
        useSsh: b.use_ssh,
      });
      return toPushMirrorJson(m, repo.name);
    },
  );

  app.get(
    '/repos/:owner/:repo/push_mirrors/:name',
    {
      schema: {
        tags,
        summary: 'Get push mirror of the repository by remoteName',
        params: MirrorParams,
        response: { 200: PushMirror },
      },
      config: { auth: signed },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      return toPushMirrorJson(await mirrors.getPushMirror(repo, request.params.name), repo.name);
    },
  );

  app.delete(
    '/repos/:owner/:repo/push_mirrors/:name',
    {
      schema: {
        tags,
        summary: 'Remove a push mirror from a repository by remoteName',
        params: MirrorParams,
        response: { 204: Type.Null() },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      await mirrors.deletePushMirror(repo, request.params.name);
      return reply.code(204).send(null);
    },
  );
}
