// Forking from the web at Forgejo's /repo/fork/{repo_id}: the owner (the user or an organization
// where they may create repositories, never the source's own owner), the fork's name (the
// source's by default) and its description, with Forgejo's field names (uid, repo_name,
// description). It calls ForkService.fork as POST /repos/{owner}/{repo}/forks does, so every
// branch and tag is forked: the API has no single-branch fork, and neither has this form.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { TextArea } from '../web/settings.js';
import type { ForkService } from './forks.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';

export interface ForkPagesDeps {
  repos: Pick<RepoService, 'getById' | 'requireRepo' | 'creatableOwners'>;
  forks: Pick<ForkService, 'fork' | 'existingForks'>;
  users: Pick<UserService, 'getById'>;
}

type Values = Record<string, string>;

interface Source {
  repo: RepoRow;
  owner: UserRow;
}

/** The error of the owner field: a message, or the fork the owner already has (linked). */
type OwnerError = string | { existing: string };

interface Errors {
  uid?: OwnerError | undefined;
  repo_name?: string | undefined;
  description?: string | undefined;
  form?: string | undefined;
}

function OwnerSelect(props: { owners: UserRow[]; value: string; error: OwnerError | undefined }): VNode {
  const { error } = props;
  return (
    <div class={error ? 'field invalid' : 'field'}>
      <label for="f-uid">Owner</label>
      <select
        id="f-uid"
        name="uid"
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? 'f-uid-error' : undefined}
      >
        {props.owners.map((o) => (
          <option value={String(o.id)} selected={String(o.id) === props.value}>
            {o.name}
          </option>
        ))}
      </select>
      {error === undefined ? null : (
        <p class="field-error" id="f-uid-error">
          {typeof error === 'string' ? (
            error
          ) : (
            <>
              This owner already has a fork of this repository:{' '}
              <a href={`/${error.existing}`}>{error.existing}</a>
            </>
          )}
        </p>
      )}
    </div>
  );
}

function ForkPage(props: {
  page: PageContext;
  source: Source;
  owners: UserRow[];
  values: Values;
  errors: Errors;
}): VNode {
  const { page, source, values, errors } = props;
  const full = `${source.owner.name}/${source.repo.name}`;
  return (
    <Layout page={page} title={`Fork ${full}`}>
      <section class="narrow card">
        <h1>New fork</h1>
        <p>
          Fork from <a href={`/${full}`}>{full}</a>
        </p>
        {errors.form ? (
          <p class="flash error" role="alert">
            {errors.form}
          </p>
        ) : null}
        {props.owners.length === 0 ? (
          <p class="flash error" role="alert">
            This repository cannot be forked by you: it belongs to {source.owner.name}, and no organization
            lets you create repositories.
          </p>
        ) : (
          <form method="post" action={`/repo/fork/${source.repo.id}`}>
            <CsrfField page={page} />
            <OwnerSelect owners={props.owners} value={values['uid'] ?? ''} error={errors.uid} />
            <Field
              label="Repository name"
              name="repo_name"
              value={values['repo_name'] ?? ''}
              required
              error={errors.repo_name}
            />
            <p class="muted hint">
              {source.repo.is_private
                ? 'The fork is private, as its source is.'
                : 'The fork is public, as its source is.'}{' '}
              It has every branch and tag of its source.
            </p>
            <TextArea
              label="Description"
              name="description"
              value={values['description']}
              maxLength={2048}
              rows={3}
              error={errors.description}
            />
            <button type="submit" class="primary">
              Fork repository
            </button>
          </form>
        )}
      </section>
    </Layout>
  );
}

