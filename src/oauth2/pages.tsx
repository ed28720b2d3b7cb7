// A user's OAuth2 applications in the web interface, at Forgejo's addresses: create (from the
// applications page, tokens/pages.tsx), edit at /user/settings/applications/oauth2/{id}, a new
// client secret (shown once), delete. Another user's application is a 404, as in the API. The
// provider's own pages (consent, revoking a grant) are consent-pages.tsx, registered with these.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import { APPLICATIONS, showApplications, type AppFormState, type ApplicationsDeps } from '../tokens/pages.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import { errorField } from '../web/fields.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import {
  Checkbox,
  DangerForm,
  Section,
  SettingsLayout,
  TextArea,
  USER_SETTINGS_NAV,
  ticked,
} from '../web/settings.js';
import { consentPages, type ConsentPagesDeps } from './consent-pages.js';
import { redirectUrisOf, type OAuth2AppInput, type OAuth2Service } from './service.js';
import type { OAuth2AppRow } from './tables.js';

export interface OAuth2PagesDeps extends ApplicationsDeps {
  provider: ApplicationsDeps['provider'] & ConsentPagesDeps['provider'];
  oauth2: Pick<OAuth2Service, 'list' | 'create' | 'get' | 'edit' | 'regenerateSecret' | 'delete'>;
}

const appPath = (id: number) => `${APPLICATIONS}/oauth2/${id}`;

/** The posted form, as typed, and what the service is given. */
function readForm(body: unknown): { state: AppFormState; input: OAuth2AppInput } {
  const b = body as Record<string, unknown> | undefined;
  const name = formText(b?.['application_name']);
  const uris = formText(b?.['redirect_uris']);
  const confidential = ticked(formText(b?.['confidential_client']));
  return {
    state: { application_name: name, redirect_uris: uris, confidential_client: confidential, errors: {} },
    input: {
      name,
      redirectUris: uris
        .split(/\r?\n/)
        .map((u) => u.trim())
        .filter(Boolean),
      confidentialClient: confidential,
    },
  };
}

/** The field a refusal of the service names (`[Name]: ...`, `[RedirectURIs]: ...`), or undefined. */
function fieldError(err: unknown): [string, string] | undefined {
  if (!(err instanceof AppError) || err.kind !== 'invalid') return undefined;
  const [field, reason] = errorField(err, { Name: 'application_name', RedirectURIs: 'redirect_uris' }, '');
  if (!field) return undefined;
  const text =
    reason === 'Required'
      ? 'This field must not be empty.'
      : `${reason.replace(/^./, (c) => c.toUpperCase())}.`;
  return [field, text];
}

function EditPage(props: { page: PageContext; app: OAuth2AppRow; form: AppFormState }): VNode {
  const { page, app, form } = props;
  return (
    <SettingsLayout
      page={page}
      title={`OAuth2 application ${app.name}`}
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active={APPLICATIONS}
    >
      <p>
        <a href={APPLICATIONS}>Applications</a> / {app.name}
      </p>
      <Section title="Client credentials">
        <dl class="credential-facts">
          <dt>Client ID</dt>
          <dd>
            <code id="client-id">{app.client_id}</code>
          </dd>
          <dt>Client secret</dt>
          <dd class="muted">Shown only when it is created. Regenerate it if it was lost.</dd>
          <dt>Created</dt>
          <dd>
            <When unix={app.created_unix} />
          </dd>
        </dl>
        <form method="post" action={`${appPath(app.id)}/regenerate_secret`}>
          <CsrfField page={page} />
          <button type="submit">Regenerate secret</button>
        </form>
      </Section>
      <Section title="Edit application">
        <form method="post" action={appPath(app.id)}>
          <CsrfField page={page} />
          <Field
            label="Application name"
            name="application_name"
            value={form.application_name}
            required
            error={form.errors['application_name']}
          />
          <TextArea
            label="Redirect URIs"
            name="redirect_uris"
            value={form.redirect_uris}
            rows={3}
            required
            hint="One URI a line."
            error={form.errors['redirect_uris']}
          />
          <Checkbox
            label="Confidential client"
            name="confidential_client"
            checked={form.confidential_client}
          />
          <button type="submit" class="primary">
            Update application
          </button>
        </form>
      </Section>
      <Section title="Delete application" danger>
        <DangerForm
          page={page}
          action={`${appPath(app.id)}/delete`}
          button="Delete application"
          confirm={`Delete the OAuth2 application "${app.name}"? Clients using it stop working.`}
        />
      </Section>
    </SettingsLayout>
  );
}

