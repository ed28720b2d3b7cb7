// The notifications pages at Forgejo's addresses: the inbox (/notifications: unread, read and
// pinned threads grouped by repository, each marked read, unread or pinned, all marked read at
// once), the issues the user follows (/notifications/subscriptions) and the repositories they
// watch (/notifications/watching). They read through the same services as the API's
// /notifications and drop threads the user can no longer read, as the API does.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { Pager, When, pageNumber, sitePath } from '../web/components.js';
import { Icon, type IconName } from '../web/icons.js';
import { CsrfField, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import type { IssueListService } from '../issues/lists.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { AccessMode } from '../orgs/tables.js';
import type { NotificationThreadJson } from './present.js';
import type { NotificationService } from './service.js';
import { NotificationStatus, type NotificationRow, type NotificationStatusName } from './tables.js';

export interface NotificationPagesDeps {
  notifications: Pick<
    NotificationService,
    'list' | 'countUnread' | 'requireThread' | 'setThreadStatus' | 'markAll' | 'watchedRepoIds'
  >;
  /** Threads as the API shows them (subjects, links, states), less those no longer readable. */
  threads(
    rows: NotificationRow[],
    viewer: { id: number; isAdmin: boolean },
  ): Promise<NotificationThreadJson[]>;
  issueLists: Pick<IssueListService, 'search'>;
  repos: Pick<RepoService, 'getByIds' | 'accessMany'>;
  users: Pick<UserService, 'getByIds'>;
  /** Threads, issues or repositories per page ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

const TABS: NotificationStatusName[] = ['unread', 'read', 'pinned'];
const tabOf = (v: unknown): NotificationStatusName => {
  const t = formText(v);
  return t === 'read' || t === 'pinned' ? t : 'unread';
};

/** The tabs of the notifications area (inbox, subscriptions, watching). */
function AreaTabs(props: { active: 'inbox' | 'subscriptions' | 'watching' }): VNode {
  const tab = (key: typeof props.active, href: string, label: string) => (
    <a href={href} aria-current={props.active === key ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <nav class="tabs" aria-label="Notifications">
      {tab('inbox', '/notifications', 'Notifications')}
      {tab('subscriptions', '/notifications/subscriptions', 'Subscriptions')}
      {tab('watching', '/notifications/watching', 'Watching')}
    </nav>
  );
}

/** The icon of a thread's subject: an issue or pull request in its state, or a repository. */
function subjectIcon(t: NotificationThreadJson): { name: IconName; cls: string } {
  const s = t.subject;
  if (s.type === 'Pull')
    return s.state === 'merged'
      ? { name: 'merged', cls: 'merged' }
      : { name: 'pull', cls: s.state === 'closed' ? 'closed' : 'open' };
  if (s.type === 'Issue')
    return s.state === 'closed'
      ? { name: 'issue-closed', cls: 'closed' }
      : { name: 'issue-open', cls: 'open' };
  return { name: 'repo', cls: '' };
}

function StatusButton(props: {
  page: PageContext;
  id: number;
  to: NotificationStatusName;
  label: string;
  icon: IconName;
  tab: NotificationStatusName;
  pageNo: number;
}): VNode {
  return (
    <form method="post" action="/notifications/status" class="inline">
      <CsrfField page={props.page} />
      <input type="hidden" name="notification_id" value={String(props.id)} />
      <input type="hidden" name="status" value={props.to} />
      <input type="hidden" name="type" value={props.tab} />
      <input type="hidden" name="page" value={String(props.pageNo)} />
      <button type="submit" class="icon-button" title={props.label} aria-label={props.label}>
        <Icon name={props.icon} />
      </button>
    </form>
  );
}

function InboxPage(props: {
  page: PageContext;
  tab: NotificationStatusName;
  threads: NotificationThreadJson[];
  unread: number;
  pageNo: number;
  pageSize: number;
  total: number;
}): VNode {
  const { page, tab, threads } = props;
  // Grouped by repository, the groups in the order of their latest thread.
  const groups = new Map<string, NotificationThreadJson[]>();
  for (const t of threads) {
    const key = t.repository.full_name;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const label = { unread: 'Unread', read: 'Read', pinned: 'Pinned' };
  return (
    <Layout page={page} title="Notifications">
      <h1>Notifications</h1>
      <AreaTabs active="inbox" />
      <div class="list-actions">
        <nav class="tabs" aria-label="Status">
          {TABS.map((t) => (
            <a href={`/notifications?type=${t}`} aria-current={tab === t ? 'page' : undefined}>
              {label[t]}
              {t === 'unread' ? <span class="count">{props.unread}</span> : null}
            </a>
          ))}
        </nav>
        {tab === 'unread' && props.unread > 0 ? (
          <form method="post" action="/notifications/purge" class="inline">
            <CsrfField page={page} />
            <button type="submit">
              <Icon name="check" /> Mark all as read
            </button>
          </form>
        ) : null}
      </div>
      {threads.length === 0 ? (
        <p class="empty">
          {tab === 'unread' ? 'You have no unread notifications.' : `You have no ${tab} notifications.`}
        </p>
      ) : null}
      {[...groups].map(([repo, list]) => (
        <section class="notification-group" aria-label={repo}>
          <h2>
            <Icon name="repo" /> <a href={sitePath(list[0]!.repository.html_url)}>{repo}</a>
          </h2>
          <ul class="list notifications">
            {list.map((t) => {
              const icon = subjectIcon(t);
              const href = sitePath(t.subject.latest_comment_html_url || t.subject.html_url);
              return (
                <li id={`notification_${t.id}`} class={t.unread ? 'unread' : undefined}>
                  <Icon name={icon.name} class={icon.cls} />
                  <div class="grow">
                    <a class="title" href={href}>
                      {t.subject.title}
                    </a>
                    <p class="muted">
                      {t.subject.type === 'Pull' ? 'Pull request' : t.subject.type}
                      {t.subject.state ? ` · ${t.subject.state}` : ''} · updated{' '}
                      <When unix={Math.floor(Date.parse(t.updated_at) / 1000)} />
                    </p>
                  </div>
                  <div class="item-actions">
                    {t.pinned ? (
                      <StatusButton
                        page={page}
                        id={t.id}
                        to="read"
                        label="Unpin"
                        icon="pin"
                        tab={tab}
                        pageNo={props.pageNo}
                      />
                    ) : (
                      <StatusButton
                        page={page}
                        id={t.id}
                        to="pinned"
                        label="Pin"
                        icon="pin"
                        tab={tab}
                        pageNo={props.pageNo}
                      />
                    )}
                    {t.unread ? (
                      <StatusButton
                        page={page}
                        id={t.id}
                        to="read"
                        label="Mark as read"
                        icon="check"
                        tab={tab}
                        pageNo={props.pageNo}
                      />
                    ) : (
                      <StatusButton
                        page={page}
                        id={t.id}
                        to="unread"
                        label="Mark as unread"
                        icon="bell"
                        tab={tab}
                        pageNo={props.pageNo}
                      />
                    )}
                  </div>
                </li>
              );
            })}
          </ul>
        </section>
      ))}
      <Pager
        path="/notifications"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={`type=${tab}`}
      />
    </Layout>
  );
}

export function notificationPages(deps: NotificationPagesDeps): PageRoutes {
  return (app, web) => registerNotificationPages(app, web, deps);
}

function registerNotificationPages(
  app: Parameters<PageRoutes>[0],
  web: Web,
  deps: NotificationPagesDeps,
): void {
  const { notifications, pageSize } = deps;
  const viewerOf = (user: UserRow) => ({ id: user.id, isAdmin: user.is_admin === 1 });
  const paging = (pageNo: number) => ({ page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize });

  app.get('/notifications', async (request, reply) => {
    const user = web.requireUser(request);
    const q = request.query as Record<string, unknown>;
    const tab = tabOf(q['type']);
    const pageNo = pageNumber(q['page']);
    const [[rows, total], unread] = await Promise.all([
      notifications.list({ userId: user.id, statuses: [NotificationStatus[tab]] }, paging(pageNo)),
      notifications.countUnread(user.id),
    ]);
    const threads = await deps.threads(rows, viewerOf(user));
    return web.send(
      reply,
      <InboxPage
        page={web.page(request)}
        tab={tab}
        threads={threads}
        unread={unread}
        pageNo={pageNo}
        pageSize={pageSize}
        total={total}
      />,
    );
  });

  const back = (request: FastifyRequest) => {
    const body = request.body as Record<string, unknown> | undefined;
    const pageNo = pageNumber(body?.['page']);
    return `/notifications?type=${tabOf(body?.['type'])}${pageNo > 1 ? `&page=${pageNo}` : ''}`;
  };

  // Forgejo's form: notification_id, status (read, unread or pinned).
  app.post('/notifications/status', async (request, reply: FastifyReply) => {
    const user = web.requireUser(request);
    const body = request.body as Record<string, unknown> | undefined;
    const status = formText(body?.['status']);
    if (status !== 'read' && status !== 'unread' && status !== 'pinned') {
      return web.redirect(reply, back(request), { kind: 'error', text: 'Unknown notification status.' });
    }
    const row = await notifications.requireThread(
      viewerOf(user),
      Number(formText(body?.['notification_id'])),
    );
    await notifications.setThreadStatus(row, NotificationStatus[status]);
    return web.redirect(reply, back(request));
  });

  // Every unread thread marked read (Forgejo's "mark all as read").
  app.post('/notifications/purge', async (request, reply) => {
    const user = web.requireUser(request);
    const marked = await notifications.markAll(
      { userId: user.id, statuses: [NotificationStatus.unread], before: Math.floor(Date.now() / 1000) },
      NotificationStatus.read,
    );
    return web.redirect(reply, '/notifications', {
      kind: 'info',
      text: `${marked.length} notification${marked.length === 1 ? '' : 's'} marked as read.`,
    });
  });

  app.get('/notifications/subscriptions', async (request, reply) => {
    const user = web.requireUser(request);
    const q = request.query as Record<string, unknown>;
    const state =
      formText(q['state']) === 'closed' ? 'closed' : formText(q['state']) === 'all' ? 'all' : 'open';
    const issueType = formText(q['issueType']);
    const type = issueType === 'issues' || issueType === 'pulls' ? issueType : undefined;
    const pageNo = pageNumber(q['page']);
    const { rows, total, repos } = await deps.issueLists.search(
      viewerOf(user),
      { subscribed: true, state, type, sort: 'recentupdate' },
      paging(pageNo),
    );
    const owners = await deps.users.getByIds([...new Set([...repos.values()].map((r) => r.owner_id))]);
    const repoName = (id: number) => {
      const r = repos.get(id);
      const o = r && owners.get(r.owner_id);
      return r && o ? `${o.name}/${r.name}` : '';
    };
    const query = new URLSearchParams({ state, ...(type ? { issueType: type } : {}) });
    const stateLink = (s: string) =>
      `/notifications/subscriptions?${new URLSearchParams({ ...Object.fromEntries(query), state: s }).toString()}`;
    const typeLink = (t: string) =>
      `/notifications/subscriptions?${new URLSearchParams({ state, ...(t ? { issueType: t } : {}) }).toString()}`;
    return web.send(
      reply,
      <Layout page={web.page(request)} title="Subscriptions">
        <h1>Subscriptions</h1>
        <AreaTabs active="subscriptions" />
        <div class="list-actions">
          <nav class="tabs" aria-label="State">
            {(['open', 'closed', 'all'] as const).map((s) => (
              <a href={stateLink(s)} aria-current={state === s ? 'page' : undefined}>
                {s === 'open' ? 'Open' : s === 'closed' ? 'Closed' : 'All'}
              </a>
            ))}
          </nav>
          <nav class="tabs" aria-label="Kind">
            {(['', 'issues', 'pulls'] as const).map((t) => (
              <a href={typeLink(t)} aria-current={(type ?? '') === t ? 'page' : undefined}>
                {t === '' ? 'All' : t === 'issues' ? 'Issues' : 'Pull requests'}
              </a>
            ))}
          </nav>
        </div>
        {rows.length === 0 ? <p class="empty">You are not subscribed to anything here.</p> : null}
        <ul class="list">
          {rows.map((i) => {
            const full = repoName(i.repo_id);
            const kind = i.is_pull ? 'pulls' : 'issues';
            const icon: IconName = i.is_pull ? 'pull' : i.is_closed ? 'issue-closed' : 'issue-open';
            return (
              <li>
                <Icon name={icon} class={i.is_closed ? 'closed' : 'open'} />
                <div class="grow">
                  <a class="title" href={`/${full}/${kind}/${i.index}`}>
                    {i.title}
                  </a>
                  <p class="muted">
                    {full}#{i.index} · updated <When unix={i.updated_unix} />
                  </p>
                </div>
              </li>
            );
          })}
        </ul>
        <Pager
          path="/notifications/subscriptions"
          page={pageNo}
          pageSize={pageSize}
          total={total}
          query={query.toString()}
        />
      </Layout>,
    );
  });

  app.get('/notifications/watching', async (request, reply) => {
    const user = web.requireUser(request);
    const pageNo = pageNumber((request.query as Record<string, unknown>)['page']);
    const [ids, total] = await notifications.watchedRepoIds(user, paging(pageNo));
    const byId = await deps.repos.getByIds(ids);
    const found = ids.map((id) => byId.get(id)).filter((r): r is RepoRow => r !== undefined);
    const owners = await deps.users.getByIds([...new Set(found.map((r) => r.owner_id))]);
    const access = await deps.repos.accessMany(found, viewerOf(user), owners);
    const visible = found.filter(
      (r) => (access.get(r.id)?.mode ?? 0) >= AccessMode.read && owners.has(r.owner_id),
    );
    return web.send(
      reply,
      <Layout page={web.page(request)} title="Watching">
        <h1>Watching</h1>
        <AreaTabs active="watching" />
        {visible.length === 0 ? <p class="empty">You are not watching any repository.</p> : null}
        <ul class="list">
          {visible.map((r) => {
            const full = `${owners.get(r.owner_id)!.name}/${r.name}`;
            return (
              <li>
                <Icon name="eye" />
                <div class="grow">
                  <a class="title" href={`/${full}`}>
                    {full}
                  </a>
                  {r.description ? <p class="muted">{r.description}</p> : null}
                </div>
              </li>
            );
          })}
        </ul>
        <Pager path="/notifications/watching" page={pageNo} pageSize={pageSize} total={total} />
      </Layout>,
    );
  });
}
