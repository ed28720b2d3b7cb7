// The routes of a set of project boards, the same for a repository (/{owner}/{repo}/projects) and
// for a user or organization (/{owner}/-/projects): the list (open or closed), a new project (with
// or without the basic kanban columns), editing, closing and deleting, a board with its columns and
// cards, columns added, renamed, coloured, reordered, made the default or deleted, issues put on and
// taken off, notes written, edited and deleted, and cards moved: by drag and drop (projects.js
// POSTs Forgejo's JSON to {id}/{columnID}/move) or, without a script, by each card's "Move to" form.
// Who may see and change the boards, and what their issue cards show, is the `open` callback's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, invalidField } from '../errors.js';
import { Layout } from '../web/layout.js';
import type { Web } from '../web/plugin.js';
import {
  Board,
  BoardHead,
  ProjectForm,
  ProjectList,
  type BoardError,
  type Form,
  type ShownCard,
} from './board.js';
import type { CardRef, ProjectScope, ProjectService } from './service.js';
import type { ProjectRow } from './tables.js';

/** The boards of one repository or owner as the viewer may see them. */
export interface Boards {
  scope: ProjectScope;
  /** The address of the projects list (…/projects). */
  base: string;
  /** For titles: "owner/repo" or "owner". */
  name: string;
  writer: boolean;
  header: VNode;
  /** The repositories an owner's board takes issues from (names), or null for a repository's. */
  repos(): Promise<string[] | null>;
  /** The issue an "add to board" form names (404 and 422 as invalid input), with its repository. */
  findIssue(form: Form): Promise<{ id: number; repo: { id: number; owner_id: number } }>;
  /** The cards the viewer may see, as the board shows them. */
  show(cards: Awaited<ReturnType<ProjectService['board']>>['cards']): Promise<ShownCard[]>;
}

export type OpenBoards = (request: FastifyRequest, need: 'read' | 'write') => Promise<Boards>;

type Params = Record<string, string>;
export const text = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
/** An invalid-input error as [field, message], else undefined. */
export const fieldOf = (err: unknown): [string, string] | undefined => {
  if (!(err instanceof AppError) || err.kind !== 'invalid') return undefined;
  const m = /^\[([^\]]*)\]: (.*)$/.exec(err.message);
  return m ? [m[1]!.toLowerCase(), `${m[1]} ${m[2]}`] : ['title', err.message];
};

const ISSUE_FIELDS = new Set(['index', 'repo', 'issue']);

/** The column a card is added to (a column's "+" posts it), or undefined for the default column. */
const columnOf = (body: unknown): number | undefined => {
  const v = text(body, 'column').trim();
  if (!v) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw invalidField('column', 'is not a column of this project');
  return Number(v);
};

