// The NuGet registry at /api/packages/{owner}/nuget, at Forgejo's URLs: the v3 service index
// (`index.json`), search (`query`), registrations (`registration/{id}/index.json`,
// `registration/{id}/{version}.json`) and package content (`package/{id}/index.json`,
// `package/{id}/{version}/{file}`: the .nupkg or the .nuspec); the v2 OData feed (`/`, `$metadata`,
// `Packages()`, `Packages(Id='',Version='')`, `FindPackagesById()`, `Search()`, each list with its
// `$count`); push (`PUT /`, the .nupkg as a multipart file or the raw body, 201) and delete
// (`DELETE /{id}/{version}`, 204); symbols packages (`PUT /symbolpackage`) and their PDBs
// (`symbols/{file}/{id}ffffffff/{file}`). The API key (`X-NuGet-ApiKey`) is an access token; basic and
// token credentials work as everywhere under /api/packages. Errors are {"Message": ...}.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
} from '../registry.js';
import type { PackageService } from '../service.js';
import * as feed from './feed.js';
import { firstPart, multipartBoundary } from './multipart.js';
import type { NugetService } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ Message: message });

export interface NugetRoutesDeps extends RegistryDeps {
  packages: PackageService;
  nuget: NugetService;
  /** ROOT_URL, ending in `/`. */
  rootUrl: string;
}

const query = (request: FastifyRequest, name: string): string => {
  const v = (request.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v.trim() : '';
};
const int = (request: FastifyRequest, name: string): number => {
  const v = query(request, name);
  return /^\d{1,9}$/.test(v) ? Number(v) : 0;
};
const unquote = (s: string) => s.replace(/^'+|'+$/g, '');

/** The search term of a v2 request: `searchTerm`, else the first quoted string of `$filter`. */
function searchTerm(request: FastifyRequest): { value: string; exact: boolean } {
  const term = unquote(query(request, 'searchTerm'));
  if (term) return { value: term, exact: false };
  const filter = query(request, '$filter');
  const m = /'([^']+)'/.exec(filter);
  if (m) return { value: m[1]!.trim(), exact: /\s+eq\s+'/.test(filter) };
  return { value: '', exact: false };
}

