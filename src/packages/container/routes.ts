// The container registry at /v2/ (OCI distribution spec), for docker, podman and skopeo.
// Credentials: the signed token of /v2/token as Bearer, or basic auth (a password or an access
// token) directly; requests with none get 401 with the Bearer challenge whose realm is
// {ROOT_URL}v2/token. Image names hold `/`, so one wildcard route per method parses the path:
// /v2/{owner}/{image}/blobs/..., /manifests/{reference}, /tags/list. Errors are the registry's
// {"errors":[{"code","message"}]}. Blob bodies stream both ways.
import { Readable } from 'node:stream';
import rangeParser from 'range-parser';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../../auth/identity.js';
import { AppError, unauthorized } from '../../errors.js';
import { statusOf } from '../../http/errors.js';
import type { UserService } from '../../users/service.js';
import type { UserRow } from '../../users/tables.js';
import { announcedLength, streamedBodies } from '../registry.js';
import { PackageAccessDenied, type PackageService } from '../service.js';
import type { ContainerBlobs } from './blobs.js';
import { checkImage, MANIFEST_MAX, metadataOf, OciError } from './oci.js';
import type { ContainerService } from './service.js';
import type { ImageFile } from './tables.js';
import type { RegistryTokens } from './tokens.js';
import { logFailure } from '../../http/request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    registryIdentity: Identity | null;
    /** Whether any credential came (an anonymous registry token counts). */
    registryCredentials: boolean;
  }
}

const CODES: Record<string, string> = {
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'DENIED',
  not_found: 'NAME_UNKNOWN',
  payload_too_large: 'DENIED',
  bad_request: 'UNSUPPORTED',
  invalid: 'UNSUPPORTED',
  conflict: 'UNSUPPORTED',
};

type Route =
  | { kind: 'uploads'; image: string; owner: string; id?: string }
  | { kind: 'blob'; image: string; owner: string; digest: string }
  | { kind: 'manifest'; image: string; owner: string; reference: string }
  | { kind: 'tags'; image: string; owner: string };

