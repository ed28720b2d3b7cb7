// Issue templates on the new-issue page, as Forgejo shows them: the chooser (each template, a blank
// issue when the repository's issue config allows it, the contact links), a markdown template's
// title, text and labels filled in, and an issue form's fields (markdown, input, textarea,
// dropdown, checkboxes) drawn as form controls and turned back into the issue's text on submit.
import type { VNode } from 'preact';
import type { IssueConfig, IssueFormField, IssueTemplate } from '../repometa/issue-templates.js';
import { renderMarkdown } from '../markup/render.js';

const attr = (f: IssueFormField, key: string): string => {
  const v = f.attributes[key];
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
};
const required = (f: IssueFormField): boolean => f.validations['required'] === true;
const fieldName = (f: IssueFormField, i: number) => `form-field-${f.id || i}`;
const options = (f: IssueFormField): string[] => {
  const o = f.attributes['options'];
  if (!Array.isArray(o)) return [];
  return o.map((x) =>
    typeof x === 'string'
      ? x
      : typeof x === 'object' && x
        ? String((x as { label?: unknown }).label ?? '')
        : String(x),
  );
};
/** Whether a field of an issue form shows on the web form (Forgejo's `visible`, default form+content). */
const onForm = (f: IssueFormField) => f.visible.length === 0 || f.visible.includes('form');
const inContent = (f: IssueFormField) =>
  f.type !== 'markdown' && (f.visible.length === 0 || f.visible.includes('content'));

export function TemplateChooser(props: {
  base: string;
  templates: IssueTemplate[];
  config: IssueConfig;
}): VNode {
  return (
    <ul class="list templates">
      {props.templates.map((t) => (
        <li>
          <div>
            <p class="title">{t.name}</p>
            <p class="muted">{t.about}</p>
          </div>
          <a
            class="button primary"
            href={`${props.base}/issues/new?template=${encodeURIComponent(t.file_name)}`}
          >
            Get started
          </a>
        </li>
      ))}
      {props.config.blank_issues_enabled ? (
        <li>
          <div>
            <p class="title">Blank issue</p>
            <p class="muted">Create an issue without a template.</p>
          </div>
          <a class="button" href={`${props.base}/issues/new?blank=1`}>
            Open a blank issue
          </a>
        </li>
      ) : null}
      {props.config.contact_links.map((c) => (
        <li>
          <div>
            <p class="title">{c.name}</p>
            <p class="muted">{c.about}</p>
          </div>
          <a class="button" href={/^https?:\/\//i.test(c.url) ? c.url : '#'} rel="nofollow noopener">
            Open
          </a>
        </li>
      ))}
    </ul>
  );
}

/** The controls of an issue form (values of a previous, refused submission kept). */
export function TemplateFields(props: { fields: IssueFormField[]; values: Record<string, unknown> }): VNode {
  const value = (name: string) => {
    const v = props.values[name];
    return typeof v === 'string' ? v : '';
  };
  return (
    <>
      {props.fields.map((f, i) => {
        if (!onForm(f)) return null;
        const name = fieldName(f, i);
        const id = `f-${name}`;
        const label = attr(f, 'label');
        const description = attr(f, 'description');
        const desc = description ? (
          <p class="muted" id={`${id}-desc`}>
            {description}
          </p>
        ) : null;
        switch (f.type) {
          case 'markdown':
            return (
              <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(attr(f, 'value')) }} />
            );
          case 'input':
          case 'textarea':
            return (
              <div class="field">
                <label for={id}>{label}</label>
                {desc}
                {f.type === 'input' ? (
                  <input
                    id={id}
                    name={name}
                    type="text"
                    required={required(f)}
                    placeholder={attr(f, 'placeholder')}
                    value={value(name) || attr(f, 'value')}
                  />
                ) : (
                  <textarea id={id} name={name} required={required(f)} placeholder={attr(f, 'placeholder')}>
                    {value(name) || attr(f, 'value')}
                  </textarea>
                )}
              </div>
            );
          case 'dropdown':
            return (
              <div class="field">
                <label for={id}>{label}</label>
                {desc}
                <select
                  id={id}
                  name={name}
                  required={required(f)}
                  multiple={f.attributes['multiple'] === true}
                >
                  {options(f).map((o, k) => (
                    <option value={String(k)} selected={value(name) === String(k)}>
                      {o}
                    </option>
                  ))}
                </select>
              </div>
            );
          case 'checkboxes':
            return (
              <fieldset class="label-choices">
                <legend>{label}</legend>
                {desc}
                {options(f).map((o, k) => (
                  <label>
                    <input type="checkbox" name={`${name}-${k}`} value="on" /> {o}
                  </label>
                ))}
              </fieldset>
            );
          default:
            return null;
        }
      })}
    </>
  );
}

/**
 * The issue's text from a submitted issue form, as Forgejo writes it: each field that goes into
 * the content as `### Label`, then its value (`_No response_` when empty), checkboxes as a task list.
 */
export function composeBody(fields: IssueFormField[], form: Record<string, unknown>): string {
  const str = (v: unknown): string[] =>
    (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
  const parts: string[] = [];
  fields.forEach((f, i) => {
    if (!inContent(f)) return;
    const name = fieldName(f, i);
    const label = attr(f, 'label');
    let text = '';
    if (f.type === 'checkboxes') {
      text = options(f)
        .map((o, k) => `- [${str(form[`${name}-${k}`]).length ? 'x' : ' '}] ${o}`)
        .join('\n');
    } else if (f.type === 'dropdown') {
      const opts = options(f);
      text = str(form[name])
        .map((k) => opts[Number(k)])
        .filter((o): o is string => o !== undefined)
        .join(', ');
    } else {
      text = (str(form[name])[0] ?? '').trim();
      const render = attr(f, 'render');
      if (text && f.type === 'textarea' && render) text = `\`\`\`${render}\n${text}\n\`\`\``;
    }
    parts.push(`### ${label}\n\n${text || '_No response_'}`);
  });
  return parts.join('\n\n');
}

/** The required fields of an issue form left empty (their labels). */
export function missingFields(fields: IssueFormField[], form: Record<string, unknown>): string[] {
  return fields.flatMap((f, i) => {
    if (!onForm(f) || !required(f) || f.type === 'markdown' || f.type === 'checkboxes') return [];
    const v = form[fieldName(f, i)];
    const filled = Array.isArray(v) ? v.length > 0 : typeof v === 'string' && v.trim() !== '';
    return filled ? [] : [attr(f, 'label')];
  });
}