export function forkPages(deps: ForkPagesDeps): PageRoutes {
  const { repos, forks, users } = deps;
  return (app: FastifyInstance, web: Web) => {
    /** The repository of the URL, when the viewer may read its code (404 otherwise, as the API). */
    async function sourceOf(request: FastifyRequest): Promise<Source> {
      const id = (request.params as Record<string, string>)['repo_id'] ?? '';
      const missing = () => notFound(`repository does not exist [id: ${id}]`);
      const repo = /^\d{1,15}$/.test(id) ? await repos.getById(Number(id)) : undefined;
      const owner = repo ? await users.getById(repo.owner_id) : undefined;
      if (!repo || !owner) throw missing();
      try {
        await repos.requireRepo(owner.name, repo.name, request.web.viewer, 'read');
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'not_found' || err.kind === 'forbidden'))
          throw missing();
        throw err;
      }
      return { repo, owner };
    }

    /** Where the user may fork to: their accounts but the source's owner (Forgejo's choice). */
    const ownersFor = async (user: UserRow, source: Source) =>
      (await repos.creatableOwners(user)).filter((o) => o.id !== source.owner.id);

    const show = (
      request: FastifyRequest,
      reply: FastifyReply,
      source: Source,
      owners: UserRow[],
      values: Values,
      errors: Errors,
      status: number,
    ) =>
      web.send(
        reply,
        <ForkPage page={web.page(request)} source={source} owners={owners} values={values} errors={errors} />,
        status,
      );

    app.get('/repo/fork/:repo_id', async (request, reply) => {
      const user = web.requireUser(request);
      const source = await sourceOf(request);
      const owners = await ownersFor(user, source);
      // The first account without a fork of this repository is chosen, as Forgejo does.
      const forked = await forks.existingForks(source.repo, owners);
      const uid = owners.find((o) => !forked.has(o.id)) ?? owners[0];
      const values = {
        uid: uid ? String(uid.id) : '',
        repo_name: source.repo.name,
        description: source.repo.description,
      };
      return show(request, reply, source, owners, values, {}, 200);
    });

    app.post('/repo/fork/:repo_id', async (request, reply) => {
      const user = web.requireUser(request);
      const source = await sourceOf(request);
      const b = (request.body ?? {}) as Record<string, unknown>;
      const values: Values = {
        uid: formText(b['uid']),
        repo_name: formText(b['repo_name']).trim(),
        description: formText(b['description']),
      };
      const owners = await ownersFor(user, source);
      const owner = owners.find((o) => String(o.id) === values['uid']);
      const errors: Errors = {};
      if (!owner) {
        errors.uid =
          values['uid'] === String(source.owner.id)
            ? `The repository belongs to ${source.owner.name}: fork it into another account.`
            : 'You cannot create repositories for this owner.';
      } else {
        const existing = (await forks.existingForks(source.repo, [owner])).get(owner.id);
        if (existing) errors.uid = { existing: `${owner.name}/${existing.name}` };
      }
      if (!values['repo_name']) errors.repo_name = 'The repository name is required.';
      if (owner && !errors.uid && !errors.repo_name) {
        try {
          const fork = await forks.fork(user, request.web.viewer!, source.repo, {
            organization: owner.id === user.id ? undefined : owner.name,
            name: values['repo_name'],
            description: values['description'],
          });
          return web.redirect(reply, `/${owner.name}/${fork.name}`, {
            kind: 'info',
            text: `Forked from ${source.owner.name}/${source.repo.name}.`,
          });
        } catch (err) {
          if (!(err instanceof AppError) || !['invalid', 'conflict', 'forbidden'].includes(err.kind)) {
            throw err;
          }
          const m = /^\[(\w+)\]: (.*)$/s.exec(err.message);
          const field = m?.[1];
          const message = m?.[2] ?? err.message;
          if (field === 'Name') errors.repo_name = message;
          else if (field === 'Description') errors.description = message;
          else if (field === 'Organization') errors.uid = message;
          else if (err.kind === 'conflict' && message.startsWith('The repository with the same name')) {
            errors.repo_name = `${owner.name} already has a repository named ${values['repo_name']}.`;
          } else if (err.kind === 'conflict' && message.includes('already forked')) {
            const existing = (await forks.existingForks(source.repo, [owner])).get(owner.id);
            errors.uid = existing ? { existing: `${owner.name}/${existing.name}` } : message;
          } else errors.form = message;
        }
      }
      return show(request, reply, source, owners, values, errors, 422);
    });
  };
}
