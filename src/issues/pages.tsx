// The web pages of issues and pull requests (reading): the lists (open or closed, with a search)
// and one issue or pull request with its text and comments rendered. Read through the issues
// service with the repository's own access check, so what is hidden from the API is hidden here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { notFound } from '../errors.js';
import { renderMarkdown } from '../markup/render.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { UserRow } from '../users/store.js';
import { Layout } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { Web } from '../web/plugin.js';

type Params = Record<string, string>;

function Author(props: { users: Map<number, UserRow>; id: number | null }): VNode {
  const u = props.id !== null ? props.users.get(props.id) : undefined;
  return u ? <a href={`/${u.name}`}>{u.name}</a> : <span>Ghost</span>;
}

export function issuePages(app: FastifyInstance, web: Web): void {
  const { ctx } = web;
  const { repos, issues, users } = ctx;
  const pageSize = ctx.config.api.defaultPagingNum;

  const open = async (request: FastifyRequest, pulls: boolean) => {
    const p = request.params as Params;
    const view = await repos.requireRepo(
      p['owner'] ?? '',
      p['repo'] ?? '',
      request.web.viewer,
      'read',
      pulls ? 'repo.pulls' : 'repo.issues',
    );
    const owner = (await users.getById(view.repo.owner_id))!;
    return { view, owner, base: `/${owner.name}/${view.repo.name}` };
  };

  for (const pulls of [false, true]) {
    const kind = pulls ? 'pulls' : 'issues';
    const noun = pulls ? 'Pull requests' : 'Issues';

    app.get(`/:owner/:repo/${kind}`, async (request, reply) => {
      const { view, owner, base } = await open(request, pulls);
      const enabled = pulls ? view.repo.has_pull_requests : view.repo.has_issues;
      if (!enabled) throw notFound(`${noun} are turned off in this repository`);
      const q = request.query as Params;
      const state = q['state'] === 'closed' ? 'closed' : 'open';
      const keyword = (q['q'] ?? '').trim();
      const pageNo = pageNumber(q['page']);
      const [rows, total] = await issues.list(
        view.repo,
        { state, type: pulls ? 'pulls' : 'issues', q: keyword || undefined },
        { page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize },
      );
      const posters = await users.getByIds([
        ...new Set(rows.map((r) => r.poster_id).filter((id): id is number => id !== null)),
      ]);
      const query = new URLSearchParams({ state, ...(keyword ? { q: keyword } : {}) }).toString();
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`${noun} · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo }} active={kind} />
          <nav class="tabs" aria-label="State">
            <a href={`${base}/${kind}?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
              Open
            </a>
            <a href={`${base}/${kind}?state=closed`} aria-current={state === 'closed' ? 'page' : undefined}>
              Closed
            </a>
          </nav>
          <form method="get" class="search" role="search">
            <input type="hidden" name="state" value={state} />
            <input
              type="search"
              name="q"
              value={keyword}
              aria-label={`Search ${noun.toLowerCase()}`}
              placeholder="Search…"
            />
            <button type="submit">Search</button>
          </form>
          {rows.length === 0 ? <p class="empty">Nothing here.</p> : null}
          <ul class="list">
            {rows.map((i) => (
              <li>
                <div>
                  <a class="title" href={`${base}/${kind}/${i.index}`}>
                    {i.title}
                  </a>
                  <p class="muted">
                    #{i.index} opened <When unix={i.created_unix} /> by{' '}
                    <Author users={posters} id={i.poster_id} /> · {i.num_comments} comments
                  </p>
                </div>
              </li>
            ))}
          </ul>
          <Pager path={`${base}/${kind}`} page={pageNo} pageSize={pageSize} total={total} query={query} />
        </Layout>,
      );
    });

    app.get(`/:owner/:repo/${kind}/:index`, async (request, reply) => {
      const { view, owner, base } = await open(request, pulls);
      const index = Number((request.params as Params)['index']);
      const issue = await issues.requireVisibleIssue(view, index);
      // An issue's number under /pulls (or the reverse) goes to where it lives, as Forgejo does.
      if (Boolean(issue.is_pull) !== pulls) {
        return web.redirect(reply, `${base}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`);
      }
      const [comments] = await issues.listComments(issue, {});
      const people = await users.getByIds(
        [issue.poster_id, ...comments.map((c) => c.poster_id)].filter((id): id is number => id !== null),
      );
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`${issue.title} · ${noun} · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo }} active={kind} />
          <h2 class="issue-title">
            {issue.title} <span class="muted">#{issue.index}</span>
          </h2>
          <p>
            <span class={`pill state ${issue.is_closed ? 'closed' : 'open'}`}>
              {issue.is_closed ? 'Closed' : 'Open'}
            </span>{' '}
            <Author users={people} id={issue.poster_id} /> opened this <When unix={issue.created_unix} />
          </p>
          <article class="card comment">
            <div
              class="markdown"
              dangerouslySetInnerHTML={{ __html: renderMarkdown(issue.content || '*No description.*') }}
            />
          </article>
          {comments.map((c) => (
            <article class="card comment" id={`issuecomment-${c.id}`}>
              <p class="muted">
                <Author users={people} id={c.poster_id} /> commented <When unix={c.created_unix} />
              </p>
              <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(c.content) }} />
            </article>
          ))}
        </Layout>,
      );
    });
  }
}
