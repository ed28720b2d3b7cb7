// The site administration's quota pages (/admin/quota...): rules (limits on subjects) and groups
// (sets of rules) with the same validation as the API's /admin/quota, the members of each group,
// the site's top consumers, and a recalculation that measures what is really stored and reports
// what it corrected. Administrators only (403 for everyone else, as Forgejo's /admin).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, forbidden } from '../errors.js';
import { Pager, formatBytes, pageNumber } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formList, formText, type PageRoutes, type Web } from '../web/plugin.js';
import { errorField } from '../web/fields.js';
import { ADMIN_NAV, Checkbox, DangerForm, Section, SettingsLayout } from '../web/settings.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { UNLIMITED, type Group, type Rule } from './evaluate.js';
import type { Recalculation, QuotaService } from './service.js';
import { ALL_SUBJECTS } from './subjects.js';

export interface QuotaAdminPagesDeps {
  quota: Pick<
    QuotaService,
    | 'listRules'
    | 'requireRule'
    | 'createRule'
    | 'editRule'
    | 'deleteRule'
    | 'listGroups'
    | 'requireGroup'
    | 'createGroup'
    | 'deleteGroup'
    | 'addRuleToGroup'
    | 'removeRuleFromGroup'
    | 'usersOfGroup'
    | 'addUserToGroup'
    | 'removeUserFromGroup'
    | 'topConsumers'
    | 'reconcile'
    | 'settings'
  >;
  users: Pick<UserService, 'getByName' | 'getByIds'>;
  pageSize: number;
}

type Errors = Record<string, string>;
type Values = Record<string, string | string[]>;

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/**
 * A limit as typed: bytes, or a number with a unit (`500 MiB`, `2GB`); empty, `-1` or `unlimited`
 * for no limit. Undefined when it is not one.
 */
export function parseLimit(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (t === '' || t === '-1' || t === 'unlimited') return UNLIMITED;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(t);
  if (!m) return undefined;
  const unit = UNITS[m[2] || 'b'];
  if (unit === undefined) return undefined;
  const n = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(n) ? n : undefined;
}

const limitText = (limit: number) => (limit === UNLIMITED ? 'unlimited' : formatBytes(limit));

/** The field an error names is its bracketed name in lower case ("[Name]: ..." goes beside `name`). */
const lower = (name: string) => name.toLowerCase();

function RuleForm(props: {
  page: PageContext;
  action: string;
  values: Values;
  errors: Errors;
  editing?: boolean;
  submit: string;
}): VNode {
  const { values, errors } = props;
  const chosen = new Set(Array.isArray(values['subjects']) ? values['subjects'] : []);
  return (
    <form method="post" action={props.action} class="quota-rule-form">
      <CsrfField page={props.page} />
      {props.editing ? null : (
        <Field
          label="Rule name"
          name="name"
          value={String(values['name'] ?? '')}
          required
          error={errors['name']}
        />
      )}
      <Field
        label="Limit (bytes, or with a unit: 500 MiB, 2 GB; empty for unlimited)"
        name="limit"
        value={String(values['limit'] ?? '')}
        error={errors['limit']}
      />
      <fieldset class={errors['subjects'] ? 'field invalid' : 'field'}>
        <legend>What it counts</legend>
        <div class="subject-choices">
          {ALL_SUBJECTS.map((s) => (
            <Checkbox
              label={s}
              name="subjects"
              value={s}
              id={`subject-${s.replace(/:/g, '-')}`}
              checked={chosen.has(s)}
            />
          ))}
        </div>
        {errors['subjects'] ? (
          <p class="field-error" id="f-subjects-error">
            {errors['subjects']}
          </p>
        ) : null}
      </fieldset>
      <button type="submit" class="primary">
        {props.submit}
      </button>
    </form>
  );
}

