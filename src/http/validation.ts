// Request validation: JSON bodies are checked strictly (a number is not a string, "false" is not a
// boolean: Forgejo answers 422 to both), while query strings and path parameters, which are text,
// are converted to the schema's types.
//
// Every schema is hardened while it compiles (`harden`), so no route has to remember it: an integer
// without bounds of its own gets the JavaScript safe range (±9007199254740991, below int64's
// ±9223372036854775807, which a JS number cannot hold exactly: a larger one would reach the database
// rounded, or as 1e+300 on SQLite and an error on PostgreSQL), and every string refuses NUL bytes
// (PostgreSQL cannot store them). Forgejo's API declares its integers int64 (page and limit, Go
// `int`, are already capped at int32 by `PageFields`). Both failures answer 422 naming the field.
//
// Validators and serializers are compiled when a route first uses them, not at start-up: Anvil
// has hundreds of routes and most processes serve a few of them, so compiling them all up front
// costs start-up time and memory for nothing. `compileAll()` forces every pending one (tests use
// it to prove every schema compiles).
import querystring from 'node:querystring';
import ajvModule, { type Ajv, type Options, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import fastJsonModule from 'fast-json-stringify';

// Ajv, ajv-formats and fast-json-stringify are the copies Fastify itself loads at start-up (its
// default compilers import them; the bundle holds one copy of each), so importing them here costs
// nothing more. Loading them from node_modules on the first request instead loaded a second copy
// of each, which the first request waited for.
const { Ajv: AjvClass } = ajvModule as unknown as typeof import('ajv');
const addFormats = formatsModule as unknown as (ajv: Ajv) => Ajv;
const fastJson = fastJsonModule as unknown as typeof import('fast-json-stringify').default;

function make(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new AjvClass({
    coerceTypes,
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    strict: false,
    // Checking each schema against JSON Schema's meta-schema compiles that meta-schema first (about
    // 60 ms of the first validating request in every process); `schemaErrors()` runs the check
    // for every compiled schema in the tests instead.
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: NO_NUL,
    type: 'string',
    schemaType: 'boolean',
    errors: false,
    validate: (on: boolean, data: string) => !on || !data.includes('\0'),
  });
  return ajv;
}

/** The keyword `harden` adds to string schemas: no NUL byte. */
export const NO_NUL = 'x-no-nul';
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

function isType(schema: Record<string, unknown>, type: string): boolean {
  const t = schema['type'];
  return t === type || (Array.isArray(t) && t.includes(type));
}

/**
 * A copy of `schema` where every integer has bounds within the safe range and every string refuses
 * NUL bytes, at any depth (properties, items, unions, ...). Runs once per schema, at compile time.
 */
export function harden(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(harden);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    // `const`, `enum`, `default` and `examples` are values, not schemas.
    out[k] = k === 'const' || k === 'enum' || k === 'default' || k === 'examples' ? v : harden(v);
  }
  if (isType(out, 'integer') || isType(out, 'number')) {
    const max = out['maximum'];
    const min = out['minimum'];
    if (typeof max !== 'number' || max > SAFE_MAX) out['maximum'] = SAFE_MAX;
    if (typeof min !== 'number' || min < -SAFE_MAX) out['minimum'] = -SAFE_MAX;
  }
  if (isType(out, 'string') && !('enum' in out) && !('const' in out)) out[NO_NUL] = true;
  return out;
}

/** Every distinct schema compiled into a validator (hardened), for `schemaErrors()`. */
const validatorSchemas = new Map<string, object>();

/**
 * What is wrong with the schemas compiled into validators so far, as JSON Schema (Ajv's check
 * against the meta-schema, which the validators skip): one line per invalid schema.
 */
export function schemaErrors(): string[] {
  const ajv = new AjvClass({ strict: false });
  ajv.addKeyword({ keyword: NO_NUL, type: 'string', schemaType: 'boolean' });
  const errors: string[] = [];
  for (const [key, schema] of validatorSchemas) {
    if (!ajv.validateSchema(schema)) errors.push(`${key.slice(0, 200)}: ${ajv.errorsText()}`);
  }
  return errors;
}

/** Compilations not yet run, so that `compileAll()` can run them. */
const pending = new Set<() => unknown>();

/** Compiles every validator and serializer that no request has needed yet. */
export function compileAll(): void {
  for (const force of [...pending]) force();
}

/** A function that compiles itself (through `compile`) on its first call. */
function lazily<F extends (...args: never[]) => unknown>(compile: () => F): { get: () => F } {
  let fn: F | undefined;
  const get = () => {
    if (!fn) {
      fn = compile();
      pending.delete(get);
    }
    return fn;
  };
  pending.add(get);
  return { get };
}

/**
 * Many routes share the same schemas (owner/repo parameters, page queries, ...): each distinct
 * schema is compiled once.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  let ajvs: { body: Ajv; text: Ajv } | undefined;
  const cache = new Map<string, ValidateFunction>();
  return ({ schema, httpPart }) => {
    const body = httpPart === 'body';
    const compiled = lazily(() => {
      const key = `${body ? 'b' : 't'}:${JSON.stringify(schema)}`;
      let fn = cache.get(key);
      if (!fn) {
        ajvs ??= { body: make(false), text: make('array') };
        const hardened = harden(schema) as object;
        fn = (body ? ajvs.body : ajvs.text).compile(hardened);
        cache.set(key, fn);
        validatorSchemas.set(key, hardened);
      }
      return fn;
    });
    // Fastify reads `errors` off the function it was given after a failed call.
    const validate = ((data: unknown) => {
      const fn = compiled.get();
      const ok = fn(data);
      validate.errors = fn.errors;
      return ok;
    }) as ValidateFunction;
    validate.errors = null;
    return validate;
  };
}

/** Response serializers, compiled once per distinct schema (fast-json-stringify, as Fastify's default). */
export function serializerCompiler(): (route: { schema: unknown }) => (data: unknown) => string {
  const cache = new Map<string, (data: unknown) => string>();
  return ({ schema }) => {
    const compiled = lazily(() => {
      const key = JSON.stringify(schema);
      let fn = cache.get(key);
      if (!fn) {
        fn = fastJson(schema as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
        cache.set(key, fn);
      }
      return fn;
    });
    return (data) => compiled.get()(data);
  };
}

/**
 * The query-string parser (Fastify's `querystringParser`): an empty value (`?page=&state=`) is
 * left out, so it reads as absent, as Forgejo treats it, rather than failing the schema.
 */
export function parseQuery(text: string): Record<string, string | string[]> {
  const query = querystring.parse(text) as Record<string, string | string[]>;
  for (const key in query) {
    const v = query[key];
    if (v === '') delete query[key];
    else if (Array.isArray(v) && v.includes('')) {
      const kept = v.filter((x) => x !== '');
      if (kept.length) query[key] = kept.length === 1 ? (kept[0] as string) : kept;
      else delete query[key];
    }
  }
  return query;
}
