// GET /api/healthz (Forgejo's health answer: 200 when every check passes, 424 when one fails) and
// GET /metrics (Prometheus text format, only while [metrics] ENABLED; with [metrics] TOKEN set it
// asks for `Authorization: Bearer <TOKEN>`). Every answered request is counted for the metrics by
// route pattern, so that label stays bounded whatever the URLs.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app/context.js';

function sameSecret(given: string, wanted: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(wanted).digest();
  return crypto.timingSafeEqual(a, b);
}

/** Counts every request the server answers (added to the root instance, before any route). */
export function countRequests(app: FastifyInstance, ctx: AppContext): void {
  if (!ctx.metrics.enabled) return;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    ctx.metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}

export function opsRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const health = await ctx.ops.health();
    return reply
      .code(health.status === 'fail' ? 424 : 200)
      .header('Cache-Control', 'no-store')
      .type('application/health+json')
      .send(JSON.stringify(health, null, 2));
  });

  if (!ctx.config.metrics.enabled) return;
  const token = ctx.config.metrics.token;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token) {
      const given = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim() ?? '';
      if (!sameSecret(given, token)) {
        return reply
          .code(401)
          .header('WWW-Authenticate', 'Bearer realm="metrics"')
          .type('text/plain; charset=utf-8')
          .send('Unauthorized\n');
      }
    }
    const { contentType, body } = await ctx.metrics.scrape();
    return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
  });
}
