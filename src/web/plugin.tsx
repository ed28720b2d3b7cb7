// The web interface's plumbing: the browser's session and CSRF cookie, the signed-in user of each
// page request, the CSRF check of every form, must-change-password, flash messages, redirects to
// sign in, and errors as pages in the site's look. Each domain's pages.tsx registers its routes
// through `Web`; they call the same services as the API (and so the same permission checks).
import { registerCompression } from '../http/compression.js';
import crypto from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import type { VNode } from 'preact';
import type { Config } from '../config/config.js';
import { AppError, MovedError, badRequest } from '../errors.js';
import { movedTo, statusOf } from '../http/errors.js';
import type { SessionService } from '../sessions/service.js';
import type { NotificationService } from '../notifications/service.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { Assets } from './assets.js';
import { sendHtml } from './html.js';
import { ErrorPage, type PageContext } from './layout.js';
import { safeRedirect, siteOf, type Site } from './redirect.js';
import { FormCsrfError, readMultipartForm, removeUploads, type Upload } from './uploads.js';
import { logFailure } from '../http/request-log.js';

export type { Upload } from './uploads.js';

export const CSRF_COOKIE = '_csrf';
const FLASH_COOKIE = 'anvil_flash';

export interface WebState {
  user: UserRow | null;
  viewer: Viewer | null;
  /** The browser's CSRF cookie value (set on first visit). */
  browserId: string;
  csrf: string;
  flash: PageContext['flash'];
  /** Unread notifications of the signed-in user (pages shown with GET only). */
  unread?: number | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    web: WebState;
    /** Files of a multipart form, in temporary files removed once the response is sent. */
    uploads: Upload[] | null;
  }
}

/** A form field's text ('' when absent; the first when it was sent several times). */
export const formText = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';

/** A form field sent any number of times (checkboxes of one name), as a list of texts. */
export const formList = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');

/** The files posted in a form field (empty file inputs left out). */
export function uploadsOf(value: unknown): Upload[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter(
    (u): u is Upload => typeof u === 'object' && u !== null && 'path' in u && (u as Upload).filename !== '',
  );
}

/** Thrown by a page that needs a signed-in user: the browser is sent to sign in and back. */
export class SignInRequired extends Error {}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Where a user who must change the password may still go. */
const MUST_CHANGE_ALLOWED = ['/user/settings/change_password', '/user/logout', '/assets/'];

const CSRF_REFUSED =
  'The form has expired or did not come from this site (invalid CSRF token). Go back, reload the page and try again.';

/** What the pages' plumbing asks of web sessions (sessions/service.ts). */
export type WebSessions = Pick<SessionService, 'resolve' | 'csrfToken' | 'checkCsrf' | 'create' | 'destroy'>;

export interface WebDeps {
  sessions: WebSessions;
  /** [session]: the session cookie's name, and whether cookies are `Secure`. */
  session: Pick<Config['session'], 'cookieName' | 'cookieSecure'>;
  /** Largest file a form may post, in bytes ([attachment] MAX_SIZE). */
  uploadLimit: number;
  /** [server] ROOT_URL: redirects go only to paths of its origin. */
  rootUrl: string;
  /** Where files posted with forms wait for their request (uploads.ts `uploadsTempDir`). */
  uploadsDir: string;
  /** The header's unread count (one indexed count per page shown). */
  notifications?: Pick<NotificationService, 'countUnread'> | undefined;
  /** [indexer] REPO_INDEXER_ENABLED: the explore pages offer the site-wide code search. */
  codeSearch?: boolean | undefined;
  /** [other] ENABLE_FEED: pages announce their RSS and Atom feeds. */
  feeds?: boolean | undefined;
}

export class Web {
  readonly assets = new Assets();
  readonly siteName = 'Anvil';
  readonly sessions: WebSessions;
  readonly uploadLimit: number;
  private readonly session: WebDeps['session'];
  readonly uploadsDir: string;
  private readonly site: Site;
  private readonly notifications: WebDeps['notifications'];
  private readonly codeSearch: boolean;
  private readonly feeds: boolean;

  constructor(deps: WebDeps) {
    this.codeSearch = deps.codeSearch === true;
    this.feeds = deps.feeds === true;
    this.notifications = deps.notifications;
    this.sessions = deps.sessions;
    this.session = deps.session;
    this.uploadLimit = deps.uploadLimit;
    this.uploadsDir = deps.uploadsDir;
    this.site = siteOf(deps.rootUrl);
  }

