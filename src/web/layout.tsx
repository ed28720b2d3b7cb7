// The page frame every web page shares: head, top bar (sign-in or the user's menu), main content,
// footer; and the error page. Components receive what they show as typed props.
import type { ComponentChildren, VNode } from 'preact';
import type { UserRow } from '../users/tables.js';
import { avatarPath } from '../users/avatars.js';

/** What every page knows about the request: who is signed in, the CSRF token, asset URLs. */
export interface PageContext {
  user: UserRow | null;
  csrf: string;
  /** The path and query of this request (a sign-in link returns here). */
  path: string;
  asset(name: string): string;
  /** Flash message from the previous request (e.g. after a redirect). */
  flash?: { kind: 'info' | 'error'; text: string } | undefined;
  siteName: string;
  /** Unread notifications of the signed-in user (the header's indicator). */
  unread?: number | undefined;
  /** The site-wide code search is on ([indexer] REPO_INDEXER_ENABLED): the explore pages offer it. */
  codeSearch?: boolean | undefined;
  /** RSS and Atom feeds are on ([other] ENABLE_FEED): pages with a feed announce it. */
  feeds?: boolean | undefined;
}

/** The theme of `<html data-theme>`: the user's choice, `auto` (follows the system) by default. */
export function themeOf(user: UserRow | null): 'auto' | 'light' | 'dark' {
  const t = user?.theme;
  return t === 'light' || t === 'dark' ? t : 'auto';
}

function Icon(props: { d: string }): VNode {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      <path d={props.d} />
    </svg>
  );
}

const BELL =
  'M8 16a2 2 0 0 0 1.98-1.7H6.02A2 2 0 0 0 8 16ZM3 5a5 5 0 0 1 10 0v2.8l1.3 2.6a.75.75 0 0 1-.67 1.1H2.37a.75.75 0 0 1-.67-1.1L3 7.8V5Zm5-3.5A3.5 3.5 0 0 0 4.5 5v3a.75.75 0 0 1-.08.34L3.6 10h8.8l-.82-1.66A.75.75 0 0 1 11.5 8V5A3.5 3.5 0 0 0 8 1.5Z';
const PLUS =
  'M7.25 2.5a.75.75 0 0 1 1.5 0v4.75h4.75a.75.75 0 0 1 0 1.5H8.75v4.75a.75.75 0 0 1-1.5 0V8.75H2.5a.75.75 0 0 1 0-1.5h4.75V2.5Z';
const CARET =
  'M4.4 6.2a.75.75 0 0 1 1.06 0L8 8.74l2.54-2.54a.75.75 0 1 1 1.06 1.06L8.53 10.33a.75.75 0 0 1-1.06 0L4.4 7.26a.75.75 0 0 1 0-1.06Z';

/** The signed-in user's part of the top bar: notifications, the "+" menu and the user menu. */
function AccountMenus(props: { page: PageContext; user: UserRow }): VNode {
  const { page, user } = props;
  const unread = page.unread ?? 0;
  return (
    <>
      <a href="/notifications" class="notif">
        <Icon d={BELL} />
        <span class="sr-only">Notifications</span>
        {unread ? (
          <>
            <span class="badge">{unread > 99 ? '99+' : unread}</span>
            <span class="sr-only"> unread</span>
          </>
        ) : null}
      </a>
      <details class="menu create-menu">
        <summary>
          <Icon d={PLUS} />
          <span class="sr-only">Create</span>
          <Icon d={CARET} />
        </summary>
        <ul class="menu-list">
          <li>
            <a href="/repo/create">New repository</a>
          </li>
          <li>
            <a href="/repo/migrate">New migration</a>
          </li>
          <li>
            <a href="/org/create">New organization</a>
          </li>
        </ul>
      </details>
      <details class="menu user-menu">
        <summary>
          <img class="avatar" src={`/${avatarPath(user)}`} alt="" width={20} height={20} />
          <span class="me">{user.name}</span>
          <Icon d={CARET} />
        </summary>
        <ul class="menu-list">
          <li class="muted">
            Signed in as <strong>{user.name}</strong>
          </li>
          <li>
            <a href={`/${user.name}`}>Profile</a>
          </li>
          <li>
            <a href="/user/settings">Settings</a>
          </li>
          {user.is_admin ? (
            <li>
              <a href="/admin">Site administration</a>
            </li>
          ) : null}
          <li>
            <form method="post" action="/user/logout">
              <input type="hidden" name="_csrf" value={page.csrf} />
              <button type="submit" class="link">
                Sign out
              </button>
            </form>
          </li>
        </ul>
      </details>
    </>
  );
}

