// The web pages of two-factor authentication, at Forgejo's addresses: the security settings
// (/user/settings/security: status, enrol, new recovery code, disable) and the sign-in step after
// the password (/user/two_factor with a passcode, /user/two_factor/scratch with the recovery code).
// Between password and passcode the browser holds only a signed pending sign-in cookie
// (service.ts `pendingSignIn`), no session.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm, Section, SettingsLayout, USER_SETTINGS_NAV } from '../web/settings.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { PENDING_LIFETIME, type EnrolOffer, type TwoFactorService } from './service.js';

const SECURITY = '/user/settings/security';
const ENROL = '/user/settings/security/two_factor/enroll';
/** The cookie of a sign-in waiting for its passcode. */
export const PENDING_COOKIE = 'anvil_twofa';

type Form = Record<string, unknown>;
const field = (body: unknown, name: string): string => formText((body as Form | undefined)?.[name]);

export interface TwoFactorPagesDeps {
  twofa: Pick<
    TwoFactorService,
    | 'status'
    | 'offer'
    | 'reopen'
    | 'qrSvg'
    | 'enrol'
    | 'regenerateScratch'
    | 'disable'
    | 'verifyPasscode'
    | 'verifyScratch'
    | 'readPendingSignIn'
  >;
  /** The account of a pending sign-in. */
  users: Pick<UserService, 'getById'>;
}

function SecurityPage(props: {
  page: PageContext;
  status: { since: number; hasScratch: boolean } | null;
}): VNode {
  const { page, status } = props;
  return (
    <SettingsLayout
      page={page}
      title="Security"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active={SECURITY}
    >
      <Section title="Two-factor authentication">
        <p>
          Two-factor authentication protects your account against password theft: signing in asks for a
          time-based one-time passcode (TOTP) from an authenticator app on your phone or another device.
        </p>
        {status ? (
          <>
            <p class="twofa-status on">
              <StatusIcon on />
              <span>
                Your account is <strong>enrolled</strong> in two-factor authentication.
              </span>
            </p>
            <h3>Recovery code</h3>
            <p class="muted">
              {status.hasScratch
                ? 'If you misplaced your recovery code or have already used it to sign in, you can replace it here.'
                : 'You have used your recovery code. Make a new one and keep it in a safe place.'}
            </p>
            <form method="post" action="/user/settings/security/two_factor/regenerate_scratch">
              <CsrfField page={page} />
              <button type="submit">Regenerate recovery code</button>
            </form>
            <h3>Disable two-factor authentication</h3>
            <p class="muted">Your account will be protected by its password alone.</p>
            <DangerForm
              page={page}
              action="/user/settings/security/two_factor/disable"
              button="Disable two-factor authentication"
              confirm="Disabling two-factor authentication makes your account less secure. Continue?"
            />
          </>
        ) : (
          <>
            <p class="twofa-status off">
              <StatusIcon on={false} />
              <span>Your account is not enrolled in two-factor authentication.</span>
            </p>
            <a class="button primary" href={ENROL}>
              Enroll into two-factor authentication
            </a>
          </>
        )}
      </Section>
    </SettingsLayout>
  );
}

/** A shield (on) or an open shield (off), drawn inline. */
function StatusIcon(props: { on: boolean }): VNode {
  return (
    <svg class="twofa-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      <path
        d="M8 1 2.5 3v4.2c0 3.3 2.3 6.3 5.5 7.8 3.2-1.5 5.5-4.5 5.5-7.8V3z"
        fill="none"
        stroke="currentColor"
        stroke-width="1.4"
        stroke-linejoin="round"
      />
      {props.on ? (
        <path
          d="m5.5 8 1.8 1.8 3.3-3.6"
          fill="none"
          stroke="currentColor"
          stroke-width="1.6"
          stroke-linecap="round"
        />
      ) : null}
    </svg>
  );
}

function EnrolPage(props: { page: PageContext; offer: EnrolOffer; qr: string; error?: string }): VNode {
  const { page, offer } = props;
  return (
    <SettingsLayout
      page={page}
      title="Enroll into two-factor authentication"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active={SECURITY}
    >
      <Section title="Enroll into two-factor authentication">
        <p>1. Scan this image with your authenticator application:</p>
        {/* Markup drawn on the server by the qrcode package from the otpauth:// URI: paths only. */}
        <div
          class="twofa-qr"
          role="img"
          aria-label="QR code of the two-factor secret"
          dangerouslySetInnerHTML={{ __html: props.qr }}
        />
        <p>
          Or enter the secret: <code class="twofa-secret">{offer.secret}</code>
        </p>
        <p>2. Then enter the passcode the application shows:</p>
        <form method="post" action={ENROL}>
          <CsrfField page={page} />
          <input type="hidden" name="state" value={offer.state} />
          <Field
            label="Passcode"
            name="passcode"
            required
            autocomplete="one-time-code"
            autofocus
            error={props.error}
          />
          <button type="submit" class="primary">
            Verify
          </button>
        </form>
      </Section>
    </SettingsLayout>
  );
}

