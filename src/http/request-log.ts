// The request log: one line per answered request at `info` ([log] LEVEL), written when the answer
// is sent, as Forgejo's router logs "completed GET /path ... 200 OK in 1.2ms". Fastify's own
// request logging writes two lines per request (one on arrival, one on completion) through a
// logger made for each request, which cost a third of the throughput of a small API read at the
// default level; failures are logged by the error handler, which names the request itself.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export function logRequests(app: FastifyInstance, log: Logger): void {
  if (!log.isLevelEnabled('info')) return;
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    log.info(
      { method: request.method, url: request.url, status, ms, ip: request.ip },
      `completed ${request.method} ${request.url} ${status} in ${ms} ms`,
    );
  });
}

/**
 * Logs an unexpected failure of `request` at `error`, naming the request (its id, method and url):
 * request.log is the server's logger, not one bound to the request.
 */
export function logFailure(request: FastifyRequest, err: unknown, msg: string): void {
  request.log.error({ err, reqId: request.id, method: request.method, url: request.url }, msg);
}
