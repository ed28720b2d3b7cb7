// The wiki's web pages at Forgejo's addresses: /{owner}/{repo}/wiki (the Home page), /wiki/{page}
// (a page by its web path, rendered by the project's markdown renderer with the _Sidebar beside
// it and the _Footer under it), /wiki/?action=_pages (or /wiki/_pages: every page),
// /wiki/{page}?action=_revision (the commits that changed a page) and /wiki/commit/{sha} (one of
// them, with its diff). ?action=_new, _edit and the posted forms are in forms.tsx. Read through
// the wiki service with the API's access check (404 when the wiki is turned off or out of reach).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { renderMarkdown } from '../markup/render.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { DiffModeSwitch, DiffView, diffMode, parseDiff } from '../web/diff.js';
import { CsrfField } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { wikiForms } from './forms.js';
import { REVISIONS_PER_PAGE, type WikiPage } from './service.js';
import { gitPathToWebPath, webPathFromRequest, webPathToTitle } from './names.js';
import {
  actionOf,
  openWiki,
  rawName,
  WikiFrame,
  WikiHead,
  wikiHref,
  type OpenedWiki,
  wikiLinks,
  type WikiWebDeps,
} from './web-common.js';

type Params = Record<string, string>;

export type WikiPagesDeps = WikiWebDeps;

const firstLine = (m: string) => m.split('\n')[0] ?? '';
const short = (oid: string) => oid.slice(0, 10);

