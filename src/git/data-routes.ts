// The git data API under /api/v1/repos/{owner}/{repo}: its parts (branch-routes.ts: branches and
// tags; commit-routes.ts: commits, compare, notes; contents-routes.ts: contents, raw files and
// archives), and here refs, trees, blobs and annotated tags. HTTP only: the rules are in
// data-service.ts (reading), data-refs.ts and data-files.ts (writing), git in data.ts and beside it.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { PagingSettings } from '../http/pagination.js';
import { branchRoutes } from './branch-routes.js';
import { commitRoutes } from './commit-routes.js';
import { contentsRoutes } from './contents-routes.js';
import type { GitDataService, Target } from './data-service.js';
import type { GitRefService } from './data-refs.js';
import type { GitFileService } from './data-files.js';
import { Params, ShaParams, WildParams, base, opener, read, schema } from './data-route-kit.js';
import {
  AnnotatedTag,
  GitBlobResponse,
  GitTreeResponse,
  Reference,
  toAnnotatedTagJson,
  toGitEntryJson,
  toReferenceJson,
} from './data-schemas.js';

export interface GitDataRoutesDeps {
  gitData: GitDataService;
  gitRefs: GitRefService;
  gitFiles: GitFileService;
  paging: PagingSettings;
  rootUrl: string;
}

export function gitDataRoutes(app: Api, deps: GitDataRoutesDeps): void {
  branchRoutes(app, deps);
  commitRoutes(app, deps);
  contentsRoutes(app, deps);

  const svc = deps.gitData;
  const open = opener(svc);

  // Refs, trees, blobs, annotated tags

  const refsHandler = async (request: FastifyRequest) => {
    const t = await open(request);
    const filter = (request.params as Record<string, string>)['*'];
    const { refs, exact } = await svc.refs(t, filter || undefined);
    const links = await svc.linksFor(t, []);
    const json = refs.map((r) => toReferenceJson(r, links));
    return exact ? json[0] : json;
  };
  const refsResponse = { 200: Type.Union([Reference, Type.Array(Reference)]) };

  app.get(
    `${base}/git/refs`,
    {
      schema: schema('Get specified ref or filtered repository refs', {
        params: Params,
        response: refsResponse,
      }),
      config: { auth: read },
    },
    refsHandler,
  );

  app.get(
    `${base}/git/refs/*`,
    {
      schema: schema('Get specified ref or filtered repository refs', {
        description:
          'Refs whose name starts with refs/{ref}; a single object when one ref has exactly that name.',
        params: WildParams('part or full name of the ref'),
        response: refsResponse,
      }),
      config: { auth: read },
    },
    refsHandler,
  );

  app.get(
    `${base}/git/trees/:sha`,
    {
      schema: schema('Gets the tree of a repository.', {
        params: ShaParams,
        querystring: Type.Object({
          recursive: Type.Optional(Type.Boolean({ description: 'show all directories and files' })),
          page: Type.Optional(Type.Integer({ description: 'page number; the first page is 1' })),
          per_page: Type.Optional(Type.Integer({ description: 'number of items per page (at most 1000)' })),
        }),
        response: { 200: GitTreeResponse },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t: Target = await open(request);
      const q = request.query;
      const tree = await svc.tree(t, request.params.sha, {
        recursive: q.recursive ?? false,
        page: q.page ?? 1,
        perPage: q.per_page ?? 0,
      });
      const links = await svc.linksFor(t, []);
      return {
        sha: tree.sha,
        url: `${links.api}/git/trees/${tree.sha}`,
        tree: tree.entries.map((e) => toGitEntryJson(e, links)),
        truncated: tree.truncated,
        page: tree.page,
        total_count: tree.total,
      };
    },
  );

  app.get(
    `${base}/git/blobs/:sha`,
    {
      schema: schema('Gets the blob of a repository.', {
        params: ShaParams,
        response: { 200: GitBlobResponse },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const b = await svc.blob(t, request.params.sha);
      return {
        content: b.content ? b.content.toString('base64') : null,
        encoding: 'base64',
        url: `${t.links.api}/git/blobs/${b.oid}`,
        sha: b.oid,
        size: b.size,
      };
    },
  );

  app.get(
    `${base}/git/tags/:sha`,
    {
      schema: schema('Gets the tag object of an annotated tag (not lightweight tags)', {
        params: ShaParams,
        response: { 200: AnnotatedTag },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      return toAnnotatedTagJson(await svc.annotatedTag(t, request.params.sha), await svc.linksFor(t, []));
    },
  );
}
