// Git LFS over HTTP at the server root, beside git's smart HTTP: /{owner}/{repo}.git/info/lfs/...
// (also without .git): the batch API, the basic transfer adapter's uploads, downloads (with
// Range) and verification, and the locking API. Callers authenticate as for git (basic auth with
// a password or token, or a token header); reading follows repository read access, uploading and
// locking need write access.
import { Readable } from 'node:stream';
import Negotiator from 'negotiator';
import rangeParser from 'range-parser';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Authenticator } from '../auth/identity.js';
import { AppError, MovedError, conflict, invalidField } from '../errors.js';
import { movedTo, statusOf } from '../http/errors.js';
import type { Api } from '../http/types.js';
import { authorizeGit, type GitTarget } from '../git/http.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { LfsService } from './service.js';
import {
  BatchRequest,
  BatchResponse,
  CreateLockRequest,
  LFS_MEDIA_TYPE,
  LockList,
  LockListQuery,
  LockResponse,
  UnlockRequest,
  VerifyLocksRequest,
  VerifyLocksResponse,
  VerifyRequest,
  toBatchObjectJson,
  toLockJson,
  type BatchResponseJson,
} from './schemas.js';

const ACCEPTED = [LFS_MEDIA_TYPE, `${LFS_MEDIA_TYPE}; charset=utf-8`];
const REALM = 'Basic realm="Anvil"';

import { RepoParams } from '../http/params.js';
import { logFailure } from '../http/request-log.js';
const ObjectParams = Type.Object({ owner: Type.String(), repo: Type.String(), oid: Type.String() });
const SizedObjectParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  oid: Type.String(),
  size: Type.String(),
});
const LockParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.String() });

const hide = { hide: true };

export interface LfsRoutesDeps {
  lfs: LfsService;
  /** Who may read or write the repository, as for git over HTTP (authorizeGit). */
  auth: Pick<Authenticator, 'authenticate'>;
  users: Pick<UserService, 'assertMayAct' | 'getById'>;
  repos: Pick<RepoService, 'requireRepo'>;
  rootUrl: string;
}