function SignInStepPage(props: { page: PageContext; scratch: boolean; error?: string | undefined }): VNode {
  const { page, scratch } = props;
  return (
    <Layout page={page} title="Two-factor authentication">
      <section class="narrow card">
        <h1>Two-factor authentication</h1>
        {props.error ? (
          <p class="flash error" role="alert">
            {props.error}
          </p>
        ) : null}
        {scratch ? (
          <form method="post" action="/user/two_factor/scratch">
            <CsrfField page={page} />
            <p>Enter the recovery code you were given when you enrolled. It works only once.</p>
            <Field label="Recovery code" name="token" required autocomplete="off" autofocus />
            <button type="submit" class="primary">
              Verify
            </button>
          </form>
        ) : (
          <form method="post" action="/user/two_factor">
            <CsrfField page={page} />
            <p>Open your authenticator application and enter the passcode it shows for this site.</p>
            <Field label="Passcode" name="passcode" required autocomplete="one-time-code" autofocus />
            <button type="submit" class="primary">
              Verify
            </button>
          </form>
        )}
        <p class="muted">
          {scratch ? (
            <a href="/user/two_factor">Use a passcode from your application instead.</a>
          ) : (
            <>
              Lost your device? <a href="/user/two_factor/scratch">Use your recovery code.</a>
            </>
          )}
        </p>
      </section>
    </Layout>
  );
}

/**
 * The step of the sign-in form (users/pages.tsx) for an account with two-factor authentication:
 * instead of a session, the browser gets a signed pending sign-in and is sent to /user/two_factor.
 */
export function twoFactorSignInStep(
  twofa: Pick<TwoFactorService, 'isEnrolled' | 'pendingSignIn'>,
): (
  web: Web,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
  redirectTo: string,
) => Promise<boolean> {
  return async (web, request, reply, user, redirectTo) => {
    if (!(await twofa.isEnrolled(user.id))) return false;
    // The old session, if any, ends now: the new one starts only with the passcode.
    await web.signOut(request, reply);
    const value = twofa.pendingSignIn({ userId: user.id, redirectTo }, request.web.browserId);
    web.setCookie(reply, PENDING_COOKIE, value, PENDING_LIFETIME);
    // Not returned: a reply is a thenable, which `await` would wait on.
    web.redirect(reply, '/user/two_factor');
    return true;
  };
}

export function twoFactorPages(deps: TwoFactorPagesDeps): PageRoutes {
  return (app, web) => registerTwoFactorPages(app, web, deps);
}

