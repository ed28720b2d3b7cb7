// The projects box of an issue's or pull request's sidebar: the project it is on, and for writers
// Forgejo's picker (a list of the repository's and its owner's open projects, or none), a form that
// POSTs to /{owner}/{repo}/issues/projects.
import type { VNode } from 'preact';
import type { RepoRow } from '../repos/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { ProjectService } from './service.js';
import type { ProjectRow } from './tables.js';

export interface ProjectBoxData {
  current: ProjectRow[];
  /** The projects writers may pick from (null for others). */
  choices: ProjectRow[] | null;
}

/** What the box shows: the issue's projects, and the choices for writers. */
export async function projectBoxData(
  projects: Pick<ProjectService, 'projectsOf' | 'choicesFor'>,
  repo: RepoRow,
  issueId: number,
  writer: boolean,
): Promise<ProjectBoxData> {
  const [current, choices] = await Promise.all([
    projects.projectsOf(issueId),
    writer ? projects.choicesFor(repo) : null,
  ]);
  return { current, choices };
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
