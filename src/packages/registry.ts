// What every package-manager endpoint under /api/packages/{owner}/{format}/ shares: credentials
// from the Authorization header only (basic auth with a password or a token as the password,
// `token X` or `Bearer X`; never a session cookie), 401 with a Basic challenge so that clients
// send credentials (also when the caller's account may not read or write the owner's packages,
// or their token lacks the package scope: Forgejo's answer there too), and errors in the format's
// own body shape.
import { Readable } from 'node:stream';
import multipart, { type FastifyMultipartOptions } from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../auth/identity.js';
import { AppError, unauthorized } from '../errors.js';
import { statusOf } from '../http/errors.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { PackageAccessDenied, type PackageService } from './service.js';
import type { FileWithBlob } from './tables.js';
import { logFailure } from '../http/request-log.js';

/** Forgejo's challenge, word for word. */
export const REALM = 'Basic realm="Gitea Package API"';

declare module 'fastify' {
  interface FastifyRequest {
    packageIdentity: Identity | null;
  }
}

/**
 * The body of an error answer, per format (npm reads `error`, others `message`); a string is
 * sent as plain text (the Go proxy's errors, which the go command prints).
 */
export type ErrorBody = (message: string, status: number) => unknown;

export function sendRegistryError(reply: FastifyReply, status: number, message: string, body: ErrorBody) {
  if (status === 401) reply.header('WWW-Authenticate', REALM);
  const out = body(message, status);
  if (typeof out === 'string') return reply.code(status).type('text/plain; charset=utf-8').send(out);
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(out));
}

/** What every format's endpoints need: [packages] ENABLED and who the caller is. */
export interface RegistryDeps {
  packages: Pick<PackageService, 'assertEnabled'>;
  auth: Pick<Authenticator, 'authenticate'>;
  users: Pick<UserService, 'assertMayAct'>;
}

/**
 * Sets a scope up for a format's endpoints: authentication (before the body is read), the error
 * handler, and the 404 for requests while [packages] is disabled.
 */
function registryScope(scope: FastifyInstance, deps: RegistryDeps, body: ErrorBody): void {
  scope.decorateRequest('packageIdentity', null);
  scope.addHook('onRequest', async (request: FastifyRequest) => {
    deps.packages.assertEnabled();
    const identity = await deps.auth.authenticate({ authorization: request.headers.authorization });
    if (identity) deps.users.assertMayAct(identity.user);
    request.packageIdentity = identity;
  });
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof PackageAccessDenied) return sendRegistryError(reply, 401, err.message, body);
    if (err instanceof AppError) return sendRegistryError(reply, statusOf[err.kind], err.message, body);
    if (err.validation) return sendRegistryError(reply, 400, err.message, body);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendRegistryError(reply, status, err.message, body);
    // A client that went away mid-upload is no server failure.
    if (request.raw.destroyed || (err as { code?: string }).code === 'ECONNRESET') {
      request.log.debug({ err }, 'package request cut off by the client');
    } else logFailure(request, err, 'unexpected failure in a package registry');
    return sendRegistryError(reply, 500, 'Internal Server Error', body);
  });
}

/**
 * Hands every request body of the scope to its handler unread, as a stream (`streamOf`): package
 * uploads are streamed to storage while they are hashed, whatever their content type. Call it on
 * the format's own encapsulated scope, before its routes.
 */
export function streamedBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}

/** The body of a request of a `streamedBodies` scope (an empty stream when it has none). */
export const streamOf = (request: FastifyRequest): Readable =>
  (request.body as Readable | undefined) ?? Readable.from([]);

/**
 * The size the client announced in `Content-Length`, for the limit checks made before a byte is
 * read; undefined when there is none or it is not a plain decimal number (a chunked upload).
 */
export function announcedLength(request: FastifyRequest): number | undefined {
  const length = request.headers['content-length'];
  if (length === undefined || !/^\d{1,15}$/.test(length)) return undefined;
  return Number(length);
}

/**
 * The owner named by the route's `:owner` parameter when the caller may read (or write) its
 * packages (`PackageService.requireOwner`, with the credentials the scope authenticated).
 */
export function ownerResolver(packages: Pick<PackageService, 'requireOwner'>) {
  return (request: FastifyRequest, need: 'read' | 'write'): Promise<UserRow> =>
    packages.requireOwner(
      (request.params as Record<string, string | undefined>)['owner'] ?? '',
      request.packageIdentity,
      need,
    );
}

