// The Maven registry: /api/packages/{owner}/maven/{group/as/path}/{artifact}/{version}/{file}.
// PUT stores a file (201; 409 for an existing file of a release; checksum files are compared, 200
// or 400), GET and HEAD serve files with Content-Length, Last-Modified, ETag and a content type,
// `{file}.md5|.sha1|.sha256|.sha512` from the stored digests, and the generated
// `{artifact}/maven-metadata.xml` with its checksums. Maven sends credentials only after a 401
// challenge, which registry.ts gives.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PackageService } from '../service.js';
import { announcedLength, type RegistryDeps, registry, streamOf, uploader } from '../registry.js';
import { parsePath } from './metadata.js';
import { MavenService, type Found } from './service.js';

const errorBody = (message: string) => ({ message });

const CONTENT_TYPES: Record<string, string> = {
  jar: 'application/java-archive',
  war: 'application/java-archive',
  ear: 'application/java-archive',
  pom: 'text/xml',
  xml: 'text/xml',
  module: 'application/json',
  json: 'application/json',
  asc: 'text/plain',
};

function contentType(fileName: string): string {
  const ext = fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}

export interface MavenRoutesDeps extends RegistryDeps {
  packages: PackageService;
  maven: MavenService;
}

export function mavenRoutes(app: FastifyInstance, deps: MavenRoutesDeps): void {
  const { packages, maven } = deps;
  registry(app, deps, errorBody, (scope) => {
    const url = '/:owner/maven/*';
    const params = (request: FastifyRequest) => request.params as { owner: string; '*': string };

    scope.put(url, async (request, reply) => {
      const p = params(request);
      const owner = await packages.requireOwner(p.owner, request.packageIdentity, 'write');
      const identity = uploader(request);
      const path = parsePath(p['*']);
      const announced = announcedLength(request);
      const data = streamOf(request);
      const status = await maven.upload(owner, identity.user, path, data, announced);
      return reply.code(status).send();
    });

    const find = async (request: FastifyRequest): Promise<Found> => {
      const p = params(request);
      const owner = await packages.requireOwner(p.owner, request.packageIdentity, 'read');
      return maven.find(owner, parsePath(p['*']), request.packageIdentity);
    };

    /** Headers of a GET or HEAD; the body a GET sends unless it streams the stored file. */
    const describe = (reply: FastifyReply, found: Found): Buffer | undefined => {
      if (found.checksum) {
        const body = Buffer.from(MavenService.checksumOf(found, found.checksum));
        const modified = found.kind === 'file' ? found.file.created_unix : found.lastModified;
        reply.type('text/plain; charset=utf-8').header('Last-Modified', httpDate(modified));
        reply.header('Content-Length', String(body.length));
        return body;
      }
      if (found.kind === 'metadata') {
        reply
          .type('text/xml')
          .header('Last-Modified', httpDate(found.lastModified))
          .header('Content-Length', String(found.body.length));
        return found.body;
      }
      const f = found.file;
      reply
        .type(contentType(f.name))
        .header('Content-Length', String(f.size))
        .header('ETag', `"${f.hash_sha256}"`)
        .header('Last-Modified', httpDate(f.created_unix));
      return undefined;
    };

    // HEAD before GET, so that Fastify does not derive one from GET (which would count a download).
    scope.head(url, async (request, reply) => {
      describe(reply, await find(request));
      return reply.code(200).send();
    });

    scope.get(url, async (request, reply) => {
      const found = await find(request);
      const body = describe(reply, found);
      if (body) return reply.code(200).send(body);
      if (found.kind !== 'file') return reply.code(200).send();
      // Downloads count on the lead file (the POM), as in Forgejo: one per resolution.
      const direct = await packages.directUrl(found.file, found.file.is_lead === 1);
      if (direct) return reply.removeHeader('content-length').redirect(direct, 303);
      const stream = await packages.open(found.file, undefined, found.file.is_lead === 1);
      return reply.code(200).send(stream);
    });
  });
}

const httpDate = (unix: number) => new Date(unix * 1000).toUTCString();
