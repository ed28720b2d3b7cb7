// The applications page of a user's settings (/user/settings/applications, as Forgejo lays it
// out): access tokens (list, create with scopes: the value is shown once, delete), the OAuth2
// applications the user authorized (revoked by oauth2/consent-pages.tsx) and the user's own OAuth2
// applications (their forms are handled by oauth2/pages.tsx, which renders this
// page again when its input is bad). The same services and checks as the API.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import type { OAuth2Provider } from '../oauth2/provider.js';
import type { OAuth2Service } from '../oauth2/service.js';
import type { OAuth2AppRow, OAuth2GrantListed } from '../oauth2/tables.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formList, formText, type PageRoutes, type Web } from '../web/plugin.js';
import {
  Checkbox,
  DangerForm,
  Section,
  SettingsLayout,
  TextArea,
  USER_SETTINGS_NAV,
} from '../web/settings.js';
import { SCOPE_CATEGORIES, normalizeScopes, storedScopes, hasScope } from './scopes.js';
import type { TokenService } from './service.js';
import type { TokenRow } from './tables.js';

export const APPLICATIONS = '/user/settings/applications';
const MAX_NAME = 255;
/** Every token and application of a user on one page (Forgejo pages neither). */
const ALL = 1000;

type Errors = Record<string, string | undefined>;

/** What the token form holds after a refused post. */
export interface TokenFormState {
  name: string;
  scopes: string[];
  errors: Errors;
}

/** What the new-application form holds after a refused post. */
export interface AppFormState {
  application_name: string;
  redirect_uris: string;
  confidential_client: boolean;
  errors: Errors;
}

export interface ApplicationsDeps {
  tokens: Pick<TokenService, 'list' | 'create' | 'delete'>;
  oauth2: Pick<OAuth2Service, 'list'>;
  /** The applications the user authorized (the OAuth2 provider's grants). */
  provider: Pick<OAuth2Provider, 'listGrants'>;
}

const LEVELS = [
  { value: '', label: 'No access' },
  { value: 'read', label: 'Read' },
  { value: 'write', label: 'Read and write' },
];

/** What a stored scope string grants, as people read it. */
function describeScopes(scope: string): string {
  const set = storedScopes(scope);
  const parts = SCOPE_CATEGORIES.flatMap((c) =>
    hasScope(set, c, 'write') ? [`write:${c}`] : hasScope(set, c, 'read') ? [`read:${c}`] : [],
  );
  const all = parts.length === SCOPE_CATEGORIES.length && parts.every((p) => p.startsWith('write:'));
  return [set.publicOnly ? 'public-only' : '', all ? 'all' : parts.join(', ')].filter(Boolean).join(', ');
}

function ScopeChoices(props: { chosen: string[]; error: string | undefined }): VNode {
  const levelOf = (c: string) =>
    props.chosen.includes(`write:${c}`) || props.chosen.includes('all')
      ? 'write'
      : props.chosen.includes(`read:${c}`)
        ? 'read'
        : '';
  return (
    <fieldset
      class={props.error ? 'token-scopes invalid' : 'token-scopes'}
      aria-describedby={props.error ? 'f-scope-error' : undefined}
    >
      <legend>Permissions</legend>
      <div class="scope-grid">
        {SCOPE_CATEGORIES.map((c) => (
          <div class="field" key={c}>
            <label for={`f-scope-${c}`}>{c}</label>
            <select id={`f-scope-${c}`} name="scope">
              {LEVELS.map((l) => (
                <option value={l.value ? `${l.value}:${c}` : ''} selected={levelOf(c) === l.value}>
                  {l.label}
                </option>
              ))}
            </select>
          </div>
        ))}
      </div>
      <Checkbox
        label="Public resources only"
        name="scope"
        value="public-only"
        id="f-scope-public-only"
        checked={props.chosen.includes('public-only')}
        hint="The token reaches public repositories and organizations only."
      />
      {props.error ? (
        <p class="field-error" id="f-scope-error">
          {props.error}
        </p>
      ) : null}
    </fieldset>
  );
}