function registerTwoFactorPages(app: FastifyInstance, web: Web, deps: TwoFactorPagesDeps): void {
  const { twofa, users } = deps;
  const notEnrolled = 'Your account is not enrolled in two-factor authentication.';

  app.get(SECURITY, async (request, reply) => {
    const user = web.requireUser(request);
    const status = await twofa.status(user.id);
    return web.send(reply, <SecurityPage page={web.page(request)} status={status} />);
  });

  const enrolPage = async (request: FastifyRequest, reply: FastifyReply, offer: EnrolOffer, error?: string) =>
    web.send(
      reply,
      <EnrolPage page={web.page(request)} offer={offer} qr={await twofa.qrSvg(offer.uri)} error={error} />,
      error ? 422 : 200,
    );

  app.get(ENROL, async (request, reply) => {
    const user = web.requireUser(request);
    if (await twofa.status(user.id)) {
      return web.redirect(reply, SECURITY, { kind: 'error', text: 'Your account is already enrolled.' });
    }
    return enrolPage(request, reply, twofa.offer(user));
  });

  app.post(ENROL, async (request, reply) => {
    const user = web.requireUser(request);
    if (await twofa.status(user.id)) {
      return web.redirect(reply, SECURITY, { kind: 'error', text: 'Your account is already enrolled.' });
    }
    const offer = twofa.reopen(user, field(request.body, 'state'));
    if (!offer) {
      return web.redirect(reply, ENROL, {
        kind: 'error',
        text: 'The enrollment has expired. Scan the new code and try again.',
      });
    }
    const passcode = field(request.body, 'passcode').trim();
    if (!passcode) return enrolPage(request, reply, offer, 'Enter the passcode your application shows.');
    if (passcode.length > 10) return enrolPage(request, reply, offer, 'A passcode has 6 digits.');
    let scratch: string;
    try {
      scratch = await twofa.enrol(user, offer, passcode);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'invalid')
        return enrolPage(request, reply, offer, err.message);
      if (err instanceof AppError && err.kind === 'conflict') {
        return web.redirect(reply, SECURITY, { kind: 'error', text: err.message });
      }
      throw err;
    }
    return web.redirect(reply, SECURITY, {
      kind: 'info',
      text: `Your account has been enrolled. Store your single-use recovery code ${scratch} in a safe place: it will not be shown again.`,
    });
  });

  app.post('/user/settings/security/two_factor/regenerate_scratch', async (request, reply) => {
    const user = web.requireUser(request);
    let scratch: string;
    try {
      scratch = await twofa.regenerateScratch(user);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') {
        return web.redirect(reply, SECURITY, { kind: 'error', text: notEnrolled });
      }
      throw err;
    }
    return web.redirect(reply, SECURITY, {
      kind: 'info',
      text: `Your recovery code is now ${scratch}. Store it in a safe place: it will not be shown again.`,
    });
  });

  app.post('/user/settings/security/two_factor/disable', async (request, reply) => {
    const user = web.requireUser(request);
    try {
      await twofa.disable(user);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') {
        return web.redirect(reply, SECURITY, { kind: 'error', text: notEnrolled });
      }
      throw err;
    }
    return web.redirect(reply, SECURITY, {
      kind: 'info',
      text: 'Two-factor authentication has been disabled.',
    });
  });

  // The sign-in step: only with a pending sign-in of this browser.
  const pendingOf = (request: FastifyRequest) =>
    twofa.readPendingSignIn(request.cookies[PENDING_COOKIE], request.web.browserId);
  const expired = (reply: FastifyReply) =>
    web.redirect(reply, '/user/login', { kind: 'error', text: 'The sign-in has expired. Sign in again.' });

  for (const scratch of [false, true]) {
    const path = scratch ? '/user/two_factor/scratch' : '/user/two_factor';
    const name = scratch ? 'token' : 'passcode';
    const wrong = scratch
      ? 'The recovery code is incorrect.'
      : 'The passcode is incorrect. If you misplaced your device, use your recovery code to sign in.';
    const show = (request: FastifyRequest, reply: FastifyReply, error?: string, status = 200) =>
      web.send(reply, <SignInStepPage page={web.page(request)} scratch={scratch} error={error} />, status);

    app.get(path, async (request, reply) => {
      if (request.web.user) return web.redirect(reply, '/');
      if (!pendingOf(request)) return expired(reply);
      return show(request, reply);
    });

    app.post(path, async (request, reply) => {
      const pending = pendingOf(request);
      if (!pending) return expired(reply);
      const typed = field(request.body, name).trim();
      if (!typed)
        return show(request, reply, scratch ? 'Enter your recovery code.' : 'Enter the passcode.', 422);
      if (typed.length > 64) return show(request, reply, wrong, 422);
      let ok: boolean;
      try {
        ok = scratch
          ? await twofa.verifyScratch(pending.userId, typed, request.ip)
          : await twofa.verifyPasscode(pending.userId, typed, request.ip);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'too_many_requests')
          return show(request, reply, err.message, 429);
        throw err;
      }
      if (!ok) return show(request, reply, wrong, 401);
      const user = await users.getById(pending.userId);
      web.setCookie(reply, PENDING_COOKIE, null);
      if (!user || !user.is_active || user.prohibit_login) {
        return web.redirect(reply, '/user/login', {
          kind: 'error',
          text: 'This account is not allowed to sign in. Contact the site administrator.',
        });
      }
      await web.signIn(request, reply, user);
      if (user.must_change_password) return web.redirect(reply, '/user/settings/change_password');
      if (scratch) {
        return web.redirect(reply, SECURITY, {
          kind: 'info',
          text: 'You have used your recovery code. Make a new one here, or disable two-factor authentication.',
        });
      }
      return web.redirect(reply, pending.redirectTo);
    });
  }
}
