// The Chef registry at /api/packages/{owner}/chef/api/v1 (the Supermarket API that knife's
// `supermarket` commands and berkshelf use): universe, search, cookbooks (list, upload as
// multipart `tarball`, metadata, versions, downloads, deletion). Callers are signed requests
// (X-Ops-Userid and X-Ops-Authorization-N, checked against the account's Chef key) or, as
// everywhere under /api/packages, basic and token credentials. Errors are {"error_messages": [..]},
// as Forgejo sends them; a request whose signature does not hold up is a 401.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readMultipart } from '../../attachments/upload.js';
import { badRequest } from '../../errors.js';
import type { PackageService } from '../service.js';
import { type RegistryFormat, type RegistryDeps, registry, uploader, sendPackageFile } from '../registry.js';
import type { ChefService } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ error_messages: [message] });

/** Multipart forms parsed (uploads), other bodies streamed. */
const FORMAT: RegistryFormat = {
  errorBody,
  bodies: {
    multipart: { limits: { files: 2, fields: 16, parts: 20, fieldSize: 1 << 16 } },
  },
};

export interface ChefRoutesDeps extends RegistryDeps {
  packages: PackageService;
  chef: ChefService;
}

const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\d{1,9}$/.test(v.trim()) ? Number(v) : undefined;
  return n;
};

export function chefRoutes(app: FastifyInstance, deps: ChefRoutesDeps): void {
  const { packages, chef, users } = deps;

  registry(app, deps, FORMAT, (scope, owner) => {
    // After the Authorization header (registryScope): a signed request names its account.
    scope.addHook('onRequest', async (request: FastifyRequest) => {
      if (request.packageIdentity) return;
      const identity = await chef.authenticate({
        method: request.method,
        url: request.url,
        headers: request.headers,
      });
      if (identity) users.assertMayAct(identity.user);
      request.packageIdentity = identity;
    });
    const base = '/:owner/chef/api/v1';
    const param = (request: FastifyRequest, name: string) => (request.params as Params)[name] ?? '';

    scope.get(`${base}/universe`, async (request) => chef.universe(await owner(request, 'read')));

    const list = async (request: FastifyRequest) => {
      const q = request.query as Record<string, unknown>;
      const order = typeof q['order'] === 'string' ? q['order'] : q['sort'];
      return chef.list(await owner(request, 'read'), {
        q: typeof q['q'] === 'string' ? q['q'] : undefined,
        start: num(q['start']),
        items: num(q['items']),
        order: typeof order === 'string' ? order : undefined,
      });
    };
    scope.get(`${base}/search`, list);
    scope.get(`${base}/cookbooks`, list);

    scope.post(`${base}/cookbooks`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      if (!request.isMultipart()) throw badRequest('the upload must be multipart/form-data');
      const up = await readMultipart(request, 'tarball', (_name, stream) =>
        chef.upload(o, identity.user, stream),
      );
      if (up.error) throw up.error;
      if (!up.result) throw badRequest("the form field 'tarball' (the cookbook archive) is required");
      return reply.code(201).send({});
    });

    scope.get(`${base}/cookbooks/:name`, async (request) =>
      chef.cookbook(await owner(request, 'read'), param(request, 'name')),
    );

    scope.delete(`${base}/cookbooks/:name`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const pkg = await packages.requirePackage(o, 'chef', param(request, 'name'), identity);
      for (const v of await packages.versionsOf(pkg)) await packages.deleteVersion(pkg, v, identity.user);
      return reply.code(200).send();
    });

    scope.get(`${base}/cookbooks/:name/versions/:version`, async (request) => {
      const o = await owner(request, 'read');
      return chef.versionJson(
        o,
        await chef.resolveVersion(o, param(request, 'name'), param(request, 'version')),
      );
    });

    scope.delete(`${base}/cookbooks/:name/versions/:version`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const { pkg, version } = await packages.requireVersion(
        o,
        'chef',
        param(request, 'name'),
        param(request, 'version'),
        identity,
      );
      await packages.deleteVersion(pkg, version, identity.user);
      return reply.code(200).send();
    });

    scope.route({
      method: 'GET',
      url: `${base}/cookbooks/:name/versions/:version/download`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const row = await chef.resolveVersion(o, param(request, 'name'), param(request, 'version'));
        const { version } = await packages.requireVersion(
          o,
          'chef',
          row.name,
          row.version,
          request.packageIdentity,
        );
        const file = await packages.requireFile(version.id, `${row.version}.tar.gz`);
        return sendPackageFile(reply, packages, file, 'application/octet-stream', { attachment: true });
      },
    });
  });
}
