// What the project pages of repositories and of users and organizations show alike: the project
// form, the list of projects, and a board: its head with the writers' toolbar ("New column"), its
// columns side by side, each with a "+" (an issue or a note put on that column) and a "…" menu
// (its settings), and their cards (cards.tsx). Every form is a disclosure that works without a
// script; a form that failed is shown open with its message beside the field.
import type { VNode } from 'preact';
import { Icon } from '../web/icons.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { DangerForm, TextArea } from '../web/settings.js';
import { CardItem, type ShownCard } from './cards.js';
import type { ColumnRow, ProjectRow } from './tables.js';

export type Form = Record<string, string | undefined>;

export type { ShownCard } from './cards.js';

/** A message for one of the board's forms: "column", "issue", "note", or "top" for the others. */
export interface BoardError {
  form: 'column' | 'issue' | 'note' | 'top';
  field: string;
  message: string;
}

export function ProjectForm(props: {
  page: PageContext;
  action: string;
  heading: string;
  button: string;
  values: Form;
  errors: Form;
  isNew: boolean;
}): VNode {
  const { values, errors } = props;
  return (
    <form method="post" action={props.action} class="narrow">
      <h2>{props.heading}</h2>
      <CsrfField page={props.page} />
      <Field label="Title" name="title" value={values['title'] ?? ''} required error={errors['title']} />
      <TextArea label="Description" name="content" value={values['content']} error={errors['content']} />
      {props.isNew ? (
        <div class="field">
          <label for="f-template_type">Template</label>
          <select id="f-template_type" name="template_type">
            <option value="0" selected={values['template_type'] !== '1'}>
              None
            </option>
            <option value="1" selected={values['template_type'] === '1'}>
              Basic kanban (To Do, In Progress, Done)
            </option>
          </select>
        </div>
      ) : null}
      <button type="submit" class="primary">
        {props.button}
      </button>
    </form>
  );
}

function Dot(props: { color: string }): VNode | null {
  if (!props.color) return null;
  return (
    <svg class="column-dot" width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">
      <circle cx="6" cy="6" r="6" fill={props.color} />
    </svg>
  );
}

