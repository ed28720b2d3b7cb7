// The signed-in user's own settings (Forgejo's /user/settings...): profile and avatar, account
// (password, e-mail addresses, deletion), appearance (theme) and e-mail notifications. Blocked
// users, organizations and repositories are in settings-lists-pages.tsx. Every form keeps what was
// typed and names the field on bad input (422); nothing changes then.
import fs from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, uploadsOf, type PageRoutes, type Web } from '../web/plugin.js';
import { errorField } from '../web/fields.js';
import {
  AvatarSection,
  Checkbox,
  DangerForm,
  Section,
  Select,
  SettingsLayout,
  TextArea,
  USER_SETTINGS_NAV,
  ticked,
} from '../web/settings.js';
import type { AvatarService } from '../avatars/service.js';
import type { SessionService } from '../sessions/service.js';
import { avatarPath } from './avatars.js';
import type { UserService } from './service.js';
import { Visibility, visibilityName, type EmailRow, type UserRow, type VisibilityName } from './tables.js';
import { NewPasswordFields, newPasswordErrors } from './password-form.js';

type Errors = Record<string, string | undefined>;
type Values = Record<string, string>;

export interface AccountSettingsDeps {
  users: Pick<
    UserService,
    | 'updateSettings'
    | 'rename'
    | 'emails'
    | 'addEmails'
    | 'deleteEmails'
    | 'setPrimaryEmail'
    | 'edit'
    | 'delete'
  >;
  /** Passwords typed on these pages are checked through the sign-in throttle. */
  sessions: Pick<SessionService, 'signIn'>;
  avatars: Pick<AvatarService, 'setUser' | 'deleteUser'>;
}

/** An AppError the user caused (bad input): shown beside the field; anything else propagates. */
function userError(err: unknown): AppError {
  if (err instanceof AppError && ['invalid', 'payload_too_large', 'bad_request'].includes(err.kind))
    return err;
  throw err;
}

const VISIBILITIES: Array<{ value: VisibilityName; label: string }> = [
  { value: 'public', label: 'Public: everyone sees the profile' },
  { value: 'limited', label: 'Limited: only signed-in users' },
  { value: 'private', label: 'Private: only members of your organizations' },
];

function profileValues(u: UserRow): Values {
  return {
    name: u.name,
    full_name: u.full_name,
    description: u.description,
    website: u.website,
    location: u.location,
    visibility: visibilityName(u.visibility),
    keep_email_private: u.keep_email_private ? 'on' : '',
  };
}

function ProfilePage(props: { page: PageContext; user: UserRow; values: Values; errors: Errors }): VNode {
  const { page, user, values, errors } = props;
  return (
    <SettingsLayout
      page={page}
      title="Profile"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings"
    >
      <Section title="Profile">
        <p class="muted">
          Your public profile is shown at <a href={`/${user.name}`}>/{user.name}</a>.
        </p>
        <form method="post" action="/user/settings">
          <CsrfField page={page} />
          <Field
            label="Username"
            name="name"
            value={values['name'] ?? ''}
            required
            autocomplete="username"
            error={errors['name']}
          />
          <Field
            label="Full name"
            name="full_name"
            value={values['full_name'] ?? ''}
            error={errors['full_name']}
          />
          <TextArea
            label="Biography"
            name="description"
            value={values['description']}
            maxLength={255}
            error={errors['description']}
          />
          <Field
            label="Website"
            name="website"
            type="url"
            value={values['website'] ?? ''}
            error={errors['website']}
          />
          <Field
            label="Location"
            name="location"
            value={values['location'] ?? ''}
            error={errors['location']}
          />
          <Select
            label="Profile visibility"
            name="visibility"
            value={values['visibility']}
            options={VISIBILITIES}
            error={errors['visibility']}
          />
          <Checkbox
            label="Hide email address"
            name="keep_email_private"
            checked={ticked(values['keep_email_private'])}
          />
          <button type="submit" class="primary">
            Update profile
          </button>
        </form>
      </Section>
      <AvatarSection
        page={page}
        action="/user/settings/avatar"
        src={`/${avatarPath(user)}`}
        alt="Your current avatar"
        uploaded={Boolean(user.avatar)}
        confirm="Delete your avatar? The generated picture is shown again."
        error={errors['avatar']}
      />
    </SettingsLayout>
  );
}

