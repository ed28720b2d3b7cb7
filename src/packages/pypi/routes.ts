// The PyPI registry at /api/packages/{owner}/pypi: twine's upload (POST /, multipart with the
// file in `content` after the metadata fields; the file is streamed into the store and its
// sha256 checked against `sha256_digest`), the simple index of a project (/simple/{name}, PEP 503
// HTML or PEP 691 JSON by Accept) and file downloads (/files/{name}/{version}/{file}).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../../errors.js';
import { readMultipart } from '../../attachments/upload.js';
import type { PackageService } from '../service.js';
import { type RegistryFormat, type RegistryDeps, registry, sendPackageFile, uploader } from '../registry.js';
import {
  type PypiService,
  checkDistribution,
  checkFileName,
  checkName,
  checkVersion,
  metadataOf,
  normalizeName,
  simpleHtml,
  simpleJson,
} from './service.js';

type Params = Record<string, string>;
const errorBody = (message: string) => ({ message });

/** Multipart forms parsed (uploads), other bodies streamed. */
const FORMAT: RegistryFormat = {
  errorBody,
  bodies: {
    multipart: { limits: { files: 2, fields: 64, parts: 70, fieldSize: 1 << 20 } },
  },
};

const JSON_TYPE = 'application/vnd.pypi.simple.v1+json';
const JSON_TYPES = new Set([JSON_TYPE, 'application/vnd.pypi.simple.latest+json']);
const HTML_TYPE = 'application/vnd.pypi.simple.v1+html';

/**
 * The simple index's type for an Accept header: PEP 691 JSON only when the client names it
 * (`application/vnd.pypi.simple.v1+json` or `.latest+json`) at a q-value above 0 and at least
 * that of any HTML type or wildcard it accepts; HTML (PEP 503) otherwise, also with no Accept, a
 * wildcard or nothing acceptable. The HTML is `text/html` unless only the PyPI HTML type is accepted.
 */
function simpleIndexType(accept: string | undefined): string {
  let json = 0;
  let text = -1;
  let pypiHtml = -1;
  for (const part of (accept ?? '').split(',')) {
    const [range = '', ...params] = part.split(';').map((x) => x.trim());
    const type = range.toLowerCase();
    if (!type) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]) || 0);
    }
    if (JSON_TYPES.has(type)) json = Math.max(json, q);
    else if (type === 'text/html' || type === 'text/*') text = Math.max(text, q);
    else if (type === HTML_TYPE || type === 'application/*') pypiHtml = Math.max(pypiHtml, q);
    else if (type === '*/*') {
      text = Math.max(text, q);
      pypiHtml = Math.max(pypiHtml, q);
    }
  }
  if (json > 0 && json >= text && json >= pypiHtml) return JSON_TYPE;
  return pypiHtml > 0 && pypiHtml > text ? HTML_TYPE : 'text/html';
}

export interface PypiRoutesDeps extends RegistryDeps {
  packages: PackageService;
  pypi: PypiService;
}

export function pypiRoutes(app: FastifyInstance, deps: PypiRoutesDeps): void {
  const { packages, pypi } = deps;

  registry(app, deps, FORMAT, (scope, owner) => {
    scope.post('/:owner/pypi', async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      if (!request.isMultipart())
        throw badRequest('the upload must be multipart/form-data (as twine sends it)');
      const up = await readMultipart(request, 'content', async (filename, stream, fields) => {
        const name = (fields['name'] ?? '').trim();
        const version = (fields['version'] ?? '').trim();
        const digest = (fields['sha256_digest'] ?? '').trim().toLowerCase();
        checkName(name);
        checkVersion(version);
        checkFileName(filename);
        if (!/^[0-9a-f]{64}$/.test(digest))
          throw badRequest('sha256_digest is required: the sha256 of the file');
        return packages.addFile({
          owner: o,
          creator: identity.user,
          type: 'pypi',
          name: name.replace(/[-_.]+/g, '-'),
          version,
          fileName: filename,
          data: stream,
          newVersionOnly: false,
          metadata: JSON.stringify(metadataOf(fields)),
          verify: async (digests, stored) => {
            if (digests.sha256 !== digest) {
              throw badRequest(`the file's sha256 is ${digests.sha256}, not ${digest} (sha256_digest)`);
            }
            await checkDistribution(filename, stored);
          },
        });
      });
      if (up.error) throw up.error;
      if (!up.result) throw badRequest("the form field 'content' (the file) is required");
      return reply.code(201).send();
    });

    const simple = async (request: FastifyRequest) => {
      const o = await owner(request, 'read');
      const name = (request.params as Params)['name'] ?? '';
      const pkg = await pypi.requireProject(o, name, request.packageIdentity);
      return { pkg, files: await pypi.indexFiles(o, pkg) };
    };

    for (const path of ['/:owner/pypi/simple/:name', '/:owner/pypi/simple/:name/']) {
      scope.get(path, async (request, reply) => {
        const { pkg, files } = await simple(request);
        const type = simpleIndexType(request.headers.accept);
        reply.header('Vary', 'Accept');
        if (type === JSON_TYPE)
          return reply.type(JSON_TYPE).send(JSON.stringify(simpleJson(pkg.name, files)));
        return reply.type(`${type}; charset=utf-8`).send(simpleHtml(normalizeName(pkg.name), files));
      });
    }

    const locate = async (request: FastifyRequest) => {
      const p = request.params as Params;
      const o = await owner(request, 'read');
      return packages.requireVersionFile(
        o,
        'pypi',
        normalizeName(p['name'] ?? ''),
        p['version'] ?? '',
        p['filename'] ?? '',
        request.packageIdentity,
      );
    };

    const fileHeaders = (file: Awaited<ReturnType<typeof locate>>) => ({
      'content-type': 'application/octet-stream',
      'content-length': String(file.size),
      etag: `"${file.hash_sha256}"`,
      'last-modified': new Date(file.created_unix * 1000).toUTCString(),
      'content-disposition': `attachment; filename="${file.name}"`,
    });

    // HEAD before GET, so that Fastify does not derive one from GET (which would count a download).
    scope.head('/:owner/pypi/files/:name/:version/:filename', async (request, reply) => {
      const file = await locate(request);
      return reply.headers(fileHeaders(file)).code(200).send();
    });

    scope.get('/:owner/pypi/files/:name/:version/:filename', async (request, reply) => {
      const file = await locate(request);
      return sendPackageFile(reply, packages, file, 'application/octet-stream', {
        etag: true,
        lastModified: true,
        attachment: true,
      });
    });
  });
}
