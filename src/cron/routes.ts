// /admin/cron: the scheduled tasks (Forgejo's Cron shape) and running one now.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { PageQuery, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { CronService } from './service.js';

const Cron = Type.Object(
  {
    name: Type.String(),
    schedule: Type.String(),
    next: Type.String({ format: 'date-time' }),
    prev: Type.String({ format: 'date-time' }),
    exec_times: Type.Integer(),
  },
  { title: 'Cron' },
);

export interface CronRoutesDeps {
  cron: Pick<CronService, 'list' | 'runNow'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function cronRoutes(app: Api, deps: CronRoutesDeps): void {
  const { cron, paging, rootUrl } = deps;
  const admin = { scope: 'admin', admin: true } as const;

  app.get(
    '/admin/cron',
    {
      schema: {
        tags: ['admin'],
        operationId: 'adminCronList',
        summary: 'List cron tasks',
        querystring: PageQuery,
        response: { 200: Type.Array(Cron) },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const all = cron.list();
      const rows = all.slice(page.offset, page.offset + page.limit);
      return sendPage(request, reply, [rows, all.length], page, rootUrl, (c) => c);
    },
  );

  app.post(
    '/admin/cron/:task',
    {
      schema: {
        tags: ['admin'],
        operationId: 'adminCronRun',
        summary: 'Run cron task',
        description: 'Starts the task in the background (a run under way is not started twice).',
        params: Type.Object({ task: Type.String() }),
        response: { 204: Type.Null() },
      },
      config: { auth: admin },
    },
    async (request, reply) => {
      cron.runNow(request.params.task);
      return reply.code(204).send(null);
    },
  );
}
