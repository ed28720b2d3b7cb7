// HTTP routes for repositories: creation, reading, editing, deletion, transfer, lists and search,
// collaborators and team repositories.
import { Type, type Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.js';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { forbidden, invalid, invalidField, notFound } from '../errors.js';
import { UserType } from '../users/tables.js';
import { PageFields, pageOf, sendPage } from '../http/pagination.js';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer } from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import { AccessMode, accessModeName } from '../orgs/store.js';
import type { TeamRow } from '../orgs/tables.js';
import { Team, toOrgJson, toTeamJson } from '../orgs/schemas.js';
import { ORDER_BY, type OrderBy } from './store.js';
import type { RepoRow } from './tables.js';
import {
  CreateRepoOption,
  EditRepoOption,
  GenerateRepoOption,
  Repository,
  TransferRepoOption,
  type RepositoryJson,
} from './schemas.js';
import type { CreateRepoInput } from './service.js';
import { reposJsonOf } from './present.js';

import { RepoParams } from '../http/params.js';
const NoContent = { 204: Type.Null() };

export function repoRoutes(app: Api, ctx: AppContext): void {
  const { repos, users, orgs } = ctx;
  const rootUrl = ctx.config.server.rootUrl;
  const scope: RouteAuth = { scope: 'repository' };
  const signed: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];

  const reposJson = (rows: RepoRow[], viewer: Viewer | null) => reposJsonOf(ctx, rows, viewer);

  async function repoJson(repo: RepoRow, viewer: Viewer | null): Promise<RepositoryJson> {
    return (await reposJson([repo], viewer))[0]!;
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
      const { repo: after } = await repos.startTransfer(
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
          action === 'accept' ? await repos.acceptTransfer(repo, me) : await repos.rejectTransfer(repo, me);
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
      const made = await ctx.generator.generate(signedIn(request).user, request.viewer!, repo, {
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

  // Lists

  const ListQuery = Type.Object({ ...PageFields, order_by: Type.Optional(Type.String()) });
  const orderOf = (v: string | undefined): OrderBy | undefined => {
    if (v === undefined || v === '') return undefined;
    if (!(v in ORDER_BY)) throw invalidField('order_by', `unknown order_by value: ${v}`);
    return v as OrderBy;
  };

  async function listReply(
    request: FastifyRequest,
    reply: Parameters<typeof sendPage>[1],
    result: [RepoRow[], number],
  ) {
    const page = pageOf(request.query as { page?: number; limit?: number }, ctx.paging);
    const body = await reposJson(result[0], request.viewer);
    return sendPage(request, reply, [body, result[1]], page, rootUrl, (r) => r);
  }

  app.get(
    '/user/repos',
    {
      schema: {
        tags: ['user'],
        summary: 'List the repos that the authenticated user owns or can reach',
        description:
          'order_by: size (smallest first), reversesize, alphabetically, newest, recentupdate, ...',
        querystring: ListQuery,
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageOf(request.query, ctx.paging);
      const me = signedIn(request).user;
      const result = await repos.list(
        {
          memberOf: me.id,
          // A public-only token lists only public repositories.
          ...(request.viewer?.publicOnly ? { viewerId: null, publicOnly: true } : {}),
          // Forgejo lists them by name unless order_by says otherwise.
          orderBy: orderOf(request.query.order_by) ?? 'alphabetically',
        },
        page.limit,
        page.offset,
      );
      return listReply(request, reply, result);
    },
  );

  for (const [url, kind] of [
    ['/users/:owner/repos', 'user'],
    ['/orgs/:owner/repos', 'organization'],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags: [kind],
          summary:
            kind === 'user' ? 'List the repos owned by the given user' : "List an organization's repos",
          params: Type.Object({ owner: Type.String() }),
          querystring: ListQuery,
          response: { 200: Type.Array(Repository) },
        },
        config: { auth: scope },
      },
      async (request, reply) => {
        const page = pageOf(request.query, ctx.paging);
        // /users/{name}/repos also answers for organizations, as in Forgejo.
        const account = kind === 'user' ? await users.getByName(request.params.owner) : undefined;
        const owner: UserRow =
          kind === 'organization' || account?.type === UserType.Organization
            ? await orgs.requireVisibleOrg(request.params.owner, request.viewer)
            : await users.requireVisibleUser(request.params.owner, request.viewer);
        const viewer = request.viewer;
        const result = await repos.list(
          {
            ownerId: owner.id,
            viewerId: viewer?.isAdmin && !viewer.publicOnly ? undefined : (viewer?.id ?? null),
            publicOnly: viewer?.publicOnly,
            restricted: request.identity?.user.restricted === 1,
            orderBy: orderOf(request.query.order_by),
          },
          page.limit,
          page.offset,
        );
        return listReply(request, reply, result);
      },
    );
  }

  app.get(
    '/repos/search',
    {
      schema: {
        tags,
        summary: 'Search for repositories',
        querystring: Type.Object({
          ...PageFields,
          q: Type.Optional(Type.String({ description: 'keyword; several keywords separated by commas' })),
          includeDesc: Type.Optional(Type.Boolean()),
          topic: Type.Optional(Type.Boolean({ description: 'the keywords are topics, matched whole' })),
          uid: Type.Optional(Type.Integer()),
          team_id: Type.Optional(Type.Integer()),
          private: Type.Optional(Type.Boolean()),
          is_private: Type.Optional(Type.Boolean()),
          template: Type.Optional(Type.Boolean()),
          archived: Type.Optional(Type.Boolean()),
          mode: Type.Optional(Type.String({ description: 'fork, source, mirror or collaborative' })),
          exclusive: Type.Optional(Type.Boolean()),
          sort: Type.Optional(
            Type.String({
              description: 'alpha (default), created, updated, size, git_size, id, stars, forks',
            }),
          ),
          order: Type.Optional(Type.String({ description: 'asc (default) or desc' })),
        }),
        response: { 200: Type.Object({ ok: Type.Boolean(), data: Type.Array(Repository) }) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const q = request.query;
      const page = pageOf(q, ctx.paging);
      const viewer = request.viewer;
      const sorts: Record<string, [OrderBy, OrderBy]> = {
        alpha: ['alphabetically', 'reversealphabetically'],
        created: ['oldest', 'newest'],
        updated: ['leastupdate', 'recentupdate'],
        size: ['size', 'reversesize'],
        git_size: ['gitsize', 'reversegitsize'],
        id: ['id', 'reverseid'],
        stars: ['feweststars', 'moststars'],
        forks: ['fewestforks', 'mostforks'],
      };
      let orderBy: OrderBy = 'alphabetically';
      if (q.sort) {
        const sort = sorts[q.sort];
        if (!sort) throw invalid(`Invalid sort mode: "${q.sort}"`);
        const order = q.order || 'asc';
        if (order !== 'asc' && order !== 'desc') throw invalid(`Invalid sort order: "${order}"`);
        orderBy = order === 'desc' ? sort[1] : sort[0];
      }
      const mode = q.mode ?? '';
      if (!['', 'fork', 'source', 'mirror', 'collaborative'].includes(mode)) {
        throw invalid(`Invalid search mode: "${mode}"`);
      }
      // `private=false` (or a public-only token) leaves only public repositories of public owners.
      const withPrivate = viewer !== null && !viewer.publicOnly && q.private !== false;
      const uid = q.uid && q.uid > 0 ? q.uid : undefined;
      const result = await repos.list(
        {
          keywords: (q.q ?? '')
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
          includeDescription: q.includeDesc === true,
          topicOnly: q.topic === true,
          // uid: repositories the user owns or reaches; `exclusive`: owns only; `collaborative`: reaches only.
          ownerId: uid && q.exclusive && mode !== 'collaborative' ? uid : undefined,
          memberOf: uid && !q.exclusive && mode !== 'collaborative' ? uid : undefined,
          collaboratorOf: uid && mode === 'collaborative' ? uid : undefined,
          teamId: q.team_id && q.team_id > 0 ? q.team_id : undefined,
          viewerId: !withPrivate ? null : viewer.isAdmin ? undefined : viewer.id,
          publicOnly: !withPrivate,
          restricted: request.identity?.user.restricted === 1,
          isPrivate: q.is_private,
          isTemplate: q.template,
          isArchived: q.archived,
          isFork: mode === 'fork' ? true : mode === 'source' ? false : undefined,
          isMirror:
            mode === 'mirror' ? true : mode === 'source' || mode === 'collaborative' ? false : undefined,
          orderBy,
        },
        page.limit,
        page.offset,
      );
      const body = await reposJson(result[0], viewer);
      return { ok: true, data: sendPage(request, reply, [body, result[1]], page, rootUrl, (r) => r) };
    },
  );

  // Collaborators

  const CollabParams = Type.Object({
    owner: Type.String(),
    repo: Type.String(),
    collaborator: Type.String(),
  });

  /** The user named in a collaborator path: an unknown name is a 422, as in Forgejo. */
  async function collaboratorNamed(name: string): Promise<UserRow> {
    const u = await users.getByName(name);
    if (!u || u.type !== UserType.Individual) throw invalid(`user does not exist [name: ${name}]`);
    return u;
  }

  app.get(
    '/repos/:owner/:repo/collaborators',
    {
      schema: {
        tags,
        summary: "List a repository's collaborators",
        params: RepoParams,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(User) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageOf(request.query, ctx.paging);
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const result = await repos.listCollaborators(repo, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (u) =>
        toUserJson(u, { rootUrl, viewer: request.viewer }),
      );
    },
  );

  app.get(
    '/repos/:owner/:repo/assignees',
    {
      schema: {
        tags,
        operationId: 'repoGetAssignees',
        summary: 'Return all users that have write access and can be assigned to issues',
        params: RepoParams,
        response: { 200: Type.Array(User) },
      },
      config: { auth: scope },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      return (await repos.assignees(repo)).map((u) => toUserJson(u, { rootUrl, viewer: request.viewer }));
    },
  );

  app.get(
    '/repos/:owner/:repo/reviewers',
    {
      schema: {
        tags,
        operationId: 'repoGetReviewers',
        summary: 'Return all users that can be requested to review in this repo',
        params: RepoParams,
        response: { 200: Type.Array(User) },
      },
      config: { auth: signed },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, viewer);
      return (await repos.reviewers(repo, viewer.id)).map((u) => toUserJson(u, { rootUrl, viewer }));
    },
  );

  app.get(
    '/repos/:owner/:repo/collaborators/:collaborator',
    {
      schema: {
        tags,
        summary: 'Check if a user is a collaborator of a repository',
        params: CollabParams,
        response: NoContent,
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const u = await collaboratorNamed(request.params.collaborator);
      if (!(await repos.isCollaborator(repo, u)))
        throw notFound(`user is not a collaborator [name: ${u.name}]`);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/repos/:owner/:repo/collaborators/:collaborator',
    {
      schema: {
        tags,
        summary: 'Add or update a collaborator',
        params: CollabParams,
        body: Type.Optional(
          Type.Object({
            permission: Type.Optional(
              Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]),
            ),
          }),
        ),
        response: NoContent,
      },
      config: { auth: signed },
      // The body is optional (no body: write access), as in Forgejo.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      const u = await collaboratorNamed(request.params.collaborator);
      await repos.setCollaborator(repo, u, request.body?.permission ?? 'write');
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/collaborators/:collaborator',
    {
      schema: {
        tags,
        summary: 'Delete a collaborator from a repository',
        params: CollabParams,
        response: NoContent,
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
      await repos.removeCollaborator(repo, await collaboratorNamed(request.params.collaborator));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/collaborators/:collaborator/permission',
    {
      schema: {
        tags,
        summary: 'Get repository permissions for a user',
        params: CollabParams,
        response: { 200: Type.Object({ permission: Type.String(), role_name: Type.String(), user: User }) },
      },
      config: { auth: signed },
    },
    async (request) => {
      const me = signedIn(request).user;
      const { repo, access: mine } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
      );
      // Site and repository administrators ask about anyone; everyone else about themselves.
      if (
        !me.is_admin &&
        me.lower_name !== request.params.collaborator.toLowerCase() &&
        mine.mode < AccessMode.admin
      ) {
        throw forbidden(
          'Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own',
        );
      }
      const u = await users.requireUser(request.params.collaborator);
      const access = await repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      const permission = accessModeName(Math.min(access.mode, AccessMode.owner));
      return { permission, role_name: permission, user: toUserJson(u, { rootUrl, viewer: request.viewer }) };
    },
  );

  // Team repositories

  const TeamRepoParams = Type.Object({ id: Type.Integer(), org: Type.String(), repo: Type.String() });

  app.get(
    '/teams/:id/repos',
    {
      schema: {
        tags: ['organization'],
        summary: "List a team's repos",
        params: Type.Object({ id: Type.Integer() }),
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Repository) },
      },
      config: { auth: { scope: 'organization', require: 'signed' } },
    },
    async (request, reply) => {
      const page = pageOf(request.query, ctx.paging);
      const { team } = await orgs.requireTeam(request.params.id, signedViewer(request));
      const result = await repos.listTeamRepos(team, page.limit, page.offset);
      const body = await reposJson(result[0], request.viewer);
      return sendPage(request, reply, [body, result[1]], page, rootUrl, (r) => r);
    },
  );

  /**
   * The team of the path (for its members, organization owners and site administrators) and the
   * repository of its organization named in the path.
   */
  async function teamAndRepo(request: FastifyRequest, params: Static<typeof TeamRepoParams>) {
    const viewer = signedViewer(request);
    const { team, org } = await orgs.requireTeam(params.id, viewer);
    // Forgejo looks the repository up in the team's organization, whatever the path's {org} says.
    const { repo, access } = await repos.requireRepo(org.name, params.repo, viewer);
    return { team, org, repo, access };
  }

  app.get(
    '/teams/:id/repos/:org/:repo',
    {
      schema: {
        tags: ['organization'],
        summary: 'List a particular repo of team',
        params: TeamRepoParams,
        response: { 200: Repository },
      },
      config: { auth: { scope: 'organization', require: 'signed' } },
    },
    async (request) => {
      const { team, repo } = await teamAndRepo(request, request.params);
      if (!(await repos.teamHasRepo(team, repo))) {
        throw notFound(`repository is not in the team [id: ${team.id}, name: ${repo.name}]`);
      }
      return repoJson(repo, request.viewer);
    },
  );

  for (const [method, add] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/teams/:id/repos/:org/:repo',
      schema: {
        tags: ['organization'],
        summary: add ? 'Add a repository to a team' : 'Remove a repository from a team',
        params: TeamRepoParams,
        response: NoContent,
      },
      config: { auth: { scope: 'organization', require: 'signed' } },
      handler: async (request, reply) => {
        const { team, repo, access } = await teamAndRepo(request, request.params);
        if (access.mode < AccessMode.admin) {
          throw forbidden('Must have admin-level access to the repository');
        }
        if (add) await repos.addTeamRepo(team, repo);
        else await repos.removeTeamRepo(team, repo);
        return reply.code(204).send(null);
      },
    });
  }

  // Teams of a repository (organization repositories only: 405 for the others, as Forgejo answers)

  const RepoTeamParams = Type.Object({ owner: Type.String(), repo: Type.String(), team: Type.String() });
  const teamJson = async (team: TeamRow, org: UserRow, viewer: Viewer | null) => {
    const [view] = await orgs.teamViews([team]);
    return toTeamJson(view!, toOrgJson(org, rootUrl, viewer));
  };

  app.get(
    '/repos/:owner/:repo/teams',
    {
      schema: {
        tags: ['repository'],
        summary: "List a repository's teams",
        description: 'The teams added to the repository and those that include all repositories.',
        params: RepoParams,
        response: { 200: Type.Array(Team) },
      },
      config: { auth: { scope: 'repository', require: 'signed' } },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, viewer);
      const org = await orgs.orgOfRepo(repo);
      const teams = await orgs.repoTeams(repo);
      const views = await orgs.teamViews(teams);
      const orgJson = toOrgJson(org, rootUrl, viewer);
      return views.map((v) => toTeamJson(v, orgJson));
    },
  );

  app.get(
    '/repos/:owner/:repo/teams/:team',
    {
      schema: {
        tags: ['repository'],
        summary: 'Check if a team is assigned to a repository',
        description:
          '404 when the organization has no such team or the team has no access to the repository.',
        params: RepoTeamParams,
        response: { 200: Team },
      },
      config: { auth: { scope: 'repository', require: 'signed' } },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const p = request.params;
      const { repo } = await repos.requireRepo(p.owner, p.repo, viewer);
      const { org, team } = await orgs.repoOrgTeam(repo, p.team);
      if (!(await repos.teamHasRepo(team, repo))) {
        throw notFound(`team is not assigned to the repository [name: ${team.name}]`);
      }
      return teamJson(team, org, viewer);
    },
  );

  for (const [method, add] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/teams/:team',
      schema: {
        tags: ['repository'],
        summary: add ? 'Add a team to a repository' : 'Delete a team from a repository',
        description: add
          ? '422 when the team already has access to the repository.'
          : '422 when the team has no access to the repository, or includes all repositories.',
        params: RepoTeamParams,
        response: NoContent,
      },
      config: { auth: { scope: 'repository', require: 'signed' } },
      handler: async (request, reply) => {
        const p = request.params;
        const { repo, access } = await repos.requireRepo(p.owner, p.repo, signedViewer(request), 'admin');
        const org = await orgs.orgOfRepo(repo);
        orgs.requireTeamAccessChanger(org, access.mode);
        const { team } = await orgs.repoOrgTeam(repo, p.team);
        await repos.changeTeamAccess(team, repo, add);
        return reply.code(204).send(null);
      },
    });
  }
}
