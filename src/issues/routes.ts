// HTTP routes for issues: lists and the search across repositories, creation, reading, editing
// and deletion, and subscriptions. Reading follows the repository's visibility (404 for what the
// caller may not see); writing needs a signed-in caller; the rules on who may change what live in
// IssueService. Labels, due dates, locks and pins are in triage-routes.ts, comments, the timeline
// and reactions in comment-routes.ts.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { notFound } from '../errors.js';
import type { UserService } from '../users/service.js';
import type { RepoService } from '../repos/service.js';
import { User, toUserJson } from '../users/schemas.js';
import type { IssuePresenter } from './present.js';
import type { IssueService } from './service.js';
import type { IssueListService } from './lists.js';
import { endOfDay, parseTime } from './input.js';
import { issueTargets } from './targets.js';
import {
  CreateIssueOption,
  EditIssueOption,
  Issue,
  IssueListQuery,
  IssueSearchQuery,
  NoContent,
  PageQuery,
  WatchInfo,
  IndexParams,
} from './schemas.js';
import { isoTime } from '../http/format.js';
import { RepoParams } from '../http/params.js';

export interface IssuesRoutesDeps {
  repos: RepoService;
  users: Pick<UserService, 'getById'>;
  issues: IssueService;
  issueLists: IssueListService;
  present: IssuePresenter;
  paging: PagingSettings;
  rootUrl: string;
}

