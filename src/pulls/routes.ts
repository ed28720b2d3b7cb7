// HTTP routes for pull requests: lists, creation, reading (JSON, .diff, .patch), editing, changed
// files, commits (each with its files and stats), merging and the merged check, reviews (by id:
// submitting, deleting, dismissing; their line comments) and review requests. Reading follows the
// repository's visibility and its pull requests unit (404 for what the caller may not see);
// writing needs a signed-in caller; the rules live in the services (PullService, PullReviewService,
// MergeService, AutoMergeService).
import { IndexParams, IndexIdParams } from '../issues/schemas.js';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { notFound } from '../errors.js';
import type { UserService } from '../users/service.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { RepoView } from '../issues/service.js';
import { endOfDay, parseTime } from '../issues/input.js';
import { Commit, escapePath, toCommitJson, type RepoLinks } from '../git/data-schemas.js';
import type { AutoMergeService } from './automerge.js';
import type { MergeService } from './merging.js';
import type { PullPresenter } from './present.js';
import type { PullReviewService } from './reviewing.js';
import type { PullService } from './service.js';
import {
  ChangedFile,
  CreatePullRequestOption,
  CreatePullReviewComment,
  CreatePullReviewOptions,
  DismissPullReviewOptions,
  EditPullRequestOption,
  MergePullRequestOption,
  PullListQuery,
  PullRequest,
  PullReview,
  PullReviewComment,
  PullReviewRequestOptions,
  SubmitPullReviewOptions,
  UpdatePullQuery,
} from './schemas.js';

import { RepoParams } from '../http/params.js';
const PullParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  index: Type.String({ description: 'the number, or number.diff / number.patch' }),
});
const ReviewParams = IndexIdParams;
const ReviewCommentParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  index: Type.Integer(),
  id: Type.Integer(),
  comment: Type.Integer(),
});
const PageOnly = Type.Object({ page: Type.Optional(Type.Integer()), limit: Type.Optional(Type.Integer()) });

export interface PullsRoutesDeps {
  pulls: PullService;
  reviews: PullReviewService;
  merging: MergeService;
  autoMerge: AutoMergeService;
  /** Forgejo's PullRequest JSON, the same the webhook payloads carry; reviews and their comments. */
  present: PullPresenter;
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function pullsRoutes(app: Api, deps: PullsRoutesDeps): void {
  const { repos, pulls, reviews, merging, autoMerge, users, paging, rootUrl } = deps;
  const presenter = deps.present;
  const tags = ['repository'];
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };

  async function repoView(request: FastifyRequest): Promise<RepoView> {
    const { owner, repo } = request.params as { owner: string; repo: string };
    const view = await repos.requireRepo(owner, repo, request.viewer, 'read', 'repo.pulls');
    if (!view.repo.has_pull_requests) throw notFound('the pull requests of this repository are turned off');
    return view;
  }

  async function pullOf(request: FastifyRequest, index: number) {
    const view = await repoView(request);
    return { view, pull: await pulls.requirePull(view.repo, index) };
  }

  async function fullName(repo: RepoRow): Promise<string> {
    const owner = await users.getById(repo.owner_id);
    return `${owner?.name ?? ''}/${repo.name}`;
  }

