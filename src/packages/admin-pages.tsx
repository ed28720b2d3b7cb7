// The site administration's packages (/admin/packages): every owner's package versions with their
// sizes, searched by name and type, and deleting one (/admin/packages/delete, `id`), as Forgejo has them.
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { AdminLayout, AdminSearch, AdminTable, formatBytes, requireAdmin } from '../web/admin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm } from '../web/settings.js';
import type { UserService } from '../users/service.js';
import type { PackageService } from './service.js';
import type { VersionWithPackage } from './tables.js';

export interface PackageAdminPagesDeps {
  packages: Pick<PackageService, 'listAll' | 'deleteVersionById'>;
  users: Pick<UserService, 'getByIds'>;
  pageSize: number;
}

export function packageAdminPages(deps: PackageAdminPagesDeps): PageRoutes {
  return (app, web) => registerPackageAdminPages(app, web, deps);
}

type Row = VersionWithPackage & { owner: string; bytes: number };

function PackageList(props: {
  page: PageContext;
  rows: Row[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
  type: string;
}): VNode {
  const params: Record<string, string> = {};
  if (props.q) params['q'] = props.q;
  if (props.type) params['type'] = props.type;
  return (
    <AdminLayout page={props.page} title={`Packages (${props.total})`} active="/admin/packages">
      <AdminSearch
        action="/admin/packages"
        q={props.q}
        label="Search packages"
        keep={props.type ? { type: props.type } : {}}
      />
      {props.rows.length === 0 ? <p class="empty">No package matches.</p> : null}
      <AdminTable caption="Packages" head={['Owner', 'Type', 'Name', 'Version', 'Size', 'Created', '']}>
        {props.rows.map((v) => (
          <tr key={v.id}>
            <td>
              <a href={`/${encodeURIComponent(v.owner)}`}>{v.owner}</a>
            </td>
            <td>{v.type}</td>
            <td>{v.name}</td>
            <td>{v.version}</td>
            <td>{formatBytes(v.bytes)}</td>
            <td>
              <When unix={v.created_unix} />
            </td>
            <td>
              <DangerForm
                page={props.page}
                action="/admin/packages/delete"
                button="Delete"
                confirm={`Delete ${v.type} package ${v.name} version ${v.version}? This cannot be undone.`}
              >
                <input type="hidden" name="id" value={String(v.id)} />
              </DangerForm>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/packages"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={new URLSearchParams(params).toString()}
      />
    </AdminLayout>
  );
}

function registerPackageAdminPages(app: FastifyInstance, web: Web, deps: PackageAdminPagesDeps): void {
  const { packages, users, pageSize } = deps;

  app.get('/admin/packages', async (request, reply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const type = formText(q['type']).trim();
    const [rows, total] = await packages.listAll(
      { q: keyword || undefined, type: type || undefined },
      pageSize,
      (pageNo - 1) * pageSize,
    );
    const owners = await users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
    const named = rows.map((r) => ({
      ...r,
      owner: owners.get(r.owner_id)?.name ?? '?',
      bytes: Number(r.total_size ?? 0),
    }));
    return web.send(
      reply,
      <PackageList
        page={web.page(request)}
        rows={named}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
        type={type}
      />,
    );
  });

  app.post('/admin/packages/delete', async (request, reply) => {
    const admin = requireAdmin(web, request);
    const id = Number(formText((request.body as Record<string, unknown> | undefined)?.['id']));
    const v = await packages.deleteVersionById(Number.isSafeInteger(id) ? id : 0, admin);
    return web.redirect(reply, '/admin/packages', {
      kind: 'info',
      text: `The package ${v.name} version ${v.version} has been deleted.`,
    });
  });
}
