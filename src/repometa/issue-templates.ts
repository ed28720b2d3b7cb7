// Issue templates and the issue configuration, parsed as Forgejo does (modules/issue/template and
// services/issue/template.go): Markdown templates with YAML front matter (name, about or
// description, title, labels, ref), YAML issue forms (the same keys and a `body` of fields,
// validated field by field) and `config.yml` (blank_issues_enabled, contact_links). Pure: the
// caller reads the files from the default branch.
import type * as Yaml from 'yaml';
import { lazyModule } from '../lazy.js';

/** yaml, loaded on first use (not at start-up). */
const yaml = lazyModule<typeof Yaml>('yaml');

/** Directories holding templates, in Forgejo's order. */
export const TEMPLATE_DIRS = [
  'ISSUE_TEMPLATE',
  'issue_template',
  '.forgejo/ISSUE_TEMPLATE',
  '.forgejo/issue_template',
  '.gitea/ISSUE_TEMPLATE',
  '.gitea/issue_template',
  '.github/ISSUE_TEMPLATE',
  '.github/issue_template',
  '.gitlab/ISSUE_TEMPLATE',
  '.gitlab/issue_template',
];

/** Configuration files (without extension; .yaml before .yml), in Forgejo's order. */
export const CONFIG_CANDIDATES = [
  '.forgejo/ISSUE_TEMPLATE/config',
  '.forgejo/issue_template/config',
  '.gitea/ISSUE_TEMPLATE/config',
  '.gitea/issue_template/config',
  '.github/ISSUE_TEMPLATE/config',
  '.github/issue_template/config',
];

export type FieldType = 'markdown' | 'textarea' | 'input' | 'dropdown' | 'checkboxes';

export interface IssueFormField {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  validations: Record<string, unknown>;
  visible: string[];
}

export interface IssueTemplate {
  name: string;
  title: string;
  about: string;
  labels: string[];
  ref: string;
  content: string;
  body: IssueFormField[] | null;
  file_name: string;
}

export interface IssueConfig {
  blank_issues_enabled: boolean;
  contact_links: Array<{ name: string; url: string; about: string }>;
}

export class TemplateError extends Error {}

