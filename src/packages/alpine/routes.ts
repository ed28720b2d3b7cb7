// The Alpine repository at /api/packages/{owner}/alpine, for apk: `GET /key` is the owner's RSA
// public key (PEM, named `{owner}@{fingerprint}.rsa.pub`), `PUT /{branch}/{repository}` takes a
// package (201), `GET /{branch}/{repository}/{arch}/APKINDEX.tar.gz` is the signed index and
// `GET /{branch}/{repository}/{arch}/{file}` a package, `DELETE` of the same removes it (204).
// Errors are plain text, as Forgejo sends them.
import type { FastifyInstance } from 'fastify';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import { checkLocation, type AlpineService } from './service.js';

type Params = Record<'owner' | 'branch' | 'repository' | 'architecture' | 'file', string>;
const errorBody = (message: string) => `${message}\n`;

export interface AlpineRoutesDeps extends RegistryDeps {
  packages: PackageService;
  alpine: AlpineService;
}

export function alpineRoutes(app: FastifyInstance, deps: AlpineRoutesDeps): void {
  const { packages, alpine } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/alpine';

    scope.get(`${base}/key`, async (request, reply) => {
      const key = await alpine.publicKey(await owner(request, 'read'));
      return reply
        .type('application/x-pem-file')
        .header('Content-Disposition', `attachment; filename="${key.fileName}"`)
        .send(key.pem);
    });

    scope.put(`${base}/:branch/:repository`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await alpine.upload(
        o,
        identity.user,
        p.branch.trim(),
        p.repository.trim(),
        streamOf(request),
        announcedLength(request),
      );
      return reply.code(201).send();
    });

    scope.route({
      method: 'GET',
      url: `${base}/:branch/:repository/:architecture/:file`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const { branch, repository, architecture, file } = request.params as Params;
        checkLocation(branch, repository);
        if (file === 'APKINDEX.tar.gz') {
          const index = await alpine.index(o, branch, repository, architecture);
          return reply.type('application/gzip').header('Content-Length', String(index.length)).send(index);
        }
        const pkg = await alpine.requirePackage(
          o,
          request.packageIdentity,
          branch,
          repository,
          architecture,
          file,
        );
        return sendPackageFile(reply, packages, pkg, 'application/octet-stream', {
          attachment: true,
          lastModified: true,
        });
      },
    });

    scope.delete(`${base}/:branch/:repository/:architecture/:file`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await alpine.delete(o, identity.user, identity, p.branch, p.repository, p.architecture, p.file);
      return reply.code(204).send();
    });
  });
}
