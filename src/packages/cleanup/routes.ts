// /api/v1/packages/{owner}/-/rules: the owner's package cleanup rules (Anvil's own API; Forgejo
// has these in its web UI only), with /preview listing what a rule would remove now.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import { signedViewer, type RouteAuth } from '../../http/auth.js';
import type { UserService } from '../../users/service.js';
import { Package, OwnerParams, toPackageJson } from '../schemas.js';
import type { PackageService } from '../service.js';
import type { PackageCleanup } from './service.js';
import { CleanupRule, CreateCleanupRule, EditCleanupRule, RuleParams, toRuleJson } from './schemas.js';

export interface PackageCleanupRoutesDeps {
  packages: Pick<PackageService, 'requireOwner'>;
  cleanup: PackageCleanup;
  users: Pick<UserService, 'getByIds'>;
  rootUrl: string;
}

export function packageCleanupRoutes(app: Api, deps: PackageCleanupRoutesDeps): void {
  const { packages, cleanup, users, rootUrl } = deps;
  const tags = ['package'];
  const read: RouteAuth = { scope: 'package', require: 'signed' };
  const write: RouteAuth = { scope: 'package', require: 'signed' };

  const ownerOf = async (request: FastifyRequest, need: 'read' | 'write') => {
    const { owner: name } = request.params as { owner: string };
    const owner = await packages.requireOwner(name, request.identity, need);
    await cleanup.assertMayManage(owner, signedViewer(request));
    return owner;
  };

  app.get(
    '/packages/:owner/-/rules',
    {
      schema: {
        tags,
        operationId: 'listPackageCleanupRules',
        summary: "List an owner's package cleanup rules (Anvil)",
        params: OwnerParams,
        response: { 200: Type.Array(CleanupRule) },
      },
      config: { auth: read },
    },
    async (request) => (await cleanup.list(await ownerOf(request, 'read'))).map(toRuleJson),
  );

  app.post(
    '/packages/:owner/-/rules',
    {
      schema: {
        tags,
        operationId: 'createPackageCleanupRule',
        summary: 'Create a package cleanup rule (Anvil; one per package type)',
        params: OwnerParams,
        body: CreateCleanupRule,
        response: { 201: CleanupRule },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const owner = await ownerOf(request, 'write');
      const b = request.body;
      const rule = await cleanup.create(owner, {
        type: b.type,
        enabled: b.enabled,
        keepCount: b.keep_count,
        keepPattern: b.keep_pattern,
        removeDays: b.remove_days,
        removePattern: b.remove_pattern,
        matchFullName: b.match_full_name,
      });
      return reply.code(201).send(toRuleJson(rule));
    },
  );

  app.get(
    '/packages/:owner/-/rules/:id',
    {
      schema: {
        tags,
        operationId: 'getPackageCleanupRule',
        summary: 'Get a package cleanup rule (Anvil)',
        params: RuleParams,
        response: { 200: CleanupRule },
      },
      config: { auth: read },
    },
    async (request) => toRuleJson(await cleanup.require(await ownerOf(request, 'read'), request.params.id)),
  );

  app.patch(
    '/packages/:owner/-/rules/:id',
    {
      schema: {
        tags,
        operationId: 'editPackageCleanupRule',
        summary: 'Edit a package cleanup rule (Anvil)',
        params: RuleParams,
        body: EditCleanupRule,
        response: { 200: CleanupRule },
      },
      config: { auth: write },
    },
    async (request) => {
      const owner = await ownerOf(request, 'write');
      const rule = await cleanup.require(owner, request.params.id);
      const b = request.body;
      return toRuleJson(
        await cleanup.edit(owner, rule, {
          type: b.type,
          enabled: b.enabled,
          keepCount: b.keep_count,
          keepPattern: b.keep_pattern,
          removeDays: b.remove_days,
          removePattern: b.remove_pattern,
          matchFullName: b.match_full_name,
        }),
      );
    },
  );

  app.delete(
    '/packages/:owner/-/rules/:id',
    {
      schema: {
        tags,
        operationId: 'deletePackageCleanupRule',
        summary: 'Delete a package cleanup rule (Anvil)',
        params: RuleParams,
        response: { 204: Type.Null() },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const owner = await ownerOf(request, 'write');
      await cleanup.delete(await cleanup.require(owner, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/packages/:owner/-/rules/:id/preview',
    {
      schema: {
        tags,
        operationId: 'previewPackageCleanupRule',
        summary: 'The package versions a cleanup rule would remove now (Anvil; a dry run)',
        params: RuleParams,
        response: { 200: Type.Array(Package) },
      },
      config: { auth: read },
    },
    async (request) => {
      const owner = await ownerOf(request, 'read');
      const doomed = await cleanup.preview(await cleanup.require(owner, request.params.id));
      const creatorIds = [
        ...new Set(doomed.map((v) => v.creator_id).filter((id): id is number => id !== null)),
      ];
      const creators = await users.getByIds(creatorIds);
      return doomed.map((v) =>
        toPackageJson(v, { rootUrl, viewer: request.viewer, owner, creators, repos: new Map() }),
      );
    },
  );
}