function TokenList(props: { page: PageContext; tokens: TokenRow[] }): VNode {
  if (props.tokens.length === 0) return <p class="empty">You have no access tokens.</p>;
  return (
    <ul class="list credential-list">
      {props.tokens.map((t) => (
        <li key={t.id}>
          <svg class="credential-icon" width="20" height="20" viewBox="0 0 16 16" aria-hidden="true">
            <path
              fill="currentColor"
              d="M10.5 0a5.5 5.5 0 1 1-1.7 10.73l-.97.97a.75.75 0 0 1-.53.22H6v1.25a.75.75 0 0 1-.75.75H4v1.25a.75.75 0 0 1-.75.75H.75A.75.75 0 0 1 0 15.25v-2.5c0-.2.08-.39.22-.53l5.05-5.05A5.5 5.5 0 0 1 10.5 0Zm1 3.5a1 1 0 1 0 0 2 1 1 0 0 0 0-2Z"
            />
          </svg>
          <div class="credential-body">
            <p class="title">{t.name}</p>
            <p class="muted">
              <code>{describeScopes(t.scope)}</code>
            </p>
            <p class="muted">
              Added on <When unix={t.created_unix} />
              {' — '}
              {t.updated_unix > t.created_unix ? (
                <>
                  Last used on <When unix={t.updated_unix} />
                </>
              ) : (
                'Never used'
              )}
            </p>
          </div>
          <DangerForm
            page={props.page}
            action={`${APPLICATIONS}/delete`}
            button="Delete"
            confirm={`Delete the access token "${t.name}"? Applications using it lose access at once.`}
          >
            <input type="hidden" name="id" value={String(t.id)} />
          </DangerForm>
        </li>
      ))}
    </ul>
  );
}

function AppList(props: { apps: OAuth2AppRow[] }): VNode {
  if (props.apps.length === 0) return <p class="empty">You have no OAuth2 applications.</p>;
  return (
    <ul class="list credential-list">
      {props.apps.map((a) => (
        <li key={a.id}>
          <div class="credential-body">
            <p class="title">{a.name}</p>
            <p class="muted">
              Client ID <code>{a.client_id}</code>
            </p>
          </div>
          <a class="button" href={`${APPLICATIONS}/oauth2/${a.id}`} aria-label={`Edit ${a.name}`}>
            Edit
          </a>
        </li>
      ))}
    </ul>
  );
}

/** The applications the user authorized, each with a button that revokes its access (Forgejo's address). */
function GrantList(props: { page: PageContext; grants: OAuth2GrantListed[] }): VNode {
  if (props.grants.length === 0) return <p class="empty">You have not authorized any OAuth2 application.</p>;
  return (
    <ul class="list credential-list">
      {props.grants.map((g) => (
        <li key={g.id}>
          <div class="credential-body">
            <p class="title">{g.application_name}</p>
            <p class="muted">
              Authorized on <When unix={g.created_unix} />
              {g.scope ? (
                <>
                  {' — '}
                  <code>{g.scope}</code>
                </>
              ) : null}
            </p>
          </div>
          <DangerForm
            page={props.page}
            action={`${APPLICATIONS}/oauth2/${g.application_id}/revoke/${g.id}`}
            button="Revoke"
            confirm={`Revoke the access of "${g.application_name}" to your account? Its tokens stop working at once.`}
          />
        </li>
      ))}
    </ul>
  );
}

export function ApplicationsPage(props: {
  page: PageContext;
  tokens: TokenRow[];
  apps: OAuth2AppRow[];
  grants: OAuth2GrantListed[];
  token: TokenFormState;
  app: AppFormState;
}): VNode {
  const { page, token, app } = props;
  return (
    <SettingsLayout
      page={page}
      title="Applications"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active={APPLICATIONS}
    >
      <Section title="Manage access tokens">
        <p class="muted">
          Tokens let programs use the API and git over HTTP as you, limited to the permissions you give them.
        </p>
        <TokenList page={page} tokens={props.tokens} />
      </Section>
      <Section title="Generate new token">
        <form method="post" action={APPLICATIONS}>
          <CsrfField page={page} />
          <Field label="Token name" name="name" value={token.name} required error={token.errors['name']} />
          <ScopeChoices chosen={token.scopes} error={token.errors['scope']} />
          <button type="submit" class="primary">
            Generate token
          </button>
        </form>
      </Section>
      <Section title="Authorized OAuth2 applications">
        <p class="muted">These applications can act as you. Revoke the access of those you no longer use.</p>
        <GrantList page={page} grants={props.grants} />
      </Section>
      <Section title="Manage OAuth2 applications">
        <AppList apps={props.apps} />
      </Section>
      <Section title="Create a new OAuth2 application">
        <form method="post" action={`${APPLICATIONS}/oauth2`}>
          <CsrfField page={page} />
          <Field
            label="Application name"
            name="application_name"
            value={app.application_name}
            required
            error={app.errors['application_name']}
          />
          <TextArea
            label="Redirect URIs"
            name="redirect_uris"
            value={app.redirect_uris}
            rows={3}
            required
            hint="One URI a line."
            error={app.errors['redirect_uris']}
          />
          <Checkbox
            label="Confidential client"
            name="confidential_client"
            checked={app.confidential_client}
            hint="Leave unticked for apps that cannot keep a secret, such as native or single-page apps."
          />
          <button type="submit" class="primary">
            Create application
          </button>
        </form>
      </Section>
    </SettingsLayout>
  );
}

