// The contributors page (Forgejo's /{owner}/{repo}/activity/contributors): the default branch's
// commits per week as a server-drawn SVG chart, then each author with their commits, lines added
// and deleted and their own weeks on the same time axis. No script needed.
import type { VNode } from 'preact';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import { Avatar } from '../orgs/pages.js';
import { RepoHeader } from '../repos/code-pages.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { ContributorsService, Week } from './contributors.js';
import { ActivityTabs } from './pulse-pages.js';

export interface ContributorsPagesDeps extends OpenRepoDeps {
  contributors: Pick<ContributorsService, 'contributors'>;
}

const WEEK = 7 * 86400;
const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

/** Weekly commits from `from` to `to` (week starts) as bars: one path, scaled to the busiest week of `max`. */
function Chart(props: {
  weeks: Week[];
  from: number;
  to: number;
  max: number;
  width: number;
  height: number;
  label: string;
}): VNode {
  const { weeks, from, to, max, width, height } = props;
  const n = Math.max(1, Math.round((to - from) / WEEK) + 1);
  const bar = width / n;
  const d = weeks
    .filter((w) => w.commits > 0)
    .map((w) => {
      const x = ((w.week - from) / WEEK) * bar;
      const h = Math.max(1, (w.commits / Math.max(1, max)) * (height - 2));
      return `M${x.toFixed(1)} ${height}h${Math.max(bar - (bar > 3 ? 1 : 0), 0.6).toFixed(1)}v${(-h).toFixed(1)}h${(-Math.max(bar - (bar > 3 ? 1 : 0), 0.6)).toFixed(1)}z`;
    })
    .join('');
  return (
    <svg
      class="commit-chart"
      role="img"
      aria-label={props.label}
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      preserveAspectRatio="none"
    >
      <line
        x1="0"
        y1={height - 0.5}
        x2={width}
        y2={height - 0.5}
        stroke="currentColor"
        stroke-opacity="0.25"
      />
      <path d={d} fill="currentColor" />
    </svg>
  );
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

export function contributorsPages(deps: ContributorsPagesDeps): PageRoutes {
  return (app, web) => {
    app.get('/:owner/:repo/activity/contributors', async (request, reply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.code');
      const c = await deps.contributors.contributors(view.repo);
      const weeks = c.total.weeks;
      const from = weeks[0]?.week ?? 0;
      const to = weeks.at(-1)?.week ?? 0;
      const busiest = (ws: Week[]) => ws.reduce((m, w) => Math.max(m, w.commits), 0);
      const max = busiest(weeks);
      // The last week ends in the future while it runs.
      const last = Math.min(to + WEEK - 1, Math.floor(Date.now() / 1000));
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Contributors · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="activity" />
          <ActivityTabs base={base} active="contributors" />
          {c.contributors.length === 0 ? (
            <p class="empty">No commits on {view.repo.default_branch || 'the default branch'} yet.</p>
          ) : (
            <>
              <section class="card" aria-label="Commits per week">
                <h2>
                  Commits to <code>{view.repo.default_branch}</code>
                </h2>
                <p class="muted">
                  {plural(c.total.commits, 'commit', 'commits')} from{' '}
                  <time datetime={day(from)}>{day(from)}</time> to{' '}
                  <time datetime={day(last)}>{day(last)}</time>, merges excluded:{' '}
                  <span class="added">+{c.total.additions.toLocaleString('en')}</span>{' '}
                  <span class="deleted">−{c.total.deletions.toLocaleString('en')}</span>
                </p>
                <Chart
                  weeks={weeks}
                  from={from}
                  to={to}
                  max={max}
                  width={900}
                  height={120}
                  label={`Commits per week, at most ${max}`}
                />
              </section>
              <ol class="list contributors">
                {c.contributors.map((p, i) => (
                  <li>
                    <div class="contributor">
                      <span class="muted">#{i + 1}</span>
                      {p.user ? <Avatar user={p.user} size={32} /> : null}
                      <div>
                        <strong>
                          {p.user ? (
                            <a href={`/${encodeURIComponent(p.user.name)}`}>
                              {p.user.full_name || p.user.name}
                            </a>
                          ) : (
                            p.name
                          )}
                        </strong>
                        <div class="muted">
                          {plural(p.commits, 'commit', 'commits')} ·{' '}
                          <span class="added">+{p.additions.toLocaleString('en')}</span>{' '}
                          <span class="deleted">−{p.deletions.toLocaleString('en')}</span>
                        </div>
                      </div>
                    </div>
                    <Chart
                      weeks={p.weeks}
                      from={from}
                      to={to}
                      max={max}
                      width={300}
                      height={40}
                      label={`${p.user?.name ?? p.name}: commits per week`}
                    />
                  </li>
                ))}
              </ol>
            </>
          )}
        </Layout>,
      );
    });
  };
}
