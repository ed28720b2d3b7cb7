// The npm registry at /api/packages/{owner}/npm/: packuments, publish (and deprecate),
// tarballs, dist-tags, unpublish and search, for the stock `npm` client. Scoped names arrive
// escaped (`@scope%2Fname`, one path segment, decoded into the parameter) or, in tarball URLs
// of other registries, as two segments (`@scope/name`): both forms are routed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import { type RegistryDeps, registry, uploader, sendPackageFile } from '../registry.js';
import { type NpmService, checkName } from './service.js';

type Params = Record<string, string | undefined>;
type Handler = (request: FastifyRequest, reply: FastifyReply, name: string) => Promise<unknown>;

const errorBody = (message: string) => ({ error: message });
const ABBREVIATED_TYPE = 'application/vnd.npm.install-v1+json';

/** The package name of a request: `name`, or `scope/name` when the scope came as its own segment. */
function nameOf(p: Params): string {
  if (p['scope'] !== undefined) {
    if (!p['scope'].startsWith('@')) throw notFound();
    return `${p['scope']}/${p['name'] ?? ''}`;
  }
  return p['name'] ?? '';
}

export interface NpmRoutesDeps extends RegistryDeps {
  packages: PackageService;
  npm: NpmService;
  /** [packages] LIMIT_SIZE_NPM: a publish body may be that much and a third larger. */
  limitSizeNpm: number;
}

export function npmRoutes(app: FastifyInstance, deps: NpmRoutesDeps): void {
  const { packages, npm } = deps;
  const limit = deps.limitSizeNpm;
  // base64 makes the tarball a third larger; the rest of the document is small.
  const publishBodyLimit = limit >= 0 ? Math.ceil(limit * 1.4) + (4 << 20) : 1 << 30;

  registry(app, deps, { errorBody, bodies: 'parsed' }, (scope, owner) => {
    const base = '/:owner/npm';

    /** Registers `path` for a one-segment name and for a scope and name in two segments. */
    const both = (
      method: 'GET' | 'PUT' | 'DELETE',
      prefix: string,
      suffix: string,
      handler: Handler,
      opts: { bodyLimit?: number } = {},
    ) => {
      for (const names of [':name', ':scope/:name']) {
        scope.route({
          method,
          url: `${base}${prefix}/${names}${suffix}`,
          ...opts,
          handler: (request, reply) => handler(request, reply, nameOf(request.params as Params)),
        });
      }
    };

    scope.get(`${base}/-/v1/search`, async (request) => {
      const o = await owner(request, 'read');
      const q = request.query as Params;
      const from = Math.max(0, Number(q['from']) || 0);
      const size = Math.min(250, Math.max(1, Number(q['size']) || 20));
      return npm.search(o, (q['text'] ?? '').trim(), from, size);
    });

    both('GET', '/-/package', '/dist-tags', async (request, _reply, name) => {
      const o = await owner(request, 'read');
      return npm.distTags(await npm.requirePackage(o, name, request.packageIdentity));
    });

    both('PUT', '/-/package', '/dist-tags/:tag', async (request, _reply, name) => {
      const o = await owner(request, 'write');
      const pkg = await npm.requirePackage(o, name, request.packageIdentity);
      const version = request.body;
      if (typeof version !== 'string') throw badRequest('the body must be a JSON string: the version');
      await npm.addTag(pkg, version, (request.params as Params)['tag'] ?? '');
      return { ok: true };
    });

    both('DELETE', '/-/package', '/dist-tags/:tag', async (request, _reply, name) => {
      const o = await owner(request, 'write');
      const pkg = await npm.requirePackage(o, name, request.packageIdentity);
      await npm.deleteTag(pkg, (request.params as Params)['tag'] ?? '');
      return { ok: true };
    });

    both('GET', '', '', async (request, reply, name) => {
      const o = await owner(request, 'read');
      const pkg = await npm.requirePackage(o, name, request.packageIdentity);
      // `npm install` asks for the abbreviated document, and for gzip; other clients, the
      // full JSON. Revalidation by ETag spares sending it again.
      const accept = request.headers.accept ?? '';
      const form = accept.includes(ABBREVIATED_TYPE) ? 'abbreviated' : 'full';
      const gzipped = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
      const { body, etag } = await npm.packumentBody(o, pkg, form, gzipped);
      reply
        .header('etag', etag)
        .header('vary', 'Accept, Accept-Encoding')
        .header('cache-control', 'no-cache');
      const match = request.headers['if-none-match'];
      if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
        return reply.code(304).send();
      }
      if (gzipped) reply.header('content-encoding', 'gzip');
      return reply.type(form === 'full' ? 'application/json; charset=utf-8' : ABBREVIATED_TYPE).send(body);
    });

    both(
      'PUT',
      '',
      '',
      async (request, reply, name) => {
        const o = await owner(request, 'write');
        const identity = uploader(request);
        checkName(name);
        await npm.publish(o, identity.user, name, request.body);
        return reply.code(201).send({ ok: true });
      },
      { bodyLimit: publishBodyLimit },
    );

    both('GET', '', '/-/:version/:filename', async (request, reply, name) => {
      const p = request.params as Params;
      const o = await owner(request, 'read');
      const file = await packages.requireVersionFile(
        o,
        'npm',
        name,
        p['version'] ?? '',
        p['filename'] ?? '',
        request.packageIdentity,
      );
      return sendPackageFile(reply, packages, file, 'application/octet-stream');
    });

    // Unpublishing one version: npm first PUTs the packument without it, its dist-tags moved
    // off that version (`latest` to the highest one left), then deletes the tarball.
    both('DELETE', '', '/-/:version/:filename/-rev/:rev', async (request, _reply, name) => {
      const p = request.params as Params;
      const o = await owner(request, 'write');
      const found = await packages.requireVersion(
        o,
        'npm',
        name,
        p['version'] ?? '',
        request.packageIdentity,
      );
      await packages.deleteVersion(found.pkg, found.version, request.packageIdentity!.user);
      return { ok: true };
    });

    both(
      'PUT',
      '',
      '/-rev/:rev',
      async (request, _reply, name) => {
        const o = await owner(request, 'write');
        const pkg = await npm.requirePackage(o, name, request.packageIdentity);
        await npm.retag(pkg, request.body);
        return { ok: true };
      },
      { bodyLimit: publishBodyLimit },
    );

    both('DELETE', '', '/-rev/:rev', async (request, _reply, name) => {
      const o = await owner(request, 'write');
      const pkg = await npm.requirePackage(o, name, request.packageIdentity);
      for (const v of await packages.versionsOf(pkg)) {
        await packages.deleteVersion(pkg, v, request.packageIdentity!.user);
      }
      return { ok: true };
    });
  });
}
