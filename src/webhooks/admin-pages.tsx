// The site administration's webhooks (/admin/hooks): the default hooks (copied into every new
// repository) and the system hooks (fired for every repository), each with an "Add webhook" menu
// of every type and a delete button. Adding and editing them are the pages at
// /admin/default-hooks/... and /admin/system-hooks/... (the webhook pages).
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { AdminLayout, AdminTable, requireAdmin, yesNo } from '../web/admin.js';
import type { PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { DangerForm } from '../web/settings.js';
import { AddHookMenu } from './pages.js';
import type { WebhookService } from './service.js';
import type { WebhookRow } from './tables.js';
import { TYPE_LABELS, isHookType } from './types.js';

export interface HookAdminPagesDeps {
  webhooks: Pick<WebhookService, 'list'>;
  /** The most hooks one page lists of each kind. */
  maxItems: number;
}

export function hookAdminPages(deps: HookAdminPagesDeps): PageRoutes {
  return (app, web) => registerHookAdminPages(app, web, deps);
}

function HookTable(props: { page: PageContext; caption: string; rows: WebhookRow[]; base: string }): VNode {
  if (props.rows.length === 0) return <p class="empty">None yet.</p>;
  return (
    <AdminTable caption={props.caption} head={['ID', 'Type', 'URL', 'Active', '', '']}>
      {props.rows.map((h) => (
        <tr key={h.id}>
          <td>{h.id}</td>
          <td>{isHookType(h.type) ? TYPE_LABELS[h.type] : h.type}</td>
          <td class="admin-url">{h.url}</td>
          <td>{yesNo(h.is_active)}</td>
          <td>
            <a href={`${props.base}/${h.id}`} aria-label={`Edit webhook ${h.id}`}>
              Edit
            </a>
          </td>
          <td>
            <DangerForm
              page={props.page}
              action={`${props.base}/${h.id}/delete`}
              button="Delete"
              confirm={`Delete webhook ${h.id} (${h.url}) and its delivery history?`}
            />
          </td>
        </tr>
      ))}
    </AdminTable>
  );
}

function HooksPage(props: { page: PageContext; defaults: WebhookRow[]; system: WebhookRow[] }): VNode {
  return (
    <AdminLayout page={props.page} title="Webhooks" active="/admin/hooks">
      <section class="settings-section">
        <h2>Default webhooks</h2>
        <p class="muted">Copied into every new repository; changing them here does not change the copies.</p>
        <AddHookMenu base="/admin/default-hooks" label="Add default webhook" />
        <HookTable
          page={props.page}
          caption="Default webhooks"
          rows={props.defaults}
          base="/admin/default-hooks"
        />
      </section>
      <section class="settings-section">
        <h2>System webhooks</h2>
        <p class="muted">Fired for events of every repository of the site.</p>
        <AddHookMenu base="/admin/system-hooks" label="Add system webhook" />
        <HookTable
          page={props.page}
          caption="System webhooks"
          rows={props.system}
          base="/admin/system-hooks"
        />
      </section>
    </AdminLayout>
  );
}

function registerHookAdminPages(app: FastifyInstance, web: Web, deps: HookAdminPagesDeps): void {
  app.get('/admin/hooks', async (request, reply) => {
    requireAdmin(web, request);
    const [rows] = await deps.webhooks.list({ kind: 'site' }, { limit: deps.maxItems, offset: 0, page: 1 });
    return web.send(
      reply,
      <HooksPage
        page={web.page(request)}
        defaults={rows.filter((h) => !h.is_system_webhook)}
        system={rows.filter((h) => h.is_system_webhook)}
      />,
    );
  });
}
