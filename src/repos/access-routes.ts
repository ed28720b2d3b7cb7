// HTTP routes for who may use a repository: collaborators (and their permissions), assignees and
// reviewers, a team's repositories and a repository's teams.
import { Type, type Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { forbidden, invalid, notFound } from '../errors.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { OrgService } from '../orgs/service.js';
import { Team, toOrgJson, toTeamJson } from '../orgs/schemas.js';
import { AccessMode, accessModeName, type TeamRow } from '../orgs/tables.js';
import type { UserService } from '../users/service.js';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import { UserType, type UserRow } from '../users/tables.js';
import type { Collaborators } from './collaborators.js';
import type { RepoPresenter } from './present.js';
import { Repository } from './schemas.js';
import type { RepoService } from './service.js';

const NoContent = { 204: Type.Null() };

export interface RepoAccessRoutesDeps {
  repos: Pick<RepoService, 'requireRepo' | 'access' | 'assignees' | 'reviewers' | 'listTeamRepos'>;
  collaborators: Collaborators;
  presenter: Pick<RepoPresenter, 'reposJson' | 'repoJson'>;
  users: Pick<UserService, 'getByName' | 'requireUser'>;
  orgs: Pick<
    OrgService,
    'requireTeam' | 'teamViews' | 'orgOfRepo' | 'repoTeams' | 'repoOrgTeam' | 'requireTeamAccessChanger'
  >;
  paging: PagingSettings;
  rootUrl: string;
}

export function repoAccessRoutes(app: Api, deps: RepoAccessRoutesDeps): void {
  const { repos, collaborators, presenter, users, orgs, paging, rootUrl } = deps;
  const scope = { scope: 'repository' } as const;
  const signed = { scope: 'repository', require: 'signed' } as const;
  const tags = ['repository'];

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
      const page = pageOf(request.query, paging);
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const result = await collaborators.listCollaborators(repo, page.limit, page.offset);
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
      if (!(await collaborators.isCollaborator(repo, u)))
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
      await collaborators.setCollaborator(repo, u, request.body?.permission ?? 'write');
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
      await collaborators.removeCollaborator(repo, await collaboratorNamed(request.params.collaborator));
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
      const page = pageOf(request.query, paging);
      const { team } = await orgs.requireTeam(request.params.id, signedViewer(request));
      const result = await repos.listTeamRepos(team, page.limit, page.offset);
      const body = await presenter.reposJson(result[0], request.viewer);
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
      if (!(await collaborators.teamHasRepo(team, repo))) {
        throw notFound(`repository is not in the team [id: ${team.id}, name: ${repo.name}]`);
      }
      return presenter.repoJson(repo, request.viewer);
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
        if (add) await collaborators.addTeamRepo(team, repo);
        else await collaborators.removeTeamRepo(team, repo);
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
      if (!(await collaborators.teamHasRepo(team, repo))) {
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
        await collaborators.changeTeamAccess(team, repo, add);
        return reply.code(204).send(null);
      },
    });
  }
}
