// The site administration's dashboard (/admin: counts, version, uptime, memory, background jobs),
// the background jobs (/admin/monitor/cron, each started with "Run": `op` = the task's name, as
// Forgejo's dashboard form posts it) and the effective configuration (/admin/config, secrets masked).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { Config } from '../config/config.js';
import type { CronService, LastRun } from '../cron/service.js';
import { AdminLayout, AdminTable, formatBytes, requireAdmin } from '../web/admin.js';
import { When } from '../web/components.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import { formList, formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm, Section } from '../web/settings.js';
import { Pager, pageNumber } from '../web/components.js';
import { NoticeType, type NoticeRow } from './tables.js';
import type { OpsService } from './service.js';

type CronStatus = ReturnType<CronService['status']>[number];

export interface OpsAdminPagesDeps {
  ops: Pick<OpsService, 'counts' | 'notices' | 'deleteNotices'>;
  pageSize: number;
  cron: Pick<CronService, 'status' | 'runNow' | 'running'>;
  /** The effective configuration (/admin/config shows it with its secrets masked). */
  config: Config;
  version: string;
  /** How long "Run" waits for a quick task to finish before showing the page again. */
  runWaitMs?: number;
}

export function opsAdminPages(deps: OpsAdminPagesDeps): PageRoutes {
  return (app, web) => registerOpsAdminPages(app, web, deps);
}

const COUNT_LABELS: Array<[string, string]> = [
  ['users', 'Users'],
  ['organizations', 'Organizations'],
  ['repositories', 'Repositories'],
  ['issues', 'Issues and pull requests'],
  ['pulls', 'Pull requests'],
  ['releases', 'Releases'],
  ['packages', 'Packages'],
  ['webhooks', 'Webhooks'],
];

function duration(seconds: number): string {
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [d ? `${d} days` : '', h ? `${h} hours` : '', `${m} minutes`, d || h ? '' : `${s % 60} seconds`]
    .filter(Boolean)
    .join(' ');
}

function LastResult(props: { last: LastRun | undefined; running: boolean }): VNode {
  if (props.running) return <span class="pill">Running</span>;
  if (!props.last) return <span class="muted">Not run yet</span>;
  return props.last.ok ? (
    <span class="pill ok">Succeeded</span>
  ) : (
    <span class="pill failed" title={props.last.message}>
      Failed: {props.last.message}
    </span>
  );
}

function CronTable(props: { page: PageContext; tasks: CronStatus[]; from: string }): VNode {
  return (
    <AdminTable
      caption="Background jobs"
      head={['Job', 'Schedule', 'Next run', 'Previous run', 'Runs', 'Last result', '']}
    >
      {props.tasks.map((t) => (
        <tr key={t.name} data-task={t.name}>
          <td>
            <code>{t.name}</code>
          </td>
          <td>{t.schedule}</td>
          <td>
            <time dateTime={t.next}>{t.next.slice(0, 19).replace('T', ' ')}</time>
          </td>
          <td>{t.ran ? <time dateTime={t.prev}>{t.prev.slice(0, 19).replace('T', ' ')}</time> : '-'}</td>
          <td>{t.exec_times}</td>
          <td>
            <LastResult last={t.last} running={t.running} />
          </td>
          <td>
            <form method="post" action="/admin/monitor/cron" class="inline">
              <CsrfField page={props.page} />
              <input type="hidden" name="from" value={props.from} />
              <button type="submit" name="op" value={t.name} aria-label={`Run ${t.name}`}>
                Run
              </button>
            </form>
          </td>
        </tr>
      ))}
    </AdminTable>
  );
}

