// The site administration's runners (/admin/actions/runners): the runners of the whole site, their
// status and labels, and deleting one (/admin/actions/runners/{id}/delete), as Forgejo has them.
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { AdminLayout, AdminTable, requireAdmin } from '../web/admin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { DangerForm } from '../web/settings.js';
import { labelName, parseLabels, RUNNER_OFFLINE_SECONDS, type RunnerService } from './runners.js';
import type { ActionsService } from './service.js';
import type { RunnerRow } from './tables.js';

export interface RunnerAdminPagesDeps {
  actions: Pick<ActionsService, 'enabled'>;
  runners: Pick<RunnerService, 'list' | 'delete'>;
  pageSize: number;
}

export function runnerAdminPages(deps: RunnerAdminPagesDeps): PageRoutes {
  return (app, web) => registerRunnerAdminPages(app, web, deps);
}

/** The runners of the site itself (not of an owner or a repository). */
const SITE = { ownerId: null, repoId: null };

function RunnerList(props: {
  page: PageContext;
  enabled: boolean;
  rows: RunnerRow[];
  busy: Set<number>;
  total: number;
  pageNo: number;
  pageSize: number;
}): VNode {
  const now = Math.floor(Date.now() / 1000);
  return (
    <AdminLayout page={props.page} title={`Runners (${props.total})`} active="/admin/actions/runners">
      {!props.enabled ? (
        <p class="empty">Actions are disabled on this server ([actions] ENABLED = false).</p>
      ) : (
        <>
          <p class="muted">
            Runners registered for the whole site run jobs of every repository. Register one with the token
            from <code>anvil actions generate-runner-token</code> or the API.
          </p>
          {props.rows.length === 0 ? <p class="empty">No runner is registered.</p> : null}
          <AdminTable
            caption="Runners"
            head={['ID', 'Name', 'Status', 'Version', 'Labels', 'Last online', '']}
          >
            {props.rows.map((r) => {
              const online = now - r.last_online_unix < RUNNER_OFFLINE_SECONDS;
              return (
                <tr key={r.id}>
                  <td>{r.id}</td>
                  <td>{r.name}</td>
                  <td>
                    <span class="pill">{!online ? 'Offline' : props.busy.has(r.id) ? 'Active' : 'Idle'}</span>
                  </td>
                  <td>{r.version || '-'}</td>
                  <td>{parseLabels(r.labels).map(labelName).join(', ')}</td>
                  <td>{r.last_online_unix ? <When unix={r.last_online_unix} /> : 'Never'}</td>
                  <td>
                    <DangerForm
                      page={props.page}
                      action={`/admin/actions/runners/${r.id}/delete`}
                      button="Delete"
                      confirm={`Delete the runner ${r.name}? Its token stops working.`}
                    />
                  </td>
                </tr>
              );
            })}
          </AdminTable>
          <Pager
            path="/admin/actions/runners"
            page={props.pageNo}
            pageSize={props.pageSize}
            total={props.total}
          />
        </>
      )}
    </AdminLayout>
  );
}

function registerRunnerAdminPages(app: FastifyInstance, web: Web, deps: RunnerAdminPagesDeps): void {
  const { actions, runners, pageSize } = deps;

  app.get('/admin/actions/runners', async (request, reply) => {
    requireAdmin(web, request);
    const pageNo = pageNumber((request.query as Record<string, unknown>)['page']);
    const [rows, total, busy] = actions.enabled
      ? await runners.list(SITE, pageSize, (pageNo - 1) * pageSize)
      : [[], 0, new Set<number>()];
    return web.send(
      reply,
      <RunnerList
        page={web.page(request)}
        enabled={actions.enabled}
        rows={rows}
        busy={busy}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
      />,
    );
  });

  app.post('/admin/actions/runners/:id/delete', async (request, reply) => {
    requireAdmin(web, request);
    await runners.delete(SITE, Number((request.params as { id: string }).id));
    return web.redirect(reply, '/admin/actions/runners', {
      kind: 'info',
      text: 'The runner has been deleted.',
    });
  });
}
