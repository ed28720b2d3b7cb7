// The actions cache service (cache-service.ts) at /api/actions_cache/ (the runner's
// ACTIONS_CACHE_URL): the v1 protocol of @actions/cache under `_apis/artifactcache/`, and the
// signed archive downloads under `archives/`. Chunk bodies stream into storage, never buffered.
import type { FastifyInstance } from 'fastify';
import rangeParser from 'range-parser';
import { badRequest } from '../errors.js';
import type { CacheService } from './cache-service.js';
import type { Readable } from 'node:stream';

export interface CacheRoutesDeps {
  cache: CacheService;
}

const BASE = '/api/actions_cache';

export function cacheRoutes(app: FastifyInstance, deps: CacheRoutesDeps): void {
  const { cache } = deps;
  // Chunks (application/octet-stream, or anything but JSON) reach the handler as streams.
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.get<{ Querystring: { keys?: string; version?: string } }>(
    `${BASE}/_apis/artifactcache/cache`,
    async (request, reply) => {
      const job = cache.authenticate(request.headers.authorization);
      const hit = await cache.lookup(job, request.query.keys ?? '', request.query.version ?? '');
      if (!hit) return reply.code(204).send();
      return hit;
    },
  );

  app.post(`${BASE}/_apis/artifactcache/caches`, async (request) => {
    const job = cache.authenticate(request.headers.authorization);
    const body = jsonBody(request.body);
    return cache.reserve(job, { key: body['key'], version: body['version'], cacheSize: body['cacheSize'] });
  });

  app.patch<{ Params: { id: string } }>(`${BASE}/_apis/artifactcache/caches/:id`, async (request, reply) => {
    const job = cache.authenticate(request.headers.authorization);
    const header = request.headers['content-range'];
    await cache.upload(job, request.params.id, header, request.body as Readable);
    return reply.code(204).send();
  });

  app.post<{ Params: { id: string } }>(`${BASE}/_apis/artifactcache/caches/:id`, async (request, reply) => {
    const job = cache.authenticate(request.headers.authorization);
    await cache.commit(job, request.params.id, jsonBody(request.body)['size']);
    return reply.code(204).send();
  });

  app.get<{ Params: { id: string }; Querystring: { expires?: string; sig?: string } }>(
    `${BASE}/archives/:id`,
    async (request, reply) => {
      const a = await cache.archive(request.params.id, request.query.expires, request.query.sig);
      reply.header('Accept-Ranges', 'bytes');
      reply.header('Content-Type', 'application/octet-stream');
      let range: { start: number; end: number } | undefined;
      const header = request.headers.range;
      if (header && a.size > 0) {
        const parsed = rangeParser(a.size, header, { combine: true });
        if (parsed === -1) {
          reply.header('Content-Range', `bytes */${a.size}`);
          return reply.code(416).send({ message: 'the range is not satisfiable' });
        }
        if (Array.isArray(parsed) && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0]!;
      }
      if (range) {
        reply.code(206);
        reply.header('Content-Range', `bytes ${range.start}-${range.end}/${a.size}`);
        reply.header('Content-Length', String(range.end - range.start + 1));
      } else {
        reply.header('Content-Length', String(a.size));
      }
      return reply.send(await a.open(a.key, range));
    },
  );
}

function jsonBody(body: unknown): Record<string, unknown> {
  if (
    !body ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    typeof (body as Readable).pipe === 'function'
  ) {
    throw badRequest('the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
