// The migration pages at Forgejo's /repo/migrate: the choice of where to migrate from, and the
// form of a plain git migration (?service_type=1) with Forgejo's field names, which calls
// MirrorService.migrate as POST /repos/migrate does. Only git data is migrated (branches and tags,
// once or as a pull mirror), so Git is the one source offered: what Forgejo brings over from
// GitHub, GitLab, Gitea, Forgejo and the others (issues, pull requests, releases, labels,
// milestones, wikis, LFS objects) is not, and the page says so; their repositories can still be
// migrated as plain git from their clone URL.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { checkRepoName } from '../repos/names.js';
import type { RepoService } from '../repos/service.js';
import type { UserRow } from '../users/tables.js';
import { errorField } from '../web/fields.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { Checkbox, Select, TextArea, ticked } from '../web/settings.js';
import type { MirrorService } from './service.js';

export interface MigratePagesDeps {
  mirrors: Pick<MirrorService, 'migrate' | 'checkCloneAddress' | 'pullMirrorsEnabled'>;
  repos: Pick<RepoService, 'creatableOwners'>;
}

/** Forgejo's GitServiceType numbers (the chooser's ?service_type=): plain git is 1. */
const PLAIN_GIT = 1;
const FORGES: Record<number, string> = {
  2: 'GitHub',
  3: 'Gitea',
  4: 'GitLab',
  5: 'Gogs',
  6: 'OneDev',
  7: 'GitBucket',
  8: 'Codebase',
  9: 'Forgejo',
  10: 'Pagure',
};
const NOT_MIGRATED = 'issues, pull requests, releases, labels, milestones, the wiki and LFS objects';

type Values = Record<string, string>;
type Errors = Partial<Record<string, string>>;

/** Form fields of Forgejo's MigrateRepoForm that Anvil reads, by the names Forgejo posts. */
const FIELDS = {
  clone_addr: 'clone_addr',
  auth_username: 'auth_username',
  uid: 'uid',
  repo_name: 'repo_name',
  mirror_interval: 'mirror_interval',
  description: 'description',
} as const;

/** The form field of a name a service error gives (Forgejo's "[RepoName]: reason"): snake case. */
function migrateField(name: string): string | undefined {
  const snake = name.replace(/(?<=[a-z])([A-Z])/g, '_$1').toLowerCase();
  const field = snake === 'repo_owner' ? FIELDS.uid : snake;
  return field in FIELDS ? field : undefined;
}

function ChooserPage(props: { page: PageContext; query: string; forge?: string | undefined }): VNode {
  const forgeList = Object.values(FORGES).join(', ');
  return (
    <Layout page={props.page} title="New migration">
      <section class="narrow card">
        <h1>New migration</h1>
        <p>Migrate a repository from another server into a new repository here.</p>
        <ul class="list migrate-sources">
          <li>
            <div>
              <a class="title" href={`/repo/migrate?service_type=${PLAIN_GIT}${props.query}`}>
                Git
              </a>
              <p class="muted">
                Any git server over http(s) or git://: branches and tags are cloned, once or as a mirror that
                keeps following the remote.
              </p>
            </div>
          </li>
        </ul>
        <p class="muted">
          From {forgeList}: migrate the repository's clone URL with Git. Only its git data comes over:{' '}
          {NOT_MIGRATED} are not migrated.
        </p>
      </section>
    </Layout>
  );
}

function MigrateForm(props: {
  page: PageContext;
  owners: UserRow[];
  values: Values;
  errors: Errors;
  mirrors: boolean;
  /** The forge a ?service_type= named, for which only the git data can come. */
  forge?: string | undefined;
}): VNode {
  const { values, errors, page } = props;
  return (
    <Layout page={page} title="New migration">
      <section class="narrow card">
        <h1>Migrate a git repository</h1>
        {props.forge ? (
          <p class="flash info" role="status">
            From {props.forge}, only the git data (branches and tags) is migrated: give the repository's clone
            URL. Its {NOT_MIGRATED} are not migrated.
          </p>
        ) : (
          <p class="muted">Branches and tags are migrated; {NOT_MIGRATED} are not.</p>
        )}
        {errors['form'] ? (
          <p class="flash error" role="alert">
            {errors['form']}
          </p>
        ) : null}
        <form method="post" action="/repo/migrate">
          <CsrfField page={page} />
          <input type="hidden" name="service" value={String(PLAIN_GIT)} />
          <Field
            label="Migrate / clone from URL"
            name="clone_addr"
            value={values['clone_addr'] ?? ''}
            required
            autofocus
            autocomplete="off"
            error={errors['clone_addr']}
          />
          <p class="muted hint">
            The http(s) or git:// URL of the repository, such as https://example.com/owner/repository.git
          </p>
          <fieldset class="field">
            <legend>Authorization (when the remote asks for it)</legend>
            <Field
              label="Username"
              name="auth_username"
              value={values['auth_username'] ?? ''}
              autocomplete="off"
              error={errors['auth_username']}
            />
            <Field
              label="Password or token"
              name="auth_password"
              type="password"
              autocomplete="new-password"
            />
          </fieldset>
          {props.mirrors ? (
            <>
              <Checkbox
                label="This repository will be a mirror"
                name="mirror"
                checked={values['mirror'] === 'on'}
              />
              <p class="muted hint">
                A mirror follows the remote, updated on a schedule and on request; nobody pushes to it.
              </p>
              <Field
                label="Mirror interval"
                name="mirror_interval"
                value={values['mirror_interval'] ?? ''}
                error={errors['mirror_interval']}
              />
              <p class="muted hint">
                A duration such as 8h0m0s or 30m; 0 updates only on request; empty takes the site&apos;s
                default.
              </p>
            </>
          ) : null}
          <Select
            label="Owner"
            name="uid"
            value={values['uid']}
            options={props.owners.map((o) => ({ value: String(o.id), label: o.name }))}
            error={errors['uid']}
          />
          <Field
            label="Repository name"
            name="repo_name"
            value={values['repo_name'] ?? ''}
            required
            error={errors['repo_name']}
          />
          <Checkbox label="Make repository private" name="private" checked={values['private'] === 'on'} />
          <TextArea
            label="Description"
            name="description"
            value={values['description']}
            maxLength={2048}
            rows={3}
            error={errors['description']}
          />
          <button type="submit" class="primary">
            Migrate repository
          </button>
        </form>
      </section>
    </Layout>
  );
}

