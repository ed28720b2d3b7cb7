// Milestones in the web interface: the repository's milestones (open or closed) with their
// progress and due dates; a milestone's page is the issue list filtered by it, as in Forgejo.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { openRepo, type OpenRepoDeps, type OpenedRepo } from '../issues/open-repo.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { DangerForm, TextArea } from '../web/settings.js';
import { RepoHeader } from '../repos/code-pages.js';
import { When } from '../web/components.js';
import { Layout } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { MilestoneInput, MilestoneService } from './service.js';
import { NO_DEADLINE, type MilestoneRow } from './tables.js';

export function MilestoneSummary(props: { m: MilestoneRow; base: string }): VNode {
  const { m } = props;
  const open = m.num_issues - m.num_closed_issues;
  return (
    <div>
      <a class="title" href={`${props.base}/milestone/${m.id}`}>
        {m.name}
      </a>
      <p class="muted">
        <progress max={100} value={m.completeness} aria-label={`${m.name}: ${m.completeness}% complete`} />{' '}
        {m.completeness}% · {open} open · {m.num_closed_issues} closed
        {m.deadline_unix ? (
          <>
            {' '}
            · due <When unix={m.deadline_unix} />
          </>
        ) : null}
      </p>
      {m.content ? <p>{m.content}</p> : null}
    </div>
  );
}

export interface MilestonePagesDeps extends OpenRepoDeps {
  milestones: Pick<MilestoneService, 'list' | 'requireMilestone' | 'create' | 'edit' | 'delete'>;
}

type Form = Record<string, string | undefined>;
const text = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
const day = (unix: number) =>
  unix > 0 && unix < NO_DEADLINE ? new Date(unix * 1000).toISOString().slice(0, 10) : '';

function MilestoneForm(props: {
  page: PageContext;
  action: string;
  heading: string;
  values: Form;
  errors: Form;
  button: string;
}): VNode {
  const { page, values, errors } = props;
  return (
    <form method="post" action={props.action} class="narrow">
      <h2>{props.heading}</h2>
      <CsrfField page={page} />
      <Field label="Title" name="title" value={values['title'] ?? ''} required error={errors['title']} />
      <TextArea label="Description" name="content" value={values['content']} error={errors['content']} />
      <Field
        label="Due date (optional)"
        name="deadline"
        type="date"
        value={values['deadline'] ?? ''}
        error={errors['deadline']}
      />
      <button type="submit" class="primary">
        {props.button}
      </button>
    </form>
  );
}

/** The form's values as the service's input, or the field that is wrong. */
function milestoneInput(v: Form): { input: MilestoneInput } | { errors: Form } {
  const title = (v['title'] ?? '').trim();
  if (!title) return { errors: { title: 'A milestone needs a title.' } };
  const deadline = (v['deadline'] ?? '').trim();
  let dueOn: number | null = null;
  if (deadline) {
    const ms = /^\d{4}-\d{2}-\d{2}$/.test(deadline) ? Date.parse(`${deadline}T23:59:59Z`) : NaN;
    if (!Number.isFinite(ms)) return { errors: { deadline: 'Use a date such as 2030-01-31.' } };
    dueOn = Math.floor(ms / 1000);
  }
  return { input: { title, description: v['content'] ?? '', dueOn } };
}

