// The repository's activity page (Forgejo's /{owner}/{repo}/activity[/{period}]).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import { RepoHeader } from '../repos/code-pages.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { PERIODS, type Period, type Pulse, type PulseService } from './pulse.js';

export interface PulsePagesDeps extends OpenRepoDeps {
  pulse: Pick<PulseService, 'pulse'>;
}

const LABELS: Record<Period, string> = {
  daily: '1 day',
  halfweekly: '3 days',
  weekly: '1 week',
  monthly: '1 month',
  quarterly: '3 months',
  semiyearly: '6 months',
  yearly: '1 year',
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function Overview(props: { p: Pulse; base: string; branch: string }): VNode {
  const { p, base } = props;
  const stat = (id: string, n: number, label: string, href: string) => (
    <li>
      <a href={href} data-stat={id}>
        <strong>{n}</strong> {label}
      </a>
    </li>
  );
  return (
    <section aria-label="Overview">
      <ul class="list activity-stats">
        {stat('merged-pulls', p.mergedPulls, 'Merged pull requests', `${base}/pulls?state=closed`)}
        {stat('proposed-pulls', p.openedPulls, 'Proposed pull requests', `${base}/pulls`)}
        {stat('closed-issues', p.closedIssues, 'Closed issues', `${base}/issues?state=closed`)}
        {stat('opened-issues', p.openedIssues, 'New issues', `${base}/issues`)}
        {stat('unresolved', p.unresolvedConversations, 'Unresolved conversations', `${base}/issues`)}
        {stat('releases', p.releases, 'Releases', `${base}/releases`)}
      </ul>
      <p data-stat="commits">
        {plural(p.commits.commits, 'commit', 'commits')} by {plural(p.commits.authors, 'author', 'authors')}{' '}
        pushed to <code>{props.branch}</code>, {plural(p.commits.filesChanged, 'file', 'files')} changed.
      </p>
    </section>
  );
}

/** The activity pages' tabs: the overview of a period and the contributors. */
export function ActivityTabs(props: { base: string; active: 'overview' | 'contributors' }): VNode {
  return (
    <nav class="tabs" aria-label="Activity">
      <a href={`${props.base}/activity`} aria-current={props.active === 'overview' ? 'page' : undefined}>
        Overview
      </a>
      <a
        href={`${props.base}/activity/contributors`}
        aria-current={props.active === 'contributors' ? 'page' : undefined}
      >
        Contributors
      </a>
    </nav>
  );
}

export function pulsePages(deps: PulsePagesDeps): PageRoutes {
  return (app, web) => {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.code');
      const raw = (request.params as Record<string, string>)['period'] ?? 'weekly';
      if (!(raw in PERIODS)) throw new AppError('not_found', 'no such period');
      const period = raw as Period;
      const p = await deps.pulse.pulse(view.repo, period);
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Activity · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="activity" />
          <ActivityTabs base={base} active="overview" />
          <h2>Activity</h2>
          <nav class="tabs" aria-label="Period">
            {(Object.keys(PERIODS) as Period[]).map((k) => (
              <a href={`${base}/activity/${k}`} aria-current={k === period ? 'page' : undefined}>
                {LABELS[k]}
              </a>
            ))}
          </nav>
          <p class="muted">
            Activity over the last {LABELS[period]}, since{' '}
            <time datetime={new Date(p.since * 1000).toISOString()}>
              {new Date(p.since * 1000).toISOString().slice(0, 10)}
            </time>
            .
          </p>
          <Overview p={p} base={base} branch={view.repo.default_branch} />
        </Layout>,
      );
    };
    app.get('/:owner/:repo/activity', handler);
    app.get('/:owner/:repo/activity/:period', handler);
  };
}