export function boardRoutes(
  app: FastifyInstance,
  web: Web,
  prefix: string,
  projects: ProjectService,
  open: OpenBoards,
): void {
  const project = async (request: FastifyRequest, need: 'read' | 'write' = 'read') => {
    const b = await open(request, need);
    const p = await projects.requireProject(b.scope, (request.params as Params)['id'] ?? '');
    return { b, p };
  };
  const column = async (request: FastifyRequest) => {
    const { b, p } = await project(request, 'write');
    const c = await projects.requireColumn(p, (request.params as Params)['columnID'] ?? '');
    return { b, p, c };
  };
  const formPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    b: Boards,
    f: { action: string; heading: string; button: string; values: Form; errors: Form; isNew: boolean },
  ) =>
    web.send(
      reply,
      <Layout page={web.page(request)} title={`${f.heading} · ${b.name}`}>
        {b.header}
        <ProjectForm page={web.page(request)} {...f} />
      </Layout>,
      Object.keys(f.errors).length ? 422 : 200,
    );

  app.get(prefix, async (request, reply) => {
    const b = await open(request, 'read');
    const state = (request.query as Record<string, unknown>)['state'] === 'closed' ? 'closed' : 'open';
    const rows = await projects.list(b.scope, state);
    return web.send(
      reply,
      <Layout page={web.page(request)} title={`Projects · ${b.name}`}>
        {b.header}
        <ProjectList page={web.page(request)} base={b.base} state={state} rows={rows} writer={b.writer} />
      </Layout>,
    );
  });

  const newForm = { heading: 'New project', button: 'Create project', isNew: true };
  app.get(`${prefix}/new`, async (request, reply) => {
    const b = await open(request, 'write');
    return formPage(request, reply, b, { ...newForm, action: `${b.base}/new`, values: {}, errors: {} });
  });

  app.post(`${prefix}/new`, async (request, reply) => {
    const b = await open(request, 'write');
    const values = {
      title: text(request.body, 'title'),
      content: text(request.body, 'content'),
      template_type: text(request.body, 'template_type'),
    };
    try {
      const p = await projects.create(b.scope, request.web.user!.id, {
        title: values.title,
        description: values.content,
        template: values.template_type === '1' ? 'kanban' : 'none',
      });
      return web.redirect(reply, `${b.base}/${p.id}`, {
        kind: 'info',
        text: `The project ${p.title} has been created.`,
      });
    } catch (err) {
      const f = fieldOf(err);
      if (!f) throw err;
      return formPage(request, reply, b, {
        ...newForm,
        action: `${b.base}/new`,
        values,
        errors: { [f[0]]: f[1] },
      });
    }
  });

  const editForm = { heading: 'Edit project', button: 'Save project', isNew: false };
  app.get(`${prefix}/:id/edit`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return formPage(request, reply, b, {
      ...editForm,
      action: `${b.base}/${p.id}/edit`,
      values: { title: p.title, content: p.description },
      errors: {},
    });
  });

  app.post(`${prefix}/:id/edit`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    const values = { title: text(request.body, 'title'), content: text(request.body, 'content') };
    try {
      await projects.edit(p, { title: values.title, description: values.content });
    } catch (err) {
      const f = fieldOf(err);
      if (!f) throw err;
      return formPage(request, reply, b, {
        ...editForm,
        action: `${b.base}/${p.id}/edit`,
        values,
        errors: { [f[0]]: f[1] },
      });
    }
    return web.redirect(reply, `${b.base}/${p.id}`, { kind: 'info', text: 'The project has been updated.' });
  });

  for (const action of ['open', 'close'] as const) {
    app.post(`${prefix}/:id/${action}`, async (request, reply) => {
      const { b, p } = await project(request, 'write');
      await projects.edit(p, { state: action === 'open' ? 'open' : 'closed' });
      return web.redirect(reply, `${b.base}?state=${action === 'open' ? 'open' : 'closed'}`, {
        kind: 'info',
        text: `The project ${p.title} has been ${action === 'open' ? 'opened' : 'closed'}.`,
      });
    });
  }

  app.post(`${prefix}/:id/delete`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    await projects.delete(p);
    return web.redirect(reply, b.base, { kind: 'info', text: `The project ${p.title} has been deleted.` });
  });

  const boardPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    b: Boards,
    p: ProjectRow,
    error?: BoardError,
  ) => {
    const board = await projects.board(p);
    const cards = await b.show(board.cards);
    const page = web.page(request);
    const values = error ? ((request.body as Form | undefined) ?? {}) : {};
    return web.send(
      reply,
      <Layout page={page} title={`${p.title} · Projects · ${b.name}`} wide>
        {b.header}
        <BoardHead
          page={page}
          project={p}
          action={`${b.base}/${p.id}`}
          writer={b.writer}
          values={values}
          error={error}
        />
        <Board
          page={page}
          base={`${b.base}/${p.id}`}
          columns={board.columns}
          cards={cards}
          writer={b.writer}
          repos={b.writer ? await b.repos() : null}
          values={values}
          error={error}
        />
      </Layout>,
      error ? 422 : 200,
    );
  };

  app.get(`${prefix}/:id`, async (request, reply) => {
    const { b, p } = await project(request);
    return boardPage(request, reply, b, p);
  });

  /** Runs a change of the board: back to it, or the board again (422) with the message beside its form. */
  const attempt = async (
    request: FastifyRequest,
    reply: FastifyReply,
    b: Boards,
    p: ProjectRow,
    form: BoardError['form'],
    fn: () => Promise<unknown>,
  ) => {
    try {
      await fn();
    } catch (err) {
      const f = fieldOf(err);
      if (!f) throw err;
      const at = (form === 'issue' && !ISSUE_FIELDS.has(f[0])) || f[0] === 'column' ? 'top' : form;
      return boardPage(request, reply, b, p, { form: at, field: f[0], message: f[1] });
    }
    return web.redirect(reply, `${b.base}/${p.id}`);
  };

  // A new column (Forgejo: POST /projects/{id} with title and color).
  app.post(`${prefix}/:id`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'column', () =>
      projects.addColumn(p, { title: text(request.body, 'title'), color: text(request.body, 'color') }),
    );
  });

  app.post(`${prefix}/:id/issues`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'issue', async () => {
      const issue = await b.findIssue((request.body as Form | undefined) ?? {});
      await projects.addIssue(p, issue.id, issue.repo, columnOf(request.body));
    });
  });

  app.post(`${prefix}/:id/issues/remove`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'top', () =>
      projects.removeIssue(p, Number(text(request.body, 'issue_id'))),
    );
  });

  app.post(`${prefix}/:id/notes`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'note', () =>
      projects.addNote(p, request.web.user!.id, text(request.body, 'note'), columnOf(request.body)),
    );
  });
  app.post(`${prefix}/:id/notes/:note/edit`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'top', () =>
      projects.editNote(p, Number((request.params as Params)['note']), text(request.body, 'note')),
    );
  });
  app.post(`${prefix}/:id/notes/:note/delete`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'top', () =>
      projects.deleteNote(p, Number((request.params as Params)['note'])),
    );
  });

  const columnChange = (
    path: string,
    fn: (x: Awaited<ReturnType<typeof column>>, body: unknown) => Promise<void>,
  ) =>
    app.post(`${prefix}/:id/:columnID/${path}`, async (request, reply) => {
      const x = await column(request);
      return attempt(request, reply, x.b, x.p, 'top', () => fn(x, request.body));
    });
  columnChange('edit', ({ c }, body) =>
    projects.editColumn(c, { title: text(body, 'title'), color: text(body, 'color') }),
  );
  columnChange('default', ({ p, c }) => projects.setDefault(p, c));
  columnChange('delete', ({ p, c }) => projects.deleteColumn(p, c));
  columnChange('left', ({ p, c }) => projects.shiftColumn(p, c, -1));
  columnChange('right', ({ p, c }) => projects.shiftColumn(p, c, 1));

  // The no-script move: a card's "Move to" form (issue_id or note_id, column).
  app.post(`${prefix}/:id/move-card`, async (request, reply) => {
    const { b, p } = await project(request, 'write');
    return attempt(request, reply, b, p, 'top', async () => {
      const to = await projects.requireColumn(p, text(request.body, 'column')).catch(() => {
        throw invalidField('column', 'does not exist');
      });
      const note = text(request.body, 'note_id');
      const ref: CardRef = note
        ? { noteID: Number(note) }
        : { issueID: Number(text(request.body, 'issue_id')) };
      await projects.moveToEnd(p, to, ref);
    });
  });

  // Forgejo's move: {"issues":[{"issueID":1,"sorting":0}]}, answered with {"ok":true}; notes go in the
  // same list as {"noteID":…,"sorting":…}.
  app.post(`${prefix}/:id/:columnID/move`, async (request, reply) => {
    const { p, c } = await column(request);
    const list = (request.body as { issues?: unknown } | undefined)?.issues;
    const valid = (x: unknown): boolean => {
      if (typeof x !== 'object' || x === null) return false;
      const r = x as Record<string, unknown>;
      const id = r['issueID'] ?? r['noteID'];
      return (
        Number.isSafeInteger(id) &&
        Number.isSafeInteger(r['sorting']) &&
        (r['sorting'] as number) >= 0 &&
        (r['issueID'] === undefined || r['noteID'] === undefined)
      );
    };
    if (!Array.isArray(list) || list.length > 1000 || !list.every(valid)) {
      throw invalidField('issues', 'must be a list of {issueID, sorting} or {noteID, sorting}');
    }
    await projects.move(p, c, list as (CardRef & { sorting: number })[]);
    return reply.send({ ok: true });
  });
}
