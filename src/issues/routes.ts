// HTTP routes for issues: lists and the search across repositories, creation, reading, editing
// and deletion, labels of an issue, due dates, locks, pins, reactions, subscriptions, the
// timeline, and comments (per issue and per repository). Reading follows the repository's
// visibility (404 for what the caller may not see); writing needs a signed-in caller; the rules on
// who may change what live in IssueService.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.js';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, setPageHeaders } from '../http/pagination.js';
import { notFound } from '../errors.js';
import { User, toUserJson } from '../users/schemas.js';
import { Label } from '../labels/schemas.js';
import { IssuePresenter } from './present.js';
import { MAX_PINNED, type RepoView } from './service.js';
import { endOfDay, parseTime } from './input.js';
import {
  Comment,
  CommentListQuery,
  CreateIssueCommentOption,
  CreateIssueOption,
  EditDeadlineOption,
  EditIssueCommentOption,
  EditIssueOption,
  EditReactionOption,
  Issue,
  IssueDeadline,
  IssueLabelsOption,
  IssueListQuery,
  IssueSearchQuery,
  LockIssueOption,
  PageQuery,
  Reaction,
  TimelineComment,
  WatchInfo,
  IndexParams,
  IndexIdParams,
} from './schemas.js';
import { isoTime } from '../http/format.js';

import { RepoParams } from '../http/params.js';
const CommentParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() });
const NoContent = Type.Null();

