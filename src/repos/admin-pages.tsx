// The site administration's repositories: every repository with its size (/admin/repos: search,
// sort, pages, delete) and the unadopted ones, bare repositories on disk no row refers to
// (/admin/repos/unadopted: adopt or delete). Forgejo's addresses and form fields.
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import type { UnadoptedService } from './unadopted.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';
import type { UserService } from '../users/service.js';
import { ORDER_BY, type OrderBy } from './list-filter.js';
import { AdminLayout, AdminSearch, AdminTable, formatBytes, requireAdmin, yesNo } from '../web/admin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm } from '../web/settings.js';

export interface RepoAdminPagesDeps {
  repos: Pick<RepoService, 'list' | 'getById' | 'delete'>;
  users: Pick<UserService, 'getByIds'>;
  unadopted: Pick<UnadoptedService, 'list' | 'adopt' | 'delete'>;
  pageSize: number;
}

export function repoAdminPages(deps: RepoAdminPagesDeps): PageRoutes {
  return (app, web) => registerRepoAdminPages(app, web, deps);
}

const SORTS: Array<{ value: OrderBy; label: string }> = [
  { value: 'newest', label: 'Newest' },
  { value: 'oldest', label: 'Oldest' },
  { value: 'alphabetically', label: 'Alphabetically' },
  { value: 'recentupdate', label: 'Recently updated' },
  { value: 'reversesize', label: 'Largest' },
  { value: 'size', label: 'Smallest' },
];