export function nugetRoutes(app: FastifyInstance, deps: NugetRoutesDeps): void {
  const { packages, nuget, auth, users } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    // NuGet clients send the API key in a header of their own: an access token.
    scope.addHook('onRequest', async (request: FastifyRequest) => {
      const key = request.headers['x-nuget-apikey'];
      if (request.packageIdentity || typeof key !== 'string' || !key) return;
      const identity = await auth.authenticate({ authorization: `token ${key}` });
      if (identity) users.assertMayAct(identity.user);
      request.packageIdentity = identity;
    });

    const base = '/:owner/nuget';
    const param = (request: FastifyRequest, name: string) => (request.params as Params)[name] ?? '';
    const feedBase = (o: UserRow) => `${deps.rootUrl}api/packages/${o.name}/nuget`;
    const xml = (reply: FastifyReply, body: string) =>
      reply.type('application/atom+xml; charset=utf-8').send(body);

    /**
     * The service documents are served without read access, as Forgejo does (clients fetch them
     * before they send credentials); the owner must exist.
     */
    const ownerName = async (request: FastifyRequest): Promise<string> => {
      try {
        return (await owner(request, 'read')).name;
      } catch (err) {
        const denied = err instanceof AppError && (err.kind === 'unauthorized' || err.kind === 'forbidden');
        if (denied) return param(request, 'owner');
        throw err;
      }
    };
    const nameBase = (name: string) => `${deps.rootUrl}api/packages/${name}/nuget`;

    scope.get(`${base}/`, async (request, reply) =>
      xml(reply, feed.serviceDocument(nameBase(await ownerName(request)))),
    );
    scope.get(`${base}/index.json`, async (request, reply) =>
      reply.send(feed.serviceIndex(nameBase(await ownerName(request)))),
    );

    // v3

    scope.get(`${base}/query`, async (request, reply) => {
      const o = await owner(request, 'read');
      const page = await nuget.searchPackages(
        o,
        query(request, 'q'),
        int(request, 'skip'),
        int(request, 'take'),
      );
      return reply.send(feed.searchResult(feedBase(o), page.total, page.items));
    });

    scope.get(`${base}/registration/:id/index.json`, async (request, reply) => {
      const o = await owner(request, 'read');
      const versions = await nuget.versionsOf(o, param(request, 'id'));
      if (!versions.length) throw notFound('package does not exist');
      return reply.send(feed.registrationIndex(feedBase(o), versions));
    });

    scope.get(`${base}/registration/:id/:version`, async (request, reply) => {
      const o = await owner(request, 'read');
      const version = param(request, 'version').replace(/\.json$/, '');
      const v = await nuget.version(o, param(request, 'id'), version);
      if (!v) throw notFound('package does not exist');
      return reply.send(feed.registrationLeaf(feedBase(o), v));
    });

    scope.get(`${base}/package/:id/index.json`, async (request, reply) => {
      const o = await owner(request, 'read');
      const versions = await nuget.versionsOf(o, param(request, 'id'));
      if (!versions.length) throw notFound('package does not exist');
      return reply.send({ versions: versions.map((v) => v.version) });
    });

    scope.route({
      method: 'GET',
      url: `${base}/package/:id/:version/:filename`,
      // A HEAD would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const id = param(request, 'id');
        const filename = param(request, 'filename');
        const found = await packages.requireVersion(
          o,
          'nuget',
          id,
          param(request, 'version'),
          request.packageIdentity,
        );
        if (filename.toLowerCase() === `${id}.nuspec`.toLowerCase()) {
          const lead = await packages.requireFile(
            found.version.id,
            `${found.pkg.name}.${found.version.version}.nupkg`,
          );
          return reply.type('application/xml; charset=utf-8').send(await nuget.nuspecOf(lead));
        }
        const file = await packages.requireFile(found.version.id, filename);
        return sendPackageFile(reply, packages, file, 'application/octet-stream', { attachment: true });
      },
    });

    // Push and delete

    const push = async (request: FastifyRequest, reply: FastifyReply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const boundary = multipartBoundary(request.headers['content-type']);
      // A multipart body's size is not the file's: no announced length then.
      if (boundary) await nuget.push(o, identity.user, firstPart(streamOf(request), boundary));
      else await nuget.push(o, identity.user, streamOf(request), announcedLength(request));
      return reply.code(201).send();
    };
    scope.put(`${base}/`, push);
    scope.put(base, push);

    // Symbols: a .snupkg for a pushed version, and the symbol server's lookups of its PDBs
    // (`symbols/{file}/{pdb id}ffffffff/{file}`, the Simple Symbol Query Protocol).
    scope.put(`${base}/symbolpackage`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const boundary = multipartBoundary(request.headers['content-type']);
      if (boundary) await nuget.pushSymbols(o, identity.user, firstPart(streamOf(request), boundary));
      else await nuget.pushSymbols(o, identity.user, streamOf(request), announcedLength(request));
      return reply.code(201).send();
    });
    scope.get(`${base}/symbols/:filename/:guid/:filename2`, async (request, reply) => {
      const o = await owner(request, 'read');
      const guid = param(request, 'guid');
      if (!/^[0-9a-f]{32}f{8}$/i.test(guid)) throw notFound('not found');
      const filename = param(request, 'filename');
      if (filename !== param(request, 'filename2'))
        throw new AppError('bad_request', 'the file names differ');
      const found = await nuget.symbolFile(o, filename, guid.slice(0, 32));
      if (!found) throw notFound('symbol file does not exist');
      const file = await packages.requireFile(
        found.versionId,
        filename.toLowerCase(),
        guid.slice(0, 32).toLowerCase(),
      );
      return reply
        .type('application/octet-stream')
        .header('Content-Length', String(file.size))
        .header('Content-Disposition', `attachment; filename="${file.name}"`)
        .send(await packages.open(file));
    });

    scope.delete(`${base}/:id/:version`, async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const found = await packages.requireVersion(
        o,
        'nuget',
        param(request, 'id'),
        param(request, 'version'),
        identity,
      );
      await packages.deleteVersion(found.pkg, found.version, identity.user);
      return reply.code(204).send();
    });

    // v2: the OData paths (parentheses, quotes, `$`) are matched here rather than by the router.
    scope.get(`${base}/*`, async (request, reply) => {
      const path = param(request, '*');
      if (path === '$metadata') {
        await ownerName(request);
        return xml(reply, feed.metadataDocument());
      }
      const o = await owner(request, 'read');
      const fb = feedBase(o);
      const entry = /^Packages\(Id='([^']+)',Version='([^']+)'\)$/.exec(path);
      if (entry) {
        const v = await nuget.version(o, entry[1]!, entry[2]!);
        if (!v) throw notFound('package does not exist');
        return xml(reply, feed.entryDocument(fb, v));
      }
      const list = /^(Packages|Search|FindPackagesById)\(\)(\/\$count)?$/.exec(path);
      if (!list) throw notFound('not found');
      const skip = int(request, '$skip');
      const top = int(request, '$top');
      const byId = list[1] === 'FindPackagesById';
      const id = unquote(query(request, 'id'));
      const page = byId
        ? await nuget.findById(o, id, skip, top)
        : await nuget.searchLatest(o, searchTerm(request), skip, top);
      if (list[2]) return reply.type('text/plain; charset=utf-8').send(String(page.total));
      let next: string | undefined;
      const take = top > 0 ? top : 20;
      if (page.items.length === take) {
        const q = new URLSearchParams();
        if (byId) q.set('id', id);
        else {
          for (const k of ['searchTerm', '$filter']) if (query(request, k)) q.set(k, query(request, k));
        }
        q.set('$skip', String(skip + take));
        q.set('$top', String(take));
        next = `${fb}/${list[1]}()?${q.toString()}`;
      }
      return xml(reply, feed.feedDocument(fb, page.total, page.items, next));
    });
  });
}
