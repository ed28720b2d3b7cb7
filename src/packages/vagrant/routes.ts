// The Vagrant box repository at /api/packages/{owner}/vagrant: `{name}` is the box metadata URL
// that `vagrant box add` takes (GET the JSON, HEAD whether the box exists), boxes at
// `{name}/{version}/{provider}.box` (GET, HEAD; PUT uploads one), and `authenticate` (whether the
// credentials are good, as Vagrant Cloud's API answers). Errors are {"errors": [message]}, as
// Forgejo sends them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from '../../errors.js';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import type { VagrantService } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ errors: [message] });

export interface VagrantRoutesDeps extends RegistryDeps {
  packages: PackageService;
  vagrant: VagrantService;
}

export function vagrantRoutes(app: FastifyInstance, deps: VagrantRoutesDeps): void {
  const { packages, vagrant } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/vagrant';

    scope.get(`${base}/authenticate`, async (request, reply) => {
      await owner(request, 'read');
      if (!request.packageIdentity) throw unauthorized('Invalid access token');
      return reply.code(200).send();
    });

    scope.get(`${base}/:name`, async (request, reply) => {
      const o = await owner(request, 'read');
      const name = (request.params as Params)['name'] ?? '';
      const pkg = await packages.requirePackage(o, 'vagrant', name, request.packageIdentity);
      return reply.type('application/json; charset=utf-8').send(await vagrant.metadata(o, pkg));
    });

    const file = async (request: FastifyRequest) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      return packages.requireVersionFile(
        o,
        'vagrant',
        p['name'] ?? '',
        p['version'] ?? '',
        p['provider'] ?? '',
        request.packageIdentity,
      );
    };
    const boxUrl = `${base}/:name/:version/:provider`;
    scope.route({
      method: 'GET',
      url: boxUrl,
      exposeHeadRoute: false,
      handler: async (request, reply: FastifyReply) => {
        const f = await file(request);
        return sendPackageFile(reply, packages, f, 'application/octet-stream');
      },
    });
    // A HEAD answers what a GET would, without counting a download.
    scope.head(boxUrl, async (request, reply) => {
      const f = await file(request);
      return reply.type('application/octet-stream').header('Content-Length', String(f.size)).send();
    });
    scope.put(boxUrl, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const p = request.params as Params;
      await vagrant.upload(
        o,
        identity.user,
        p['name'] ?? '',
        p['version'] ?? '',
        p['provider'] ?? '',
        streamOf(request),
        announcedLength(request),
      );
      return reply.code(201).send();
    });
  });
}
