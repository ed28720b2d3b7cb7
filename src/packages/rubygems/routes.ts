// The RubyGems registry at /api/packages/{owner}/rubygems, for the gem command: `gem push`
// (`POST /api/v1/gems`, the .gem as the body, 201), `gem yank` (`DELETE /api/v1/gems/yank` with
// the form fields gem_name and version: the version is deleted), the full index
// (specs.4.8.gz, latest_specs.4.8.gz, prerelease_specs.4.8.gz, quick/Marshal.4.8/*.gemspec.rz),
// the compact index (`versions`, `info/{name}`; the gem command takes the repository for one
// when its root answers a HEAD), and downloads (`gems/{file}`). Errors are plain text.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { badRequest, notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import type { RubygemsService } from './service.js';

type Params = Record<string, string>;
const errorBody = (message: string) => `${message}\n`;
/** The most of a yank form read. */
const MAX_FORM = 64 << 10;

export interface RubygemsRoutesDeps extends RegistryDeps {
  packages: PackageService;
  rubygems: RubygemsService;
}

export function rubygemsRoutes(app: FastifyInstance, deps: RubygemsRoutesDeps): void {
  const { packages, rubygems } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    const base = '/:owner/rubygems';

    // The repository's root: the gem command's HEAD here picks the compact index.
    scope.get(`${base}/`, async (request, reply) => {
      await owner(request, 'read');
      return reply.type('text/plain; charset=utf-8').send('');
    });

    const specs = (url: string, which: 'all' | 'latest' | 'prerelease') =>
      scope.get(`${base}/${url}`, async (request, reply: FastifyReply) =>
        reply
          .type('application/octet-stream')
          .send(await rubygems.specs(await owner(request, 'read'), which)),
      );
    specs('specs.4.8.gz', 'all');
    specs('latest_specs.4.8.gz', 'latest');
    specs('prerelease_specs.4.8.gz', 'prerelease');

    scope.get(`${base}/quick/Marshal.4.8/:file`, async (request, reply) => {
      const o = await owner(request, 'read');
      const file = (request.params as Params)['file'] ?? '';
      const body = file.endsWith('.gemspec.rz') ? await rubygems.quickSpec(o, file.slice(0, -3)) : undefined;
      if (!body) throw notFound(`package does not exist [file: ${file}]`);
      return reply.type('application/octet-stream').send(body);
    });

    scope.get(`${base}/versions`, async (request, reply) =>
      reply.type('text/plain; charset=utf-8').send(await rubygems.versions(await owner(request, 'read'))),
    );

    scope.get(`${base}/info/:name`, async (request, reply) => {
      const name = (request.params as Params)['name'] ?? '';
      const info = await rubygems.info(await owner(request, 'read'), name);
      if (info === undefined) throw notFound(`package does not exist [name: ${name}]`);
      return reply.type('text/plain; charset=utf-8').send(info);
    });

    scope.route({
      method: 'GET',
      url: `${base}/gems/:file`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const fileName = (request.params as Params)['file'] ?? '';
        const found = await rubygems.findFile(o, fileName);
        if (!found) throw notFound(`package file does not exist [name: ${fileName}]`);
        const v = await packages.requireVersion(
          o,
          'rubygems',
          found.name,
          found.version,
          request.packageIdentity,
        );
        const file = await packages.requireFile(v.version.id, fileName);
        return sendPackageFile(reply, packages, file, 'application/octet-stream');
      },
    });

    for (const url of [`${base}/api/v1/gems`, `${base}/api/v1/gems/`]) {
      scope.post(url, async (request, reply) => {
        const o = await owner(request, 'write');
        const identity = uploader(request);
        const gem = await rubygems.push(o, identity.user, streamOf(request), announcedLength(request));
        return reply
          .code(201)
          .type('text/plain; charset=utf-8')
          .send(`Successfully registered gem: ${gem.name} (${gem.version})\n`);
      });
    }

    scope.delete(`${base}/api/v1/gems/yank`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      let form = '';
      for await (const chunk of streamOf(request)) {
        form += (chunk as Buffer).toString('utf8');
        if (form.length > MAX_FORM) throw badRequest('the form is too large');
      }
      const fields = new URLSearchParams(form);
      const q = request.query as Params;
      const name = fields.get('gem_name') ?? q['gem_name'] ?? '';
      const version = fields.get('version') ?? q['version'] ?? '';
      if (!name || !version) throw badRequest('gem_name and version are required');
      const found = await packages.requireVersion(o, 'rubygems', name, version, identity);
      await packages.deleteVersion(found.pkg, found.version, identity.user);
      return reply.type('text/plain; charset=utf-8').send(`Successfully deleted gem: ${name} (${version})\n`);
    });
  });
}