export function issuesRoutes(app: Api, ctx: AppContext): void {
  const { repos, issues, users } = ctx;
  const present = new IssuePresenter(ctx);
  const rootUrl = ctx.config.server.rootUrl;
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  /** The repository of the URL as the caller sees it: 404 when they may not read it. */
  async function repoView(request: FastifyRequest): Promise<RepoView> {
    const { owner, repo } = request.params as { owner: string; repo: string };
    return repos.requireRepo(owner, repo, request.viewer, 'read', 'repo.issues');
  }

  async function issueOf(request: FastifyRequest) {
    const view = await repoView(request);
    const issue = await issues.requireVisibleIssue(view, (request.params as { index: number }).index);
    return { view, issue };
  }

  async function commentOf(request: FastifyRequest) {
    const view = await repoView(request);
    const { comment, issue } = await issues.requireComment(view.repo, (request.params as { id: number }).id);
    await issues.requireVisibleIssue(view, issue.index);
    return { view, issue, comment };
  }

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
      const page = pageOf(q, ctx.paging);
      const {
        rows,
        total,
        repos: involved,
      } = await issues.search(
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
      const page = pageOf(q, ctx.paging);
      const result = await issues.list(
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

  app.get(
    '/repos/:owner/:repo/issues/pinned',
    {
      schema: {
        tags: ['repository'],
        summary: "List a repo's pinned issues",
        params: RepoParams,
        response: { 200: Type.Array(Issue) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoView(request);
      if (!repo.has_issues) return [];
      return present.issues(await issues.pinned(repo), request.viewer, [repo]);
    },
  );

  app.get(
    '/repos/:owner/:repo/new_pin_allowed',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoNewPinAllowed',
        summary: 'Returns if new Issue Pins are allowed',
        params: RepoParams,
        response: {
          200: Type.Object(
            { issues: Type.Boolean(), pull_requests: Type.Boolean() },
            { title: 'NewIssuePinsAllowed' },
          ),
        },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoView(request);
      const [pinnedIssues, pinnedPulls] = await Promise.all([issues.pinned(repo), issues.pinned(repo, true)]);
      return { issues: pinnedIssues.length < MAX_PINNED, pull_requests: pinnedPulls.length < MAX_PINNED };
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

  // Due date, lock, pins

  app.post(
    '/repos/:owner/:repo/issues/:index/deadline',
    {
      schema: {
        tags,
        summary:
          'Set an issue deadline. If set to null, the deadline is deleted. If using deadline only the date will be taken into account, and time of day ignored.',
        params: IndexParams,
        body: EditDeadlineOption,
        response: { 201: IssueDeadline },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const due = request.body.due_date === null ? null : endOfDay(request.body.due_date, 'due_date');
      const value = await issues.setDeadline(view, issue, signedIn(request).user, due);
      return reply.code(201).send({ due_date: value ? isoTime(value) : null });
    },
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/issues/:index/lock',
      schema: {
        tags,
        summary: 'Lock an issue',
        description:
          'Writers only. lock_reason: empty or one of Too heated, Off-topic, Resolved, Spam (400 ' +
          'otherwise). 208 when it already is locked.',
        params: IndexParams,
        body: Type.Union([LockIssueOption, Type.Null()]),
        response: { 204: NoContent, 208: NoContent },
      },
      config: { auth: write },
      handler: async (request, reply) => {
        const { view, issue } = await issueOf(request);
        const body = request.body as { lock_reason?: string } | undefined;
        const changed = await issues.setLocked(
          view,
          issue,
          signedIn(request).user,
          true,
          body?.lock_reason ?? '',
        );
        return reply.code(changed ? 204 : 208).send(null);
      },
    });
  }

  app.delete(
    '/repos/:owner/:repo/issues/:index/lock',
    {
      schema: {
        tags,
        summary: 'Unlock an issue',
        description: 'Writers only; 208 when it is not locked.',
        params: IndexParams,
        response: { 204: NoContent, 208: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const changed = await issues.setLocked(view, issue, signedIn(request).user, false);
      return reply.code(changed ? 204 : 208).send(null);
    },
  );

  app.post(
    '/repos/:owner/:repo/issues/:index/pin',
    {
      schema: {
        tags,
        summary: 'Pin an Issue',
        description: 'Writers only; at most 3 pinned issues per repository (400 beyond).',
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.pin(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/pin',
    {
      schema: { tags, summary: 'Unpin an Issue', params: IndexParams, response: { 204: NoContent } },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.unpin(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/repos/:owner/:repo/issues/:index/pin/:position',
    {
      schema: {
        tags,
        summary: 'Moves the Pin to the given Position',
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          index: Type.Integer(),
          position: Type.Integer(),
        }),
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.movePin(view, issue, request.params.position);
      return reply.code(204).send(null);
    },
  );

  // Labels of an issue

  app.get(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: {
        tags,
        summary: "Get an issue's labels",
        params: IndexParams,
        response: { 200: Type.Array(Label) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      return present.labels(await ctx.labels.ofIssue(issue.id), view.repo);
    },
  );

  const labelsChange = (summary: string, description: string) => ({
    tags,
    summary,
    description,
    params: IndexParams,
    body: IssueLabelsOption,
    response: { 200: Type.Array(Label) },
  });

  app.post(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: labelsChange(
        'Add a label to an issue',
        'Labels by id or by name (not both). An exclusive label replaces the label of the same scope; ' +
          'two exclusive labels of one scope are a 422 and change nothing. An unknown label is a 422.',
      ),
      config: { auth: write },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const labels = await issues.addLabels(view, issue, signedIn(request).user, request.body.labels ?? []);
      return present.labels(labels, view.repo);
    },
  );

  app.put(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: labelsChange(
        "Replace an issue's labels",
        'Labels by id or by name (not both); two exclusive labels of one scope are a 422.',
      ),
      config: { auth: write },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const labels = await issues.replaceLabels(
        view,
        issue,
        signedIn(request).user,
        request.body.labels ?? [],
      );
      return present.labels(labels, view.repo);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: {
        tags,
        summary: 'Remove all labels from an issue',
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.clearLabels(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/labels/:id',
    {
      schema: {
        tags,
        summary: 'Remove a label from an issue',
        description: '422 when the repository has no such label.',
        params: IndexIdParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await issues.removeLabel(view, issue, signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );

  // Reactions

  const reactionRoutes = (kind: 'issue' | 'comment') => {
    const url =
      kind === 'issue'
        ? '/repos/:owner/:repo/issues/:index/reactions'
        : '/repos/:owner/:repo/issues/comments/:id/reactions';
    const params = kind === 'issue' ? IndexParams : CommentParams;
    const target = async (request: FastifyRequest) => {
      if (kind === 'issue') {
        const { view, issue } = await issueOf(request);
        return { view, issue, commentId: 0 };
      }
      const { view, issue, comment } = await commentOf(request);
      return { view, issue, commentId: comment.id };
    };
    const what = kind === 'issue' ? 'an issue' : 'a comment';

    app.get(
      url,
      {
        schema: {
          tags,
          summary: `Get a list of reactions from ${what}`,
          params,
          querystring: PageQuery,
          response: { 200: Type.Array(Reaction) },
        },
        config: { auth: read },
      },
      async (request, reply) => {
        const { view, issue, commentId } = await target(request);
        const page =
          kind === 'issue'
            ? pageOf(request.query as { page?: number; limit?: number }, ctx.paging)
            : undefined;
        const [rows, total] = await issues.reactions(issue, commentId, page);
        const json = await present.reactions(rows, request.viewer, view.repo);
        if (page) setPageHeaders(request, reply, total, page, rootUrl);
        else reply.header('X-Total-Count', String(total));
        return json;
      },
    );

    app.post(
      url,
      {
        schema: {
          tags,
          summary: `Add a reaction to ${what}`,
          description:
            'content: +1, -1, laugh, hooray, confused, heart, rocket or eyes (422 otherwise). 201 when ' +
            'added, 200 when the caller had already reacted so. On a locked issue, writers only.',
          params,
          body: EditReactionOption,
          response: { 200: Reaction, 201: Reaction },
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { view, issue, commentId } = await target(request);
        const { reaction, created } = await issues.react(
          view,
          issue,
          commentId,
          signedIn(request).user,
          request.body.content,
        );
        const json = (await present.reactions([reaction], request.viewer, view.repo))[0]!;
        return reply.code(created ? 201 : 200).send(json);
      },
    );

    app.delete(
      url,
      {
        schema: {
          tags,
          summary: `Remove a reaction from ${what}`,
          params,
          body: EditReactionOption,
          response: { 200: NoContent },
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { view, issue, commentId } = await target(request);
        await issues.unreact(view, issue, commentId, signedIn(request).user, request.body.content);
        return reply.code(200).send(null);
      },
    );
  };
  reactionRoutes('issue');
  reactionRoutes('comment');

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
      const page = pageOf(request.query, ctx.paging);
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

  // Timeline and comments

  app.get(
    '/repos/:owner/:repo/issues/:index/timeline',
    {
      schema: {
        tags,
        summary: 'List all comments and events on an issue',
        params: IndexParams,
        querystring: CommentListQuery,
        response: { 200: Type.Array(TimelineComment) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const page = pageOf(request.query, ctx.paging);
      const [rows, total] = await issues.timeline(issue, request.query, page);
      const json = await present.timeline(issue, rows, request.viewer, view.repo);
      return sendPage(request, reply, [json, total], page, rootUrl, (j) => j);
    },
  );

  app.get(
    '/repos/:owner/:repo/issues/:index/comments',
    {
      schema: {
        tags,
        summary: 'List all comments on an issue',
        description: 'Every comment, oldest first, unless page or limit asks for a page.',
        params: IndexParams,
        querystring: CommentListQuery,
        response: { 200: Type.Array(Comment) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const q = request.query;
      const page = q.page !== undefined || q.limit !== undefined ? pageOf(q, ctx.paging) : undefined;
      const [rows, total] = await issues.listComments(issue, q, page);
      const json = await present.comments(issue, rows, request.viewer, view.repo);
      if (page) setPageHeaders(request, reply, total, page, rootUrl);
      else reply.header('X-Total-Count', String(total));
      return json;
    },
  );

  app.post(
    '/repos/:owner/:repo/issues/:index/comments',
    {
      schema: {
        tags,
        summary: 'Add a comment to an issue',
        description: 'Needs read access; on a locked issue, writers only (403).',
        params: IndexParams,
        body: CreateIssueCommentOption,
        response: { 201: Comment },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const comment = await issues.createComment(view, issue, signedIn(request).user, request.body.body);
      const json = (await present.comments(issue, [comment], request.viewer, view.repo))[0]!;
      return reply.code(201).send(json);
    },
  );

  app.get(
    '/repos/:owner/:repo/issues/comments',
    {
      schema: {
        tags,
        summary: 'List all comments in a repository',
        params: RepoParams,
        querystring: CommentListQuery,
        response: { 200: Type.Array(Comment) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repoView(request);
      const page = pageOf(request.query, ctx.paging);
      const [rows, total] = await issues.listRepoComments(repo, request.query, page);
      const json = await present.repoComments(rows, request.viewer, repo);
      return sendPage(request, reply, [json, total], page, rootUrl, (j) => j);
    },
  );

  app.get(
    '/repos/:owner/:repo/issues/comments/:id',
    {
      schema: {
        tags,
        summary: 'Get a comment',
        description: '204 for a timeline event that is not a comment.',
        params: CommentParams,
        response: { 200: Comment, 204: NoContent },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, issue, comment } = await commentOf(request);
      if (comment.type !== 0) return reply.code(204).send(null);
      const [json] = await present.comments(issue, [comment], request.viewer, view.repo);
      return json;
    },
  );

  for (const url of [
    '/repos/:owner/:repo/issues/comments/:id',
    '/repos/:owner/:repo/issues/:index/comments/:id',
  ]) {
    const deprecated = url.includes(':index');
    const params = deprecated
      ? Type.Object({ owner: Type.String(), repo: Type.String(), index: Type.Integer(), id: Type.Integer() })
      : CommentParams;

    app.patch(
      url,
      {
        schema: {
          tags,
          summary: 'Edit a comment',
          description:
            'Its poster or a writer (403 otherwise). 204 for a timeline event that is not a comment.',
          params,
          body: EditIssueCommentOption,
          response: { 200: Comment, 204: NoContent },
          deprecated,
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { view, issue, comment } = await commentOf(request);
        if (comment.type !== 0) return reply.code(204).send(null);
        const edited = await issues.editComment(
          view,
          issue,
          comment,
          signedIn(request).user,
          request.body.body,
        );
        const [json] = await present.comments(issue, [edited], request.viewer, view.repo);
        return json;
      },
    );

    app.delete(
      url,
      {
        schema: {
          tags,
          summary: 'Delete a comment',
          description: 'Its poster or a writer (403 otherwise).',
          params,
          response: { 204: NoContent },
          deprecated,
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { view, issue, comment } = await commentOf(request);
        if (comment.type === 0) await issues.deleteComment(view, issue, comment, signedIn(request).user);
        return reply.code(204).send(null);
      },
    );
  }
}
