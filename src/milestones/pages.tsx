// Milestones in the web interface: the repository's milestones (open or closed) with their
// progress and due dates; a milestone's page is the issue list filtered by it, as in Forgejo.
import type { VNode } from 'preact';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import { RepoHeader } from '../repos/code-pages.js';
import { When } from '../web/components.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { MilestoneService } from './service.js';
import type { MilestoneRow } from './tables.js';

export function MilestoneSummary(props: { m: MilestoneRow; base: string }): VNode {
  const { m } = props;
  const open = m.num_issues - m.num_closed_issues;
  return (
    <div>
      <a class="title" href={`${props.base}/milestone/${m.id}`}>
        {m.name}
      </a>
      <p class="muted">
        <progress max={100} value={m.completeness} aria-label={`${m.name}: ${m.completeness}% complete`} />{' '}
        {m.completeness}% · {open} open · {m.num_closed_issues} closed
        {m.deadline_unix ? (
          <>
            {' '}
            · due <When unix={m.deadline_unix} />
          </>
        ) : null}
      </p>
      {m.content ? <p>{m.content}</p> : null}
    </div>
  );
}

export interface MilestonePagesDeps extends OpenRepoDeps {
  milestones: Pick<MilestoneService, 'list' | 'requireMilestone'>;
}

export function milestonePages(deps: MilestonePagesDeps): PageRoutes {
  return (app, web) => {
    const { milestones } = deps;
    app.get('/:owner/:repo/milestones', async (request, reply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.issues');
      const state = (request.query as Record<string, unknown>)['state'] === 'closed' ? 'closed' : 'open';
      const [rows] = await milestones.list(view.repo, { state }, { page: 1, limit: 1000, offset: 0 });
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Milestones · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <h2>Milestones</h2>
          <nav class="tabs" aria-label="State">
            <a href={`${base}/milestones?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
              Open
            </a>
            <a
              href={`${base}/milestones?state=closed`}
              aria-current={state === 'closed' ? 'page' : undefined}
            >
              Closed
            </a>
          </nav>
          {rows.length === 0 ? <p class="empty">No milestones.</p> : null}
          <ul class="list">
            {rows.map((m) => (
              <li>
                <MilestoneSummary m={m} base={base} />
              </li>
            ))}
          </ul>
        </Layout>,
      );
    });

    app.get('/:owner/:repo/milestone/:id', async (request, reply) => {
      const { view, base } = await openRepo(deps, request, 'repo.issues');
      const m = await milestones.requireMilestone(
        view.repo,
        (request.params as Record<string, string>)['id'] ?? '',
      );
      return web.redirect(reply, `${base}/issues?milestone=${m.id}&state=${m.is_closed ? 'closed' : 'open'}`);
    });
  };
}
