// HTTP routes for issue dependencies: what an issue depends on (/dependencies) and what it blocks
// (/blocks), listed, added and removed. The other issue (IssueMeta in the body) may be in any
// repository the caller reads; the rules live in DependencyService.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.js';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf } from '../http/pagination.js';
import { IssuePresenter } from './present.js';
import { Issue, PageQuery, IndexParams } from './schemas.js';
import { IssueMeta, type IssueMetaBody } from './tracking-schemas.js';
import type { DependencySide, IssueInView } from './dependencies.js';

export function dependenciesRoutes(app: Api, ctx: AppContext): void {
  const present = new IssuePresenter(ctx);
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  /** The issue of the URL as the caller sees it: 404 when they may not read it. */
  async function issueOf(request: FastifyRequest): Promise<IssueInView> {
    const { owner, repo, index } = request.params as { owner: string; repo: string; index: number };
    const view = await ctx.repos.requireRepo(owner, repo, request.viewer, 'read', 'repo.issues');
    return { view, issue: await ctx.issues.requireVisibleIssue(view, index) };
  }

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
        const page = pageOf(request.query, ctx.paging);
        const { rows, repos } = await ctx.dependencies.list(issue, side, request.viewer, page);
        return present.issuesOf(rows, request.viewer, repos);
      },
    );

    const change = async (request: FastifyRequest, add: boolean) => {
      const url = await issueOf(request);
      const other = await ctx.dependencies.resolve(url.view, request.body as IssueMetaBody, request.viewer);
      const doer = signedIn(request).user;
      if (add) await ctx.dependencies.add(url, other, side, doer);
      else await ctx.dependencies.remove(url, other, side, doer);
      const fresh = (await ctx.issues.getById(url.issue.id)) ?? url.issue;
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
