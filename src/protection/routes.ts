// HTTP routes for branch protection rules, /repos/{owner}/{repo}/branch_protections[/{name}], and
// tag protection rules, /repos/{owner}/{repo}/tag_protections[/{id}].
// All of them need a signed-in repository administrator (Forgejo: reqToken + reqAdmin). A rule
// name may contain '/' and glob characters: {name} is also accepted as the rest of the path.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RepoService } from '../repos/service.js';
import type { ProtectionService } from './service.js';
import type { RouteAuth } from '../http/auth.js';
import { notFound } from '../errors.js';
import {
  BranchProtection,
  CreateBranchProtectionOption,
  CreateTagProtectionOption,
  EditBranchProtectionOption,
  EditTagProtectionOption,
  TagProtection,
  toBranchProtectionJson,
  toTagProtectionJson,
} from './schemas.js';

import { RepoParams } from '../http/params.js';
const NameParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  name: Type.String({ description: "name of the rule (it may contain glob characters; '/' as %2F)" }),
});
const IdParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() });
const RestParams = Type.Object({ owner: Type.String(), repo: Type.String(), '*': Type.String() });

export interface ProtectionRoutesDeps {
  protection: ProtectionService;
  repos: Pick<RepoService, 'requireRepo'>;
}

export function protectionRoutes(app: Api, deps: ProtectionRoutesDeps): void {
  const { repos, protection } = deps;
  const auth: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];
  const config = { auth };

  const adminRepo = async (request: FastifyRequest, p: { owner: string; repo: string }) =>
    (await repos.requireRepo(p.owner, p.repo, request.viewer, 'admin')).repo;

  app.get(
    '/repos/:owner/:repo/branch_protections',
    {
      schema: {
        tags,
        summary: 'List branch protections for a repository',
        description: 'In priority order: plain branch names first, then globs, each in creation order.',
        params: RepoParams,
        response: { 200: Type.Array(BranchProtection) },
      },
      config,
    },
    async (request) => {
      const repo = await adminRepo(request, request.params);
      return (await protection.list(repo)).map(toBranchProtectionJson);
    },
  );

  app.post(
    '/repos/:owner/:repo/branch_protections',
    {
      schema: {
        tags,
        summary: 'Create a branch protections for a repository',
        description:
          '422 when a rule of that name exists, when a listed user or team does not exist, or when ' +
          'teams are listed for a repository that does not belong to an organization.',
        params: RepoParams,
        body: CreateBranchProtectionOption,
        response: { 201: BranchProtection },
      },
      config,
    },
    async (request, reply) => {
      const repo = await adminRepo(request, request.params);
      const rule = await protection.create(repo, request.body);
      return reply.code(201).send(toBranchProtectionJson(rule));
    },
  );

  // {name} as one path segment (with '/' sent as %2F, as Forgejo's clients do) is what the OpenAPI
  // document shows; the same handlers also answer names written with a plain '/' (hidden route).
  const byName = [
    { url: '/repos/:owner/:repo/branch_protections/:name', params: NameParams, hide: false },
    { url: '/repos/:owner/:repo/branch_protections/*', params: RestParams, hide: true },
  ] as const;
  const nameOf = (p: { name?: string; '*'?: string }) => {
    const name = p.name ?? p['*'] ?? '';
    if (!name) throw notFound('branch protection does not exist [name: ]');
    return name;
  };

  for (const { url, params, hide } of byName) {
    app.get(
      url,
      {
        schema: {
          hide,
          tags,
          summary: 'Get a specific branch protection for the repository',
          params,
          response: { 200: BranchProtection },
        },
        config,
      },
      async (request) => {
        const repo = await adminRepo(request, request.params);
        return toBranchProtectionJson(await protection.get(repo, nameOf(request.params)));
      },
    );

    app.patch(
      url,
      {
        schema: {
          hide,
          tags,
          summary: 'Edit a branch protections for a repository. Only fields that are set will be changed',
          description:
            'status_check_contexts is replaced whenever it is present and not null, whatever ' +
            'enable_status_check says; null or absent leaves it unchanged.',
          params,
          body: EditBranchProtectionOption,
          response: { 200: BranchProtection },
        },
        config,
      },
      async (request) => {
        const repo = await adminRepo(request, request.params);
        return toBranchProtectionJson(await protection.edit(repo, nameOf(request.params), request.body));
      },
    );

    app.delete(
      url,
      {
        schema: {
          hide,
          tags,
          summary: 'Delete a specific branch protection for the repository',
          params,
          response: { 204: Type.Null() },
        },
        config,
      },
      async (request, reply) => {
        const repo = await adminRepo(request, request.params);
        await protection.delete(repo, nameOf(request.params));
        return reply.code(204).send(null);
      },
    );
  }

  // Tag protections

  app.get(
    '/repos/:owner/:repo/tag_protections',
    {
      schema: {
        tags,
        summary: 'List tag protections for a repository',
        description: 'In creation order.',
        params: RepoParams,
        response: { 200: Type.Array(TagProtection) },
      },
      config,
    },
    async (request) => {
      const repo = await adminRepo(request, request.params);
      return (await protection.listTagRules(repo)).map(toTagProtectionJson);
    },
  );

  app.post(
    '/repos/:owner/:repo/tag_protections',
    {
      schema: {
        tags,
        summary: 'Create a tag protections for a repository',
        description:
          '422 when name_pattern is empty, cannot be read or is already a rule, when no user or team ' +
          'is allowed, when a listed user or team does not exist, or when teams are listed for a ' +
          'repository that does not belong to an organization.',
        params: RepoParams,
        body: CreateTagProtectionOption,
        response: { 201: TagProtection },
      },
      config,
    },
    async (request, reply) => {
      const repo = await adminRepo(request, request.params);
      const rule = await protection.createTagRule(repo, request.body);
      return reply.code(201).send(toTagProtectionJson(rule));
    },
  );

  app.get(
    '/repos/:owner/:repo/tag_protections/:id',
    {
      schema: {
        tags,
        summary: 'Get a specific tag protection for the repository',
        params: IdParams,
        response: { 200: TagProtection },
      },
      config,
    },
    async (request) => {
      const repo = await adminRepo(request, request.params);
      return toTagProtectionJson(await protection.getTagRule(repo, request.params.id));
    },
  );

  app.patch(
    '/repos/:owner/:repo/tag_protections/:id',
    {
      schema: {
        tags,
        summary: 'Edit a tag protections for a repository. Only fields that are set will be changed',
        params: IdParams,
        body: EditTagProtectionOption,
        response: { 200: TagProtection },
      },
      config,
    },
    async (request) => {
      const repo = await adminRepo(request, request.params);
      return toTagProtectionJson(await protection.editTagRule(repo, request.params.id, request.body));
    },
  );

  app.delete(
    '/repos/:owner/:repo/tag_protections/:id',
    {
      schema: {
        tags,
        summary: 'Delete a specific tag protection for the repository',
        params: IdParams,
        response: { 204: Type.Null() },
      },
      config,
    },
    async (request, reply) => {
      const repo = await adminRepo(request, request.params);
      await protection.deleteTagRule(repo, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
