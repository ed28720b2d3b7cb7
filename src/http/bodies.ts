// How the API reads request bodies, for every route at once. Forgejo's clients send writes without
// data in several ways: axios-based ones (gitea-js) an empty body with
// `Content-Type: application/x-www-form-urlencoded`, others an empty body with `application/json`,
// or no Content-Type at all. Forgejo answers all of them as if no body had been sent, so Anvil does:
// - an empty body is no body, whatever its Content-Type;
// - a route whose body is an object then reads `{}`: its optional fields are absent, and a missing
//   required one is a 422 naming it (the schema's own message), never a 400 or 415;
// - a non-empty form body is read into an object of its fields (a repeated field: a list), as
//   Forgejo's binding reads forms, and validated like JSON (strings for numbers and booleans are
//   converted by the schema's coercion when it has one, else refused with 422 naming the field).
// Routes that read raw bodies (uploads) register parsers of their own in their scopes.
import type { FastifyInstance, FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: unknown) => void;

/** A form body as an object: each field a string, a repeated field a list of them. */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of new URLSearchParams(text)) {
    // Never a prototype key: the object is plain data for the validator.
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const had = out[key];
    out[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return { ...out };
}

/** Whether a route's body schema is an object (so an absent body reads as `{}`). */
function isObjectSchema(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const s = schema as Record<string, unknown>;
  if (s['type'] === 'object' || s['properties'] !== undefined) return true;
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[k];
    if (Array.isArray(list) && list.some(isObjectSchema)) return true;
  }
  return false;
}

export function registerBodyParsing(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done: Done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    json(request, body as string, done);
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done: Done) => {
      const text = String(body);
      done(null, text.trim() === '' ? undefined : parseForm(text));
    },
  );
  // Any other type: nothing to read when empty; a body the API cannot read otherwise.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request: FastifyRequest, body, done: Done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    const type = String(request.headers['content-type'] ?? '').split(';')[0];
    done(Object.assign(new Error(`Unsupported Media Type: ${type || 'unknown'}`), { statusCode: 415 }));
  });

  // A body the route declares as an object but that did not come reads as `{}`.
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined && request.body !== null) return;
    if (isObjectSchema(request.routeOptions.schema?.body)) request.body = {};
  });
}

/**
 * The length of a raw request body when the client declared it (Content-Length, not chunked).
 * Node's HTTP parser holds the body to it: a shorter body fails the stream, a longer one is not
 * part of this request.
 */
export function declaredLength(request: FastifyRequest): number | undefined {
  const h = request.headers;
  if (h['transfer-encoding'] !== undefined || h['content-length'] === undefined) return undefined;
  const n = Number(h['content-length']);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
