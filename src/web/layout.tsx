// The page frame every web page shares: head, top bar (sign-in or the user's menu), main content,
// footer; and the error page. Components receive what they show as typed props.
import type { ComponentChildren, VNode } from 'preact';
import type { UserRow } from '../users/tables.js';

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
}

export function Layout(props: {
  page: PageContext;
  title: string;
  children: ComponentChildren;
  /** Wider pages (code, diffs) use the full width. */
  wide?: boolean;
}): VNode {
  const { page } = props;
  const title = props.title ? `${props.title} - ${page.siteName}` : page.siteName;
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta name="csrf-token" content={page.csrf} />
        <title>{title}</title>
        <link rel="icon" href={page.asset('logo.svg')} type="image/svg+xml" />
        <link rel="stylesheet" href={page.asset('style.css')} />
        <script src={page.asset('app.js')} defer />
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
          <nav aria-label="Account" class="account">
            {page.user ? (
              <>
                <a href="/repo/create">New repository</a>
                <a href={`/${page.user.name}`} class="me">
                  {page.user.name}
                </a>
                <form method="post" action="/user/logout" class="inline">
                  <input type="hidden" name="_csrf" value={page.csrf} />
                  <button type="submit" class="link">
                    Sign out
                  </button>
                </form>
              </>
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
