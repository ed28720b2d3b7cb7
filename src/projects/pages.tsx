// Project boards in the web interface, at Forgejo's URLs: a repository's projects (open or
// closed), a new project (with or without the basic kanban columns), a project's board with its
// columns and cards (issues and pull requests), columns added, renamed, coloured, reordered, made
// the default or deleted, and cards moved: by drag and drop (projects.js POSTs Forgejo's JSON to
// /projects/{id}/{columnID}/move) or, without a script, by each card's "Move to" form.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, invalidField } from '../errors.js';
import { openRepo, type OpenRepoDeps, type OpenedRepo } from '../issues/open-repo.js';
import type { IssueService } from '../issues/service.js';
import { RepoHeader } from '../repos/code-pages.js';
import { Icon } from '../web/icons.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { DangerForm, TextArea } from '../web/settings.js';
import type { ProjectService } from './service.js';
import type { ColumnRow, ProjectRow } from './tables.js';

export interface ProjectPagesDeps extends OpenRepoDeps {
  issues: Pick<IssueService, 'requireIssue'>;
  projects: ProjectService;
}

type Form = Record<string, string | undefined>;
const text = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
const fieldOf = (err: unknown): [string, string] | undefined => {
  if (!(err instanceof AppError) || err.kind !== 'invalid') return undefined;
  const m = /^\[([^\]]*)\]: (.*)$/.exec(err.message);
  return m ? [m[1]!.toLowerCase(), `${m[1]} ${m[2]}`] : ['title', err.message];
};

function ProjectForm(props: {
  page: PageContext;
  action: string;
  heading: string;
  button: string;
  values: Form;
  errors: Form;
  isNew: boolean;
}): VNode {
  const { values, errors } = props;
  return (
    <form method="post" action={props.action} class="narrow">
      <h2>{props.heading}</h2>
      <CsrfField page={props.page} />
      <Field label="Title" name="title" value={values['title'] ?? ''} required error={errors['title']} />
      <TextArea label="Description" name="content" value={values['content']} error={errors['content']} />
      {props.isNew ? (
        <div class="field">
          <label for="f-template_type">Template</label>
          <select id="f-template_type" name="template_type">
            <option value="0" selected={values['template_type'] !== '1'}>
              None
            </option>
            <option value="1" selected={values['template_type'] === '1'}>
              Basic kanban (To Do, In Progress, Done)
            </option>
          </select>
        </div>
      ) : null}
      <button type="submit" class="primary">
        {props.button}
      </button>
    </form>
  );
}

function Dot(props: { color: string }): VNode | null {
  if (!props.color) return null;
  return (
    <svg class="column-dot" width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">
      <circle cx="6" cy="6" r="6" fill={props.color} />
    </svg>
  );
}

