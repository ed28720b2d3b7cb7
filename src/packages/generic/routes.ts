// The generic registry: /api/packages/{owner}/generic/{name}/{version}/{file}. PUT uploads a
// file (201; 409 when the version has that file; files are added to an existing version), GET
// and HEAD download it (Content-Length, Range), DELETE removes it (the version goes with its last
// file); DELETE /{name}/{version} removes the version. Bodies stream both ways.
import rangeParser from 'range-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  sendRegistryError,
  streamOf,
  uploader,
} from '../registry.js';
import { checkFileName, checkName, checkVersion } from './service.js';

interface FileParams {
  owner: string;
  name: string;
  version: string;
  filename: string;
}

const errorBody = (message: string) => ({ message });

export interface GenericRoutesDeps extends RegistryDeps {
  packages: PackageService;
}

export function genericRoutes(app: FastifyInstance, deps: GenericRoutesDeps): void {
  const { packages } = deps;
  registry(app, deps, errorBody, (scope) => {
    const prefix = '/:owner/generic/:name/:version';

    scope.put(`${prefix}/:filename`, async (request, reply) => {
      const p = request.params as FileParams;
      const owner = await packages.requireOwner(p.owner, request.packageIdentity, 'write');
      const identity = uploader(request);
      checkName(p.name);
      checkVersion(p.version);
      checkFileName(p.filename);
      const announced = announcedLength(request);
      const data = streamOf(request);
      await packages.addFile(
        {
          owner,
          creator: identity.user,
          type: 'generic',
          name: p.name,
          version: p.version,
          fileName: p.filename,
          isLead: false,
          data,
          newVersionOnly: false,
        },
        announced,
      );
      return reply.code(201).send();
    });

    const locate = async (request: FastifyRequest) => {
      const p = request.params as FileParams;
      const owner = await packages.requireOwner(p.owner, request.packageIdentity, 'read');
      const found = await packages.requireVersion(
        owner,
        'generic',
        p.name,
        p.version,
        request.packageIdentity,
      );
      const file = await packages.requireFile(found.version.id, p.filename);
      return { owner, ...found, file };
    };

    const headers = (reply: FastifyReply, size: number, sha256: string, created: number) =>
      reply
        .header('Accept-Ranges', 'bytes')
        .header('ETag', `"${sha256}"`)
        .header('Last-Modified', new Date(created * 1000).toUTCString())
        .type('application/octet-stream')
        .header('Content-Length', String(size));

    // HEAD before GET, so that Fastify does not derive one from GET (which would count a download).
    scope.head(`${prefix}/:filename`, async (request, reply) => {
      const { file } = await locate(request);
      headers(reply, Number(file.size), file.hash_sha256, file.created_unix);
      return reply.code(200).send();
    });

    scope.get(`${prefix}/:filename`, async (request, reply) => {
      const { file } = await locate(request);
      const direct = await packages.directUrl(file);
      if (direct) return reply.removeHeader('content-length').redirect(direct, 303);
      const size = Number(file.size);
      headers(reply, size, file.hash_sha256, file.created_unix);
      const range = request.headers.range;
      if (range) {
        const ranges = rangeParser(size, range, { combine: true });
        if (ranges === -1) {
          reply.header('Content-Range', `bytes */${size}`).removeHeader('Content-Length');
          return sendRegistryError(reply, 416, `the range ${range} is not satisfiable`, errorBody);
        }
        if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
          const { start, end } = ranges[0]!;
          const stream = await packages.open(file, { start, end });
          return reply
            .code(206)
            .header('Content-Range', `bytes ${start}-${end}/${size}`)
            .header('Content-Length', String(end - start + 1))
            .send(stream);
        }
      }
      return reply.code(200).send(await packages.open(file));
    });

    scope.delete(`${prefix}/:filename`, async (request, reply) => {
      const p = request.params as FileParams;
      const identity = request.packageIdentity;
      const owner = await packages.requireOwner(p.owner, identity, 'write');
      const { pkg, version } = await packages.requireVersion(owner, 'generic', p.name, p.version, identity);
      const file = await packages.requireFile(version.id, p.filename);
      await packages.deleteFile(pkg, version, file, identity!.user);
      return reply.code(204).send();
    });

    scope.delete(prefix, async (request, reply) => {
      const p = request.params as Omit<FileParams, 'filename'>;
      const identity = request.packageIdentity;
      const owner = await packages.requireOwner(p.owner, identity, 'write');
      const { pkg, version } = await packages.requireVersion(owner, 'generic', p.name, p.version, identity);
      await packages.deleteVersion(pkg, version, identity!.user);
      return reply.code(204).send();
    });
  });
}
