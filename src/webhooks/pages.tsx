// The web pages of webhooks (Forgejo's settings/hooks): the list, creating a hook of each type,
// editing and deleting one, a test delivery and the recent deliveries with their request and
// response, sent again on demand. The same handlers serve a repository's hooks, a user's or an
// organization's (they fire for all their repositories) and the site's default and system hooks.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, forbidden } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formList, formText, type PageRoutes, type Web } from '../web/plugin.js';
import {
  ADMIN_NAV,
  Checkbox,
  DangerForm,
  type NavItem,
  Section,
  Select,
  SettingsLayout,
  USER_SETTINGS_NAV,
  orgSettingsNav,
  repoSettingsNav,
  ticked,
} from '../web/settings.js';
import { CHOICES, parseSettings } from './events.js';
import { HOOK_TYPES } from './render.js';
import type { HookDeliveryJson } from './schemas.js';
import { metaOf } from './schemas.js';
import type { HookScope, WebhookService } from './service.js';
import type { WebhookRow } from './tables.js';

export interface WebhookPagesDeps {
  webhooks: Pick<
    WebhookService,
    'list' | 'create' | 'edit' | 'delete' | 'requireHook' | 'deliveries' | 'test' | 'redeliver' | 'toJson'
  >;
  repos: Pick<RepoService, 'requireRepo'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
}

/** Where the hooks being managed belong, and how their pages are framed. */
interface Target {
  scope: HookScope;
  /** The hooks' list address (…/settings/hooks). */
  base: string;
  area: string;
  nav: NavItem[];
  active: string;
  /** Test deliveries exist for a repository's hooks only (they need a repository's push). */
  canTest: boolean;
  /** The admin default/system hooks: which kind a new hook becomes. */
  system?: boolean;
}

const TYPE_LABELS: Record<string, string> = {
  forgejo: 'Forgejo',
  gitea: 'Gitea',
  gogs: 'Gogs',
  slack: 'Slack',
  matrix: 'Matrix',
};

const CHOICE_LABELS: Record<string, string> = {
  create: 'Create (branch or tag created)',
  delete: 'Delete (branch or tag deleted)',
  fork: 'Fork',
  issues: 'Issues',
  issue_assign: 'Issue assigned',
  issue_label: 'Issue labelled',
  issue_milestone: 'Issue milestoned',
  issue_comment: 'Issue comment',
  push: 'Push',
  pull_request: 'Pull request',
  pull_request_assign: 'Pull request assigned',
  pull_request_label: 'Pull request labelled',
  pull_request_milestone: 'Pull request milestoned',
  pull_request_comment: 'Pull request comment',
  pull_request_review: 'Pull request reviewed',
  pull_request_sync: 'Pull request synchronized',
  pull_request_review_request: 'Pull request review requested',
  wiki: 'Wiki',
  repository: 'Repository',
  release: 'Release',
  package: 'Package',
};

type Values = Record<string, string> & { chosen?: never };
interface FormState {
  values: Record<string, string>;
  chosen: string[];
  errors: Record<string, string>;
}

const empty = (): FormState => ({
  values: { events: 'push_only', content_type: 'json', http_method: 'POST', active: 'on' },
  chosen: [],
  errors: {},
});

function stateOf(row: WebhookRow, authorization: string): FormState {
  const s = parseSettings(row.events);
  const meta = metaOf(row) ?? {};
  return {
    values: {
      payload_url: row.url,
      http_method: row.http_method,
      content_type: row.content_type,
      events: s.send_everything ? 'send_everything' : s.choose_events ? 'choose_events' : 'push_only',
      branch_filter: row.branch_filter,
      authorization_header: authorization,
      active: row.is_active ? 'on' : '',
      channel: meta['channel'] ?? '',
      username: meta['username'] ?? '',
      icon_url: meta['icon_url'] ?? '',
      color: meta['color'] ?? '',
    },
    chosen: CHOICES.filter((c) => s.events[c]),
    errors: {},
  };
}

