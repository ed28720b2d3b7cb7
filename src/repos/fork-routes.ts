// Forks: POST/GET /repos/{owner}/{repo}/forks.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { ForkService } from './forks.js';
import type { RepoPresenter } from './present.js';
import { Repository, SyncForkInfo } from './schemas.js';
import type { RepoService } from './service.js';

export const CreateForkOption = Type.Object(
  {
    organization: Type.Optional(
      Type.String({ description: 'organization name, if forking into an organization' }),
    ),
    name: Type.Optional(Type.String({ description: 'name of the forked repository' })),
  },
  { title: 'CreateForkOption' },
);

export interface ForkRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  forks: ForkService;
  presenter: Pick<RepoPresenter, 'repoJson' | 'reposJson'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function forkRoutes(app: Api, deps: ForkRoutesDeps): void {
  const { repos, forks, presenter, paging, rootUrl } = deps;
  const tags = ['repository'];

  app.post(
    '/repos/:owner/:repo/forks',
    {
      schema: {
        tags,
        summary: 'Fork a repository',
        description:
          'Forks into the signed-in account, or into `organization` when the caller may create ' +
          'repositories there. 409 when the target already has a fork of this repository or a ' +
          'repository of that name, or (with [repository] ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT = false) ' +
          'has reached its repository limit.',
        params: RepoParams,
        body: CreateForkOption,
        response: { 202: Repository },
      },
      config: { auth: { scope: 'repository', require: 'signed' } },
      // Forgejo takes a request without a body as an empty CreateForkOption.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const body = request.body;
      const fork = await forks.fork(signedIn(request).user, request.viewer!, repo, {
        organization: body.organization,
        name: body.name,
      });
      return reply.code(202).send(await presenter.repoJson(fork, request.viewer));
    },
  );

  app.get(
    '/repos/:owner/:repo/forks',
    {
      schema: {
        tags,
        summary: "List a repository's forks",
        params: RepoParams,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: { scope: 'repository' } },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const [rows, total] = await forks.listForks(repo, request.viewer, page.limit, page.offset);
      const body = await presenter.reposJson(rows, request.viewer);
      return sendPage(request, reply, [body, total], page, rootUrl, (r) => r);
    },
  );

  // Syncing a fork with its base: the default branch, or the one named (it may contain slashes).
  const SyncParams = Type.Object({
    owner: Type.String(),
    repo: Type.String(),
    '*': Type.String({ description: 'the branch (may contain slashes)' }),
  });
  for (const named of [false, true]) {
    const url = named ? '/repos/:owner/:repo/sync_fork/*' : '/repos/:owner/:repo/sync_fork';
    const branchOf = (repo: { default_branch: string }, params: Record<string, string>) =>
      named ? (params['*'] ?? '') : repo.default_branch;
    const which = named ? 'a branch' : 'the default branch';
    app.get(
      url,
      {
        schema: {
          tags,
          summary: `Gets information about syncing ${which} of a fork with its base`,
          description: '400 when the repository is not a fork; 404 when the fork has no such branch.',
          params: named ? SyncParams : RepoParams,
          response: { 200: SyncForkInfo },
        },
        config: { auth: { scope: 'repository' } },
      },
      async (request) => {
        const params = request.params as Record<string, string>;
        const { repo } = await repos.requireRepo(params['owner']!, params['repo']!, request.viewer);
        return forks.syncForkInfo(repo, branchOf(repo, params));
      },
    );
    app.post(
      url,
      {
        schema: {
          tags,
          summary: `Syncs ${which} of a fork with its base`,
          description:
            "Fast-forwards the fork's branch to the base repository's branch of the same name: 400 " +
            'when that is not a fast-forward (or the repository is not a fork), 404 when the fork has ' +
            'no such branch, 409 when the branch moved meanwhile.',
          params: named ? SyncParams : RepoParams,
          response: { 204: Type.Null() },
        },
        config: { auth: { scope: 'repository', require: 'signed' } },
      },
      async (request, reply) => {
        const params = request.params as Record<string, string>;
        const { repo } = await repos.requireRepo(params['owner']!, params['repo']!, request.viewer, 'write');
        await forks.syncFork(repo, signedIn(request).user, branchOf(repo, params));
        return reply.code(204).send(null);
      },
    );
  }
}