export function milestonePages(deps: MilestonePagesDeps): PageRoutes {
  return (app, web) => {
    const { milestones } = deps;
    const formOf = (body: unknown): Form => ({
      title: text(body, 'title'),
      content: text(body, 'content'),
      deadline: text(body, 'deadline'),
    });
    const formPage = (
      request: FastifyRequest,
      reply: FastifyReply,
      t: OpenedRepo,
      f: { action: string; heading: string; button: string; values: Form; errors: Form },
    ) =>
      web.send(
        reply,
        <Layout page={web.page(request)} title={`${f.heading} · ${t.owner.name}/${t.view.repo.name}`}>
          <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="issues" />
          <MilestoneForm page={web.page(request)} {...f} />
        </Layout>,
        Object.keys(f.errors).length ? 422 : 200,
      );
    const failed = (err: unknown): Form | undefined => {
      if (!(err instanceof AppError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) return undefined;
      const msg = err.message.replace(/^\[[^\]]*\]: /, '');
      return /description/i.test(err.message) ? { content: msg } : { title: msg };
    };
    const mine = async (request: FastifyRequest) => {
      const t = await openRepo(deps, request, 'repo.issues', 'write');
      const id = (request.params as Record<string, string>)['id'] ?? text(request.body, 'id');
      if (!/^\d+$/.test(id)) throw new AppError('not_found', 'milestone does not exist');
      return { t, m: await milestones.requireMilestone(t.view.repo, id) };
    };

    app.get('/:owner/:repo/milestones', async (request, reply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.issues');
      const state = (request.query as Record<string, unknown>)['state'] === 'closed' ? 'closed' : 'open';
      const [rows] = await milestones.list(view.repo, { state }, { page: 1, limit: 1000, offset: 0 });
      const writer = view.access.mode >= 2;
      const page = web.page(request);
      return web.send(
        reply,
        <Layout page={page} title={`Milestones · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <h2>Milestones</h2>
          {writer ? (
            <p>
              <a class="button primary" href={`${base}/milestones/new`}>
                New milestone
              </a>
            </p>
          ) : null}
          <nav class="tabs" aria-label="State">
            <a href={`${base}/milestones?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
              Open
            </a>
            <a
              href={`${base}/milestones?state=closed`}
              aria-current={state === 'closed' ? 'page' : undefined}
            >
              Closed
            </a>
          </nav>
          {rows.length === 0 ? <p class="empty">No milestones.</p> : null}
          <ul class="list">
            {rows.map((m) => (
              <li>
                <MilestoneSummary m={m} base={base} />
                {writer ? (
                  <div class="actions">
                    <a class="button" href={`${base}/milestone/${m.id}/edit`}>
                      Edit
                    </a>
                    <form
                      method="post"
                      action={`${base}/milestone/${m.id}/${m.is_closed ? 'open' : 'close'}`}
                    >
                      <CsrfField page={page} />
                      <button type="submit">{m.is_closed ? 'Open' : 'Close'}</button>
                    </form>
                    <DangerForm
                      page={page}
                      action={`${base}/milestones/delete`}
                      button="Delete"
                      confirm={`Delete the milestone ${m.name}? Its issues keep going without one.`}
                    >
                      <input type="hidden" name="id" value={String(m.id)} />
                    </DangerForm>
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
        </Layout>,
      );
    });

    app.get('/:owner/:repo/milestones/new', async (request, reply) => {
      const t = await openRepo(deps, request, 'repo.issues', 'write');
      return formPage(request, reply, t, {
        action: `${t.base}/milestones/new`,
        heading: 'New milestone',
        button: 'Create milestone',
        values: {},
        errors: {},
      });
    });

    app.post('/:owner/:repo/milestones/new', async (request, reply) => {
      const t = await openRepo(deps, request, 'repo.issues', 'write');
      const values = formOf(request.body);
      const again = (errors: Form) =>
        formPage(request, reply, t, {
          action: `${t.base}/milestones/new`,
          heading: 'New milestone',
          button: 'Create milestone',
          values,
          errors,
        });
      const parsed = milestoneInput(values);
      if ('errors' in parsed) return again(parsed.errors);
      try {
        await milestones.create(t.view.repo, parsed.input);
      } catch (err) {
        const errors = failed(err);
        if (!errors) throw err;
        return again(errors);
      }
      return web.redirect(reply, `${t.base}/milestones`, {
        kind: 'info',
        text: `The milestone ${parsed.input.title ?? ''} has been created.`,
      });
    });

    app.get('/:owner/:repo/milestone/:id/edit', async (request, reply) => {
      const { t, m } = await mine(request);
      return formPage(request, reply, t, {
        action: `${t.base}/milestone/${m.id}/edit`,
        heading: 'Edit milestone',
        button: 'Save milestone',
        values: { title: m.name, content: m.content, deadline: day(m.deadline_unix) },
        errors: {},
      });
    });

    app.post('/:owner/:repo/milestone/:id/edit', async (request, reply) => {
      const { t, m } = await mine(request);
      const values = formOf(request.body);
      const again = (errors: Form) =>
        formPage(request, reply, t, {
          action: `${t.base}/milestone/${m.id}/edit`,
          heading: 'Edit milestone',
          button: 'Save milestone',
          values,
          errors,
        });
      const parsed = milestoneInput(values);
      if ('errors' in parsed) return again(parsed.errors);
      try {
        await milestones.edit(m, parsed.input);
      } catch (err) {
        const errors = failed(err);
        if (!errors) throw err;
        return again(errors);
      }
      return web.redirect(reply, `${t.base}/milestones`, {
        kind: 'info',
        text: `The milestone ${parsed.input.title ?? ''} has been updated.`,
      });
    });

    for (const action of ['open', 'close'] as const) {
      app.post(`/:owner/:repo/milestone/:id/${action}`, async (request, reply) => {
        const { t, m } = await mine(request);
        await milestones.edit(m, { state: action === 'open' ? 'open' : 'closed' });
        return web.redirect(reply, `${t.base}/milestones?state=${action === 'open' ? 'open' : 'closed'}`, {
          kind: 'info',
          text: `The milestone ${m.name} has been ${action === 'open' ? 'opened' : 'closed'}.`,
        });
      });
    }

    app.post('/:owner/:repo/milestones/delete', async (request, reply) => {
      const { t, m } = await mine(request);
      await milestones.delete(m);
      return web.redirect(reply, `${t.base}/milestones`, {
        kind: 'info',
        text: `The milestone ${m.name} has been deleted.`,
      });
    });

    app.get('/:owner/:repo/milestone/:id', async (request, reply) => {
      const { view, base } = await openRepo(deps, request, 'repo.issues');
      const m = await milestones.requireMilestone(
        view.repo,
        (request.params as Record<string, string>)['id'] ?? '',
      );
      return web.redirect(reply, `${base}/issues?milestone=${m.id}&state=${m.is_closed ? 'closed' : 'open'}`);
    });
  };
}