export function Layout(props: {
  page: PageContext;
  title: string;
  children: ComponentChildren;
  /** Wider pages (code, diffs) use the full width. */
  wide?: boolean;
  /** The page's RSS and Atom feeds (their path without `.rss`/`.atom`), announced in the head. */
  feed?: string | undefined;
}): VNode {
  const { page } = props;
  const title = props.title ? `${props.title} - ${page.siteName}` : page.siteName;
  return (
    <html lang="en" data-theme={themeOf(page.user)}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta name="csrf-token" content={page.csrf} />
        <title>{title}</title>
        <link rel="icon" href={page.asset('logo.svg')} type="image/svg+xml" />
        <link rel="stylesheet" href={page.asset('style.css')} />
        <script src={page.asset('app.js')} defer />
        {page.feeds && props.feed ? (
          <>
            <link
              rel="alternate"
              type="application/rss+xml"
              title={`${title} (RSS)`}
              href={`${props.feed}.rss`}
            />
            <link
              rel="alternate"
              type="application/atom+xml"
              title={`${title} (Atom)`}
              href={`${props.feed}.atom`}
            />
          </>
        ) : null}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="topbar">
          <nav aria-label="Site">
            <a class="brand" href="/">
              {page.siteName}
            </a>
            <a href="/explore/repos">Explore</a>
          </nav>
          <form method="get" action="/explore/repos" class="topsearch" role="search">
            <input type="search" name="q" aria-label="Search repositories" placeholder="Search…" />
            <button type="submit" class="sr-only">
              Search
            </button>
          </form>
          <nav aria-label="Account" class="account">
            {page.user ? (
              <AccountMenus page={page} user={page.user} />
            ) : (
              <>
                <a href={`/user/login?redirect_to=${encodeURIComponent(page.path)}`}>Sign in</a>
                <a href="/user/sign_up">Register</a>
              </>
            )}
          </nav>
        </header>
        <main id="main" class={props.wide ? 'wide' : undefined}>
          {page.flash ? (
            <p class={`flash ${page.flash.kind}`} role={page.flash.kind === 'error' ? 'alert' : 'status'}>
              {page.flash.text}
            </p>
          ) : null}
          {props.children}
        </main>
        <footer class="footer">
          <span>Powered by Anvil</span>
          <a href="/api/swagger">API</a>
        </footer>
      </body>
    </html>
  );
}

export function ErrorPage(props: { page: PageContext; status: number; message: string }): VNode {
  const heading =
    props.status === 404
      ? 'Page not found'
      : props.status === 403
        ? 'Access denied'
        : props.status === 429
          ? 'Too many requests'
          : props.status >= 500
            ? 'Something went wrong'
            : 'Request refused';
  return (
    <Layout page={props.page} title={heading}>
      <section class="error-page">
        <h1>
          <span class="status">{props.status}</span> {heading}
        </h1>
        <p>{props.message}</p>
        <p>
          <a href="/">Go home</a>
        </p>
      </section>
    </Layout>
  );
}

/** A labelled form field. */
export function Field(props: {
  label: string;
  name: string;
  type?: string;
  value?: string;
  required?: boolean;
  autocomplete?: string;
  autofocus?: boolean;
  readonly?: boolean | undefined;
  error?: string | undefined;
}): VNode {
  const id = `f-${props.name}`;
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        required={props.required}
        autoComplete={props.autocomplete}
        autoFocus={props.autofocus}
        readOnly={props.readonly}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
      />
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

export function CsrfField(props: { page: PageContext }): VNode {
  return <input type="hidden" name="_csrf" value={props.page.csrf} />;
}
