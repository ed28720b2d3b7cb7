// The projects box of an issue's or pull request's sidebar: the project it is on, and for writers
// Forgejo's picker (a list of the repository's and its owner's open projects, or none), a form that
// POSTs to /{owner}/{repo}/issues/projects.
import type { VNode } from 'preact';
import type { OrgService } from '../orgs/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow, type Viewer } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { ProjectService } from './service.js';
import type { ProjectRow } from './tables.js';

export interface ProjectBoxData {
  current: ProjectRow[];
  /** The projects writers may pick from (null for others). */
  choices: ProjectRow[] | null;
}

export interface ProjectBoxDeps {
  projects: Pick<ProjectService, 'projectsOf' | 'choicesFor'>;
  orgs: Pick<OrgService, 'canSee'>;
  users: Pick<UserService, 'canSee'>;
}

/**
 * What the box shows: the issue's projects, and the choices for writers. The owner's projects
 * only to those who may see the owner (an outside collaborator of a private organization's
 * repository reads its issues, not the organization's boards).
 */
export async function projectBoxData(
  deps: ProjectBoxDeps,
  repo: RepoRow,
  owner: UserRow,
  viewer: Viewer | null,
  issueId: number,
  writer: boolean,
): Promise<ProjectBoxData> {
  const [current, choices, ownerVisible] = await Promise.all([
    deps.projects.projectsOf(issueId),
    writer ? deps.projects.choicesFor(repo) : null,
    owner.type === UserType.Organization ? deps.orgs.canSee(viewer, owner) : deps.users.canSee(viewer, owner),
  ]);
  const shown = (p: ProjectRow) => p.repo_id !== null || ownerVisible;
  return { current: current.filter(shown), choices: choices?.filter(shown) ?? null };
}

export function ProjectBox(props: {
  page: PageContext;
  /** The repository's address (/{owner}/{repo}). */
  base: string;
  ownerName: string;
  issue: { id: number };
  data: ProjectBoxData;
}): VNode {
  const { current, choices } = props.data;
  const href = (p: ProjectRow) =>
    p.repo_id !== null ? `${props.base}/projects/${p.id}` : `/${props.ownerName}/-/projects/${p.id}`;
  const chosen = current[0]?.id ?? 0;
  return (
    <section class="card" aria-label="Projects">
      <h3>Projects</h3>
      {current.length ? (
        <p>
          {current.map((p) => (
            <>
              <a href={href(p)}>{p.title}</a>{' '}
            </>
          ))}
        </p>
      ) : (
        <p class="muted">None yet</p>
      )}
      {choices && (choices.length || current.length) ? (
        <form method="post" action={`${props.base}/issues/projects`} class="actions">
          <CsrfField page={props.page} />
          <input type="hidden" name="issue_ids" value={String(props.issue.id)} />
          <select name="id" aria-label="Set the project">
            <option value="0">No project</option>
            {choices.map((p) => (
              <option value={String(p.id)} selected={p.id === chosen}>
                {p.repo_id === null ? `${props.ownerName} / ${p.title}` : p.title}
              </option>
            ))}
          </select>
          <button type="submit">Set</button>
        </form>
      ) : null}
    </section>
  );
}
