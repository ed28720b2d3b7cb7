// The LFS settings pages of a repository (Forgejo's settings/lfs): the stored objects with their
// size, each deletable, and the file locks, each removable by an administrator.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { RepoService } from '../repos/service.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { DangerForm, Section, SettingsLayout, repoSettingsNav } from '../web/settings.js';
import type { LfsService } from './service.js';
import type { LockRow, MetaRow } from './tables.js';

export interface LfsPagesDeps {
  lfs: Pick<LfsService, 'listObjects' | 'deleteObject' | 'listLocks' | 'unlock'>;
  repos: Pick<RepoService, 'requireRepo'>;
  pageSize: number;
}

const size = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;

function Frame(props: {
  page: PageContext;
  owner: string;
  repo: string;
  title: string;
  children: VNode | VNode[];
}) {
  const base = `/${props.owner}/${props.repo}/settings/lfs`;
  return (
    <SettingsLayout
      page={props.page}
      title={`${props.title} · ${props.owner}/${props.repo}`}
      area={`${props.owner}/${props.repo}`}
      nav={repoSettingsNav(props.owner, props.repo)}
      active={base}
    >
      <nav class="tabs" aria-label="LFS">
        <a href={base} aria-current={props.title === 'LFS' ? 'page' : undefined}>
          Files
        </a>{' '}
        <a href={`${base}/locks`} aria-current={props.title === 'LFS locks' ? 'page' : undefined}>
          Locks
        </a>
      </nav>
      {props.children}
    </SettingsLayout>
  );
}

export function lfsPages(deps: LfsPagesDeps): PageRoutes {
  const { lfs } = deps;
  return (app: FastifyInstance, web: Web) => {
    const resolve = async (request: FastifyRequest) => {
      const user = web.requireUser(request);
      const p = request.params as Record<string, string>;
      const owner = p['owner'] ?? '';
      const view = await deps.repos.requireRepo(owner, p['repo'] ?? '', request.web.viewer, 'admin');
      return { user, owner, ...view, base: `/${owner}/${view.repo.name}/settings/lfs` };
    };
    const prefix = '/:owner/:repo/settings/lfs';

    app.get(prefix, async (request, reply) => {
      const { owner, repo, base } = await resolve(request);
      const n = pageNumber((request.query as Record<string, unknown>)['page']);
      const [rows, total] = await lfs.listObjects(repo, deps.pageSize, (n - 1) * deps.pageSize);
      const page = web.page(request);
      return web.send(
        reply,
        <Frame page={page} owner={owner} repo={repo.name} title="LFS">
          <Section title={`LFS objects (${total})`}>
            {rows.length === 0 ? <p class="empty">This repository stores no LFS objects.</p> : null}
            <ul class="list">
              {rows.map((o: MetaRow) => (
                <li key={o.oid}>
                  <div>
                    <code class="secret-token">{o.oid}</code>{' '}
                    <span class="muted">
                      {size(Number(o.size))}, <When unix={o.created_unix} />
                    </span>
                  </div>
                  <DangerForm
                    page={page}
                    action={`${base}/delete/${o.oid}`}
                    button="Delete"
                    confirm="Delete this LFS object? Files that point to it can no longer be read."
                  />
                </li>
              ))}
            </ul>
            <Pager path={base} page={n} pageSize={deps.pageSize} total={total} />
          </Section>
        </Frame>,
      );
    });

    app.post(`${prefix}/delete/:oid`, async (request, reply) => {
      const { repo, base } = await resolve(request);
      await lfs.deleteObject(repo, (request.params as Record<string, string>)['oid'] ?? '');
      return web.redirect(reply, base, { kind: 'info', text: 'The LFS object has been deleted.' });
    });

    app.get(`${prefix}/locks`, async (request, reply) => {
      const { owner, repo, base } = await resolve(request);
      const { locks } = await lfs.listLocks(repo, { limit: 100 });
      const page = web.page(request);
      return web.send(
        reply,
        <Frame page={page} owner={owner} repo={repo.name} title="LFS locks">
          <Section title="Locked files">
            {locks.length === 0 ? <p class="empty">No files are locked.</p> : null}
            <ul class="list">
              {locks.map((l: LockRow) => (
                <li key={l.id}>
                  <div>
                    <code>{l.path}</code>{' '}
                    <span class="muted">
                      locked by {l.owner_name}, <When unix={l.created_unix} />
                    </span>
                  </div>
                  <DangerForm
                    page={page}
                    action={`${base}/locks/${l.id}/unlock`}
                    button="Unlock"
                    confirm={`Unlock ${l.path}?`}
                  />
                </li>
              ))}
            </ul>
          </Section>
        </Frame>,
      );
    });

    app.post(`${prefix}/locks/:id/unlock`, async (request, reply) => {
      const { user, repo, access, base } = await resolve(request);
      await lfs.unlock(repo, user, access, (request.params as Record<string, string>)['id'] ?? '', true);
      return web.redirect(reply, `${base}/locks`, { kind: 'info', text: 'The file has been unlocked.' });
    });
  };
}
