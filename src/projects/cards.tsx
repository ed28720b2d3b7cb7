// A board's card: an issue or pull request (its state icon, title, reference and labels) or a note
// and, for writers, its "…" menu: "Move to" (the no-script move; projects.js drags), taking an
// issue off the board, and a note's edit and delete.
import type { VNode } from 'preact';
import { LabelPill } from '../labels/pill.js';
import type { LabelRow } from '../labels/tables.js';
import { Icon } from '../web/icons.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import { DangerForm } from '../web/settings.js';
import type { ColumnRow } from './tables.js';

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
  /** A pull request that was merged (shown as merged, not closed). */
  isMerged: boolean;
  labels: LabelRow[];
}

function StateIcon(props: { card: ShownCard }): VNode {
  const { card } = props;
  // As Forgejo's lists: a merged pull request in purple with the merge icon, a closed one in red.
  const state = card.isMerged ? 'merged' : card.isClosed ? 'closed' : 'open';
  const name = card.isMerged
    ? 'merged'
    : card.isPull
      ? 'pull'
      : card.isClosed
        ? 'issue-closed'
        : 'issue-open';
  const what = `${card.isPull ? 'Pull request' : 'Issue'}, ${state}`;
  return (
    <span class="card-state" title={what}>
      <Icon name={name} class={state} />
      <span class="sr-only">{what}:</span>
    </span>
  );
}

export function CardItem(props: {
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
        <div class="card-main">
          <StateIcon card={card} />
          <div class="card-body">
            <a class="card-title" href={card.href}>
              {card.title}
            </a>
            <div class="card-meta">
              <span class="card-ref">{card.ref}</span>
              {card.labels.map((l) => (
                <LabelPill label={l} />
              ))}
            </div>
          </div>
        </div>
      ) : (
        <div class="card-main">
          <span class="card-state">
            <Icon name="note" />
            <span class="sr-only">Note:</span>
          </span>
          <p class="note-text">{card.note}</p>
        </div>
      )}
      {props.writer ? (
        <details class="card-menu">
          <summary class="column-action" title="Card actions">
            <Icon name="more" />
            <span class="sr-only">Actions of {card.issueId !== null ? card.ref : 'the note'}</span>
          </summary>
          <div class="card-panel">
            <form method="post" action={`${base}/move-card`} class="column-form">
              <CsrfField page={page} />
              {card.issueId !== null ? (
                <input type="hidden" name="issue_id" value={String(card.issueId)} />
              ) : (
                <input type="hidden" name="note_id" value={String(card.id)} />
              )}
              <label for={`move-${key}`}>Move to</label>
              <div class="column-form-row">
                <select id={`move-${key}`} name="column">
                  {props.columns.map((o) => (
                    <option value={String(o.id)} selected={o.id === props.c.id}>
                      {o.title}
                    </option>
                  ))}
                </select>
                <button type="submit">Move</button>
              </div>
            </form>
            {card.issueId === null ? (
              <>
                <form method="post" action={`${base}/notes/${card.id}/edit`} class="column-form">
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
              </>
            ) : (
              <DangerForm
                page={page}
                action={`${base}/issues/remove`}
                button="Remove from project"
                confirm={`Take ${card.ref} off this project? The issue stays.`}
              >
                <input type="hidden" name="issue_id" value={String(card.issueId)} />
              </DangerForm>
            )}
          </div>
        </details>
      ) : null}
    </li>
  );
}