const formOf = (app: OAuth2AppRow): AppFormState => ({
  application_name: app.name,
  redirect_uris: redirectUrisOf(app).join('\n'),
  confidential_client: app.confidential_client === 1,
  errors: {},
});

function appId(request: FastifyRequest): number {
  const raw = (request.params as { id: string }).id;
  if (!/^\d{1,15}$/.test(raw)) throw notFound('The OAuth2 application does not exist.');
  return Number(raw);
}

export function oauth2Pages(deps: OAuth2PagesDeps): PageRoutes {
  const showEdit = (
    web: Web,
    request: FastifyRequest,
    reply: FastifyReply,
    app: OAuth2AppRow,
    form: AppFormState,
    status = 200,
  ) => web.send(reply, <EditPage page={web.page(request)} app={app} form={form} />, status);

  const secretShown = (web: Web, reply: FastifyReply, app: OAuth2AppRow, secret: string, what: string) =>
    web.redirect(reply, appPath(app.id), {
      kind: 'info',
      text: `${what} Copy the client secret now, as it will not be shown again: ${secret}`,
    });

  return (app, web) => {
    consentPages(app, web, deps);

    app.post(`${APPLICATIONS}/oauth2`, async (request, reply) => {
      const user: UserRow = web.requireUser(request);
      const { state, input } = readForm(request.body);
      let created;
      try {
        created = await deps.oauth2.create(user, input);
      } catch (err) {
        const field = fieldError(err);
        if (!field) throw err;
        state.errors[field[0]] = field[1];
        return showApplications(deps, web, request, reply, user, { app: state }, 422);
      }
      return secretShown(web, reply, created.row, created.secret, 'The OAuth2 application has been created.');
    });

    app.get(`${APPLICATIONS}/oauth2/:id`, async (request, reply) => {
      const user = web.requireUser(request);
      const row = await deps.oauth2.get(user, appId(request));
      return showEdit(web, request, reply, row, formOf(row));
    });

    app.post(`${APPLICATIONS}/oauth2/:id`, async (request, reply) => {
      const user = web.requireUser(request);
      const row = await deps.oauth2.get(user, appId(request));
      const { state, input } = readForm(request.body);
      try {
        await deps.oauth2.edit(user, row.id, input);
      } catch (err) {
        const field = fieldError(err);
        if (!field) throw err;
        state.errors[field[0]] = field[1];
        return showEdit(web, request, reply, row, state, 422);
      }
      return web.redirect(reply, appPath(row.id), {
        kind: 'info',
        text: 'The OAuth2 application has been updated.',
      });
    });

    app.post(`${APPLICATIONS}/oauth2/:id/regenerate_secret`, async (request, reply) => {
      const user = web.requireUser(request);
      const { row, secret } = await deps.oauth2.regenerateSecret(user, appId(request));
      return secretShown(web, reply, row, secret, 'A new client secret has been generated.');
    });

    app.post(`${APPLICATIONS}/oauth2/:id/delete`, async (request, reply) => {
      const user = web.requireUser(request);
      await deps.oauth2.delete(user, appId(request));
      return web.redirect(reply, APPLICATIONS, {
        kind: 'info',
        text: 'The OAuth2 application has been deleted.',
      });
    });
  };
}
