// The storage overview at Forgejo's addresses (/user/settings/storage_overview and
// /org/{org}/settings/storage_overview, the organization's owners only): every rule of every group
// that applies, its usage against its limit; for each kind of upload whether more would be
// accepted, and if not which group's rule refuses it and why; a year of daily usage history drawn
// as SVG; and what uses the space (repositories with their git and LFS sizes, attachments,
// artifacts, packages), largest first, a page at a time.
import type { FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { Pager, formatBytes, pageNumber, sitePath } from '../web/components.js';
import type { PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { SettingsLayout, Section, USER_SETTINGS_NAV, orgSettingsNav, type NavItem } from '../web/settings.js';
import type { LfsService } from '../lfs/service.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { UNLIMITED, usageOf, type RuleState } from './evaluate.js';
import { UsageChart, type ChartPoint, type ChartSeries } from './chart.js';
import type { QuotaOverview, QuotaService } from './service.js';
import type { LeafSubject } from './subjects.js';

export interface QuotaPagesDeps {
  quota: Pick<QuotaService, 'overview' | 'history' | 'listItems'>;
  repos: Pick<RepoService, 'list'>;
  lfs: Pick<LfsService, 'sizesOf'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
  /** Items per page of the drill-down ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

/** Days of history drawn. */
const HISTORY_DAYS = 365;

const TABS = [
  { key: 'repos', label: 'Repositories' },
  { key: 'attachments', label: 'Attachments' },
  { key: 'artifacts', label: 'Artifacts' },
  { key: 'packages', label: 'Packages' },
] as const;
type Tab = (typeof TABS)[number]['key'];

const LEAF_LABELS: Record<LeafSubject, string> = {
  'size:repos:public': 'Public repositories (git)',
  'size:repos:private': 'Private repositories (git)',
  'size:git:lfs': 'LFS objects',
  'size:assets:attachments:issues': 'Issue and comment attachments',
  'size:assets:attachments:releases': 'Release attachments',
  'size:assets:artifacts': 'Actions artifacts',
  'size:assets:packages:all': 'Packages',
};

const SERIES: ChartSeries[] = [
  { key: 'total', label: 'Total', class: 'chart-total' },
  { key: 'git', label: 'Git', class: 'chart-git' },
  { key: 'lfs', label: 'LFS', class: 'chart-lfs' },
  { key: 'assets', label: 'Attachments, artifacts and packages', class: 'chart-assets' },
];

/** The daily samples (per stored subject) as the chart's points (per series). */
export function chartPoints(samples: Array<{ day: number; subject: string; size: number }>): ChartPoint[] {
  const byDay = new Map<number, Record<string, number>>();
  for (const s of samples) {
    const v = byDay.get(s.day) ?? { total: 0, git: 0, lfs: 0, assets: 0 };
    v['total']! += s.size;
    if (s.subject.startsWith('size:repos:')) v['git']! += s.size;
    else if (s.subject === 'size:git:lfs') v['lfs']! += s.size;
    else v['assets']! += s.size;
    byDay.set(s.day, v);
  }
  return [...byDay].sort((a, b) => a[0] - b[0]).map(([day, values]) => ({ day, values }));
}

/** A bar of a rule's usage against its limit (SVG: the pages allow no inline style). */
function UsageBar(props: { used: number; limit: number }): VNode {
  const pct = props.limit > 0 ? Math.min(100, (props.used / props.limit) * 100) : props.used > 0 ? 100 : 0;
  const level = pct >= 100 ? 'over' : pct >= 80 ? 'high' : 'ok';
  return (
    <svg class={`usage-bar ${level}`} viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
      <rect class="usage-bar-track" x="0" y="0" width="100" height="8" rx="2" />
      <rect class="usage-bar-fill" x="0" y="0" width={pct.toFixed(2)} height="8" rx="2" />
    </svg>
  );
}

function RuleRow(props: { r: RuleState }): VNode {
  const { rule, used, stands } = props.r;
  const unlimited = rule.limit === UNLIMITED;
  return (
    <tr class={stands ? undefined : 'over'}>
      <th scope="row">{rule.name}</th>
      <td>
        {rule.subjects.map((s) => (
          <code class="subject">{s}</code>
        ))}
      </td>
      <td class="usage-cell">
        {unlimited ? null : <UsageBar used={used} limit={rule.limit} />}
        <span>
          {formatBytes(used)} of {unlimited ? 'unlimited' : formatBytes(rule.limit)}
          {!unlimited && rule.limit > 0 ? ` (${Math.round((used / rule.limit) * 100)}%)` : ''}
        </span>
        {stands ? null : <strong class="over-note"> over the limit</strong>}
      </td>
    </tr>
  );
}

interface DrillDown {
  tab: Tab;
  pageNo: number;
  /** The number of items, or -1 when not counted (then `more` says whether a next page exists). */
  total: number;
  more: boolean;
  rows: Array<{ name: string; href: string; detail: string; size: number; extra?: string }>;
}

function Overview(props: {
  page: PageContext;
  o: QuotaOverview;
  points: ChartPoint[];
  drill: DrillDown;
  base: string;
  pageSize: number;
}): VNode {
  const { o, drill } = props;
  return (
    <>
      <h1>Storage overview</h1>
      {o.enabled ? null : (
        <p class="flash info">Quota is not enforced on this site: the numbers below are what is stored.</p>
      )}
      <p class="storage-total">
        <strong>{formatBytes(usageOf('size:all', o.usage))}</strong> stored in all.
      </p>
      <Section title="Limits">
        {o.groups.length === 0 ? (
          <p class="muted">No quota group applies to this account: its storage is unlimited.</p>
        ) : (
          <>
            <p class="muted hint">
              More is accepted while at least one group stands, counting only the rules about what is
              uploaded.
            </p>
            {o.groups.map((g) => (
              <div class="quota-group">
                <h3>
                  Group <code>{g.group.name}</code>{' '}
                  <span class={g.stands ? 'pill ok' : 'pill over'}>
                    {g.stands ? 'within its limits' : 'over a limit'}
                  </span>
                </h3>
                {g.rules.length === 0 ? (
                  <p class="muted">This group has no rule: it limits nothing.</p>
                ) : (
                  <table class="quota-rules">
                    <thead>
                      <tr>
                        <th scope="col">Rule</th>
                        <th scope="col">Counts</th>
                        <th scope="col">Usage</th>
                      </tr>
                    </thead>
                    <tbody>
                      {g.rules.map((r) => (
                        <RuleRow r={r} />
                      ))}
                    </tbody>
                  </table>
                )}
              </div>
            ))}
          </>
        )}
      </Section>
      <Section title="The next upload">
        <ul class="list uploads">
          {o.uploads.map((u) => (
            <li class={u.refusedBy ? 'refused' : 'accepted'}>
              <div>
                <strong>{u.label}</strong> <code class="subject">{u.subject}</code>
                {u.refusedBy ? (
                  <>
                    <p class="refusal">Refused:</p>
                    <ul>
                      {u.refusedBy.map((g) =>
                        g.rules.map((r) => (
                          <li>
                            rule <code>{r.rule.name}</code> of group <code>{g.group}</code> counts{' '}
                            {formatBytes(r.used)} against its limit of {formatBytes(r.rule.limit)}
                          </li>
                        )),
                      )}
                    </ul>
                  </>
                ) : (
                  <p class="muted">Accepted.</p>
                )}
              </div>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Usage by kind">
        <table class="quota-kinds">
          <tbody>
            {(Object.keys(LEAF_LABELS) as LeafSubject[]).map((leaf) => (
              <tr>
                <th scope="row">{LEAF_LABELS[leaf]}</th>
                <td class="num">{formatBytes(o.usage[leaf] ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="History">
        <UsageChart title="Storage used over the last year" points={props.points} series={SERIES} />
      </Section>
      <Section title="What uses the space">
        <nav class="tabs" aria-label="Kind of item">
          {TABS.map((t) => (
            <a href={`${props.base}?tab=${t.key}`} aria-current={drill.tab === t.key ? 'page' : undefined}>
              {t.label}
            </a>
          ))}
        </nav>
        {drill.rows.length === 0 ? (
          <p class="empty">Nothing stored here.</p>
        ) : (
          <table class="quota-items">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">{drill.tab === 'repos' ? 'Visibility' : 'Where'}</th>
                {drill.tab === 'repos' ? <th scope="col">Git</th> : null}
                {drill.tab === 'repos' ? <th scope="col">LFS</th> : <th scope="col">Size</th>}
              </tr>
            </thead>
            <tbody>
              {drill.rows.map((r) => (
                <tr>
                  <td>
                    <a href={r.href}>{r.name}</a>
                  </td>
                  <td class="muted">{r.detail}</td>
                  <td class="num">{formatBytes(r.size)}</td>
                  {r.extra !== undefined ? <td class="num">{r.extra}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {drill.total >= 0 ? (
          <Pager
            path={props.base}
            page={drill.pageNo}
            pageSize={props.pageSize}
            total={drill.total}
            query={`tab=${drill.tab}`}
          />
        ) : (
          <NextPager base={`${props.base}?tab=${drill.tab}`} page={drill.pageNo} more={drill.more} />
        )}
      </Section>
    </>
  );
}

/** Previous and next links of a list that is not counted. */
function NextPager(props: { base: string; page: number; more: boolean }): VNode | null {
  if (props.page <= 1 && !props.more) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? <a href={`${props.base}&page=${props.page - 1}`}>Previous</a> : <span>Previous</span>}
      <span>Page {props.page}</span>
      {props.more ? <a href={`${props.base}&page=${props.page + 1}`}>Next</a> : <span>Next</span>}
    </nav>
  );
}

export function quotaPages(deps: QuotaPagesDeps): PageRoutes {
  return (app, web) => registerQuotaPages(app, web, deps);
}

function registerQuotaPages(app: Parameters<PageRoutes>[0], web: Web, deps: QuotaPagesDeps): void {
  const { quota, pageSize } = deps;

  async function drillDown(owner: UserRow, tab: Tab, pageNo: number): Promise<DrillDown> {
    const offset = (pageNo - 1) * pageSize;
    if (tab === 'repos') {
      const [repos, total] = await deps.repos.list(
        { ownerId: owner.id, orderBy: 'reversesize' },
        pageSize,
        offset,
      );
      const lfs = await deps.lfs.sizesOf(repos.map((r: RepoRow) => r.id));
      return {
        tab,
        pageNo,
        total,
        more: false,
        rows: repos.map((r: RepoRow) => ({
          name: `${owner.name}/${r.name}`,
          href: `/${owner.name}/${r.name}`,
          detail: r.is_private ? 'Private' : 'Public',
          size: Number(r.size),
          extra: formatBytes(lfs.get(r.id) ?? 0),
        })),
      };
    }
    if (tab === 'attachments') {
      const [all] = await quota.listItems('attachments', owner.id, pageSize + 1, offset, true);
      const items = all.slice(0, pageSize);
      return {
        tab,
        pageNo,
        total: -1,
        more: all.length > pageSize,
        rows: items.map((i) => ({
          name: i.name,
          href: sitePath(i.contained_in.html_url),
          detail: sitePath(i.contained_in.html_url).slice(1),
          size: i.size,
        })),
      };
    }
    if (tab === 'artifacts') {
      const [all] = await quota.listItems('artifacts', owner.id, pageSize + 1, offset, true);
      const items = all.slice(0, pageSize);
      return {
        tab,
        pageNo,
        total: -1,
        more: all.length > pageSize,
        rows: items.map((i) => ({
          name: i.name,
          href: sitePath(i.html_url),
          detail: 'Actions run',
          size: i.size,
        })),
      };
    }
    const [all] = await quota.listItems('packages', owner.id, pageSize + 1, offset, true);
    const items = all.slice(0, pageSize);
    return {
      tab,
      pageNo,
      total: -1,
      more: all.length > pageSize,
      rows: items.map((i) => ({
        name: `${i.name} ${i.version}`,
        href: sitePath(i.html_url),
        detail: i.type,
        size: i.size,
      })),
    };
  }

  async function show(request: FastifyRequest, owner: UserRow, base: string, nav: NavItem[], area: string) {
    const q = request.query as Record<string, unknown>;
    const tabText = formText(q['tab']);
    const tab: Tab = TABS.some((t) => t.key === tabText) ? (tabText as Tab) : 'repos';
    const pageNo = pageNumber(q['page']);
    const [o, samples, drill] = await Promise.all([
      quota.overview(owner.id),
      quota.history(owner.id, HISTORY_DAYS),
      drillDown(owner, tab, pageNo),
    ]);
    return (
      <SettingsLayout page={web.page(request)} title="Storage overview" area={area} nav={nav} active={base}>
        <Overview
          page={web.page(request)}
          o={o}
          points={chartPoints(samples)}
          drill={drill}
          base={base}
          pageSize={pageSize}
        />
      </SettingsLayout>
    );
  }

  app.get('/user/settings/storage_overview', async (request, reply) => {
    const user = web.requireUser(request);
    const page = await show(
      request,
      user,
      '/user/settings/storage_overview',
      USER_SETTINGS_NAV,
      'User settings',
    );
    return web.send(reply, page);
  });

  app.get('/org/:org/settings/storage_overview', async (request, reply) => {
    const user = web.requireUser(request);
    const viewer = request.web.viewer!;
    const org = await deps.orgs.requireVisibleOrg((request.params as { org: string }).org, viewer);
    if (!user.is_admin) await deps.orgs.requireOwner(org, viewer);
    const base = `/org/${org.name}/settings/storage_overview`;
    return web.send(reply, await show(request, org, base, orgSettingsNav(org.name), org.name));
  });
}
