// Labels in the web interface: the pill that shows one (scoped labels as `scope | name`, the
// color as an SVG dot, since the pages' Content-Security-Policy allows no inline style), the
// labels a repository's issues can carry, and the repository's labels page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { CsrfField } from '../web/layout.js';
import { Select, ticked } from '../web/settings.js';
import { LabelItem, NewLabelForm } from './forms.js';
import { LabelPill } from './pill.js';
import { LABEL_TEMPLATES } from './templates.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { LabelService } from './service.js';
import type { LabelRow } from './tables.js';

export { LabelPill };

/** The labels an issue of `repo` may carry: the repository's and its organization's, unarchived. */
export async function labelsFor(
  deps: { labels: Pick<LabelService, 'list'> },
  repo: RepoRow,
  owner: UserRow,
): Promise<LabelRow[]> {
  const all = { page: 1, limit: 10_000, offset: 0 };
  const [own] = await deps.labels.list({ repoId: repo.id }, false, all);
  const [org] = owner.type === 1 ? await deps.labels.list({ orgId: owner.id }, false, all) : [[]];
  return [...own, ...org].sort((a, b) => a.name.localeCompare(b.name));
}

export interface LabelPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  labels: Pick<LabelService, 'list' | 'create' | 'edit' | 'delete' | 'requireRepoLabel' | 'initialize'>;
}

type Form = Record<string, string | undefined>;
const text = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
const formError = (err: unknown): err is AppError =>
  err instanceof AppError && (err.kind === 'invalid' || err.kind === 'conflict');
const reason = (err: AppError) => err.message.replace(/^\[[^\]]*\]: /, '');

export function labelPages(deps: LabelPagesDeps): PageRoutes {
  return (app, web) => {
    const open = async (request: FastifyRequest, need: 'read' | 'write') => {
      const p = request.params as Record<string, string>;
      const view = await deps.repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        need,
        'repo.issues',
      );
      const owner = (await deps.users.getById(view.repo.owner_id))!;
      return { view, owner, base: `/${owner.name}/${view.repo.name}` };
    };
    const page = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: Awaited<ReturnType<typeof open>>,
      values: Form = {},
      errors: Form = {},
    ) => {
      const { view, owner, base } = t;
      const all = { page: 1, limit: 10_000, offset: 0 };
      const [own] = await deps.labels.list({ repoId: view.repo.id }, true, all);
      const [org] = owner.type === 1 ? await deps.labels.list({ orgId: owner.id }, false, all) : [[]];
      const writer = view.access.mode >= 2;
      const ctx = web.page(request);
      const href = (l: LabelRow) => `${base}/issues?labels=${encodeURIComponent(l.name)}`;
      return web.send(
        reply,
        <Layout page={ctx} title={`Labels · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <h2>Labels</h2>
          {writer ? (
            <details class="panel" open={Object.keys(errors).length > 0}>
              <summary>New label</summary>
              <NewLabelForm page={ctx} base={`${base}/labels`} values={values} errors={errors} />
            </details>
          ) : null}
          {own.length === 0 && org.length === 0 ? <p class="empty">This repository has no labels.</p> : null}
          {writer && own.length === 0 ? (
            <form method="post" action={`${base}/labels/initialize`}>
              <CsrfField page={ctx} />
              <Select
                label="Start from a label set"
                name="template_name"
                value={values['template_name'] ?? 'Default'}
                options={Object.keys(LABEL_TEMPLATES).map((k) => ({ value: k, label: k }))}
                error={errors['template_name']}
              />
              <button type="submit">Add these labels</button>
            </form>
          ) : null}
          <ul class="list">
            {own.map((l) =>
              writer ? (
                <LabelItem page={ctx} base={`${base}/labels`} label={l} href={href(l)} />
              ) : (
                <li>
                  <div>
                    <LabelPill label={l} href={href(l)} />
                    {l.description ? <p class="muted">{l.description}</p> : null}
                  </div>
                </li>
              ),
            )}
            {org.map((l) => (
              <li>
                <div>
                  <LabelPill label={l} href={href(l)} />
                  <span class="muted"> (organization label)</span>
                  {l.description ? <p class="muted">{l.description}</p> : null}
                </div>
              </li>
            ))}
          </ul>
        </Layout>,
        Object.keys(errors).length ? 422 : 200,
      );
    };
    const input = (body: unknown) => ({
      title: text(body, 'title').trim(),
      color: text(body, 'color').trim(),
      description: text(body, 'description'),
      exclusive: text(body, 'exclusive'),
      archived: text(body, 'archived'),
    });
    const fieldOf = (err: AppError): string =>
      /color/i.test(err.message) ? 'color' : /description/i.test(err.message) ? 'description' : 'title';
    const labelOf = async (request: FastifyRequest, t: Awaited<ReturnType<typeof open>>) => {
      const id = text(request.body, 'id');
      if (!/^\d+$/.test(id)) throw new AppError('not_found', 'label does not exist');
      return deps.labels.requireRepoLabel(t.view.repo, Number(id));
    };

    app.get('/:owner/:repo/labels', async (request, reply) =>
      page(request, reply, await open(request, 'read')),
    );

    app.post('/:owner/:repo/labels/new', async (request, reply) => {
      const t = await open(request, 'write');
      const v = input(request.body);
      if (!v.title) return page(request, reply, t, v, { title: 'A label needs a name.' });
      try {
        await deps.labels.create(
          { repoId: t.view.repo.id },
          {
            name: v.title,
            color: v.color,
            description: v.description,
            exclusive: ticked(v.exclusive),
            isArchived: ticked(v.archived),
          },
        );
      } catch (err) {
        if (!formError(err)) throw err;
        return page(request, reply, t, v, { [fieldOf(err)]: reason(err) });
      }
      return web.redirect(reply, `${t.base}/labels`, {
        kind: 'info',
        text: `The label ${v.title} has been created.`,
      });
    });

    app.post('/:owner/:repo/labels/edit', async (request, reply) => {
      const t = await open(request, 'write');
      const label = await labelOf(request, t);
      const v = input(request.body);
      if (!v.title) return page(request, reply, t, {}, { title: 'A label needs a name.' });
      try {
        await deps.labels.edit(label, {
          name: v.title,
          color: v.color,
          description: v.description,
          exclusive: ticked(v.exclusive),
          isArchived: ticked(v.archived),
        });
      } catch (err) {
        if (!formError(err)) throw err;
        return page(request, reply, t, {}, { [fieldOf(err)]: reason(err) });
      }
      return web.redirect(reply, `${t.base}/labels`, {
        kind: 'info',
        text: `The label ${v.title} has been updated.`,
      });
    });

    app.post('/:owner/:repo/labels/delete', async (request, reply) => {
      const t = await open(request, 'write');
      const label = await labelOf(request, t);
      await deps.labels.delete(label);
      return web.redirect(reply, `${t.base}/labels`, {
        kind: 'info',
        text: `The label ${label.name} has been deleted.`,
      });
    });

    app.post('/:owner/:repo/labels/initialize', async (request, reply) => {
      const t = await open(request, 'write');
      const name = text(request.body, 'template_name');
      try {
        await deps.labels.initialize(t.view.repo, name);
      } catch (err) {
        if (!formError(err)) throw err;
        return page(request, reply, t, { template_name: name }, { template_name: reason(err) });
      }
      return web.redirect(reply, `${t.base}/labels`, {
        kind: 'info',
        text: `The labels of ${name} have been added.`,
      });
    });
  };
}