function AccountPage(props: {
  page: PageContext;
  user: UserRow;
  emails: EmailRow[];
  values: Values;
  errors: Errors;
}): VNode {
  const { page, emails, values, errors } = props;
  return (
    <SettingsLayout
      page={page}
      title="Account"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/account"
    >
      <Section title="Password">
        <form method="post" action="/user/settings/account">
          <CsrfField page={page} />
          <Field
            label="Current password"
            name="old_password"
            type="password"
            required
            autocomplete="current-password"
            error={errors['old_password']}
          />
          <NewPasswordFields errors={errors} />
          <button type="submit" class="primary">
            Update password
          </button>
        </form>
      </Section>
      <Section title="Email addresses">
        <ul class="list email-list">
          {emails.map((e) => (
            <li key={e.id}>
              <div class="grow">
                <strong>{e.email}</strong> {e.is_primary ? <span class="pill">Primary</span> : null}{' '}
                <span class={e.is_activated ? 'pill state open' : 'pill'}>
                  {e.is_activated ? 'Activated' : 'Not activated'}
                </span>
              </div>
              {e.is_primary ? null : (
                <div class="actions">
                  {e.is_activated ? (
                    <form method="post" action="/user/settings/account/email" class="inline">
                      <CsrfField page={page} />
                      <input type="hidden" name="_method" value="PRIMARY" />
                      <input type="hidden" name="id" value={String(e.id)} />
                      <button type="submit">Make primary</button>
                    </form>
                  ) : null}
                  <DangerForm
                    page={page}
                    action="/user/settings/account/email/delete"
                    button="Delete"
                    confirm={`Delete the address ${e.email}?`}
                  >
                    <input type="hidden" name="id" value={String(e.id)} />
                  </DangerForm>
                </div>
              )}
            </li>
          ))}
        </ul>
        <form method="post" action="/user/settings/account/email">
          <CsrfField page={page} />
          <Field
            label="Add email address"
            name="email"
            type="email"
            required
            autocomplete="email"
            value={values['email'] ?? ''}
            error={errors['email']}
          />
          <button type="submit">Add email address</button>
        </form>
      </Section>
      <Section title="Delete your account" danger>
        <p>
          Deleting your account cannot be undone. Delete or transfer your repositories and leave your
          organizations first.
        </p>
        {errors['delete'] ? (
          <p class="flash error" role="alert">
            {errors['delete']}
          </p>
        ) : null}
        <DangerForm
          page={page}
          action="/user/settings/account/delete"
          button="Delete your account"
          confirm="Delete your account for good?"
        >
          {/* Its own id: the password change above has a field named `password` too. */}
          <div class={errors['delete_password'] ? 'field invalid' : 'field'}>
            <label for="f-delete_password">Password</label>
            <input
              id="f-delete_password"
              name="password"
              type="password"
              required
              autoComplete="current-password"
              aria-invalid={errors['delete_password'] ? 'true' : undefined}
              aria-describedby={errors['delete_password'] ? 'f-delete_password-error' : undefined}
            />
            {errors['delete_password'] ? (
              <p class="field-error" id="f-delete_password-error">
                {errors['delete_password']}
              </p>
            ) : null}
          </div>
        </DangerForm>
      </Section>
    </SettingsLayout>
  );
}

