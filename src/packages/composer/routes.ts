// The Composer repository at /api/packages/{owner}/composer, for Composer 2: packages.json (the
// service index), p2/{vendor}/{name}.json (and ~dev.json, the same document), list.json,
// search.json, file downloads (/files/{name}/{version}/{file}), and uploads of package zips with
// a PUT of the zip to the repository's root (`?version=` when composer.json names none). Errors
// are {"errors":[{"status","message"}]}, as Forgejo sends them.
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import { type ComposerService, isPackageName } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string, status: number) => ({ errors: [{ status, message }] });

export interface ComposerRoutesDeps extends RegistryDeps {
  packages: PackageService;
  composer: ComposerService;
}

export function composerRoutes(app: FastifyInstance, deps: ComposerRoutesDeps): void {
  const { packages, composer } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/composer';

    for (const url of [base, `${base}/`]) {
      scope.put(url, async (request, reply) => {
        const o = await owner(request, 'write');
        const identity = uploader(request);
        const version = ((request.query as Params)['version'] ?? '').trim() || undefined;
        const announced = announcedLength(request);
        const data = streamOf(request);
        await composer.upload(o, identity.user, data, version, announced);
        return reply.code(201).send();
      });
    }

    scope.get(`${base}/packages.json`, async (request) =>
      composer.serviceIndex(await owner(request, 'read')),
    );

    scope.get(`${base}/list.json`, async (request) => ({
      packageNames: await composer.names(await owner(request, 'read')),
    }));

    scope.get(`${base}/search.json`, async (request) => {
      const o = await owner(request, 'read');
      const q = request.query as Params;
      const page = Math.min(100_000, Math.max(1, Math.floor(Number(q['page']) || 1)));
      const perPage = Math.min(100, Math.max(1, Math.floor(Number(q['per_page']) || 30)));
      const found = await composer.search(o, (q['q'] ?? '').trim(), (q['type'] ?? '').trim(), page, perPage);
      if (page * perPage >= found.total) return found;
      const next = new URL(`${composer.base(o)}/search.json`);
      next.search = new URLSearchParams({
        q: q['q'] ?? '',
        type: q['type'] ?? '',
        page: String(page + 1),
        per_page: String(perPage),
      }).toString();
      return { ...found, next: next.toString() };
    });

    scope.get(`${base}/p2/:vendor/:file`, async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      const m = /^(.+?)(~dev)?\.json$/.exec(p['file'] ?? '');
      const name = `${p['vendor'] ?? ''}/${m?.[1] ?? ''}`;
      if (!m || !isPackageName(name)) throw notFound(`package does not exist [name: ${name}]`);
      const pkg = await composer.requirePackage(o, name, request.packageIdentity);
      return reply.header('cache-control', 'no-cache').send(await composer.metadata(o, pkg));
    });

    scope.get(`${base}/files/:name/:version/:filename`, async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      const file = await packages.requireVersionFile(
        o,
        'composer',
        p['name'] ?? '',
        p['version'] ?? '',
        p['filename'] ?? '',
        request.packageIdentity,
      );
      return sendPackageFile(reply, packages, file, 'application/zip');
    });
  });
}