export function wikiPages(deps: WikiPagesDeps): PageRoutes {
  return (app, web) => {
    const { wiki, rootUrl } = deps;
    const forms = wikiForms(deps, web);
    const pageSize = 50;

    const md = (content: Buffer, t: OpenedWiki) =>
      renderMarkdown(wikiLinks(content.toString('utf8'), t.base), {
        rootUrl,
        repo: { owner: t.owner.name, name: t.repo.name },
      });

    /** The wiki before its first page: Forgejo's start page, with the button for writers. */
    const start = (request: FastifyRequest, reply: FastifyReply, t: OpenedWiki) =>
      web.send(
        reply,
        <WikiFrame page={web.page(request)} t={t} title="Wiki">
          <section class="card wiki-start">
            <h2>Welcome to the wiki</h2>
            <p class="muted">
              This wiki has no pages yet. A wiki lets you write and share documentation about this project
              with your collaborators.
            </p>
            {t.writer ? (
              <a class="button primary" href={wikiHref.create(t.base, 'Home')}>
                Create the first page
              </a>
            ) : null}
          </section>
        </WikiFrame>,
      );

    /** A page, or the empty wiki's start page when there is no wiki yet and Home is asked for. */
    async function showPage(request: FastifyRequest, reply: FastifyReply, name: string) {
      const t = await openWiki(deps, request);
      let page: WikiPage;
      try {
        page = await wiki.page(t.repo, name);
      } catch (err) {
        if (name === 'Home' && err instanceof AppError && err.kind === 'not_found') {
          return start(request, reply, t);
        }
        throw err;
      }
      const special = page.webPath === '_Sidebar' || page.webPath === '_Footer';
      const sidebar = special ? null : page.sidebar;
      const footer = special ? null : page.footer;
      return web.send(
        reply,
        <WikiFrame page={web.page(request)} t={t} title={page.title}>
          <WikiHead
            t={t}
            title={page.title}
            sub={
              <>
                {page.lastCommit.author.name} edited this page <When unix={page.lastCommit.author.unix} /> ·{' '}
                <a href={wikiHref.history(t.base, page.webPath)}>
                  {page.commitCount} revision{page.commitCount === 1 ? '' : 's'}
                </a>
              </>
            }
            actions={
              t.writer ? (
                <>
                  <a class="button" href={wikiHref.edit(t.base, page.webPath)}>
                    Edit
                  </a>
                  <form
                    method="post"
                    action={wikiHref.remove(t.base, page.webPath)}
                    class="inline"
                    data-confirm={`Delete the page ${page.title}? Its history stays in the wiki's repository.`}
                  >
                    <CsrfField page={web.page(request)} />
                    <button type="submit" class="danger">
                      Delete
                    </button>
                  </form>
                </>
              ) : null
            }
          />
          <div class={sidebar ? 'wiki-body with-sidebar' : 'wiki-body'}>
            <div class="wiki-main">
              <article class="card wiki-page">
                {page.content ? (
                  <div class="markdown" dangerouslySetInnerHTML={{ __html: md(page.content, t) }} />
                ) : (
                  <p class="empty">This page is too large to show.</p>
                )}
              </article>
              {footer ? (
                <footer class="card wiki-footer">
                  <div class="markdown" dangerouslySetInnerHTML={{ __html: md(footer, t) }} />
                  {t.writer ? (
                    <a class="wiki-side-edit" href={wikiHref.edit(t.base, '_Footer')}>
                      Edit footer
                    </a>
                  ) : null}
                </footer>
              ) : null}
              {t.writer && !special && (!sidebar || !footer) ? (
                <p class="muted wiki-add-parts">
                  {!sidebar ? <a href={wikiHref.create(t.base, '_Sidebar')}>Add a sidebar</a> : null}
                  {!sidebar && !footer ? ' · ' : null}
                  {!footer ? <a href={wikiHref.create(t.base, '_Footer')}>Add a footer</a> : null}
                </p>
              ) : null}
            </div>
            {sidebar ? (
              <aside class="card wiki-sidebar" aria-label="Wiki sidebar">
                <div class="markdown" dangerouslySetInnerHTML={{ __html: md(sidebar, t) }} />
                {t.writer ? (
                  <a class="wiki-side-edit" href={wikiHref.edit(t.base, '_Sidebar')}>
                    Edit sidebar
                  </a>
                ) : null}
              </aside>
            ) : null}
          </div>
        </WikiFrame>,
      );
    }

    async function showPages(request: FastifyRequest, reply: FastifyReply) {
      const t = await openWiki(deps, request);
      const pageNo = pageNumber((request.query as Params)['page']);
      let rows: Awaited<ReturnType<typeof wiki.pages>>[0] = [];
      let total = 0;
      try {
        [rows, total] = await wiki.pages(t.repo, pageSize, (pageNo - 1) * pageSize);
      } catch (err) {
        if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
      }
      return web.send(
        reply,
        <WikiFrame page={web.page(request)} t={t} title="Pages">
          <WikiHead t={t} title="Pages" sub={`${total} page${total === 1 ? '' : 's'}`} />
          {rows.length === 0 ? <p class="empty">This wiki has no pages yet.</p> : null}
          <ul class="list wiki-pages card">
            {rows.map((p) => (
              <li>
                <a class="title grow" href={wikiHref.page(t.base, p.webPath)}>
                  {p.title}
                </a>
                {p.lastCommit ? (
                  <span class="muted">
                    Updated <When unix={p.lastCommit.committer.unix} />
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
          <Pager
            path={`${t.base}/wiki/`}
            query="action=_pages"
            page={pageNo}
            pageSize={pageSize}
            total={total}
          />
        </WikiFrame>,
      );
    }

    /** ?action=_revision: the commits that changed the page, newest first. */
    async function showRevisions(request: FastifyRequest, reply: FastifyReply, raw: string) {
      const t = await openWiki(deps, request);
      const web0 = webPathFromRequest(raw) || 'Home';
      const pageNo = pageNumber((request.query as Params)['page']);
      const [commits, total] = await wiki.revisions(t.repo, web0, pageNo);
      const title = webPathToTitle(web0);
      return web.send(
        reply,
        <WikiFrame page={web.page(request)} t={t} title={`History of ${title}`}>
          <WikiHead
            t={t}
            title={title}
            sub={
              <>
                <a href={wikiHref.page(t.base, web0)}>Back to the page</a> · {total} revision
                {total === 1 ? '' : 's'}
              </>
            }
          />
          <ul class="list wiki-revisions card">
            {commits.map((c) => (
              <li>
                <a class="sha" href={wikiHref.commit(t.base, c.oid)}>
                  {short(c.oid)}
                </a>
                <span class="grow">
                  <span class="title">{firstLine(c.message)}</span>
                  <span class="muted"> by {c.author.name}</span>
                </span>
                <span class="muted">
                  <When unix={c.author.unix} />
                </span>
              </li>
            ))}
          </ul>
          <Pager
            path={wikiHref.page(t.base, web0)}
            query="action=_revision"
            page={pageNo}
            pageSize={REVISIONS_PER_PAGE}
            total={total}
          />
        </WikiFrame>,
      );
    }

    /** /wiki/commit/{sha}: one revision of the wiki, with what it changed. */
    async function showCommit(request: FastifyRequest, reply: FastifyReply) {
      const t = await openWiki(deps, request);
      const sha = (request.params as Params)['sha'] ?? '';
      const { commit: c, diff } = await wiki.commit(t.repo, sha);
      const mode = diffMode(request.query);
      const body = c.message.split('\n').slice(1).join('\n').trim();
      const files = parseDiff(diff);
      const changed = files.map((f) => gitPathToWebPath(f.name)).filter((w): w is string => w !== undefined);
      return web.send(
        reply,
        <WikiFrame page={web.page(request)} t={t} title={firstLine(c.message)}>
          <WikiHead
            t={t}
            title={firstLine(c.message)}
            sub={
              <>
                Revision {short(c.oid)}
                {changed.map((w, i) => (
                  <>
                    {i ? ', ' : ' of '}
                    <a href={wikiHref.page(t.base, w)}>{webPathToTitle(w)}</a>
                  </>
                ))}
              </>
            }
          />
          <section class="card commit wiki-commit">
            {body ? <pre class="commit-body">{body}</pre> : null}
            <p class="muted">
              {c.author.name} edited <When unix={c.author.unix} /> · <code>{c.oid}</code>
              {c.parents.map((p) => (
                <>
                  {' '}
                  · parent <a href={wikiHref.commit(t.base, p)}>{short(p)}</a>
                </>
              ))}
            </p>
          </section>
          <DiffModeSwitch path={wikiHref.commit(t.base, c.oid)} mode={mode} />
          <DiffView files={files} opts={{ mode }} />
        </WikiFrame>,
      );
    }

    /** GET /wiki/{page}: the view ?action= names. */
    const view = (request: FastifyRequest, reply: FastifyReply, raw: string) => {
      switch (actionOf(request)) {
        case '_pages':
          return showPages(request, reply);
        case '_revision':
          return showRevisions(request, reply, raw);
        case '_new':
          return forms.newForm(request, reply);
        case '_edit':
          return forms.editForm(request, reply, raw);
        default:
          return showPage(request, reply, raw || 'Home');
      }
    };

    app.get('/:owner/:repo/wiki', (request, reply) => view(request, reply, ''));
    app.get('/:owner/:repo/wiki/', (request, reply) => view(request, reply, ''));
    app.get('/:owner/:repo/wiki/_pages', showPages);
    app.get('/:owner/:repo/wiki/_new', (request, reply) => forms.newForm(request, reply));
    app.get('/:owner/:repo/wiki/commit/:sha', showCommit);
    app.get('/:owner/:repo/wiki/:page', (request, reply) => view(request, reply, rawName(request)));

    app.post('/:owner/:repo/wiki', (request, reply) => forms.post(request, reply, ''));
    app.post('/:owner/:repo/wiki/', (request, reply) => forms.post(request, reply, ''));
    app.post('/:owner/:repo/wiki/_new', (request, reply) => forms.post(request, reply, '', '_new'));
    app.post('/:owner/:repo/wiki/:page', (request, reply) => forms.post(request, reply, rawName(request)));
  };
}
