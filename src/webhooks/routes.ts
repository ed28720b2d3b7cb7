// HTTP routes for webhooks: /repos/{owner}/{repo}/hooks (repository administrators), /orgs/{org}/hooks
// (organization owners), /user/hooks (the signed-in user's) and /admin/hooks (site administrators:
// system and default hooks), each with list, create, get, edit and delete, and Anvil's delivery
// history under .../hooks/{id}/deliveries; plus POST /repos/{owner}/{repo}/hooks/{id}/tests.
import { Type, type TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, type RouteAuth } from '../http/auth.js';
import { PageFields, pageOf, sendPage, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import { declares } from '../quota/schemas.js';
import { CreateHookOption, EditHookOption, Hook, HookDelivery } from './schemas.js';
import type { HookScope, WebhookService } from './service.js';

interface ScopeRoutes {
  /** The path before /hooks. */
  base: string;
  params: Record<string, TSchema>;
  tags: string[];
  auth: RouteAuth;
  /** Who manages these hooks, for the descriptions. */
  who: string;
  resolve(request: FastifyRequest): Promise<HookScope>;
}

export interface WebhooksRoutesDeps {
  webhooks: WebhookService;
  repos: Pick<RepoService, 'requireRepo'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function webhooksRoutes(app: Api, deps: WebhooksRoutesDeps): void {
  const { repos, orgs, webhooks, paging, rootUrl } = deps;

  const scopes: ScopeRoutes[] = [
    {
      base: '/repos/:owner/:repo',
      params: { owner: Type.String(), repo: Type.String() },
      tags: ['repository'],
      auth: { scope: 'repository', require: 'signed' },
      who: 'repository administrators (404 when the caller cannot see the repository)',
      resolve: async (request) => {
        const p = request.params as { owner: string; repo: string };
        const { repo } = await repos.requireRepo(p.owner, p.repo, request.viewer, 'admin');
        return { kind: 'repo', repo };
      },
    },
    {
      base: '/orgs/:org',
      params: { org: Type.String() },
      tags: ['organization'],
      auth: { scope: 'organization', require: 'signed' },
      who: "the organization's owners; they fire for all its repositories",
      resolve: async (request) => {
        const org = await orgs.requireVisibleOrg((request.params as { org: string }).org, request.viewer);
        await orgs.requireOwner(org, request.viewer!);
        return { kind: 'owner', owner: org };
      },
    },
    {
      base: '/user',
      params: {},
      tags: ['user'],
      auth: { scope: 'user', require: 'signed' },
      who: 'the signed-in user; they fire for all their repositories',
      resolve: async (request) => ({ kind: 'owner', owner: signedIn(request).user }),
    },
    {
      base: '/admin',
      params: {},
      tags: ['admin'],
      auth: { scope: 'admin', admin: true },
      who:
        'site administrators. A system hook (is_system_webhook) fires for every repository; a ' +
        'default hook is copied into each repository created afterwards',
      resolve: async () => ({ kind: 'site' }),
    },
  ];

  for (const sc of scopes) {
    const Params = Type.Object(sc.params);
    const IdParams = Type.Object({ ...sc.params, id: Type.Integer({ description: 'id of the hook' }) });
    const path = `${sc.base}/hooks`;
    const { tags, auth } = sc;

    app.get(
      path,
      {
        schema: {
          tags,
          summary: 'List the hooks',
          description: `Managed by ${sc.who}.`,
          params: Params,
          querystring: Type.Object(PageFields),
          response: { 200: Type.Array(Hook), ...declares(403, 404) },
        },
        config: { auth },
      },
      async (request, reply) => {
        const scope = await sc.resolve(request);
        const page = pageOf(request.query, paging);
        const result = await webhooks.list(scope, page);
        return sendPage(request, reply, result, page, rootUrl, (h) => webhooks.toJson(h));
      },
    );

    app.post(
      path,
      {
        schema: {
          tags,
          summary: 'Create a hook',
          description:
            `Managed by ${sc.who}. config needs url and content_type (json or form); secret signs ` +
            'each delivery (X-Forgejo-Signature: hex HMAC-SHA256 of the payload). 422 for an unknown ' +
            'type, event, content type, method, URL or an invalid branch_filter glob.',
          params: Params,
          body: CreateHookOption,
          response: { 201: Hook, ...declares(400, 403, 404, 422) },
        },
        config: { auth },
      },
      async (request, reply) => {
        const scope = await sc.resolve(request);
        const b = request.body;
        const row = await webhooks.create(scope, {
          type: b.type,
          config: b.config,
          events: b.events,
          branchFilter: b.branch_filter,
          authorizationHeader: b.authorization_header,
          active: b.active,
          isSystemWebhook: b.is_system_webhook,
        });
        return reply.code(201).send(webhooks.toJson(row));
      },
    );

    app.get(
      `${path}/:id`,
      {
        schema: {
          tags,
          summary: 'Get a hook',
          params: IdParams,
          response: { 200: Hook, ...declares(403, 404) },
        },
        config: { auth },
      },
      async (request) => {
        const scope = await sc.resolve(request);
        return webhooks.toJson(await webhooks.requireHook(scope, request.params.id));
      },
    );

    app.patch(
      `${path}/:id`,
      {
        schema: {
          tags,
          summary: 'Edit a hook',
          description:
            'Fields left out stay as they are (config keys too: url, content_type, http_method, secret).',
          params: IdParams,
          body: EditHookOption,
          response: { 200: Hook, ...declares(400, 403, 404, 422) },
        },
        config: { auth },
      },
      async (request) => {
        const scope = await sc.resolve(request);
        const b = request.body ?? {};
        const row = await webhooks.edit(scope, request.params.id, {
          config: b.config,
          events: b.events,
          branchFilter: b.branch_filter,
          authorizationHeader: b.authorization_header,
          active: b.active,
        });
        return webhooks.toJson(row);
      },
    );

    app.delete(
      `${path}/:id`,
      {
        schema: {
          tags,
          summary: 'Delete a hook',
          description: 'Its delivery history (and any delivery still pending) goes with it.',
          params: IdParams,
          response: { 204: Type.Null(), ...declares(403, 404) },
        },
        config: { auth },
      },
      async (request, reply) => {
        const scope = await sc.resolve(request);
        await webhooks.delete(scope, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      `${path}/:id/deliveries`,
      {
        schema: {
          tags,
          summary: "List a hook's deliveries (Anvil extension)",
          description:
            'Newest first: each event sent to the hook, whether it was delivered, the last status ' +
            'code, the number of attempts and when the next is due, the request as sent (headers, ' +
            'body; the Authorization header masked) and the response (its body truncated).',
          params: IdParams,
          querystring: Type.Object(PageFields),
          response: { 200: Type.Array(HookDelivery), ...declares(403, 404) },
        },
        config: { auth },
      },
      async (request, reply) => {
        const scope = await sc.resolve(request);
        const page = pageOf(request.query, paging);
        const [rows, total] = await webhooks.deliveries(scope, request.params.id, page);
        setPageHeaders(request, reply, total, page, rootUrl);
        return rows;
      },
    );
  }

  app.post(
    '/repos/:owner/:repo/hooks/:id/tests',
    {
      schema: {
        tags: ['repository'],
        summary: 'Test a push webhook',
        description:
          'Queues a push event for the commit `ref` names (the head of the default branch when ' +
          'absent) to this hook, whatever events it chose; an inactive hook records it without ' +
          'sending it.',
        params: Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() }),
        querystring: Type.Object({
          ref: Type.Optional(
            Type.String({
              description:
                'The name of the commit/branch/tag, indicates which commit will be loaded to the webhook payload.',
            }),
          ),
        }),
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: { scope: 'repository', require: 'signed' } },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'admin',
      );
      await webhooks.test(repo, request.params.id, signedIn(request).user, request.query.ref || undefined);
      return reply.code(204).send(null);
    },
  );
}