function Dashboard(props: {
  page: PageContext;
  counts: Record<string, number>;
  version: string;
  tasks: CronStatus[];
}): VNode {
  const mem = process.memoryUsage();
  return (
    <AdminLayout page={props.page} title="Dashboard" active="/admin">
      <Section title="Statistics">
        <dl class="admin-stats">
          {COUNT_LABELS.map(([key, label]) => (
            <div key={key}>
              <dt>{label}</dt>
              <dd data-count={key}>{props.counts[key] ?? 0}</dd>
            </div>
          ))}
        </dl>
      </Section>
      <Section title="System status">
        <dl class="admin-facts">
          <dt>Version</dt>
          <dd>{props.version}</dd>
          <dt>Server uptime</dt>
          <dd>{duration(process.uptime())}</dd>
          <dt>Node.js</dt>
          <dd>{process.version}</dd>
          <dt>Memory in use (resident set)</dt>
          <dd>{formatBytes(mem.rss)}</dd>
          <dt>JavaScript heap (used of allocated)</dt>
          <dd>
            {formatBytes(mem.heapUsed)} of {formatBytes(mem.heapTotal)}
          </dd>
          <dt>Started</dt>
          <dd>
            <When unix={Math.floor(Date.now() / 1000 - process.uptime())} />
          </dd>
        </dl>
      </Section>
      <Section title="Background jobs">
        <CronTable page={props.page} tasks={props.tasks} from="dashboard" />
      </Section>
    </AdminLayout>
  );
}

function CronPage(props: { page: PageContext; tasks: CronStatus[] }): VNode {
  return (
    <AdminLayout page={props.page} title="Background jobs" active="/admin/monitor/cron">
      <p class="muted">
        The scheduled tasks of this server process. "Run" starts one now; a run under way is not started
        twice.
      </p>
      <CronTable page={props.page} tasks={props.tasks} from="monitor" />
    </AdminLayout>
  );
}

/** Names of settings whose values are secret (shown as ******). */
const SECRET_NAME = /secret|passw|token|jwt|private|credential|salt|access_?key|(^|[a-z])key$/i;
const MASK = '******';

/** A setting's value as text, with secrets (by name, and passwords in URLs) masked. */
function shown(name: string, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (SECRET_NAME.test(name) && !(typeof value === 'boolean')) return value === '' ? '' : MASK;
  if (typeof value === 'string') return value.replace(/(\/\/)([^/@\s]*)@/g, `$1${MASK}@`);
  if (Array.isArray(value)) return value.map((v) => shown(name, v)).join(', ');
  return String(value);
}

/** The configuration as rows of (setting path, value), nested objects flattened, secrets masked. */
export function configRows(obj: Record<string, unknown>, prefix = ''): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(obj)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      if (SECRET_NAME.test(key)) rows.push([name, MASK]);
      else rows.push(...configRows(value as Record<string, unknown>, name));
    } else if (Array.isArray(value) && value.some((v) => v && typeof v === 'object')) {
      rows.push([name, SECRET_NAME.test(key) ? MASK : `${value.length} entries`]);
    } else {
      rows.push([name, shown(key, value)]);
    }
  }
  return rows;
}

function ConfigPage(props: { page: PageContext; config: Config }): VNode {
  const sections = Object.entries(props.config as unknown as Record<string, unknown>);
  return (
    <AdminLayout page={props.page} title="Configuration" active="/admin/config">
      <p class="muted">
        The configuration in effect (app.ini and ANVIL__SECTION__KEY overrides, with defaults). Secret values
        are shown as {MASK}.
      </p>
      {sections.map(([section, value]) =>
        value && typeof value === 'object' && !Array.isArray(value) ? (
          <Section key={section} title={section}>
            <dl class="admin-facts config">
              {configRows(value as Record<string, unknown>).map(([k, v]) => (
                <>
                  <dt>{k}</dt>
                  <dd>{v === '' ? <span class="muted">(empty)</span> : v}</dd>
                </>
              ))}
            </dl>
          </Section>
        ) : null,
      )}
    </AdminLayout>
  );
}