/** A format's bodies: all streamed (the default), Fastify's parsers, or multipart forms parsed. */
export type RegistryBodies =
  'streamed' | 'parsed' | { multipart: Omit<FastifyMultipartOptions, 'throwFileSizeLimit'> };

/** How a format answers errors, and how it reads bodies when not all streamed. */
export interface RegistryFormat {
  errorBody: ErrorBody;
  bodies: RegistryBodies;
}

export type OwnerOf = ReturnType<typeof ownerResolver>;

/**
 * A format's endpoints under /api/packages, in a scope of their own (`registryScope`), with their
 * bodies read as the format says: 'streamed' (the default) hands every body to its handler unread
 * (`streamedBodies`); a multipart option parses multipart/form-data (the file size is not limited
 * there: the limit is enforced while hashing, 403 with administrators exempt) and streams any
 * other body; 'parsed' keeps Fastify's parsers. `routes` gets the scope and the resolver of the
 * route's owner (`ownerResolver`).
 */
export function registry(
  app: FastifyInstance,
  deps: RegistryDeps & { packages: Pick<PackageService, 'assertEnabled' | 'requireOwner'> },
  format: ErrorBody | RegistryFormat,
  routes: (scope: FastifyInstance, owner: OwnerOf) => void | Promise<void>,
): void {
  const { errorBody, bodies }: RegistryFormat =
    typeof format === 'function' ? { errorBody: format, bodies: 'streamed' } : format;
  void app.register(
    async (scope) => {
      registryScope(scope, deps, errorBody);
      if (bodies === 'streamed') streamedBodies(scope);
      else if (bodies !== 'parsed') {
        scope.removeAllContentTypeParsers();
        const options = bodies.multipart;
        await scope.register(multipart, {
          ...options,
          limits: { fileSize: Infinity, ...options.limits },
          throwFileSizeLimit: false,
        });
        scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      }
      await routes(scope, ownerResolver(deps.packages));
    },
    { prefix: '/api/packages' },
  );
}

/**
 * Answers an owner's signing key (Arch, Debian and RPM registries): the armored public key as
 * `repository.key`, the name clients' set-up instructions download.
 */
export function sendRepositoryKey(reply: FastifyReply, armored: string): FastifyReply {
  return reply
    .type('application/pgp-keys')
    .header('Content-Disposition', 'attachment; filename="repository.key"')
    .send(armored);
}

/** The headers `sendPackageFile` adds to the type and length of a file it streams. */
export interface PackageFileHeaders {
  /** Content-Disposition: attachment, with the file's name. */
  attachment?: boolean;
  /** Last-Modified: when the file was uploaded. */
  lastModified?: boolean;
  /** ETag: the file's SHA-256, quoted. */
  etag?: boolean;
}

/**
 * Answers a package file: a 303 to the storage's own URL of it when the store serves downloads
 * directly ([packages] SERVE_DIRECT), else the file streamed with its content type and length (and
 * the headers asked for). The download counts unless `count` is false.
 */
export async function sendPackageFile(
  reply: FastifyReply,
  packages: Pick<PackageService, 'directUrl' | 'open'>,
  file: FileWithBlob,
  type: string,
  headers: PackageFileHeaders = {},
  count = true,
): Promise<FastifyReply> {
  const direct = await packages.directUrl(file, count);
  if (direct) return reply.removeHeader('content-length').redirect(direct, 303);
  reply.type(type).header('Content-Length', String(file.size));
  if (headers.etag) reply.header('ETag', `"${file.hash_sha256}"`);
  if (headers.lastModified) reply.header('Last-Modified', new Date(file.created_unix * 1000).toUTCString());
  if (headers.attachment) reply.header('Content-Disposition', `attachment; filename="${file.name}"`);
  return reply.send(await packages.open(file, undefined, count));
}

/**
 * Who is writing: the identity of a request to a route that changes packages (401 without one;
 * the owner's 'write' check has usually refused it already, this names it for the handler).
 */
export function uploader(request: FastifyRequest): Identity {
  const identity = request.packageIdentity;
  if (!identity) throw unauthorized('authentication required');
  return identity;
}
