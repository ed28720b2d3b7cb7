// The Helm chart repository at /api/packages/{owner}/helm: index.yaml, the chart archives beside
// it ({name}-{version}.tgz), and uploads by POST to api/charts (ChartMuseum's API, which
// `helm cm-push` uses: multipart with the archive as `chart`, or the archive as the body).
// Errors are {"error": message}, as Forgejo sends them.
import type { FastifyInstance } from 'fastify';
import { readingClientStream, readMultipart } from '../../attachments/upload.js';
import { badRequest, notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryFormat,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import type { HelmService } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ error: message });

/** Multipart forms parsed (uploads), other bodies streamed. */
const FORMAT: RegistryFormat = {
  errorBody,
  bodies: {
    multipart: { limits: { files: 2, fields: 16, parts: 20, fieldSize: 1 << 16 } },
  },
};

export interface HelmRoutesDeps extends RegistryDeps {
  packages: PackageService;
  helm: HelmService;
}

export function helmRoutes(app: FastifyInstance, deps: HelmRoutesDeps): void {
  const { packages, helm } = deps;

  registry(app, deps, FORMAT, (scope, owner) => {
    const base = '/:owner/helm';

    scope.post(`${base}/api/charts`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      if (request.isMultipart()) {
        const up = await readMultipart(request, 'chart', (_name, stream) =>
          helm.upload(o, identity.user, stream),
        );
        if (up.error) throw up.error;
        if (!up.result) throw badRequest("the form field 'chart' (the chart archive) is required");
      } else {
        const body = streamOf(request);
        await readingClientStream(body, () => helm.upload(o, identity.user, body, announcedLength(request)));
      }
      return reply.code(201).send();
    });

    scope.get(`${base}/index.yaml`, async (request, reply) =>
      reply.type('application/x-yaml; charset=utf-8').send(await helm.index(await owner(request, 'read'))),
    );

    scope.route({
      method: 'GET',
      url: `${base}/:file`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const fileName = (request.params as Params)['file'] ?? '';
        const found = await helm.findFile(o, fileName);
        if (!found) throw notFound(`package file does not exist [name: ${fileName}]`);
        const v = await packages.requireVersion(
          o,
          'helm',
          found.name,
          found.version,
          request.packageIdentity,
        );
        const file = await packages.requireFile(v.version.id, fileName);
        return sendPackageFile(reply, packages, file, 'application/gzip');
      },
    });
  });
}
