// The wiki's web pages at Forgejo's addresses (read-only): /{owner}/{repo}/wiki (the Home page),
// /wiki/{page} (a page by its web path, rendered by the project's markdown renderer with the
// sidebar and footer) and /wiki/?action=_pages (or /wiki/_pages: every page). Read through the
// wiki service with the API's access check (404 when the wiki is turned off or out of reach).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { AppError } from '../errors.js';
import { renderMarkdown } from '../markup/render.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { Layout } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { PageRoutes } from '../web/plugin.js';
import type { WikiPage, WikiService } from './service.js';

type Params = Record<string, string>;

/** The page name as the request spelled it (still escaped), as in the API. */
function rawName(request: FastifyRequest): string {
  const p = (request.raw.url ?? '').split('?')[0]!;
  return p.slice(p.lastIndexOf('/') + 1);
}

export interface WikiPagesDeps {
  wiki: WikiService;
  users: Pick<UserService, 'getById'>;
  rootUrl: string;
}

export function wikiPages(deps: WikiPagesDeps): PageRoutes {
  return (app, web) => {
    const { wiki, users, rootUrl } = deps;
    const pageSize = 50;

    async function open(request: FastifyRequest): Promise<{ repo: RepoRow; owner: UserRow; base: string }> {
      const p = request.params as Params;
      const { repo } = await wiki.requireWiki(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer);
      const owner = (await users.getById(repo.owner_id))!;
      return { repo, owner, base: `/${owner.name}/${repo.name}` };
    }

    const md = (content: Buffer, repo: RepoRow, owner: UserRow) =>
      renderMarkdown(content.toString('utf8'), { rootUrl, repo: { owner: owner.name, name: repo.name } });

    function Frame(props: {
      request: FastifyRequest;
      title: string;
      owner: UserRow;
      repo: RepoRow;
      base: string;
      children: ComponentChildren;
    }): VNode {
      return (
        <Layout
          page={web.page(props.request)}
          title={`${props.title} · ${props.owner.name}/${props.repo.name}`}
        >
          <RepoHeader t={{ owner: props.owner, repo: props.repo }} active="wiki" />
          <nav class="wiki-nav">
            <a href={`${props.base}/wiki`}>Home</a> · <a href={`${props.base}/wiki/?action=_pages`}>Pages</a>
          </nav>
          {props.children}
        </Layout>
      );
    }

    /** A page, or the empty wiki's notice when there is no wiki yet and Home is asked for. */
    async function showPage(request: FastifyRequest, reply: FastifyReply, name: string) {
      const { repo, owner, base } = await open(request);
      let page: WikiPage;
      try {
        page = await wiki.page(repo, name);
      } catch (err) {
        if (name === 'Home' && err instanceof AppError && err.kind === 'not_found') {
          return web.send(
            reply,
            <Frame request={request} title="Wiki" owner={owner} repo={repo} base={base}>
              <p class="empty">This wiki has no pages yet.</p>
            </Frame>,
          );
        }
        throw err;
      }
      return web.send(
        reply,
        <Frame request={request} title={page.title} owner={owner} repo={repo} base={base}>
          <article class="card wiki-page">
            <h2>{page.title}</h2>
            <p class="muted">
              {page.lastCommit.author.name} edited this page <When unix={page.lastCommit.author.unix} /> ·{' '}
              {page.commitCount} revision{page.commitCount === 1 ? '' : 's'}
            </p>
            {page.content ? (
              <div class="markdown" dangerouslySetInnerHTML={{ __html: md(page.content, repo, owner) }} />
            ) : (
              <p class="empty">This page is too large to show.</p>
            )}
            {page.footer ? (
              <footer class="markdown" dangerouslySetInnerHTML={{ __html: md(page.footer, repo, owner) }} />
            ) : null}
          </article>
          {page.sidebar ? (
            <aside
              class="card markdown"
              dangerouslySetInnerHTML={{ __html: md(page.sidebar, repo, owner) }}
            />
          ) : null}
        </Frame>,
      );
    }

    async function showPages(request: FastifyRequest, reply: FastifyReply) {
      const { repo, owner, base } = await open(request);
      const pageNo = pageNumber((request.query as Params)['page']);
      let rows: Awaited<ReturnType<typeof wiki.pages>>[0] = [];
      let total = 0;
      try {
        [rows, total] = await wiki.pages(repo, pageSize, (pageNo - 1) * pageSize);
      } catch (err) {
        if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
      }
      return web.send(
        reply,
        <Frame request={request} title="Wiki pages" owner={owner} repo={repo} base={base}>
          {rows.length === 0 ? <p class="empty">This wiki has no pages yet.</p> : null}
          <ul class="list wiki-pages">
            {rows.map((p) => (
              <li>
                <div>
                  <a class="title" href={`${base}/wiki/${p.webPath}`}>
                    {p.title}
                  </a>
                  {p.lastCommit ? (
                    <p class="muted">
                      Updated <When unix={p.lastCommit.committer.unix} />
                    </p>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
          <Pager
            path={`${base}/wiki/`}
            query="action=_pages"
            page={pageNo}
            pageSize={pageSize}
            total={total}
          />
        </Frame>,
      );
    }

    const home = async (request: FastifyRequest, reply: FastifyReply) =>
      (request.query as Params)['action'] === '_pages'
        ? showPages(request, reply)
        : showPage(request, reply, 'Home');

    app.get('/:owner/:repo/wiki', home);
    app.get('/:owner/:repo/wiki/', home);
    app.get('/:owner/:repo/wiki/_pages', showPages);
    app.get('/:owner/:repo/wiki/:page', (request, reply) => showPage(request, reply, rawName(request)));
  };
}