/** Reads the posted form and checks what can be checked before the service does. */
function readForm(body: unknown, type: string, creating: boolean): FormState {
  const b = (body ?? {}) as Record<string, unknown>;
  const t = (name: string) => formText(b[name]).trim();
  const values: Values = {
    payload_url: t('payload_url'),
    http_method: t('http_method') || 'POST',
    content_type: t('content_type') || 'json',
    secret: formText(b['secret']),
    events: t('events') || 'push_only',
    branch_filter: t('branch_filter'),
    authorization_header: formText(b['authorization_header']),
    active: ticked(b['active']) ? 'on' : '',
    channel: t('channel'),
    username: t('username'),
    icon_url: t('icon_url'),
    color: t('color'),
  };
  const chosen = CHOICES.filter((c) => ticked(b[c]) || formList(b['event']).includes(c));
  const errors: Record<string, string> = {};
  const url = values['payload_url']!;
  if (!url) errors['payload_url'] = 'Target URL is required.';
  else {
    let ok = false;
    try {
      const u = new URL(url);
      ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && url.length <= 2048;
    } catch {
      ok = false;
    }
    if (!ok) errors['payload_url'] = 'Target URL must be a valid http:// or https:// address.';
  }
  if (!['push_only', 'send_everything', 'choose_events'].includes(values['events']!)) {
    errors['events'] = 'Choose which events trigger this webhook.';
  } else if (values['events'] === 'choose_events' && chosen.length === 0) {
    errors['events'] = 'Choose at least one event.';
  }
  if (!['json', 'form'].includes(values['content_type']!)) errors['content_type'] = 'Unknown content type.';
  // eslint-disable-next-line no-control-regex -- one header line
  if (/[\x00-\x1f\x7f]/.test(values['authorization_header']!)) {
    errors['authorization_header'] = 'The authorization header must be a single line.';
  }
  if (values['secret']!.length > 255) errors['secret'] = 'The secret must be at most 255 characters.';
  if (type === 'slack' && (values['channel'] === '' || values['channel'] === '#') && creating) {
    errors['channel'] = 'A Slack channel is required.';
  }
  return { values, chosen, errors };
}

function eventsOf(f: FormState): string[] {
  const how = f.values['events'];
  return how === 'send_everything' ? ['*'] : how === 'choose_events' ? f.chosen : [];
}

function configOf(f: FormState, type: string, creating: boolean): Record<string, string> {
  const v = f.values;
  const config: Record<string, string> = {
    url: v['payload_url']!,
    content_type: v['content_type']!,
    http_method: type === 'matrix' && creating && v['http_method'] === 'POST' ? 'PUT' : v['http_method']!,
  };
  // An empty secret on the edit page keeps the one stored (it is never shown).
  if (creating || v['secret']) config['secret'] = v['secret']!;
  if (type === 'slack') {
    for (const k of ['channel', 'username', 'icon_url', 'color']) config[k] = v[k]!;
  }
  return config;
}

function HookForm(props: {
  page: PageContext;
  action: string;
  type: string;
  state: FormState;
  creating: boolean;
  formError?: string | undefined;
}): VNode {
  const { values: v, errors: e } = props.state;
  const how = v['events'];
  return (
    <form method="post" action={props.action} class="hook-form">
      <CsrfField page={props.page} />
      {props.formError ? (
        <p class="flash error" role="alert">
          {props.formError}
        </p>
      ) : null}
      <Field
        label="Target URL"
        name="payload_url"
        type="url"
        value={v['payload_url'] ?? ''}
        required
        error={e['payload_url']}
      />
      <Select
        label="HTTP method"
        name="http_method"
        value={v['http_method']}
        options={(props.type === 'matrix' ? ['PUT', 'POST', 'GET'] : ['POST', 'GET']).map((m) => ({
          value: m,
          label: m,
        }))}
      />
      <Select
        label="POST content type"
        name="content_type"
        value={v['content_type']}
        error={e['content_type']}
        options={[
          { value: 'json', label: 'application/json' },
          { value: 'form', label: 'application/x-www-form-urlencoded' },
        ]}
      />
      {props.type === 'slack' ? (
        <>
          <Field label="Channel" name="channel" value={v['channel'] ?? ''} error={e['channel']} />
          <Field label="Username" name="username" value={v['username'] ?? ''} />
          <Field label="Icon URL" name="icon_url" value={v['icon_url'] ?? ''} />
          <Field label="Color" name="color" value={v['color'] ?? ''} />
        </>
      ) : null}
      <Field
        label={props.creating ? 'Secret' : 'Secret (leave empty to keep the current one)'}
        name="secret"
        type="password"
        value=""
        autocomplete="new-password"
        error={e['secret']}
      />
      <fieldset class={e['events'] ? 'field invalid hook-events' : 'field hook-events'}>
        <legend>Trigger on</legend>
        {(
          [
            ['push_only', 'Push events'],
            ['send_everything', 'All events'],
            ['choose_events', 'Custom events'],
          ] as const
        ).map(([value, label]) => (
          <div class="field check" key={value}>
            <input
              id={`f-events-${value}`}
              type="radio"
              name="events"
              value={value}
              checked={how === value}
            />
            <label for={`f-events-${value}`}>{label}</label>
          </div>
        ))}
        <div class="hook-choices">
          {CHOICES.map((c) => (
            <Checkbox
              key={c}
              label={CHOICE_LABELS[c] ?? c}
              name={c}
              checked={props.state.chosen.includes(c)}
            />
          ))}
        </div>
        {e['events'] ? (
          <p class="field-error" id="f-events-error">
            {e['events']}
          </p>
        ) : null}
      </fieldset>
      <Field
        label="Branch filter"
        name="branch_filter"
        value={v['branch_filter'] ?? ''}
        error={e['branch_filter']}
      />
      <Field
        label="Authorization header"
        name="authorization_header"
        value={v['authorization_header'] ?? ''}
        error={e['authorization_header']}
      />
      <Checkbox label="Active" name="active" checked={v['active'] === 'on'} />
      <button type="submit" class="primary">
        {props.creating ? 'Add webhook' : 'Update webhook'}
      </button>
    </form>
  );
}