export function migratePages(deps: MigratePagesDeps): PageRoutes {
  const { mirrors, repos } = deps;
  return (app: FastifyInstance, web: Web) => {
    const form = async (
      request: FastifyRequest,
      reply: FastifyReply,
      user: UserRow,
      values: Values,
      errors: Errors,
      status: number,
      forge?: string,
    ) =>
      web.send(
        reply,
        <MigrateForm
          page={web.page(request)}
          owners={await repos.creatableOwners(user)}
          values={values}
          errors={errors}
          mirrors={mirrors.pullMirrorsEnabled}
          forge={forge}
        />,
        status,
      );

    app.get('/repo/migrate', async (request, reply) => {
      const user = web.requireUser(request);
      const q = (request.query ?? {}) as Record<string, unknown>;
      const type = Number(formText(q['service_type']));
      const org = formText(q['org']);
      const mirror = formText(q['mirror']) === '1';
      if (type !== PLAIN_GIT && !FORGES[type]) {
        const params = new URLSearchParams();
        if (/^\d+$/.test(org)) params.set('org', org);
        if (mirror) params.set('mirror', '1');
        const query = params.size ? `&${params.toString()}` : '';
        return web.send(reply, <ChooserPage page={web.page(request)} query={query} />);
      }
      const values: Values = { uid: /^\d+$/.test(org) ? org : String(user.id), mirror: mirror ? 'on' : '' };
      return form(request, reply, user, values, {}, 200, FORGES[type]);
    });

    app.post('/repo/migrate', async (request, reply) => {
      const user = web.requireUser(request);
      const b = (request.body ?? {}) as Record<string, unknown>;
      const values: Values = {
        clone_addr: formText(b['clone_addr']).trim(),
        auth_username: formText(b['auth_username']).trim(),
        uid: formText(b['uid']),
        repo_name: formText(b['repo_name']).trim(),
        mirror: ticked(b['mirror']) ? 'on' : '',
        mirror_interval: formText(b['mirror_interval']).trim(),
        private: ticked(b['private']) ? 'on' : '',
        description: formText(b['description']),
      };
      const password = formText(b['auth_password']);
      const token = formText(b['auth_token']);
      const errors: Errors = {};

      // Every field that can be checked before the clone, so that all their errors show at once.
      const owners = await repos.creatableOwners(user);
      const owner = owners.find((o) => String(o.id) === values['uid']);
      if (!owner) errors['uid'] = 'You cannot create repositories for this owner.';
      if (!values['clone_addr']) errors['clone_addr'] = 'The URL to migrate from is required.';
      else {
        try {
          await mirrors.checkCloneAddress(values['clone_addr'], values['auth_username'], password, token);
        } catch (err) {
          if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
          errors['clone_addr'] = err.message;
        }
      }
      try {
        checkRepoName(values['repo_name']!, 'repo_name');
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        errors['repo_name'] = errorField(err, {}, 'repo_name')[1];
      }
      if (owner && !Object.keys(errors).length) {
        try {
          const repo = await mirrors.migrate(user, {
            cloneAddr: values['clone_addr']!,
            repoName: values['repo_name']!,
            uid: owner.id,
            authUsername: values['auth_username'],
            authPassword: password,
            authToken: token,
            mirror: values['mirror'] === 'on',
            mirrorInterval: values['mirror_interval'],
            private: values['private'] === 'on',
            description: values['description'],
            allowOrgCreators: true,
          });
          return web.redirect(reply, `/${owner.name}/${repo.name}`, {
            kind: 'info',
            text:
              values['mirror'] === 'on'
                ? `The repository is now a mirror of ${repo.original_url}.`
                : `The repository was migrated from ${repo.original_url}.`,
          });
        } catch (err) {
          if (!(err instanceof AppError) || !['invalid', 'conflict', 'forbidden'].includes(err.kind)) {
            throw err;
          }
          const [field, message] = errorField(err, migrateField, '');
          if (field) errors[field] = message;
          else if (err.kind === 'conflict') errors['repo_name'] = message;
          else if (err.kind === 'invalid' && message.startsWith('Authentication failed')) {
            errors['auth_username'] = message;
          } else if (err.kind === 'invalid') errors['clone_addr'] = message;
          else errors['form'] = message;
        }
      }
      return form(request, reply, user, values, errors, 422);
    });
  };
}