export function issuesRoutes(app: Api, deps: IssuesRoutesDeps): void {
  const { issues, issueLists, users, present, paging, rootUrl } = deps;
  const { repoView, issueOf } = issueTargets(deps);
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  // Lists

  app.get(
    '/repos/issues/search',
    {
      schema: {
        tags,
        summary: 'Search for issues across the repositories that the user has access to',
        description:
          'Every repository the caller may read, or those of `owner` (and of its `team`): 400 for an ' +
          'unknown owner or team. labels and milestones: names, any of them.',
        querystring: IssueSearchQuery,
        response: { 200: Type.Array(Issue) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const q = request.query;
      const page = pageOf(q, paging);
      const {
        rows,
        total,
        repos: involved,
      } = await issueLists.search(
        request.viewer,
        {
          state: q.state,
          labels: q.labels,
          milestones: q.milestones,
          q: q.q,
          type: q.type,
          since: q.since,
          before: q.before,
          createdBy: q.created_by,
          assignedBy: q.assigned_by,
          mentionedBy: q.mentioned_by,
          owner: q.owner,
          team: q.team,
          priorityRepoId: q.priority_repo_id,
          assigned: q.assigned,
          created: q.created,
          mentioned: q.mentioned,
          reviewRequested: q.review_requested,
          reviewed: q.reviewed,
        },
        page,
      );
      const json = await present.issues(rows, request.viewer, involved.values());
      return sendPage(request, reply, [json, total], page, rootUrl, (j) => j);
    },
  );

  app.get(
    '/repos/:owner/:repo/issues',
    {
      schema: {
        tags,
        summary: "List a repository's issues",
        description:
          'labels: names (or ids) the issues must all have; milestones: titles or ids, any of them; ' +
          'created_by, assigned_by, mentioned_by: user names (404 when unknown); since and before: RFC 3339.',
        params: RepoParams,
        querystring: IssueListQuery,
        response: { 200: Type.Array(Issue) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repoView(request);
      const q = request.query;
      const page = pageOf(q, paging);
      const result = await issueLists.list(
        repo,
        {
          state: q.state,
          labels: q.labels,
          milestones: q.milestones,
          q: q.q,
          type: q.type,
          since: q.since,
          before: q.before,
          createdBy: q.created_by,
          assignedBy: q.assigned_by,
          mentionedBy: q.mentioned_by,
          sort: q.sort,
        },
        page,
      );
      const json = await present.issues(result[0], request.viewer, [repo]);
      return sendPage(request, reply, [json, result[1]], page, rootUrl, (j) => j);
    },
  );

  // One issue

  app.post(
    '/repos/:owner/:repo/issues',
    {
      schema: {
        tags,
        summary:
          'Create an issue. If using deadline only the date will be taken into account, and time of day ignored.',
        description:
          'Needs read access. Labels, milestone, assignees and due date are applied for writers only ' +
          '(as in Forgejo); an unknown label, milestone or assignee is a 422.',
        params: RepoParams,
        body: CreateIssueOption,
        response: { 201: Issue },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const view = await repoView(request);
      const b = request.body;
      const issue = await issues.create(view, signedIn(request).user, {
        title: b.title,
        body: b.body,
        ref: b.ref,
        assignee: b.assignee,
        assignees: b.assignees,
        milestone: b.milestone,
        labels: b.labels,
        closed: b.closed,
        dueDate: b.due_date === undefined ? undefined : parseTime(b.due_date, 'due_date'),
      });
      return reply.code(201).send(await present.issue(issue, request.viewer, view.repo));
    },
  );

  app.get(
    '/repos/:owner/:repo/issues/:index',
    {
      schema: { tags, summary: 'Get an issue', params: IndexParams, response: { 200: Issue } },
      config: { auth: read },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      return present.issue(issue, request.viewer, view.repo);
    },
  );

  app.patch(
    '/repos/:owner/:repo/issues/:index',
    {
      schema: {
        tags,
        summary:
          'Edit an issue. If using deadline only the date will be taken into account, and time of day ignored.',
        description:
          'The poster may change the title, body, ref and state; writers everything. assignees ' +
          'replaces the assignees ([] clears them); milestone 0 or null removes it. Answers 201, as Forgejo does.',
        params: IndexParams,
        body: EditIssueOption,
        response: { 201: Issue },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const b = request.body;
      const edited = await issues.edit(view, issue, signedIn(request).user, {
        title: b.title,
        body: b.body,
        ref: b.ref,
        assignee: b.assignee,
        assignees: b.assignees,
        milestone: b.milestone,
        state: b.state,
        dueDate:
          b.due_date === undefined
            ? undefined
            : b.due_date === null
              ? null
              : endOfDay(b.due_date, 'due_date'),
        unsetDueDate: b.unset_due_date,
      });
      return reply.code(201).send(await present.issue(edited, request.viewer, view.repo));
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index',
    {
      schema: {
        tags,
        summary: 'Delete an issue',
        description: 'Repository administrators only.',
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.delete(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  // Subscriptions

  app.get(
    '/repos/:owner/:repo/issues/:index/subscriptions',
    {
      schema: {
        tags,
        summary: 'Get users who subscribed on an issue.',
        params: IndexParams,
        querystring: PageQuery,
        response: { 200: Type.Array(User) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { issue } = await issueOf(request);
      const page = pageOf(request.query, paging);
      const result = await issues.subscribers(issue, page);
      return sendPage(request, reply, result, page, rootUrl, (u) =>
        toUserJson(u, { rootUrl, viewer: request.viewer }),
      );
    },
  );

  app.get(
    '/repos/:owner/:repo/issues/:index/subscriptions/check',
    {
      schema: {
        tags,
        summary: 'Check if user is subscribed to an issue',
        description: 'Without an explicit choice, the poster, commenters and assignees are subscribed.',
        params: IndexParams,
        response: { 200: WatchInfo },
      },
      config: { auth: { scope: 'issue', require: 'signed' } },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const subscribed = await issues.isSubscribed(issue, signedIn(request).user);
      const owner = (await users.getById(view.repo.owner_id))!;
      const repoUrl = `${rootUrl}api/v1/repos/${owner.name}/${view.repo.name}`;
      return {
        subscribed,
        ignored: !subscribed,
        reason: null,
        created_at: isoTime(issue.created_unix),
        url: `${repoUrl}/issues/${issue.index}/subscriptions`,
        repository_url: repoUrl,
      };
    },
  );

  for (const [method, watch] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/issues/:index/subscriptions/:user',
      schema: {
        tags,
        summary: watch ? 'Subscribe user to issue' : 'Unsubscribe user from issue',
        description:
          'Oneself, or anyone by a site administrator (403 otherwise). 201 when it changed, 200 when not.',
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          index: Type.Integer(),
          user: Type.String(),
        }),
        response: { 200: NoContent, 201: NoContent },
      },
      config: { auth: write },
      handler: async (request, reply) => {
        const { issue } = await issueOf(request);
        const target = await issues.findUser((request.params as { user: string }).user);
        if (!target || target.type !== 0)
          throw notFound(`user does not exist [name: ${(request.params as { user: string }).user}]`);
        const changed = await issues.setSubscription(issue, signedIn(request).user, target, watch);
        return reply.code(changed ? 201 : 200).send(null);
      },
    });
  }
}
