// The signed-in user's dashboard lists at Forgejo's addresses: /issues and /pulls across every
// repository they may read (in their repositories, assigned to them, created by them, mentioning
// them, and for pull requests those whose review is requested from them), and /milestones of
// their repositories. The same issue search as the API's /repos/issues/search.
import type { VNode } from 'preact';
import { Pager, When, pageNumber } from '../web/components.js';
import { Icon, type IconName } from '../web/icons.js';
import { Layout } from '../web/layout.js';
import { formText, type PageRoutes } from '../web/plugin.js';
import type { MilestoneService } from '../milestones/service.js';
import type { UserService } from '../users/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { IssueListService, IssueSearchInput } from './lists.js';

export interface DashboardPagesDeps {
  issueLists: Pick<IssueListService, 'search' | 'readableRepos'>;
  milestones: Pick<MilestoneService, 'listIn'>;
  users: Pick<UserService, 'getByIds'>;
  /** Items per page ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

/** Forgejo's `type` of the dashboard lists. */
const TYPES = ['your_repositories', 'assigned', 'created_by', 'mentioned', 'review_requested'] as const;
type ListType = (typeof TYPES)[number];
const TYPE_LABELS: Record<ListType, string> = {
  your_repositories: 'In your repositories',
  assigned: 'Assigned to you',
  created_by: 'Created by you',
  mentioned: 'Mentioning you',
  review_requested: 'Review requested',
};

const stateOf = (v: unknown): 'open' | 'closed' => (formText(v) === 'closed' ? 'closed' : 'open');

export function dashboardPages(deps: DashboardPagesDeps): PageRoutes {
  const { issueLists, users, pageSize } = deps;
  const paging = (pageNo: number) => ({ page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize });

  /** "owner/name" of each repository of a page of results. */
  const names = async (repos: Iterable<RepoRow>) => {
    const list = [...repos];
    const owners = await users.getByIds([...new Set(list.map((r) => r.owner_id))]);
    return new Map(list.map((r) => [r.id, `${owners.get(r.owner_id)?.name ?? ''}/${r.name}`]));
  };

  return (app, web) => {
    for (const pulls of [false, true]) {
      const kind = pulls ? 'pulls' : 'issues';
      const noun = pulls ? 'Pull requests' : 'Issues';
      const types = TYPES.filter((t) => pulls || t !== 'review_requested');

      app.get(`/${kind}`, async (request, reply) => {
        const user = web.requireUser(request);
        const q = request.query as Record<string, unknown>;
        const typeText = formText(q['type']);
        const type: ListType = (types as readonly string[]).includes(typeText)
          ? (typeText as ListType)
          : 'your_repositories';
        const state = stateOf(q['state']);
        const keyword = formText(q['q']).trim().slice(0, 255);
        const pageNo = pageNumber(q['page']);
        const input: IssueSearchInput = {
          state,
          type: kind,
          q: keyword || undefined,
          sort: 'recentupdate',
          memberOnly: type === 'your_repositories',
          assigned: type === 'assigned',
          created: type === 'created_by',
          mentioned: type === 'mentioned',
          reviewRequested: type === 'review_requested',
        };
        const viewer = { id: user.id, isAdmin: user.is_admin === 1 };
        const { rows, total, repos } = await issueLists.search(viewer, input, paging(pageNo));
        const full = await names(repos.values());
        const kept = { type, ...(keyword ? { q: keyword } : {}) };
        const link = (over: Record<string, string>) =>
          `/${kind}?${new URLSearchParams({ ...kept, state, ...over }).toString()}`;
        return web.send(
          reply,
          <Layout page={web.page(request)} title={noun}>
            <h1>{noun}</h1>
            <DashboardTabs active={kind} />
            <div class="dashboard-list">
              <nav class="filter-menu" aria-label="Filter">
                <ul>
                  {types.map((t) => (
                    <li>
                      <a href={link({ type: t, state })} aria-current={type === t ? 'page' : undefined}>
                        {TYPE_LABELS[t]}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <div>
                <div class="list-actions">
                  <nav class="tabs" aria-label="State">
                    <a href={link({ state: 'open' })} aria-current={state === 'open' ? 'page' : undefined}>
                      Open
                    </a>
                    <a
                      href={link({ state: 'closed' })}
                      aria-current={state === 'closed' ? 'page' : undefined}
                    >
                      Closed
                    </a>
                  </nav>
                  <form method="get" class="search" role="search">
                    <input type="hidden" name="type" value={type} />
                    <input type="hidden" name="state" value={state} />
                    <input
                      type="search"
                      name="q"
                      value={keyword}
                      aria-label={`Search ${noun.toLowerCase()}`}
                      placeholder="Search…"
                    />
                    <button type="submit">Search</button>
                  </form>
                </div>
                {rows.length === 0 ? <p class="empty">Nothing here.</p> : null}
                <ul class="list">
                  {rows.map((i) => {
                    const repo = full.get(i.repo_id) ?? '';
                    const icon: IconName = i.is_pull ? 'pull' : i.is_closed ? 'issue-closed' : 'issue-open';
                    return (
                      <li>
                        <Icon name={icon} class={i.is_closed ? 'closed' : 'open'} />
                        <div class="grow">
                          <a class="title" href={`/${repo}/${kind}/${i.index}`}>
                            {i.title}
                          </a>
                          <p class="muted">
                            <a href={`/${repo}`}>{repo}</a>#{i.index} · updated <When unix={i.updated_unix} />{' '}
                            · {i.num_comments} comments
                          </p>
                        </div>
                      </li>
                    );
                  })}
                </ul>
                <Pager
                  path={`/${kind}`}
                  page={pageNo}
                  pageSize={pageSize}
                  total={total}
                  query={new URLSearchParams({ ...kept, state }).toString()}
                />
              </div>
            </div>
          </Layout>,
        );
      });
    }

    app.get('/milestones', async (request, reply) => {
      const user = web.requireUser(request);
      const q = request.query as Record<string, unknown>;
      const state = stateOf(q['state']);
      const pageNo = pageNumber(q['page']);
      const viewer = { id: user.id, isAdmin: user.is_admin === 1 };
      const repos = (await issueLists.readableRepos(viewer, true)).filter((r) => r.has_issues);
      const [rows, total] = await deps.milestones.listIn(
        repos.map((r) => r.id),
        state,
        paging(pageNo),
      );
      const full = await names(repos.filter((r) => rows.some((m) => m.repo_id === r.id)));
      return web.send(
        reply,
        <Layout page={web.page(request)} title="Milestones">
          <h1>Milestones</h1>
          <DashboardTabs active="milestones" />
          <nav class="tabs" aria-label="State">
            <a href="/milestones?state=open" aria-current={state === 'open' ? 'page' : undefined}>
              Open
            </a>
            <a href="/milestones?state=closed" aria-current={state === 'closed' ? 'page' : undefined}>
              Closed
            </a>
          </nav>
          {rows.length === 0 ? <p class="empty">No {state} milestones in your repositories.</p> : null}
          <ul class="list">
            {rows.map((m) => {
              const repo = full.get(m.repo_id) ?? '';
              return (
                <li>
                  <Icon name="milestone" />
                  <div class="grow">
                    <a class="title" href={`/${repo}/milestone/${m.id}`}>
                      {m.name}
                    </a>
                    <p class="muted">
                      <a href={`/${repo}`}>{repo}</a> · {m.num_issues - m.num_closed_issues} open,{' '}
                      {m.num_closed_issues} closed
                      {m.deadline_unix > 0 ? (
                        <>
                          {' '}
                          · due <When unix={m.deadline_unix} />
                        </>
                      ) : null}
                    </p>
                    <progress max={100} value={m.completeness} aria-label={`${m.completeness}% complete`} />
                  </div>
                </li>
              );
            })}
          </ul>
          <Pager
            path="/milestones"
            page={pageNo}
            pageSize={pageSize}
            total={total}
            query={`state=${state}`}
          />
        </Layout>,
      );
    });
  };
}

function DashboardTabs(props: { active: 'issues' | 'pulls' | 'milestones' }): VNode {
  const tab = (key: typeof props.active, label: string) => (
    <a href={`/${key}`} aria-current={props.active === key ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <nav class="tabs" aria-label="Dashboard">
      {tab('issues', 'Issues')}
      {tab('pulls', 'Pull requests')}
      {tab('milestones', 'Milestones')}
    </nav>
  );
}
