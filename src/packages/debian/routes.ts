// The Debian repository at /api/packages/{owner}/debian, for apt: `PUT
// /pool/{distribution}/{component}/upload` takes a .deb (201), `GET
// /pool/{distribution}/{component}/{name}_{version}_{arch}.deb` serves it, `DELETE
// /pool/{distribution}/{component}/{name}/{version}/{arch}` removes it (204); the repository files
// are `dists/{distribution}/Release`, `InRelease`, `Release.gpg` and
// `dists/{distribution}/{component}/binary-{arch}/Packages[.gz|.xz]` (also by digest under
// `by-hash/{algorithm}/{hash}`, Release says Acquire-By-Hash), signed with the owner's key,
// whose public half is `repository.key`. Errors are plain text, as Forgejo sends them.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound } from '../../errors.js';
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
import type { DebianService } from './service.js';
import type { DebianIndexRow } from './tables.js';

type Params = Record<string, string>;
const errorBody = (message: string) => `${message}\n`;

const TYPES: Array<[RegExp, string]> = [
  [/\.gz$/, 'application/gzip'],
  [/\.xz$/, 'application/x-xz'],
  [/(^|\/)Release\.gpg$/, 'application/pgp-signature'],
];

function sendIndex(reply: FastifyReply, row: DebianIndexRow) {
  const type = TYPES.find(([re]) => re.test(row.path))?.[1] ?? 'text/plain; charset=utf-8';
  return reply
    .type(type)
    .header('Last-Modified', new Date(row.created_unix * 1000).toUTCString())
    .header('Content-Length', String(row.size))
    .send(Buffer.from(row.content, 'base64'));
}

export interface DebianRoutesDeps extends RegistryDeps {
  packages: PackageService;
  debian: DebianService;
}

export function debianRoutes(app: FastifyInstance, deps: DebianRoutesDeps): void {
  const { packages, debian } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/debian';

    scope.get(`${base}/repository.key`, async (request, reply) =>
      sendRepositoryKey(reply, await debian.publicKey(await owner(request, 'read'))),
    );

    scope.get(`${base}/dists/:distribution/:filename`, async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      if (!['Release', 'InRelease', 'Release.gpg'].includes(p['filename']!)) {
        throw notFound(`repository file does not exist [name: ${p['filename']}]`);
      }
      return sendIndex(reply, await debian.indexFile(o, p['distribution']!, p['filename']!));
    });

    scope.get(`${base}/dists/:distribution/:component/:architecture/:filename`, async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      const path = `${p['component']}/${p['architecture']}/${p['filename']}`;
      return sendIndex(reply, await debian.indexFile(o, p['distribution']!, path));
    });

    scope.get(
      `${base}/dists/:distribution/:component/:architecture/by-hash/:algorithm/:hash`,
      async (request, reply) => {
        const o = await owner(request, 'read');
        const p = request.params as Params;
        const dir = `${p['component']}/${p['architecture']}`;
        return sendIndex(
          reply,
          await debian.indexFileByHash(o, p['distribution']!, dir, p['algorithm']!, p['hash']!),
        );
      },
    );

    scope.put(`${base}/pool/:distribution/:component/upload`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await debian.upload(
        o,
        identity.user,
        p['distribution']!,
        p['component']!,
        streamOf(request),
        announcedLength(request),
      );
      return reply.code(201).send();
    });

    scope.route({
      method: 'GET',
      url: `${base}/pool/:distribution/:component/:file`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const p = request.params as Params;
        const m = /^([^_/]+)_([^_/]+)_([^_/]+)\.deb$/.exec(p['file'] ?? '');
        if (!m) throw notFound(`package file does not exist [name: ${p['file']}]`);
        const file = await debian.requireDeb(
          o,
          request.packageIdentity,
          p['distribution']!,
          p['component']!,
          m[1]!,
          m[2]!,
          m[3]!,
        );
        return sendPackageFile(reply, packages, file, 'application/vnd.debian.binary-package', {
          attachment: true,
          lastModified: true,
        });
      },
    });

    scope.delete(
      `${base}/pool/:distribution/:component/:name/:version/:architecture`,
      async (request, reply) => {
        const o = await owner(request, 'write');
        const identity = uploader(request);
        const p = request.params as Params;
        await debian.delete(
          o,
          identity.user,
          identity,
          p['distribution']!,
          p['component']!,
          p['name']!,
          p['version']!,
          p['architecture']!,
        );
        return reply.code(204).send();
      },
    );
  });
}