export function projectPages(deps: ProjectPagesDeps): PageRoutes {
  return (app, web) => {
    const { projects } = deps;
    const open = (request: FastifyRequest, need: 'read' | 'write' = 'read') =>
      openRepo(deps, request, 'repo.projects', need).then((t) => {
        if (!t.view.repo.has_projects)
          throw new AppError('not_found', 'the projects of this repository are turned off');
        return t;
      });
    const project = async (request: FastifyRequest, need: 'read' | 'write' = 'read') => {
      const t = await open(request, need);
      const p = await projects.requireProject(
        t.view.repo,
        (request.params as Record<string, string>)['id'] ?? '',
      );
      return { t, p };
    };
    const column = async (request: FastifyRequest) => {
      const { t, p } = await project(request, 'write');
      const c = await projects.requireColumn(p, (request.params as Record<string, string>)['columnID'] ?? '');
      return { t, p, c };
    };
    const header = (t: OpenedRepo) => (
      <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="projects" />
    );
    const formPage = (
      request: FastifyRequest,
      reply: FastifyReply,
      t: OpenedRepo,
      f: { action: string; heading: string; button: string; values: Form; errors: Form; isNew: boolean },
    ) =>
      web.send(
        reply,
        <Layout page={web.page(request)} title={`${f.heading} · ${t.owner.name}/${t.view.repo.name}`}>
          {header(t)}
          <ProjectForm page={web.page(request)} {...f} />
        </Layout>,
        Object.keys(f.errors).length ? 422 : 200,
      );

    app.get('/:owner/:repo/projects', async (request, reply) => {
      const t = await open(request);
      const state = (request.query as Record<string, unknown>)['state'] === 'closed' ? 'closed' : 'open';
      const rows = await projects.list(t.view.repo, state);
      const writer = t.view.access.mode >= 2;
      const page = web.page(request);
      return web.send(
        reply,
        <Layout page={page} title={`Projects · ${t.owner.name}/${t.view.repo.name}`}>
          {header(t)}
          <div class="list-head">
            <h2>Projects</h2>
            {writer ? (
              <a class="button primary" href={`${t.base}/projects/new`}>
                New project
              </a>
            ) : null}
          </div>
          <nav class="tabs" aria-label="State">
            <a href={`${t.base}/projects?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
              Open
            </a>
            <a
              href={`${t.base}/projects?state=closed`}
              aria-current={state === 'closed' ? 'page' : undefined}
            >
              Closed
            </a>
          </nav>
          {rows.length === 0 ? <p class="empty">No {state} projects.</p> : null}
          <ul class="list">
            {rows.map((p) => (
              <li>
                <a class="title" href={`${t.base}/projects/${p.id}`}>
                  {p.title}
                </a>
                {p.description ? <p class="muted">{p.description}</p> : null}
                {writer ? (
                  <div class="actions">
                    <a class="button" href={`${t.base}/projects/${p.id}/edit`}>
                      Edit
                    </a>
                    <form
                      method="post"
                      action={`${t.base}/projects/${p.id}/${p.is_closed ? 'open' : 'close'}`}
                    >
                      <CsrfField page={page} />
                      <button type="submit">{p.is_closed ? 'Open' : 'Close'}</button>
                    </form>
                    <DangerForm
                      page={page}
                      action={`${t.base}/projects/${p.id}/delete`}
                      button="Delete"
                      confirm={`Delete the project ${p.title}? Its issues stay, off the board.`}
                    />
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
        </Layout>,
      );
    });

    const newForm = { heading: 'New project', button: 'Create project', isNew: true };
    app.get('/:owner/:repo/projects/new', async (request, reply) => {
      const t = await open(request, 'write');
      return formPage(request, reply, t, {
        ...newForm,
        action: `${t.base}/projects/new`,
        values: {},
        errors: {},
      });
    });

    app.post('/:owner/:repo/projects/new', async (request, reply) => {
      const t = await open(request, 'write');
      const values = {
        title: text(request.body, 'title'),
        content: text(request.body, 'content'),
        template_type: text(request.body, 'template_type'),
      };
      try {
        const p = await projects.create(t.view.repo, request.web.user!.id, {
          title: values.title,
          description: values.content,
          template: values.template_type === '1' ? 'kanban' : 'none',
        });
        return web.redirect(reply, `${t.base}/projects/${p.id}`, {
          kind: 'info',
          text: `The project ${p.title} has been created.`,
        });
      } catch (err) {
        const f = fieldOf(err);
        if (!f) throw err;
        return formPage(request, reply, t, {
          ...newForm,
          action: `${t.base}/projects/new`,
          values,
          errors: { [f[0]]: f[1] },
        });
      }
    });

    const editForm = { heading: 'Edit project', button: 'Save project', isNew: false };
    app.get('/:owner/:repo/projects/:id/edit', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      return formPage(request, reply, t, {
        ...editForm,
        action: `${t.base}/projects/${p.id}/edit`,
        values: { title: p.title, content: p.description },
        errors: {},
      });
    });

    app.post('/:owner/:repo/projects/:id/edit', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      const values = { title: text(request.body, 'title'), content: text(request.body, 'content') };
      try {
        await projects.edit(p, { title: values.title, description: values.content });
      } catch (err) {
        const f = fieldOf(err);
        if (!f) throw err;
        return formPage(request, reply, t, {
          ...editForm,
          action: `${t.base}/projects/${p.id}/edit`,
          values,
          errors: { [f[0]]: f[1] },
        });
      }
      return web.redirect(reply, `${t.base}/projects/${p.id}`, {
        kind: 'info',
        text: 'The project has been updated.',
      });
    });

    for (const action of ['open', 'close'] as const) {
      app.post(`/:owner/:repo/projects/:id/${action}`, async (request, reply) => {
        const { t, p } = await project(request, 'write');
        await projects.edit(p, { state: action === 'open' ? 'open' : 'closed' });
        return web.redirect(reply, `${t.base}/projects?state=${action === 'open' ? 'open' : 'closed'}`, {
          kind: 'info',
          text: `The project ${p.title} has been ${action === 'open' ? 'opened' : 'closed'}.`,
        });
      });
    }

    app.post('/:owner/:repo/projects/:id/delete', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      await projects.delete(p);
      return web.redirect(reply, `${t.base}/projects`, {
        kind: 'info',
        text: `The project ${p.title} has been deleted.`,
      });
    });

    app.get('/:owner/:repo/projects/:id', async (request, reply) => {
      const { t, p } = await project(request);
      const { columns, cards } = await projects.board(p);
      const writer = t.view.access.mode >= 2;
      const page = web.page(request);
      const q = request.query as Record<string, unknown>;
      const colError = typeof q['error'] === 'string' ? q['error'] : undefined;
      return web.send(
        reply,
        <Layout page={page} title={`${p.title} · Projects · ${t.owner.name}/${t.view.repo.name}`}>
          {header(t)}
          <div class="list-head">
            <h2>
              {p.title} {p.is_closed ? <span class="pill">Closed</span> : null}
            </h2>
            {writer ? (
              <a class="button" href={`${t.base}/projects/${p.id}/edit`}>
                Edit
              </a>
            ) : null}
          </div>
          {p.description ? <p class="muted">{p.description}</p> : null}
          {writer ? (
            <>
              <form method="post" action={`${t.base}/projects/${p.id}`} class="inline-form">
                <CsrfField page={page} />
                <label for="new-column">New column</label>
                <input id="new-column" name="title" required maxLength={255} />
                <label for="new-column-color">Color</label>
                <input id="new-column-color" name="color" type="color" value="#4183c4" />
                <button type="submit">Add column</button>
              </form>
              <form method="post" action={`${t.base}/projects/${p.id}/issues`} class="inline-form">
                <CsrfField page={page} />
                <label for="add-issue">Add issue or pull request #</label>
                <input id="add-issue" name="index" inputMode="numeric" pattern="[0-9]+" required size={6} />
                <button type="submit">Add to board</button>
              </form>
              {colError ? (
                <p class="error" role="alert">
                  {colError}
                </p>
              ) : null}
            </>
          ) : null}
          {columns.length === 0 ? <p class="empty">This project has no columns yet.</p> : null}
          <div class="board" data-board={writer ? `${t.base}/projects/${p.id}` : undefined}>
            {columns.map((c, ci) => (
              <BoardColumn
                page={page}
                base={`${t.base}/projects/${p.id}`}
                c={c}
                first={ci === 0}
                last={ci === columns.length - 1}
                columns={columns}
                cards={cards.filter((x) => x.project_board_id === c.id)}
                repoBase={t.base}
                writer={writer}
              />
            ))}
          </div>
          {writer ? <script src={page.asset('projects.js')} defer /> : null}
        </Layout>,
      );
    });

    const back = (reply: FastifyReply, t: OpenedRepo, p: ProjectRow, err?: unknown) => {
      if (err !== undefined) {
        const f = fieldOf(err);
        if (!f) throw err;
        return web.redirect(reply, `${t.base}/projects/${p.id}?error=${encodeURIComponent(f[1])}`);
      }
      return web.redirect(reply, `${t.base}/projects/${p.id}`);
    };
    const attempt = async (reply: FastifyReply, t: OpenedRepo, p: ProjectRow, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        return back(reply, t, p, err);
      }
      return back(reply, t, p);
    };

    // A new column (Forgejo: POST /projects/{id} with title and color).
    app.post('/:owner/:repo/projects/:id', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      return attempt(reply, t, p, () =>
        projects.addColumn(p, { title: text(request.body, 'title'), color: text(request.body, 'color') }),
      );
    });

    app.post('/:owner/:repo/projects/:id/issues', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      return attempt(reply, t, p, async () => {
        const index = text(request.body, 'index').replace(/^#/, '');
        if (!/^\d+$/.test(index)) throw invalidField('index', 'must be an issue number');
        const issue = await deps.issues.requireIssue(t.view.repo, Number(index)).catch(() => {
          throw invalidField('index', `#${index} does not exist`);
        });
        await projects.setIssue(p, issue, true);
      });
    });

    app.post('/:owner/:repo/projects/:id/issues/remove', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      return attempt(reply, t, p, () =>
        projects.setIssue(p, { id: Number(text(request.body, 'issue_id')), repo_id: p.repo_id }, false),
      );
    });

    app.post('/:owner/:repo/projects/:id/:columnID/edit', async (request, reply) => {
      const { t, p, c } = await column(request);
      return attempt(reply, t, p, () =>
        projects.editColumn(c, { title: text(request.body, 'title'), color: text(request.body, 'color') }),
      );
    });
    app.post('/:owner/:repo/projects/:id/:columnID/default', async (request, reply) => {
      const { t, p, c } = await column(request);
      return attempt(reply, t, p, () => projects.setDefault(p, c));
    });
    app.post('/:owner/:repo/projects/:id/:columnID/delete', async (request, reply) => {
      const { t, p, c } = await column(request);
      return attempt(reply, t, p, () => projects.deleteColumn(p, c));
    });
    for (const [dir, by] of [
      ['left', -1],
      ['right', 1],
    ] as const) {
      app.post(`/:owner/:repo/projects/:id/:columnID/${dir}`, async (request, reply) => {
        const { t, p, c } = await column(request);
        return attempt(reply, t, p, () => projects.shiftColumn(p, c, by));
      });
    }

    // The no-script move: a card's "Move to" form (issue_id, column).
    app.post('/:owner/:repo/projects/:id/move-card', async (request, reply) => {
      const { t, p } = await project(request, 'write');
      return attempt(reply, t, p, async () => {
        const to = await projects.requireColumn(p, text(request.body, 'column')).catch(() => {
          throw invalidField('column', 'does not exist');
        });
        await projects.moveToEnd(p, to, Number(text(request.body, 'issue_id')));
      });
    });

    // Forgejo's move: {"issues":[{"issueID":1,"sorting":0}]}, answered with {"ok":true}.
    app.post('/:owner/:repo/projects/:id/:columnID/move', async (request, reply) => {
      const { p, c } = await column(request);
      const body = request.body as { issues?: unknown } | undefined;
      const list = body?.issues;
      if (
        !Array.isArray(list) ||
        list.length > 1000 ||
        !list.every(
          (x: unknown) =>
            typeof x === 'object' &&
            x !== null &&
            Number.isSafeInteger((x as Record<string, unknown>)['issueID']) &&
            Number.isSafeInteger((x as Record<string, unknown>)['sorting']) &&
            ((x as Record<string, number>)['sorting'] ?? -1) >= 0,
        )
      ) {
        throw invalidField('issues', 'must be a list of {issueID, sorting}');
      }
      await projects.move(p, c, list as { issueID: number; sorting: number }[]);
      return reply.send({ ok: true });
    });
  };
}