  /**
   * Where to send the browser for a target that came with the request (`redirect_to`, a form
   * field): the normalised path of this site, or `fallback`. Every redirect goes through it.
   */
  localTarget(to: unknown, fallback = '/'): string {
    return safeRedirect(to, this.site, fallback);
  }

  private cookieOptions(maxAge?: number) {
    return {
      path: '/',
      httpOnly: true,
      sameSite: 'lax' as const,
      secure: this.session.cookieSecure,
      ...(maxAge !== undefined ? { maxAge } : {}),
    };
  }

  /**
   * Sets a cookie of the site's kind (HttpOnly, SameSite=Lax, Secure as [session] COOKIE_SECURE
   * says) that lives `maxAge` seconds; `null` removes it.
   */
  setCookie(reply: FastifyReply, name: string, value: string | null, maxAge?: number): void {
    if (value === null) reply.clearCookie(name, { path: '/' });
    else reply.setCookie(name, value, this.cookieOptions(maxAge));
  }

  /** Resolves the browser's session and CSRF cookie (setting one when missing). */
  async resolve(request: FastifyRequest, reply: FastifyReply): Promise<WebState> {
    const { sessions, session } = this;
    const found = await sessions.resolve(request.cookies[session.cookieName]);
    let browserId = request.cookies[CSRF_COOKIE];
    if (!browserId || !/^[A-Za-z0-9_-]{20,64}$/.test(browserId)) {
      browserId = crypto.randomBytes(18).toString('base64url');
      reply.setCookie(CSRF_COOKIE, browserId, this.cookieOptions());
    }
    const user = found?.user ?? null;
    let flash: PageContext['flash'];
    const rawFlash = request.cookies[FLASH_COOKIE];
    if (rawFlash) {
      reply.clearCookie(FLASH_COOKIE, { path: '/' });
      const [kind, ...text] = rawFlash.split(':');
      if ((kind === 'info' || kind === 'error') && text.length) flash = { kind, text: text.join(':') };
    }
    // Only pages (GET) show the header; redirects and form posts need no count.
    const unread =
      user && this.notifications && request.method === 'GET'
        ? await this.notifications.countUnread(user.id)
        : undefined;
    return {
      user,
      unread,
      viewer: user ? { id: user.id, isAdmin: user.is_admin === 1 } : null,
      browserId,
      csrf: sessions.csrfToken(browserId, user?.id ?? null),
      flash,
    };
  }

  page(request: FastifyRequest): PageContext {
    const w = request.web;
    return {
      user: w.user,
      csrf: w.csrf,
      path: request.url,
      asset: (name) => this.assets.url(name),
      flash: w.flash,
      siteName: this.siteName,
      unread: w.unread,
      codeSearch: this.codeSearch,
      feeds: this.feeds,
    };
  }

  send(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
    return sendHtml(reply, page, status);
  }

  /** The signed-in user, or a redirect to sign in. */
  requireUser(request: FastifyRequest): UserRow {
    if (!request.web.user) throw new SignInRequired();
    return request.web.user;
  }

  /** Redirects (303: the browser follows with GET) with a message shown on the next page. */
  redirect(reply: FastifyReply, to: string, flash?: { kind: 'info' | 'error'; text: string }): FastifyReply {
    if (flash) reply.setCookie(FLASH_COOKIE, `${flash.kind}:${flash.text}`, this.cookieOptions(60));
    return reply.code(303).header('Location', this.localTarget(to)).send();
  }

  /** Starts a fresh session for `user` (the old one, if any, ends). */
  async signIn(request: FastifyRequest, reply: FastifyReply, user: UserRow): Promise<void> {
    const { sessions, session } = this;
    await sessions.destroy(request.cookies[session.cookieName]);
    const value = await sessions.create(user);
    reply.setCookie(session.cookieName, value, this.cookieOptions());
  }

  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { sessions, session } = this;
    await sessions.destroy(request.cookies[session.cookieName]);
    reply.clearCookie(session.cookieName, { path: '/' });
  }

  errorPage(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
    return this.send(
      reply,
      <ErrorPage page={this.page(request)} status={status} message={message} />,
      status,
    );
  }

  /** The page for a 404 outside every route (the site-wide not-found handler calls it for browsers). */
  async notFoundPage(request: FastifyRequest, reply: FastifyReply) {
    request.web = await this.resolve(request, reply);
    return this.errorPage(request, reply, 404, 'The page you asked for does not exist.');
  }
}

