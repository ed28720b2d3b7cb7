// HEAD for every GET route, without a second route each. Fastify's `exposeHeadRoutes` registers a
// HEAD twin of every GET route: about 400 more routes, a fifth of the server's start-up CPU and
// some 10 MB of its memory. Instead, a HEAD request for which no route declares HEAD itself
// (registries and downloads that answer HEAD without reading the content) is routed as a GET:
// Node already made its response body-less when it saw HEAD, so the client gets the GET's status
// and headers (Content-Length included) and no body, as HTTP asks. Such a request is logged and
// counted as a GET.
import http from 'node:http';
import FindMyWay from 'find-my-way';
import type { FastifyServerOptions, RouteOptions } from 'fastify';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface HeadAsGet {
  /** Fastify's `serverFactory`: the HTTP server, HEAD requests routed as described above. */
  serverFactory(handler: Handler, options: FastifyServerOptions): http.Server;
  /** For an `onRoute` hook: remembers the routes that declare HEAD. */
  onRoute(route: Pick<RouteOptions, 'method' | 'url'>): void;
}

export function headAsGet(routerOptions: { maxParamLength: number }): HeadAsGet {
  const declared = FindMyWay({ maxParamLength: routerOptions.maxParamLength });
  return {
    onRoute(route) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('HEAD')) declared.on('HEAD', route.url, () => undefined);
    },
    serverFactory(handler, options) {
      const httpOptions = (options as { http?: http.ServerOptions }).http ?? {};
      const server = http.createServer(httpOptions, (req, res) => {
        if (req.method === 'HEAD' && !declared.find('HEAD', req.url ?? '/')) req.method = 'GET';
        handler(req, res);
      });
      // What Fastify sets on a server it makes itself.
      if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
      if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
      if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
      if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
      return server;
    },
  };
}
