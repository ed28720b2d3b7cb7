// The web pages of account mail, at Forgejo's addresses: the forgotten password
// (/user/forgot_password, field `email`: the same answer whether or not an account has the
// address), the reset link's page (/user/recover_account?code=..., fields `password` and
// `retype`: the new password ends every session; then the sign-in page), and the
// confirmation of a new account (/user/activate?code=..., and POST /user/activate to mail the link
// again).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import type { AccountMail } from './service.js';
import { NewPasswordFields, newPasswordErrors } from '../users/password-form.js';

const MAX_EMAIL_LENGTH = 255;

export interface MailPagesDeps {
  accountMail: Pick<
    AccountMail,
    | 'enabled'
    | 'throttle'
    | 'requestPasswordReset'
    | 'resetCodeUser'
    | 'resetPassword'
    | 'activate'
    | 'resendActivation'
  >;
}

type Errors = Record<string, string | undefined>;

function Card(props: { page: PageContext; title: string; children: ComponentChildren }): VNode {
  return (
    <Layout page={props.page} title={props.title}>
      <section class="narrow card">
        <h1>{props.title}</h1>
        {props.children}
      </section>
    </Layout>
  );
}

function Notice(props: { kind: 'info' | 'error'; text: string }): VNode {
  return (
    <p class={`flash ${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.text}
    </p>
  );
}

function ForgotPage(props: {
  page: PageContext;
  email: string;
  errors: Errors;
  sentTo?: string;
  disabled?: boolean;
}): VNode {
  return (
    <Card page={props.page} title="Forgot password">
      {props.disabled ? (
        <Notice kind="error" text="This site sends no mail. Ask an administrator to reset your password." />
      ) : (
        <>
          {props.sentTo !== undefined ? (
            <Notice
              kind="info"
              text={`If an account uses ${props.sentTo}, a mail with a link to choose a new password is on its way. It may take a few minutes to arrive.`}
            />
          ) : null}
          <form method="post" action="/user/forgot_password">
            <CsrfField page={props.page} />
            <Field
              label="Email address"
              name="email"
              type="email"
              value={props.email}
              required
              autocomplete="email"
              autofocus
              error={props.errors['email']}
            />
            <button type="submit" class="primary">
              Send account recovery email
            </button>
          </form>
        </>
      )}
      <p class="muted">
        <a href="/user/login">Back to sign in</a>
      </p>
    </Card>
  );
}

function RecoverPage(props: {
  page: PageContext;
  code: string;
  valid: boolean;
  errors: Errors;
  name?: string;
}): VNode {
  return (
    <Card page={props.page} title="Recover account">
      {props.valid ? (
        <form method="post" action="/user/recover_account">
          <CsrfField page={props.page} />
          <input type="hidden" name="code" value={props.code} />
          {props.name ? (
            <p>Choose a new password for {props.name}. Your other sessions will be signed out.</p>
          ) : null}
          <NewPasswordFields autofocus errors={props.errors} />
          <button type="submit" class="primary">
            Update password
          </button>
        </form>
      ) : (
        <>
          <Notice kind="error" text="This link is invalid or has expired (each link works once)." />
          <p>
            <a href="/user/forgot_password">Ask for a new link</a>
          </p>
        </>
      )}
    </Card>
  );
}

function ActivatePage(props: {
  page: PageContext;
  email: string;
  errors: Errors;
  notice?: { kind: 'info' | 'error'; text: string };
}): VNode {
  return (
    <Card page={props.page} title="Activate your account">
      {props.notice ? <Notice kind={props.notice.kind} text={props.notice.text} /> : null}
      <p>Follow the link in the mail sent when you registered. To get a new one, enter your address:</p>
      <form method="post" action="/user/activate">
        <CsrfField page={props.page} />
        <Field
          label="Email address"
          name="email"
          type="email"
          value={props.email}
          required
          autocomplete="email"
          error={props.errors['email']}
        />
        <button type="submit" class="primary">
          Resend the confirmation mail
        </button>
      </form>
    </Card>
  );
}

function emailError(email: string): string | undefined {
  if (!email) return 'Enter your email address.';
  if (email.length > MAX_EMAIL_LENGTH)
    return `The address must be at most ${MAX_EMAIL_LENGTH} characters long.`;
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) return 'This is not an email address.';
  return undefined;
}

export function mailPages(deps: MailPagesDeps): PageRoutes {
  return (app, web) => registerMailPages(app, web, deps);
}

function registerMailPages(app: FastifyInstance, web: Web, deps: MailPagesDeps): void {
  const { accountMail } = deps;
  const body = (request: FastifyRequest, name: string) =>
    formText((request.body as Record<string, unknown> | undefined)?.[name]);
  const query = (request: FastifyRequest, name: string) =>
    formText((request.query as Record<string, unknown> | undefined)?.[name]);
  /** 429 for an address that asked too often (the same for every e-mail address asked about). */
  const throttled = (request: FastifyRequest, reply: Parameters<Web['send']>[0]) => {
    try {
      accountMail.throttle(request.ip);
      return undefined;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'too_many_requests')
        return web.errorPage(request, reply, 429, err.message);
      throw err;
    }
  };

  app.get('/user/forgot_password', async (request, reply) =>
    web.send(
      reply,
      <ForgotPage
        page={web.page(request)}
        email={query(request, 'email')}
        errors={{}}
        disabled={!accountMail.enabled}
      />,
    ),
  );

  app.post('/user/forgot_password', async (request, reply) => {
    const email = body(request, 'email').trim();
    if (!accountMail.enabled) {
      return web.send(reply, <ForgotPage page={web.page(request)} email={email} errors={{}} disabled />, 503);
    }
    const error = emailError(email);
    if (error) {
      return web.send(
        reply,
        <ForgotPage page={web.page(request)} email={email} errors={{ email: error }} />,
        422,
      );
    }
    const refused = throttled(request, reply);
    if (refused) return refused;
    await accountMail.requestPasswordReset(email);
    return web.send(reply, <ForgotPage page={web.page(request)} email="" errors={{}} sentTo={email} />);
  });

  app.get('/user/recover_account', async (request, reply) => {
    const code = query(request, 'code');
    const user = code ? await accountMail.resetCodeUser(code) : undefined;
    return web.send(
      reply,
      <RecoverPage page={web.page(request)} code={code} valid={!!user} errors={{}} name={user?.name} />,
      user ? 200 : 400,
    );
  });

  app.post('/user/recover_account', async (request, reply) => {
    const code = body(request, 'code');
    const password = body(request, 'password');
    const retype = body(request, 'retype');
    const user = code ? await accountMail.resetCodeUser(code) : undefined;
    if (!user) {
      return web.send(reply, <RecoverPage page={web.page(request)} code="" valid={false} errors={{}} />, 400);
    }
    const errors: Errors = newPasswordErrors(password, retype);
    if (Object.keys(errors).length) {
      return web.send(
        reply,
        <RecoverPage page={web.page(request)} code={code} valid errors={errors} name={user.name} />,
        422,
      );
    }
    const changed = await accountMail.resetPassword(code, password);
    if (!changed) {
      return web.send(reply, <RecoverPage page={web.page(request)} code="" valid={false} errors={{}} />, 400);
    }
    // Not signed in here: signing in with the new password goes through every step of sign-in
    // (a second factor included).
    return web.redirect(reply, '/user/login', {
      kind: 'info',
      text: `Your password has been updated. Sign in as ${changed.name} with it.`,
    });
  });

  app.get('/user/activate', async (request, reply) => {
    const code = query(request, 'code');
    if (!code) return web.send(reply, <ActivatePage page={web.page(request)} email="" errors={{}} />);
    const user = await accountMail.activate(code);
    if (!user) {
      return web.send(
        reply,
        <ActivatePage
          page={web.page(request)}
          email=""
          errors={{}}
          notice={{ kind: 'error', text: 'This link is invalid or has expired (each link works once).' }}
        />,
        400,
      );
    }
    await web.signIn(request, reply, user);
    return web.redirect(reply, '/', {
      kind: 'info',
      text: `Your account ${user.name} is now active. Welcome!`,
    });
  });

  app.post('/user/activate', async (request, reply) => {
    const email = body(request, 'email').trim();
    const error = emailError(email);
    if (error) {
      return web.send(
        reply,
        <ActivatePage page={web.page(request)} email={email} errors={{ email: error }} />,
        422,
      );
    }
    const refused = throttled(request, reply);
    if (refused) return refused;
    await accountMail.resendActivation(email);
    return web.send(
      reply,
      <ActivatePage
        page={web.page(request)}
        email=""
        errors={{}}
        notice={{
          kind: 'info',
          text: `If ${email} belongs to an account waiting for confirmation, a new link is on its way.`,
        }}
      />,
    );
  });
}
