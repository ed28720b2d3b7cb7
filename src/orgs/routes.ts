// HTTP routes for organizations, their members and teams.
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { forbidden, notFound } from '../errors.js';
import {
  PageFields,
  PageQuery,
  pageOf,
  sendPage,
  type Page,
  type PagingSettings,
} from '../http/pagination.js';
import type { UserService } from '../users/service.js';
import type { OrgService } from './service.js';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import type { TeamRow } from './tables.js';
import { UserType } from '../users/tables.js';
import {
  CreateOrgOption,
  CreateTeamOption,
  EditOrgOption,
  EditTeamOption,
  Organization,
  Team,
  toOrgJson,
  toTeamJson,
} from './schemas.js';

const OrgParams = Type.Object({ org: Type.String() });
const OrgUserParams = Type.Object({ org: Type.String(), username: Type.String() });
const TeamParams = Type.Object({ id: Type.Integer() });
const TeamUserParams = Type.Object({ id: Type.Integer(), username: Type.String() });
const NoContent = { 204: Type.Null() };

export interface OrgRoutesDeps {
  orgs: OrgService;
  users: Pick<UserService, 'requireUser' | 'requireVisibleUser' | 'requireAccount' | 'rename'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function orgRoutes(app: Api, deps: OrgRoutesDeps): void {
  const { orgs, users, paging, rootUrl } = deps;
  const scope = { scope: 'organization' } as const;
  const signed = { scope: 'organization', require: 'signed' } as const;
  const orgJson = (viewer: Viewer | null) => (o: UserRow) => toOrgJson(o, rootUrl, viewer);
  const userJson = (viewer: Viewer | null) => (u: UserRow) => toUserJson(u, { rootUrl, viewer });

  async function teamsJson(teams: TeamRow[], viewer: Viewer | null) {
    const views = await orgs.teamViews(teams);
    const owners = await orgs.orgsByIds([...new Set(teams.map((t) => t.org_id))]);
    return views.map((v) => {
      const org = owners.get(v.team.org_id);
      return toTeamJson(v, org ? toOrgJson(org, rootUrl, viewer) : null);
    });
  }

  function pageQuery(request: FastifyRequest): Page {
    return pageOf(request.query as { page?: number; limit?: number }, paging);
  }

  function listOrgsReply(
    request: FastifyRequest,
    reply: FastifyReply,
    result: [UserRow[], number],
    page: Page,
  ) {
    return sendPage(request, reply, result, page, rootUrl, orgJson(request.viewer));
  }

  app.get(
    '/orgs',
    {
      schema: {
        tags: ['organization'],
        summary: 'Get list of organizations',
        querystring: PageQuery,
        response: { 200: Type.Array(Organization) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      return listOrgsReply(
        request,
        reply,
        await orgs.listOrgs(request.viewer, page.limit, page.offset),
        page,
      );
    },
  );

  app.get(
    '/admin/orgs',
    {
      schema: {
        tags: ['admin'],
        summary: 'List all organizations',
        querystring: PageQuery,
        response: { 200: Type.Array(Organization) },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      return listOrgsReply(
        request,
        reply,
        await orgs.listOrgs(request.viewer, page.limit, page.offset),
        page,
      );
    },
  );

  app.post(
    '/orgs',
    {
      schema: {
        tags: ['organization'],
        summary: 'Create an organization',
        body: CreateOrgOption,
        response: { 201: Organization },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const b = request.body;
      const org = await orgs.create(signedIn(request).user, {
        username: b.username,
        fullName: b.full_name,
        email: b.email,
        description: b.description,
        website: b.website,
        location: b.location,
        visibility: b.visibility,
        repoAdminChangeTeamAccess: b.repo_admin_change_team_access,
      });
      return reply.code(201).send(toOrgJson(org, rootUrl, request.viewer));
    },
  );

  app.post(
    '/admin/users/:username/orgs',
    {
      schema: {
        tags: ['admin'],
        summary: 'Create an organization owned by a user',
        params: Type.Object({ username: Type.String() }),
        body: CreateOrgOption,
        response: { 201: Organization },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const owner = await users.requireUser(request.params.username);
      const b = request.body;
      const org = await orgs.create(owner, {
        username: b.username,
        fullName: b.full_name,
        email: b.email,
        description: b.description,
        website: b.website,
        location: b.location,
        visibility: b.visibility,
        repoAdminChangeTeamAccess: b.repo_admin_change_team_access,
      });
      return reply.code(201).send(toOrgJson(org, rootUrl, request.viewer));
    },
  );

  app.get(
    '/orgs/:org',
    {
      schema: {
        tags: ['organization'],
        summary: 'Get an organization',
        params: OrgParams,
        response: { 200: Organization },
      },
      config: { auth: scope },
    },
    async (request) =>
      toOrgJson(await orgs.requireVisibleOrg(request.params.org, request.viewer), rootUrl, request.viewer),
  );

  app.patch(
    '/orgs/:org',
    {
      schema: {
        tags: ['organization'],
        summary: 'Edit an organization',
        params: OrgParams,
        body: EditOrgOption,
        response: { 200: Organization },
      },
      config: { auth: signed },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      const b = request.body;
      const edited = await orgs.edit(org, {
        fullName: b.full_name,
        email: b.email,
        description: b.description,
        website: b.website,
        location: b.location,
        visibility: b.visibility,
        repoAdminChangeTeamAccess: b.repo_admin_change_team_access,
      });
      return toOrgJson(edited, rootUrl, viewer);
    },
  );

  app.get(
    '/users/:username/orgs/:org/permissions',
    {
      schema: {
        tags: ['organization'],
        operationId: 'orgGetUserPermissions',
        summary: 'Get user permissions in organization',
        params: Type.Object({ username: Type.String(), org: Type.String() }),
        response: {
          200: Type.Object(
            {
              can_read: Type.Boolean(),
              can_write: Type.Boolean(),
              is_admin: Type.Boolean(),
              is_owner: Type.Boolean(),
              can_create_repository: Type.Boolean(),
            },
            { title: 'OrganizationPermissions' },
          ),
        },
      },
      config: { auth: { scope: 'organization' } },
    },
    async (request) => {
      const user = await users.requireVisibleUser(request.params.username, request.viewer);
      const org = await users.requireAccount(request.params.org);
      if (org.type !== UserType.Organization)
        throw notFound(`organization does not exist [name: ${org.name}]`);
      // As Forgejo: an organization the caller may not see is refused, not hidden.
      if (!(await orgs.canSee(request.viewer, org))) throw forbidden('Private organization');
      return orgs.permissionsOf(org, user);
    },
  );

  app.post(
    '/orgs/:org/rename',
    {
      schema: {
        tags: ['organization'],
        operationId: 'renameOrg',
        summary: 'Rename an organization',
        description: 'The former name keeps leading to the organization and its repositories until taken.',
        params: OrgParams,
        body: Type.Object(
          {
            new_name: Type.String({ description: 'New name of the organization, not in use by any account' }),
          },
          { title: 'RenameOrgOption' },
        ),
        response: { 204: Type.Null() },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      await users.rename(org, request.body.new_name, 'new_name');
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/orgs/:org',
    {
      schema: {
        tags: ['organization'],
        summary: 'Delete an organization',
        params: OrgParams,
        response: NoContent,
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      await orgs.delete(org);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/user/orgs',
    {
      schema: {
        tags: ['organization'],
        summary: "List the current user's organizations",
        querystring: PageQuery,
        response: { 200: Type.Array(Organization) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const me = signedIn(request).user;
      return listOrgsReply(
        request,
        reply,
        await orgs.listOrgsOfUser(me, request.viewer, page.limit, page.offset),
        page,
      );
    },
  );

  app.get(
    '/users/:username/orgs',
    {
      schema: {
        tags: ['organization'],
        summary: "List a user's organizations",
        params: Type.Object({ username: Type.String() }),
        querystring: PageQuery,
        response: { 200: Type.Array(Organization) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const u = await users.requireVisibleUser(request.params.username, request.viewer);
      return listOrgsReply(
        request,
        reply,
        await orgs.listOrgsOfUser(u, request.viewer, page.limit, page.offset),
        page,
      );
    },
  );

  // Members

  app.get(
    '/orgs/:org/members',
    {
      schema: {
        tags: ['organization'],
        summary: "List an organization's members (public members only for non-members)",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      const result = await orgs.listMembers(org, request.viewer, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, userJson(request.viewer));
    },
  );

  app.get(
    '/orgs/:org/public_members',
    {
      schema: {
        tags: ['organization'],
        summary: "List an organization's public members",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: scope },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      const result = await orgs.listPublicMembers(org, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, userJson(request.viewer));
    },
  );

  for (const [path, publicOnly] of [
    ['/orgs/:org/members/:username', false],
    ['/orgs/:org/public_members/:username', true],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          tags: ['organization'],
          summary: publicOnly ? 'Check if a user is a public member' : 'Check if a user is a member',
          params: OrgUserParams,
          response: NoContent,
        },
        config: { auth: scope },
      },
      async (request, reply) => {
        const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
        const u = await users.requireUser(request.params.username);
        if (!(await orgs.showsMember(org, u, request.viewer, publicOnly))) {
          throw notFound(`user is not a ${publicOnly ? 'public ' : ''}member [name: ${u.name}]`);
        }
        return reply.code(204).send(null);
      },
    );
  }

  app.delete(
    '/orgs/:org/members/:username',
    {
      schema: {
        tags: ['organization'],
        summary: 'Remove a member from an organization',
        params: OrgUserParams,
        response: NoContent,
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      await orgs.removeMember(org, await users.requireUser(request.params.username));
      return reply.code(204).send(null);
    },
  );

  for (const [method, isPublic] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/orgs/:org/public_members/:username',
      schema: {
        tags: ['organization'],
        summary: isPublic ? "Publicize a user's membership" : "Conceal a user's membership",
        params: OrgUserParams,
        response: NoContent,
      },
      config: { auth: signed },
      handler: async (request, reply) => {
        const viewer = signedViewer(request);
        const org = await orgs.requireVisibleOrg(request.params.org, viewer);
        const u = await users.requireUser(request.params.username);
        await orgs.setPublicMembership(org, u, viewer, isPublic);
        return reply.code(204).send(null);
      },
    });
  }

  // Teams

  app.get(
    '/orgs/:org/teams',
    {
      schema: {
        tags: ['organization'],
        summary: "List an organization's teams",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Type.Array(Team) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const page = pageQuery(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireMember(org, viewer);
      const [teams, total] = await orgs.listTeams(org, page.limit, page.offset);
      const body = await teamsJson(teams, viewer);
      return sendPage(request, reply, [body, total], page, rootUrl, (t) => t);
    },
  );

  app.get(
    '/orgs/:org/teams/search',
    {
      schema: {
        tags: ['organization'],
        summary: "Search an organization's teams",
        description:
          'Site administrators search every team of the organization; other members search the teams they belong to.',
        params: OrgParams,
        querystring: Type.Object({
          ...PageFields,
          q: Type.Optional(Type.String({ description: 'keywords to search' })),
          include_desc: Type.Optional(
            Type.Boolean({ description: 'include search within team description (defaults to true)' }),
          ),
        }),
        response: { 200: Type.Object({ ok: Type.Boolean(), data: Type.Array(Team) }) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const page = pageQuery(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireMember(org, viewer);
      const [teams, total] = await orgs.searchTeams(
        org,
        viewer,
        { keyword: request.query.q, includeDesc: request.query.include_desc },
        page.limit,
        page.offset,
      );
      const body = await teamsJson(teams, viewer);
      return { ok: true, data: sendPage(request, reply, [body, total], page, rootUrl, (t) => t) };
    },
  );

  app.post(
    '/orgs/:org/teams',
    {
      schema: {
        tags: ['organization'],
        summary: 'Create a team',
        params: OrgParams,
        body: CreateTeamOption,
        response: { 201: Team },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      const b = request.body;
      const view = await orgs.createTeam(org, {
        name: b.name,
        description: b.description,
        permission: b.permission,
        units: b.units,
        unitsMap: b.units_map,
        includesAllRepositories: b.includes_all_repositories,
        canCreateOrgRepo: b.can_create_org_repo,
      });
      return reply.code(201).send(toTeamJson(view, toOrgJson(org, rootUrl, viewer)));
    },
  );

  app.get(
    '/user/teams',
    {
      schema: {
        tags: ['user'],
        summary: "List the current user's teams",
        querystring: PageQuery,
        response: { 200: Type.Array(Team) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const [teams, total] = await orgs.listTeamsOfUser(signedIn(request).user, page.limit, page.offset);
      const body = await teamsJson(teams, request.viewer);
      return sendPage(request, reply, [body, total], page, rootUrl, (t) => t);
    },
  );

  app.get(
    '/teams/:id',
    {
      schema: { tags: ['organization'], summary: 'Get a team', params: TeamParams, response: { 200: Team } },
      config: { auth: signed },
    },
    async (request) => {
      const { team } = await orgs.requireTeam(request.params.id, signedViewer(request));
      return (await teamsJson([team], request.viewer))[0];
    },
  );

  app.patch(
    '/teams/:id',
    {
      schema: {
        tags: ['organization'],
        summary: 'Edit a team',
        params: TeamParams,
        body: EditTeamOption,
        response: { 200: Team },
      },
      config: { auth: signed },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const { team, org } = await orgs.requireTeam(request.params.id, viewer);
      await orgs.requireOwner(org, viewer);
      const [view] = await orgs.teamViews([team]);
      const b = request.body;
      const edited = await orgs.editTeam(view!, {
        name: b.name,
        description: b.description,
        permission: b.permission,
        units: b.units,
        unitsMap: b.units_map,
        includesAllRepositories: b.includes_all_repositories,
        canCreateOrgRepo: b.can_create_org_repo,
      });
      return toTeamJson(edited, toOrgJson(org, rootUrl, viewer));
    },
  );

  app.delete(
    '/teams/:id',
    {
      schema: { tags: ['organization'], summary: 'Delete a team', params: TeamParams, response: NoContent },
      config: { auth: signed },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const { team, org } = await orgs.requireTeam(request.params.id, viewer);
      await orgs.requireOwner(org, viewer);
      await orgs.deleteTeam(team);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/teams/:id/members',
    {
      schema: {
        tags: ['organization'],
        summary: "List a team's members",
        params: TeamParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const page = pageQuery(request);
      const { team } = await orgs.requireTeam(request.params.id, signedViewer(request));
      const result = await orgs.listTeamMembers(team, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, userJson(request.viewer));
    },
  );

  app.get(
    '/teams/:id/members/:username',
    {
      schema: {
        tags: ['organization'],
        summary: 'Get a particular member of a team',
        params: TeamUserParams,
        response: { 200: User },
      },
      config: { auth: signed },
    },
    async (request) => {
      const { team } = await orgs.requireTeam(request.params.id, signedViewer(request));
      const u = await users.requireUser(request.params.username);
      if (!(await orgs.isTeamMember(team, u.id)))
        throw notFound(`user is not a member of the team [name: ${u.name}]`);
      return toUserJson(u, { rootUrl, viewer: request.viewer });
    },
  );

  for (const [method, add] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/teams/:id/members/:username',
      schema: {
        tags: ['organization'],
        summary: add ? 'Add a team member' : 'Remove a team member',
        params: TeamUserParams,
        response: NoContent,
      },
      config: { auth: signed },
      handler: async (request, reply) => {
        const viewer = signedViewer(request);
        const { team, org } = await orgs.requireTeam(request.params.id, viewer);
        await orgs.requireOwner(org, viewer);
        const u = await users.requireUser(request.params.username);
        if (add) await orgs.addTeamMember(team, u);
        else await orgs.removeTeamMember(team, u);
        return reply.code(204).send(null);
      },
    });
  }
}
