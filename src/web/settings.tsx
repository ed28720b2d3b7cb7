// The frame of every settings area (a user's, a repository's, an organization's, the site
// administration): a side menu of its pages beside the page's content; and the form controls
// those pages share. Fields keep what was typed after an error and show the message beside them.
import type { ComponentChildren, VNode } from 'preact';
import { CsrfField, Layout, type PageContext } from './layout.js';

export interface NavItem {
  href: string;
  label: string;
}

/** The pages of /user/settings, in Forgejo's order. */
export const USER_SETTINGS_NAV: NavItem[] = [
  { href: '/user/settings', label: 'Profile' },
  { href: '/user/settings/account', label: 'Account' },
  { href: '/user/settings/appearance', label: 'Appearance' },
  { href: '/user/settings/security', label: 'Security' },
  { href: '/user/settings/blocked_users', label: 'Blocked users' },
  { href: '/user/settings/applications', label: 'Applications' },
  { href: '/user/settings/keys', label: 'SSH / GPG keys' },
  { href: '/user/settings/notifications', label: 'Notifications' },
  { href: '/user/settings/organization', label: 'Organizations' },
  { href: '/user/settings/repos', label: 'Repositories' },
  { href: '/user/settings/hooks', label: 'Webhooks' },
  { href: '/user/settings/actions/secrets', label: 'Actions secrets' },
  { href: '/user/settings/actions/variables', label: 'Actions variables' },
  { href: '/user/settings/actions/runners', label: 'Runners' },
  { href: '/user/settings/packages', label: 'Packages' },
  { href: '/user/settings/storage_overview', label: 'Storage overview' },
];

/** The pages of a repository's settings (`/{owner}/{repo}/settings...`), in Forgejo's order. */
export function repoSettingsNav(owner: string, repo: string): NavItem[] {
  const base = `/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/settings`;
  return [
    { href: base, label: 'Repository' },
    { href: `${base}/units`, label: 'Units' },
    { href: `${base}/collaboration`, label: 'Collaborators' },
    { href: `${base}/branches`, label: 'Branches' },
    { href: `${base}/tags`, label: 'Tags' },
    { href: `${base}/hooks`, label: 'Webhooks' },
    { href: `${base}/keys`, label: 'Deploy keys' },
    { href: `${base}/mirrors`, label: 'Mirrors' },
    { href: `${base}/lfs`, label: 'LFS' },
    { href: `${base}/actions/secrets`, label: 'Actions secrets' },
    { href: `${base}/actions/variables`, label: 'Actions variables' },
    { href: `${base}/actions/runners`, label: 'Runners' },
  ];
}

/** The pages of an organization's settings (`/org/{org}/settings...`). */
export function orgSettingsNav(org: string): NavItem[] {
  const base = `/org/${encodeURIComponent(org)}/settings`;
  return [
    { href: base, label: 'Organization' },
    { href: `${base}/hooks`, label: 'Webhooks' },
    { href: `${base}/labels`, label: 'Labels' },
    { href: `${base}/blocked_users`, label: 'Blocked users' },
    { href: `${base}/actions/secrets`, label: 'Actions secrets' },
    { href: `${base}/actions/variables`, label: 'Actions variables' },
    { href: `${base}/actions/runners`, label: 'Runners' },
    { href: `${base}/storage_overview`, label: 'Storage overview' },
  ];
}

/** The pages of the site administration (`/admin...`, administrators only). */
export const ADMIN_NAV: NavItem[] = [
  { href: '/admin', label: 'Dashboard' },
  { href: '/admin/users', label: 'User accounts' },
  { href: '/admin/emails', label: 'Emails' },
  { href: '/admin/orgs', label: 'Organizations' },
  { href: '/admin/repos', label: 'Repositories' },
  { href: '/admin/packages', label: 'Packages' },
  { href: '/admin/hooks', label: 'Webhooks' },
  { href: '/admin/actions/runners', label: 'Runners' },
  { href: '/admin/quota', label: 'Quota' },
  { href: '/admin/config', label: 'Configuration' },
  { href: '/admin/monitor/cron', label: 'Background jobs' },
  { href: '/admin/notices', label: 'System notices' },
];

/**
 * A settings page: the area's heading, its side menu (the entry whose address is `active` is
 * marked as the current page) and the content.
 */
