// A package's own pages, as Forgejo lays them out: its versions
// (/{owner}/-/packages/{type}/{name}/versions), its settings (link to one of the owner's
// repositories, or unlink; writers of the owner's packages only), and a repository's packages
// (/{owner}/{repo}/packages: those linked to it). Reading follows the API's permission layer
// (PackageService.requireOwner); what a viewer may not read is not found.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoService } from '../repos/service.js';
import { CsrfField, Layout } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { Icon } from '../web/icons.js';
import type { PageRoutes } from '../web/plugin.js';
import type { PackageService } from './service.js';
import { hidden, identityOf, param } from './pages-common.js';

export interface PackageOwnPagesDeps extends OpenRepoDeps {
  packages: Pick<
    PackageService,
    'requireOwner' | 'requirePackage' | 'versionsOf' | 'listPackages' | 'link' | 'unlink' | 'reposByIds'
  >;
  repos: OpenRepoDeps['repos'] & Pick<RepoService, 'list'>;
  pageSize: number;
}

const enc = encodeURIComponent;

export function packageOwnPages(deps: PackageOwnPagesDeps): PageRoutes {
  return (app, web) => {
    const { packages } = deps;

    const opened = async (request: FastifyRequest, need: 'read' | 'write') => {
      const identity = identityOf(request);
      const owner = await hidden(() => packages.requireOwner(param(request, 'owner'), identity, need));
      const pkg = await hidden(() =>
        packages.requirePackage(owner, param(request, 'type'), param(request, 'name'), identity),
      );
      const base = `/${enc(owner.name)}/-/packages/${pkg.type}/${enc(pkg.name)}`;
      return { owner, pkg, base };
    };
    /** Whether the viewer may change the owner's packages (the API's write check). */
    const mayWrite = async (request: FastifyRequest, ownerName: string) => {
      if (!request.web.user) return false;
      try {
        await packages.requireOwner(ownerName, identityOf(request), 'write');
        return true;
      } catch {
        return false;
      }
    };

    app.get('/:owner/-/packages/:type/:name/versions', async (request, reply) => {
      const { owner, pkg, base } = await opened(request, 'read');
      const versions = (await packages.versionsOf(pkg)).reverse();
      const pageNo = pageNumber((request.query as Record<string, string>)['page']);
      const shown = versions.slice((pageNo - 1) * deps.pageSize, pageNo * deps.pageSize);
      const repo =
        pkg.repo_id === null ? undefined : (await packages.reposByIds([pkg.repo_id])).get(pkg.repo_id);
      const writer = await mayWrite(request, owner.name);
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`${pkg.name} versions · ${owner.name}`}>
          <p>
            <a href={`/${enc(owner.name)}/-/packages`}>
              <Icon name="package" /> Packages of {owner.name}
            </a>
          </p>
          <h2>
            {pkg.name} <span class="label">{pkg.type}</span> <span class="count">{versions.length}</span>
          </h2>
          <p class="muted">
            {repo ? (
              <>
                Linked to <a href={`/${enc(owner.name)}/${enc(repo.name)}`}>{`${owner.name}/${repo.name}`}</a>
              </>
            ) : (
              'Not linked to a repository'
            )}
            {writer ? (
              <>
                {' · '}
                <a href={`${base}/settings`}>Settings</a>
              </>
            ) : null}
          </p>
          <ul class="list">
            {shown.map((v) => (
              <li>
                <div>
                  <a class="title" href={`${base}/${enc(v.version)}`}>
                    {v.version}
                  </a>
                  <p class="muted">
                    published <When unix={v.created_unix} /> · {v.download_count} downloads
                  </p>
                </div>
              </li>
            ))}
          </ul>
          <Pager path={`${base}/versions`} page={pageNo} pageSize={deps.pageSize} total={versions.length} />
        </Layout>,
      );
    });

    const settingsPage = async (request: FastifyRequest, error?: string) => {
      web.requireUser(request);
      const { owner, pkg, base } = await opened(request, 'read');
      if (!(await mayWrite(request, owner.name)))
        throw new AppError('forbidden', 'you may not change the settings of this package');
      const repo =
        pkg.repo_id === null ? undefined : (await packages.reposByIds([pkg.repo_id])).get(pkg.repo_id);
      const [repos] = repo
        ? [[]]
        : await deps.repos.list({ ownerId: owner.id, orderBy: 'alphabetically' }, 500, 0);
      const page = web.page(request);
      return (
        <Layout page={page} title={`${pkg.name} settings · ${owner.name}`}>
          <p>
            <a href={`${base}/versions`}>
              <Icon name="package" /> {pkg.name}
            </a>
          </p>
          <h2>Settings of {pkg.name}</h2>
          <section class="card" aria-labelledby="link-heading">
            <h3 id="link-heading">Repository link</h3>
            {repo ? (
              <form method="post" action={`${base}/settings`}>
                <CsrfField page={page} />
                <input type="hidden" name="action" value="unlink" />
                <p>
                  Linked to{' '}
                  <a href={`/${enc(owner.name)}/${enc(repo.name)}`}>{`${owner.name}/${repo.name}`}</a>: the
                  package is listed on the repository's Packages tab.
                </p>
                <button type="submit">Unlink</button>
              </form>
            ) : (
              <form method="post" action={`${base}/settings`}>
                <CsrfField page={page} />
                <input type="hidden" name="action" value="link" />
                <div class={error ? 'field invalid' : 'field'}>
                  <label for="f-repo_id">Repository</label>
                  <select
                    id="f-repo_id"
                    name="repo_id"
                    required
                    aria-invalid={error ? 'true' : undefined}
                    aria-describedby={error ? 'f-repo_id-error' : undefined}
                  >
                    <option value="">Choose one of {owner.name}'s repositories</option>
                    {repos.map((r) => (
                      <option value={String(r.id)}>{r.name}</option>
                    ))}
                  </select>
                  {error ? (
                    <p class="field-error" id="f-repo_id-error">
                      {error}
                    </p>
                  ) : null}
                </div>
                <button type="submit" class="primary">
                  Link
                </button>
              </form>
            )}
          </section>
        </Layout>
      );
    };

    app.get('/:owner/-/packages/:type/:name/settings', async (request, reply) =>
      web.send(reply, await settingsPage(request)),
    );

    app.post('/:owner/-/packages/:type/:name/settings', async (request, reply) => {
      web.requireUser(request);
      const { owner, pkg, base } = await opened(request, 'write');
      const form = (request.body ?? {}) as Record<string, unknown>;
      const action = typeof form['action'] === 'string' ? form['action'] : '';
      if (action === 'unlink') {
        await packages.unlink(pkg);
        return web.redirect(reply, `${base}/settings`, {
          kind: 'info',
          text: `${pkg.name} is no longer linked.`,
        });
      }
      if (action !== 'link') throw new AppError('invalid', `[action]: unknown action ${action}`);
      const id = Number(typeof form['repo_id'] === 'string' ? form['repo_id'] : NaN);
      const repo = Number.isSafeInteger(id) ? (await packages.reposByIds([id])).get(id) : undefined;
      if (!repo || repo.owner_id !== owner.id)
        return web.send(
          reply,
          await settingsPage(request, `Choose one of ${owner.name}'s repositories.`),
          422,
        );
      try {
        await packages.link(pkg, owner, repo.name);
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'bad_request' || err.kind === 'not_found'))
          return web.send(reply, await settingsPage(request, err.message.replace(/^\[\w+\]: /, '')), 422);
        throw err;
      }
      return web.redirect(reply, `${base}/settings`, {
        kind: 'info',
        text: `${pkg.name} is now linked to ${owner.name}/${repo.name}.`,
      });
    });

    app.get('/:owner/:repo/packages', async (request, reply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.code');
      const pageNo = pageNumber((request.query as Record<string, string>)['page']);
      // Packages are the owner's: a viewer who may not read them sees none here either.
      let rows: Awaited<ReturnType<typeof packages.listPackages>>[0] = [];
      let total = 0;
      try {
        await packages.requireOwner(owner.name, identityOf(request), 'read');
        [rows, total] = await packages.listPackages(
          owner,
          { repoId: view.repo.id },
          deps.pageSize,
          (pageNo - 1) * deps.pageSize,
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
      }
      const list = `/${enc(owner.name)}/-/packages`;
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Packages · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="packages" />
          <h2>
            Packages <span class="count">{total}</span>
          </h2>
          {rows.length === 0 ? (
            <p class="empty">
              No packages are linked to this repository. A package's settings link it to one; all of{' '}
              <a href={list}>{owner.name}'s packages</a>.
            </p>
          ) : (
            <ul class="list">
              {rows.map((r) => (
                <li>
                  <div>
                    <a class="title" href={`${list}/${r.type}/${enc(r.name)}/${enc(r.version)}`}>
                      {r.name}
                    </a>{' '}
                    <span class="label">{r.type}</span>
                    <p class="muted">
                      {r.version} · published <When unix={r.created_unix} /> ·{' '}
                      <a href={`${list}/${r.type}/${enc(r.name)}/versions`}>
                        {Number(r.version_count) === 1 ? '1 version' : `${String(r.version_count)} versions`}
                      </a>
                    </p>
                  </div>
                </li>
              ))}
            </ul>
          )}
          <Pager path={`${base}/packages`} page={pageNo} pageSize={deps.pageSize} total={total} />
        </Layout>,
      );
    });
  };
}
