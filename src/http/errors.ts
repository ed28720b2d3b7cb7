// Maps every failure to Forgejo's JSON error shape {"message", "url"} with the right status (404s
// and 405s also carry Forgejo's `errors` array), including Fastify's own refusals (bad URL
// encoding, over-long path parameters), a method a path does not have (405 with Allow) and a NUL
// byte in a path parameter or query value that no schema declares.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { AppError, MovedError, fieldLabel, type ErrorKind } from '../errors.js';
import { NO_NUL } from './validation.js';
import { logFailure } from './request-log.js';

export const statusOf: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  gone: 410,
  payload_too_large: 413,
  too_many_requests: 429,
  invalid: 422,
  unavailable: 503,
  moved: 307,
  internal: 500,
};

interface AjvIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** "[Field]: reason" for the first failing field, as Forgejo's binding errors read. */
function validationMessage(issues: AjvIssue[], context: string | undefined): string {
  const issue = issues[0];
  if (!issue) return 'validation failed';
  const segments = (issue.instancePath ?? '').split('/').filter(Boolean);
  let field = segments.filter((s) => !/^\d+$/.test(s)).pop() ?? '';
  let reason = issue.message ?? 'is invalid';
  if (issue.keyword === 'required' && typeof issue.params?.['missingProperty'] === 'string') {
    field = issue.params['missingProperty'];
    reason = 'Required';
  } else if (issue.keyword === 'format') {
    reason = `must be a valid ${String(issue.params?.['format'] ?? 'value')}`;
  } else if (issue.keyword === NO_NUL) {
    reason = 'must not contain NUL bytes';
  } else if (issue.keyword === 'additionalProperties') {
    reason = `unknown field ${String(issue.params?.['additionalProperty'] ?? '')}`;
  }
  const where = context && context !== 'body' ? ` (${context})` : '';
  return field ? `[${fieldLabel(field)}]: ${reason}${where}` : `${reason}${where}`;
}

const send = (
  reply: FastifyReply,
  docsUrl: string,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
) =>
  reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ message, url: docsUrl, ...(status === 404 || status === 405 ? { errors: [] } : {}), ...extra });

/**
 * Fastify's `frameworkErrors` option: a path that is not valid percent-encoding (400) or a path
 * parameter longer than `maxParamLength` (414), in Forgejo's shape rather than Fastify's.
 */
export function frameworkErrors(docsUrl: string) {
  return (err: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, docsUrl, 414, 'URI Too Long');
    if (err.code === 'FST_ERR_BAD_URL') return send(reply, docsUrl, 400, 'invalid URL encoding');
    return send(reply, docsUrl, err.statusCode ?? 500, err.message);
  };
}

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The first path parameter or query value holding a NUL byte, for routes whose schema does not check it. */
function nulField(request: FastifyRequest): string | undefined {
  for (const part of [request.params, request.query]) {
    if (!part || typeof part !== 'object') continue;
    for (const [k, v] of Object.entries(part as Record<string, unknown>)) {
      const values = Array.isArray(v) ? v : [v];
      if (values.some((x) => typeof x === 'string' && x.includes('\0'))) return k === '*' ? 'path' : k;
    }
  }
  return undefined;
}

/** One registered route, as the route table records it. */
export interface RouteEntry {
  method: string;
  url: string;
  schema: Record<string, unknown> | undefined;
}
const tables = new WeakMap<FastifyInstance, RouteEntry[]>();
type PageFallback = (request: FastifyRequest, reply: FastifyReply) => unknown;
const pageFallbacks = new WeakMap<FastifyInstance, PageFallback>();

/** How a browser's request for a path no route has is answered: a page in the site's look. */
export function setNotFoundPage(app: FastifyInstance, fallback: PageFallback): void {
  pageFallbacks.set(app, fallback);
}

/** A browser navigating (not an API client): GET/HEAD asking for HTML, outside /api/. */
function wantsPage(request: FastifyRequest, path: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (path.startsWith('/api/')) return false;
  return String(request.headers.accept ?? '').includes('text/html');
}

/** Every route registered on `app` after `registerErrorHandling` (the generated fuzz test walks it). */
export function routeTable(app: FastifyInstance): readonly RouteEntry[] {
  return tables.get(app) ?? [];
}