export const emptyTokenForm = (): TokenFormState => ({ name: '', scopes: [], errors: {} });
export const emptyAppForm = (): AppFormState => ({
  application_name: '',
  redirect_uris: '',
  confidential_client: true,
  errors: {},
});

/** Renders the applications page for `user`, with the forms' state (after a refused post: 422). */
export async function showApplications(
  deps: ApplicationsDeps,
  web: Web,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
  forms: { token?: TokenFormState; app?: AppFormState } = {},
  status = 200,
): Promise<FastifyReply> {
  const [[tokens], [apps], grants] = await Promise.all([
    deps.tokens.list(user, ALL, 0),
    deps.oauth2.list(user, ALL, 0),
    deps.provider.listGrants(user),
  ]);
  return web.send(
    reply,
    <ApplicationsPage
      page={web.page(request)}
      tokens={tokens}
      apps={apps}
      grants={grants}
      token={forms.token ?? emptyTokenForm()}
      app={forms.app ?? emptyAppForm()}
    />,
    status,
  );
}

/** The problems of a new token's name and scopes, field by field (nothing when it may be created). */
function checkToken(name: string, scopes: string[]): Errors {
  const errors: Errors = {};
  if (!name.trim()) errors['name'] = 'The token name must not be empty.';
  else if (name.trim().length > MAX_NAME)
    errors['name'] = `The token name must be at most ${MAX_NAME} characters.`;
  try {
    normalizeScopes(scopes);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    errors['scope'] = /must have a scope/.test(err.message)
      ? 'Choose at least one permission.'
      : `${err.message.replace(/^invalid/, 'Invalid')}.`;
  }
  return errors;
}

export function tokenPages(deps: ApplicationsDeps): PageRoutes {
  return (app, web) => {
    app.get(APPLICATIONS, async (request, reply) => {
      const user = web.requireUser(request);
      return showApplications(deps, web, request, reply, user);
    });

    app.post(APPLICATIONS, async (request, reply) => {
      const user = web.requireUser(request);
      const body = request.body as Record<string, unknown> | undefined;
      const name = formText(body?.['name']);
      const scopes = formList(body?.['scope']).filter((s) => s !== '');
      const state = { name, scopes, errors: checkToken(name, scopes) };
      if (Object.values(state.errors).some(Boolean)) {
        return showApplications(deps, web, request, reply, user, { token: state }, 422);
      }
      let created;
      try {
        created = await deps.tokens.create(user, name, scopes);
      } catch (err) {
        if (err instanceof AppError && /name/i.test(err.message)) {
          state.errors['name'] = 'A token with this name already exists.';
          return showApplications(deps, web, request, reply, user, { token: state }, 422);
        }
        throw err;
      }
      return web.redirect(reply, APPLICATIONS, {
        kind: 'info',
        text: `Your new token "${created.row.name}" has been generated. Copy it now, as it will not be shown again: ${created.token}`,
      });
    });

    app.post(`${APPLICATIONS}/delete`, async (request, reply) => {
      const user = web.requireUser(request);
      const id = formText((request.body as Record<string, unknown> | undefined)?.['id']);
      // Only the user's own tokens are found: another's is a 404, as in the API.
      if (!/^\d{1,15}$/.test(id)) throw notFound('The access token does not exist.');
      await deps.tokens.delete(user, id);
      return web.redirect(reply, APPLICATIONS, {
        kind: 'info',
        text: 'The access token has been deleted. Applications using it no longer have access to your account.',
      });
    });
  };
}
