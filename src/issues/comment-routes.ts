// HTTP routes for comments on issues and pull requests: the timeline, an issue's comments and a
// repository's, adding, editing and deleting one, and reactions to issues and comments. The rules
// live in CommentService.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { RepoService } from '../repos/service.js';
import type { IssuePresenter } from './present.js';
import type { IssueService } from './service.js';
import type { CommentService } from './comments.js';
import { issueTargets } from './targets.js';
import {
  Comment,
  CommentListQuery,
  CommentParams,
  CreateIssueCommentOption,
  EditIssueCommentOption,
  EditReactionOption,
  NoContent,
  PageQuery,
  Reaction,
  TimelineComment,
  IndexParams,
} from './schemas.js';

export interface IssueCommentRoutesDeps {
  repos: RepoService;
  issues: IssueService;
  issueComments: CommentService;
  present: IssuePresenter;
  paging: PagingSettings;
  rootUrl: string;
}

export function issueCommentRoutes(app: Api, deps: IssueCommentRoutesDeps): void {
  const { issueComments: comments, present, paging, rootUrl } = deps;
  const { repoView, issueOf, commentOf } = issueTargets(deps);
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

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
          kind === 'issue' ? pageOf(request.query as { page?: number; limit?: number }, paging) : undefined;
        const [rows, total] = await comments.reactions(issue, commentId, page);
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
        const { reaction, created } = await comments.react(
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
        await comments.unreact(view, issue, commentId, signedIn(request).user, request.body.content);
        return reply.code(200).send(null);
      },
    );
  };
  reactionRoutes('issue');
  reactionRoutes('comment');

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
      const page = pageOf(request.query, paging);
      const [rows, total] = await comments.timeline(issue, request.query, page);
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
      const page = q.page !== undefined || q.limit !== undefined ? pageOf(q, paging) : undefined;
      const [rows, total] = await comments.listComments(issue, q, page);
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
      const comment = await comments.createComment(view, issue, signedIn(request).user, request.body.body);
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
      const page = pageOf(request.query, paging);
      const [rows, total] = await comments.listRepoComments(repo, request.query, page);
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
        const edited = await comments.editComment(
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
        if (comment.type === 0) await comments.deleteComment(view, issue, comment, signedIn(request).user);
        return reply.code(204).send(null);
      },
    );
  }
}