/** Splits /v2/{owner}/{image...}/{what} (undefined: no such address). */
function parse(path: string): Route | undefined {
  const m =
    /^\/v2\/([^/]+)\/(.+?)\/(blobs\/uploads\/?(?:[^/]+)?|blobs\/[^/]+|manifests\/[^/]+|tags\/list)$/.exec(
      path,
    );
  if (!m) return undefined;
  const owner = decodeURIComponent(m[1]!);
  const image = decodeURIComponent(m[2]!);
  const rest = m[3]!;
  if (rest.startsWith('blobs/uploads')) {
    const id = rest.slice('blobs/uploads'.length).replace(/^\//, '');
    return { kind: 'uploads', owner, image, ...(id ? { id } : {}) };
  }
  if (rest.startsWith('blobs/'))
    return { kind: 'blob', owner, image, digest: decodeURIComponent(rest.slice(6)) };
  if (rest.startsWith('manifests/')) {
    return { kind: 'manifest', owner, image, reference: decodeURIComponent(rest.slice(10)) };
  }
  return { kind: 'tags', owner, image };
}

async function readAll(stream: Readable | undefined, max: number): Promise<Buffer> {
  if (!stream) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream) {
    n += (c as Buffer).length;
    if (n > max) {
      stream.destroy();
      throw new OciError(413, 'SIZE_INVALID', `a manifest may have at most ${max} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

export interface ContainerRoutesDeps {
  packages: Pick<PackageService, 'assertEnabled' | 'requireOwner'>;
  /** Images and manifests. */
  images: ContainerService;
  blobs: ContainerBlobs;
  tokens: RegistryTokens;
  auth: Pick<Authenticator, 'authenticate'>;
  users: Pick<UserService, 'assertMayAct'>;
  rootUrl: string;
}

export function containerRoutes(app: FastifyInstance, deps: ContainerRoutesDeps): void {
  const { packages, images, blobs, tokens, auth, users } = deps;
  const realm = `Bearer realm="${deps.rootUrl}v2/token",service="container_registry",scope="*"`;

  const sendError = (reply: FastifyReply, status: number, code: string, message: string) => {
    if (status === 401) reply.header('WWW-Authenticate', realm);
    return reply
      .code(status)
      .header('Docker-Distribution-Api-Version', 'registry/2.0')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ errors: [{ code, message }] }));
  };

  void app.register(async (scope) => {
    scope.decorateRequest('registryIdentity', null);
    scope.decorateRequest('registryCredentials', false);
    streamedBodies(scope);
    scope.addHook('onRequest', async (request, reply) => {
      packages.assertEnabled();
      reply.header('Docker-Distribution-Api-Version', 'registry/2.0');
      const header = request.headers.authorization?.trim();
      if (!header) return;
      request.registryCredentials = true;
      let identity: Identity | null | undefined;
      const bearer = /^bearer\s+(.+)$/i.exec(header);
      if (bearer) identity = await tokens.verifyToken(bearer[1]!.trim());
      if (identity === undefined) identity = await auth.authenticate({ authorization: header });
      if (identity) users.assertMayAct(identity.user);
      request.registryIdentity = identity;
    });
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (err instanceof OciError) return sendError(reply, err.status, err.code, err.message);
      // No access for these credentials: the Bearer challenge again, as Forgejo's 401.
      if (err instanceof PackageAccessDenied) return sendError(reply, 401, 'UNAUTHORIZED', err.message);
      if (err instanceof AppError) {
        const status = statusOf[err.kind];
        return sendError(reply, status, CODES[err.kind] ?? 'UNSUPPORTED', err.message);
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) return sendError(reply, status, 'UNSUPPORTED', err.message);
      if (request.raw.destroyed || (err as { code?: string }).code === 'ECONNRESET') {
        request.log.debug({ err }, 'registry request cut off by the client');
      } else logFailure(request, err, 'unexpected failure in the container registry');
      return sendError(reply, 500, 'UNKNOWN', 'Internal Server Error');
    });

    // The version check: 401 with the challenge until credentials (or an anonymous token) come.
    scope.get('/v2/', async (request, reply) => {
      if (!request.registryCredentials) throw unauthorized('authentication required');
      return reply.type('application/json').send('{}');
    });
    scope.get('/v2', async (_request, reply) => reply.redirect('/v2/', 301));

    scope.get('/v2/token', async (request, reply) => {
      const issued = tokens.issueToken(request.registryIdentity);
      return reply.type('application/json').send({
        token: issued.token,
        access_token: issued.token,
        expires_in: issued.expiresIn,
        issued_at: issued.issuedAt,
      });
    });

    scope.get('/v2/_catalog', async (request, reply) => {
      if (!request.registryCredentials) throw unauthorized('authentication required');
      const q = request.query as Record<string, string | undefined>;
      const n = q['n'] !== undefined && /^\d+$/.test(q['n']) ? Math.min(Number(q['n']), 10000) : -1;
      const last = q['last'] ?? '';
      const repos = await images.catalog(request.registryIdentity, last, n);
      if (n >= 0 && repos.length > n) {
        repos.length = n;
        reply.header(
          'Link',
          `</v2/_catalog?n=${n}&last=${encodeURIComponent(repos[n - 1] ?? '')}>; rel="next"`,
        );
      }
      return reply.type('application/json').send({ repositories: repos });
    });

    const owner = async (request: FastifyRequest, name: string, need: 'read' | 'write') => {
      const identity = request.registryIdentity;
      const o = await packages.requireOwner(name, identity, need);
      if (need === 'write' && !identity) throw unauthorized('authentication required');
      return o;
    };

    const blobHeaders = (reply: FastifyReply, file: ImageFile, digest: string) =>
      reply
        .header('Docker-Content-Digest', digest)
        .header('ETag', `"${digest}"`)
        .header('Accept-Ranges', 'bytes')
        .header('Content-Length', String(file.size));

    const uploadHeaders = (reply: FastifyReply, o: UserRow, image: string, id: string, received: number) =>
      reply
        .header('Location', `/v2/${o.lower_name}/${image}/blobs/uploads/${id}`)
        .header('Docker-Upload-Uuid', id)
        .header('Range', `0-${Math.max(received - 1, 0)}`)
        .header('Content-Length', '0');

    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0]!;
      const route = parse(path);
      const method = request.method;
      if (!route) throw new OciError(404, 'NAME_UNKNOWN', `no such registry address: ${path}`);
      const image = route.image.toLowerCase();
      checkImage(image);
      const q = request.query as Record<string, string | undefined>;
      const identity = request.registryIdentity;
      const body = request.body as Readable | undefined;

      if (route.kind === 'uploads') {
        const o = await owner(request, route.owner, 'write');
        const user = identity!.user;
        if (!route.id) {
          if (method !== 'POST') throw new OciError(405, 'UNSUPPORTED', `${method} is not supported here`);
          if (q['mount'] && q['from']) {
            if (await blobs.mount(o, user, identity!, image, q['from'], q['mount'])) {
              body?.resume();
              return reply
                .code(201)
                .header('Location', `/v2/${o.lower_name}/${image}/blobs/${q['mount']}`)
                .header('Docker-Content-Digest', q['mount'])
                .header('Content-Length', '0')
                .send();
            }
          }
          const upload = await blobs.startUpload(o, user, image);
          if (q['digest'] !== undefined) {
            // Monolithic: the body is the blob.
            try {
              const row = await blobs.appendPart(o, user, upload, body ?? Readable.from([]), {
                ...(announcedLength(request) !== undefined ? { announced: announcedLength(request)! } : {}),
              });
              await blobs.finishUpload(o, user, row, q['digest']);
            } catch (err) {
              await blobs.cancelUpload({ ...upload, parts: 1 }).catch(() => undefined);
              throw err;
            }
            return reply
              .code(201)
              .header('Location', `/v2/${o.lower_name}/${image}/blobs/${q['digest']}`)
              .header('Docker-Content-Digest', q['digest'])
              .header('Content-Length', '0')
              .send();
          }
          body?.resume();
          return uploadHeaders(reply.code(202), o, image, upload.id, 0).send();
        }
        const upload = await blobs.requireUpload(o, image, route.id);
        if (method === 'GET') {
          return uploadHeaders(reply.code(204), o, image, upload.id, upload.bytes_received).send();
        }
        if (method === 'DELETE') {
          await blobs.cancelUpload(upload);
          return reply.code(204).send();
        }
        if (method === 'PATCH') {
          const range = request.headers['content-range'];
          const announced = announcedLength(request);
          const row = await blobs.appendPart(o, user, upload, body ?? Readable.from([]), {
            ...(announced !== undefined ? { announced } : {}),
            ...(typeof range === 'string' ? { range } : {}),
          });
          return uploadHeaders(reply.code(202), o, image, row.id, row.bytes_received).send();
        }
        if (method === 'PUT') {
          const digest = q['digest'];
          if (!digest) throw new OciError(400, 'DIGEST_INVALID', 'the digest parameter is required');
          let row = upload;
          const announced = announcedLength(request);
          if (body && announced !== 0) {
            row = await blobs.appendPart(o, user, upload, body, {
              ...(announced !== undefined ? { announced } : {}),
            });
          }
          await blobs.finishUpload(o, user, row, digest);
          return reply
            .code(201)
            .header('Location', `/v2/${o.lower_name}/${image}/blobs/${digest}`)
            .header('Docker-Content-Digest', digest)
            .header('Content-Length', '0')
            .send();
        }
        throw new OciError(405, 'UNSUPPORTED', `${method} is not supported here`);
      }

      if (route.kind === 'blob') {
        if (method === 'DELETE') {
          const o = await owner(request, route.owner, 'write');
          await blobs.deleteBlob(o, image, route.digest, identity!);
          return reply.code(202).header('Content-Length', '0').send();
        }
        const o = await owner(request, route.owner, 'read');
        const file = await blobs.blob(o, image, route.digest, identity);
        const size = Number(file.size);
        blobHeaders(reply, file, route.digest).type('application/octet-stream');
        if (method === 'HEAD') return reply.code(200).send();
        if (method !== 'GET') throw new OciError(405, 'UNSUPPORTED', `${method} is not supported here`);
        const range = request.headers.range;
        if (range) {
          const ranges = rangeParser(size, range, { combine: true });
          if (ranges === -1) {
            reply.header('Content-Range', `bytes */${size}`).removeHeader('Content-Length');
            throw new OciError(416, 'BLOB_UNKNOWN', `the range ${range} is not satisfiable`);
          }
          if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
            const { start, end } = ranges[0]!;
            return reply
              .code(206)
              .header('Content-Range', `bytes ${start}-${end}/${size}`)
              .header('Content-Length', String(end - start + 1))
              .send(await blobs.open(file, { start, end }));
          }
        }
        return reply.code(200).send(await blobs.open(file));
      }

      if (route.kind === 'manifest') {
        if (method === 'PUT') {
          const o = await owner(request, route.owner, 'write');
          const bytes = await readAll(body, MANIFEST_MAX);
          const digest = await images.putManifest(
            o,
            identity!.user,
            image,
            route.reference,
            request.headers['content-type'],
            bytes,
          );
          return reply
            .code(201)
            .header('Location', `/v2/${o.lower_name}/${image}/manifests/${digest}`)
            .header('Docker-Content-Digest', digest)
            .header('Content-Length', '0')
            .send();
        }
        if (method === 'DELETE') {
          const o = await owner(request, route.owner, 'write');
          const pkg = await images.requireImage(o, image, identity);
          await images.deleteManifest(pkg, route.reference, identity!.user);
          return reply.code(202).header('Content-Length', '0').send();
        }
        const o = await owner(request, route.owner, 'read');
        const pkg = await images.requireImage(o, image, identity);
        const file = await images.manifest(pkg, route.reference);
        const digest = `sha256:${file.hash_sha256}`;
        blobHeaders(reply, file, digest).type(metadataOf(file).mediaType);
        if (method === 'HEAD') return reply.code(200).send();
        if (method !== 'GET') throw new OciError(405, 'UNSUPPORTED', `${method} is not supported here`);
        return reply.code(200).send(await blobs.open(file, undefined, true));
      }

      // tags/list
      if (method !== 'GET') throw new OciError(405, 'UNSUPPORTED', `${method} is not supported here`);
      const o = await owner(request, route.owner, 'read');
      const pkg = await images.requireImage(o, image, identity);
      const n = q['n'] !== undefined && /^\d+$/.test(q['n']) ? Math.min(Number(q['n']), 10000) : -1;
      const tags = await images.tags(pkg, q['last'] ?? '', n >= 0 ? n + 1 : -1);
      if (n >= 0 && tags.length > n) {
        tags.length = n;
        reply.header(
          'Link',
          `</v2/${o.lower_name}/${image}/tags/list?n=${n}&last=${encodeURIComponent(tags[n - 1] ?? '')}>; rel="next"`,
        );
      }
      return reply.type('application/json').send({ name: `${o.lower_name}/${image}`, tags });
    };

    // HEAD first, so that Fastify does not derive one from GET.
    for (const method of ['HEAD', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      scope.route({ method, url: '/v2/*', handler: handle });
    }
  });
}
