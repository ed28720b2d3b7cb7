// The CRAN repository at /api/packages/{owner}/cran, laid out as R's install.packages reads a
// repository: src/contrib/PACKAGES{,.gz} and the source tarballs beside it,
// bin/{platform}/contrib/{rversion}/PACKAGES{,.gz} and the binary zips; uploads with a PUT of the
// file to src (a source tarball) or bin?platform=&rversion= (a binary zip). Errors are plain
// text, as Forgejo sends them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
import { CranService, type CranTree } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => `${message}\n`;

export interface CranRoutesDeps extends RegistryDeps {
  packages: PackageService;
  cran: CranService;
}

export function cranRoutes(app: FastifyInstance, deps: CranRoutesDeps): void {
  const { packages, cran } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/cran';

    const upload = async (request: FastifyRequest, reply: FastifyReply, tree: () => CranTree) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      await cran.upload(o, identity.user, tree(), streamOf(request), announcedLength(request));
      return reply.code(201).send();
    };
    scope.put(`${base}/src`, (request, reply) => upload(request, reply, () => ({ type: 'source' })));
    scope.put(`${base}/bin`, (request, reply) =>
      upload(request, reply, () => {
        const q = request.query as Params;
        return CranService.binaryTree((q['platform'] ?? '').trim(), (q['rversion'] ?? '').trim());
      }),
    );

    const treeOf = (p: Params): CranTree =>
      p['platform'] === undefined
        ? { type: 'source' }
        : { type: 'binary', platform: p['platform'], rversion: p['rversion'] ?? '' };

    const serve = async (request: FastifyRequest, reply: FastifyReply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      const tree = treeOf(p);
      const fileName = p['file'] ?? '';
      const index = /^PACKAGES(\.gz)?$/.exec(fileName);
      if (index) {
        const body = await cran.index(o, tree, Boolean(index[1]));
        if (body === undefined) throw notFound('no package in this repository');
        return reply.type(index[1] ? 'application/x-gzip' : 'text/plain; charset=utf-8').send(body);
      }
      const found = await cran.findFile(o, tree, fileName);
      if (!found) throw notFound(`package file does not exist [name: ${fileName}]`);
      const v = await packages.requireVersion(o, 'cran', found.name, found.version, request.packageIdentity);
      const file = await packages.requireFile(v.version.id, fileName, found.key);
      return sendPackageFile(
        reply,
        packages,
        file,
        fileName.endsWith('.zip') ? 'application/zip' : 'application/gzip',
      );
    };
    // A HEAD would count a download.
    scope.route({
      method: 'GET',
      url: `${base}/src/contrib/:file`,
      exposeHeadRoute: false,
      handler: serve,
    });
    scope.route({
      method: 'GET',
      url: `${base}/bin/:platform/contrib/:rversion/:file`,
      exposeHeadRoute: false,
      handler: serve,
    });
  });
}
