// The Cargo registry (sparse protocol) at /api/packages/{owner}/cargo/: config.json, the index
// files at Cargo's path layout (1/{n}, 2/{n}, 3/{c}/{n}, {ab}/{cd}/{n}, with an ETag), and the web
// API under api/v1/crates: publish (PUT new, a binary body read as a stream), download, yank and
// unyank, search and owners. Errors are `{"errors":[{"detail":...}]}`, which cargo shows.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { badRequest, notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import { type RegistryDeps, registry, uploader, sendPackageFile } from '../registry.js';
import { type CargoService, indexPath, isCrateName, isSemver, readPublishBody } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ errors: [{ detail: message }] });

export interface CargoRoutesDeps extends RegistryDeps {
  packages: PackageService;
  cargo: CargoService;
}

export function cargoRoutes(app: FastifyInstance, deps: CargoRoutesDeps): void {
  const { packages, cargo } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    // The publish body is binary (and cargo sends no Content-Type): read as a stream.
    const base = '/:owner/cargo';
    const crates = `${base}/api/v1/crates`;

    /** The crate named in the path; a name no crate can have finds nothing (404). */
    const crateName = (request: FastifyRequest) => {
      const name = (request.params as Params)['name'] ?? '';
      if (!isCrateName(name)) throw notFound(`package does not exist [name: ${name}]`);
      return name;
    };

    scope.get(`${base}/config.json`, async (request, reply) => {
      const o = await owner(request, 'read');
      return reply.header('cache-control', 'no-cache').send(cargo.config(o));
    });

    /** An index file; `path` is the part after the index root, checked against the name. */
    const index = async (request: FastifyRequest, reply: FastifyReply, path: string) => {
      const o = await owner(request, 'read');
      const name = crateName(request);
      if (indexPath(name) !== path.toLowerCase()) throw notFound('no index file at this path');
      const pkg = await packages.requirePackage(o, 'cargo', name, request.packageIdentity);
      const etag = cargo.indexEtag(pkg);
      reply.header('etag', etag).header('cache-control', 'no-cache').header('vary', 'Accept-Encoding');
      const match = request.headers['if-none-match'];
      if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
        return reply.code(304).send();
      }
      const gzipped = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
      const body = await cargo.indexBody(pkg, gzipped);
      if (!body) throw notFound(`package does not exist [name: ${name}]`);
      if (gzipped) reply.header('content-encoding', 'gzip');
      return reply.type('text/plain; charset=utf-8').send(body);
    };
    scope.get(`${base}/1/:name`, (request, reply) =>
      index(request, reply, `1/${(request.params as Params)['name']}`),
    );
    scope.get(`${base}/2/:name`, (request, reply) =>
      index(request, reply, `2/${(request.params as Params)['name']}`),
    );
    scope.get(`${base}/3/:a/:name`, (request, reply) => {
      const p = request.params as Params;
      return index(request, reply, `3/${p['a']}/${p['name']}`);
    });
    scope.get(`${base}/:ab/:cd/:name`, (request, reply) => {
      const p = request.params as Params;
      return index(request, reply, `${p['ab']}/${p['cd']}/${p['name']}`);
    });

    scope.get(crates, async (request) => {
      const o = await owner(request, 'read');
      const q = request.query as Params;
      const perPage = Math.min(100, Math.max(1, Number(q['per_page']) || 10));
      const page = Math.min(100_000, Math.max(1, Math.floor(Number(q['page']) || 1)));
      return cargo.search(o, (q['q'] ?? '').trim(), perPage, page);
    });

    scope.put(`${crates}/new`, async (request) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const body = request.body as Readable | undefined;
      if (!body || typeof (body as Readable).on !== 'function') throw badRequest('the publish body is empty');
      await cargo.publish(o, identity.user, await readPublishBody(body));
      // Forgejo's answer, and the (empty) warnings of Cargo's documented one.
      return { ok: true, warnings: { invalid_categories: [], invalid_badges: [], other: [] } };
    });

    scope.get(`${crates}/:name/owners`, async (request) => {
      const o = await owner(request, 'read');
      await packages.requirePackage(o, 'cargo', crateName(request), request.packageIdentity);
      return cargo.owners(o);
    });

    const version = async (request: FastifyRequest, need: 'read' | 'write') => {
      const o = await owner(request, need);
      const name = crateName(request);
      const v = (request.params as Params)['version'] ?? '';
      if (!isSemver(v)) throw notFound(`package version does not exist [name: ${name}, version: ${v}]`);
      return packages.requireVersion(o, 'cargo', name, v, request.packageIdentity);
    };

    scope.get(`${crates}/:name/:version/download`, async (request, reply) => {
      const found = await version(request, 'read');
      const file = await packages.requireFile(
        found.version.id,
        `${found.pkg.name}-${found.version.version}.crate`,
      );
      return sendPackageFile(reply, packages, file, 'application/octet-stream');
    });

    scope.delete(`${crates}/:name/:version/yank`, async (request) => {
      const found = await version(request, 'write');
      await cargo.setYanked(found.pkg, found.version, true);
      return { ok: true };
    });

    scope.put(`${crates}/:name/:version/unyank`, async (request) => {
      const found = await version(request, 'write');
      await cargo.setYanked(found.pkg, found.version, false);
      return { ok: true };
    });
  });
}
