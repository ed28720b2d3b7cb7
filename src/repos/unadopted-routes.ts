// Unadopted repositories (site administrators): GET /admin/unadopted, POST (adopt) and DELETE
// /admin/unadopted/{owner}/{repo}. See unadopted.ts.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { UnadoptedService } from './unadopted.js';

export interface UnadoptedRoutesDeps {
  unadopted: UnadoptedService;
  paging: PagingSettings;
  rootUrl: string;
}

export function unadoptedRoutes(app: Api, deps: UnadoptedRoutesDeps): void {
  const { unadopted, paging, rootUrl } = deps;
  const tags = ['admin'];
  const auth = { auth: { scope: 'admin', admin: true } } as const;

  app.get(
    '/admin/unadopted',
    {
      schema: {
        tags,
        summary: 'List unadopted repositories',
        description:
          'Bare repositories found as `<owner>/<name>.git` under the repositories root (owner an ' +
          'existing account) that no repository refers to, as `owner/name`. pattern: globs over ' +
          '`owner/name`, or one glob over either.',
        querystring: Type.Object({ ...PageFields, pattern: Type.Optional(Type.String()) }),
        response: { 200: Type.Array(Type.String()) },
      },
      config: auth,
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await unadopted.list(request.query.pattern ?? '', page.limit, page.offset);
      return sendPage(request, reply, result, page, rootUrl, (r) => r);
    },
  );

  app.post(
    '/admin/unadopted/:owner/:repo',
    {
      schema: {
        tags,
        summary: 'Adopt unadopted files as a repository',
        description:
          'Makes a (private) repository of it for its owner: 404 when the owner or the directory does ' +
          'not exist, 409 when the owner has a repository of that name, 422 for invalid names.',
        params: RepoParams,
        response: { 204: Type.Null() },
      },
      config: auth,
    },
    async (request, reply) => {
      await unadopted.adopt(signedIn(request).user, request.params.owner, request.params.repo);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/admin/unadopted/:owner/:repo',
    {
      schema: {
        tags,
        summary: 'Delete unadopted files',
        description: '404 when the owner or the directory does not exist, 422 for invalid names.',
        params: RepoParams,
        response: { 204: Type.Null() },
      },
      config: auth,
    },
    async (request, reply) => {
      await unadopted.delete(request.params.owner, request.params.repo);
      return reply.code(204).send(null);
    },
  );
}
