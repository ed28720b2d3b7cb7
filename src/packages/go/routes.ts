// The Go module proxy at /api/packages/{owner}/go, for `GOPROXY=...`: a module zip uploaded with
// `PUT /upload` (201; its module and version come from its file paths), and the GOPROXY protocol
// (https://go.dev/ref/mod#goproxy-protocol): `{module}/@v/list`, `@v/{version}.info`, `.mod`,
// `.zip` and `{module}/@latest`, the module path holding slashes and escaped as the go command
// escapes it. `sumdb/{name}/supported` is 404: the go command then checks sums with its own
// GOSUMDB (or not at all). Errors are plain text, which the go command prints.
import type { FastifyInstance } from 'fastify';
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
import { type GoService, unescapeModule } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => `${message}\n`;

/** What a GOPROXY path asks for; undefined when it is none of the protocol's paths. */
function parsePath(
  path: string,
): { module: string; what: 'list' | 'latest' | 'info' | 'mod' | 'zip'; version?: string } | undefined {
  if (path.endsWith('/@latest')) {
    const module = unescapeModule(path.slice(0, -'/@latest'.length));
    return module ? { module, what: 'latest' } : undefined;
  }
  const at = path.lastIndexOf('/@v/');
  if (at <= 0) return undefined;
  const module = unescapeModule(path.slice(0, at));
  const rest = path.slice(at + 4);
  if (!module) return undefined;
  if (rest === 'list') return { module, what: 'list' };
  const m = /^(.+)\.(info|mod|zip)$/.exec(rest);
  const version = m ? unescapeModule(m[1]!) : undefined;
  if (!m || !version) return undefined;
  return { module, what: m[2] as 'info' | 'mod' | 'zip', version };
}

export interface GoRoutesDeps extends RegistryDeps {
  packages: PackageService;
  go: GoService;
}

export function goRoutes(app: FastifyInstance, deps: GoRoutesDeps): void {
  const { packages, go } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    scope.put('/:owner/go/upload', async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const announced = announcedLength(request);
      const data = streamOf(request);
      await go.upload(o, identity.user, data, announced);
      return reply.code(201).send();
    });

    scope.route({
      method: 'GET',
      url: '/:owner/go/*',
      // A HEAD would count a download of a zip.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const path = (request.params as Params)['*'] ?? '';
        const asked = parsePath(path);
        if (!asked) throw notFound(`no such path in the Go module proxy: ${path}`);
        const pkg = await go.requireModule(o, asked.module, request.packageIdentity);
        if (asked.what === 'list') {
          const versions = await go.versions(pkg);
          return reply.type('text/plain; charset=utf-8').send(versions.map((v) => `${v}\n`).join(''));
        }
        const version = await go.requireVersion(pkg, asked.version ?? 'latest');
        if (asked.what === 'latest' || asked.what === 'info') {
          return reply.type('application/json; charset=utf-8').send(go.info(version));
        }
        if (asked.what === 'mod') {
          return reply.type('text/plain; charset=utf-8').send(await go.goMod(pkg, version));
        }
        const file = await packages.requireFile(version.id, `${version.version}.zip`);
        return sendPackageFile(reply, packages, file, 'application/zip');
      },
    });
  });
}