  app.get(
    '/repos/:owner/:repo/pulls',
    {
      schema: {
        tags,
        summary: "List a repository's pull requests",
        description: 'state (open by default), sort, milestone (id) and labels (ids, all of them).',
        params: RepoParams,
        querystring: PullListQuery,
        response: { 200: Type.Array(PullRequest) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repoView(request);
      const q = request.query;
      const page = pageOf(q, paging);
      const labels = q.labels === undefined ? undefined : [q.labels].flat().join(',');
      const [rows, total] = await pulls.list(
        repo,
        { state: q.state, sort: q.sort, labels: labels || undefined, milestone: q.milestone },
        page,
      );
      const json = await presenter.pulls(rows, repo, request.viewer);
      return sendPage(request, reply, [json, total], page, rootUrl, (j) => j);
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls',
    {
      schema: {
        tags,
        summary: 'Create a pull request',
        description:
          'head: a branch of this repository, or `owner:branch` of a fork. 404 for an unknown branch, ' +
          '409 when an open pull request already exists for the same branches, 422 when there is nothing to merge.',
        params: RepoParams,
        body: CreatePullRequestOption,
        response: { 201: PullRequest },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const view = await repoView(request);
      const b = request.body;
      const pull = await pulls.create(view, signedIn(request).user, {
        head: b.head,
        base: b.base,
        title: b.title,
        body: b.body,
        assignee: b.assignee,
        assignees: b.assignees,
        labels: b.labels,
        milestone: b.milestone,
        dueDate: b.due_date === undefined ? undefined : parseTime(b.due_date, 'due_date'),
      });
      return reply.code(201).send(await presenter.pull(pull, view.repo, request.viewer));
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/pinned',
    {
      schema: {
        tags,
        summary: "List a repo's pinned pull requests",
        params: RepoParams,
        response: { 200: Type.Array(PullRequest) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoView(request);
      return presenter.pulls(await pulls.pinned(repo), repo, request.viewer);
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:base/*',
    {
      schema: {
        tags,
        summary: 'Get a pull request by base and head',
        description:
          'The open pull request from head (a branch, `owner:branch` or `owner/repo:branch` of a fork) ' +
          'into the base branch; 404 when none.',
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          base: Type.String({ description: 'base of the pull request to get' }),
          '*': Type.String({ description: 'head of the pull request to get' }),
        }),
        response: { 200: PullRequest },
      },
      config: { auth: read },
    },
    async (request) => {
      const view = await repoView(request);
      const pull = await pulls.requireByBaseHead(
        view.repo,
        request.viewer,
        request.params.base,
        request.params['*'],
      );
      return presenter.pull(pull, view.repo, request.viewer);
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index',
    {
      schema: {
        tags,
        summary: 'Get a pull request, or its diff ({index}.diff) or patch ({index}.patch)',
        params: PullParams,
        querystring: Type.Object({ binary: Type.Optional(Type.Boolean()) }),
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const m = /^(\d{1,15})(?:\.(diff|patch))?$/.exec(request.params.index);
      if (!m) throw notFound(`pull request does not exist [index: ${request.params.index}]`);
      const { view, pull } = await pullOf(request, Number(m[1]));
      if (m[2]) {
        const text = await pulls.diffText(pull, m[2] as 'diff' | 'patch', request.query.binary === true);
        return reply.type('text/plain; charset=utf-8').send(text);
      }
      return reply
        .type('application/json; charset=utf-8')
        .send(await presenter.pull(pull, view.repo, request.viewer));
    },
  );

  app.get(
    '/repos/:owner/:repo/commits/:sha/pull',
    {
      schema: {
        tags,
        summary: 'Get the merged pull request of the commit',
        description:
          'The pull request merged as that commit, else the newest one whose head is that commit; 404 when none.',
        params: Type.Object({ owner: Type.String(), repo: Type.String(), sha: Type.String() }),
        response: { 200: PullRequest },
      },
      config: { auth: read },
    },
    async (request) => {
      const view = await repoView(request);
      const pull = await pulls.requireByCommit(view.repo, request.params.sha);
      return presenter.pull(pull, view.repo, request.viewer);
    },
  );

  app.patch(
    '/repos/:owner/:repo/pulls/:index',
    {
      schema: {
        tags,
        summary: 'Update a pull request',
        description: 'An empty assignees list removes every assignee.',
        params: IndexParams,
        body: EditPullRequestOption,
        response: { 201: PullRequest },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const b = request.body;
      const updated = await pulls.edit(view, pull, signedIn(request).user, {
        title: b.title,
        body: b.body,
        base: b.base,
        state: b.state,
        assignee: b.assignee,
        assignees: b.assignees,
        milestone: b.milestone,
        labels: b.labels,
        dueDate:
          b.due_date === undefined
            ? undefined
            : b.due_date === null
              ? null
              : endOfDay(b.due_date, 'due_date'),
        unsetDueDate: b.unset_due_date,
        allowMaintainerEdit: b.allow_maintainer_edit,
      });
      return reply.code(201).send(await presenter.pull(updated, view.repo, request.viewer));
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/files',
    {
      schema: {
        tags,
        summary: 'Get the changed files of a pull request',
        params: IndexParams,
        querystring: PageOnly,
        response: { 200: Type.Array(ChangedFile) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const page = pageOf(request.query, paging);
      const all = await pulls.files(pull);
      const full = await fullName(view.repo);
      const sha = pull.pr.head_commit_id;
      return sendPage(
        request,
        reply,
        [all.slice(page.offset, page.offset + page.limit), all.length],
        page,
        rootUrl,
        (f) => ({
          filename: f.filename,
          ...(f.previous ? { previous_filename: f.previous } : {}),
          status: f.status,
          additions: f.additions,
          deletions: f.deletions,
          changes: f.additions + f.deletions,
          html_url: `${rootUrl}${full}/src/commit/${sha}/${escapePath(f.filename)}`,
          contents_url: `${rootUrl}api/v1/repos/${full}/contents/${escapePath(f.filename)}?ref=${sha}`,
          raw_url: `${rootUrl}${full}/raw/commit/${sha}/${escapePath(f.filename)}`,
        }),
      );
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/commits',
    {
      schema: {
        tags,
        summary: 'Get the commits of a pull request',
        description: 'Every commit also carries its files (filename and status) and stats.',
        params: IndexParams,
        querystring: PageOnly,
        response: { 200: Type.Array(Commit) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const page = pageOf(request.query, paging);
      const [commits, total] = await pulls.commits(pull, page);
      const full = await fullName(view.repo);
      const links: RepoLinks = {
        rootUrl,
        api: `${rootUrl}api/v1/repos/${full}`,
        html: `${rootUrl}${full}`,
        viewer: request.viewer,
        ...(await pulls.commitLinks(pull, commits)),
      };
      setPageHeaders(request, reply, total, page, rootUrl);
      return commits.map((c) => toCommitJson(c, links, { stat: true, files: true, verification: true }));
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      schema: {
        tags,
        summary: 'Merge a pull request',
        description:
          '405 when the pull request is not mergeable or branch protection is unmet (force_merge lets ' +
          'site and repository administrators merge anyway); 409 on conflicts; 403 without write access to the code. ' +
          'With merge_when_checks_succeed the merge is scheduled (201, 409 when one already is) and done in ' +
          'the background once branch protection is satisfied (DELETE cancels it).',
        params: IndexParams,
        body: MergePullRequestOption,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const b = request.body;
      const input = {
        style: b.Do,
        title: b.MergeTitleField,
        message: b.MergeMessageField,
        deleteBranch: b.delete_branch_after_merge,
        headCommitId: b.head_commit_id,
        mergeCommitId: b.MergeCommitID,
        force: b.force_merge,
      };
      const doer = signedIn(request).user;
      // Scheduled (Forgejo's answer: 201, no body): the queue merges once the checks pass, at once
      // when none is pending, never inside this request.
      if (b.merge_when_checks_succeed) {
        await autoMerge.schedule(view, pull, doer, input);
        return reply.code(201).send();
      }
      await merging.merge(view, pull, doer, input);
      return reply.code(200).send();
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls/:index/update',
    {
      schema: {
        tags,
        summary: "Merge PR's baseBranch into headBranch",
        description:
          'style=merge (default) makes a merge commit on the head branch, style=rebase rebases it onto ' +
          'the base; the doer must be able to push to the head branch (403). 409 on conflicts, ' +
          '422 when the pull request is merged or closed.',
        params: IndexParams,
        querystring: UpdatePullQuery,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      await merging.updateHead(view, pull, signedIn(request).user, request.query.style ?? 'merge');
      return reply.code(200).send();
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      schema: {
        tags,
        summary: 'Check if a pull request has been merged',
        description: '204 when merged, 404 otherwise.',
        params: IndexParams,
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { pull } = await pullOf(request, request.params.index);
      if (!pull.pr.has_merged) throw notFound('pull request has not been merged');
      return reply.code(204).send();
    },
  );

  app.delete(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      schema: {
        tags,
        summary: 'Cancel the scheduled auto merge for the given pull request',
        description:
          'Whoever scheduled it, or a repository administrator (403 otherwise); 404 when none is scheduled.',
        params: IndexParams,
        response: { 204: Type.Null() },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      await autoMerge.cancel(view, pull, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/reviews',
    {
      schema: {
        tags,
        summary: 'List the reviews of a pull request',
        params: IndexParams,
        querystring: PageOnly,
        response: { 200: Type.Array(PullReview) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const page = pageOf(request.query, paging);
      const rows = (await reviews.reviews(pull)).filter(
        (r) => r.type !== 0 || r.reviewer_id === request.viewer?.id,
      );
      const json = await presenter.reviews(
        rows.slice(page.offset, page.offset + page.limit),
        pull,
        view.repo,
        request.viewer,
      );
      return sendPage(request, reply, [json, rows.length], page, rootUrl, (j) => j);
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls/:index/reviews',
    {
      schema: {
        tags,
        summary: 'Create a review of a pull request',
        description: 'event: APPROVED, REQUEST_CHANGES or COMMENT (PENDING when absent).',
        params: IndexParams,
        body: CreatePullReviewOptions,
        response: { 200: PullReview },
      },
      config: { auth: write },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const b = request.body;
      const row = await reviews.createReview(view, pull, signedIn(request).user, {
        event: b.event,
        body: b.body,
        commitId: b.commit_id,
        comments: b.comments,
      });
      return presenter.review(row, pull, view.repo, request.viewer);
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    {
      schema: {
        tags,
        summary: 'Get a review of a pull request',
        description: 'A pending review is visible to its author only.',
        params: ReviewParams,
        response: { 200: PullReview },
      },
      config: { auth: read },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const row = await reviews.requireReview(pull, request.params.id, request.viewer);
      return presenter.review(row, pull, view.repo, request.viewer);
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    {
      schema: {
        tags,
        summary: 'Submit a pending review of a pull request',
        description: 'event: APPROVED, REQUEST_CHANGES or COMMENT; 422 when the review is not pending.',
        params: ReviewParams,
        body: SubmitPullReviewOptions,
        response: { 200: PullReview },
      },
      config: { auth: write },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const b = request.body;
      const row = await reviews.submitReview(view, pull, signedIn(request).user, request.params.id, {
        event: b.event,
        body: b.body,
      });
      return presenter.review(row, pull, view.repo, request.viewer);
    },
  );

  app.delete(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    {
      schema: {
        tags,
        summary: 'Delete a review of a pull request',
        description: 'Its reviewer, or a site or repository administrator (403 otherwise).',
        params: ReviewParams,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      await reviews.deleteReview(view, pull, signedIn(request).user, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/reviews/:id/comments',
    {
      schema: {
        tags,
        summary: 'Get the line comments of a review of a pull request',
        params: ReviewParams,
        response: { 200: Type.Array(PullReviewComment) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const rows = await reviews.reviewComments(pull, request.params.id, request.viewer);
      return presenter.reviewComments(rows, pull, view.repo, request.viewer);
    },
  );

  app.post(
    '/repos/:owner/:repo/pulls/:index/reviews/:id/comments',
    {
      schema: {
        tags,
        summary: 'Add a line comment to a pending review of a pull request',
        description: "The review must be the caller's and pending (422 otherwise).",
        params: ReviewParams,
        body: CreatePullReviewComment,
        response: { 200: PullReviewComment },
      },
      config: { auth: write },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const row = await reviews.addReviewComment(
        pull,
        signedIn(request).user,
        request.params.id,
        request.body,
      );
      return (await presenter.reviewComments([row], pull, view.repo, request.viewer))[0]!;
    },
  );

  app.get(
    '/repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment',
    {
      schema: {
        tags,
        summary: 'Get a line comment of a review of a pull request',
        params: ReviewCommentParams,
        response: { 200: PullReviewComment },
      },
      config: { auth: read },
    },
    async (request) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const row = await reviews.reviewComment(
        pull,
        request.params.id,
        request.params.comment,
        request.viewer,
      );
      return (await presenter.reviewComments([row], pull, view.repo, request.viewer))[0]!;
    },
  );

  app.delete(
    '/repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment',
    {
      schema: {
        tags,
        summary: 'Delete a line comment of a review of a pull request',
        description: 'Its poster, or a writer of pull requests (403 otherwise).',
        params: ReviewCommentParams,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const { id, comment } = request.params;
      await reviews.deleteReviewComment(view, pull, signedIn(request).user, id, comment);
      return reply.code(204).send();
    },
  );

  for (const [suffix, dismiss] of [
    ['dismissals', true],
    ['undismissals', false],
  ] as const)
    app.post(
      `/repos/:owner/:repo/pulls/:index/reviews/:id/${suffix}`,
      {
        schema: {
          tags,
          summary: dismiss ? 'Dismiss a review of a pull request' : 'Cancel the dismissal of a review',
          description:
            'Writers of pull requests only (403 otherwise); approvals and change requests of an open ' +
            'pull request only (422 otherwise).' +
            (dismiss ? " priors: also dismiss the reviewer's earlier reviews." : ''),
          params: ReviewParams,
          ...(dismiss ? { body: DismissPullReviewOptions } : {}),
          response: { 200: PullReview },
        },
        config: { auth: write },
      },
      async (request) => {
        const { view, pull } = await pullOf(request, request.params.index);
        const body = (request.body ?? {}) as { message?: string; priors?: boolean };
        const row = await reviews.dismissReview(
          view,
          pull,
          signedIn(request).user,
          request.params.id,
          dismiss,
          { message: body.message, priors: body.priors },
        );
        return presenter.review(row, pull, view.repo, request.viewer);
      },
    );

  app.post(
    '/repos/:owner/:repo/pulls/:index/requested_reviewers',
    {
      schema: {
        tags,
        summary: 'Request reviews of a pull request',
        params: IndexParams,
        body: PullReviewRequestOptions,
        response: { 201: Type.Array(PullReview) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      const rows = await reviews.requestReviewers(
        view,
        pull,
        signedIn(request).user,
        request.body.reviewers ?? [],
        true,
      );
      return reply.code(201).send(await presenter.reviews(rows, pull, view.repo, request.viewer));
    },
  );

  app.delete(
    '/repos/:owner/:repo/pulls/:index/requested_reviewers',
    {
      schema: {
        tags,
        summary: 'Cancel review requests of a pull request',
        params: IndexParams,
        body: PullReviewRequestOptions,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, pull } = await pullOf(request, request.params.index);
      await reviews.requestReviewers(view, pull, signedIn(request).user, request.body.reviewers ?? [], false);
      return reply.code(204).send();
    },
  );
}