export function SettingsLayout(props: {
  page: PageContext;
  /** The page's title (the browser tab shows it before the site's name). */
  title: string;
  /** The area's name above the menu ("User settings", "owner/repo", "Site administration"). */
  area: string;
  nav: NavItem[];
  active: string;
  children: ComponentChildren;
}): VNode {
  return (
    <Layout page={props.page} title={props.title}>
      <div class="settings">
        <nav class="settings-nav" aria-label={props.area}>
          <p class="settings-area">{props.area}</p>
          <ul>
            {props.nav.map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={item.href === props.active ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="settings-content">{props.children}</div>
      </div>
    </Layout>
  );
}

/** A titled block of a settings page (Forgejo's "ui attached segment"). */
export function Section(props: { title: string; children: ComponentChildren; danger?: boolean }): VNode {
  return (
    <section class={props.danger ? 'settings-section danger' : 'settings-section'}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

const errorIds = (name: string, error: string | undefined, id = `f-${name}`) => {
  return {
    id,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
  };
};

function FieldError(props: { name: string; error: string | undefined; id?: string | undefined }) {
  return props.error ? (
    <p class="field-error" id={`${props.id ?? `f-${props.name}`}-error`}>
      {props.error}
    </p>
  ) : null;
}

/** A labelled multi-line text field. */
export function TextArea(props: {
  label: string;
  name: string;
  value?: string | undefined;
  rows?: number;
  maxLength?: number;
  required?: boolean;
  error?: string | undefined;
  hint?: string;
  /** The element's id when two forms of a page have a field of the same name (`f-{name}` otherwise). */
  id?: string;
}): VNode {
  const ids = errorIds(props.name, props.error, props.id);
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={ids.id}>{props.label}</label>
      <textarea
        {...ids}
        name={props.name}
        rows={props.rows ?? 4}
        maxLength={props.maxLength}
        required={props.required}
      >
        {props.value ?? ''}
      </textarea>
      {props.hint ? <p class="muted hint">{props.hint}</p> : null}
      <FieldError name={props.name} error={props.error} id={props.id} />
    </div>
  );
}

/** A labelled file input (`multiple` for several files), with its error beside it. */
export function FileField(props: {
  label: string;
  name: string;
  accept?: string;
  multiple?: boolean;
  required?: boolean;
  error?: string | undefined;
}): VNode {
  const ids = errorIds(props.name, props.error);
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={ids.id}>{props.label}</label>
      <input
        {...ids}
        type="file"
        name={props.name}
        accept={props.accept}
        multiple={props.multiple}
        required={props.required}
      />
      <FieldError name={props.name} error={props.error} />
    </div>
  );
}

/**
 * The avatar section of a user's or an organization's settings: the current picture, an upload
 * form posting `avatar` to `{action}` and, when one was uploaded, a delete button that asks first
 * (posting to `{action}/delete`).
 */
export function AvatarSection(props: {
  page: PageContext;
  action: string;
  src: string;
  alt: string;
  uploaded: boolean;
  confirm: string;
  error?: string | undefined;
}): VNode {
  return (
    <Section title="Avatar">
      <div class="avatar-setting">
        <img class="avatar" src={props.src} alt={props.alt} width={96} height={96} />
        <form method="post" action={props.action} enctype="multipart/form-data">
          <CsrfField page={props.page} />
          <FileField
            label="Upload an image (PNG, JPEG, GIF or WebP)"
            name="avatar"
            accept="image/png,image/jpeg,image/gif,image/webp"
            error={props.error}
          />
          <button type="submit">Update avatar</button>
        </form>
      </div>
      {props.uploaded ? (
        <DangerForm
          page={props.page}
          action={`${props.action}/delete`}
          button="Delete current avatar"
          confirm={props.confirm}
        />
      ) : null}
    </Section>
  );
}

/** A labelled choice of one value. */
export function Select(props: {
  label: string;
  name: string;
  value?: string | undefined;
  options: Array<{ value: string; label: string }>;
  error?: string | undefined;
}): VNode {
  const ids = errorIds(props.name, props.error);
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={ids.id}>{props.label}</label>
      <select {...ids} name={props.name}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value} selected={o.value === props.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldError name={props.name} error={props.error} />
    </div>
  );
}

/** A labelled checkbox (sent as `on` when checked, absent when not, as browsers do). */
export function Checkbox(props: {
  label: string;
  name: string;
  checked?: boolean;
  value?: string;
  hint?: string;
  /** Distinguishes several checkboxes of one name. */
  id?: string;
}): VNode {
  const id = props.id ?? `f-${props.name}`;
  return (
    <div class="field check">
      <input id={id} type="checkbox" name={props.name} value={props.value ?? 'on'} checked={props.checked} />
      <label for={id}>{props.label}</label>
      {props.hint ? <span class="muted hint">{props.hint}</span> : null}
    </div>
  );
}

/**
 * A destructive action: a POST form whose button asks for confirmation first (app.js shows
 * `confirm` text through `data-confirm`; the server still checks what it must, such as a typed name).
 */
export function DangerForm(props: {
  page: PageContext;
  action: string;
  button: string;
  confirm: string;
  children?: ComponentChildren;
}): VNode {
  return (
    <form method="post" action={props.action} class="danger-form" data-confirm={props.confirm}>
      <CsrfField page={props.page} />
      {props.children}
      <button type="submit" class="danger">
        {props.button}
      </button>
    </form>
  );
}

/** Whether a checkbox of a posted form was ticked. */
export const ticked = (v: unknown): boolean => v === 'on' || v === 'true' || v === '1';
