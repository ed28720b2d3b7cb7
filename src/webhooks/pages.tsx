// The web pages of webhooks (Forgejo's settings/hooks): the list, creating a hook of each type,
// editing and deleting one, a test delivery and the recent deliveries with their request and
// response, sent again on demand. The same handlers serve a repository's hooks, a user's or an
// organization's (they fire for all their repositories) and the site's default and system hooks.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, forbidden } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import {
  ADMIN_NAV,
  DangerForm,
  type NavItem,
  Section,
  SettingsLayout,
  USER_SETTINGS_NAV,
  orgSettingsNav,
  repoSettingsNav,
} from '../web/settings.js';
import {
  HookForm,
  authorizationOf,
  configOf,
  emptyForm,
  eventsOf,
  formOf,
  readForm,
  type FormState,
} from './hook-form.js';
import type { HookDeliveryJson } from './schemas.js';
import type { HookScope, WebhookService } from './service.js';
import type { WebhookRow } from './tables.js';
import { HOOK_TYPES, TYPE_LABELS, isHookType } from './types.js';

const labelOf = (type: string): string => (isHookType(type) ? TYPE_LABELS[type] : type);

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

/** The "Add webhook" menu: one link per type, to `{base}/{type}/new`. */
export function AddHookMenu(props: { base: string; label?: string }): VNode {
  return (
    <nav class="hook-add" aria-label={props.label ?? 'Add webhook'}>
      <span>{props.label ?? 'Add webhook'}:</span>
      {HOOK_TYPES.map((type) => (
        <a key={type} class="button" href={`${props.base}/${type}/new`}>
          {TYPE_LABELS[type]}
        </a>
      ))}
    </nav>
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
        <AddHookMenu base={t.base} />
        {props.hooks.length === 0 ? (
          <p class="empty">There are no webhooks yet.</p>
        ) : (
          <ul class="list hook-list">
            {props.hooks.map((h) => (
              <li key={h.id}>
                <span class={h.is_active ? 'pill hook-on' : 'pill hook-off'}>
                  {h.is_active ? 'active' : 'inactive'}
                </span>{' '}
                <a href={`${t.base}/${h.id}`}>{h.url}</a> <span class="muted">{labelOf(h.type)}</span>
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
      if (!isHookType(type)) throw new AppError('not_found', `unknown webhook type: ${type}`);
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
      const label = labelOf(hook.type);
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
            <Section title={`Add ${kind}${labelOf(type)} webhook`}>
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
        return web.send(reply, newPage(request, t, type, emptyForm()));
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
            authorizationHeader: authorizationOf(state, type),
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
        const state = formOf(hook, webhooks.toJson(hook).authorization_header);
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
            authorizationHeader: authorizationOf(state, hook.type),
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
