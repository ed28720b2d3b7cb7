// Request validation: JSON bodies are checked strictly (a number is not a string, "false" is not a
// boolean: Forgejo answers 422 to both), while query strings and path parameters, which are text,
// are converted to the schema's types.
import { Ajv, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import fastJson from 'fast-json-stringify';

// ajv-formats is CommonJS; its default export is the plugin function.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

function make(coerceTypes: Options['coerceTypes']): Ajv {
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

/**
 * Many routes share the same schemas (owner/repo parameters, page queries, ...): each distinct
 * schema is compiled once, which keeps start-up time and memory down as routes are added.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  const strictBodies = make(false);
  const textParts = make('array');
  const cache = new Map<string, ReturnType<Ajv['compile']>>();
  return ({ schema, httpPart }) => {
    const body = httpPart === 'body';
    const key = `${body ? 'b' : 't'}:${JSON.stringify(schema)}`;
    let fn = cache.get(key);
    if (!fn) {
      fn = (body ? strictBodies : textParts).compile(schema);
      cache.set(key, fn);
    }
    return fn;
  };
}

/** Response serializers, compiled once per distinct schema (fast-json-stringify, as Fastify's default). */
export function serializerCompiler(): (route: { schema: unknown }) => (data: unknown) => string {
  const cache = new Map<string, (data: unknown) => string>();
  return ({ schema }) => {
    const key = JSON.stringify(schema);
    let fn = cache.get(key);
    if (!fn) {
      fn = fastJson(schema as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
      cache.set(key, fn);
    }
    return fn;
  };
}
