// The Conda registry at /api/packages/{owner}/conda: PUT /{channel...}/{filename} uploads a
// .tar.bz2 or .conda package (the channel path is optional; the body streams into the store and
// the metadata is read back from the stored file), GET /{channel...}/{subdir}/repodata.json,
// current_repodata.json and their .bz2 forms (an empty subdir answers an empty document, with an
// ETag and 304 for If-None-Match), and GET or HEAD /{channel...}/{subdir}/{filename} downloads.
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../../errors.js';
import type { PackageService } from '../service.js';
import { announcedLength, type RegistryDeps, registry, streamOf, uploader } from '../registry.js';
import { type CondaService, type Repodata } from './service.js';

type Params = Record<string, string>;
const errorBody = (message: string, status: number) => ({ reason: STATUS_CODES[status] ?? '', message });

const REPODATA = new Set([
  'repodata.json',
  'repodata.json.bz2',
  'current_repodata.json',
  'current_repodata.json.bz2',
]);
/** `{channel...}/{subdir}/{filename}` and `{channel...}/{filename}`. */
const GET_PATH = /^(?:(.+)\/)?([^/]+)\/([^/]+)$/;
const PUT_PATH = /^(?:(.+)\/)?([^/]+)$/;

export interface CondaRoutesDeps extends RegistryDeps {
  packages: PackageService;
  conda: CondaService;
}

export function condaRoutes(app: FastifyInstance, deps: CondaRoutesDeps): void {
  const { packages, conda } = deps;

  registry(app, deps, errorBody, (scope, owner) => {
    scope.put('/:owner/conda/*', async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const m = PUT_PATH.exec((request.params as Params)['*'] ?? '');
      if (!m) throw badRequest('a Conda package is uploaded to /{channel...}/{filename}');
      const announced = announcedLength(request);
      const data = streamOf(request);
      await conda.upload(o, identity.user, m[1] ?? '', m[2] ?? '', data, announced);
      return reply.code(201).send();
    });

    const locate = async (request: FastifyRequest) => {
      const o = await owner(request, 'read');
      const m = GET_PATH.exec((request.params as Params)['*'] ?? '');
      if (!m) throw notFound('not a Conda registry path');
      return { owner: o, channel: m[1] ?? '', subdir: m[2]!, filename: m[3]! };
    };

    const sendRepodata = async (
      request: FastifyRequest,
      reply: FastifyReply,
      doc: Repodata,
      filename: string,
      head: boolean,
    ) => {
      const bz2 = filename.endsWith('.bz2');
      const etag = bz2 ? `${doc.etag.slice(0, -1)}-bz2"` : doc.etag;
      reply.header('ETag', etag).header('Cache-Control', 'no-cache');
      const match = request.headers['if-none-match'];
      if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
        return reply.code(304).send();
      }
      const body = bz2 ? await conda.compressed(doc) : Buffer.from(doc.body);
      reply
        .type(bz2 ? 'application/x-bzip2' : 'application/json')
        .header('Content-Length', String(body.length));
      return head ? reply.code(200).send() : reply.code(200).send(body);
    };

    const serve = (head: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { owner: o, channel, subdir, filename } = await locate(request);
      if (REPODATA.has(filename)) {
        const doc = await conda.repodata(o, channel, subdir, request.packageIdentity);
        return sendRepodata(request, reply, doc, filename, head);
      }
      if (!filename.endsWith('.tar.bz2') && !filename.endsWith('.conda')) {
        throw notFound(`not a Conda package file [name: ${filename}]`);
      }
      const file = await conda.requireFile(o, channel, subdir, filename, request.packageIdentity);
      reply.headers({
        'content-type': 'application/octet-stream',
        'content-length': String(file.size),
        etag: `"${file.hash_sha256}"`,
        'last-modified': new Date(file.created_unix * 1000).toUTCString(),
        'content-disposition': `attachment; filename="${file.name}"`,
      });
      if (head) return reply.code(200).send();
      const direct = await packages.directUrl(file);
      if (direct) return reply.removeHeader('content-length').redirect(direct, 303);
      return reply.code(200).send(await packages.open(file));
    };

    // HEAD before GET, so that Fastify does not derive one from GET (which would count a download).
    scope.head('/:owner/conda/*', serve(true));
    scope.get('/:owner/conda/*', serve(false));
  });
}
