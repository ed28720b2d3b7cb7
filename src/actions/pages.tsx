// The web pages of Actions settings (Forgejo's settings/actions/*) of a repository, an
// organization and a user: secrets (written, never shown again), variables, and runners with the
// registration token to copy. The runner list is exported for the site administration's page.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { nowUnix } from '../db/database.js';
import { AppError } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import {
  DangerForm,
  type NavItem,
  Section,
  SettingsLayout,
  TextArea,
  USER_SETTINGS_NAV,
  orgSettingsNav,
  repoSettingsNav,
} from '../web/settings.js';
import { toRunnerJson } from './schemas.js';
import type { ActionsService } from './service.js';
import type { RunnerService } from './runners.js';
import type { KvRow, RunnerRow, Scope } from './tables.js';

export interface ActionsPagesDeps {
  actions: Pick<
    ActionsService,
    | 'listSecrets'
    | 'putSecret'
    | 'deleteSecret'
    | 'listVariables'
    | 'createVariable'
    | 'updateVariable'
    | 'deleteVariable'
  >;
  runners: Pick<RunnerService, 'list' | 'require' | 'describe' | 'delete' | 'registrationToken'>;
  repos: Pick<RepoService, 'requireRepo'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
}

interface Target {
  scope: Scope;
  /** …/settings/actions */
  base: string;
  area: string;
  nav: NavItem[];
}

const MAX_VALUE = 65535;
type Errors = Record<string, string>;

/** A service's refusal of a name or value as the message beside the field, or rethrown. */
function fieldErrorOf(err: unknown): Errors {
  if (err instanceof AppError) {
    if (err.kind === 'bad_request' || err.kind === 'conflict') return { name: err.message };
    if (err.kind === 'invalid') return { data: err.message };
  }
  throw err;
}

function Frame(props: {
  page: PageContext;
  t: Target;
  title: string;
  active: string;
  children: VNode | VNode[];
}) {
  return (
    <SettingsLayout
      page={props.page}
      title={`${props.title} · ${props.t.area}`}
      area={props.t.area}
      nav={props.t.nav}
      active={`${props.t.base}/${props.active}`}
    >
      {props.children}
    </SettingsLayout>
  );
}

function SecretsPage(props: {
  page: PageContext;
  t: Target;
  rows: KvRow[];
  values: Record<string, string>;
  errors: Errors;
}) {
  const { t } = props;
  return (
    <Frame page={props.page} t={t} title="Actions secrets" active="secrets">
      <Section title="Add or update a secret">
        <p class="muted">Secrets are passed to workflows; their values are never shown again once saved.</p>
        <form method="post" action={`${t.base}/secrets`}>
          <CsrfField page={props.page} />
          <Field
            label="Name"
            name="name"
            value={props.values['name'] ?? ''}
            required
            error={props.errors['name']}
          />
          <TextArea label="Value" name="data" required error={props.errors['data']} />
          <button type="submit" class="primary">
            Save secret
          </button>
        </form>
      </Section>
      <Section title="Secrets">
        {props.rows.length === 0 ? <p class="empty">There are no secrets yet.</p> : null}
        <ul class="list">
          {props.rows.map((r) => (
            <li key={r.id}>
              <code>{r.name}</code> <span class="muted">******</span>
              <DangerForm
                page={props.page}
                action={`${t.base}/secrets/delete`}
                button="Delete"
                confirm={`Delete the secret ${r.name}?`}
              >
                <input type="hidden" name="name" value={r.name} />
              </DangerForm>
            </li>
          ))}
        </ul>
      </Section>
    </Frame>
  );
}