/** '' (not a template), 'md' or 'yaml', by the file name; config.y(a)ml is never a template. */
export function templateType(fileName: string): '' | 'md' | 'yaml' {
  const base = fileName.slice(fileName.lastIndexOf('/') + 1);
  if (base === 'config.yaml' || base === 'config.yml') return '';
  const dot = base.lastIndexOf('.');
  const ext = dot < 0 ? '' : base.slice(dot);
  if (ext === '.md') return 'md';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  return '';
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A YAML scalar as Go's yaml decodes it into a string field. */
function str(v: unknown, key: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new TemplateError(`yaml: cannot unmarshal ${Array.isArray(v) ? 'sequence' : 'mapping'} into ${key}`);
}

/** Labels: a list, or one comma-separated string. */
function labelsOf(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (Array.isArray(v)) return v.map((x) => str(x, 'labels'));
  throw new TemplateError('yaml: cannot unmarshal mapping into IssueTemplateLabels');
}

function yamlDoc(text: string): unknown {
  try {
    return yaml().parse(text, { prettyErrors: false });
  } catch (err) {
    throw new TemplateError(`yaml: ${(err as Error).message.split('\n')[0]}`);
  }
}

const isSeparator = (line: string) => /^-{3,}$/.test(line.trim());

/** Front matter and body of a Markdown file (Forgejo's markdown.ExtractMetadata); null when there is none. */
export function frontMatter(content: string): { meta: string; body: string } | null {
  const lines = content.split('\n');
  if (!isSeparator(lines[0] ?? '')) return null;
  for (let i = 1; i < lines.length; i++) {
    if (isSeparator(lines[i]!)) {
      const meta = lines.slice(1, i).join('\n');
      if (meta === '') return null;
      return { meta: meta + '\n', body: lines.slice(i + 1).join('\n') };
    }
  }
  return null;
}

/** At most `n` characters, else n-1 and an ellipsis (Forgejo's EllipsisDisplayString). */
function ellipsis(s: string, n: number): string {
  const chars = [...s];
  return chars.length <= n ? s : chars.slice(0, n - 1).join('') + '…';
}

function metaFields(doc: unknown, t: IssueTemplate): void {
  if (doc === null || doc === undefined) return;
  if (!isRecord(doc)) throw new TemplateError('yaml: cannot unmarshal into IssueTemplate');
  t.name = str(doc['name'], 'name');
  t.title = str(doc['title'], 'title');
  t.about = str(doc['about'], 'about') || str(doc['description'], 'description');
  t.labels = labelsOf(doc['labels']);
  t.ref = str(doc['ref'], 'ref');
}

/** Parses and validates one template file; throws TemplateError naming the problem. */
export function parseTemplate(fileName: string, content: string): IssueTemplate {
  const t: IssueTemplate = {
    name: '',
    title: '',
    about: '',
    labels: [],
    ref: '',
    content: '',
    body: null,
    file_name: fileName,
  };
  const type = templateType(fileName);
  if (type === 'md') {
    const fm = frontMatter(content);
    let parsed = false;
    if (fm) {
      try {
        metaFields(yamlDoc(fm.meta), t);
        t.content = fm.body;
        parsed = true;
      } catch {
        parsed = false;
      }
    }
    if (!parsed) {
      // No (readable) metadata: the whole file is the content, named after the file.
      t.content = content;
      t.name = fileName.slice(fileName.lastIndexOf('/') + 1);
      t.about = ellipsis(content, 80);
      t.title = '';
      t.labels = [];
      t.ref = '';
    }
  } else if (type === 'yaml') {
    const doc = yamlDoc(content);
    metaFields(doc, t);
    const body = isRecord(doc) ? doc['body'] : undefined;
    if (body !== undefined && body !== null) {
      if (!Array.isArray(body)) throw new TemplateError('yaml: cannot unmarshal into body');
      t.body = body.map((f, i) => fieldOf(f, i));
    }
  } else {
    throw new TemplateError(`${fileName} is not a template`);
  }
  validate(t, type);
  if (!t.ref.startsWith('refs/')) t.ref = `refs/heads/${t.ref}`;
  return t;
}

function fieldOf(f: unknown, i: number): IssueFormField {
  if (!isRecord(f)) throw new TemplateError(`yaml: cannot unmarshal into body[${i}]`);
  const type = str(f['type'], 'type');
  const attrs = f['attributes'];
  const vals = f['validations'];
  if (attrs !== undefined && attrs !== null && !isRecord(attrs))
    throw new TemplateError(`yaml: cannot unmarshal into body[${i}].attributes`);
  if (vals !== undefined && vals !== null && !isRecord(vals))
    throw new TemplateError(`yaml: cannot unmarshal into body[${i}].validations`);
  let visible: string[];
  if (f['visible'] === undefined || f['visible'] === null) {
    // Shown on the form; put in the issue's content too, but for markdown.
    visible = type === 'markdown' ? ['form'] : ['form', 'content'];
  } else if (Array.isArray(f['visible'])) {
    visible = f['visible'].map((v) => str(v, 'visible'));
  } else {
    throw new TemplateError(`yaml: cannot unmarshal into body[${i}].visible`);
  }
  return {
    type,
    id: str(f['id'], 'id') || String(i),
    attributes: (attrs as Record<string, unknown> | undefined) ?? {},
    validations: (vals as Record<string, unknown> | undefined) ?? {},
    visible,
  };
}

// Validation (Forgejo's template.Validate): the first problem is the error.

function validate(t: IssueTemplate, type: 'md' | 'yaml'): void {
  if (t.name.trim() === '') throw new TemplateError("'name' is required");
  if (t.about.trim() === '') throw new TemplateError("'about' is required");
  if (type !== 'yaml') return;
  if (!t.body || t.body.length === 0) throw new TemplateError("'body' is required");
  const ids = new Set<string>();
  t.body.forEach((field, idx) => {
    const at = position(idx, field.type);
    if (field.type !== 'markdown') {
      if (field.id === '') throw err(at, "'id' is required");
      if (/[^\w-]/.test(field.id)) throw err(at, "'id' should contain only alphanumeric, '-' and '_'");
      if (ids.has(field.id)) throw err(at, "'id' should be unique");
      ids.add(field.id);
      stringItem(at, field.attributes, true, 'label');
    }
    switch (field.type) {
      case 'markdown':
        stringItem(at, field.attributes, true, 'value');
        break;
      case 'textarea':
        stringItem(at, field.attributes, false, 'description', 'placeholder', 'value', 'render');
        break;
      case 'input':
        stringItem(at, field.attributes, false, 'description', 'placeholder', 'value');
        boolItem(at, field.validations, 'is_number');
        stringItem(at, field.validations, false, 'regex');
        break;
      case 'dropdown':
        stringItem(at, field.attributes, false, 'description');
        boolItem(at, field.attributes, 'multiple');
        options(field, idx);
        dropdownDefault(at, field.attributes);
        break;
      case 'checkboxes':
        stringItem(at, field.attributes, false, 'description');
        options(field, idx);
        break;
      default:
        throw err(at, 'unknown type');
    }
    if (field.type !== 'markdown' && field.type !== 'checkboxes') {
      boolItem(at, field.validations, 'required');
      if (field.validations['required'] === true && !field.visible.includes('form'))
        throw err(at, 'can not require a hidden field');
    }
  });
}

const position = (idx: number, type: string, option?: number) =>
  `body[${idx}](${type})` + (option === undefined ? '' : `, option[${option}]`);
const err = (at: string, msg: string) => new TemplateError(`${at}: ${msg}`);

function stringItem(at: string, m: Record<string, unknown>, required: boolean, ...keys: string[]): void {
  for (const key of keys) {
    if (!(key in m)) {
      if (required) throw err(at, `'${key}' is required`);
      return;
    }
    const v = m[key];
    if (typeof v !== 'string') throw err(at, `'${key}' should be a string`);
    if (required && v.trim() === '') throw err(at, `'${key}' is required`);
  }
}

function boolItem(at: string, m: Record<string, unknown>, ...keys: string[]): void {
  for (const key of keys) {
    if (!(key in m)) return;
    if (typeof m[key] !== 'boolean') throw err(at, `'${key}' should be a bool`);
  }
}

function options(field: IssueFormField, idx: number): void {
  const opts = field.attributes['options'];
  if (!Array.isArray(opts) || opts.length === 0)
    throw err(position(idx, field.type), "'options' is required and should be a array");
  opts.forEach((opt: unknown, o) => {
    const at = position(idx, field.type, o);
    if (field.type === 'dropdown') {
      if (typeof opt !== 'string') throw err(at, 'should be a string');
      return;
    }
    if (!isRecord(opt)) throw err(at, 'should be a dictionary');
    if (typeof opt['label'] !== 'string' || opt['label'] === '')
      throw err(at, "'label' is required and should be a string");
    const visible = opt['visible'];
    if (visible !== undefined) {
      if (!Array.isArray(visible)) throw err(at, "'visible' should be list");
      if (visible.some((v) => v !== 'form' && v !== 'content'))
        throw err(at, "'visible' list can only contain strings of 'form' and 'content'");
    }
    if ('required' in opt) {
      if (typeof opt['required'] !== 'boolean') throw err(at, "'required' should be a bool");
      if (Array.isArray(visible) && !visible.includes('form'))
        throw err(at, 'can not require a hidden checkbox');
    }
  });
}

function dropdownDefault(at: string, attrs: Record<string, unknown>): void {
  if (!('default' in attrs)) return;
  const v = attrs['default'];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw err(at, "'default' should be an int");
  const opts = attrs['options'] as unknown[];
  if (v < 0 || v >= opts.length) throw err(at, "the value of 'default' is out of range");
}

export const defaultIssueConfig = (): IssueConfig => ({ blank_issues_enabled: true, contact_links: [] });

/** Parses config.yml: throws TemplateError with Forgejo's message when it is not valid. */
export function parseIssueConfig(content: string): IssueConfig {
  const doc = yamlDoc(content);
  const config = defaultIssueConfig();
  if (doc === null || doc === undefined) return config;
  if (!isRecord(doc)) throw new TemplateError('yaml: cannot unmarshal into IssueConfig');
  const blank = doc['blank_issues_enabled'];
  if (blank !== undefined && blank !== null) {
    if (typeof blank !== 'boolean')
      throw new TemplateError('yaml: cannot unmarshal into blank_issues_enabled');
    config.blank_issues_enabled = blank;
  }
  const links = doc['contact_links'];
  if (links !== undefined && links !== null) {
    if (!Array.isArray(links)) throw new TemplateError('yaml: cannot unmarshal into contact_links');
    links.forEach((l: unknown, i) => {
      if (!isRecord(l)) throw new TemplateError(`yaml: cannot unmarshal into contact_links[${i}]`);
      const link = {
        name: str(l['name'], 'name'),
        url: str(l['url'], 'url'),
        about: str(l['about'], 'about'),
      };
      const pos = i + 1;
      if (link.name === '') throw new TemplateError(`contact_link at position ${pos} is missing name key`);
      if (link.url === '') throw new TemplateError(`contact_link at position ${pos} is missing url key`);
      if (link.about === '') throw new TemplateError(`contact_link at position ${pos} is missing about key`);
      if (!isRequestUri(link.url)) throw new TemplateError(`${link.url} is not a valid URL`);
      config.contact_links.push(link);
    });
  }
  return config;
}

/** Go's url.ParseRequestURI: an absolute URL (with a scheme) or an absolute path. */
function isRequestUri(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return !/\s/.test(s);
  } catch {
    return false;
  }
}