type Card = Awaited<ReturnType<ProjectService['board']>>['cards'][number];

function BoardColumn(props: {
  page: PageContext;
  base: string;
  repoBase: string;
  c: ColumnRow;
  first: boolean;
  last: boolean;
  columns: ColumnRow[];
  cards: Card[];
  writer: boolean;
}): VNode {
  const { c, page, base } = props;
  return (
    <section class="board-column" data-column={String(c.id)} aria-labelledby={`column-${c.id}`}>
      <header>
        <h3 id={`column-${c.id}`}>
          <Dot color={c.color} /> {c.title} <span class="count">{props.cards.length}</span>
          {c.is_default ? <span class="pill">Default</span> : null}
        </h3>
        {props.writer ? (
          <details class="column-menu">
            <summary>Column settings</summary>
            <form method="post" action={`${base}/${c.id}/edit`}>
              <CsrfField page={page} />
              <label for={`title-${c.id}`}>Title</label>
              <input id={`title-${c.id}`} name="title" value={c.title} required maxLength={255} />
              <label for={`color-${c.id}`}>Color</label>
              <input id={`color-${c.id}`} name="color" type="color" value={c.color || '#4183c4'} />
              <button type="submit">Save</button>
            </form>
            <div class="actions">
              {props.first ? null : (
                <form method="post" action={`${base}/${c.id}/left`}>
                  <CsrfField page={page} />
                  <button type="submit">Move left</button>
                </form>
              )}
              {props.last ? null : (
                <form method="post" action={`${base}/${c.id}/right`}>
                  <CsrfField page={page} />
                  <button type="submit">Move right</button>
                </form>
              )}
              {c.is_default ? null : (
                <form method="post" action={`${base}/${c.id}/default`}>
                  <CsrfField page={page} />
                  <button type="submit">Set as default</button>
                </form>
              )}
              <DangerForm
                page={page}
                action={`${base}/${c.id}/delete`}
                button="Delete column"
                confirm={`Delete the column ${c.title}? Its cards move to the default column.`}
              />
            </div>
          </details>
        ) : null}
      </header>
      <ol class="board-cards" data-move={props.writer ? `${base}/${c.id}/move` : undefined}>
        {props.cards.map((card) => (
          <li
            class="board-card"
            data-issue={String(card.issue_id)}
            draggable={props.writer ? true : undefined}
          >
            <Icon name={card.is_pull ? 'pull' : card.is_closed ? 'issue-closed' : 'issue-open'} />{' '}
            <a href={`${props.repoBase}/${card.is_pull ? 'pulls' : 'issues'}/${card.index}`}>{card.title}</a>{' '}
            <span class="muted">#{card.index}</span>
            {props.writer ? (
              <form method="post" action={`${base}/move-card`} class="card-move">
                <CsrfField page={page} />
                <input type="hidden" name="issue_id" value={String(card.issue_id)} />
                <label for={`move-${card.issue_id}`}>Move to</label>
                <select id={`move-${card.issue_id}`} name="column">
                  {props.columns.map((o) => (
                    <option value={String(o.id)} selected={o.id === c.id}>
                      {o.title}
                    </option>
                  ))}
                </select>
                <button type="submit">Move</button>
              </form>
            ) : null}
          </li>
        ))}
      </ol>
    </section>
  );
}
