// The web pages of accounts: sign in, sign out, sign up, changing a password that must be changed,
// user and organization profiles, and the explore lists of users and organizations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { UserRow } from './tables.js';
import { UserType, Visibility } from './tables.js';
import { avatarPath } from './avatars.js';
import type { OrgService } from '../orgs/service.js';
import type { SessionService } from '../sessions/service.js';
import type { UserService } from './service.js';
import { NewPasswordFields, newPasswordErrors } from './password-form.js';

type Form = Record<string, string | undefined>;
const field = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};

function LoginPage(props: { page: PageContext; login?: string; redirectTo: string; error?: string }): VNode {
  return (
    <Layout page={props.page} title="Sign in">
      <section class="narrow card">
        <h1>Sign in</h1>
        {props.error ? (
          <p class="flash error" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/user/login">
          <CsrfField page={props.page} />
          <input type="hidden" name="redirect_to" value={props.redirectTo} />
          <Field
            label="Username or email address"
            name="user_name"
            value={props.login ?? ''}
            required
            autocomplete="username"
            autofocus
          />
          <Field label="Password" name="password" type="password" required autocomplete="current-password" />
          <button type="submit" class="primary">
            Sign in
          </button>
        </form>
        <p class="muted">
          <a href="/user/forgot_password">Forgot password?</a>
        </p>
        <p class="muted">
          No account? <a href="/user/sign_up">Register now.</a>
        </p>
      </section>
    </Layout>
  );
}

function SignUpPage(props: { page: PageContext; values: Form; errors: Form; first: boolean }): VNode {
  const { values, errors } = props;
  return (
    <Layout page={props.page} title="Register">
      <section class="narrow card">
        <h1>Register</h1>
        {props.first ? (
          <p class="flash info" role="status">
            This site has no account yet: the first account becomes the administrator.
          </p>
        ) : null}
        <form method="post" action="/user/sign_up">
          <CsrfField page={props.page} />
          <Field
            label="Username"
            name="user_name"
            value={values['user_name'] ?? ''}
            required
            autocomplete="username"
            autofocus
            error={errors['user_name']}
          />
          <Field
            label="Email address"
            name="email"
            type="email"
            value={values['email'] ?? ''}
            required
            autocomplete="email"
            error={errors['email']}
          />
          <NewPasswordFields label="Password" errors={errors} />
          <button type="submit" class="primary">
            Register account
          </button>
        </form>
        <p class="muted">
          Already have an account? <a href="/user/login">Sign in now.</a>
        </p>
      </section>
    </Layout>
  );
}

function ChangePasswordPage(props: { page: PageContext; errors: Form }): VNode {
  return (
    <Layout page={props.page} title="Change password">
      <section class="narrow card">
        <h1>Change password</h1>
        {props.page.user?.must_change_password ? (
          <p class="flash info" role="status">
            You must change your password before you continue.
          </p>
        ) : null}
        <form method="post" action="/user/settings/change_password">
          <CsrfField page={props.page} />
          <NewPasswordFields autofocus errors={props.errors} />
          <button type="submit" class="primary">
            Update password
          </button>
        </form>
      </section>
    </Layout>
  );
}

function Avatar(props: { user: UserRow; size?: number }): VNode {
  const size = props.size ?? 24;
  return (
    <img class="avatar" src={`/${avatarPath(props.user)}`} alt="" width={size} height={size} loading="lazy" />
  );
}

function AccountList(props: {
  page: PageContext;
  title: string;
  tab: 'users' | 'organizations';
  accounts: UserRow[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
}): VNode {
  return (
    <Layout page={props.page} title={props.title}>
      <ExploreTabs active={props.tab} page={props.page} />
      <form method="get" class="search" role="search">
        <input type="search" name="q" value={props.q} aria-label="Search" placeholder="Search…" />
        <button type="submit">Search</button>
      </form>
      {props.accounts.length === 0 ? <p class="empty">Nothing found.</p> : null}
      <ul class="list">
        {props.accounts.map((u) => (
          <li>
            <Avatar user={u} size={32} />
            <div>
              <a href={`/${u.name}`} class="title">
                {u.full_name ? `${u.full_name} (${u.name})` : u.name}
              </a>
              <p class="muted">
                {u.description || u.location || ''} Joined <When unix={u.created_unix} />
              </p>
            </div>
          </li>
        ))}
      </ul>
      <Pager
        path={`/explore/${props.tab}`}
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={props.q ? `q=${encodeURIComponent(props.q)}` : ''}
      />
    </Layout>
  );
}

export function ExploreTabs(props: {
  active: 'repos' | 'users' | 'organizations' | 'code';
  page: PageContext;
}): VNode {
  const tabs = [
    ['repos', 'Repositories'],
    ['users', 'Users'],
    ['organizations', 'Organizations'],
    ...(props.page.codeSearch ? ([['code', 'Code']] as const) : []),
  ] as const;
  return (
    <nav class="tabs" aria-label="Explore">
      {tabs.map(([key, label]) => (
        <a href={`/explore/${key}`} aria-current={props.active === key ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/**
 * A step between a correct password and the session (two-factor authentication, twofa/pages.tsx):
 * true when it answered instead (the account needs it).
 */
export type SignInStep = (
  web: Web,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
  redirectTo: string,
) => Promise<boolean>;

export interface UserPagesDeps {
  users: Pick<UserService, 'create' | 'edit' | 'search' | 'noAccountsYet'>;
  orgs: Pick<OrgService, 'listOrgs'>;
  sessions: Pick<SessionService, 'signIn'>;
  /** Asked after a correct password, before the session starts. */
  signInStep?: SignInStep | undefined;
  /** [service] DISABLE_REGISTRATION: the sign-up page is closed. */
  disableRegistration: boolean;
  /** [service] REGISTER_EMAIL_CONFIRM: a new account is inactive until its address is confirmed (mail/). */
  emailConfirm?: { sendActivation(user: UserRow): Promise<void> } | undefined;
  /** Accounts per page of the explore lists ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

export function userPages(deps: UserPagesDeps): PageRoutes {
  return (app, web) => registerUserPages(app, web, deps);
}

function registerUserPages(app: FastifyInstance, web: Web, deps: UserPagesDeps): void {
  const { users, orgs, sessions } = deps;

  app.get('/user/login', async (request, reply) => {
    const q = request.query as Form;
    const redirectTo = web.localTarget(q['redirect_to']);
    if (request.web.user) return web.redirect(reply, redirectTo);
    return web.send(reply, <LoginPage page={web.page(request)} redirectTo={redirectTo} />);
  });

  app.post('/user/login', async (request, reply) => {
    const login = field(request.body, 'user_name');
    const password = field(request.body, 'password');
    const redirectTo = web.localTarget(field(request.body, 'redirect_to'));
    const again = (error: string, status: number) =>
      web.send(
        reply,
        <LoginPage page={web.page(request)} login={login} redirectTo={redirectTo} error={error} />,
        status,
      );
    if (!login || !password) return again('Enter your username (or email address) and password.', 422);
    let user: UserRow | undefined;
    try {
      user = await sessions.signIn(login, password, request.ip);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'too_many_requests') return again(err.message, 429);
      throw err;
    }
    if (!user) return again('Username or password is incorrect.', 401);
    if (!user.is_active && !user.prohibit_login && deps.emailConfirm) {
      return again(
        'Your account is not activated yet: follow the link in the confirmation mail (or ask for a new one at /user/activate).',
        403,
      );
    }
    if (!user.is_active || user.prohibit_login) {
      return again('This account is not allowed to sign in. Contact the site administrator.', 403);
    }
    if (await deps.signInStep?.(web, request, reply, user, redirectTo)) return reply;
    await web.signIn(request, reply, user);
    if (user.must_change_password) return web.redirect(reply, '/user/settings/change_password');
    return web.redirect(reply, redirectTo);
  });

  app.post('/user/logout', async (request, reply) => {
    await web.signOut(request, reply);
    return web.redirect(reply, '/');
  });

  const registrationClosed = (request: FastifyRequest, reply: Parameters<Web['send']>[0]) =>
    web.errorPage(
      request,
      reply,
      403,
      'Registration is disabled on this site. Ask an administrator for an account.',
    );

  app.get('/user/sign_up', async (request, reply) => {
    if (deps.disableRegistration) return registrationClosed(request, reply);
    if (request.web.user) return web.redirect(reply, '/');
    const first = await users.noAccountsYet();
    return web.send(reply, <SignUpPage page={web.page(request)} values={{}} errors={{}} first={first} />);
  });

  app.post('/user/sign_up', async (request, reply) => {
    if (deps.disableRegistration) return registrationClosed(request, reply);
    const values: Form = {
      user_name: field(request.body, 'user_name').trim(),
      email: field(request.body, 'email').trim(),
    };
    const password = field(request.body, 'password');
    const errors = newPasswordErrors(password, field(request.body, 'retype'));
    let user: UserRow | undefined;
    if (!Object.keys(errors).length) {
      try {
        user = await users.create({
          username: values['user_name']!,
          email: values['email']!,
          password,
          ...(deps.emailConfirm ? { active: false } : {}),
          firstBecomesAdmin: true,
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
        // "[Username]: ..." / "[Email]: ..." name the field.
        const m = /^\[(\w+)\]: (.*)$/.exec(err.message);
        const name = m?.[1] === 'Email' ? 'email' : 'user_name';
        errors[name] = m?.[2] ?? err.message;
      }
    }
    if (!user) {
      const first = await users.noAccountsYet();
      return web.send(
        reply,
        <SignUpPage page={web.page(request)} values={values} errors={errors} first={first} />,
        422,
      );
    }
    if (deps.emailConfirm) {
      await deps.emailConfirm.sendActivation(user);
      return web.redirect(reply, '/user/activate', {
        kind: 'info',
        text: `A confirmation mail was sent to ${user.email}. Follow its link to activate your account.`,
      });
    }
    await web.signIn(request, reply, user);
    const text = user.is_admin
      ? `Welcome, ${user.name}! As the site's first account, you are its administrator.`
      : `Welcome, ${user.name}! Your account is ready.`;
    return web.redirect(reply, '/', { kind: 'info', text });
  });

  app.get('/user/settings/change_password', async (request, reply) => {
    web.requireUser(request);
    return web.send(reply, <ChangePasswordPage page={web.page(request)} errors={{}} />);
  });

  app.post('/user/settings/change_password', async (request, reply) => {
    const user = web.requireUser(request);
    const password = field(request.body, 'password');
    const errors = newPasswordErrors(password, field(request.body, 'retype'));
    if (Object.keys(errors).length) {
      return web.send(reply, <ChangePasswordPage page={web.page(request)} errors={errors} />, 422);
    }
    // Every session of the account ends with the change (users.edit); this browser gets a fresh one.
    const edited = await users.edit(user, { password, mustChangePassword: false });
    await web.signIn(request, reply, edited);
    return web.redirect(reply, '/', { kind: 'info', text: 'Your password has been updated.' });
  });

  const { pageSize } = deps;

  app.get('/explore/users', async (request, reply) => {
    const q = request.query as Form;
    const pageNo = pageNumber(q['page']);
    const keyword = (q['q'] ?? '').trim();
    const [rows, total] = await users.search(
      { keyword: keyword || undefined, viewer: request.web.viewer },
      { limit: pageSize, offset: (pageNo - 1) * pageSize, page: pageNo },
    );
    return web.send(
      reply,
      <AccountList
        page={web.page(request)}
        title="Users"
        tab="users"
        accounts={rows}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
      />,
    );
  });

  app.get('/explore/organizations', async (request, reply) => {
    const q = request.query as Form;
    const pageNo = pageNumber(q['page']);
    const keyword = (q['q'] ?? '').trim().toLowerCase();
    const [all, total] = await orgs.listOrgs(request.web.viewer, pageSize, (pageNo - 1) * pageSize);
    const rows = keyword ? all.filter((o) => o.lower_name.includes(keyword)) : all;
    return web.send(
      reply,
      <AccountList
        page={web.page(request)}
        title="Organizations"
        tab="organizations"
        accounts={rows}
        total={keyword ? rows.length : total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
      />,
    );
  });
}

/** The tabs under a user's profile header: Repositories and Projects. */
export function UserTabs(props: { user: UserRow; active: 'repos' | 'projects'; repos?: number }): VNode {
  const base = `/${encodeURIComponent(props.user.name)}`;
  return (
    <nav class="tabs" aria-label="Profile">
      <a href={base} aria-current={props.active === 'repos' ? 'page' : undefined}>
        Repositories
        {typeof props.repos === 'number' ? (
          <>
            {' '}
            <span class="count">{props.repos}</span>
          </>
        ) : null}
      </a>
      <a href={`${base}/-/projects`} aria-current={props.active === 'projects' ? 'page' : undefined}>
        Projects
      </a>
    </nav>
  );
}

/** A user's or organization's profile header. */
export function ProfileHeader(props: { account: UserRow }): VNode {
  const u = props.account;
  return (
    <header class="profile">
      <Avatar user={u} size={96} />
      <div>
        <h1>
          {u.full_name || u.name}
          {u.full_name ? <span class="muted"> {u.name}</span> : null}
        </h1>
        {u.description ? <p>{u.description}</p> : null}
        <p class="muted">
          {u.location ? <span>{u.location} · </span> : null}
          {u.website ? (
            <a href={/^https?:\/\//i.test(u.website) ? u.website : undefined} rel="nofollow noopener">
              {u.website}
            </a>
          ) : null}
          {u.type === UserType.Organization ? 'Organization' : null}
          {u.visibility !== Visibility.public ? (
            <span class="pill">{u.visibility === Visibility.limited ? 'Limited' : 'Private'}</span>
          ) : null}
        </p>
      </div>
    </header>
  );
}