function NoticesPage(props: {
  page: PageContext;
  rows: NoticeRow[];
  total: number;
  pageNo: number;
  pageSize: number;
}): VNode {
  return (
    <AdminLayout page={props.page} title={`System notices (${props.total})`} active="/admin/notices">
      {props.rows.length === 0 ? (
        <p class="empty">No notice. Failed background jobs leave one here.</p>
      ) : (
        <>
          <form method="post" action="/admin/notices/delete" id="notices">
            <CsrfField page={props.page} />
            <AdminTable caption="System notices" head={['', 'ID', 'Type', 'Description', 'Created']}>
              {props.rows.map((n) => (
                <tr key={n.id}>
                  <td>
                    <input
                      type="checkbox"
                      name="ids[]"
                      value={String(n.id)}
                      aria-label={`Select notice ${n.id}`}
                    />
                  </td>
                  <td>{n.id}</td>
                  <td>{n.type === NoticeType.Task ? 'Background job' : 'Repository'}</td>
                  <td class="admin-url">{n.description}</td>
                  <td>
                    <When unix={n.created_unix} />
                  </td>
                </tr>
              ))}
            </AdminTable>
            <p>
              <button type="submit">Delete selected</button>
            </p>
          </form>
          <DangerForm
            page={props.page}
            action="/admin/notices/empty"
            button="Delete all notices"
            confirm="Delete every system notice?"
          />
          <Pager path="/admin/notices" page={props.pageNo} pageSize={props.pageSize} total={props.total} />
        </>
      )}
    </AdminLayout>
  );
}

function registerOpsAdminPages(app: FastifyInstance, web: Web, deps: OpsAdminPagesDeps): void {
  const { ops, cron } = deps;
  const waitMs = deps.runWaitMs ?? 3000;

  app.get('/admin', async (request, reply) => {
    requireAdmin(web, request);
    const counts = await ops.counts();
    return web.send(
      reply,
      <Dashboard page={web.page(request)} counts={counts} version={deps.version} tasks={cron.status()} />,
    );
  });

  app.get('/admin/monitor/cron', async (request, reply) => {
    requireAdmin(web, request);
    return web.send(reply, <CronPage page={web.page(request)} tasks={cron.status()} />);
  });

  /** Starts the task named by `op`; waits a little so that a quick one shows its result. */
  const run = async (request: FastifyRequest, reply: Parameters<Web['redirect']>[0]) => {
    requireAdmin(web, request);
    const body = request.body as Record<string, unknown> | undefined;
    const op = formText(body?.['op']);
    const back = formText(body?.['from']) === 'monitor' ? '/admin/monitor/cron' : '/admin';
    if (!cron.status().some((t) => t.name === op)) {
      return web.redirect(reply, back, { kind: 'error', text: `There is no background job named "${op}".` });
    }
    cron.runNow(op);
    const running = cron.running(op);
    if (running) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        running.catch(() => undefined),
        new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
      ]);
      clearTimeout(timer);
    }
    return web.redirect(reply, back, { kind: 'info', text: `Started the background job ${op}.` });
  };
  app.post('/admin', run);
  app.post('/admin/monitor/cron', run);

  app.get('/admin/notices', async (request, reply) => {
    requireAdmin(web, request);
    const pageNo = pageNumber((request.query as Record<string, unknown>)['page']);
    const [rows, total] = await ops.notices(deps.pageSize, (pageNo - 1) * deps.pageSize);
    return web.send(
      reply,
      <NoticesPage
        page={web.page(request)}
        rows={rows}
        total={total}
        pageNo={pageNo}
        pageSize={deps.pageSize}
      />,
    );
  });

  app.post('/admin/notices/delete', async (request, reply) => {
    requireAdmin(web, request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const ids = [...formList(body['ids[]']), ...formList(body['ids'])]
      .map(Number)
      .filter((n) => Number.isSafeInteger(n) && n > 0);
    await ops.deleteNotices(ids);
    return web.redirect(reply, '/admin/notices', {
      kind: 'info',
      text: ids.length ? `${ids.length} notices deleted.` : 'No notice was selected.',
    });
  });

  app.post('/admin/notices/empty', async (request, reply) => {
    requireAdmin(web, request);
    await ops.deleteNotices('all');
    return web.redirect(reply, '/admin/notices', { kind: 'info', text: 'All system notices were deleted.' });
  });

  app.get('/admin/config', async (request, reply) => {
    requireAdmin(web, request);
    return web.send(reply, <ConfigPage page={web.page(request)} config={deps.config} />);
  });
}