/** The open or closed projects, with the writers' buttons. */
export function ProjectList(props: {
  page: PageContext;
  base: string;
  state: 'open' | 'closed';
  rows: ProjectRow[];
  writer: boolean;
}): VNode {
  const { page, base, state, rows, writer } = props;
  return (
    <>
      <div class="list-head">
        <h2>Projects</h2>
        {writer ? (
          <a class="button primary" href={`${base}/new`}>
            New project
          </a>
        ) : null}
      </div>
      <nav class="tabs" aria-label="State">
        <a href={`${base}?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
          Open
        </a>
        <a href={`${base}?state=closed`} aria-current={state === 'closed' ? 'page' : undefined}>
          Closed
        </a>
      </nav>
      {rows.length === 0 ? <p class="empty">No {state} projects.</p> : null}
      <ul class="list">
        {rows.map((p) => (
          <li>
            <a class="title" href={`${base}/${p.id}`}>
              {p.title}
            </a>
            {p.description ? <p class="muted">{p.description}</p> : null}
            {writer ? (
              <div class="actions">
                <a class="button" href={`${base}/${p.id}/edit`}>
                  Edit
                </a>
                <form method="post" action={`${base}/${p.id}/${p.is_closed ? 'open' : 'close'}`}>
                  <CsrfField page={page} />
                  <button type="submit">{p.is_closed ? 'Open' : 'Close'}</button>
                </form>
                <DangerForm
                  page={page}
                  action={`${base}/${p.id}/delete`}
                  button="Delete"
                  confirm={`Delete the project ${p.title}? Its issues stay, off the board.`}
                />
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </>
  );
}

export function Err(props: {
  id: string;
  error: BoardError | undefined;
  form: BoardError['form'];
}): VNode | null {
  if (props.error?.form !== props.form) return null;
  return (
    <p class="field-error" id={props.id} role="alert">
      {props.error.message}
    </p>
  );
}

/** The attributes that tie a field to the message of its form, when that form failed. */
export const invalid = (shown: boolean, id: string) =>
  shown ? { 'aria-invalid': 'true' as const, 'aria-describedby': id } : {};

/**
 * The board's head: its title and description and, for writers, a compact toolbar: "New column"
 * (a disclosure with the form, open again when it failed) and the project's edit page. Messages
 * that belong to no form are shown under it.
 */
export function BoardHead(props: {
  page: PageContext;
  project: ProjectRow;
  /** The board's address (…/projects/{id}). */
  action: string;
  writer: boolean;
  values: Form;
  error: BoardError | undefined;
}): VNode {
  const { page, project: p, action, error, values } = props;
  const failed = error?.form === 'column';
  return (
    <>
      <div class="board-head">
        <div class="board-title">
          <h2>
            {p.title} {p.is_closed ? <span class="pill">Closed</span> : null}
          </h2>
          {p.description ? <p class="muted">{p.description}</p> : null}
        </div>
        {props.writer ? (
          <div class="board-toolbar">
            <details class="board-pop" open={failed}>
              <summary class="button primary">
                <Icon name="plus" /> New column
              </summary>
              <form method="post" action={action} class="board-pop-body">
                <CsrfField page={page} />
                <label for="new-column">Column title</label>
                <input
                  type="text"
                  id="new-column"
                  name="title"
                  required
                  maxLength={255}
                  placeholder="e.g. In review"
                  value={failed ? values['title'] : undefined}
                  {...invalid(failed && error.field !== 'color', 'new-column-error')}
                />
                <label for="new-column-color">Color</label>
                <input
                  id="new-column-color"
                  name="color"
                  type="color"
                  value={
                    failed && /^#[0-9a-f]{6}$/i.test(values['color'] ?? '') ? values['color'] : '#4183c4'
                  }
                  {...invalid(failed && error.field === 'color', 'new-column-error')}
                />
                <Err id="new-column-error" error={error} form="column" />
                <button type="submit" class="primary">
                  Add column
                </button>
              </form>
            </details>
            <a class="button" href={`${action}/edit`}>
              Edit project
            </a>
          </div>
        ) : null}
      </div>
      {error?.form === 'top' ? (
        <p class="flash error" role="alert">
          {error.message}
        </p>
      ) : null}
    </>
  );
}

/** The board: its columns side by side, each with its cards and, for writers, its "+" and "…" menus. */
export function Board(props: {
  page: PageContext;
  base: string;
  columns: ColumnRow[];
  cards: ShownCard[];
  writer: boolean;
  /** The owner's repositories to pick an issue's from (an owner's board), or null (a repository's). */
  repos: string[] | null;
  values: Form;
  error: BoardError | undefined;
}): VNode {
  const { columns, error, values } = props;
  // The column whose add form failed: the one posted, else the default one (where the card would go).
  const posted = columns.find((c) => String(c.id) === values['column']);
  const target =
    error?.form === 'issue' || error?.form === 'note'
      ? (posted ?? columns.find((c) => c.is_default) ?? columns[0])
      : undefined;
  return (
    <>
      {columns.length === 0 ? (
        <p class="empty board-empty">
          <Icon name="columns" /> This project has no columns yet.
          {props.writer ? ' Add one with “New column”.' : null}
        </p>
      ) : null}
      {target === undefined && (error?.form === 'issue' || error?.form === 'note') ? (
        <p class="flash error" role="alert">
          {error.message}
        </p>
      ) : null}
      <div class="board" data-board={props.writer ? props.base : undefined}>
        {columns.map((c, ci) => (
          <BoardColumn
            page={props.page}
            base={props.base}
            c={c}
            first={ci === 0}
            last={ci === columns.length - 1}
            columns={columns}
            cards={props.cards.filter((x) => x.columnId === c.id)}
            writer={props.writer}
            repos={props.repos}
            values={values}
            error={target?.id === c.id ? error : undefined}
          />
        ))}
      </div>
      {props.writer ? <script src={props.page.asset('projects.js')} defer /> : null}
    </>
  );
}

function ColumnMenu(props: { page: PageContext; base: string; c: ColumnRow; first: boolean; last: boolean }) {
  const { c, page, base } = props;
  return (
    <details class="column-menu">
      <summary class="column-action" title="Column settings">
        <Icon name="more" />
        <span class="sr-only">Settings of the column {c.title}</span>
      </summary>
      <div class="column-panel">
        <form method="post" action={`${base}/${c.id}/edit`} class="column-form">
          <CsrfField page={page} />
          <label for={`title-${c.id}`}>Title</label>
          <input type="text" id={`title-${c.id}`} name="title" value={c.title} required maxLength={255} />
          <label for={`color-${c.id}`}>Color</label>
          <div class="column-form-row">
            <input id={`color-${c.id}`} name="color" type="color" value={c.color || '#4183c4'} />
            <button type="submit">Save</button>
          </div>
        </form>
        <div class="column-actions">
          {props.first ? null : (
            <form method="post" action={`${base}/${c.id}/left`}>
              <CsrfField page={page} />
              <button type="submit">Move left</button>
            </form>
          )}
          {props.last ? null : (
            <form method="post" action={`${base}/${c.id}/right`}>
              <CsrfField page={page} />
              <button type="submit">Move right</button>
            </form>
          )}
          {c.is_default ? null : (
            <form method="post" action={`${base}/${c.id}/default`}>
              <CsrfField page={page} />
              <button type="submit">Set as default</button>
            </form>
          )}
          <DangerForm
            page={page}
            action={`${base}/${c.id}/delete`}
            button="Delete column"
            confirm={`Delete the column ${c.title}? Its cards move to the default column.`}
          />
        </div>
      </div>
    </details>
  );
}

/** A column's "+": an issue or pull request by number, or a note, put at the end of this column. */
function AddCard(props: {
  page: PageContext;
  base: string;
  c: ColumnRow;
  repos: string[] | null;
  values: Form;
  error: BoardError | undefined;
}): VNode {
  const { page, base, c, error, values } = props;
  const issueFailed = error?.form === 'issue';
  const noteFailed = error?.form === 'note';
  return (
    <details class="column-add" open={issueFailed || noteFailed}>
      <summary class="column-action" title="Add a card">
        <Icon name="plus" />
        <span class="sr-only">Add a card to {c.title}</span>
      </summary>
      <div class="column-panel">
        <form method="post" action={`${base}/issues`} class="column-form">
          <CsrfField page={page} />
          <input type="hidden" name="column" value={String(c.id)} />
          {props.repos ? (
            <>
              <label for={`add-repo-${c.id}`}>Repository</label>
              <select
                id={`add-repo-${c.id}`}
                name="repo"
                {...invalid(issueFailed && error.field === 'repo', 'add-issue-error')}
              >
                {props.repos.map((r) => (
                  <option value={r} selected={issueFailed && values['repo'] === r}>
                    {r}
                  </option>
                ))}
              </select>
            </>
          ) : null}
          <label for={`add-issue-${c.id}`}>Issue or pull request number</label>
          <div class="column-form-row">
            <input
              type="text"
              id={`add-issue-${c.id}`}
              name="index"
              inputMode="numeric"
              required
              placeholder="#"
              autocomplete="off"
              value={issueFailed ? values['index'] : undefined}
              {...invalid(issueFailed && error.field !== 'repo', 'add-issue-error')}
            />
            <button type="submit">Add issue</button>
          </div>
          <Err id="add-issue-error" error={error} form="issue" />
        </form>
        <form method="post" action={`${base}/notes`} class="column-form">
          <CsrfField page={page} />
          <input type="hidden" name="column" value={String(c.id)} />
          <label for={`add-note-${c.id}`}>Note</label>
          <textarea
            id={`add-note-${c.id}`}
            name="note"
            rows={2}
            required
            {...invalid(noteFailed, 'add-note-error')}
          >
            {noteFailed ? (values['note'] ?? '') : ''}
          </textarea>
          <Err id="add-note-error" error={error} form="note" />
          <button type="submit">Add note</button>
        </form>
      </div>
    </details>
  );
}

function BoardColumn(props: {
  page: PageContext;
  base: string;
  c: ColumnRow;
  first: boolean;
  last: boolean;
  columns: ColumnRow[];
  cards: ShownCard[];
  writer: boolean;
  repos: string[] | null;
  values: Form;
  error: BoardError | undefined;
}): VNode {
  const { c } = props;
  return (
    <section class="board-column" data-column={String(c.id)} aria-labelledby={`column-${c.id}`}>
      <header class="board-column-head">
        <h3 id={`column-${c.id}`}>
          <Dot color={c.color} /> <span class="column-title">{c.title}</span>{' '}
          <span class="count">{props.cards.length}</span>
          {c.is_default ? <span class="pill">Default</span> : null}
        </h3>
        {props.writer ? (
          <>
            <AddCard
              page={props.page}
              base={props.base}
              c={c}
              repos={props.repos}
              values={props.values}
              error={props.error}
            />
            <ColumnMenu page={props.page} base={props.base} c={c} first={props.first} last={props.last} />
          </>
        ) : null}
      </header>
      <ol class="board-cards" data-move={props.writer ? `${props.base}/${c.id}/move` : undefined}>
        {props.cards.map((card) => (
          <CardItem
            page={props.page}
            base={props.base}
            card={card}
            c={c}
            columns={props.columns}
            writer={props.writer}
          />
        ))}
      </ol>
    </section>
  );
}