function VariablesPage(props: {
  page: PageContext;
  t: Target;
  rows: KvRow[];
  values: Record<string, string>;
  errors: Errors;
  editing?: KvRow | undefined;
}) {
  const { t, editing } = props;
  const action = editing ? `${t.base}/variables/${editing.id}/edit` : `${t.base}/variables/new`;
  return (
    <Frame page={props.page} t={t} title="Actions variables" active="variables">
      <Section title={editing ? `Edit variable ${editing.name}` : 'Add a variable'}>
        <form method="post" action={action}>
          <CsrfField page={props.page} />
          <Field
            label="Name"
            name="name"
            value={props.values['name'] ?? ''}
            required
            error={props.errors['name']}
          />
          <TextArea
            label="Value"
            name="data"
            value={props.values['data'] ?? ''}
            required
            error={props.errors['data']}
          />
          <button type="submit" class="primary">
            {editing ? 'Update variable' : 'Add variable'}
          </button>
        </form>
      </Section>
      <Section title="Variables">
        {props.rows.length === 0 ? <p class="empty">There are no variables yet.</p> : null}
        <ul class="list">
          {props.rows.map((r) => (
            <li key={r.id}>
              <div>
                <code>{r.name}</code>{' '}
                <span class="muted">{r.data.length > 80 ? `${r.data.slice(0, 80)}…` : r.data}</span>
              </div>
              <a class="button" href={`${t.base}/variables/${r.id}/edit`}>
                Edit
              </a>
              <DangerForm
                page={props.page}
                action={`${t.base}/variables/${r.id}/delete`}
                button="Delete"
                confirm={`Delete the variable ${r.name}?`}
              />
            </li>
          ))}
        </ul>
      </Section>
    </Frame>
  );
}

