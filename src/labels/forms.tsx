// The label forms shared by a repository's labels page and an organization's label settings:
// a new label (title, color, description, exclusive, archived), a label's edit form and its
// delete button, posted to `{base}/new|edit|delete` (Forgejo's field names).
import type { VNode } from 'preact';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { Checkbox, DangerForm } from '../web/settings.js';
import { LabelPill } from './pill.js';
import type { LabelRow } from './tables.js';

type Form = Record<string, string | undefined>;

export function NewLabelForm(props: { page: PageContext; base: string; values: Form; errors: Form }): VNode {
  const { page, values, errors } = props;
  return (
    <form method="post" action={`${props.base}/new`}>
      <CsrfField page={page} />
      <Field label="Label name" name="title" value={values['title'] ?? ''} required error={errors['title']} />
      <Field
        label="Color (#rrggbb)"
        name="color"
        value={values['color'] ?? '#2f62c9'}
        required
        error={errors['color']}
      />
      <Field
        label="Description"
        name="description"
        value={values['description'] ?? ''}
        error={errors['description']}
      />
      <Checkbox
        label="Exclusive"
        name="exclusive"
        checked={values['exclusive'] === 'on'}
        hint="An issue holds at most one label of the scope (the part before the last '/')."
      />
      <Checkbox label="Archived" name="archived" checked={values['archived'] === 'on'} />
      <button type="submit" class="primary">
        Create label
      </button>
    </form>
  );
}

/** One label of a list: its pill, description, edit form (folded) and, for writers, delete. */
export function LabelItem(props: { page: PageContext; base: string; label: LabelRow; href?: string }): VNode {
  const { page, base, label: l } = props;
  const id = (f: string) => `l-${l.id}-${f}`;
  return (
    <li>
      <div>
        <LabelPill label={l} href={props.href} />
        {l.archived_unix ? <span class="muted"> (archived)</span> : null}
        {l.description ? <p class="muted">{l.description}</p> : null}
        <details>
          <summary>Edit</summary>
          <form method="post" action={`${base}/edit`}>
            <CsrfField page={page} />
            <input type="hidden" name="id" value={String(l.id)} />
            <div class="field">
              <label for={id('title')}>Label name</label>
              <input id={id('title')} name="title" value={l.name} required />
            </div>
            <div class="field">
              <label for={id('color')}>Color</label>
              <input id={id('color')} name="color" value={l.color} required />
            </div>
            <div class="field">
              <label for={id('description')}>Description</label>
              <input id={id('description')} name="description" value={l.description} />
            </div>
            <Checkbox label="Exclusive" name="exclusive" id={id('exclusive')} checked={l.exclusive === 1} />
            <Checkbox label="Archived" name="archived" id={id('archived')} checked={l.archived_unix > 0} />
            <button type="submit">Save label</button>
          </form>
        </details>
      </div>
      <div class="actions">
        <DangerForm
          page={page}
          action={`${base}/delete`}
          button="Delete"
          confirm={`Delete the label ${l.name}? Issues lose it.`}
        >
          <input type="hidden" name="id" value={String(l.id)} />
        </DangerForm>
      </div>
    </li>
  );
}
