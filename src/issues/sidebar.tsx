// The sidebar of an issue or pull request page: its labels, milestone and assignees, and for writers
// the forms that change them.
import type { VNode } from 'preact';
import { LabelPill } from '../labels/pages.js';
import type { LabelRow } from '../labels/tables.js';
import type { MilestoneService } from '../milestones/service.js';
import type { MilestoneRow } from '../milestones/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { IssueRow } from './tables.js';
import type { ThreadData } from './thread.js';

/** The labels box of the sidebar: pills, and for writers a form of checkboxes. */
export function LabelsBox(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  current: LabelRow[];
  choices: LabelRow[] | null;
}): VNode {
  const { current, choices } = props;
  const on = new Set(current.map((l) => l.id));
  return (
    <section class="card" aria-label="Labels">
      <h3>Labels</h3>
      {current.length ? (
        <p>
          {current.map((l) => (
            <LabelPill
              label={l}
              href={`${props.base}/${props.issue.is_pull ? 'pulls' : 'issues'}?labels=${encodeURIComponent(l.name)}`}
            />
          ))}
        </p>
      ) : (
        <p class="muted">None yet</p>
      )}
      {choices && choices.length ? (
        <form method="post" action={`${props.base}/issues/${props.issue.index}/labels`}>
          <CsrfField page={props.page} />
          <fieldset class="label-choices">
            <legend class="muted">Set labels</legend>
            {choices.map((l) => (
              <label>
                <input type="checkbox" name="label" value={String(l.id)} checked={on.has(l.id)} />{' '}
                <LabelPill label={l} />
              </label>
            ))}
          </fieldset>
          <button type="submit">Apply labels</button>
        </form>
      ) : null}
    </section>
  );
}

/** Milestone and assignees of the sidebar; writers get a form to change them. */
export function MetaBox(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  d: ThreadData;
  choices: { milestones: MilestoneRow[]; people: UserRow[] } | null;
}): VNode {
  const { d, choices, issue } = props;
  const chosen = new Set(d.assignees.map((u) => u.id));
  return (
    <>
      <section class="card" aria-label="Milestone">
        <h3>Milestone</h3>
        {d.milestone ? (
          <p>
            <a href={`${props.base}/milestone/${d.milestone.id}`}>{d.milestone.name}</a>
          </p>
        ) : (
          <p class="muted">No milestone</p>
        )}
        {choices && choices.milestones.length ? (
          <form method="post" action={`${props.base}/issues/${issue.index}/milestone`} class="actions">
            <CsrfField page={props.page} />
            <select name="milestone" aria-label="Set the milestone">
              <option value="0">No milestone</option>
              {choices.milestones.map((m) => (
                <option value={String(m.id)} selected={m.id === issue.milestone_id}>
                  {m.name}
                </option>
              ))}
            </select>
            <button type="submit">Set</button>
          </form>
        ) : null}
      </section>
      <section class="card" aria-label="Assignees">
        <h3>Assignees</h3>
        {d.assignees.length ? (
          <p>
            {d.assignees.map((u) => (
              <>
                <a href={`/${u.name}`}>{u.name}</a>{' '}
              </>
            ))}
          </p>
        ) : (
          <p class="muted">No one</p>
        )}
        {choices && choices.people.length ? (
          <form method="post" action={`${props.base}/issues/${issue.index}/assignees`}>
            <CsrfField page={props.page} />
            <fieldset class="label-choices">
              <legend class="muted">Assign</legend>
              {choices.people.map((u) => (
                <label>
                  <input type="checkbox" name="assignee" value={u.name} checked={chosen.has(u.id)} /> {u.name}
                </label>
              ))}
            </fieldset>
            <button type="submit">Apply assignees</button>
          </form>
        ) : null}
      </section>
    </>
  );
}

export interface SidebarDeps {
  milestones: Pick<MilestoneService, 'list'>;
  repos: Pick<RepoService, 'assignees'>;
}

/** What writers may choose from in the sidebar (null for others). */
export async function sidebarChoices(deps: SidebarDeps, repo: RepoRow, writer: boolean) {
  if (!writer) return null;
  const [[milestones], people] = await Promise.all([
    deps.milestones.list(repo, { state: 'open' }, { page: 1, limit: 1000, offset: 0 }),
    deps.repos.assignees(repo),
  ]);
  return { milestones, people };
}