/** A list of runners with their status and labels, each with a delete button under `base`. */
export function RunnerList(props: {
  page: PageContext;
  base: string;
  runners: RunnerRow[];
  busy: Set<number>;
}): VNode {
  const now = nowUnix();
  if (props.runners.length === 0) return <p class="empty">There are no runners yet.</p>;
  return (
    <table class="runners">
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Name</th>
          <th scope="col">Version</th>
          <th scope="col">Labels</th>
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.runners.map((r) => {
          const j = toRunnerJson(r, props.busy.has(r.id), now);
          return (
            <tr key={r.id}>
              <td>
                <span class={`pill runner-${j.status}`}>{j.status}</span>
              </td>
              <td>
                <a href={`${props.base}/${r.id}`}>{r.name}</a>
                {r.description ? <p class="muted hint">{r.description}</p> : null}
              </td>
              <td>{r.version || '-'}</td>
              <td>
                {j.labels.map((l) => (
                  <span key={l.name} class="pill">
                    {l.name}
                  </span>
                ))}
              </td>
              <td>
                <DangerForm
                  page={props.page}
                  action={`${props.base}/${r.id}/delete`}
                  button="Delete"
                  confirm={`Delete the runner ${r.name}?`}
                />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function actionsPages(deps: ActionsPagesDeps): PageRoutes {
  const { actions, runners } = deps;
  return (app: FastifyInstance, web: Web) => {
    const repoTarget = async (request: FastifyRequest): Promise<Target> => {
      web.requireUser(request);
      const p = request.params as Record<string, string>;
      const owner = p['owner'] ?? '';
      const { repo } = await deps.repos.requireRepo(owner, p['repo'] ?? '', request.web.viewer, 'admin');
      return {
        scope: { ownerId: null, repoId: repo.id },
        base: `/${owner}/${repo.name}/settings/actions`,
        area: `${owner}/${repo.name}`,
        nav: repoSettingsNav(owner, repo.name),
      };
    };
    const orgTarget = async (request: FastifyRequest): Promise<Target> => {
      web.requireUser(request);
      const org = await deps.orgs.requireVisibleOrg(
        (request.params as { org: string }).org,
        request.web.viewer,
      );
      await deps.orgs.requireOwner(org, request.web.viewer!);
      return {
        scope: { ownerId: org.id, repoId: null },
        base: `/org/${org.name}/settings/actions`,
        area: org.name,
        nav: orgSettingsNav(org.name),
      };
    };
    const userTarget = async (request: FastifyRequest): Promise<Target> => {
      const user = web.requireUser(request);
      return {
        scope: { ownerId: user.id, repoId: null },
        base: '/user/settings/actions',
        area: 'User settings',
        nav: USER_SETTINGS_NAV,
      };
    };

    const mounts: Array<[string, (r: FastifyRequest) => Promise<Target>]> = [
      ['/:owner/:repo/settings/actions', repoTarget],
      ['/org/:org/settings/actions', orgTarget],
      ['/user/settings/actions', userTarget],
    ];
    const body = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;
    const allVariables = async (t: Target) => (await actions.listVariables(t.scope, 1000, 0))[0];
    const variableById = async (t: Target, request: FastifyRequest) => {
      const id = Number((request.params as Record<string, string>)['id']);
      const row = (await allVariables(t)).find((v) => v.id === id);
      if (!row) throw new AppError('not_found', 'variable does not exist');
      return row;
    };

    for (const [prefix, target] of mounts) {
      // Secrets
      const secretsPage = async (
        request: FastifyRequest,
        t: Target,
        values: Record<string, string>,
        errors: Errors,
      ) => {
        const [rows] = await actions.listSecrets(t.scope, 1000, 0);
        return <SecretsPage page={web.page(request)} t={t} rows={rows} values={values} errors={errors} />;
      };
      app.get(`${prefix}/secrets`, async (request, reply) => {
        const t = await target(request);
        return web.send(reply, await secretsPage(request, t, {}, {}));
      });
      app.post(`${prefix}/secrets`, async (request, reply) => {
        const t = await target(request);
        const name = formText(body(request)['name']).trim();
        const data = formText(body(request)['data']);
        const errors: Errors = {};
        if (!name) errors['name'] = 'A name is required.';
        if (!data) errors['data'] = 'A value is required.';
        else if (data.length > MAX_VALUE)
          errors['data'] = `The value must be at most ${MAX_VALUE} characters.`;
        if (!Object.keys(errors).length) {
          try {
            const how = await actions.putSecret(t.scope, name, data);
            return web.redirect(reply, `${t.base}/secrets`, {
              kind: 'info',
              text: how === 'created' ? 'The secret has been added.' : 'The secret has been updated.',
            });
          } catch (err) {
            Object.assign(errors, fieldErrorOf(err));
          }
        }
        return web.send(reply, await secretsPage(request, t, { name }, errors), 422);
      });
      app.post(`${prefix}/secrets/delete`, async (request, reply) => {
        const t = await target(request);
        await actions.deleteSecret(t.scope, formText(body(request)['name']));
        return web.redirect(reply, `${t.base}/secrets`, {
          kind: 'info',
          text: 'The secret has been deleted.',
        });
      });

      // Variables
      const variablesPage = async (
        request: FastifyRequest,
        t: Target,
        values: Record<string, string>,
        errors: Errors,
        editing?: KvRow,
      ) => (
        <VariablesPage
          page={web.page(request)}
          t={t}
          rows={await allVariables(t)}
          values={values}
          errors={errors}
          editing={editing}
        />
      );
      const readVariable = (request: FastifyRequest) => {
        const values = {
          name: formText(body(request)['name']).trim(),
          data: formText(body(request)['data']),
        };
        const errors: Errors = {};
        if (!values.name) errors['name'] = 'A name is required.';
        if (!values.data.trim()) errors['data'] = 'A value is required.';
        else if (values.data.length > MAX_VALUE)
          errors['data'] = `The value must be at most ${MAX_VALUE} characters.`;
        return { values, errors };
      };
      app.get(`${prefix}/variables`, async (request, reply) => {
        const t = await target(request);
        return web.send(reply, await variablesPage(request, t, {}, {}));
      });
      app.post(`${prefix}/variables/new`, async (request, reply) => {
        const t = await target(request);
        const { values, errors } = readVariable(request);
        if (!Object.keys(errors).length) {
          try {
            await actions.createVariable(t.scope, values.name, values.data);
            return web.redirect(reply, `${t.base}/variables`, {
              kind: 'info',
              text: 'The variable has been added.',
            });
          } catch (err) {
            Object.assign(errors, fieldErrorOf(err));
          }
        }
        return web.send(reply, await variablesPage(request, t, values, errors), 422);
      });
      app.get(`${prefix}/variables/:id/edit`, async (request, reply) => {
        const t = await target(request);
        const row = await variableById(t, request);
        return web.send(reply, await variablesPage(request, t, { name: row.name, data: row.data }, {}, row));
      });
      app.post(`${prefix}/variables/:id/edit`, async (request, reply) => {
        const t = await target(request);
        const row = await variableById(t, request);
        const { values, errors } = readVariable(request);
        if (!Object.keys(errors).length) {
          try {
            await actions.updateVariable(t.scope, row.name, { name: values.name, value: values.data });
            return web.redirect(reply, `${t.base}/variables`, {
              kind: 'info',
              text: 'The variable has been updated.',
            });
          } catch (err) {
            Object.assign(errors, fieldErrorOf(err));
          }
        }
        return web.send(reply, await variablesPage(request, t, values, errors, row), 422);
      });
      app.post(`${prefix}/variables/:id/delete`, async (request, reply) => {
        const t = await target(request);
        const row = await variableById(t, request);
        await actions.deleteVariable(t.scope, row.name);
        return web.redirect(reply, `${t.base}/variables`, {
          kind: 'info',
          text: 'The variable has been deleted.',
        });
      });

      // Runners
      app.get(`${prefix}/runners`, async (request, reply) => {
        const t = await target(request);
        const [rows, , busy] = await runners.list(t.scope, 1000, 0);
        const token = await runners.registrationToken(t.scope);
        const page = web.page(request);
        return web.send(
          reply,
          <Frame page={page} t={t} title="Runners" active="runners">
            <Section title="Register a runner">
              <p>Use this registration token to register a runner (forgejo-runner register --token ...):</p>
              <p>
                <label for="runner-token">Registration token</label>
                <input id="runner-token" class="secret-token" type="text" readOnly value={token} />
              </p>
            </Section>
            <Section title="Runners">
              <RunnerList page={page} base={`${t.base}/runners`} runners={rows} busy={busy} />
            </Section>
          </Frame>,
        );
      });
      const runnerPage = async (
        request: FastifyRequest,
        t: Target,
        runner: RunnerRow,
        description: string,
        error?: string,
      ) => {
        const page = web.page(request);
        return (
          <Frame page={page} t={t} title={`Runner ${runner.name}`} active="runners">
            <Section title={`Runner ${runner.name}`}>
              <form method="post" action={`${t.base}/runners/${runner.id}`}>
                <CsrfField page={page} />
                <Field label="Description" name="description" value={description} error={error} />
                <button type="submit" class="primary">
                  Update runner
                </button>
              </form>
            </Section>
            <Section title="Delete runner" danger>
              <DangerForm
                page={page}
                action={`${t.base}/runners/${runner.id}/delete`}
                button="Delete runner"
                confirm={`Delete the runner ${runner.name}?`}
              />
            </Section>
          </Frame>
        );
      };
      const runnerId = (request: FastifyRequest) => Number((request.params as Record<string, string>)['id']);
      app.get(`${prefix}/runners/:id`, async (request, reply) => {
        const t = await target(request);
        const { runner } = await runners.require(t.scope, runnerId(request));
        return web.send(reply, await runnerPage(request, t, runner, runner.description));
      });
      app.post(`${prefix}/runners/:id`, async (request, reply) => {
        const t = await target(request);
        const { runner } = await runners.require(t.scope, runnerId(request));
        const description = formText(body(request)['description']);
        try {
          await runners.describe(t.scope, runner.id, description);
        } catch (err) {
          if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
          return web.send(reply, await runnerPage(request, t, runner, description, err.message), 422);
        }
        return web.redirect(reply, `${t.base}/runners`, {
          kind: 'info',
          text: 'The runner has been updated.',
        });
      });
      app.post(`${prefix}/runners/:id/delete`, async (request, reply) => {
        const t = await target(request);
        await runners.delete(t.scope, Number((request.params as Record<string, string>)['id']));
        return web.redirect(reply, `${t.base}/runners`, {
          kind: 'info',
          text: 'The runner has been deleted.',
        });
      });
    }
  };
}
