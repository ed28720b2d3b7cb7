// HTTP routes for milestones: /repos/{owner}/{repo}/milestones, each found by id or else by
// title. Reading follows the repository's visibility; writing needs write access to its issues.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import type { MilestoneService } from './service.js';
import { parseTime } from '../issues/input.js';
import {
  CreateMilestoneOption,
  EditMilestoneOption,
  Milestone,
  MilestoneListQuery,
  toMilestoneJson,
} from './schemas.js';

import { RepoParams } from '../http/params.js';
const IdParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  id: Type.String({ description: 'the milestone id, or else its title' }),
});

export interface MilestonesRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  milestones: MilestoneService;
  paging: PagingSettings;
  rootUrl: string;
}

export function milestonesRoutes(app: Api, deps: MilestonesRoutesDeps): void {
  const { repos, milestones, paging, rootUrl } = deps;
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  const repoOf = (
    p: { owner: string; repo: string },
    viewer: Parameters<typeof repos.requireRepo>[2],
    need: 'read' | 'write',
  ) => repos.requireRepo(p.owner, p.repo, viewer, need, 'repo.issues');

  const due = (v: string | null | undefined) =>
    v === undefined ? undefined : v === null ? null : parseTime(v, 'due_on');

  app.get(
    '/repos/:owner/:repo/milestones',
    {
      schema: {
        tags,
        summary: "Get all of a repository's opened milestones",
        description: 'state: open (the default), closed or all; name: part of the title.',
        params: RepoParams,
        querystring: MilestoneListQuery,
        response: { 200: Type.Array(Milestone) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'read');
      const page = pageOf(request.query, paging);
      const q = request.query;
      const result = await milestones.list(
        repo,
        { state: q.state, name: q.name, sort: q.sort as never },
        page,
      );
      return sendPage(request, reply, result, page, rootUrl, toMilestoneJson);
    },
  );

  app.post(
    '/repos/:owner/:repo/milestones',
    {
      schema: {
        tags,
        summary: 'Create a milestone',
        params: RepoParams,
        body: CreateMilestoneOption,
        response: { 201: Milestone },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      const b = request.body;
      const m = await milestones.create(repo, {
        title: b.title,
        description: b.description,
        dueOn: due(b.due_on),
        state: b.state,
      });
      return reply.code(201).send(toMilestoneJson(m));
    },
  );

  app.get(
    '/repos/:owner/:repo/milestones/:id',
    {
      schema: { tags, summary: 'Get a milestone', params: IdParams, response: { 200: Milestone } },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoOf(request.params, request.viewer, 'read');
      return toMilestoneJson(await milestones.requireMilestone(repo, request.params.id));
    },
  );

  app.patch(
    '/repos/:owner/:repo/milestones/:id',
    {
      schema: {
        tags,
        summary: 'Update a milestone',
        description: 'due_on null removes the due date.',
        params: IdParams,
        body: EditMilestoneOption,
        response: { 200: Milestone },
      },
      config: { auth: write },
    },
    async (request) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      const m = await milestones.requireMilestone(repo, request.params.id);
      const b = request.body;
      const edited = await milestones.edit(m, {
        title: b.title,
        description: b.description,
        dueOn: due(b.due_on),
        state: b.state,
      });
      return toMilestoneJson(edited);
    },
  );

  app.delete(
    '/repos/:owner/:repo/milestones/:id',
    {
      schema: { tags, summary: 'Delete a milestone', params: IdParams, response: { 204: Type.Null() } },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      await milestones.delete(await milestones.requireMilestone(repo, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
