// HTTP routes for time tracking and stopwatches: the tracked times of an issue, of a repository
// and of the caller; adding and deleting times; starting, stopping and cancelling stopwatches and
// listing the caller's. Everything needs a signed-in caller; the rules live in TimeService.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import type { RepoService } from '../repos/service.js';
import type { IssuePresenter } from './present.js';
import { NoContent, PageQuery, IndexParams, IndexIdParams } from './schemas.js';
import type { IssueService } from './service.js';
import type { TimeService } from './times.js';
import { issueTargets } from './targets.js';
import { AddTimeOption, MyTimeListQuery, StopWatch, TimeListQuery, TrackedTime } from './tracking-schemas.js';

export interface TimesRoutesDeps {
  repos: RepoService;
  issues: IssueService;
  times: TimeService;
  present: IssuePresenter;
  paging: PagingSettings;
  rootUrl: string;
}

export function timesRoutes(app: Api, deps: TimesRoutesDeps): void {
  const { times, present, paging, rootUrl } = deps;
  const { repoView, issueOf } = issueTargets(deps);
  const tags = ['issue'];
  const signed: RouteAuth = { scope: 'issue', require: 'signed' };
  const mine: RouteAuth = { scope: 'user', require: 'signed' };

  // Tracked times of an issue

  app.get(
    '/repos/:owner/:repo/issues/:index/times',
    {
      schema: {
        tags,
        summary: "List an issue's tracked times",
        description:
          "Writers see everyone's times (user filters them), others their own only (403 when asking " +
          'for another user’s). since and before: RFC 3339, on the time’s creation.',
        params: IndexParams,
        querystring: TimeListQuery,
        response: { 200: Type.Array(TrackedTime) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const page = pageOf(request.query, paging);
      const [rows, total] = await times.list(view, issue, signedIn(request).user, request.query, page);
      const json = await present.trackedTimes(rows, request.viewer);
      setPageHeaders(request, reply, total, page, rootUrl);
      return json;
    },
  );

  app.post(
    '/repos/:owner/:repo/issues/:index/times',
    {
      schema: {
        tags,
        summary: 'Add tracked time to a issue',
        description:
          'Writers and the poster of the issue (403 otherwise). time: seconds, more than 0 (422). ' +
          'user_name is honoured for repository and site administrators. Answers 200, as Forgejo does.',
        params: IndexParams,
        body: AddTimeOption,
        response: { 200: TrackedTime },
      },
      config: { auth: signed },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const b = request.body;
      const row = await times.add(view, issue, signedIn(request).user, {
        time: b.time,
        created: b.created,
        userName: b.user_name,
      });
      return (await present.trackedTimes([row], request.viewer))[0]!;
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/times',
    {
      schema: {
        tags,
        summary: 'Reset a tracked time of an issue',
        description: "Deletes the caller's times on the issue; 404 when there are none.",
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await times.reset(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/times/:id',
    {
      schema: {
        tags,
        summary: 'Delete specific tracked time',
        description: 'Its user or a site administrator (403 otherwise).',
        params: IndexIdParams,
        response: { 204: NoContent },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await times.delete(view, issue, signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );

  // Tracked times of a repository and of the caller

  app.get(
    '/repos/:owner/:repo/times',
    {
      schema: {
        tags: ['repository'],
        summary: "List a repo's tracked times",
        description:
          "Writers see everyone's times (user filters them), others their own only (403 when asking " +
          'for another user’s).',
        params: RepoParams,
        querystring: TimeListQuery,
        response: { 200: Type.Array(TrackedTime) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const view = await repoView(request);
      const page = pageOf(request.query, paging);
      const [rows, total] = await times.list(view, null, signedIn(request).user, request.query, page);
      const json = await present.trackedTimes(rows, request.viewer);
      setPageHeaders(request, reply, total, page, rootUrl);
      return json;
    },
  );

  app.get(
    '/repos/:owner/:repo/times/:user',
    {
      schema: {
        tags: ['repository'],
        summary: "List a user's tracked times in a repo",
        description: 'Repository administrators, site administrators and the user only (403).',
        deprecated: true,
        params: Type.Object({ owner: Type.String(), repo: Type.String(), user: Type.String() }),
        response: { 200: Type.Array(TrackedTime) },
      },
      config: { auth: signed },
    },
    async (request) => {
      const view = await repoView(request);
      const rows = await times.ofUser(view, signedIn(request).user, request.params.user);
      return present.trackedTimes(rows, request.viewer);
    },
  );

  app.get(
    '/user/times',
    {
      schema: {
        tags: ['user'],
        summary: "List the current user's tracked times",
        querystring: MyTimeListQuery,
        response: { 200: Type.Array(TrackedTime) },
      },
      config: { auth: mine },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const [rows, total] = await times.mine(signedIn(request).user, request.query, page);
      const json = await present.trackedTimes(rows, request.viewer);
      setPageHeaders(request, reply, total, page, rootUrl);
      return json;
    },
  );

  // Stopwatches

  const clock = (
    action: 'start' | 'stop' | 'delete',
    summary: string,
    description: string,
    status: 201 | 204,
  ) => ({
    schema: {
      tags,
      summary,
      description: `Writers only (403). ${description}`,
      params: IndexParams,
      response: { [status]: NoContent },
    },
    config: { auth: signed },
    handler: async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      const { view, issue } = await issueOf(request);
      const doer = signedIn(request).user;
      if (action === 'start') await times.start(view, issue, doer);
      else if (action === 'stop') await times.stop(view, issue, doer);
      else await times.cancel(view, issue, doer);
      return reply.code(status).send(null);
    },
  });

  app.post(
    '/repos/:owner/:repo/issues/:index/stopwatch/start',
    clock(
      'start',
      'Start stopwatch on an issue.',
      '409 when it already runs; a stopwatch of the caller running on another issue is stopped.',
      201,
    ),
  );
  app.post(
    '/repos/:owner/:repo/issues/:index/stopwatch/stop',
    clock('stop', "Stop an issue's existing stopwatch.", 'Adds the time; 409 when none runs.', 201),
  );
  app.delete(
    '/repos/:owner/:repo/issues/:index/stopwatch/delete',
    clock('delete', "Delete an issue's existing stopwatch.", 'Tracks no time; 409 when none runs.', 204),
  );

  app.get(
    '/user/stopwatches',
    {
      schema: {
        tags: ['user'],
        summary: 'Get list of all existing stopwatches',
        querystring: PageQuery,
        response: { 200: Type.Array(StopWatch) },
      },
      config: { auth: mine },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const [rows, total] = await times.stopwatches(signedIn(request).user, page);
      const json = await present.stopwatches(rows);
      setPageHeaders(request, reply, total, page, rootUrl);
      return json;
    },
  );
}
