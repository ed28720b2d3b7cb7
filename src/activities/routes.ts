// /api/v1 activity feeds (of a user, an organization, a team, a repository) and a user's heatmap.
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedViewer, type RouteAuth } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { notFound } from '../errors.js';
import { RepoParams } from '../http/params.js';
import { toUserJson } from '../users/schemas.js';
import { UserType } from '../users/tables.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import type { RepositoryJson } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import type { CommentJson } from '../issues/schemas.js';
import type { IssuePresenter } from '../issues/present.js';
import type { ActivityService } from './service.js';
import type { ActionRow } from './tables.js';
import { Activity, FeedQuery, HeatmapEntry, toActivityJson } from './schemas.js';

export interface ActivityRoutesDeps {
  activities: ActivityService;
  users: Pick<UserService, 'getByIds' | 'requireAccount' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee' | 'requireVisibleOrg' | 'isMember' | 'requireTeam'>;
  repos: Pick<RepoService, 'getByIds' | 'requireRepo'>;
  /** Repositories as JSON (repos/present.ts). */
  reposJson: (rows: RepoRow[], viewer: Viewer | null) => Promise<RepositoryJson[]>;
  /** Comments as JSON (issues/present.ts), for the entries that name one. */
  commentsJson: IssuePresenter['commentsOf'];
  paging: PagingSettings;
  rootUrl: string;
}

export function activityRoutes(app: Api, deps: ActivityRoutesDeps): void {
  const { activities, users, orgs, repos, reposJson, commentsJson, paging, rootUrl } = deps;
  const userRead: RouteAuth = { scope: 'user' };
  const orgRead: RouteAuth = { scope: 'organization' };
  const repoRead: RouteAuth = { scope: 'repository' };
  const feedResponse = { 200: Type.Array(Activity) };
  const heatmapText = new WeakMap<object, string>();

  /** A page of activities as JSON: actors, repositories and comments loaded once for the page. */
  async function sendFeed(
    request: FastifyRequest,
    reply: FastifyReply,
    [rows, total]: [ActionRow[], number],
    feedUserId: number | null,
  ) {
    const viewer = request.viewer;
    const page = pageOf(request.query as Record<string, unknown>, paging);
    const [actors, repoRows] = await Promise.all([
      users.getByIds([...new Set(rows.map((r) => r.act_user_id))]),
      repos.getByIds([...new Set(rows.map((r) => r.repo_id))]),
    ]);
    const [repoList, { comments, issues }] = await Promise.all([
      reposJson([...repoRows.values()], viewer),
      activities.commentsOf(rows, repoRows, viewer),
    ]);
    const repoJson = new Map(repoList.map((r) => [r.id, r]));
    const commentList = await commentsJson(comments, issues, viewer, repoRows.values());
    const commentJson = new Map<number, { repoId: number; json: CommentJson }>(
      comments.map((c, n) => [c.id, { repoId: c.repo_id, json: commentList[n]! }]),
    );
    const json = rows.map((r) => {
      const actor = actors.get(r.act_user_id);
      const comment = r.comment_id ? commentJson.get(r.comment_id) : undefined;
      return toActivityJson(
        r,
        feedUserId ?? r.act_user_id,
        actor ? toUserJson(actor, { rootUrl, viewer }) : null,
        repoJson.get(r.repo_id) ?? null,
        comment && comment.repoId === r.repo_id ? comment.json : null,
      );
    });
    return sendPage(request, reply, [json, total], page, rootUrl, (a) => a);
  }

  async function visibleAccount(name: string, viewer: Viewer | null): Promise<UserRow> {
    const u = await users.requireAccount(name);
    const visible = u.type === UserType.Organization ? await orgs.canSee(viewer, u) : users.canSee(viewer, u);
    if (!visible) throw notFound(`user does not exist [name: ${name}]`);
    return u;
  }

  app.get(
    '/users/:username/activities/feeds',
    {
      schema: {
        tags: ['user'],
        operationId: 'userListActivityFeeds',
        summary: "List a user's activity feeds",
        params: Type.Object({ username: Type.String() }),
        querystring: Type.Object({
          ...FeedQuery.properties,
          'only-performed-by': Type.Optional(Type.Boolean()),
        }),
        response: feedResponse,
      },
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount(request.params.username, request.viewer);
      const q = request.query;
      const result = await activities.userFeed(u, request.viewer, q['only-performed-by'] === true, {
        date: q.date,
        page: pageOf(q, paging),
      });
      return sendFeed(request, reply, result, u.id);
    },
  );

  app.get(
    '/users/:username/heatmap',
    {
      schema: {
        tags: ['user'],
        operationId: 'userGetHeatmapData',
        summary: "Get a user's heatmap",
        params: Type.Object({ username: Type.String() }),
        response: { 200: Type.Array(HeatmapEntry) },
      },
      config: { auth: userRead },
    },
    async (request, reply) => {
      const u = await visibleAccount(request.params.username, request.viewer);
      const heatmap = await activities.heatmap(u, request.viewer);
      // A year can be 35,000 buckets: the text is made once per heatmap the service keeps.
      let text = heatmapText.get(heatmap);
      if (text === undefined) {
        text = JSON.stringify(heatmap);
        heatmapText.set(heatmap, text);
      }
      // Already JSON: Fastify sends a string as it is (the schema documents its shape).
      return reply.type('application/json; charset=utf-8').send(text as unknown as typeof heatmap);
    },
  );

  app.get(
    '/orgs/:org/activities/feeds',
    {
      schema: {
        tags: ['organization'],
        operationId: 'orgListActivityFeeds',
        summary: "List an organization's activity feeds",
        params: Type.Object({ org: Type.String() }),
        querystring: FeedQuery,
        response: feedResponse,
      },
      config: { auth: orgRead },
    },
    async (request, reply) => {
      const viewer = request.viewer;
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      const member =
        viewer !== null && !viewer.publicOnly && (viewer.isAdmin || (await orgs.isMember(org, viewer.id)));
      const result = await activities.orgFeed(org, viewer, member, {
        date: request.query.date,
        page: pageOf(request.query, paging),
      });
      return sendFeed(request, reply, result, org.id);
    },
  );

  app.get(
    '/teams/:id/activities/feeds',
    {
      schema: {
        tags: ['organization'],
        operationId: 'orgListTeamActivityFeeds',
        summary: "List a team's activity feeds",
        params: Type.Object({ id: Type.Integer() }),
        querystring: FeedQuery,
        response: feedResponse,
      },
      config: { auth: { scope: 'organization', require: 'signed' } },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const { team } = await orgs.requireTeam(request.params.id, viewer);
      const result = await activities.teamFeed(team.id, viewer, {
        date: request.query.date,
        page: pageOf(request.query, paging),
      });
      return sendFeed(request, reply, result, null);
    },
  );

  app.get(
    '/repos/:owner/:repo/activities/feeds',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoListActivityFeeds',
        summary: "List a repository's activity feeds",
        params: RepoParams,
        querystring: FeedQuery,
        response: feedResponse,
      },
      config: { auth: repoRead },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const result = await activities.repoFeed(repo, {
        date: request.query.date,
        page: pageOf(request.query, paging),
      });
      return sendFeed(request, reply, result, null);
    },
  );
}
