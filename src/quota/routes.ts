// HTTP routes of the quota engine: administration under /admin/quota and /admin/users/{u}/quota,
// and the signed-in user's and organizations' own views. All absent (404) when quota is disabled.
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { PageFields, PageQuery, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import { User, toUserJson } from '../users/schemas.js';
import type { UserRow } from '../users/tables.js';
import {
  CreateQuotaGroupOptions,
  CreateQuotaRuleOptions,
  EditQuotaRuleOptions,
  QuotaGroup,
  QuotaInfo,
  QuotaRuleInfo,
  QuotaUsedArtifact,
  QuotaUsedAttachment,
  QuotaUsedPackage,
  SetUserQuotaGroupsOptions,
  declares,
  toGroupJson,
  toRuleJson,
  toUsedJson,
} from './schemas.js';
import type { ItemSources, QuotaService } from './service.js';

const RuleParams = Type.Object({ quotarule: Type.String() });
const GroupParams = Type.Object({ quotagroup: Type.String() });
const GroupUserParams = Type.Object({ quotagroup: Type.String(), username: Type.String() });
const GroupRuleParams = Type.Object({ quotagroup: Type.String(), quotarule: Type.String() });
const NoContent = { 204: Type.Null() };
const CheckQuery = Type.Object({ subject: Type.String({ description: 'subject of the quota' }) });

export interface QuotaRoutesDeps {
  quota: QuotaService;
  users: Pick<UserService, 'requireAccount'>;
  /** An organization's own quota is shown to its members. */
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireMember'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function quotaRoutes(app: Api, deps: QuotaRoutesDeps): void {
  const { quota, users, orgs, paging, rootUrl } = deps;
  if (!quota.settings.enabled) return;
  const admin: RouteAuth = { scope: 'admin', admin: true };
  const tags = ['admin'];

  // Rules

  app.get(
    '/admin/quota/rules',
    {
      schema: {
        tags,
        summary: 'List the available quota rules',
        response: { 200: Type.Array(QuotaRuleInfo), ...declares(403) },
      },
      config: { auth: admin },
    },
    async () => (await quota.listRules()).map((r) => toRuleJson(r, true)),
  );

  app.post(
    '/admin/quota/rules',
    {
      schema: {
        tags,
        summary: 'Create a new quota rule',
        body: CreateQuotaRuleOptions,
        response: { 201: QuotaRuleInfo, ...declares(400, 403, 409, 422) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      const rule = await quota.createRule(request.body);
      return reply.code(201).send(toRuleJson(rule, true));
    },
  );

  app.get(
    '/admin/quota/rules/:quotarule',
    {
      schema: {
        tags,
        summary: 'Get information about a quota rule',
        params: RuleParams,
        response: { 200: QuotaRuleInfo, ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request) => toRuleJson(await quota.requireRule(request.params.quotarule), true),
  );

  app.patch(
    '/admin/quota/rules/:quotarule',
    {
      schema: {
        tags,
        summary: 'Change an existing quota rule',
        params: RuleParams,
        body: EditQuotaRuleOptions,
        response: { 200: QuotaRuleInfo, ...declares(400, 403, 404, 422) },
      },
      config: { auth: admin },
    },
    async (request) => toRuleJson(await quota.editRule(request.params.quotarule, request.body), true),
  );

  app.delete(
    '/admin/quota/rules/:quotarule',
    {
      schema: {
        tags,
        summary: 'Deletes a quota rule',
        params: RuleParams,
        response: { ...NoContent, ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      await quota.deleteRule(request.params.quotarule);
      return reply.code(204).send(null);
    },
  );

  // Groups

  app.get(
    '/admin/quota/groups',
    {
      schema: {
        tags,
        summary: 'List the available quota groups',
        response: { 200: Type.Array(QuotaGroup), ...declares(403) },
      },
      config: { auth: admin },
    },
    async () => (await quota.listGroups()).map((g) => toGroupJson(g, true)),
  );

  app.post(
    '/admin/quota/groups',
    {
      schema: {
        tags,
        summary: 'Create a new quota group',
        description:
          'All or nothing: a rule entry whose name exists is used unchanged; a missing one is created from the entry ' +
          '(absent limit: 0). On any failure no group and no new rule remains.',
        body: CreateQuotaGroupOptions,
        response: { 201: QuotaGroup, ...declares(400, 403, 409, 422) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      const group = await quota.createGroup(request.body.name, request.body.rules ?? []);
      return reply.code(201).send(toGroupJson(group, true));
    },
  );

  app.get(
    '/admin/quota/groups/:quotagroup',
    {
      schema: {
        tags,
        summary: 'Get information about the quota group',
        params: GroupParams,
        response: { 200: QuotaGroup, ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request) => toGroupJson(await quota.requireGroup(request.params.quotagroup), true),
  );

  app.delete(
    '/admin/quota/groups/:quotagroup',
    {
      schema: {
        tags,
        summary: 'Delete a quota group',
        params: GroupParams,
        response: { ...NoContent, ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      await quota.deleteGroup(request.params.quotagroup);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/admin/quota/groups/:quotagroup/users',
    {
      schema: {
        tags,
        summary: 'List users in a quota group',
        params: GroupParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User), ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await quota.usersOfGroup(request.params.quotagroup, page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (u) =>
        toUserJson(u, { rootUrl, viewer: request.viewer }),
      );
    },
  );

  for (const [method, add] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/admin/quota/groups/:quotagroup/users/:username',
      schema: {
        tags,
        summary: add ? 'Add a user to a quota group' : 'Remove a user from a quota group',
        params: GroupUserParams,
        response: { ...NoContent, ...(add ? declares(400, 403, 404, 409, 422) : declares(400, 403, 404)) },
      },
      config: { auth: admin },
      handler: async (request, reply) => {
        const group = request.params.quotagroup;
        await quota.requireGroup(group);
        const user = await users.requireAccount(request.params.username);
        if (add) await quota.addUserToGroup(group, user);
        else await quota.removeUserFromGroup(group, user);
        return reply.code(204).send(null);
      },
    });

    app.route({
      method,
      url: '/admin/quota/groups/:quotagroup/rules/:quotarule',
      schema: {
        tags,
        summary: add ? 'Adds a rule to a quota group' : 'Removes a rule from a quota group',
        description: add ? undefined : "Forgejo's description declares 201; the answer is 204.",
        params: GroupRuleParams,
        response: { ...NoContent, ...(add ? declares(400, 403, 404, 409, 422) : declares(400, 403, 404)) },
      },
      config: { auth: admin },
      handler: async (request, reply) => {
        if (add) await quota.addRuleToGroup(request.params.quotagroup, request.params.quotarule);
        else await quota.removeRuleFromGroup(request.params.quotagroup, request.params.quotarule);
        return reply.code(204).send(null);
      },
    });
  }

  app.post(
    '/admin/users/:username/quota/groups',
    {
      schema: {
        tags,
        summary: "Set the user's quota groups to a given list",
        description:
          "Replaces the user's whole list of groups; if any named group does not exist, 422 and no change.",
        params: Type.Object({ username: Type.String() }),
        body: SetUserQuotaGroupsOptions,
        response: { ...NoContent, ...declares(400, 403, 404, 422) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      const user = await users.requireAccount(request.params.username);
      await quota.setUserGroups(user, request.body.groups);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/admin/users/:username/quota',
    {
      schema: {
        tags,
        summary: "Get the user's quota info",
        params: Type.Object({ username: Type.String() }),
        response: { 200: QuotaInfo, ...declares(400, 403, 404) },
      },
      config: { auth: admin },
    },
    async (request) => infoJson(await users.requireAccount(request.params.username), true),
  );

  // The signed-in user's and organizations' own views

  async function infoJson(owner: UserRow, withNames: boolean) {
    const { groups, usage } = await quota.info(owner.id);
    return { used: toUsedJson(usage), groups: groups.map((g) => toGroupJson(g, withNames)) };
  }

  const userAuth: RouteAuth = { scope: 'user', require: 'signed' };
  const orgAuth: RouteAuth = { scope: 'organization', require: 'signed' };
  const OrgParams = Type.Object({ org: Type.String() });

  /** The organization of the path, for its members (and site administrators). */
  async function orgOf(request: FastifyRequest): Promise<UserRow> {
    const viewer = signedViewer(request);
    const org = await orgs.requireVisibleOrg((request.params as { org: string }).org, viewer);
    await orgs.requireMember(org, viewer);
    return org;
  }

  const owners = [
    {
      prefix: '/user/quota',
      auth: userAuth,
      tag: 'user',
      params: undefined,
      errors: declares(401, 403),
      owner: async (r: FastifyRequest) => signedIn(r).user,
    },
    {
      prefix: '/orgs/:org/quota',
      auth: orgAuth,
      tag: 'organization',
      params: OrgParams,
      errors: declares(401, 403, 404),
      owner: orgOf,
    },
  ];

  for (const o of owners) {
    const whose = o.tag === 'user' ? 'the authenticated user' : 'the organization';
    // A `params: undefined` key makes Fastify warn that the schema is missing: omit it instead.
    const params = o.params ? { params: o.params } : {};
    app.get(
      o.prefix,
      {
        schema: {
          tags: [o.tag],
          summary: `Get quota information of ${whose}`,
          ...params,
          response: { 200: QuotaInfo, ...o.errors },
        },
        config: { auth: o.auth },
      },
      async (request) => infoJson(await o.owner(request), signedIn(request).user.is_admin === 1),
    );

    app.get(
      `${o.prefix}/check`,
      {
        schema: {
          tags: [o.tag],
          summary: `Check if ${whose} is over quota for a given subject`,
          ...params,
          querystring: CheckQuery,
          response: { 200: Type.Boolean(), ...o.errors, ...declares(422) },
        },
        config: { auth: o.auth },
      },
      async (request) => {
        const owner = await o.owner(request);
        return quota.check(owner.id, (request.query as { subject: string }).subject);
      },
    );

    const lists: Array<
      [
        keyof ItemSources,
        string,
        typeof QuotaUsedAttachment | typeof QuotaUsedArtifact | typeof QuotaUsedPackage,
      ]
    > = [
      ['attachments', 'attachments', QuotaUsedAttachment],
      ['artifacts', 'artifacts', QuotaUsedArtifact],
      ['packages', 'packages', QuotaUsedPackage],
    ];
    for (const [kind, noun, item] of lists) {
      app.get(
        `${o.prefix}/${kind}`,
        {
          schema: {
            tags: [o.tag],
            summary: `List the ${noun} affecting the quota of ${whose}`,
            ...params,
            querystring: Type.Object(PageFields),
            response: { 200: Type.Array(item), ...o.errors },
          },
          config: { auth: o.auth },
        },
        async (request: FastifyRequest, reply: FastifyReply) => {
          const owner = await o.owner(request);
          const page = pageOf(request.query as { page?: number; limit?: number }, paging);
          const result = await quota.listItems(kind, owner.id, page.limit, page.offset);
          // Each kind's source yields exactly the shape of its `item` schema.
          return sendPage(request, reply, result as [never[], number], page, rootUrl, (x) => x);
        },
      );
    }
  }
}
