// The OpenAPI document (/swagger.v1.json, `app.swagger()`) and its browsable page (/api/swagger),
// made by @fastify/swagger and @fastify/swagger-ui when first asked for, not at start-up: loading
// them (and the YAML library, @fastify/static and the schema resolver they bring) was a sixth of
// a server's start-up for pages few processes ever serve.
//
// - The routes are recorded as they are added (what @fastify/swagger's own onRoute hook keeps); the
//   first `app.swagger()` hands them to the plugin function, run on a stand-in for the instance
//   (it adds hooks and decorates, nothing else), so the document is the one the plugin makes.
// - /api/swagger and below are answered by an instance of their own that @fastify/swagger-ui is
//   registered on at the first such request; the answer is passed on as it is, a 404 as Anvil's.
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';

// CommonJS, loaded (synchronously: `app.swagger()` is) when first needed.
const require = createRequire(import.meta.url);

type Hook = (...args: unknown[]) => unknown;
type Document = ReturnType<FastifyInstance['swagger']>;

/** What @fastify/swagger would make from `routes`, with `options`. */
function makeDocument(
  options: SwaggerOptions,
  routes: readonly RouteOptions[],
  schemas: Record<string, unknown>,
): (opts?: { yaml?: boolean }) => Document {
  const { fastifySwagger } = require('@fastify/swagger') as typeof import('@fastify/swagger');
  const hooks: Record<string, Hook[]> = {};
  let swagger: ((opts?: { yaml?: boolean }) => Document) | undefined;
  const standIn = {
    addHook(name: string, fn: Hook) {
      (hooks[name] ??= []).push(fn);
    },
    decorate(_name: string, fn: typeof swagger) {
      swagger = fn;
    },
    getSchemas: () => schemas,
  };
  let failed: unknown;
  (fastifySwagger as unknown as (f: unknown, o: unknown, done: (err?: unknown) => void) => void)(
    standIn,
    { ...options },
    (err) => (failed = err),
  );
  if (failed) throw failed;
  for (const route of routes) for (const hook of hooks['onRoute'] ?? []) hook(route);
  for (const hook of hooks['onReady'] ?? [])
    hook((err?: unknown) => {
      if (err) throw err;
    });
  if (!swagger) throw new Error('@fastify/swagger decorated nothing');
  return swagger;
}

/** Serves the OpenAPI document of `app`'s routes as `app.swagger()` and its page under `uiPrefix`. */
export function registerOpenApi(app: FastifyInstance, options: SwaggerOptions, uiPrefix: string): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  let document: ((opts?: { yaml?: boolean }) => Document) | undefined;
  const swagger = (opts?: { yaml?: boolean }) => {
    document ??= makeDocument(options, routes, app.getSchemas());
    return document(opts);
  };
  app.decorate('swagger', swagger as FastifyInstance['swagger']);

  let ui: Promise<FastifyInstance> | undefined;
  const startUi = async () => {
    const { fastifySwagger } = require('@fastify/swagger') as typeof import('@fastify/swagger');
    const { fastifySwaggerUi } = require('@fastify/swagger-ui') as typeof import('@fastify/swagger-ui');
    const instance = Fastify();
    // The UI requires @fastify/swagger registered; the document it shows is `app`'s.
    await instance.register(fastifySwagger, { decorator: 'innerSwagger' });
    instance.decorate('swagger', swagger as FastifyInstance['swagger']);
    await instance.register(fastifySwaggerUi, { routePrefix: uiPrefix });
    await instance.ready();
    return instance;
  };
  const page = async (
    request: Parameters<RouteOptions['handler']>[0],
    reply: Parameters<RouteOptions['handler']>[1],
  ) => {
    ui ??= startUi().catch((err: unknown) => {
      ui = undefined;
      throw err;
    });
    const res = await (
      await ui
    ).inject({
      // A HEAD is answered as its GET; Fastify leaves the body out and keeps its length.
      method: 'GET',
      url: request.url,
      headers: request.headers,
    });
    if (res.statusCode === 404) return reply.callNotFound();
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
    reply.code(res.statusCode);
    // An empty answer (a redirect) gets no content-type, as before.
    return res.rawPayload.length === 0 && !res.headers['content-type']
      ? reply.send()
      : reply.send(res.rawPayload);
  };
  // The paths @fastify/swagger-ui serves (its page, the document, and its files under /static).
  for (const path of ['', '/', '/json', '/yaml', '/static/*'])
    app.get(`${uiPrefix}${path}`, { schema: { hide: true } }, page);
}

/** Headers of the inner answer that belong to its own connection, or that Fastify sets again. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);