export type PageRoutes = (app: FastifyInstance, web: Web) => void;

export async function registerWeb(app: FastifyInstance, web: Web, pages: PageRoutes[]): Promise<void> {
  web.assets.register(app);
  await app.register(async (scope) => {
    registerCompression(scope);
    await scope.register(formbody, { bodyLimit: 1024 * 1024 });
    // Forms with files: read part by part only after the session and the CSRF token (header, or
    // the form's first field) were checked, each file to a temporary file as it arrives (uploads.ts).
    await scope.register(multipart, {
      limits: { fileSize: web.uploadLimit, files: 20, fields: 100 },
    });
    scope.decorateRequest('uploads', null);
    const forget = async (request: FastifyRequest) => {
      const uploads = request.uploads;
      request.uploads = null;
      if (uploads?.length) await removeUploads(uploads);
    };
    // Removed once the handler has answered (it is done with them then), even to a client that is
    // gone (when onResponse may not run); a body cut off while read is handled where it is read.
    scope.addHook('onSend', async (request, _reply, payload) => {
      await forget(request);
      return payload;
    });
    scope.addHook('onResponse', forget);
    scope.decorateRequest('web', null as unknown as WebState);
    scope.addHook('onRequest', async (request, reply) => {
      request.web = await web.resolve(request, reply);
      const user = request.web.user;
      if (user?.must_change_password) {
        const path = request.url.split('?')[0] ?? '/';
        if (!MUST_CHANGE_ALLOWED.some((p) => path.startsWith(p))) {
          return web.redirect(reply, '/user/settings/change_password');
        }
      }
    });
    const csrfValid = (request: FastifyRequest, presented: unknown) =>
      web.sessions.checkCsrf(request.web.browserId, request.web.user?.id ?? null, presented);
    // A multipart body is read here, before the handler and after the checks: no session, no body;
    // no valid token before the first file, no file written.
    scope.addHook('preValidation', async (request, reply) => {
      if (!UNSAFE.has(request.method) || !request.isMultipart()) return;
      if (!request.web.user) {
        reply.header('connection', 'close');
        throw new SignInRequired();
      }
      try {
        request.body = await readMultipartForm(request, {
          dir: web.uploadsDir,
          csrfChecked: csrfValid(request, request.headers['x-csrf-token']),
          checkCsrf: (token) => csrfValid(request, token),
          track: (upload) => (request.uploads ??= []).push(upload),
        });
      } catch (err) {
        await forget(request);
        reply.header('connection', 'close');
        if (err instanceof FormCsrfError) return web.errorPage(request, reply, 403, CSRF_REFUSED);
        if (err instanceof AppError || (err as FastifyError).statusCode) throw err;
        // Cut off or malformed: the client's doing, not a failure of the page.
        throw badRequest(`The form did not arrive whole (${(err as Error).message}).`);
      }
    });
    scope.addHook('preHandler', async (request, reply) => {
      if (!UNSAFE.has(request.method)) return;
      const body = request.body as Record<string, unknown> | undefined;
      const presented = request.headers['x-csrf-token'] ?? body?.['_csrf'];
      if (!csrfValid(request, presented)) return web.errorPage(request, reply, 403, CSRF_REFUSED);
    });
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (!request.web) request.web = { user: null, viewer: null, browserId: '', csrf: '', flash: undefined };
      if (err instanceof SignInRequired) {
        return web.redirect(reply, `/user/login?redirect_to=${encodeURIComponent(request.url)}`);
      }
      if (err instanceof MovedError) {
        const location = movedTo(request, err);
        if (location) return reply.code(307).header('Location', web.localTarget(location)).send();
        return web.errorPage(request, reply, 404, 'Not found');
      }
      if (err instanceof AppError) {
        // A page hidden from the viewer is "not found", as the API answers.
        return web.errorPage(request, reply, statusOf[err.kind], err.message);
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) return web.errorPage(request, reply, status, err.message);
      logFailure(request, err, 'unexpected failure rendering a page');
      return web.errorPage(request, reply, 500, 'The server failed to show this page.');
    });
    for (const routes of pages) routes(scope, web);
  });
}
