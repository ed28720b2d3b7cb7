// The site administration's accounts: user accounts (/admin/users: search, sort, pages; create,
// edit, delete with purge), e-mail addresses (/admin/emails, activation) and organizations
// (/admin/orgs). Forgejo's addresses and form field names; the same services as the admin API.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { AdminLayout, AdminSearch, AdminTable, requireAdmin, yesNo } from '../web/admin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { errorField } from '../web/fields.js';
import { Checkbox, DangerForm, Section, Select, ticked } from '../web/settings.js';
import type { UserService } from './service.js';
import { passwordLengthError } from './password-form.js';
import {
  USER_ORDERS,
  UserType,
  visibilityName,
  type UserOrder,
  type UserRow,
  type UserStatusFilter,
  type VisibilityName,
} from './tables.js';

type Form = Record<string, string>;
type Errors = Record<string, string | undefined>;

export interface UserAdminPagesDeps {
  users: Pick<
    UserService,
    'list' | 'create' | 'edit' | 'delete' | 'getById' | 'rename' | 'searchEmails' | 'setEmailActivation'
  >;
  pageSize: number;
}

export function userAdminPages(deps: UserAdminPagesDeps): PageRoutes {
  return (app, web) => registerUserAdminPages(app, web, deps);
}

const VISIBILITIES = [
  { value: 'public', label: 'Public' },
  { value: 'limited', label: 'Limited (signed-in users only)' },
  { value: 'private', label: 'Private (only organization members and administrators)' },
];

const SORTS: Array<{ value: UserOrder; label: string }> = [
  { value: 'newest', label: 'Newest' },
  { value: 'oldest', label: 'Oldest' },
  { value: 'alphabetically', label: 'Alphabetically' },
  { value: 'reversealphabetically', label: 'Reverse alphabetically' },
  { value: 'recentupdate', label: 'Recently updated' },
  { value: 'leastupdate', label: 'Least recently updated' },
];

/** Forgejo's status_filter[...] of the user list: each "1", "0" or absent (anything else is ignored). */
const STATUS_FILTERS = [
  { key: 'is_active', field: 'isActive', label: 'Active' },
  { key: 'is_admin', field: 'isAdmin', label: 'Administrator' },
  { key: 'is_restricted', field: 'isRestricted', label: 'Restricted' },
  { key: 'is_2fa_enabled', field: 'is2faEnabled', label: 'Two-factor authentication' },
  { key: 'is_prohibit_login', field: 'isProhibitLogin', label: 'Sign-in prohibited' },
] as const;
type StatusValues = Partial<Record<(typeof STATUS_FILTERS)[number]['key'], '1' | '0'>>;

const statusOf = (q: Record<string, unknown>): StatusValues => {
  const out: StatusValues = {};
  for (const f of STATUS_FILTERS) {
    const v = formText(q[`status_filter[${f.key}]`]);
    if (v === '1' || v === '0') out[f.key] = v;
  }
  return out;
};

const statusFilter = (v: StatusValues): UserStatusFilter => {
  const out: UserStatusFilter = {};
  for (const f of STATUS_FILTERS) {
    const x = v[f.key];
    if (x !== undefined) out[f.field] = x === '1';
  }
  return out;
};

/** The query of a user list link: the search, the sort and the status filters. */
const listQuery = (q: string, sort: UserOrder, status: StatusValues): string => {
  const p = new URLSearchParams({ sort });
  if (q) p.set('q', q);
  for (const [k, v] of Object.entries(status)) p.set(`status_filter[${k}]`, v);
  return p.toString();
};

const sortOf = (v: unknown): UserOrder => {
  const s = formText(v);
  return (USER_ORDERS as readonly string[]).includes(s) ? (s as UserOrder) : 'newest';
};