function Frame(props: { page: PageContext; t: Target; title: string; children: VNode | VNode[] }): VNode {
  return (
    <SettingsLayout
      page={props.page}
      title={props.title}
      area={props.t.area}
      nav={props.t.nav}
      active={props.t.active}
    >
      {props.children}
    </SettingsLayout>
  );
}

function ListPage(props: { page: PageContext; t: Target; hooks: WebhookRow[] }): VNode {
  const { t } = props;
  return (
    <Frame page={props.page} t={t} title={`Webhooks · ${t.area}`}>
      <Section title="Webhooks">
        <p class="muted">
          Webhooks send an HTTP request to an address of your choice when something happens
          {t.scope.kind === 'repo' ? ' in this repository' : ' in any of these repositories'}.
        </p>
        <nav class="hook-add" aria-label="Add webhook">
          <span>Add webhook:</span>
          {HOOK_TYPES.map((type) => (
            <a key={type} class="button" href={`${t.base}/${type}/new`}>
              {TYPE_LABELS[type] ?? type}
            </a>
          ))}
        </nav>
        {props.hooks.length === 0 ? (
          <p class="empty">There are no webhooks yet.</p>
        ) : (
          <ul class="list hook-list">
            {props.hooks.map((h) => (
              <li key={h.id}>
                <span class={h.is_active ? 'pill hook-on' : 'pill hook-off'}>
                  {h.is_active ? 'active' : 'inactive'}
                </span>{' '}
                <a href={`${t.base}/${h.id}`}>{h.url}</a>{' '}
                <span class="muted">{TYPE_LABELS[h.type] ?? h.type}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </Frame>
  );
}

function Headers(props: { headers: Record<string, string> }): VNode {
  return (
    <pre class="hook-headers" tabIndex={0}>
      {Object.entries(props.headers).map(([k, v]) => `${k}: ${v}\n`)}
    </pre>
  );
}

function Delivery(props: { page: PageContext; t: Target; hookId: number; d: HookDeliveryJson }): VNode {
  const { d } = props;
  const status = d.success ? 'succeeded' : d.delivered ? 'failed' : 'pending';
  return (
    <details class="hook-delivery">
      <summary>
        <span class={`pill hook-${status}`}>{status}</span> <code>{d.uuid}</code> {d.event}{' '}
        {d.status_code !== null ? <span>HTTP {d.status_code}</span> : null}{' '}
        <span class="muted">{d.created_at}</span>
      </summary>
      <form method="post" action={`${props.t.base}/${props.hookId}/replay/${d.uuid}`}>
        <CsrfField page={props.page} />
        <button type="submit">Redeliver</button>
      </form>
      <h4>Request</h4>
      <p>
        <code>
          {d.request.http_method} {d.request.url}
        </code>
      </p>
      <Headers headers={d.request.headers} />
      <pre class="hook-body" tabIndex={0}>
        {d.request.body}
      </pre>
      <h4>Response</h4>
      {d.response ? (
        <>
          <p>Status {d.response.status}</p>
          <Headers headers={d.response.headers} />
          <pre class="hook-body" tabIndex={0}>
            {d.response.body}
          </pre>
        </>
      ) : (
        <p class="muted">No response (yet).</p>
      )}
    </details>
  );
}

export function webhookPages(deps: WebhookPagesDeps): PageRoutes {
  const { webhooks } = deps;

  const repoTarget = async (web: Web, request: FastifyRequest): Promise<Target> => {
    web.requireUser(request);
    const p = request.params as Record<string, string>;
    const { repo } = await deps.repos.requireRepo(
      p['owner'] ?? '',
      p['repo'] ?? '',
      request.web.viewer,
      'admin',
    );
    const owner = p['owner'] ?? '';
    const base = `/${owner}/${repo.name}/settings/hooks`;
    return {
      scope: { kind: 'repo', repo },
      base,
      area: `${owner}/${repo.name}`,
      nav: repoSettingsNav(owner, repo.name),
      active: base,
      canTest: true,
    };
  };

  return (app: FastifyInstance, web: Web) => {
    const orgTarget = async (request: FastifyRequest): Promise<Target> => {
      web.requireUser(request);
      const org = await deps.orgs.requireVisibleOrg(
        (request.params as { org: string }).org,
        request.web.viewer,
      );
      await deps.orgs.requireOwner(org, request.web.viewer!);
      const base = `/org/${org.name}/settings/hooks`;
      return {
        scope: { kind: 'owner', owner: org },
        base,
        area: org.name,
        nav: orgSettingsNav(org.name),
        active: base,
        canTest: false,
      };
    };
    const userTarget = async (request: FastifyRequest): Promise<Target> => {
      const user = web.requireUser(request);
      const base = '/user/settings/hooks';
      return {
        scope: { kind: 'owner', owner: user },
        base,
        area: 'User settings',
        nav: USER_SETTINGS_NAV,
        active: base,
        canTest: false,
      };
    };
    const adminTarget =
      (system: boolean) =>
      async (request: FastifyRequest): Promise<Target> => {
        const user = web.requireUser(request);
        if (user.is_admin !== 1) throw forbidden('site administrators only');
        return {
          scope: { kind: 'site' },
          base: system ? '/admin/system-hooks' : '/admin/default-hooks',
          area: 'Site administration',
          nav: ADMIN_NAV,
          active: '/admin/hooks',
          canTest: false,
          system,
        };
      };

    const mounts: Array<{ prefix: string; target: (r: FastifyRequest) => Promise<Target>; list: boolean }> = [
      { prefix: '/:owner/:repo/settings/hooks', target: (r) => repoTarget(web, r), list: true },
      { prefix: '/org/:org/settings/hooks', target: orgTarget, list: true },
      { prefix: '/user/settings/hooks', target: userTarget, list: true },
      { prefix: '/admin/default-hooks', target: adminTarget(false), list: false },
      { prefix: '/admin/system-hooks', target: adminTarget(true), list: false },
    ];

    const typeOf = (request: FastifyRequest): string => {
      const type = (request.params as Record<string, string>)['type'] ?? '';
      if (!(HOOK_TYPES as readonly string[]).includes(type))
        throw new AppError('not_found', `unknown webhook type: ${type}`);
      return type;
    };
    const idOf = (request: FastifyRequest): number => {
      const id = Number((request.params as Record<string, string>)['id']);
      if (!Number.isSafeInteger(id) || id <= 0) throw new AppError('not_found', 'webhook does not exist');
      return id;
    };

    const showEdit = async (
      request: FastifyRequest,
      t: Target,
      hook: WebhookRow,
      state: FormState,
      formError?: string,
    ): Promise<VNode> => {
      const [deliveries] = await webhooks.deliveries(t.scope, hook.id, { limit: 10, offset: 0, page: 1 });
      const page = web.page(request);
      const label = TYPE_LABELS[hook.type] ?? hook.type;
      return (
        <Frame page={page} t={t} title={`Edit webhook · ${t.area}`}>
          <Section title={`Edit ${label} webhook`}>
            <HookForm
              page={page}
              action={`${t.base}/${hook.id}`}
              type={hook.type}
              state={state}
              creating={false}
              formError={formError}
            />
          </Section>
          <Section title="Recent deliveries">
            {t.canTest ? (
              <form method="post" action={`${t.base}/${hook.id}/test`} class="hook-test">
                <CsrfField page={page} />
                <button type="submit">Test delivery</button>
              </form>
            ) : null}
            {deliveries.length === 0 ? <p class="empty">No deliveries yet.</p> : null}
            {deliveries.map((d) => (
              <Delivery key={d.uuid} page={page} t={t} hookId={hook.id} d={d} />
            ))}
          </Section>
          <Section title="Delete webhook" danger>
            <DangerForm
              page={page}
              action={`${t.base}/${hook.id}/delete`}
              button="Delete webhook"
              confirm="Delete this webhook and its delivery history?"
            />
          </Section>
        </Frame>
      );
    };

    for (const m of mounts) {
      if (m.list) {
        app.get(m.prefix, async (request, reply) => {
          const t = await m.target(request);
          const [hooks] = await webhooks.list(t.scope, { limit: 100, offset: 0, page: 1 });
          return web.send(reply, <ListPage page={web.page(request)} t={t} hooks={hooks} />);
        });
      }

      const newPage = (
        request: FastifyRequest,
        t: Target,
        type: string,
        state: FormState,
        formError?: string,
      ) => {
        const page = web.page(request);
        const kind = t.system === undefined ? '' : t.system ? 'system ' : 'default ';
        return (
          <Frame page={page} t={t} title={`Add webhook · ${t.area}`}>
            <Section title={`Add ${kind}${TYPE_LABELS[type] ?? type} webhook`}>
              <HookForm
                page={page}
                action={`${t.base}/${type}/new`}
                type={type}
                state={state}
                creating
                formError={formError}
              />
            </Section>
          </Frame>
        );
      };

      app.get(`${m.prefix}/:type/new`, async (request, reply) => {
        const t = await m.target(request);
        const type = typeOf(request);
        return web.send(reply, newPage(request, t, type, empty()));
      });

      app.post(`${m.prefix}/:type/new`, async (request, reply) => {
        const t = await m.target(request);
        const type = typeOf(request);
        const state = readForm(request.body, type, true);
        if (Object.keys(state.errors).length) return web.send(reply, newPage(request, t, type, state), 422);
        let row: WebhookRow;
        try {
          row = await webhooks.create(t.scope, {
            type,
            config: configOf(state, type, true),
            events: eventsOf(state),
            branchFilter: state.values['branch_filter'],
            authorizationHeader: state.values['authorization_header'],
            active: state.values['active'] === 'on',
            isSystemWebhook: t.system,
          });
        } catch (err) {
          if (err instanceof AppError && (err.kind === 'invalid' || err.kind === 'bad_request')) {
            return web.send(reply, newPage(request, t, type, state, err.message), 422);
          }
          throw err;
        }
        return web.redirect(reply, `${t.base}/${row.id}`, {
          kind: 'info',
          text: 'The webhook has been added.',
        });
      });

      app.get(`${m.prefix}/:id`, async (request, reply) => {
        const t = await m.target(request);
        const hook = await webhooks.requireHook(t.scope, idOf(request));
        const state = stateOf(hook, webhooks.toJson(hook).authorization_header);
        return web.send(reply, await showEdit(request, t, hook, state));
      });

      app.post(`${m.prefix}/:id`, async (request, reply) => {
        const t = await m.target(request);
        const hook = await webhooks.requireHook(t.scope, idOf(request));
        const state = readForm(request.body, hook.type, false);
        if (Object.keys(state.errors).length) {
          return web.send(reply, await showEdit(request, t, hook, state), 422);
        }
        try {
          await webhooks.edit(t.scope, hook.id, {
            config: configOf(state, hook.type, false),
            events: eventsOf(state),
            branchFilter: state.values['branch_filter'],
            authorizationHeader: state.values['authorization_header'],
            active: state.values['active'] === 'on',
          });
        } catch (err) {
          if (err instanceof AppError && (err.kind === 'invalid' || err.kind === 'bad_request')) {
            return web.send(reply, await showEdit(request, t, hook, state, err.message), 422);
          }
          throw err;
        }
        return web.redirect(reply, `${t.base}/${hook.id}`, {
          kind: 'info',
          text: 'The webhook has been updated.',
        });
      });

      app.post(`${m.prefix}/:id/delete`, async (request, reply) => {
        const t = await m.target(request);
        await webhooks.delete(t.scope, idOf(request));
        const to = m.list ? t.base : '/admin/hooks';
        return web.redirect(reply, to, { kind: 'info', text: 'The webhook has been deleted.' });
      });

      app.post(`${m.prefix}/:id/test`, async (request, reply) => {
        const t = await m.target(request);
        if (t.scope.kind !== 'repo')
          throw new AppError('not_found', 'test deliveries are for repository webhooks');
        const id = idOf(request);
        await webhooks.test(t.scope.repo, id, web.requireUser(request));
        return web.redirect(reply, `${t.base}/${id}`, {
          kind: 'info',
          text: 'A test delivery has been queued.',
        });
      });

      app.post(`${m.prefix}/:id/replay/:uuid`, async (request, reply) => {
        const t = await m.target(request);
        const id = idOf(request);
        const uuid = (request.params as Record<string, string>)['uuid'] ?? '';
        await webhooks.redeliver(t.scope, id, uuid);
        return web.redirect(reply, `${t.base}/${id}`, {
          kind: 'info',
          text: 'The delivery has been queued again.',
        });
      });
    }
  };
}
