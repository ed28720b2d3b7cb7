// The Arch Linux repository at /api/packages/{owner}/arch, for pacman: `PUT /{repository}` takes
// a package (201), `GET /{repository}/{arch}/{file}` serves a package, its `.sig`, and the
// repository's database `{repository}.db` (also `.db.tar.gz`, `.files`, `.files.tar.gz`) with its
// `.sig`, `DELETE /{repository}/{name}/{version}/{arch}` removes a package (204); the owner's
// public key is `repository.key`. Errors are plain text, as Forgejo sends them.
import type { FastifyInstance } from 'fastify';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
  sendRepositoryKey,
} from '../registry.js';
import { checkRepository, type ArchService } from './service.js';

type Params = Record<string, string>;
const errorBody = (message: string) => `${message}\n`;

export interface ArchRoutesDeps extends RegistryDeps {
  packages: PackageService;
  arch: ArchService;
}

export function archRoutes(app: FastifyInstance, deps: ArchRoutesDeps): void {
  const { packages, arch } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/arch';

    scope.get(`${base}/repository.key`, async (request, reply) =>
      sendRepositoryKey(reply, await arch.publicKey(await owner(request, 'read'))),
    );

    scope.put(`${base}/:repository`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await arch.upload(o, identity.user, p['repository']!, streamOf(request), announcedLength(request));
      return reply.code(201).send();
    });

    scope.route({
      method: 'GET',
      url: `${base}/:repository/:architecture/:file`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const p = request.params as Params;
        const repository = checkRepository(p['repository']!);
        const file = p['file']!;
        const dbName = /^(.+)\.(?:db|files)(?:\.tar\.gz)?(\.sig)?$/.exec(file);
        if (dbName && dbName[1] === repository) {
          const body = dbName[2]
            ? await arch.databaseSignature(o, repository, p['architecture']!)
            : await arch.database(o, repository, p['architecture']!);
          return reply
            .type(dbName[2] ? 'application/pgp-signature' : 'application/octet-stream')
            .header('Content-Length', String(body.length))
            .send(body);
        }
        const signature = file.endsWith('.sig');
        const pkg = await arch.requirePackage(
          o,
          request.packageIdentity,
          repository,
          signature ? file.slice(0, -4) : file,
        );
        if (signature) {
          const sig = await arch.signatureOf(pkg);
          return reply
            .type('application/pgp-signature')
            .header('Content-Length', String(sig.length))
            .send(sig);
        }
        return sendPackageFile(reply, packages, pkg, 'application/octet-stream', {
          attachment: true,
          lastModified: true,
        });
      },
    });

    scope.delete(`${base}/:repository/:name/:version/:architecture`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await arch.delete(
        o,
        identity.user,
        identity,
        p['repository']!,
        p['name']!,
        p['version']!,
        p['architecture']!,
      );
      return reply.code(204).send();
    });
  });
}