/** The field an error names; an unnamed one about an e-mail address goes beside the e-mail field. */
function fieldError(err: AppError, fields: Record<string, string>, fallback: string): [string, string] {
  return errorField(err, fields, /^[^[].*e-mail/is.test(err.message) ? 'email' : fallback);
}

function UserList(props: {
  page: PageContext;
  rows: UserRow[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
  sort: UserOrder;
  status: StatusValues;
}): VNode {
  const query = listQuery(props.q, props.sort, props.status);
  return (
    <AdminLayout page={props.page} title={`User accounts (${props.total})`} active="/admin/users">
      <div class="admin-toolbar">
        <form method="get" action="/admin/users" class="search" role="search">
          <input type="hidden" name="sort" value={props.sort} />
          <input type="search" name="q" value={props.q} aria-label="Search users" placeholder="Search…" />
          {STATUS_FILTERS.map((f) => (
            <label key={f.key}>
              {f.label}{' '}
              <select name={`status_filter[${f.key}]`}>
                <option value="" selected={props.status[f.key] === undefined}>
                  Any
                </option>
                <option value="1" selected={props.status[f.key] === '1'}>
                  Yes
                </option>
                <option value="0" selected={props.status[f.key] === '0'}>
                  No
                </option>
              </select>
            </label>
          ))}
          <button type="submit">Search</button>
        </form>
        <nav class="admin-sort" aria-label="Sort">
          {SORTS.map((s) => (
            <a
              key={s.value}
              href={`/admin/users?${listQuery(props.q, s.value, props.status)}`}
              aria-current={s.value === props.sort ? 'true' : undefined}
            >
              {s.label}
            </a>
          ))}
        </nav>
        <a class="button primary" href="/admin/users/new">
          Create user account
        </a>
      </div>
      {props.rows.length === 0 ? <p class="empty">No user matches.</p> : null}
      <AdminTable
        caption="User accounts"
        head={['ID', 'Username', 'Email', 'Active', 'Admin', 'Restricted', 'Created', 'Last sign-in', '']}
      >
        {props.rows.map((u) => (
          <tr key={u.id}>
            <td>{u.id}</td>
            <td>
              <a href={`/${encodeURIComponent(u.name)}`}>{u.name}</a>
              {u.prohibit_login ? <span class="pill failed">Suspended</span> : null}
            </td>
            <td>{u.email}</td>
            <td>{yesNo(u.is_active)}</td>
            <td>{yesNo(u.is_admin)}</td>
            <td>{yesNo(u.restricted)}</td>
            <td>
              <When unix={u.created_unix} />
            </td>
            <td>{u.last_login_unix ? <When unix={u.last_login_unix} /> : 'Never'}</td>
            <td>
              <a href={`/admin/users/${u.id}/edit`} aria-label={`Edit ${u.name}`}>
                Edit
              </a>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/users"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={query}
      />
    </AdminLayout>
  );
}

function NewUserPage(props: { page: PageContext; values: Form; errors: Errors }): VNode {
  const { values, errors } = props;
  return (
    <AdminLayout page={props.page} title="Create user account" active="/admin/users">
      {errors['form'] ? (
        <p class="flash error" role="alert">
          {errors['form']}
        </p>
      ) : null}
      <form method="post" action="/admin/users/new" class="settings-form">
        <CsrfField page={props.page} />
        <Field
          label="Username"
          name="user_name"
          value={values['user_name']}
          required
          error={errors['user_name']}
        />
        <Field
          label="Sign-in name (empty: the username)"
          name="login_name"
          value={values['login_name']}
          error={errors['login_name']}
        />
        <Field
          label="Email address"
          name="email"
          type="email"
          value={values['email']}
          required
          error={errors['email']}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          required
          autocomplete="new-password"
          error={errors['password']}
        />
        <Select
          label="Visibility"
          name="visibility"
          value={values['visibility'] || 'public'}
          options={VISIBILITIES}
          error={errors['visibility']}
        />
        <Checkbox
          label="Require user to change password"
          name="must_change_password"
          checked={values['must_change_password'] !== 'off'}
        />
        <button type="submit" class="primary">
          Create user account
        </button>
      </form>
    </AdminLayout>
  );
}

function EditUserPage(props: { page: PageContext; user: UserRow; values: Form; errors: Errors }): VNode {
  const { user: u, values, errors } = props;
  const on = (name: string) => values[name] === 'on';
  return (
    <AdminLayout page={props.page} title={`Edit user account ${u.name}`} active="/admin/users">
      {errors['form'] ? (
        <p class="flash error" role="alert">
          {errors['form']}
        </p>
      ) : null}
      <Section title="Account">
        <form method="post" action={`/admin/users/${u.id}/edit`} class="settings-form">
          <CsrfField page={props.page} />
          <Field
            label="Username"
            name="user_name"
            value={values['user_name']}
            required
            error={errors['user_name']}
          />
          <Field label="Full name" name="full_name" value={values['full_name']} error={errors['full_name']} />
          <Field
            label="Email address"
            name="email"
            type="email"
            value={values['email']}
            required
            error={errors['email']}
          />
          <Field
            label="New password (leave empty to keep the current one)"
            name="password"
            type="password"
            autocomplete="new-password"
            error={errors['password']}
          />
          <Field label="Website" name="website" value={values['website']} error={errors['website']} />
          <Field label="Location" name="location" value={values['location']} error={errors['location']} />
          <Field
            label="Maximum number of repositories (-1: the site's default)"
            name="max_repo_creation"
            type="number"
            value={values['max_repo_creation']}
            error={errors['max_repo_creation']}
          />
          <Select label="Visibility" name="visibility" value={values['visibility']} options={VISIBILITIES} />
          <fieldset class="checks">
            <legend>Permissions</legend>
            <Checkbox label="User account is activated" name="active" checked={on('active')} />
            <Checkbox
              label="Suspended: prohibit sign-in (ends every session of the account)"
              name="prohibit_login"
              checked={on('prohibit_login')}
            />
            <Checkbox label="Is administrator" name="admin" checked={on('admin')} />
            <Checkbox label="Is restricted" name="restricted" checked={on('restricted')} />
            <Checkbox
              label="May create organizations"
              name="allow_create_organization"
              checked={on('allow_create_organization')}
            />
            <Checkbox
              label="Require user to change password"
              name="must_change_password"
              checked={on('must_change_password')}
            />
          </fieldset>
          {errors['admin'] ? (
            <p class="field-error" role="alert">
              {errors['admin']}
            </p>
          ) : null}
          <button type="submit" class="primary">
            Update user account
          </button>
        </form>
      </Section>
      <Section title="Delete user account" danger>
        <p>
          Without purge, an account that still owns repositories or packages or belongs to an organization is
          not deleted. With purge, they are deleted with it.
        </p>
        <DangerForm
          page={props.page}
          action={`/admin/users/${u.id}/delete`}
          button="Delete user account"
          confirm={`Delete the account ${u.name}? This cannot be undone.`}
        >
          <Checkbox label="Purge user: also delete what the account owns" name="purge" />
        </DangerForm>
      </Section>
    </AdminLayout>
  );
}

const valuesOf = (u: UserRow): Form => {
  const flag = (v: number) => (v ? 'on' : '');
  return {
    user_name: u.name,
    full_name: u.full_name,
    email: u.email,
    website: u.website,
    location: u.location,
    max_repo_creation: String(u.max_repo_creation),
    visibility: visibilityName(u.visibility),
    active: flag(u.is_active),
    prohibit_login: flag(u.prohibit_login),
    admin: flag(u.is_admin),
    restricted: flag(u.restricted),
    allow_create_organization: flag(u.allow_create_organization),
    must_change_password: flag(u.must_change_password),
  };
};

function EmailList(props: {
  page: PageContext;
  rows: Array<{
    id: number;
    uid: number;
    email: string;
    is_primary: number;
    is_activated: number;
    name: string;
  }>;
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
}): VNode {
  return (
    <AdminLayout page={props.page} title={`User emails (${props.total})`} active="/admin/emails">
      <AdminSearch action="/admin/emails" q={props.q} label="Search emails" />
      {props.rows.length === 0 ? <p class="empty">No address matches.</p> : null}
      <AdminTable caption="Email addresses" head={['Username', 'Email', 'Primary', 'Activated', '']}>
        {props.rows.map((e) => (
          <tr key={e.id}>
            <td>
              <a href={`/admin/users/${e.uid}/edit`}>{e.name}</a>
            </td>
            <td>{e.email}</td>
            <td>{yesNo(e.is_primary)}</td>
            <td>{yesNo(e.is_activated)}</td>
            <td>
              <form method="post" action="/admin/emails/activate" class="inline">
                <CsrfField page={props.page} />
                <input type="hidden" name="uid" value={String(e.uid)} />
                <input type="hidden" name="email" value={e.email} />
                <input type="hidden" name="activate" value={e.is_activated ? 'false' : 'true'} />
                <input type="hidden" name="q" value={props.q} />
                <button type="submit" aria-label={`${e.is_activated ? 'Deactivate' : 'Activate'} ${e.email}`}>
                  {e.is_activated ? 'Deactivate' : 'Activate'}
                </button>
              </form>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/emails"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={props.q ? `q=${encodeURIComponent(props.q)}` : ''}
      />
    </AdminLayout>
  );
}

function OrgList(props: {
  page: PageContext;
  rows: UserRow[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
}): VNode {
  return (
    <AdminLayout page={props.page} title={`Organizations (${props.total})`} active="/admin/orgs">
      <div class="admin-toolbar">
        <AdminSearch action="/admin/orgs" q={props.q} label="Search organizations" />
        <a class="button primary" href="/org/create">
          Create organization
        </a>
      </div>
      {props.rows.length === 0 ? <p class="empty">No organization matches.</p> : null}
      <AdminTable caption="Organizations" head={['ID', 'Name', 'Full name', 'Visibility', 'Created', '']}>
        {props.rows.map((o) => (
          <tr key={o.id}>
            <td>{o.id}</td>
            <td>
              <a href={`/${encodeURIComponent(o.name)}`}>{o.name}</a>
            </td>
            <td>{o.full_name}</td>
            <td>{visibilityName(o.visibility)}</td>
            <td>
              <When unix={o.created_unix} />
            </td>
            <td>
              <a href={`/org/${encodeURIComponent(o.name)}/settings`} aria-label={`Settings of ${o.name}`}>
                Settings
              </a>
            </td>
          </tr>
        ))}
      </AdminTable>
      <Pager
        path="/admin/orgs"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={props.q ? `q=${encodeURIComponent(props.q)}` : ''}
      />
    </AdminLayout>
  );
}

function registerUserAdminPages(app: FastifyInstance, web: Web, deps: UserAdminPagesDeps): void {
  const { users, pageSize } = deps;
  const body = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

  /** The individual account `id` of the path, or a 404. */
  const requireById = async (raw: unknown): Promise<UserRow> => {
    const id = Number(raw);
    const u = Number.isSafeInteger(id) && id > 0 ? await users.getById(id) : undefined;
    if (!u || u.type !== UserType.Individual)
      throw new AppError('not_found', 'The user account does not exist.');
    return u;
  };

  app.get('/admin/users', async (request, reply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const sort = sortOf(q['sort']);
    const status = statusOf(q);
    const [rows, total] = await users.list(
      {
        type: UserType.Individual,
        keyword: keyword || undefined,
        orderBy: sort,
        status: statusFilter(status),
      },
      { limit: pageSize, offset: (pageNo - 1) * pageSize, page: pageNo },
    );
    return web.send(
      reply,
      <UserList
        page={web.page(request)}
        rows={rows}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
        sort={sort}
        status={status}
      />,
    );
  });

  app.get('/admin/users/new', async (request, reply) => {
    requireAdmin(web, request);
    return web.send(reply, <NewUserPage page={web.page(request)} values={{}} errors={{}} />);
  });

  app.post('/admin/users/new', async (request, reply) => {
    requireAdmin(web, request);
    const b = body(request);
    const values: Form = {
      user_name: formText(b['user_name']).trim(),
      login_name: formText(b['login_name']).trim(),
      email: formText(b['email']).trim(),
      visibility: formText(b['visibility']) || 'public',
      must_change_password: ticked(b['must_change_password']) ? 'on' : 'off',
    };
    const password = formText(b['password']);
    const errors: Errors = {};
    if (!values['user_name']) errors['user_name'] = 'The username must not be empty.';
    if (!values['email']) errors['email'] = 'The email address must not be empty.';
    const weak = passwordLengthError(password);
    if (weak) errors['password'] = weak;
    if (!VISIBILITIES.some((v) => v.value === values['visibility']))
      errors['visibility'] = 'Unknown visibility.';
    let created: UserRow | undefined;
    if (!Object.keys(errors).length) {
      try {
        created = await users.create({
          username: values['user_name']!,
          email: values['email']!,
          password,
          loginName: values['login_name'] || undefined,
          mustChangePassword: values['must_change_password'] === 'on',
          visibility: values['visibility'] as VisibilityName,
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
        const [name, message] = fieldError(
          err,
          { Username: 'user_name', Email: 'email', Password: 'password', LoginName: 'login_name' },
          'user_name',
        );
        errors[name] = message;
      }
    }
    if (!created) {
      return web.send(reply, <NewUserPage page={web.page(request)} values={values} errors={errors} />, 422);
    }
    return web.redirect(reply, `/admin/users/${created.id}/edit`, {
      kind: 'info',
      text: `The user account ${created.name} has been created.`,
    });
  });

  app.get('/admin/users/:id', async (request, reply) => {
    requireAdmin(web, request);
    const u = await requireById((request.params as { id: string }).id);
    return web.redirect(reply, `/admin/users/${u.id}/edit`);
  });

  app.get('/admin/users/:id/edit', async (request, reply) => {
    requireAdmin(web, request);
    const u = await requireById((request.params as { id: string }).id);
    return web.send(
      reply,
      <EditUserPage page={web.page(request)} user={u} values={valuesOf(u)} errors={{}} />,
    );
  });

  app.post('/admin/users/:id/edit', async (request, reply) => {
    requireAdmin(web, request);
    const u = await requireById((request.params as { id: string }).id);
    const b = body(request);
    const text = (name: string) => formText(b[name]).trim();
    const flag = (name: string) => (ticked(b[name]) ? 'on' : '');
    const values: Form = {
      user_name: text('user_name'),
      full_name: text('full_name'),
      email: text('email'),
      website: text('website'),
      location: text('location'),
      max_repo_creation: text('max_repo_creation') || '-1',
      visibility: text('visibility') || 'public',
      active: flag('active'),
      prohibit_login: flag('prohibit_login'),
      admin: flag('admin'),
      restricted: flag('restricted'),
      allow_create_organization: flag('allow_create_organization'),
      must_change_password: flag('must_change_password'),
    };
    const password = formText(b['password']);
    const errors: Errors = {};
    const again = () =>
      web.send(
        reply,
        <EditUserPage page={web.page(request)} user={u} values={values} errors={errors} />,
        422,
      );
    if (!values['user_name']) errors['user_name'] = 'The username must not be empty.';
    if (!values['email']) errors['email'] = 'The email address must not be empty.';
    const weak = password ? passwordLengthError(password) : undefined;
    if (weak) errors['password'] = weak;
    const max = Number(values['max_repo_creation']);
    if (!Number.isSafeInteger(max) || max < -1) {
      errors['max_repo_creation'] = 'Enter a whole number, -1 or more.';
    }
    if (!VISIBILITIES.some((v) => v.value === values['visibility']))
      errors['visibility'] = 'Unknown visibility.';
    if (values['website'] && !/^https?:\/\/\S+$/i.test(values['website'])) {
      errors['website'] = 'The website must be an http(s) address.';
    }
    if (Object.keys(errors).length) return again();
    const fields = { Username: 'user_name', NewUsername: 'user_name', Email: 'email', Website: 'website' };
    try {
      if (values['user_name'] !== u.name) await users.rename(u, values['user_name']!, 'user_name');
      await users.edit(u, {
        fullName: values['full_name'],
        email: values['email'],
        website: values['website'],
        location: values['location'],
        password: password || undefined,
        maxRepoCreation: max,
        visibility: values['visibility'] as VisibilityName,
        active: values['active'] === 'on',
        prohibitLogin: values['prohibit_login'] === 'on',
        admin: values['admin'] === 'on',
        restricted: values['restricted'] === 'on',
        allowCreateOrganization: values['allow_create_organization'] === 'on',
        mustChangePassword: values['must_change_password'] === 'on',
      });
    } catch (err) {
      if (!(err instanceof AppError) || (err.kind !== 'invalid' && err.kind !== 'bad_request')) throw err;
      const fallback = /administrator/.test(err.message) ? 'admin' : 'form';
      const [name, message] = fieldError(err, fields, fallback);
      errors[name] = message;
      return again();
    }
    return web.redirect(reply, `/admin/users/${u.id}/edit`, {
      kind: 'info',
      text: `The user account ${values['user_name']} has been updated.`,
    });
  });

  app.post('/admin/users/:id/delete', async (request, reply) => {
    const admin = requireAdmin(web, request);
    const u = await requireById((request.params as { id: string }).id);
    try {
      await users.delete(u, { purge: ticked(body(request)['purge']), doerId: admin.id });
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
      return web.redirect(reply, `/admin/users/${u.id}/edit`, { kind: 'error', text: err.message });
    }
    return web.redirect(reply, '/admin/users', {
      kind: 'info',
      text: `The user account ${u.name} has been deleted.`,
    });
  });

  app.get('/admin/emails', async (request, reply: FastifyReply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const [rows, total] = await users.searchEmails(keyword || undefined, {
      limit: pageSize,
      offset: (pageNo - 1) * pageSize,
      page: pageNo,
    });
    return web.send(
      reply,
      <EmailList
        page={web.page(request)}
        rows={rows}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
      />,
    );
  });

  app.post('/admin/emails/activate', async (request, reply) => {
    requireAdmin(web, request);
    const b = body(request);
    const email = formText(b['email']);
    const activate = formText(b['activate']) === 'true';
    const q = formText(b['q']);
    await users.setEmailActivation(Number(formText(b['uid'])), email, activate);
    return web.redirect(reply, `/admin/emails${q ? `?q=${encodeURIComponent(q)}` : ''}`, {
      kind: 'info',
      text: `The address ${email} is now ${activate ? 'activated' : 'deactivated'}.`,
    });
  });

  app.get('/admin/orgs', async (request, reply) => {
    requireAdmin(web, request);
    const q = request.query as Record<string, unknown>;
    const pageNo = pageNumber(q['page']);
    const keyword = formText(q['q']).trim();
    const [rows, total] = await users.list(
      { type: UserType.Organization, keyword: keyword || undefined, orderBy: 'alphabetically' },
      { limit: pageSize, offset: (pageNo - 1) * pageSize, page: pageNo },
    );
    return web.send(
      reply,
      <OrgList
        page={web.page(request)}
        rows={rows}
        total={total}
        pageNo={pageNo}
        pageSize={pageSize}
        q={keyword}
      />,
    );
  });
}