const THEMES = [
  { value: 'auto', label: 'Auto (follows your system)' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

function AppearancePage(props: { page: PageContext; theme: string; error?: string }): VNode {
  return (
    <SettingsLayout
      page={props.page}
      title="Appearance"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/appearance"
    >
      <Section title="Theme">
        <form method="post" action="/user/settings/appearance/theme">
          <CsrfField page={props.page} />
          <Select label="Theme" name="theme" value={props.theme} options={THEMES} error={props.error} />
          <button type="submit" class="primary">
            Update theme
          </button>
        </form>
      </Section>
    </SettingsLayout>
  );
}

const PREFERENCES = [
  { value: 'enabled', label: 'Enable email notifications' },
  { value: 'onmention', label: 'Only email on mention' },
  { value: 'andyourown', label: 'Enable email notifications, also for your own actions' },
  { value: 'disabled', label: 'Disable email notifications' },
];

function NotificationsPage(props: { page: PageContext; preference: string; error?: string }): VNode {
  return (
    <SettingsLayout
      page={props.page}
      title="Notifications"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/notifications"
    >
      <Section title="Email notifications">
        <form method="post" action="/user/settings/notifications/email">
          <CsrfField page={props.page} />
          <Select
            label="Email notifications"
            name="preference"
            value={props.preference}
            options={PREFERENCES}
            error={props.error}
          />
          <button type="submit" class="primary">
            Set preference
          </button>
        </form>
      </Section>
    </SettingsLayout>
  );
}

export function accountSettingsPages(deps: AccountSettingsDeps): PageRoutes {
  return (app, web) => registerAccountSettings(app, web, deps);
}

function registerAccountSettings(app: FastifyInstance, web: Web, deps: AccountSettingsDeps): void {
  const { users, sessions, avatars } = deps;
  const body = (request: FastifyRequest, name: string) =>
    formText((request.body as Record<string, unknown> | undefined)?.[name]);

  const profile = (
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserRow,
    values: Values,
    errors: Errors,
  ) =>
    web.send(
      reply,
      <ProfilePage page={web.page(request)} user={user} values={values} errors={errors} />,
      Object.keys(errors).length ? 422 : 200,
    );

  app.get('/user/settings', async (request, reply) => {
    const user = web.requireUser(request);
    return profile(request, reply, user, profileValues(user), {});
  });

  app.post('/user/settings', async (request, reply) => {
    const user = web.requireUser(request);
    const values: Values = {};
    for (const k of [
      'name',
      'full_name',
      'description',
      'website',
      'location',
      'visibility',
      'keep_email_private',
    ]) {
      values[k] = body(request, k).trim();
    }
    const errors: Errors = {};
    const limits: Record<string, number> = { full_name: 100, description: 255, website: 255, location: 50 };
    for (const [k, max] of Object.entries(limits)) {
      if ((values[k] ?? '').length > max) errors[k] = `Must be at most ${max} characters.`;
    }
    const byNumber = ['public', 'limited', 'private'][Number(values['visibility'])];
    const visibility = (values['visibility']! in Visibility ? values['visibility'] : byNumber) as
      VisibilityName | undefined;
    if (!visibility) errors['visibility'] = 'Choose public, limited or private.';
    else values['visibility'] = visibility;
    // Checked here too: the rename below must not happen when the rest is refused.
    if (values['website'] && !/^https?:\/\/[^\s]+$/i.test(values['website'])) {
      errors['website'] = 'Enter a web address starting with http:// or https://.';
    }
    if (!values['name']) errors['name'] = 'Enter a username.';
    if (!Object.keys(errors).length) {
      try {
        await users.rename(user, values['name']!, 'name');
      } catch (err) {
        errors['name'] = errorField(userError(err), {}, 'name')[1];
      }
    }
    if (!Object.keys(errors).length) {
      try {
        await users.updateSettings(user, {
          fullName: values['full_name'],
          description: values['description'],
          website: values['website'],
          location: values['location'],
          visibility,
          hideEmail: ticked(values['keep_email_private']),
        });
      } catch (err) {
        const [name, text] = errorField(userError(err), { Website: 'website' }, 'full_name');
        errors[name] = text;
      }
    }
    if (Object.keys(errors).length) return profile(request, reply, user, values, errors);
    return web.redirect(reply, '/user/settings', { kind: 'info', text: 'Your profile has been updated.' });
  });

  app.post('/user/settings/avatar', async (request, reply) => {
    const user = web.requireUser(request);
    const [file] = uploadsOf((request.body as Record<string, unknown> | undefined)?.['avatar']);
    let error: string | undefined;
    if (!file) error = 'Choose an image to upload.';
    else {
      try {
        await avatars.setUser(user, (await fs.readFile(file.path)).toString('base64'));
      } catch (err) {
        error = errorField(userError(err), {}, 'avatar')[1];
      }
    }
    if (error) return profile(request, reply, user, profileValues(user), { avatar: error });
    return web.redirect(reply, '/user/settings', { kind: 'info', text: 'Your avatar has been changed.' });
  });

  app.post('/user/settings/avatar/delete', async (request, reply) => {
    const user = web.requireUser(request);
    await avatars.deleteUser(user);
    return web.redirect(reply, '/user/settings', { kind: 'info', text: 'Your avatar has been deleted.' });
  });

  const account = async (request: FastifyRequest, reply: FastifyReply, values: Values, errors: Errors) => {
    const user = web.requireUser(request);
    const emails = await users.emails(user);
    return web.send(
      reply,
      <AccountPage page={web.page(request)} user={user} emails={emails} values={values} errors={errors} />,
      Object.keys(errors).length ? 422 : 200,
    );
  };

  app.get('/user/settings/account', async (request, reply) => account(request, reply, {}, {}));

  /** The password typed for `user`, checked through the throttle (429 when it has failed too often). */
  const passwordMatches = async (user: UserRow, password: string, request: FastifyRequest) =>
    password !== '' && (await sessions.signIn(user.name, password, request.ip))?.id === user.id;

  app.post('/user/settings/account', async (request, reply) => {
    const user = web.requireUser(request);
    const oldPassword = body(request, 'old_password');
    const password = body(request, 'password');
    const errors: Errors = newPasswordErrors(password, body(request, 'retype'));
    if (!errors['password'] && !errors['retype'] && !(await passwordMatches(user, oldPassword, request))) {
      errors['old_password'] = 'The current password is incorrect.';
    }
    if (Object.keys(errors).length) return account(request, reply, {}, errors);
    // Every session of the account ends with the change (users.edit); this browser gets a fresh one.
    const edited = await users.edit(user, { password });
    await web.signIn(request, reply, edited);
    return web.redirect(reply, '/user/settings/account', {
      kind: 'info',
      text: 'Your password has been updated.',
    });
  });

  const ownEmail = async (user: UserRow, id: string) => {
    const found = (await users.emails(user)).find((e) => String(e.id) === id);
    if (!found) throw new AppError('not_found', 'That email address does not exist.');
    return found;
  };

  app.post('/user/settings/account/email', async (request, reply) => {
    const user = web.requireUser(request);
    if (body(request, '_method') === 'PRIMARY') {
      const address = await ownEmail(user, body(request, 'id'));
      try {
        await users.setPrimaryEmail(user, address.email);
      } catch (err) {
        return account(request, reply, {}, { email: errorField(userError(err), {}, 'email')[1] });
      }
      return web.redirect(reply, '/user/settings/account', {
        kind: 'info',
        text: `${address.email} is now your primary email address.`,
      });
    }
    const email = body(request, 'email').trim();
    if (!email) return account(request, reply, { email }, { email: 'Enter an email address.' });
    try {
      await users.addEmails(user, [email]);
    } catch (err) {
      return account(request, reply, { email }, { email: errorField(userError(err), {}, 'email')[1] });
    }
    return web.redirect(reply, '/user/settings/account', { kind: 'info', text: `${email} has been added.` });
  });

  app.post('/user/settings/account/email/delete', async (request, reply) => {
    const user = web.requireUser(request);
    const address = await ownEmail(user, body(request, 'id'));
    try {
      await users.deleteEmails(user, [address.email]);
    } catch (err) {
      return account(request, reply, {}, { email: errorField(userError(err), {}, 'email')[1] });
    }
    return web.redirect(reply, '/user/settings/account', {
      kind: 'info',
      text: `${address.email} has been deleted.`,
    });
  });

  app.post('/user/settings/account/delete', async (request, reply) => {
    const user = web.requireUser(request);
    if (!(await passwordMatches(user, body(request, 'password'), request))) {
      return account(request, reply, {}, { delete_password: 'The password is incorrect.' });
    }
    try {
      await users.delete(user, { purge: false });
    } catch (err) {
      return account(request, reply, {}, { delete: userError(err).message });
    }
    await web.signOut(request, reply);
    return web.redirect(reply, '/', { kind: 'info', text: 'Your account has been deleted.' });
  });

  app.get('/user/settings/appearance', async (request, reply) => {
    const user = web.requireUser(request);
    return web.send(reply, <AppearancePage page={web.page(request)} theme={user.theme || 'auto'} />);
  });

  app.post('/user/settings/appearance/theme', async (request, reply) => {
    const user = web.requireUser(request);
    const theme = body(request, 'theme');
    if (!THEMES.some((t) => t.value === theme)) {
      return web.send(
        reply,
        <AppearancePage page={web.page(request)} theme={theme} error="Choose auto, light or dark." />,
        422,
      );
    }
    await users.updateSettings(user, { theme });
    return web.redirect(reply, '/user/settings/appearance', {
      kind: 'info',
      text: 'Your theme has been updated.',
    });
  });

  app.get('/user/settings/notifications', async (request, reply) => {
    const user = web.requireUser(request);
    return web.send(
      reply,
      <NotificationsPage page={web.page(request)} preference={user.email_notifications_preference} />,
    );
  });

  app.post('/user/settings/notifications/email', async (request, reply) => {
    const user = web.requireUser(request);
    const preference = body(request, 'preference');
    try {
      await users.updateSettings(user, { emailNotificationsPreference: preference });
    } catch (err) {
      const text = errorField(userError(err), {}, 'preference')[1];
      return web.send(
        reply,
        <NotificationsPage page={web.page(request)} preference={preference} error={text} />,
        422,
      );
    }
    return web.redirect(reply, '/user/settings/notifications', {
      kind: 'info',
      text: 'Your email notification preference has been set.',
    });
  });
}
