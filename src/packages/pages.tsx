// The packages web pages, as Forgejo lays them out: an owner's packages (/{owner}/-/packages, one
// row per package: its latest version and how many it has; filtered by type and searched, paged), a version's page with its install commands, files (sizes,
// digests, downloads) and metadata, the versions list, and deleting a version (owner or admin, POST
// with CSRF). Reading follows the same permission layer as the API (PackageService.requireOwner):
// a private owner's packages are not found by others.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { Pager, When, formatBytes, pageNumber } from '../web/components.js';
import { Icon } from '../web/icons.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { DangerForm } from '../web/settings.js';
import type { PackageService } from './service.js';
import { InstallBlocks } from './pages-install.js';
import { hidden, identityOf, param } from './pages-common.js';
import { PACKAGE_TYPES } from './tables.js';

export interface PackagePagesDeps {
  packages: Pick<
    PackageService,
    | 'requireOwner'
    | 'requireVersion'
    | 'requirePackage'
    | 'listPackages'
    | 'filesOf'
    | 'deleteVersion'
    | 'reposByIds'
  >;
  rootUrl: string;
  pageSize: number;
}

const TYPES: readonly string[] = [...PACKAGE_TYPES].sort();

const q = (request: FastifyRequest, name: string): string => {
  const v = (request.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
};
export function packagePages(deps: PackagePagesDeps): PageRoutes {
  return (app, web) => {
    const { packages } = deps;
    const root = deps.rootUrl.replace(/\/+$/, '');

    app.get('/:owner/-/packages', async (request, reply) => {
      const owner = await hidden(() =>
        packages.requireOwner(param(request, 'owner'), identityOf(request), 'read'),
      );
      const type = TYPES.includes(q(request, 'type')) ? q(request, 'type') : '';
      const search = q(request, 'q').trim();
      const pageNo = pageNumber(q(request, 'page'));
      const [rows, total] = await packages.listPackages(
        owner,
        { type: type || undefined, q: search || undefined },
        deps.pageSize,
        (pageNo - 1) * deps.pageSize,
      );
      const base = `/${owner.name}/-/packages`;
      const query = new URLSearchParams({ ...(type ? { type } : {}), ...(search ? { q: search } : {}) });
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Packages · ${owner.name}`}>
          <h2>
            <Icon name="package" /> Packages of{' '}
            <a class="underline" href={`/${owner.name}`}>
              {owner.name}
            </a>{' '}
            ({total})
          </h2>
          <form method="get" action={base} class="search" role="search">
            <label>
              Type{' '}
              <select name="type">
                <option value="">All</option>
                {TYPES.map((t) => (
                  <option value={t} selected={t === type}>
                    {t}
                  </option>
                ))}
              </select>
            </label>{' '}
            <label>
              Name <input type="search" name="q" value={search} />
            </label>{' '}
            <button type="submit">Search</button>
          </form>
          {rows.length === 0 ? <p class="empty">No packages.</p> : null}
          <ul class="list">
            {rows.map((r) => {
              const pkg = `${base}/${r.type}/${encodeURIComponent(r.name)}`;
              const count = Number(r.version_count);
              return (
                <li>
                  <a class="title" href={`${pkg}/${encodeURIComponent(r.version)}`}>
                    {r.name}
                  </a>{' '}
                  <span class="label">{r.type}</span>
                  <p class="muted">
                    {r.version} · published <When unix={r.created_unix} /> ·{' '}
                    <a href={`${pkg}/versions`}>{count === 1 ? '1 version' : `${count} versions`}</a>
                  </p>
                </li>
              );
            })}
          </ul>
          <Pager path={base} page={pageNo} pageSize={deps.pageSize} total={total} query={query.toString()} />
        </Layout>,
      );
    });

    const opened = async (request: FastifyRequest) => {
      const identity = identityOf(request);
      const owner = await hidden(() => packages.requireOwner(param(request, 'owner'), identity, 'read'));
      const found = await hidden(() =>
        packages.requireVersion(
          owner,
          param(request, 'type'),
          param(request, 'name'),
          param(request, 'version'),
          identity,
        ),
      );
      return { owner, ...found };
    };

    app.get('/:owner/-/packages/:type/:name/:version', async (request, reply) => {
      const { owner, pkg, version } = await opened(request);
      const files = await packages.filesOf([version.id]);
      const page = web.page(request);
      const user = request.web.user;
      const mayDelete = !!user && (user.is_admin === 1 || user.id === owner.id);
      const base = `/${owner.name}/-/packages/${pkg.type}/${encodeURIComponent(pkg.name)}`;
      let meta: Record<string, unknown> = {};
      try {
        meta = JSON.parse(version.metadata_json) as Record<string, unknown>;
      } catch {
        meta = {};
      }
      const str = (k: string) => (typeof meta[k] === 'string' ? (meta[k] as string) : '');
      const homepage = str('project_url') || str('homepage') || str('ProjectURL');
      const licence = str('license') || str('licence');
      const description = str('description');
      const deps = meta['dependencies'];
      const repo =
        pkg.repo_id === null ? undefined : (await packages.reposByIds([pkg.repo_id])).get(pkg.repo_id);
      return web.send(
        reply,
        <Layout page={page} title={`${pkg.name} ${version.version} · ${owner.name}`}>
          <p>
            <a href={`/${owner.name}/-/packages`}>
              <Icon name="package" /> Packages of {owner.name}
            </a>
          </p>
          <h2>
            {pkg.name} <span class="label">{pkg.type}</span>
          </h2>
          <p class="muted">
            Version {version.version} · published <When unix={version.created_unix} /> ·{' '}
            {version.download_count} downloads · <a href={`${base}/versions`}>All versions</a>
            {repo ? (
              <>
                {' · '}
                <a href={`/${owner.name}/${repo.name}`}>{`${owner.name}/${repo.name}`}</a>
              </>
            ) : null}
            {mayDelete ? (
              <>
                {' · '}
                <a href={`${base}/settings`}>Settings</a>
              </>
            ) : null}
          </p>
          {description ? <p>{description}</p> : null}
          <InstallBlocks
            target={{ root, owner: owner.name, type: pkg.type, name: pkg.name, version: version.version }}
          />
          <section aria-labelledby="meta-heading">
            <h3 id="meta-heading">Details</h3>
            <dl>
              {licence ? (
                <>
                  <dt>Licence</dt>
                  <dd>{licence}</dd>
                </>
              ) : null}
              {homepage && /^https?:\/\//.test(homepage) ? (
                <>
                  <dt>Homepage</dt>
                  <dd>
                    <a href={homepage} rel="nofollow noopener">
                      {homepage}
                    </a>
                  </dd>
                </>
              ) : null}
              {deps && typeof deps === 'object' && Object.keys(deps).length ? (
                <>
                  <dt>Dependencies</dt>
                  <dd>
                    <ul>
                      {Object.entries(deps as Record<string, unknown>).map(([n, v]) => (
                        <li>
                          {n} {typeof v === 'string' ? v : ''}
                        </li>
                      ))}
                    </ul>
                  </dd>
                </>
              ) : null}
            </dl>
          </section>
          <section aria-labelledby="files-heading">
            <h3 id="files-heading">Files</h3>
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Size</th>
                  <th>SHA-256</th>
                </tr>
              </thead>
              <tbody>
                {files.map((f) => (
                  <tr>
                    <td>
                      <a href={`${base}/${encodeURIComponent(version.version)}/files/${f.id}`}>{f.name}</a>
                    </td>
                    <td>{formatBytes(f.size)}</td>
                    <td>
                      <code class="digest">{f.hash_sha256}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          {mayDelete ? (
            <DangerForm
              page={page}
              action={`${base}/${encodeURIComponent(version.version)}/settings`}
              button="Delete this version"
              confirm={`Delete ${pkg.name} ${version.version}? Its files are removed.`}
            >
              <input type="hidden" name="action" value="delete" />
            </DangerForm>
          ) : null}
        </Layout>,
      );
    });

    app.get('/:owner/-/packages/:type/:name/:version/files/:id', async (request, reply) => {
      const { owner, pkg, version } = await opened(request);
      const file = (await packages.filesOf([version.id])).find((f) => String(f.id) === param(request, 'id'));
      if (!file) throw new AppError('not_found', 'file does not exist');
      const path =
        pkg.type === 'generic'
          ? `${encodeURIComponent(pkg.name)}/${encodeURIComponent(version.version)}/${encodeURIComponent(file.name)}`
          : '';
      if (path) return reply.redirect(`/api/packages/${owner.name}/generic/${path}`);
      return reply.redirect(
        `/api/v1/packages/${owner.name}/${pkg.type}/${encodeURIComponent(pkg.name)}/${encodeURIComponent(version.version)}/files`,
      );
    });

    app.post('/:owner/-/packages/:type/:name/:version/settings', async (request, reply) => {
      const user = web.requireUser(request);
      const { owner, pkg, version } = await opened(request);
      if (!(user.is_admin === 1 || user.id === owner.id))
        throw new AppError('forbidden', 'you may not delete this package');
      await packages.deleteVersion(pkg, version, user);
      return web.redirect(reply, `/${owner.name}/-/packages`, {
        kind: 'info',
        text: `${pkg.name} ${version.version} has been deleted.`,
      });
    });
  };
}
