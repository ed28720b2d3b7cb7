// The Pub repository at /api/packages/{owner}/pub (the hosted repository spec v2, what
// `dart pub` uses): api/packages/{id} (every version), api/packages/{id}/{version},
// api/packages/{id}/files/{version}.tar.gz, and publishing in three steps: GET
// api/packages/versions/new (where to upload), POST .../versions/new/upload (multipart, the archive
// as `file`; 204 with the finalize URL as Location), GET .../versions/new/finalize/{id}/{version}.
// Answers are application/vnd.pub.v2+json; errors {"error":{"code","message"}}, as Forgejo sends them.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readMultipart } from '../../attachments/upload.js';
import { badRequest, unauthorized } from '../../errors.js';
import type { PackageService } from '../service.js';
import { type RegistryFormat, type RegistryDeps, registry, uploader, sendPackageFile } from '../registry.js';
import type { PubService } from './service.js';

type Params = Record<string, string | undefined>;
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  500: 'Internal Server Error',
};
const errorBody = (message: string, status: number) => ({
  error: { code: STATUS_TEXT[status] ?? String(status), message },
});
const TYPE = 'application/vnd.pub.v2+json';

/** Multipart forms parsed (uploads), other bodies streamed. */
const FORMAT: RegistryFormat = {
  errorBody,
  bodies: {
    multipart: { limits: { files: 1, fields: 16, parts: 20, fieldSize: 1 << 16 } },
  },
};

export interface PubRoutesDeps extends RegistryDeps {
  packages: PackageService;
  pub: PubService;
}

export function pubRoutes(app: FastifyInstance, deps: PubRoutesDeps): void {
  const { packages, pub } = deps;

  registry(app, deps, FORMAT, (scope, owner) => {
    const base = '/:owner/pub/api/packages';
    const json = (reply: FastifyReply, body: unknown, status = 200) =>
      reply.code(status).type(TYPE).send(JSON.stringify(body));

    scope.get(`${base}/versions/new`, async (request, reply) => {
      const o = await owner(request, 'write');
      if (!request.packageIdentity) throw unauthorized('authentication required');
      return json(reply, { url: `${pub.base(o)}/versions/new/upload`, fields: {} });
    });

    scope.post(`${base}/versions/new/upload`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      if (!request.isMultipart()) throw badRequest('the upload must be multipart/form-data');
      const up = await readMultipart(request, 'file', (_name, stream) =>
        pub.upload(o, identity.user, stream),
      );
      if (up.error) throw up.error;
      if (!up.result) throw badRequest("the form field 'file' (the package archive) is required");
      const { name, version } = up.result;
      return reply
        .header(
          'Location',
          `${pub.base(o)}/versions/new/finalize/${encodeURIComponent(name)}/${encodeURIComponent(version)}`,
        )
        .code(204)
        .send();
    });

    scope.get(`${base}/versions/new/finalize/:id/:version`, async (request, reply) => {
      const o = await owner(request, 'write');
      const p = request.params as Params;
      await packages.requireVersion(o, 'pub', p['id'] ?? '', p['version'] ?? '', request.packageIdentity);
      return json(reply, { success: { message: '' } });
    });

    scope.get(`${base}/:id`, async (request, reply) => {
      const o = await owner(request, 'read');
      const pkg = await packages.requirePackage(
        o,
        'pub',
        (request.params as Params)['id'] ?? '',
        request.packageIdentity,
      );
      return json(reply, await pub.versions(o, pkg));
    });

    scope.get(`${base}/:id/:version`, async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      const found = await packages.requireVersion(
        o,
        'pub',
        p['id'] ?? '',
        p['version'] ?? '',
        request.packageIdentity,
      );
      return json(reply, pub.version(o, found.pkg, found.version));
    });

    scope.route({
      method: 'GET',
      url: `${base}/:id/files/:file`,
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const p = request.params as Params;
        const version = (p['file'] ?? '').replace(/\.tar\.gz$/, '');
        const file = await packages.requireVersionFile(
          o,
          'pub',
          p['id'] ?? '',
          version,
          `${version}.tar.gz`,
          request.packageIdentity,
        );
        return sendPackageFile(reply, packages, file, 'application/gzip');
      },
    });
  });
}
