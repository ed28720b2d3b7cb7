// Labels in the web interface: the pill that shows one (scoped labels as `scope | name`, the
// color as an SVG dot, since the pages' Content-Security-Policy allows no inline style), the
// labels a repository's issues can carry, and the repository's labels page.
import type { VNode } from 'preact';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { labelScope, type LabelService } from './service.js';
import type { LabelRow } from './tables.js';

export function LabelPill(props: { label: LabelRow; href?: string | undefined }): VNode {
  const { label } = props;
  const scope = label.exclusive ? labelScope(label.name) : '';
  const inner = (
    <>
      <svg width="10" height="10" viewBox="0 0 10 10" aria-hidden="true">
        <circle cx="5" cy="5" r="5" fill={/^#[0-9a-fA-F]{6}$/.test(label.color) ? label.color : '#888888'} />
      </svg>
      {scope ? (
        <>
          <span class="scope">{scope}</span>
          {label.name.slice(scope.length + 1)}
        </>
      ) : (
        label.name
      )}
    </>
  );
  const cls = `pill label-pill${scope ? ' scoped' : ''}`;
  return props.href ? (
    <a class={cls} href={props.href} title={label.description || undefined}>
      {inner}
    </a>
  ) : (
    <span class={cls} title={label.description || undefined}>
      {inner}
    </span>
  );
}

/** The labels an issue of `repo` may carry: the repository's and its organization's, unarchived. */
export async function labelsFor(
  deps: { labels: Pick<LabelService, 'list'> },
  repo: RepoRow,
  owner: UserRow,
): Promise<LabelRow[]> {
  const all = { page: 1, limit: 10_000, offset: 0 };
  const [own] = await deps.labels.list({ repoId: repo.id }, false, all);
  const [org] = owner.type === 1 ? await deps.labels.list({ orgId: owner.id }, false, all) : [[]];
  return [...own, ...org].sort((a, b) => a.name.localeCompare(b.name));
}

export interface LabelPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  labels: Pick<LabelService, 'list'>;
}

export function labelPages(deps: LabelPagesDeps): PageRoutes {
  return (app, web) => {
    app.get('/:owner/:repo/labels', async (request, reply) => {
      const p = request.params as Record<string, string>;
      const view = await deps.repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        'read',
        'repo.issues',
      );
      const owner = (await deps.users.getById(view.repo.owner_id))!;
      const base = `/${owner.name}/${view.repo.name}`;
      const labels = await labelsFor(deps, view.repo, owner);
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`Labels · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <h2>Labels</h2>
          {labels.length === 0 ? <p class="empty">This repository has no labels.</p> : null}
          <ul class="list">
            {labels.map((l) => (
              <li>
                <div>
                  <LabelPill label={l} href={`${base}/issues?labels=${encodeURIComponent(l.name)}`} />
                  {l.description ? <p class="muted">{l.description}</p> : null}
                </div>
              </li>
            ))}
          </ul>
        </Layout>,
      );
    });
  };
}
