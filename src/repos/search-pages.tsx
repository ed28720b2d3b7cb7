// A repository's code search page (`/{owner}/{repo}/search?q=`, Forgejo's address): the files of
// the default branch with lines containing the words, each line linked to its anchor in the file
// view and the words marked. Readers only (404 otherwise), as the code pages. And the site-wide
// `/explore/code` when [indexer] REPO_INDEXER_ENABLED is on (otherwise it leads to /explore/repos,
// as Forgejo's does): the same search over the repositories the viewer may read.
import type { VNode } from 'preact';
import { MAX_FILES, SITE_REPOS, type CodeHit, type CodeSearchService } from '../git/search.js';
import { Layout } from '../web/layout.js';
import { formText, type PageRoutes } from '../web/plugin.js';
import { ExploreTabs } from '../users/pages.js';
import { RepoHeader } from './code-pages.js';

export interface SearchPagesDeps {
  codeSearch: Pick<CodeSearchService, 'search' | 'searchSite'>;
  /** [indexer] REPO_INDEXER_ENABLED: /explore/code searches the site. */
  siteSearch: boolean;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A line with every case-insensitive occurrence of `query` marked (the text escaped by JSX). */
function Marked(props: { text: string; query: string }): VNode {
  const parts = props.text.split(new RegExp(`(${escapeRe(props.query)})`, 'i'));
  return <code>{parts.map((p, i) => (i % 2 === 1 ? <mark>{p}</mark> : p))}</code>;
}

/** The matching files of one repository, each line linked to the file view at its line. */
function Hits(props: { base: string; branch: string; hits: CodeHit[]; query: string }): VNode {
  const fileUrl = (path: string, line: number) =>
    `${props.base}/src/branch/${encodeURIComponent(props.branch)}/${path.split('/').map(encodeURIComponent).join('/')}#L${line}`;
  return (
    <>
      {props.hits.map((h) => (
        <section class="diff-file code-hit">
          <h3>
            <a href={fileUrl(h.path, h.lines[0]?.number ?? 1)}>{h.path}</a>
          </h3>
          <div class="code lines">
            {h.lines.map((l) => (
              <div class="l">
                <a href={fileUrl(h.path, l.number)}>{l.number}</a>
                <Marked text={l.text} query={props.query} />
              </div>
            ))}
          </div>
        </section>
      ))}
    </>
  );
}

export function searchPages(deps: SearchPagesDeps): PageRoutes {
  return (app, web) => {
    app.get('/explore/code', async (request, reply) => {
      if (!deps.siteSearch) return web.redirect(reply, '/explore/repos');
      const q = formText((request.query as Record<string, unknown>)['q'])
        .trim()
        .slice(0, 200);
      const page = web.page(request);
      const found = q ? await deps.codeSearch.searchSite(request.web.viewer, q) : undefined;
      return web.send(
        reply,
        <Layout page={page} title={q ? `Code: ${q}` : 'Explore code'} wide>
          <ExploreTabs active="code" page={page} />
          <form method="get" action="/explore/code" class="search" role="search">
            <input type="search" name="q" value={q} aria-label="Search code" placeholder="Search code…" />
            <button type="submit">Search</button>
          </form>
          {found === undefined ? (
            <p class="muted">
              Searches the default branches of the {SITE_REPOS} most recently updated repositories you can
              read.
            </p>
          ) : found.repos.length === 0 ? (
            <p class="empty">No code matches “{q}”.</p>
          ) : (
            <>
              <p class="muted">
                {found.repos.reduce((n, r) => n + r.hits.length, 0)} files in {found.repos.length} repositor
                {found.repos.length === 1 ? 'y' : 'ies'} with “{q}”
                {found.truncated ? ` (the first ${MAX_FILES} files shown)` : ''}
              </p>
              {found.repos.map((r) => (
                <section class="code-repo">
                  <h2>
                    <a href={`/${r.owner.name}/${r.repo.name}`}>
                      {r.owner.name}/{r.repo.name}
                    </a>
                  </h2>
                  <Hits base={`/${r.owner.name}/${r.repo.name}`} branch={r.branch} hits={r.hits} query={q} />
                </section>
              ))}
            </>
          )}
        </Layout>,
      );
    });

    app.get('/:owner/:repo/search', async (request, reply) => {
      const p = request.params as Record<string, string>;
      const q = formText((request.query as Record<string, unknown>)['q'])
        .trim()
        .slice(0, 200);
      const { t, branch, result } = await deps.codeSearch.search(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        q,
      );
      const base = `/${t.owner.name}/${t.repo.name}`;
      return web.send(
        reply,
        <Layout
          page={web.page(request)}
          title={`Search${q ? `: ${q}` : ''} · ${t.owner.name}/${t.repo.name}`}
          wide
        >
          <RepoHeader t={t} active="code" />
          <form method="get" action={`${base}/search`} class="search" role="search">
            <input
              type="search"
              name="q"
              value={q}
              aria-label="Search the code"
              placeholder="Search the code…"
            />
            <button type="submit">Search</button>
          </form>
          {result === undefined ? (
            q ? (
              <p class="empty">This repository is empty.</p>
            ) : null
          ) : result.hits.length === 0 ? (
            <p class="empty">
              No code matches “{q}” on {branch}.
            </p>
          ) : (
            <>
              <p class="muted">
                {result.truncated ? `The first ${MAX_FILES} files` : `${result.hits.length} file`}
                {result.truncated || result.hits.length === 1 ? '' : 's'} on <code>{branch}</code> with “{q}”
              </p>
              <Hits base={base} branch={branch} hits={result.hits} query={q} />
            </>
          )}
        </Layout>,
      );
    });
  };
}
