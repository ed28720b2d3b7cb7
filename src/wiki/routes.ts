// The wiki API under /repos/{owner}/{repo}/wiki, as Forgejo's: pages are named by their web path
// (the raw URL segment, see names.ts). Reading follows read access to the wiki unit; writing needs
// write access to it (403), and everything is 404 when the wiki is turned off (has_wiki false).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { declares } from '../quota/schemas.js';
import { badRequest } from '../errors.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { WikiService } from './service.js';
import {
  CreateWikiPageOptions,
  WikiCommitList,
  WikiPage,
  WikiPageMetaData,
  decodeBase64,
  toWikiCommitJson,
  toWikiMetaJson,
  toWikiPageJson,
} from './schemas.js';

const RepoParams = Type.Object({
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
});
const PageParams = Type.Object({
  ...RepoParams.properties,
  pageName: Type.String({ description: 'name of the page' }),
});

/** The page name as the request spelled it (still escaped), as Forgejo's PathParamRaw. */
function rawPageName(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const pathOnly = url.split('?')[0]!;
  return pathOnly.slice(pathOnly.lastIndexOf('/') + 1);
}

export interface WikiRoutesDeps {
  wiki: WikiService;
  users: Pick<UserService, 'getById'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function wikiRoutes(app: Api, deps: WikiRoutesDeps): void {
  const { wiki, users, paging, rootUrl } = deps;
  const tags = ['repository'];
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };

  async function fullNameOf(repo: RepoRow): Promise<string> {
    const owner = await users.getById(repo.owner_id);
    return `${encodeURIComponent(owner!.name)}/${encodeURIComponent(repo.name)}`;
  }

  /** The body's content and message; 400 naming the field when the content is not base64. */
  function bodyOf(b: { content_base64?: string | undefined; message?: string | undefined; title?: string }) {
    const content = decodeBase64(b.content_base64 ?? '');
    if (!content) throw badRequest('[ContentBase64]: invalid base64 encoding of content');
    return { title: b.title, content, message: b.message };
  }

  const pageJson = async (repo: RepoRow, name: string) =>
    toWikiPageJson(await wiki.page(repo, name), rootUrl, await fullNameOf(repo));

  app.post(
    '/repos/:owner/:repo/wiki/new',
    {
      schema: {
        tags,
        summary: 'Create a wiki page',
        description:
          'The title is required (400 when empty), the content base64 (400 when not). The first page creates the wiki.',
        params: RepoParams,
        body: CreateWikiPageOptions,
        response: { 201: WikiPage, ...declares(400, 403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await wiki.requireWiki(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'write',
      );
      const web = await wiki.create(signedIn(request).user, repo, bodyOf(request.body));
      return reply.code(201).send(await pageJson(repo, web));
    },
  );

  app.get(
    '/repos/:owner/:repo/wiki/page/:pageName',
    {
      schema: {
        tags,
        summary: 'Get a wiki page',
        params: PageParams,
        response: { 200: WikiPage, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await wiki.requireWiki(request.params.owner, request.params.repo, request.viewer);
      return pageJson(repo, rawPageName(request));
    },
  );

  app.patch(
    '/repos/:owner/:repo/wiki/page/:pageName',
    {
      schema: {
        tags,
        summary: 'Edit a wiki page',
        description: 'A title renames the page; without one it keeps its name. A missing page is created.',
        params: PageParams,
        body: CreateWikiPageOptions,
        response: { 200: WikiPage, ...declares(400, 403, 404) },
      },
      config: { auth: write },
    },
    async (request) => {
      const { repo } = await wiki.requireWiki(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'write',
      );
      const web = await wiki.edit(signedIn(request).user, repo, rawPageName(request), bodyOf(request.body));
      return pageJson(repo, web);
    },
  );

  app.delete(
    '/repos/:owner/:repo/wiki/page/:pageName',
    {
      schema: {
        tags,
        summary: 'Delete a wiki page',
        params: PageParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await wiki.requireWiki(
        request.params.owner,
        request.params.repo,
        request.viewer,
        'write',
      );
      await wiki.remove(signedIn(request).user, repo, rawPageName(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/wiki/pages',
    {
      schema: {
        tags,
        summary: 'Get all wiki pages',
        description:
          'The Markdown files at the top of the wiki, in file name order, with their last commits.',
        params: RepoParams,
        querystring: Type.Object({
          page: Type.Optional(Type.Integer({ description: 'page number of results to return (1-based)' })),
          limit: Type.Optional(Type.Integer({ description: 'page size of results' })),
        }),
        response: { 200: Type.Array(WikiPageMetaData), ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await wiki.requireWiki(request.params.owner, request.params.repo, request.viewer);
      const page = pageOf(request.query, paging);
      const [rows, total] = await wiki.pages(repo, page.limit, page.offset);
      setPageHeaders(request, reply, total, page, rootUrl);
      const fullName = await fullNameOf(repo);
      return rows.map((p) => toWikiMetaJson(p, rootUrl, fullName));
    },
  );

  app.get(
    '/repos/:owner/:repo/wiki/revisions/:pageName',
    {
      schema: {
        tags,
        summary: 'Get revisions of a wiki page',
        description: 'Newest first, 50 a page.',
        params: PageParams,
        querystring: Type.Object({
          page: Type.Optional(Type.Integer({ description: 'page number of results to return (1-based)' })),
        }),
        response: { 200: WikiCommitList, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await wiki.requireWiki(request.params.owner, request.params.repo, request.viewer);
      const [commits, count] = await wiki.revisions(repo, rawPageName(request), request.query.page ?? 1);
      reply.header('X-Total-Count', String(count));
      return { commits: commits.map(toWikiCommitJson), count };
    },
  );
}
