// /api/v1/packages/{owner}: the REST view of an owner's packages (one entry per version), a
// version's files, deleting a version, and linking a package to a repository of its owner.
// Reading follows the owner's visibility (and a linked repository's access); deleting and linking
// need write access to the owner's packages. Formats' own endpoints live under /api/packages
// (see registry.ts).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { declares } from '../quota/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { RepositoryJson } from '../repos/schemas.js';
import {
  LinkParams,
  OwnerParams,
  Package,
  PackageFile,
  PackageListQuery,
  PackageParams,
  VersionParams,
  repoJsonOf,
  toPackageFileJson,
  toPackageJson,
} from './schemas.js';
import type { PackageService } from './service.js';
import type { VersionWithPackage } from './tables.js';

export interface PackagesRoutesDeps {
  packages: PackageService;
  users: Pick<UserService, 'getByIds'>;
  repos: Pick<RepoService, 'accessMany'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function packagesRoutes(app: Api, deps: PackagesRoutesDeps): void {
  const { packages, users, paging, rootUrl } = deps;
  const tags = ['package'];
  const read: RouteAuth = { scope: 'package' };
  const write: RouteAuth = { scope: 'package', require: 'signed' };

  /** Package JSON for versions of `owner`: creators and linked repositories in a fixed number of queries. */
  async function packagesJson(request: FastifyRequest, owner: UserRow, rows: VersionWithPackage[]) {
    const creatorIds = [...new Set(rows.map((r) => r.creator_id).filter((id): id is number => id !== null))];
    const repoIds = [...new Set(rows.map((r) => r.repo_id).filter((id): id is number => id !== null))];
    const [creators, repoRows] = await Promise.all([
      users.getByIds(creatorIds),
      packages.reposByIds(repoIds),
    ]);
    const access = await deps.repos.accessMany(
      [...repoRows.values()],
      request.viewer,
      new Map([[owner.id, owner]]),
    );
    const repos = new Map<number, RepositoryJson>();
    for (const repo of repoRows.values()) {
      const a = access.get(repo.id)!;
      if (a.mode > 0) repos.set(repo.id, repoJsonOf(repo, owner, a, { rootUrl, viewer: request.viewer }));
    }
    // A version linked to a repository the viewer cannot read is not shown.
    const visible = rows.filter(
      (r) => r.repo_id === null || repos.has(r.repo_id) || !repoRows.has(r.repo_id),
    );
    return {
      visible,
      json: (r: VersionWithPackage) =>
        toPackageJson(r, { rootUrl, viewer: request.viewer, owner, creators, repos }),
    };
  }

  app.get(
    '/packages/:owner',
    {
      schema: {
        tags,
        operationId: 'listPackages',
        summary: 'Gets all packages of an owner',
        params: OwnerParams,
        querystring: PackageListQuery,
        response: { 200: Type.Array(Package), ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const owner = await packages.requireOwner(request.params.owner, request.identity, 'read');
      const page = pageOf(request.query, paging);
      const [rows, total] = await packages.list(
        owner,
        { type: request.query.type || undefined, q: request.query.q?.trim() || undefined },
        page.limit,
        page.offset,
      );
      const { visible, json } = await packagesJson(request, owner, rows);
      return sendPage(request, reply, [visible, total], page, rootUrl, json);
    },
  );

  const version = async (
    request: FastifyRequest,
    p: { owner: string; type: string; name: string; version: string },
  ) => {
    const owner = await packages.requireOwner(p.owner, request.identity, 'read');
    const found = await packages.requireVersion(owner, p.type, p.name, p.version, request.identity);
    return { owner, ...found };
  };

  app.get(
    '/packages/:owner/:type/:name/:version',
    {
      schema: {
        tags,
        operationId: 'getPackage',
        summary: 'Gets a package',
        params: VersionParams,
        response: { 200: Package, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { owner, pkg, version: v } = await version(request, request.params);
      const row: VersionWithPackage = {
        ...v,
        owner_id: pkg.owner_id,
        repo_id: pkg.repo_id,
        type: pkg.type,
        name: pkg.name,
      };
      const { json } = await packagesJson(request, owner, [row]);
      return json(row);
    },
  );

  app.delete(
    '/packages/:owner/:type/:name/:version',
    {
      schema: {
        tags,
        operationId: 'deletePackage',
        summary: 'Delete a package',
        params: VersionParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const p = request.params;
      const owner = await packages.requireOwner(p.owner, request.identity, 'write');
      const { pkg, version: v } = await packages.requireVersion(
        owner,
        p.type,
        p.name,
        p.version,
        request.identity,
      );
      await packages.deleteVersion(pkg, v, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/packages/:owner/:type/:name/:version/files',
    {
      schema: {
        tags,
        operationId: 'listPackageFiles',
        summary: 'Gets all files of a package',
        params: VersionParams,
        response: { 200: Type.Array(PackageFile), ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { version: v } = await version(request, request.params);
      return (await packages.filesOf([v.id])).map(toPackageFileJson);
    },
  );

  app.post(
    '/packages/:owner/:type/:name/-/link/:repo_name',
    {
      schema: {
        tags,
        operationId: 'linkPackage',
        summary: 'Link a package to a repository',
        params: LinkParams,
        response: { 201: Type.Null(), ...declares(400, 403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const p = request.params;
      const owner = await packages.requireOwner(p.owner, request.identity, 'write');
      const pkg = await packages.requirePackage(owner, p.type, p.name, request.identity);
      await packages.link(pkg, owner, p.repo_name);
      return reply.code(201).send(null);
    },
  );

  app.post(
    '/packages/:owner/:type/:name/-/unlink',
    {
      schema: {
        tags,
        operationId: 'unlinkPackage',
        summary: 'Unlink a package from a repository',
        params: PackageParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const p = request.params;
      const owner = await packages.requireOwner(p.owner, request.identity, 'write');
      const pkg = await packages.requirePackage(owner, p.type, p.name, request.identity);
      await packages.unlink(pkg);
      return reply.code(204).send(null);
    },
  );
}