export function registerErrorHandling(app: FastifyInstance, docsUrl: string): void {
  const table: RouteEntry[] = [];
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      table.push({ method, url: route.url, schema: route.schema as Record<string, unknown> | undefined });
    }
  });
  const sendError = (
    reply: FastifyReply,
    status: number,
    message: string,
    extra: Record<string, unknown> = {},
  ) => send(reply, docsUrl, status, message, extra);

  // A NUL byte can only arrive in a path or query percent-encoded: requests without `%00` pay one
  // indexOf. Declared strings are refused by their schema too (x-no-nul); this covers the rest
  // (git, LFS, downloads, runner routes, parameters no schema declares).
  app.addHook('preValidation', (request, reply, done) => {
    const url = request.raw.url ?? '';
    if (url.indexOf('%00') < 0) return done();
    const field = nulField(request);
    if (!field) return done();
    void sendError(reply, 422, `[${fieldLabel(field)}]: must not contain NUL bytes`);
  });

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof MovedError) {
      const location = movedTo(request, err);
      if (location) return sendError(reply.header('Location', location), 307, err.message);
      return sendError(reply, 404, "The target couldn't be found.");
    }
    if (err instanceof AppError) {
      return sendError(reply, statusOf[err.kind], err.message, err.extra);
    }
    if (err.validation) {
      return sendError(reply, 422, validationMessage(err.validation as AjvIssue[], err.validationContext));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own refusals: malformed JSON, unsupported media type, body too large, ...
      return sendError(reply, status, err.message);
    }
    logFailure(request, err, 'unexpected failure');
    return sendError(reply, 500, 'Internal Server Error');
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // A path that exists for other methods: 405 with the methods it has, as Forgejo answers.
    const allowed = METHODS.filter((method) => app.findRoute({ method, url: path }));
    if (allowed.length) {
      return sendError(reply.header('Allow', allowed.join(', ')), 405, 'Method Not Allowed', {
        errors: [`${request.method} ${path}`],
      });
    }
    const page = pageFallbacks.get(app);
    if (page && wantsPage(request, path)) return page(request, reply);
    return sendError(reply, 404, "The target couldn't be found.", {
      errors: [`${request.method} ${path}`],
    });
  });
}

/**
 * `url` with the path segments naming `from` (an owner, or an owner and a repository, compared
 * without case; a repository segment may end in `.git`) replaced by `to`, the rest and the query
 * kept; undefined when the path does not name `from`. Only segments that are parameters of the
 * route's `pattern` are candidates, so a user called `repos` is never confused with the word.
 */
export function movedLocation(
  url: string,
  pattern: string | undefined,
  from: readonly string[],
  to: readonly string[],
): string | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  const segments = path.split('/');
  const params = pattern?.split('/').map((p) => p.startsWith(':'));
  const decoded = segments.map((s) => {
    try {
      return decodeURIComponent(s).toLowerCase();
    } catch {
      return s.toLowerCase();
    }
  });
  const want = from.map((s) => s.toLowerCase());
  const last = want.length - 1;
  const git = (k: number) => k === last && k > 0;
  // A git URL's repository segment: the name with .git, or its wiki's (.wiki, .wiki.git).
  const suffixOf = (k: number, seg: string, w: string) =>
    git(k) ? ['.git', '.wiki', '.wiki.git'].find((x) => seg === `${w}${x}`) : undefined;
  for (let i = 0; i + want.length <= segments.length; i++) {
    const matches = want.every(
      (w, k) =>
        (!params || params[i + k] === true) &&
        (decoded[i + k] === w || suffixOf(k, decoded[i + k]!, w) !== undefined),
    );
    if (!matches) continue;
    const out = segments.slice();
    to.forEach((t, k) => {
      out[i + k] = encodeURIComponent(t) + (suffixOf(k, decoded[i + k]!, want[k]!) ?? '');
    });
    return out.join('/') + query;
  }
  return undefined;
}

/** Where a MovedError sends this request (the same URL under the new names), if its path names them. */
export function movedTo(request: FastifyRequest, err: MovedError): string | undefined {
  return movedLocation(request.url, request.routeOptions.url, err.from, err.to);
}
