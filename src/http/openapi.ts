// Finishes the OpenAPI document @fastify/swagger generates from the routes' TypeBox schemas
// (its `transformObject` hook, run once when the document is first asked for):
// - wildcard routes (`/contents/*`) get Forgejo's parameter name (`{filepath}`) instead of `{*}`,
//   and the few paths whose route names a parameter otherwise get Forgejo's name;
// - the errors every operation can answer are declared in one place, in Forgejo's shape: 404
//   where a path names a resource, 422 where there is input to validate (path, query or body),
//   401 and 403 where the operation requires authentication;
// - every operation has an operationId: its route's own, else Forgejo's for the same method and path
//   (forgejo-operations.json, made by scripts/forgejo-operations.js from Forgejo's description),
//   else one made from its method and path (Anvil's own operations).
import forgejoOperations from './forgejo-operations.json' with { type: 'json' };

const FORGEJO_IDS = forgejoOperations as unknown as Record<string, [string, string]>;

/** An operationId for an operation Forgejo does not have: `GET /repos/{owner}/x-y` → `getReposOwnerXY`. */
function madeUpId(method: string, path: string): string {
  const words = path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return method.toLowerCase() + words.join('');
}

/** Forgejo's name for the wildcard that follows each path segment. */
const WILDCARD_NAMES: Record<string, string> = {
  contents: 'filepath',
  raw: 'filepath',
  media: 'filepath',
  editorconfig: 'filepath',
  archive: 'archive',
  refs: 'ref',
  tags: 'tag',
  branch_protections: 'name',
  branches: 'branch',
  compare: 'basehead',
  // /pulls/{base}/{head}
  '{base}': 'head',
  sync_fork: 'branch',
};

/** Paths whose route names a parameter differently from Forgejo's description of the same path. */
const PARAM_RENAMES: Record<string, Record<string, string>> = {
  '/users/{owner}/repos': { owner: 'username' },
  '/orgs/{owner}/repos': { owner: 'org' },
  '/repos/{owner}/{repo}/generate': { owner: 'template_owner', repo: 'template_repo' },
};

type Json = Record<string, unknown>;

/**
 * Operations a route serves beside its own: the route of {path} also answers {path}.diff and
 * {path}.patch (find-my-way cannot route both), described apart as Forgejo does.
 */
const SUFFIXED: ReadonlyArray<{ path: string; param: string; schema: Json; summary: string; query: Json[] }> =
  [
    {
      path: '/repos/{owner}/{repo}/git/commits/{sha}',
      param: 'sha',
      schema: { type: 'string' },
      summary: "Get a commit's diff or patch",
      query: [],
    },
    {
      path: '/repos/{owner}/{repo}/pulls/{index}',
      param: 'index',
      schema: { type: 'integer' },
      summary: 'Get a pull request diff or patch',
      query: [
        {
          name: 'binary',
          in: 'query',
          required: false,
          description: 'whether to include binary file changes (patch only)',
          schema: { type: 'boolean' },
        },
      ],
    },
  ];
interface Operation extends Json {
  parameters?: Json[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
  security?: unknown[];
}

const errorSchema = {
  type: 'object',
  properties: {
    errors: { type: 'array', items: { type: 'string' } },
    message: { type: 'string' },
    url: { type: 'string' },
  },
};
const errorResponses: Record<string, { description: string; content: Json }> = {
  unauthorized: { description: 'authentication is required', content: {} },
  forbidden: { description: 'APIForbiddenError is a forbidden error response', content: {} },
  notFound: { description: 'APINotFound is a not found error response', content: {} },
  validationError: {
    description: 'APIValidationError is error format response related to input validation',
    content: {},
  },
};
for (const r of Object.values(errorResponses)) r.content = { 'application/json': { schema: errorSchema } };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function wildcardName(path: string): string {
  const segments = path.split('/');
  const before = segments[segments.indexOf('{*}') - 1] ?? '';
  return WILDCARD_NAMES[before] ?? 'path';
}

export function transformOpenApi(input: object): Json {
  const doc = ((input as { openapiObject?: Json }).openapiObject ?? {}) as Json;
  const paths = (doc['paths'] ?? {}) as Record<string, Record<string, Operation>>;
  const out: Record<string, Record<string, Operation>> = {};
  // Ids routes declare are theirs; the others are given in path order, never twice.
  const usedIds = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const id = item[method]?.['operationId'];
      if (typeof id === 'string') usedIds.add(id);
    }
  }
  for (const [rawPath, item] of Object.entries(paths)) {
    let path = rawPath;
    if (path.includes('{*}')) {
      const name = wildcardName(path);
      path = path.replace('{*}', `{${name}}`);
      for (const method of METHODS) {
        for (const p of item[method]?.parameters ?? []) {
          if (p['in'] === 'path' && p['name'] === '*') p['name'] = name;
        }
      }
    }
    const renames = PARAM_RENAMES[path];
    if (renames) {
      for (const [from, to] of Object.entries(renames)) {
        path = path.replace(`{${from}}`, `{${to}}`);
        for (const method of METHODS) {
          for (const p of item[method]?.parameters ?? []) {
            if (p['in'] === 'path' && p['name'] === from) p['name'] = to;
          }
        }
      }
    }
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (typeof op['operationId'] !== 'string') {
        // Paths are relative to the server URL (…/api/v1), as Forgejo's are.
        const key = `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}')}`;
        let id = FORGEJO_IDS[key]?.[0] ?? madeUpId(method, path);
        for (let n = 2; usedIds.has(id); n++) id = `${id.replace(/\d+$/, '')}${n}`;
        op['operationId'] = id;
      }
      usedIds.add(op['operationId'] as string);
      const responses = (op.responses ??= {});
      const params = op.parameters ?? [];
      const add = (status: string, ref: string) => {
        responses[status] ??= { $ref: `#/components/responses/${ref}` };
      };
      const authenticated = !Array.isArray(op.security) || op.security.length > 0;
      if (authenticated) {
        add('401', 'unauthorized');
        add('403', 'forbidden');
      }
      if (params.some((p) => p['in'] === 'path')) add('404', 'notFound');
      if (op.requestBody || params.some((p) => p['in'] === 'path' || p['in'] === 'query')) {
        add('422', 'validationError');
      }
    }
    out[path] = { ...out[path], ...item };
  }
  for (const extra of SUFFIXED) {
    const op = out[extra.path]?.['get'];
    if (!op) continue;
    const path = `${extra.path}.{diffType}`;
    const id = FORGEJO_IDS[`GET ${path.replace(/\{[^}]*\}/g, '{}')}`]?.[0] ?? madeUpId('get', path);
    if (usedIds.has(id)) continue;
    usedIds.add(id);
    const parameters: Json[] = (op.parameters ?? [])
      .filter((p) => p['in'] === 'path')
      .map((p) => (p['name'] === extra.param ? { ...p, schema: extra.schema, description: undefined } : p));
    parameters.push({
      name: 'diffType',
      in: 'path',
      required: true,
      description: 'whether the output is diff or patch',
      schema: { type: 'string', enum: ['diff', 'patch'] },
    });
    parameters.push(...extra.query);
    const { description: _, ...rest } = op;
    out[path] = {
      get: {
        ...rest,
        operationId: id,
        summary: extra.summary,
        parameters,
        // The base operation's error answers (its path parameters have already added 404 and 422).
        responses: {
          ...op.responses,
          '200': {
            description: 'the diff or patch',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    };
  }
  const components = (doc['components'] ?? {}) as Json;
  components['responses'] = { ...((components['responses'] as Json | undefined) ?? {}), ...errorResponses };
  return { ...doc, components, paths: out };
}
