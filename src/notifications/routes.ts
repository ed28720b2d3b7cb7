// HTTP routes for notifications (every one needs an access token with the notification scope:
// basic authentication alone is answered 401 "token is required") and repository watches.
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, signedViewer, type RouteAuth } from '../http/auth.js';
import { pageOf, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { isoTime } from '../http/format.js';
import { notFound } from '../errors.js';
import { parseTime } from '../issues/input.js';
import { WatchInfo } from '../issues/schemas.js';
import { NotificationSource, NotificationStatus, type NotificationStatusName } from './tables.js';
import type { NotificationFilter } from './tables.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { NotificationService } from './service.js';
import { NotificationCount, NotificationThread, threadsJson, type ThreadsJsonDeps } from './present.js';

const StatusName = Type.Union([Type.Literal('unread'), Type.Literal('read'), Type.Literal('pinned')]);
const SubjectName = Type.Union([
  Type.Literal('issue'),
  Type.Literal('pull'),
  Type.Literal('commit'),
  Type.Literal('repository'),
]);

const ListQuery = Type.Object({
  all: Type.Optional(Type.Boolean({ description: 'If true, show notifications marked as read.' })),
  'status-types': Type.Optional(Type.Array(StatusName, { description: 'unread, read and/or pinned' })),
  'subject-type': Type.Optional(Type.Array(SubjectName, { description: 'filter by subject type' })),
  since: Type.Optional(Type.String({ description: 'only notifications updated after this time' })),
  before: Type.Optional(Type.String({ description: 'only notifications updated before this time' })),
  page: Type.Optional(Type.Integer()),
  limit: Type.Optional(Type.Integer()),
});

const MarkQuery = Type.Object({
  last_read_at: Type.Optional(
    Type.String({ description: 'notifications updated at or before this time are marked (default now)' }),
  ),
  all: Type.Optional(Type.String({ description: 'If true, mark all notifications whatever their status.' })),
  'status-types': Type.Optional(Type.Array(StatusName, { description: 'statuses to mark; default unread' })),
  'to-status': Type.Optional(StatusName),
});

import { RepoParams } from '../http/params.js';
const ThreadParams = Type.Object({ id: Type.Integer() });
const ToStatusQuery = Type.Object({ 'to-status': Type.Optional(StatusName) });
const Threads = Type.Array(NotificationThread);

type ListQuery = {
  all?: boolean | undefined;
  'status-types'?: NotificationStatusName[] | undefined;
  'subject-type'?: Array<keyof typeof NotificationSource> | undefined;
  since?: string | undefined;
  before?: string | undefined;
};

type MarkQuery = {
  last_read_at?: string | undefined;
  all?: string | undefined;
  'status-types'?: NotificationStatusName[] | undefined;
  'to-status'?: NotificationStatusName | undefined;
};

const statusesOf = (names: NotificationStatusName[]) => [...new Set(names.map((n) => NotificationStatus[n]))];

function listFilter(userId: number, q: ListQuery, repoId?: number): NotificationFilter {
  return {
    userId,
    repoId,
    statuses: q.all
      ? undefined
      : statusesOf(q['status-types']?.length ? q['status-types'] : ['unread', 'pinned']),
    sources: q['subject-type']?.length
      ? [...new Set(q['subject-type'].map((s) => NotificationSource[s]))]
      : undefined,
    since: q.since !== undefined ? parseTime(q.since, 'since') : undefined,
    before: q.before !== undefined ? parseTime(q.before, 'before') : undefined,
  };
}

function markFilter(userId: number, q: MarkQuery, repoId?: number): NotificationFilter {
  const lastRead =
    q.last_read_at !== undefined && q.last_read_at !== ''
      ? parseTime(q.last_read_at, 'last_read_at')
      : Math.floor(Date.now() / 1000);
  const all = q.all === 'true' || q.all === '1';
  return {
    userId,
    repoId,
    statuses: all ? undefined : statusesOf(q['status-types']?.length ? q['status-types'] : ['unread']),
    before: lastRead,
  };
}

export interface NotificationsRoutesDeps extends ThreadsJsonDeps {
  repos: Pick<RepoService, 'requireRepo' | 'getByIds' | 'accessMany'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  notifications: NotificationService;
  paging: PagingSettings;
}

export function notificationsRoutes(app: Api, deps: NotificationsRoutesDeps): void {
  const { notifications, repos, users, paging, rootUrl } = deps;
  const tags = ['notification'];
  const auth: RouteAuth = { scope: 'notification', require: 'token' };

  async function repoOf(request: FastifyRequest) {
    const { owner, repo } = request.params as { owner: string; repo: string };
    return (await repos.requireRepo(owner, repo, request.viewer, 'read')).repo;
  }

  async function listThreads(request: FastifyRequest, reply: FastifyReply, repoId?: number) {
    const viewer = signedViewer(request);
    const q = request.query as ListQuery & { page?: number; limit?: number };
    const filter = listFilter(viewer.id, q, repoId);
    const page = pageOf(q, paging);
    const [rows, total] = await notifications.list(filter, page);
    setPageHeaders(request, reply, total, page, rootUrl);
    return threadsJson(deps, rows, viewer);
  }

  async function markThreads(request: FastifyRequest, reply: FastifyReply, repoId?: number) {
    const viewer = signedViewer(request);
    const q = request.query as MarkQuery;
    const filter = markFilter(viewer.id, q, repoId);
    const rows = await notifications.markAll(filter, NotificationStatus[q['to-status'] ?? 'read']);
    return reply.code(205).send(await threadsJson(deps, rows, viewer));
  }

  app.get(
    '/notifications',
    {
      schema: {
        tags,
        summary: "List users's notification threads",
        querystring: ListQuery,
        response: { 200: Threads },
      },
      config: { auth },
    },
    async (request, reply) => listThreads(request, reply),
  );

  app.put(
    '/notifications',
    {
      schema: {
        tags,
        summary: 'Mark notification threads as read, pinned or unread',
        querystring: MarkQuery,
        response: { 205: Threads },
      },
      config: { auth },
    },
    async (request, reply) => markThreads(request, reply),
  );

  app.get(
    '/notifications/new',
    {
      schema: {
        tags,
        summary: 'Check if unread notifications exist',
        response: { 200: NotificationCount },
      },
      config: { auth },
    },
    async (request) => ({ new: await notifications.countUnread(signedViewer(request).id) }),
  );

  app.get(
    '/notifications/threads/:id',
    {
      schema: {
        tags,
        summary: 'Get notification thread by ID',
        params: ThreadParams,
        response: { 200: NotificationThread },
      },
      config: { auth },
    },
    async (request) => {
      const viewer = signedViewer(request);
      const row = await notifications.requireThread(viewer, request.params.id);
      const [json] = await threadsJson(deps, [row], viewer);
      if (!json) throw notFound(`notification does not exist [id: ${row.id}]`);
      return json;
    },
  );

  app.patch(
    '/notifications/threads/:id',
    {
      schema: {
        tags,
        summary: 'Mark notification thread as read by ID',
        params: ThreadParams,
        querystring: ToStatusQuery,
        response: { 205: NotificationThread },
      },
      config: { auth },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const row = await notifications.requireThread(viewer, request.params.id);
      const [visible] = await threadsJson(deps, [row], viewer);
      if (!visible) throw notFound(`notification does not exist [id: ${row.id}]`);
      const updated = await notifications.setThreadStatus(
        row,
        NotificationStatus[request.query['to-status'] ?? 'read'],
      );
      const [json] = await threadsJson(deps, [updated], viewer);
      return reply.code(205).send(json ?? visible);
    },
  );

  app.get(
    '/repos/:owner/:repo/notifications',
    {
      schema: {
        tags,
        summary: "List users's notification threads on a specific repo",
        params: RepoParams,
        querystring: ListQuery,
        response: { 200: Threads },
      },
      config: { auth },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      return listThreads(request, reply, repo.id);
    },
  );

  app.put(
    '/repos/:owner/:repo/notifications',
    {
      schema: {
        tags,
        summary: 'Mark notification threads as read, pinned or unread on a specific repo',
        params: RepoParams,
        querystring: MarkQuery,
        response: { 205: Threads },
      },
      config: { auth },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      return markThreads(request, reply, repo.id);
    },
  );

  // Repository watches (Forgejo's /repos/{owner}/{repo}/subscription)

  const watchAuth: RouteAuth = { scope: 'repository', require: 'signed' };
  const watchTags = ['repository'];

  async function watchInfo(request: FastifyRequest, createdUnix: number) {
    const { owner, repo } = request.params as { owner: string; repo: string };
    const row = await repos.requireRepo(owner, repo, request.viewer, 'read');
    const ownerRow = (await users.getById(row.repo.owner_id))!;
    const repoUrl = `${rootUrl}api/v1/repos/${ownerRow.name}/${row.repo.name}`;
    return {
      subscribed: true,
      ignored: false,
      reason: null,
      created_at: isoTime(createdUnix),
      url: `${repoUrl}/subscription`,
      repository_url: repoUrl,
    };
  }

  app.get(
    '/repos/:owner/:repo/subscription',
    {
      schema: {
        tags: watchTags,
        summary: 'Check if the current user is watching a repo',
        params: RepoParams,
        response: { 200: WatchInfo },
      },
      config: { auth: watchAuth },
    },
    async (request) => {
      const repo = await repoOf(request);
      const w = await notifications.getWatch(repo, signedIn(request).user);
      if (!w) throw notFound();
      return watchInfo(request, w.created_unix);
    },
  );

  app.put(
    '/repos/:owner/:repo/subscription',
    {
      schema: {
        tags: watchTags,
        summary: 'Watch a repo',
        params: RepoParams,
        response: { 200: WatchInfo },
      },
      config: { auth: watchAuth },
    },
    async (request) => {
      const repo = await repoOf(request);
      const w = await notifications.watch(repo, signedIn(request).user);
      return watchInfo(request, w.created_unix);
    },
  );

  app.delete(
    '/repos/:owner/:repo/subscription',
    {
      schema: {
        tags: watchTags,
        summary: 'Unwatch a repo',
        params: RepoParams,
        response: { 204: Type.Null() },
      },
      config: { auth: watchAuth },
    },
    async (request, reply) => {
      const repo = await repoOf(request);
      await notifications.unwatch(repo, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );
}
