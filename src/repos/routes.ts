// HTTP routes for repositories: creation, reading, editing, deletion, transfer and generation from
// a template. Lists and search are list-routes.ts; collaborators and teams access-routes.ts.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { forbidden, notFound } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import { AccessMode } from '../orgs/tables.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import type { Viewer } from '../users/tables.js';
import { RepoParams } from '../http/params.js';
import type { RepoRow } from './tables.js';
import type { GenerateService } from './generate.js';
import type { RepoPresenter } from './present.js';
import {
  CreateRepoOption,
  EditRepoOption,
  GenerateRepoOption,
  Repository,
  TransferRepoOption,
  type RepositoryJson,
} from './schemas.js';
import type { CreateRepoInput, RepoService } from './service.js';
import type { RepoTransfers } from './transfers.js';

const NoContent = { 204: Type.Null() };

export interface RepoRoutesDeps {
  repos: RepoService;
  transfers: RepoTransfers;
  generator: GenerateService;
  presenter: RepoPresenter;
  users: Pick<UserService, 'requireAccount' | 'getById' | 'getByName'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'canSee'>;
}

export function repoRoutes(app: Api, deps: RepoRoutesDeps): void {
  const { repos, transfers, generator, presenter, users, orgs } = deps;
  const scope: RouteAuth = { scope: 'repository' };
  const signed: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];

  async function repoJson(repo: RepoRow, viewer: Viewer | null): Promise<RepositoryJson> {
    return presenter.repoJson(repo, viewer);
  }

  function createInput(b: {
    name: string;
    description?: string;
    private?: boolean;
    auto_init?: boolean;
    readme?: string;
    gitignores?: string;
    license?: string;
    default_branch?: string;
    template?: boolean;
    issue_labels?: string;
  }): CreateRepoInput {
    return {
      name: b.name,
      description: b.description,
      private: b.private,
      autoInit: b.auto_init,
      readme: b.readme,
      gitignores: b.gitignores,
      license: b.license,
      defaultBranch: b.default_branch,
      template: b.template,
      issueLabels: b.issue_labels,
    };
  }

  const createSchema = (summary: string) => ({
    tags,
    summary,
    description: 'With auto_init, a readme template that does not exist answers 400 and creates nothing.',
    body: CreateRepoOption,
    response: { 201: Repository },
  });

  app.post(
    '/user/repos',
    { schema: createSchema('Create a repository'), config: { auth: signed } },
    async (request, reply) => {
      const me = signedIn(request).user;
      const repo = await repos.create(me, me, createInput(request.body));
      return reply.code(201).send(await repoJson(repo, request.viewer));
    },
  );

  // POST /org/{org}/repos is Forgejo's deprecated spelling of POST /orgs/{org}/repos.
  for (const [url, deprecated] of [
    ['/orgs/:org/repos', false],
    ['/org/:org/repos', true],
  ] as const) {
    app.post(
      url,
      {
        schema: {
          ...createSchema('Create a repository in an organization'),
          params: Type.Object({ org: Type.String() }),
          ...(deprecated ? { deprecated: true } : {}),
        },
        config: { auth: signed },
      },
      async (request, reply) => {
        const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
        const repo = await repos.create(signedIn(request).user, org, createInput(request.body));
        return reply.code(201).send(await repoJson(repo, request.viewer));
      },
    );
  }

  app.post(
    '/admin/users/:username/repos',
    {
      schema: {
        ...createSchema('Create a repository on behalf of a user'),
        tags: ['admin'],
        params: Type.Object({ username: Type.String() }),
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const owner = await users.requireAccount(request.params.username);
      const repo = await repos.create(signedIn(request).user, owner, createInput(request.body));
      return reply.code(201).send(await repoJson(repo, request.viewer));
    },
  );

  app.get(
    '/repos/:owner/:repo',
    {
      schema: { tags, summary: 'Get a repository', params: RepoParams, response: { 200: Repository } },
      config: { auth: scope },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      return repoJson(repo, request.viewer);
    },
  );

  app.get(
    '/repositories/:id',
    {
      schema: {
        tags,
        summary: 'Get a repository by id',
        params: Type.Object({ id: Type.Integer() }),
        response: { 200: Repository },
      },
      config: { auth: scope },
    },
    async (request) => {
      const found = await repos.getById(request.params.id);
      if (!found) throw notFound(`repository does not exist [id: ${request.params.id}]`);
      const owner = (await users.getById(found.owner_id))!;
      const { repo } = await repos.requireRepo(owner.name, found.name, request.viewer);
      return repoJson(repo, request.viewer);
    },
  );

  app.patch(
    '/repos/:owner/:repo',
    {
      schema: {
        tags,
        summary: "Edit a repository's properties",
        params: RepoParams,
        body: EditRepoOption,
        response: { 200: Repository },
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
      const edited = await repos.edit(repo, {
        name: b.name,
        description: b.description,
        website: b.website,
        private: b.private,
        template: b.template,
        archived: b.archived,
        defaultBranch: b.default_branch,
        hasIssues: b.has_issues,
        hasWiki: b.has_wiki,
        hasPullRequests: b.has_pull_requests,
        hasProjects: b.has_projects,
        hasReleases: b.has_releases,
        hasPackages: b.has_packages,
        hasActions: b.has_actions,
        allowMergeCommits: b.allow_merge_commits,
        allowRebase: b.allow_rebase,
        allowRebaseExplicit: b.allow_rebase_explicit,
        allowSquashMerge: b.allow_squash_merge,
        allowFastForwardOnlyMerge: b.allow_fast_forward_only_merge,
        allowRebaseUpdate: b.allow_rebase_update,
        defaultDeleteBranchAfterMerge: b.default_delete_branch_after_merge,
        defaultAllowMaintainerEdit: b.default_allow_maintainer_edit,
        defaultMergeStyle: b.default_merge_style,
      });
      return repoJson(edited, request.viewer);
    },
  );

  app.delete(
    '/repos/:owner/:repo',
    {
      schema: { tags, summary: 'Delete a repository', params: RepoParams, response: NoContent },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo, access } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      if (access.mode < AccessMode.owner) throw forbidden('user should be the owner of the repo');
      await repos.delete(repo, signedIn(request).user.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/repos/:owner/:repo/transfer',
    {
      schema: {
        tags,
        summary: 'Transfer a repository ownership',
        params: RepoParams,
        body: TransferRepoOption,
        response: { 202: Repository },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo, access } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      if (access.mode < AccessMode.owner) throw forbidden('user should be the owner of the repo');
      const newOwner = await users.getByName(request.body.new_owner);
      // An organization the caller cannot see does not exist for them.
      if (
        !newOwner ||
        (newOwner.type === UserType.Organization && !(await orgs.canSee(request.viewer, newOwner)))
      ) {
        throw notFound('The new owner does not exist or cannot be found');
      }
      const { repo: after } = await transfers.startTransfer(
        repo,
        signedIn(request).user,
        newOwner,
        request.body.team_ids,
      );
      return reply.code(202).send(await repoJson(after, request.viewer));
    },
  );

  for (const [action, code] of [
    ['accept', 202],
    ['reject', 200],
  ] as const) {
    app.post(
      `/repos/:owner/:repo/transfer/${action}`,
      {
        schema: {
          tags,
          summary: `${action === 'accept' ? 'Accept' : 'Reject'} a repo transfer`,
          description:
            'By the recipient of the pending transfer (for an organization, whoever may create ' +
            'repositories in it): 403 for anyone else, 404 when no transfer is pending.',
          params: RepoParams,
          response: { [code]: Repository },
        },
        config: { auth: signed },
      },
      async (request, reply) => {
        const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
        const me = signedIn(request).user;
        const after =
          action === 'accept'
            ? await transfers.acceptTransfer(repo, me)
            : await transfers.rejectTransfer(repo, me);
        return reply.code(code).send(await repoJson(after, request.viewer));
      },
    );
  }

  app.post(
    '/repos/:owner/:repo/generate',
    {
      schema: {
        tags,
        summary: 'Create a repository using a template',
        description:
          'From a template repository the caller may read (404 otherwise, and for a repository that is ' +
          'not a template). At least one item must be asked (422). git_content makes the default ' +
          "branch's tree one fresh commit, with the variables of the files listed in " +
          '.forgejo/template (or .gitea/template) expanded.',
        params: RepoParams,
        body: GenerateRepoOption,
        response: { 201: Repository },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const b = request.body;
      const made = await generator.generate(signedIn(request).user, request.viewer!, repo, {
        owner: b.owner,
        name: b.name,
        description: b.description,
        private: b.private,
        defaultBranch: b.default_branch,
        gitContent: b.git_content,
        topics: b.topics,
        gitHooks: b.git_hooks,
        webhooks: b.webhooks,
        avatar: b.avatar,
        labels: b.labels,
        protectedBranch: b.protected_branch,
      });
      return reply.code(201).send(await repoJson(made, request.viewer));
    },
  );
}
