// HTTP routes for issue dependencies: what an issue depends on (/dependencies) and what it blocks
// (/blocks), listed, added and removed. The other issue (IssueMeta in the body) may be in any
// repository the caller reads; the rules live in DependencyService.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, type PagingSettings } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { IssuePresenter } from './present.js';
import type { IssueService } from './service.js';
import type { DependencyService, DependencySide } from './dependencies.js';
import { issueTargets } from './targets.js';
import { Issue, PageQuery, IndexParams } from './schemas.js';
import { IssueMeta, type IssueMetaBody } from './tracking-schemas.js';

export interface DependenciesRoutesDeps {
  repos: RepoService;
  issues: IssueService;
  dependencies: DependencyService;
  present: IssuePresenter;
  paging: PagingSettings;
}

export function dependenciesRoutes(app: Api, deps: DependenciesRoutesDeps): void {
  const { dependencies, present, paging } = deps;
  const { issueOf } = issueTargets(deps);
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  const texts: Record<DependencySide, { list: string; add: string; remove: string }> = {
    dependencies: {
      list: "List an issue's dependencies, i.e all issues that block this issue.",
      add: 'Make the issue in the url depend on the issue in the form.',
      remove: 'Remove an issue dependency',
    },
    blocks: {
      list: 'List issues that are blocked by this issue',
      add: 'Block the issue given in the body by the issue in path',
      remove: 'Unblock the issue given in the body by the issue in path',
    },
  };

  for (const side of ['dependencies', 'blocks'] as const) {
    const url = `/repos/:owner/:repo/issues/:index/${side}`;
    const who =
      side === 'dependencies'
        ? 'Writers of the issue in the url'
        : 'Writers of the repository of the issue in the body';

    app.get(
      url,
      {
        schema: {
          tags,
          summary: texts[side].list,
          description: 'Issues of repositories the caller may not read are left out.',
          params: IndexParams,
          querystring: PageQuery,
          response: { 200: Type.Array(Issue) },
        },
        config: { auth: read },
      },
      async (request) => {
        const { issue } = await issueOf(request);
        const page = pageOf(request.query, paging);
        const { rows, repos } = await dependencies.list(issue, side, request.viewer, page);
        return present.issuesOf(rows, request.viewer, repos);
      },
    );

    const change = async (request: FastifyRequest, add: boolean) => {
      const url = await issueOf(request);
      const other = await dependencies.resolve(url.view, request.body as IssueMetaBody, request.viewer);
      const doer = signedIn(request).user;
      if (add) await dependencies.add(url, other, side, doer);
      else await dependencies.remove(url, other, side, doer);
      const fresh = (await deps.issues.getById(url.issue.id)) ?? url.issue;
      return present.issue(fresh, request.viewer, url.view.repo);
    };

    app.post(
      url,
      {
        schema: {
          tags,
          summary: texts[side].add,
          description:
            `${who} only (403). Answers with the issue in the url, as Forgejo does. Adding an ` +
            'existing dependency changes nothing; an issue cannot depend on itself nor on an issue ' +
            'that depends on it (422).',
          params: IndexParams,
          body: IssueMeta,
          response: { 201: Issue },
        },
        config: { auth: write },
      },
      async (request, reply) => reply.code(201).send(await change(request, true)),
    );

    app.delete(
      url,
      {
        schema: {
          tags,
          summary: texts[side].remove,
          description: `${who} only (403); 404 when there is no such dependency. Answers with the issue in the url.`,
          params: IndexParams,
          body: IssueMeta,
          response: { 200: Issue },
        },
        config: { auth: write },
      },
      async (request) => change(request, false),
    );
  }
}
