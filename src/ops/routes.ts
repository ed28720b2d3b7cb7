// GET /api/healthz (Forgejo's health answer: 200 when every check passes, 424 when one fails) and
// GET /metrics (Prometheus text format, only while [metrics] ENABLED; with [metrics] TOKEN set it
// asks for `Authorization: Bearer <TOKEN>`). Every answered request is counted for the metrics by
// route pattern, so that label stays bounded whatever the URLs.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';
import type { OpsService } from './service.js';

function sameSecret(given: string, wanted: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(wanted).digest();
  return crypto.timingSafeEqual(a, b);
}

export interface CountRequestsDeps {
  metrics: Pick<Metrics, 'enabled' | 'request'>;
}

/** Counts every request the server answers (added to the root instance, before any route). */
export function countRequests(app: FastifyInstance, deps: CountRequestsDeps): void {
  const { metrics } = deps;
  if (!metrics.enabled) return;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}

export interface OpsRoutesDeps {
  ops: Pick<OpsService, 'health'>;
  /** /metrics is served while the metrics are enabled ([metrics] ENABLED). */
  metrics: Pick<Metrics, 'enabled' | 'scrape'>;
  /** [metrics] TOKEN: when set, /metrics asks for it as a bearer token. */
  metricsToken: string;
}

export function opsRoutes(app: FastifyInstance, deps: OpsRoutesDeps): void {
  const { ops, metrics } = deps;
  app.get('/api/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const health = await ops.health();
    return reply
      .code(health.status === 'fail' ? 424 : 200)
      .header('Cache-Control', 'no-store')
      .type('application/health+json')
      .send(JSON.stringify(health, null, 2));
  });

  if (!metrics.enabled) return;
  const token = deps.metricsToken;
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
    const { contentType, body } = await metrics.scrape();
    return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
  });
}
