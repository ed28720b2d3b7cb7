// The commit graph page (Forgejo's /{owner}/{repo}/graph): git's graph of every branch drawn as
// SVG, one small drawing per row (lanes in turn-taking colours), beside each commit's id, branches
// and tags, subject, author and time; `?page=` windows of 100 commits as Forgejo's.
import type { FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { GitDataService } from '../git/data-service.js';
import type { GraphRow, GraphService } from '../git/graph.js';
import { When } from '../web/components.js';
import { Layout, type PageContext } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { RepoHeader } from './code-pages.js';

export interface GraphPagesDeps {
  gitData: Pick<GitDataService, 'open'>;
  graph: Pick<GraphService, 'graph'>;
}

const PER_PAGE = 100;
/** A column's width and the heights of a commit's row and of a row of lines only, in pixels. */
const W = 8;
const COMMIT_H = 28;
const LINE_H = 12;
const LANES = 6;

const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** The SVG of one row of git's glyphs; `above` and `below` are the neighbouring rows' glyphs. */
function Glyphs(props: {
  glyphs: string;
  above: string;
  below: string;
  height: number;
  width: number;
}): VNode {
  const { glyphs, above, below, height: h } = props;
  const parts: VNode[] = [];
  const lane = (c: number) => `g${Math.floor(c / 2) % LANES}`;
  for (let c = 0; c < glyphs.length; c++) {
    const g = glyphs[c];
    const x = c * W + W / 2;
    if (g === '|') parts.push(<line class={lane(c)} x1={x} y1={0} x2={x} y2={h} />);
    else if (g === '/') parts.push(<line class={lane(c + 1)} x1={x + W} y1={0} x2={x - W} y2={h} />);
    else if (g === '\\') parts.push(<line class={lane(c - 1)} x1={x - W} y1={0} x2={x + W} y2={h} />);
    else if (g === '_') parts.push(<line class={lane(c)} x1={x - W / 2} y1={h} x2={x + W / 2} y2={h} />);
    else if (g === '-' || g === '.')
      parts.push(<line class={lane(c)} x1={x - W / 2} y1={h / 2} x2={x + W / 2} y2={h / 2} />);
    else if (g === '*') {
      // The lane goes on above and below only where the neighbouring rows draw it.
      const up = above[c] === '|' || above[c] === '*' || above[c - 1] === '\\' || above[c + 1] === '/';
      const down = below[c] === '|' || below[c] === '*' || below[c + 1] === '\\' || below[c - 1] === '/';
      if (up) parts.push(<line class={lane(c)} x1={x} y1={0} x2={x} y2={h / 2} />);
      if (down) parts.push(<line class={lane(c)} x1={x} y1={h / 2} x2={x} y2={h} />);
      parts.push(<circle class={lane(c)} cx={x} cy={h / 2} r={3.5} />);
    }
  }
  return (
    <svg
      width={props.width}
      height={h}
      viewBox={`0 0 ${props.width} ${h}`}
      aria-hidden="true"
      focusable="false"
    >
      {parts}
    </svg>
  );
}

function Graph(props: { base: string; rows: GraphRow[] }): VNode {
  const { rows, base } = props;
  const width = Math.max(W * 2, ...rows.map((r) => r.glyphs.length * W + W / 2));
  return (
    <table class="commit-graph">
      <tbody>
        {rows.map((r, i) => {
          const svg = (
            <Glyphs
              glyphs={r.glyphs}
              above={rows[i - 1]?.glyphs ?? ''}
              below={rows[i + 1]?.glyphs ?? ''}
              height={r.commit ? COMMIT_H : LINE_H}
              width={width}
            />
          );
          const c = r.commit;
          if (!c)
            return (
              <tr class="lines">
                <td class="graph">{svg}</td>
                <td colSpan={4} />
              </tr>
            );
          return (
            <tr>
              <td class="graph">{svg}</td>
              <td>
                <a class="sha" href={`${base}/commit/${c.oid}`}>
                  <code>{c.oid.slice(0, 10)}</code>
                </a>
              </td>
              <td class="subject">
                {c.refs.map((ref) => (
                  <span class="pill">{ref}</span>
                ))}{' '}
                <a href={`${base}/commit/${c.oid}`}>{c.subject}</a>
              </td>
              <td class="muted">{c.author}</td>
              <td class="muted">
                <When unix={c.when} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function graphPages(deps: GraphPagesDeps): PageRoutes {
  return (app, web) => {
    app.get('/:owner/:repo/graph', async (request: FastifyRequest, reply) => {
      const p = request.params as Record<string, string>;
      const t = await deps.gitData.open(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
      const q = request.query as Record<string, string | undefined>;
      const page = Math.min(Math.max(1, Number.parseInt(q['page'] ?? '1', 10) || 1), 10_000);
      const { rows, more } = await deps.graph.graph(t.repo, PER_PAGE, (page - 1) * PER_PAGE);
      const base = `/${enc(t.owner.name)}/${enc(t.repo.name)}`;
      return web.send(
        reply,
        <Layout
          page={web.page(request) as PageContext}
          title={`Commit graph · ${t.owner.name}/${t.repo.name}`}
          wide
        >
          <RepoHeader t={t} active="commits" />
          <h2>Commit graph</h2>
          {rows.length === 0 ? <p class="empty">No commits yet.</p> : <Graph base={base} rows={rows} />}
          {page > 1 || more ? (
            <nav class="pager" aria-label="Pages">
              {page > 1 ? <a href={`${base}/graph?page=${page - 1}`}>Newer</a> : null}
              {more ? <a href={`${base}/graph?page=${page + 1}`}>Older</a> : null}
            </nav>
          ) : null}
        </Layout>,
      );
    });
  };
}
