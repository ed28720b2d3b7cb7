// Who stars and watches a repository, and its forks (`/{owner}/{repo}/stars`, `/watchers`,
// `/forks`, Forgejo's addresses), paged; readers of the repository only (404 otherwise). The forks
// listed are those the viewer may see.
import type { FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { ForkService } from '../repos/forks.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { avatarPath } from '../users/avatars.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { Pager, pageNumber } from '../web/components.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { Page } from '../http/pagination.js';
import type { SocialService } from './service.js';

export interface SocialListPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  social: Pick<SocialService, 'stargazers' | 'watchers'>;
  forks: Pick<ForkService, 'listForks'>;
  /** Entries per page ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

function People(props: { users: UserRow[] }): VNode {
  return (
    <ul class="list people">
      {props.users.map((u) => (
        <li>
          <a class="author" href={`/${u.name}`}>
            <img class="avatar" src={`/${avatarPath(u)}`} alt="" width={32} height={32} loading="lazy" />
            {u.name}
          </a>
          {u.full_name ? <span class="muted">{u.full_name}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function socialListPages(deps: SocialListPagesDeps): PageRoutes {
  const { repos, users, pageSize } = deps;
  return (app, web) => {
    const open = async (request: FastifyRequest) => {
      const p = request.params as Record<string, string>;
      const view = await repos.requireRepo(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
      const owner = (await users.getById(view.repo.owner_id))!;
      const pageNo = pageNumber((request.query as Record<string, unknown>)['page']);
      return {
        view,
        owner,
        pageNo,
        page: { page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize },
      };
    };
    const lists = [
      ['stars', 'Stargazers', (r: RepoRow, pg: Page) => deps.social.stargazers(r, pg)],
      ['watchers', 'Watchers', (r: RepoRow, pg: Page) => deps.social.watchers(r, pg)],
    ] as const;
    for (const [path, title, list] of lists) {
      app.get(`/:owner/:repo/${path}`, async (request, reply) => {
        const { view, owner, pageNo, page } = await open(request);
        const [people, total] = await list(view.repo, page);
        const base = `/${owner.name}/${view.repo.name}`;
        return web.send(
          reply,
          <Layout page={web.page(request)} title={`${title} · ${owner.name}/${view.repo.name}`}>
            <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="code" />
            <h2>
              {title} <span class="count">{total}</span>
            </h2>
            {people.length ? <People users={people} /> : <p class="empty">Nobody yet.</p>}
            <Pager path={`${base}/${path}`} page={pageNo} pageSize={pageSize} total={total} />
          </Layout>,
        );
      });
    }

    app.get('/:owner/:repo/forks', async (request, reply) => {
      const { view, owner, pageNo, page } = await open(request);
      const [forks, total] = await deps.forks.listForks(
        view.repo,
        request.web.viewer,
        page.limit,
        page.offset,
      );
      const owners = await users.getByIds([...new Set(forks.map((f) => f.owner_id))]);
      const base = `/${owner.name}/${view.repo.name}`;
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Forks · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="code" />
          <h2>
            Forks <span class="count">{total}</span>
          </h2>
          {forks.length ? (
            <ul class="list">
              {forks.map((f) => {
                const o = owners.get(f.owner_id);
                return o ? (
                  <li>
                    <a class="author" href={`/${o.name}/${f.name}`}>
                      <img
                        class="avatar"
                        src={`/${avatarPath(o)}`}
                        alt=""
                        width={20}
                        height={20}
                        loading="lazy"
                      />
                      {o.name}/{f.name}
                    </a>
                  </li>
                ) : null;
              })}
            </ul>
          ) : (
            <p class="empty">No forks yet.</p>
          )}
          <Pager path={`${base}/forks`} page={pageNo} pageSize={pageSize} total={total} />
        </Layout>,
      );
    });
  };
}
