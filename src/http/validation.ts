// Request validation: JSON bodies are checked strictly (a number is not a string, "false" is not a
// boolean: Forgejo answers 422 to both), while query strings and path parameters, which are text,
// are converted to the schema's types.
//
// Validators and serializers are compiled when a route first uses them, not at start-up: Anvil
// has hundreds of routes and most processes serve a few of them, so compiling them all up front
// costs start-up time and memory for nothing. `compileAll()` forces every pending one (tests use
// it to prove every schema compiles).
import { createRequire } from 'node:module';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type fastJsonType from 'fast-json-stringify';

// Ajv, ajv-formats and fast-json-stringify are CommonJS and only needed once a first request
// comes: they are loaded then (synchronously), which keeps them out of start-up.
const require = createRequire(import.meta.url);

function make(coerceTypes: Options['coerceTypes']): Ajv {
  const { Ajv } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
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
        fn = (body ? ajvs.body : ajvs.text).compile(schema);
        cache.set(key, fn);
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
        const fastJson = require('fast-json-stringify') as typeof fastJsonType;
        fn = fastJson(schema as Parameters<typeof fastJsonType>[0]) as (data: unknown) => string;
        cache.set(key, fn);
      }
      return fn;
    });
    return (data) => compiled.get()(data);
  };
}
