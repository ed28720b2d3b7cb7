// Writing the wiki from the web interface at Forgejo's URLs and field names (title, content,
// message): a new page at /wiki/?action=_new (or /wiki/_new), an edit at /wiki/{page}?action=_edit,
// a deletion posted to /wiki/{page}?action=_delete, all through the wiki service the API uses and
// for writers of the wiki only. Bad input comes back beside its field, kept. The edit form carries
// the page's last commit (`last_commit`, Anvil's own field): a save made from a stale version is
// refused with the text kept, where Forgejo would overwrite the other change; a form without it
// (Forgejo's) saves as Forgejo does.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, invalid } from '../errors.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type Web } from '../web/plugin.js';
import { TextArea } from '../web/settings.js';
import { titleToWebPath, webPathFromRequest, webPathToTitle } from './names.js';
import { actionOf, openWiki, WikiFrame, wikiHref, type OpenedWiki, type WikiWebDeps } from './web-common.js';

type Form = Record<string, string | undefined>;

function WikiForm(props: {
  page: PageContext;
  t: OpenedWiki;
  /** The page edited (its web path); undefined for a new page. */
  editing: string | undefined;
  values: Form;
  errors: Form;
}): VNode {
  const { values, errors, t, editing } = props;
  const action = editing ? wikiHref.edit(t.base, editing) : `${t.base}/wiki/?action=_new`;
  const cancel = editing ? wikiHref.page(t.base, editing) : `${t.base}/wiki`;
  return (
    <form method="post" action={action} class="card wiki-form">
      <h2>{editing ? `Editing ${webPathToTitle(editing)}` : 'New wiki page'}</h2>
      <CsrfField page={props.page} />
      {editing ? <input type="hidden" name="last_commit" value={values['last_commit'] ?? ''} /> : null}
      {errors['form'] ? <p class="flash error">{errors['form']}</p> : null}
      <Field label="Title" name="title" value={values['title'] ?? ''} required error={errors['title']} />
      <TextArea
        label="Content"
        name="content"
        rows={16}
        value={values['content']}
        error={errors['content']}
        hint="Markdown. Link to another page with [[Page Name]] or [[Text|Page Name]]."
      />
      <div class="wiki-preview-bar">
        <button type="button" class="button" data-preview="f-content" hidden>
          Preview
        </button>
      </div>
      <div class="markdown preview" id="f-content-preview" hidden aria-live="polite" />
      <Field
        label="Edit message (optional)"
        name="message"
        value={values['message'] ?? ''}
        error={errors['message']}
      />
      <div class="actions">
        <button type="submit" class="primary">
          Save page
        </button>
        <a class="button" href={cancel}>
          Cancel
        </a>
      </div>
    </form>
  );
}

export interface WikiForms {
  /** GET ?action=_new (or /wiki/_new). */
  newForm(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** GET /wiki/{page}?action=_edit. */
  editForm(request: FastifyRequest, reply: FastifyReply, raw: string): Promise<FastifyReply>;
  /** POST to the wiki: ?action=_new, ?action=_delete, or (otherwise) an edit of `raw`. */
  post(request: FastifyRequest, reply: FastifyReply, raw: string, action?: string): Promise<FastifyReply>;
}

export function wikiForms(deps: WikiWebDeps, web: Web): WikiForms {
  const { wiki } = deps;

  /** A writer of the wiki: anonymous visitors sign in first; readers get 403. */
  const writer = async (request: FastifyRequest) => {
    const user = web.requireUser(request);
    return { user, t: await openWiki(deps, request, 'write') };
  };

  const show = (
    request: FastifyRequest,
    reply: FastifyReply,
    t: OpenedWiki,
    editing: string | undefined,
    values: Form,
    errors: Form,
    status?: number,
  ) =>
    web.send(
      reply,
      <WikiFrame page={web.page(request)} t={t} title={editing ? 'Edit page' : 'New page'}>
        <WikiForm page={web.page(request)} t={t} editing={editing} values={values} errors={errors} />
      </WikiFrame>,
      status ?? (Object.keys(errors).length ? 422 : 200),
    );

  const valuesOf = (request: FastifyRequest): Form => {
    const body = request.body as Record<string, unknown> | undefined;
    const v: Form = {};
    for (const k of ['title', 'content', 'message', 'last_commit']) v[k] = formText(body?.[k]);
    return v;
  };

  /** The field a refusal of the service is about, and its text without the field's prefix. */
  const refusal = (err: unknown): Form | undefined => {
    if (!(err instanceof AppError) || !['bad_request', 'invalid', 'conflict'].includes(err.kind))
      return undefined;
    const text = err.message.replace(/^\[[^\]]*\]: /, '');
    if (err.kind === 'conflict') return { content: text, form: text };
    return { title: text };
  };

  return {
    async newForm(request, reply) {
      const { t } = await writer(request);
      const q = request.query as Record<string, unknown>;
      const title = typeof q['title'] === 'string' ? q['title'] : wiki.exists(t.repo) ? '' : 'Home';
      return show(request, reply, t, undefined, { title }, {});
    },

    async editForm(request, reply, raw) {
      const { t } = await writer(request);
      const page = await wiki.page(t.repo, raw || 'Home');
      if (!page.content) throw invalid('[Content]: this page is too large to edit here');
      return show(
        request,
        reply,
        t,
        page.webPath,
        {
          title: page.title,
          content: page.content.toString('utf8'),
          last_commit: page.lastCommit.oid,
        },
        {},
      );
    },

    async post(request, reply, raw, forced) {
      const action = forced ?? actionOf(request);
      const { user, t } = await writer(request);
      if (action === '_delete') {
        const web0 = webPathFromRequest(raw) || 'Home';
        await wiki.remove(user, t.repo, web0);
        return web.redirect(reply, `${t.base}/wiki/`, {
          kind: 'info',
          text: `The page ${webPathToTitle(web0)} has been deleted.`,
        });
      }
      const values = valuesOf(request);
      const editing = action === '_new' ? undefined : webPathFromRequest(raw) || 'Home';
      const errors: Form = {};
      const title = (values['title'] ?? '').trim();
      if (!title) errors['title'] = 'A page needs a title.';
      else if (titleToWebPath(title).length > 255) errors['title'] = 'The title is too long.';
      if (!(values['content'] ?? '').trim()) errors['content'] = 'A page needs some content.';
      if (Object.keys(errors).length) return show(request, reply, t, editing, values, errors);
      const content = Buffer.from(values['content'] ?? '', 'utf8');
      let saved: string;
      try {
        saved = editing
          ? await wiki.edit(user, t.repo, editing, {
              title,
              content,
              message: values['message'] || `Update ${title}`,
              base: values['last_commit'] || undefined,
            })
          : await wiki.create(user, t.repo, { title, content, message: values['message'] || `Add ${title}` });
      } catch (err) {
        const field = refusal(err);
        if (!field) throw err;
        return show(
          request,
          reply,
          t,
          editing,
          values,
          field,
          err instanceof AppError && err.kind === 'conflict' ? 409 : 422,
        );
      }
      return web.redirect(reply, wikiHref.page(t.base, saved));
    },
  };
}