function QuotaHome(props: {
  page: PageContext;
  enabled: boolean;
  rules: Rule[];
  groups: Group[];
  top: Array<{ user: UserRow | undefined; ownerId: number; total: number }>;
  ruleForm: { values: Values; errors: Errors };
  groupForm: { values: Values; errors: Errors };
}): VNode {
  const { page } = props;
  return (
    <>
      <h1>Quota</h1>
      {props.enabled ? null : (
        <p class="flash info">
          Quota is disabled ([quota] ENABLED = false): rules and groups can be prepared; nothing is refused.
        </p>
      )}
      <Section title="Rules">
        {props.rules.length === 0 ? <p class="muted">No rule yet.</p> : null}
        <table class="quota-rules">
          <tbody>
            {props.rules.map((r) => (
              <tr>
                <th scope="row">
                  <a href={`/admin/quota/rules/${encodeURIComponent(r.name)}`}>{r.name}</a>
                </th>
                <td>{limitText(r.limit)}</td>
                <td>
                  {r.subjects.map((s) => (
                    <code class="subject">{s}</code>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3>New rule</h3>
        <RuleForm page={page} action="/admin/quota/rules/new" submit="Create rule" {...props.ruleForm} />
      </Section>
      <Section title="Groups">
        {props.groups.length === 0 ? <p class="muted">No group yet.</p> : null}
        <ul class="list">
          {props.groups.map((g) => (
            <li>
              <div>
                <a class="title" href={`/admin/quota/groups/${encodeURIComponent(g.name)}`}>
                  {g.name}
                </a>
                <p class="muted">{g.rules.length ? g.rules.map((r) => r.name).join(', ') : 'no rules'}</p>
              </div>
            </li>
          ))}
        </ul>
        <h3>New group</h3>
        <form method="post" action="/admin/quota/groups/new" class="inline-form">
          <CsrfField page={page} />
          <Field
            label="Group name"
            name="name"
            value={String(props.groupForm.values['name'] ?? '')}
            required
            error={props.groupForm.errors['name']}
          />
          <button type="submit" class="primary">
            Create group
          </button>
        </form>
      </Section>
      <Section title="Top consumers">
        {props.top.length === 0 ? <p class="muted">Nothing is stored yet.</p> : null}
        <table class="quota-kinds">
          <tbody>
            {props.top.map((t) => (
              <tr>
                <th scope="row">
                  {t.user ? <a href={`/${t.user.name}`}>{t.user.name}</a> : `#${t.ownerId}`}
                </th>
                <td class="num">{formatBytes(t.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Recalculation">
        <p class="muted">
          Measures every repository and stored file, corrects recorded sizes and usage totals that disagree,
          and reports what it corrected.
        </p>
        <form method="post" action="/admin/quota/recalculate">
          <CsrfField page={page} />
          <button type="submit">Recalculate now</button>
        </form>
      </Section>
    </>
  );
}

export function quotaAdminPages(deps: QuotaAdminPagesDeps): PageRoutes {
  return (app, web) => registerQuotaAdminPages(app, web, deps);
}

function registerQuotaAdminPages(app: Parameters<PageRoutes>[0], web: Web, deps: QuotaAdminPagesDeps): void {
  const { quota, users, pageSize } = deps;

  const requireAdmin = (request: FastifyRequest): UserRow => {
    const user = web.requireUser(request);
    if (!user.is_admin) throw forbidden('Only site administrators may see this page.');
    return user;
  };

  const frame = (request: FastifyRequest, title: string, body: VNode) => (
    <SettingsLayout
      page={web.page(request)}
      title={title}
      area="Site administration"
      nav={ADMIN_NAV}
      active="/admin/quota"
    >
      {body}
    </SettingsLayout>
  );

  async function home(
    request: FastifyRequest,
    reply: FastifyReply,
    forms: { rule?: { values: Values; errors: Errors }; group?: { values: Values; errors: Errors } } = {},
    status = 200,
  ) {
    const [rules, groups, top] = await Promise.all([
      quota.listRules(),
      quota.listGroups(),
      quota.topConsumers(20),
    ]);
    const owners = await users.getByIds(top.map((t) => t.ownerId));
    return web.send(
      reply,
      frame(
        request,
        'Quota',
        <QuotaHome
          page={web.page(request)}
          enabled={quota.settings.enabled}
          rules={rules}
          groups={groups}
          top={top.map((t) => ({ ...t, user: owners.get(t.ownerId) }))}
          ruleForm={forms.rule ?? { values: {}, errors: {} }}
          groupForm={forms.group ?? { values: {}, errors: {} }}
        />,
      ),
      status,
    );
  }

  /** The rule form's values, parsed; errors by field. */
  const readRule = (body: unknown) => {
    const b = (body ?? {}) as Record<string, unknown>;
    const values: Values = {
      name: formText(b['name']).trim(),
      limit: formText(b['limit']).trim(),
      subjects: formList(b['subjects']),
    };
    const errors: Errors = {};
    const limit = parseLimit(values['limit'] as string);
    if (limit === undefined)
      errors['limit'] = 'Enter a number of bytes, with a unit if you like (500 MiB), or leave it empty.';
    if ((values['name'] as string).length > 255) errors['name'] = 'At most 255 characters.';
    return { values, errors, limit, subjects: values['subjects'] as string[] };
  };

  app.get('/admin/quota', async (request, reply) => {
    requireAdmin(request);
    return home(request, reply);
  });

  app.post('/admin/quota/rules/new', async (request, reply) => {
    requireAdmin(request);
    const { values, errors, limit, subjects } = readRule(request.body);
    if (!values['name']) errors['name'] = 'Required.';
    if (!Object.keys(errors).length) {
      try {
        const rule = await quota.createRule({ name: values['name'] as string, limit, subjects });
        return web.redirect(reply, '/admin/quota', { kind: 'info', text: `Rule ${rule.name} created.` });
      } catch (err) {
        if (!(err instanceof AppError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
        const [field, message] =
          err.kind === 'conflict' ? ['name', 'A rule of that name exists.'] : errorField(err, lower, 'name');
        errors[field] = message;
      }
    }
    return home(request, reply, { rule: { values, errors } }, 422);
  });

  const ruleName = (request: FastifyRequest) => (request.params as { name: string }).name;

  const rulePage = (request: FastifyRequest, rule: Rule, values: Values, errors: Errors) =>
    frame(
      request,
      `Rule ${rule.name}`,
      <>
        <h1>
          Rule <code>{rule.name}</code>
        </h1>
        <Section title="Edit">
          <RuleForm
            page={web.page(request)}
            action={`/admin/quota/rules/${encodeURIComponent(rule.name)}/edit`}
            values={values}
            errors={errors}
            editing
            submit="Save rule"
          />
        </Section>
        <Section title="Delete" danger>
          <DangerForm
            page={web.page(request)}
            action={`/admin/quota/rules/${encodeURIComponent(rule.name)}/delete`}
            button="Delete this rule"
            confirm={`Delete the rule ${rule.name}? Groups that have it lose it.`}
          />
        </Section>
      </>,
    );

  app.get('/admin/quota/rules/:name', async (request, reply) => {
    requireAdmin(request);
    const rule = await quota.requireRule(ruleName(request));
    const values = { limit: rule.limit === UNLIMITED ? '' : String(rule.limit), subjects: rule.subjects };
    return web.send(reply, rulePage(request, rule, values, {}));
  });

  app.post('/admin/quota/rules/:name/edit', async (request, reply) => {
    requireAdmin(request);
    const rule = await quota.requireRule(ruleName(request));
    const { values, errors, limit, subjects } = readRule(request.body);
    if (!Object.keys(errors).length) {
      try {
        await quota.editRule(rule.name, { limit, subjects });
        return web.redirect(reply, '/admin/quota', { kind: 'info', text: `Rule ${rule.name} saved.` });
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
        const [field, message] = errorField(err, lower, 'subjects');
        errors[field] = message;
      }
    }
    return web.send(reply, rulePage(request, rule, values, errors), 422);
  });

  app.post('/admin/quota/rules/:name/delete', async (request, reply) => {
    requireAdmin(request);
    const name = ruleName(request);
    await quota.deleteRule(name);
    return web.redirect(reply, '/admin/quota', { kind: 'info', text: `Rule ${name} deleted.` });
  });

  app.post('/admin/quota/groups/new', async (request, reply) => {
    requireAdmin(request);
    const name = formText((request.body as Record<string, unknown> | undefined)?.['name']).trim();
    const errors: Errors = {};
    if (!name) errors['name'] = 'Required.';
    else if (name.length > 255) errors['name'] = 'At most 255 characters.';
    else {
      try {
        await quota.createGroup(name);
        return web.redirect(reply, `/admin/quota/groups/${encodeURIComponent(name)}`, {
          kind: 'info',
          text: `Group ${name} created.`,
        });
      } catch (err) {
        if (!(err instanceof AppError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
        errors['name'] =
          err.kind === 'conflict' ? 'A group of that name exists.' : errorField(err, lower, 'name')[1];
      }
    }
    return home(request, reply, { group: { values: { name }, errors } }, 422);
  });

  const groupName = (request: FastifyRequest) => (request.params as { name: string }).name;
  const groupBase = (name: string) => `/admin/quota/groups/${encodeURIComponent(name)}`;

  async function groupPage(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    errors: Errors = {},
    status = 200,
  ) {
    const group = await quota.requireGroup(name);
    const pageNo = pageNumber((request.query as Record<string, unknown>)['page']);
    const [[members, total], rules] = await Promise.all([
      quota.usersOfGroup(group.name, pageSize, (pageNo - 1) * pageSize),
      quota.listRules(),
    ]);
    const page = web.page(request);
    const base = groupBase(group.name);
    const inGroup = new Set(group.rules.map((r) => r.name));
    const others = rules.filter((r) => !inGroup.has(r.name));
    return web.send(
      reply,
      frame(
        request,
        `Group ${group.name}`,
        <>
          <h1>
            Group <code>{group.name}</code>
          </h1>
          <Section title="Rules">
            {group.rules.length === 0 ? <p class="muted">No rule: this group limits nothing.</p> : null}
            <ul class="list">
              {group.rules.map((r) => (
                <li>
                  <div class="grow">
                    <a class="underline" href={`/admin/quota/rules/${encodeURIComponent(r.name)}`}>
                      {r.name}
                    </a>{' '}
                    <span class="muted">
                      {limitText(r.limit)} of {r.subjects.join(', ') || 'nothing'}
                    </span>
                  </div>
                  <form method="post" action={`${base}/rules/remove`} class="inline">
                    <CsrfField page={page} />
                    <input type="hidden" name="rule" value={r.name} />
                    <button type="submit" class="link">
                      Remove
                    </button>
                  </form>
                </li>
              ))}
            </ul>
            {others.length ? (
              <form method="post" action={`${base}/rules/add`} class="inline-form">
                <CsrfField page={page} />
                <div class="field">
                  <label for="f-rule">Add a rule</label>
                  <select id="f-rule" name="rule">
                    {others.map((r) => (
                      <option value={r.name}>{r.name}</option>
                    ))}
                  </select>
                </div>
                <button type="submit">Add rule</button>
              </form>
            ) : null}
          </Section>
          <Section title={`Members (${total})`}>
            <ul class="list">
              {members.map((u) => (
                <li>
                  <div class="grow">
                    <a href={`/${u.name}`}>{u.name}</a>
                  </div>
                  <form method="post" action={`${base}/users/remove`} class="inline">
                    <CsrfField page={page} />
                    <input type="hidden" name="user_name" value={u.name} />
                    <button type="submit" class="link">
                      Remove
                    </button>
                  </form>
                </li>
              ))}
            </ul>
            <Pager path={base} page={pageNo} pageSize={pageSize} total={total} />
            <form method="post" action={`${base}/users/add`} class="inline-form">
              <CsrfField page={page} />
              <Field
                label="Add a user or organization"
                name="user_name"
                required
                error={errors['user_name']}
              />
              <button type="submit">Add member</button>
            </form>
          </Section>
          <Section title="Delete" danger>
            <DangerForm
              page={page}
              action={`${base}/delete`}
              button="Delete this group"
              confirm={`Delete the group ${group.name}? Its members fall back to the default groups.`}
            />
          </Section>
        </>,
      ),
      status,
    );
  }

  app.get('/admin/quota/groups/:name', async (request, reply) => {
    requireAdmin(request);
    return groupPage(request, reply, groupName(request));
  });

  app.post('/admin/quota/groups/:name/delete', async (request, reply) => {
    requireAdmin(request);
    const name = groupName(request);
    await quota.deleteGroup(name);
    return web.redirect(reply, '/admin/quota', { kind: 'info', text: `Group ${name} deleted.` });
  });

  app.post('/admin/quota/groups/:name/rules/add', async (request, reply) => {
    requireAdmin(request);
    const name = groupName(request);
    const rule = formText((request.body as Record<string, unknown> | undefined)?.['rule']);
    await quota.requireRule(rule);
    await quota.addRuleToGroup(name, rule);
    return web.redirect(reply, groupBase(name), { kind: 'info', text: `Rule ${rule} added.` });
  });

  app.post('/admin/quota/groups/:name/rules/remove', async (request, reply) => {
    requireAdmin(request);
    const name = groupName(request);
    const rule = formText((request.body as Record<string, unknown> | undefined)?.['rule']);
    await quota.removeRuleFromGroup(name, rule);
    return web.redirect(reply, groupBase(name), { kind: 'info', text: `Rule ${rule} removed.` });
  });

  for (const action of ['add', 'remove'] as const) {
    app.post(`/admin/quota/groups/:name/users/${action}`, async (request, reply) => {
      requireAdmin(request);
      const name = groupName(request);
      await quota.requireGroup(name);
      const userName = formText((request.body as Record<string, unknown> | undefined)?.['user_name']).trim();
      const user = userName ? await users.getByName(userName) : undefined;
      if (!user) {
        return groupPage(
          request,
          reply,
          name,
          { user_name: userName ? `No account is called ${userName}.` : 'Required.' },
          422,
        );
      }
      try {
        if (action === 'add') await quota.addUserToGroup(name, user);
        else await quota.removeUserFromGroup(name, user);
      } catch (err) {
        if (!(err instanceof AppError) || (err.kind !== 'conflict' && err.kind !== 'not_found')) throw err;
        return groupPage(request, reply, name, { user_name: err.message }, 422);
      }
      return web.redirect(reply, groupBase(name), {
        kind: 'info',
        text: action === 'add' ? `${user.name} added.` : `${user.name} removed.`,
      });
    });
  }

  app.post('/admin/quota/recalculate', async (request, reply) => {
    requireAdmin(request);
    const report: Recalculation = await quota.reconcile();
    const owners = await users.getByIds(report.drift.map((d) => d.ownerId));
    return web.send(
      reply,
      frame(
        request,
        'Recalculation',
        <>
          <h1>Recalculation report</h1>
          <p>
            {report.resized.length} recorded size{report.resized.length === 1 ? '' : 's'} and{' '}
            {report.drift.length} usage total{report.drift.length === 1 ? '' : 's'} corrected.
          </p>
          <Section title="Recorded sizes corrected">
            {report.resized.length === 0 ? (
              <p class="muted">Every recorded size matched what is stored.</p>
            ) : null}
            <table class="quota-kinds">
              <tbody>
                {report.resized.map((r) => (
                  <tr>
                    <th scope="row">
                      {r.kind}: {r.name}
                    </th>
                    <td class="num">
                      {formatBytes(r.recorded)} → {formatBytes(r.measured)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Section>
          <Section title="Usage totals corrected">
            {report.drift.length === 0 ? <p class="muted">Every usage total matched.</p> : null}
            <table class="quota-kinds">
              <tbody>
                {report.drift.map((d) => (
                  <tr>
                    <th scope="row">
                      {owners.get(d.ownerId)?.name ?? `#${d.ownerId}`}{' '}
                      <code class="subject">{d.subject}</code>
                    </th>
                    <td class="num">
                      {formatBytes(d.stored)} → {formatBytes(d.actual)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Section>
          <p>
            <a href="/admin/quota">Back to quota</a>
          </p>
        </>,
      ),
    );
  });
}
