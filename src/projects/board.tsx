// What the project pages of repositories and of users and organizations show alike: the project
// form, the list of projects, and a board with its columns, its cards (issues, pull requests and
// notes) and, for writers, the forms that change them (each also works without a script).
import type { ComponentChildren, VNode } from 'preact';
import { Icon } from '../web/icons.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { DangerForm, TextArea } from '../web/settings.js';
import type { ColumnRow, ProjectRow } from './tables.js';

export type Form = Record<string, string | undefined>;

/** A card as a board shows it: an issue or pull request the viewer may read, or a note. */
export interface ShownCard {
  /** The card's row id (a note's id in forms and moves). */
  id: number;
  columnId: number;
  issueId: number | null;
  note: string | null;
  title: string;
  href: string;
  /** "#3" on a repository's board, "repo#3" on an owner's. */
  ref: string;
  isPull: boolean;
  isClosed: boolean;
}

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

function Err(props: { id: string; error: BoardError | undefined; form: BoardError['form'] }): VNode | null {
  if (props.error?.form !== props.form) return null;
  return (
    <p class="field-error" id={props.id} role="alert">
      {props.error.message}
    </p>
  );
}

/** The writers' forms above a board: a new column, an issue put on it, a note. */
export function BoardForms(props: {
  page: PageContext;
  action: string;
  /** The owner's repositories to pick an issue's from (an owner's board), or null (a repository's). */
  repos: string[] | null;
  values: Form;
  error: BoardError | undefined;
}): VNode {
  const { page, action, error, values } = props;
  const invalid = (form: BoardError['form'], id: string) =>
    error?.form === form ? { 'aria-invalid': 'true' as const, 'aria-describedby': id } : {};
  return (
    <>
      <form method="post" action={action} class="inline-form">
        <CsrfField page={page} />
        <label for="new-column">New column</label>
        <input
          type="text"
          id="new-column"
          name="title"
          required
          maxLength={255}
          value={error?.form === 'column' ? values['title'] : undefined}
          {...invalid('column', 'new-column-error')}
        />
        <label for="new-column-color">Color</label>
        <input id="new-column-color" name="color" type="color" value="#4183c4" />
        <button type="submit">Add column</button>
        <Err id="new-column-error" error={error} form="column" />
      </form>
      <form method="post" action={`${action}/issues`} class="inline-form">
        <CsrfField page={page} />
        {props.repos ? (
          <>
            <label for="add-repo">Repository</label>
            <select id="add-repo" name="repo">
              {props.repos.map((r) => (
                <option value={r} selected={values['repo'] === r}>
                  {r}
                </option>
              ))}
            </select>
          </>
        ) : null}
        <label for="add-issue">Add issue or pull request #</label>
        <input
          type="text"
          id="add-issue"
          name="index"
          inputMode="numeric"
          required
          size={6}
          value={error?.form === 'issue' ? values['index'] : undefined}
          {...invalid('issue', 'add-issue-error')}
        />
        <button type="submit">Add to board</button>
        <Err id="add-issue-error" error={error} form="issue" />
      </form>
      <form method="post" action={`${action}/notes`} class="inline-form">
        <CsrfField page={page} />
        <label for="add-note">New note</label>
        <textarea id="add-note" name="note" rows={2} required {...invalid('note', 'add-note-error')}>
          {error?.form === 'note' ? (values['note'] ?? '') : ''}
        </textarea>
        <button type="submit">Add note</button>
        <Err id="add-note-error" error={error} form="note" />
      </form>
      {error?.form === 'top' ? (
        <p class="error" role="alert">
          {error.message}
        </p>
      ) : null}
    </>
  );
}

/** The board: its columns in order with their cards. */
export function Board(props: {
  page: PageContext;
  base: string;
  columns: ColumnRow[];
  cards: ShownCard[];
  writer: boolean;
  children?: ComponentChildren;
}): VNode {
  const { columns } = props;
  return (
    <>
      {columns.length === 0 ? <p class="empty">This project has no columns yet.</p> : null}
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
      <summary>Column settings</summary>
      <form method="post" action={`${base}/${c.id}/edit`}>
        <CsrfField page={page} />
        <label for={`title-${c.id}`}>Title</label>
        <input type="text" id={`title-${c.id}`} name="title" value={c.title} required maxLength={255} />
        <label for={`color-${c.id}`}>Color</label>
        <input id={`color-${c.id}`} name="color" type="color" value={c.color || '#4183c4'} />
        <button type="submit">Save</button>
      </form>
      <div class="actions">
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
}): VNode {
  const { c } = props;
  return (
    <section class="board-column" data-column={String(c.id)} aria-labelledby={`column-${c.id}`}>
      <header>
        <h3 id={`column-${c.id}`}>
          <Dot color={c.color} /> {c.title} <span class="count">{props.cards.length}</span>
          {c.is_default ? <span class="pill">Default</span> : null}
        </h3>
        {props.writer ? (
          <ColumnMenu page={props.page} base={props.base} c={c} first={props.first} last={props.last} />
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

function CardItem(props: {
  page: PageContext;
  base: string;
  card: ShownCard;
  c: ColumnRow;
  columns: ColumnRow[];
  writer: boolean;
}): VNode {
  const { card, page, base } = props;
  const key = card.issueId !== null ? `issue-${card.issueId}` : `note-${card.id}`;
  return (
    <li
      class={card.issueId === null ? 'board-card note' : 'board-card'}
      data-issue={card.issueId !== null ? String(card.issueId) : undefined}
      data-note={card.issueId === null ? String(card.id) : undefined}
      draggable={props.writer ? true : undefined}
    >
      {card.issueId !== null ? (
        <>
          <Icon name={card.isPull ? 'pull' : card.isClosed ? 'issue-closed' : 'issue-open'} />{' '}
          <a href={card.href}>{card.title}</a> <span class="muted">{card.ref}</span>
        </>
      ) : (
        <p class="note-text">
          <Icon name="note" /> {card.note}
        </p>
      )}
      {props.writer ? (
        <>
          <form method="post" action={`${base}/move-card`} class="card-move">
            <CsrfField page={page} />
            {card.issueId !== null ? (
              <input type="hidden" name="issue_id" value={String(card.issueId)} />
            ) : (
              <input type="hidden" name="note_id" value={String(card.id)} />
            )}
            <label for={`move-${key}`}>Move to</label>
            <select id={`move-${key}`} name="column">
              {props.columns.map((o) => (
                <option value={String(o.id)} selected={o.id === props.c.id}>
                  {o.title}
                </option>
              ))}
            </select>
            <button type="submit">Move</button>
          </form>
          {card.issueId === null ? (
            <details class="note-menu">
              <summary>Edit note</summary>
              <form method="post" action={`${base}/notes/${card.id}/edit`}>
                <CsrfField page={page} />
                <label for={`note-${card.id}`}>Note</label>
                <textarea id={`note-${card.id}`} name="note" rows={3} required>
                  {card.note ?? ''}
                </textarea>
                <button type="submit">Save note</button>
              </form>
              <DangerForm
                page={page}
                action={`${base}/notes/${card.id}/delete`}
                button="Delete note"
                confirm="Delete this note?"
              />
            </details>
          ) : null}
        </>
      ) : null}
    </li>
  );
}