function RepoList(props: {
  page: PageContext;
  rows: Array<RepoRow & { owner: string }>;
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
  sort: OrderBy;
}): VNode {
  const query = new URLSearchParams({ sort: props.sort, ...(props.q ? { q: props.q } : {}) }).toString();
  return (
    <AdminLayout page={props.page} title={`Repositories (${props.total})`} active="/admin/repos">
      <div class="admin-toolbar">
        <AdminSearch
          action="/admin/repos"
          q={props.q}
          label="Search repositories"
          keep={{ sort: props.sort }}
        />
        <nav class="admin-sort" aria-label="Sort">
          {SORTS.map((s) => (
            <a
              key={s.value}
              href={`/admin/repos?${new URLSearchParams({ sort: s.value, ...(props.q ? { q: props.q } : {}) })}`}
              aria-current={s.value === props.sort ? 'true' : undefined}
            >
              {s.label}
            </a>
          ))}
        </nav>
        <a class="button" href="/admin/repos/unadopted">
          Unadopted repositories
        </a>
      </div>
      {props.rows.length === 0 ? <p class="empty">No repository matches.</p> : null}
      <AdminTable
        caption="Repositories"
        head={['ID', 'Owner', 'Name', 'Private', 'Stars', 'Forks', 'Size', 'Created', '']}
      >
        {props.rows.map((r) => (
          <tr key={r.id}>
            <td>{r.id}</td>
            <td>
              <a href={`/${encodeURIComponent(r.owner)}`}>{r.owner}</a>
            </td>
            <td>
              <a href={`/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.name)}`}>{r.name}</a>
            </td>
            <td>{yesNo(r.is_private)}</td>
            <td>{r.num_stars}</td>
            <td>{r.num_forks}</td>
            <td>{formatBytes(Number(r.size))}</td>
            <td>
              <When unix={r.created_unix} />
            </td>
            <td>
              <DangerForm
                page={props.page}
                action="/admin/repos/delete"
                button="Delete"
                confirm={`Delete the repository ${r.owner}/${r.name} with everything in it? This cannot be undone.`}
              >
                <input type="hidden" name="id" value={String(r.id)} />
              </DangerForm>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/repos"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={query}
      />
    </AdminLayout>
  );
}

function UnadoptedList(props: {
  page: PageContext;
  rows: string[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
}): VNode {
  return (
    <AdminLayout page={props.page} title="Unadopted repositories" active="/admin/repos">
      <p class="muted">
        Bare repositories in the repositories directory that no repository of this site refers to. Search with
        globs over owner/name.
      </p>
      <AdminSearch action="/admin/repos/unadopted" q={props.q} label="Search unadopted repositories" />
      {props.rows.length === 0 ? <p class="empty">No unadopted repository found.</p> : null}
      <AdminTable caption="Unadopted repositories" head={['Directory', '', '']}>
        {props.rows.map((dir) => (
          <tr key={dir}>
            <td>
              <code>{dir}</code>
            </td>
            <td>
              <form method="post" action="/admin/repos/unadopted" class="inline">
                <CsrfField page={props.page} />
                <input type="hidden" name="id" value={dir} />
                <input type="hidden" name="q" value={props.q} />
                <button type="submit" name="action" value="adopt" aria-label={`Adopt ${dir}`}>
                  Adopt files
                </button>
              </form>
            </td>
            <td>
              <DangerForm
                page={props.page}
                action="/admin/repos/unadopted"
                button="Delete files"
                confirm={`Delete the files of ${dir}? This cannot be undone.`}
              >
                <input type="hidden" name="id" value={dir} />
                <input type="hidden" name="q" value={props.q} />
                <input type="hidden" name="action" value="delete" />
              </DangerForm>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/repos/unadopted"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={props.q ? `q=${encodeURIComponent(props.q)}` : ''}
      />
    </AdminLayout>
  );
}

function registerRepoAdminPages(app: FastifyInstance, web: Web, deps: RepoAdminPagesDeps): void {
  const { repos, users, unadopted, pageSize } = deps;

  app.get('/admin/repos', async (request, reply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const wanted = formText(q['sort']);
    const sort: OrderBy = wanted in ORDER_BY ? (wanted as OrderBy) : 'newest';
    const [rows, total] = await repos.list(
      { keyword: keyword || undefined, orderBy: sort },
      pageSize,
      (pageNo - 1) * pageSize,
    );
    const owners = await users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
    const named = rows.map((r) => ({ ...r, owner: owners.get(r.owner_id)?.name ?? '?' }));
    return web.send(
      reply,
      <RepoList
        page={web.page(request)}
        rows={named}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
        sort={sort}
      />,
    );
  });

  app.post('/admin/repos/delete', async (request, reply) => {
    const admin = requireAdmin(web, request);
    const id = Number(formText((request.body as Record<string, unknown> | undefined)?.['id']));
    const repo = Number.isSafeInteger(id) && id > 0 ? await repos.getById(id) : undefined;
    if (!repo) throw new AppError('not_found', 'The repository does not exist.');
    await repos.delete(repo, admin.id);
    return web.redirect(reply, '/admin/repos', {
      kind: 'info',
      text: `The repository ${repo.name} has been deleted.`,
    });
  });

  app.get('/admin/repos/unadopted', async (request, reply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const [rows, total] = await unadopted.list(keyword, pageSize, (pageNo - 1) * pageSize);
    return web.send(
      reply,
      <UnadoptedList
        page={web.page(request)}
        rows={rows}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
      />,
    );
  });

  app.post('/admin/repos/unadopted', async (request, reply) => {
    const admin = requireAdmin(web, request);
    const b = (request.body ?? {}) as Record<string, unknown>;
    const dir = formText(b['id']);
    const action = formText(b['action']);
    const q = formText(b['q']);
    const back = `/admin/repos/unadopted${q ? `?q=${encodeURIComponent(q)}` : ''}`;
    const [owner, name, ...rest] = dir.split('/');
    if (!owner || !name || rest.length || (action !== 'adopt' && action !== 'delete')) {
      return web.redirect(reply, back, {
        kind: 'error',
        text: 'Choose an unadopted repository and an action.',
      });
    }
    try {
      if (action === 'adopt') await unadopted.adopt(admin, owner, name);
      else await unadopted.delete(owner, name);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return web.redirect(reply, back, { kind: 'error', text: err.message });
    }
    return web.redirect(reply, back, {
      kind: 'info',
      text:
        action === 'adopt'
          ? `The files of ${dir} are now a repository.`
          : `The files of ${dir} were deleted.`,
    });
  });
}