export function lfsRoutes(app: FastifyInstance, deps: LfsRoutesDeps): void {
  const { lfs, auth, users, repos } = deps;
  const prefix = '/:owner/:repo/info/lfs';

  /** Errors as the LFS API has them: its media type, `message`, and a challenge on 401. */
  function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
    if (status === 401) reply.header('LFS-Authenticate', REALM).header('WWW-Authenticate', REALM);
    return reply
      .code(status)
      .type(LFS_MEDIA_TYPE)
      .send({ message, request_id: String(request.id) });
  }

  function onError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (err instanceof MovedError) {
      const location = movedTo(request, err);
      if (location) return reply.code(307).header('Location', location).send();
      return sendError(request, reply, 404, 'Not found');
    }
    if (err instanceof AppError) return sendError(request, reply, statusOf[err.kind], err.message);
    if (err.validation) return sendError(request, reply, 422, err.message);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendError(request, reply, status, err.message);
    logFailure(request, err, 'unexpected failure in LFS');
    return sendError(request, reply, 500, 'Internal Server Error');
  }

  const authorize = (request: FastifyRequest, write: boolean): Promise<GitTarget> => {
    const { owner, repo } = request.params as { owner: string; repo: string };
    return authorizeGit({ auth, users, repos }, request, owner, repo, write);
  };

  /** …/info/lfs of the repository as clients reach it, for the links of batch responses. */
  async function baseOf(target: GitTarget): Promise<string> {
    const owner = await users.getById(target.repo.owner_id);
    const root = deps.rootUrl.replace(/\/+$/, '');
    return `${root}/${encodeURIComponent(owner!.name)}/${encodeURIComponent(target.repo.name)}.git/info/lfs`;
  }

  // JSON endpoints: the batch API, verification and locks.
  void app.register(async (scope) => {
    const api = scope as unknown as Api;
    scope.setErrorHandler(onError);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      [LFS_MEDIA_TYPE, 'application/json'],
      { parseAs: 'string' },
      scope.getDefaultJsonParser('error', 'error'),
    );
    // Clients must accept the LFS media type (no Accept header, or */*, accepts anything).
    scope.addHook('onRequest', async (request, reply) => {
      if (!new Negotiator(request.raw).mediaType(ACCEPTED)) {
        return sendError(request, reply, 406, `the Accept header must allow ${LFS_MEDIA_TYPE}`);
      }
    });
    // A POST without a body is an empty request object (unlocking without `force`, for example).
    scope.addHook('preValidation', async (request) => {
      if (request.method === 'POST' && request.body === undefined) request.body = {};
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.type(LFS_MEDIA_TYPE);
      return payload;
    });

    api.post(
      `${prefix}/objects/batch`,
      { schema: { ...hide, params: RepoParams, body: BatchRequest, response: { 200: BatchResponse } } },
      async (request): Promise<BatchResponseJson> => {
        const body = request.body;
        const target = await authorize(request, body.operation === 'upload');
        if (body.transfers?.length && !body.transfers.includes('basic')) {
          throw invalidField('transfers', 'only the basic transfer adapter is supported');
        }
        if (body.hash_algo !== undefined && body.hash_algo !== 'sha256') {
          throw conflict(`unsupported hash algorithm [hash_algo: ${body.hash_algo}]: only sha256 is`);
        }
        const results = await lfs.batch(target.repo, body.operation, body.objects);
        const links = { base: await baseOf(target), authorization: request.headers.authorization };
        return {
          transfer: 'basic',
          objects: results.map((r) => toBatchObjectJson(r, links)),
          hash_algo: 'sha256',
        };
      },
    );

    api.post(
      `${prefix}/verify`,
      { schema: { ...hide, params: RepoParams, body: VerifyRequest } },
      async (request, reply) => {
        const { repo } = await authorize(request, true);
        await lfs.verify(repo, request.body.oid, request.body.size);
        return reply.code(200).send({ message: 'OK' });
      },
    );

    api.get(
      `${prefix}/locks`,
      { schema: { ...hide, params: RepoParams, querystring: LockListQuery, response: { 200: LockList } } },
      async (request) => {
        const { repo } = await authorize(request, false);
        const q = request.query;
        const page = await lfs.listLocks(repo, { path: q.path, id: q.id, cursor: q.cursor, limit: q.limit });
        return { locks: page.locks.map(toLockJson), ...(page.next ? { next_cursor: page.next } : {}) };
      },
    );

    api.post(
      `${prefix}/locks`,
      {
        schema: {
          ...hide,
          params: RepoParams,
          body: CreateLockRequest,
          response: { 201: LockResponse, 409: LockResponse },
        },
      },
      async (request, reply) => {
        const { repo, identity } = await authorize(request, true);
        const { lock, created } = await lfs.createLock(repo, identity!.user, request.body.path);
        if (created) return reply.code(201).send({ lock: toLockJson(lock) });
        return reply.code(409).send({ lock: toLockJson(lock), message: 'already created lock' });
      },
    );

    api.post(
      `${prefix}/locks/verify`,
      {
        schema: {
          ...hide,
          params: RepoParams,
          body: VerifyLocksRequest,
          response: { 200: VerifyLocksResponse },
        },
      },
      async (request) => {
        const { repo, identity } = await authorize(request, true);
        const body = request.body;
        const r = await lfs.verifyLocks(repo, identity!.user, body.cursor, body.limit);
        return {
          ours: r.ours.map(toLockJson),
          theirs: r.theirs.map(toLockJson),
          ...(r.next ? { next_cursor: r.next } : {}),
        };
      },
    );

    api.post(
      `${prefix}/locks/:id/unlock`,
      { schema: { ...hide, params: LockParams, body: UnlockRequest, response: { 200: LockResponse } } },
      async (request) => {
        const { repo, identity, access } = await authorize(request, true);
        const lock = await lfs.unlock(
          repo,
          identity!.user,
          access,
          request.params.id,
          request.body.force === true,
        );
        return { lock: toLockJson(lock) };
      },
    );
  });

  // Transfers: raw bytes both ways, whatever content type the client labels them with.
  void app.register(async (scope) => {
    const api = scope as unknown as Api;
    scope.setErrorHandler(onError);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    const upload = async (request: FastifyRequest, reply: FastifyReply, sizeParam?: string) => {
      const { oid } = request.params as { oid: string };
      const target = await authorize(request, true);
      let announced: number | undefined;
      if (sizeParam !== undefined) {
        if (!/^\d{1,15}$/.test(sizeParam)) throw invalidField('size', `invalid size [size: ${sizeParam}]`);
        announced = Number(sizeParam);
      } else if (request.headers['content-length'] !== undefined) {
        announced = Number(request.headers['content-length']);
      }
      // Without a body (Content-Length: 0) Fastify hands over none: that is an empty object.
      const body = (request.body as Readable | undefined) ?? Readable.from([]);
      await lfs.upload(target.repo, oid, announced, body);
      return reply.code(200).type(LFS_MEDIA_TYPE).send();
    };

    api.put(`${prefix}/objects/:oid`, { schema: { ...hide, params: ObjectParams } }, (request, reply) =>
      upload(request, reply),
    );
    api.put(
      `${prefix}/objects/:oid/:size`,
      { schema: { ...hide, params: SizedObjectParams } },
      (request, reply) => upload(request, reply, request.params.size),
    );

    const download = async (request: FastifyRequest, reply: FastifyReply) => {
      const { oid } = request.params as { oid: string };
      const { repo } = await authorize(request, false);
      const meta = await lfs.object(repo, oid);
      // [lfs] SERVE_DIRECT on S3: the client fetches the bytes from a presigned URL.
      const direct = await lfs.directUrl(meta.oid);
      if (direct) return reply.redirect(direct, 303);
      const size = Number(meta.size);
      reply.header('Accept-Ranges', 'bytes').type('application/octet-stream');
      const header = request.headers.range;
      if (header) {
        const ranges = rangeParser(size, header, { combine: true });
        if (ranges === -1) {
          reply.header('Content-Range', `bytes */${size}`);
          return sendError(request, reply, 416, `the range ${header} is not satisfiable`);
        }
        // A malformed header or several ranges: the whole object, as RFC 9110 allows.
        if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
          const { start, end } = ranges[0]!;
          const stream = await lfs.open(meta, { start, end });
          return reply
            .code(206)
            .header('Content-Range', `bytes ${start}-${end}/${size}`)
            .header('Content-Length', String(end - start + 1))
            .send(stream);
        }
      }
      const stream = await lfs.open(meta);
      return reply.code(200).header('Content-Length', String(size)).send(stream);
    };

    api.get(`${prefix}/objects/:oid`, { schema: { ...hide, params: ObjectParams } }, download);
    // Forgejo's form with a file name after the oid.
    api.get(
      `${prefix}/objects/:oid/:filename`,
      { schema: { ...hide, params: Type.Object({ ...ObjectParams.properties, filename: Type.String() }) } },
      download,
    );
  });
}
