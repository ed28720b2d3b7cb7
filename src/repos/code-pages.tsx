// The web pages inside a repository for its code: the repository home (files of the default
// branch, README, clone URL), directories and files at a branch, tag or commit (/src/...), raw
// files and LFS media (/raw/..., /media/...), archives (/archive/{ref}.zip|.tar.gz), history
// (/commits/...), a commit with its diff (/commit/{sha}, .diff, .patch), branches and tags.
// Everything goes through GitDataService, whose `open` applies the API's permission checks.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { GitDataService, Target } from '../git/data-service.js';
import type { CommitData } from '../git/data.js';
import type { TreeEntry } from '../git/trees.js';
import { sendArchive, sendEntry } from '../git/serve.js';
import { highlightLines, renderMarkdown } from '../markup/render.js';
import { Layout, type PageContext } from '../web/layout.js';
import {
  type DiffLimits,
  DiffModeSwitch,
  DiffView,
  diffLimits,
  diffMode,
  fullDiffHref,
  parseDiff,
} from '../web/diff.js';
import type { PageRoutes } from '../web/plugin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { notFound } from '../errors.js';
import { RepoActions } from '../social/pages.js';
import type { UserRow } from '../users/tables.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';

type Params = Record<string, string>;
/** Largest README shown on a directory's page and file blamed. */
const VIEW_MAX = 1 << 20;
const IMAGE = /\.(png|jpe?g|gif|webp|avif|bmp|ico)$/i;
const README = /^readme(\.(md|markdown|txt))?$/i;

/** Whether the viewer may commit to a branch of the repository in the web editor (editor-pages.tsx). */
const writable = (t: Target, kind: string) => kind === 'branch' && t.access.mode >= 2 && !t.repo.is_archived;
const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
const short = (oid: string) => oid.slice(0, 10);
const firstLine = (m: string) => m.split('\n')[0] ?? '';
const body = (m: string) => (m.includes('\n') ? m.slice(m.indexOf('\n') + 1).trim() : '');

export function RepoHeader(props: {
  /** With the viewer's `access`, administrators see the Settings tab. */
  t: Pick<Target, 'owner' | 'repo'> & { access?: Pick<Target['access'], 'mode'> };
  active:
    | 'code'
    | 'issues'
    | 'pulls'
    | 'releases'
    | 'commits'
    | 'wiki'
    | 'actions'
    | 'projects'
    | 'activity'
    | 'packages'
    | 'settings';
  /** The repository a fork was made from (when the viewer may read it), on the repository's home. */
  parent?: { owner: string; name: string } | undefined;
}): VNode {
  const { t } = props;
  const base = `/${t.owner.name}/${t.repo.name}`;
  const tabs = [
    ['code', 'Code', base],
    ['commits', 'Commits', `${base}/commits/branch/${enc(t.repo.default_branch)}`],
    ['issues', 'Issues', `${base}/issues`],
    ['pulls', 'Pull requests', `${base}/pulls`],
    ['releases', 'Releases', `${base}/releases`],
    ...(t.repo.has_projects ? [['projects', 'Projects', `${base}/projects`] as const] : []),
    ...(t.repo.has_wiki ? [['wiki', 'Wiki', `${base}/wiki`] as const] : []),
    ['packages', 'Packages', `${base}/packages`],
    ['activity', 'Activity', `${base}/activity`],
    // Shown on the Actions pages themselves (the other pages do not know whether actions are on).
    ...(props.active === 'actions' ? [['actions', 'Actions', `${base}/actions`] as const] : []),
    // Repository administrators (AccessMode.admin and up).
    ...((t.access?.mode ?? 0) >= 3 ? [['settings', 'Settings', `${base}/settings`] as const] : []),
  ] as const;
  return (
    <header class="repo-header">
      <h1>
        <a href={`/${t.owner.name}`}>{t.owner.name}</a> / <a href={base}>{t.repo.name}</a>
        {t.repo.is_private ? <span class="pill">Private</span> : null}
        {t.repo.is_archived ? <span class="pill">Archived</span> : null}
        {t.repo.is_mirror ? <span class="pill">Mirror</span> : null}
      </h1>
      {props.parent ? (
        <p class="repo-origin muted">
          forked from{' '}
          <a href={`/${props.parent.owner}/${props.parent.name}`}>
            {props.parent.owner}/{props.parent.name}
          </a>
        </p>
      ) : null}
      {t.repo.is_mirror && t.repo.original_url ? (
        <p class="repo-origin muted">
          mirror of{' '}
          {/^https?:\/\//i.test(t.repo.original_url) ? (
            <a href={t.repo.original_url} rel="noopener noreferrer nofollow">
              {t.repo.original_url}
            </a>
          ) : (
            <code>{t.repo.original_url}</code>
          )}
        </p>
      ) : null}
      {t.repo.description ? <p class="muted">{t.repo.description}</p> : null}
      <nav class="tabs" aria-label="Repository">
        {tabs.map(([key, label, href]) => (
          <a href={href} aria-current={props.active === key ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
    </header>
  );
}

/** The branch and tag switcher: links to the same path at another branch or tag (no script needed). */
function RefSwitcher(props: {
  base: string;
  current: string;
  kind: string;
  path: string;
  names: { branches: string[]; tags: string[] };
}): VNode {
  const tail = props.path ? `/${enc(props.path)}` : '';
  const label = props.kind === 'commit' ? short(props.current) : props.current;
  return (
    <details class="ref-switcher">
      <summary>
        {props.kind === 'tag' ? 'Tag' : props.kind === 'commit' ? 'Commit' : 'Branch'}:{' '}
        <strong>{label}</strong>
      </summary>
      <nav aria-label="Branches and tags">
        <p class="muted">Branches</p>
        <ul>
          {props.names.branches.map((b) => (
            <li>
              <a
                href={`${props.base}/src/branch/${enc(b)}${tail}`}
                aria-current={b === props.current ? 'page' : undefined}
              >
                {b}
              </a>
            </li>
          ))}
        </ul>
        {props.names.tags.length ? (
          <>
            <p class="muted">Tags</p>
            <ul>
              {props.names.tags.map((t) => (
                <li>
                  <a
                    href={`${props.base}/src/tag/${enc(t)}${tail}`}
                    aria-current={t === props.current ? 'page' : undefined}
                  >
                    {t}
                  </a>
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </nav>
    </details>
  );
}

function CloneBox(props: { url: string }): VNode {
  return (
    <div class="clone">
      <label for="clone-url">Clone</label>
      <input id="clone-url" type="text" readOnly value={props.url} />
      <button type="button" data-copy="clone-url">
        Copy
      </button>
    </div>
  );
}

function Breadcrumbs(props: { base: string; kind: string; refName: string; path: string }): VNode {
  const parts = props.path ? props.path.split('/') : [];
  const root = `${props.base}/src/${props.kind}/${enc(props.refName)}`;
  return (
    <nav class="crumbs" aria-label="Path">
      <a href={root}>{props.base.split('/')[2]}</a>
      {parts.map((p, i) => (
        <>
          {' / '}
          {i === parts.length - 1 ? (
            <span>{p}</span>
          ) : (
            <a href={`${root}/${enc(parts.slice(0, i + 1).join('/'))}`}>{p}</a>
          )}
        </>
      ))}
    </nav>
  );
}

interface DirRow {
  entry: TreeEntry;
  name: string;
  last: CommitData | undefined;
}

function DirTable(props: {
  base: string;
  kind: string;
  refName: string;
  dir: string;
  rows: DirRow[];
}): VNode {
  const root = `${props.base}/src/${props.kind}/${enc(props.refName)}`;
  return (
    <table class="files">
      <caption class="sr-only">Files</caption>
      <tbody>
        {props.rows.map((r) => {
          const full = props.dir ? `${props.dir}/${r.name}` : r.name;
          return (
            <tr>
              <td class="name">
                {r.entry.type === 'commit' ? (
                  <span>{r.name} (submodule)</span>
                ) : (
                  <a href={`${root}/${enc(full)}`}>{r.entry.type === 'tree' ? `${r.name}/` : r.name}</a>
                )}
              </td>
              <td class="msg muted">
                {r.last ? (
                  <a href={`${props.base}/commit/${r.last.oid}`}>{firstLine(r.last.message)}</a>
                ) : null}
              </td>
              <td class="when muted">{r.last ? r.last.committer.date.slice(0, 10) : ''}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Lines per block of a file view: the browser lays out and paints only the blocks in view. */
const CHUNK = 128;

/**
 * The lines of a file view, each with its anchor, in blocks of {@link CHUNK} lines that the style
 * sheet marks `content-visibility: auto` (whole blocks only: their height is known from the line
 * height), so a 6,000-line file costs the browser the blocks on screen, not 100,000 laid-out spans.
 * Written as a string, not as components: a 5,000-line file would otherwise be 25,000 nodes to
 * render. Only line numbers and highlight.js output (the code escaped, wrapped in class-only spans)
 * go into it.
 */
function codeRows(lines: string[]): string {
  // The lines of a blob come from the highlighting cache as the same array: so do its rows.
  const known = rowsOf.get(lines);
  if (known !== undefined) return known;
  let out = '';
  for (let start = 0; start < lines.length; start += CHUNK) {
    const end = Math.min(start + CHUNK, lines.length);
    out += end - start === CHUNK ? '<div class="chunk full">' : '<div class="chunk">';
    for (let i = start; i < end; i++) {
      const n = i + 1;
      out += `<div class="l" id="L${n}"><a href="#L${n}">${n}</a><code>${lines[i] || ' '}</code></div>`;
    }
    out += '</div>';
  }
  rowsOf.set(lines, out);
  return out;
}
const rowsOf = new WeakMap<string[], string>();

function FileView(props: {
  rawUrl: string;
  name: string;
  content: Buffer | undefined;
  size: number;
  /** The blob's id: its highlighting is kept for the next view. */
  oid: string;
}): VNode {
  if (IMAGE.test(props.name)) {
    return (
      <div class="file-view">
        <img src={props.rawUrl} alt={props.name} />
      </div>
    );
  }
  if (!props.content) {
    return (
      <p class="empty">
        This file is too large to show ({props.size} bytes). <a href={props.rawUrl}>View the raw file.</a>
      </p>
    );
  }
  if (props.content.includes(0)) {
    return (
      <p class="empty">
        Binary file ({props.size} bytes). <a href={props.rawUrl}>Download it.</a>
      </p>
    );
  }
  const text = props.content.toString('utf8');
  if (/\.(md|markdown)$/i.test(props.name)) {
    return <article class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
  }
  const lines = highlightLines(text, props.name, props.oid);
  return (
    <div class={`code lines d${Math.min(String(lines.length).length, 7)}`}>
      <div class="rows" dangerouslySetInnerHTML={{ __html: codeRows(lines) }} />
    </div>
  );
}

function CommitList(props: { base: string; commits: CommitData[] }): VNode {
  return (
    <ul class="list commits">
      {props.commits.map((c) => (
        <li>
          <div>
            <a class="title" href={`${props.base}/commit/${c.oid}`}>
              {firstLine(c.message)}
            </a>
            <p class="muted">
              {c.author.name} · {c.committer.date.slice(0, 10)} · <code>{short(c.oid)}</code>
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** Whether the signed-in user stars and watches the repository (null when signed out). */
export type RepoActionState = Parameters<typeof RepoActions>[0]['state'];

export interface CodePagesDeps {
  gitData: GitDataService;
  /** The star and watch buttons' state (the social and notifications domains). */
  actionState(repo: RepoRow, user: UserRow | null): Promise<RepoActionState>;
  repos: Pick<RepoService, 'forkParent'>;
  rootUrl: string;
  /** Commits per page ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
  /** Largest file shown ([ui] MAX_DISPLAY_FILE_SIZE). */
  maxDisplayFileSize: number;
  /** How much of a diff is shown ([git] MAX_GIT_DIFF_*). */
  diffLimits: DiffLimits;
}

export function codePages(deps: CodePagesDeps): PageRoutes {
  return (app, web) => {
    const { rootUrl, pageSize } = deps;
    const svc = deps.gitData;
    const open = (request: FastifyRequest) => {
      const p = request.params as Params;
      return svc.open(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
    };
    const baseOf = (t: Target) => `/${t.owner.name}/${t.repo.name}`;
    const page = (
      request: FastifyRequest,
      t: Target,
      title: string,
      active: Parameters<typeof RepoHeader>[0]['active'],
      body: VNode,
      wide = false,
      parent?: Parameters<typeof RepoHeader>[0]['parent'],
      feed?: string,
    ): VNode => (
      <Layout page={web.page(request) as PageContext} title={title} wide={wide} feed={feed}>
        <RepoHeader t={t} active={active} parent={parent} />
        {body}
      </Layout>
    );

    app.get('/:owner/:repo', async (request, reply) => {
      const t = await open(request);
      const base = baseOf(t);
      const cloneUrl = `${rootUrl}${t.owner.name}/${t.repo.name}.git`;
      const branch = t.repo.default_branch;
      const [head, from] = await Promise.all([
        svc.entry(t, `refs/heads/${branch}`, '').catch(() => undefined),
        deps.repos.forkParent(t.repo, request.web.viewer),
      ]);
      const parent = from ? { owner: from.owner.name, name: from.repo.name } : undefined;
      if (!head) {
        return web.send(
          reply,
          page(
            request,
            t,
            `${t.owner.name}/${t.repo.name}`,
            'code',
            <section class="card">
              <h2>This repository is empty</h2>
              <CloneBox url={cloneUrl} />
              <p>Push an existing repository from the command line:</p>
              <pre>{`git remote add origin ${cloneUrl}\ngit push -u origin ${branch}`}</pre>
            </section>,
            false,
            parent,
            base,
          ),
        );
      }
      const [rows, names, state] = await Promise.all([
        svc.directory(t, `refs/heads/${branch}`, ''),
        svc.refNames(t),
        deps.actionState(t.repo, request.web.user),
      ]);
      const readme = rows.find((r) => r.entry.type === 'blob' && README.test(r.name));
      const readmeBytes = readme ? await svc.readSmall(t, readme.entry, VIEW_MAX) : undefined;
      return web.send(
        reply,
        page(
          request,
          t,
          `${t.owner.name}/${t.repo.name}`,
          'code',
          <>
            <RepoActions page={web.page(request)} base={base} repo={t.repo} state={state} />
            <div class="repo-bar">
              <RefSwitcher base={base} current={branch} kind="branch" path="" names={names} />
              <p>
                <a href={`${base}/branches`}>Branches</a> · <a href={`${base}/tags`}>Tags</a> ·{' '}
                <a href={`${base}/archive/${enc(branch)}.zip`}>ZIP</a> ·{' '}
                <a href={`${base}/archive/${enc(branch)}.tar.gz`}>TAR.GZ</a>
              </p>
              <form method="get" action={`${base}/search`} class="code-search" role="search">
                <input type="search" name="q" aria-label="Search the code" placeholder="Search the code…" />
                <button type="submit" class="sr-only">
                  Search
                </button>
              </form>
              <CloneBox url={cloneUrl} />
            </div>
            <DirTable base={base} kind="branch" refName={branch} dir="" rows={rows} />
            {readme && readmeBytes ? (
              <section class="card readme">
                <h2>{readme.name}</h2>
                {/\.(md|markdown)$/i.test(readme.name) ? (
                  <article
                    class="markdown"
                    dangerouslySetInnerHTML={{ __html: renderMarkdown(readmeBytes.toString('utf8')) }}
                  />
                ) : (
                  <pre>{readmeBytes.toString('utf8')}</pre>
                )}
              </section>
            ) : null}
          </>,
          false,
          parent,
          base,
        ),
      );
    });

    app.get('/:owner/:repo/src/:kind/*', async (request, reply) => {
      const t = await open(request);
      const p = request.params as Params;
      const kind = p['kind'] ?? '';
      const { ref, path: filePath } = await svc.locate(t, kind, p['*'] ?? '');
      const base = baseOf(t);
      const entry = await svc.entry(t, ref.oid, filePath);
      if (!entry) throw notFound(`file does not exist [path: ${filePath}]`);
      const title = `${filePath || t.repo.name} at ${ref.kind === 'commit' ? short(ref.name) : ref.name}`;
      const crumbs = (
        <div class="repo-bar">
          <RefSwitcher
            base={base}
            current={ref.name}
            kind={kind}
            path={filePath}
            names={await svc.refNames(t)}
          />
          <Breadcrumbs base={base} kind={kind} refName={ref.name} path={filePath} />
        </div>
      );
      if (entry.type === 'tree') {
        const rows = await svc.directory(t, ref.oid, filePath);
        return web.send(
          reply,
          page(
            request,
            t,
            title,
            'code',
            <>
              {crumbs}
              {writable(t, kind) ? (
                <p class="file-bar">
                  <a href={`${base}/_new/${enc(ref.name)}/${enc(filePath)}`}>New file</a>
                  <a href={`${base}/_upload/${enc(ref.name)}/${enc(filePath)}`}>Upload files</a>
                </p>
              ) : null}
              <DirTable base={base} kind={kind} refName={ref.name} dir={filePath} rows={rows} />
            </>,
          ),
        );
      }
      if (entry.type !== 'blob') throw notFound(`not a file [path: ${filePath}]`);
      const rawUrl = `${base}/raw/${kind}/${enc(ref.name)}/${enc(filePath)}`;
      const content = await svc.readSmall(t, entry, deps.maxDisplayFileSize);
      return web.send(
        reply,
        page(
          request,
          t,
          title,
          'code',
          <>
            {crumbs}
            <p class="file-bar muted">
              {entry.size} bytes · <a href={rawUrl}>Raw</a> ·{' '}
              <a href={`${base}/commits/${kind}/${enc(ref.name)}/${enc(filePath)}`}>History</a> ·{' '}
              <a href={`${base}/blame/${kind}/${enc(ref.name)}/${enc(filePath)}`}>Blame</a>
              {writable(t, kind) ? (
                <>
                  {' '}
                  · <a href={`${base}/_edit/${enc(ref.name)}/${enc(filePath)}`}>Edit</a> ·{' '}
                  <a href={`${base}/_delete/${enc(ref.name)}/${enc(filePath)}`}>Delete</a>
                </>
              ) : null}
            </p>
            <FileView
              rawUrl={rawUrl}
              name={path.posix.basename(filePath)}
              content={content}
              size={entry.size}
              oid={entry.oid}
            />
          </>,
          true,
        ),
      );
    });

    app.get('/:owner/:repo/blame/:kind/*', async (request, reply) => {
      const t = await open(request);
      const p = request.params as Params;
      const kind = p['kind'] ?? '';
      const { ref, path: filePath } = await svc.locate(t, kind, p['*'] ?? '');
      const entry = filePath ? await svc.entry(t, ref.oid, filePath) : undefined;
      if (!entry || entry.type !== 'blob') throw notFound(`file does not exist [path: ${filePath}]`);
      const base = baseOf(t);
      const content = await svc.readSmall(t, entry, VIEW_MAX);
      const runs = content && !content.includes(0) ? await svc.blame(t, ref.oid, filePath) : [];
      const lines = content
        ? highlightLines(content.toString('utf8'), path.posix.basename(filePath), entry.oid)
        : [];
      const rows: VNode[] = [];
      for (const r of runs) {
        for (let k = 0; k < r.count; k++) {
          const n = r.start + k;
          rows.push(
            <tr id={`L${n}`} class={k === 0 ? 'run' : undefined}>
              <td class="blame muted">
                {k === 0 ? (
                  <>
                    <a href={`${base}/commit/${r.oid}`}>{r.summary || short(r.oid)}</a>
                    <br />
                    {r.author} · <When unix={r.time} />
                  </>
                ) : null}
              </td>
              <td class="ln">
                <a href={`#L${n}`}>{n}</a>
              </td>
              <td class="line">
                <code dangerouslySetInnerHTML={{ __html: lines[n - 1] || ' ' }} />
              </td>
            </tr>,
          );
        }
      }
      return web.send(
        reply,
        page(
          request,
          t,
          `Blame ${filePath} at ${ref.kind === 'commit' ? short(ref.name) : ref.name}`,
          'code',
          <>
            <Breadcrumbs base={base} kind={kind} refName={ref.name} path={filePath} />
            <p class="file-bar muted">
              <a href={`${base}/src/${kind}/${enc(ref.name)}/${enc(filePath)}`}>Normal view</a> ·{' '}
              <a href={`${base}/raw/${kind}/${enc(ref.name)}/${enc(filePath)}`}>Raw</a>
            </p>
            {rows.length ? (
              <div class="code blame-view">
                <table>
                  <tbody>{rows}</tbody>
                </table>
              </div>
            ) : (
              <p class="empty">Nothing to blame: the file is empty, binary or too large to show.</p>
            )}
          </>,
          true,
        ),
      );
    });

    const raw = (media: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const t = await open(request);
      const p = request.params as Params;
      const { ref, path: filePath } = await svc.locate(t, p['kind'] ?? '', p['*'] ?? '');
      const entry = filePath ? await svc.entry(t, ref.oid, filePath) : undefined;
      if (!entry || entry.type !== 'blob') throw notFound(`file does not exist [path: ${filePath}]`);
      return sendEntry(svc, t, entry, path.posix.basename(filePath), media, request, reply);
    };
    // Files as they are: never compressed on the way (clients count on the file's length).
    app.get('/:owner/:repo/raw/:kind/*', { config: { compress: false } }, raw(false));
    app.get('/:owner/:repo/media/:kind/*', { config: { compress: false } }, raw(true));

    app.get('/:owner/:repo/archive/*', async (request, reply) =>
      sendArchive(svc, await open(request), (request.params as Params)['*'] ?? '', request, reply),
    );

    app.get('/:owner/:repo/commits/:kind/*', async (request, reply) => {
      const t = await open(request);
      const p = request.params as Params;
      const kind = p['kind'] ?? '';
      const { ref, path: filePath } = await svc.locate(t, kind, p['*'] ?? '');
      const pageNo = pageNumber((request.query as Params)['page']);
      const size = pageSize;
      const [commits, total] = await svc.listCommits(t, {
        sha: ref.oid,
        path: filePath || undefined,
        page: { page: pageNo, limit: size, offset: (pageNo - 1) * size },
        diff: false,
      });
      const base = baseOf(t);
      return web.send(
        reply,
        page(
          request,
          t,
          `Commits of ${ref.name}${filePath ? ` (${filePath})` : ''}`,
          'commits',
          <>
            <h2>
              Commits <span class="count">{total}</span>
            </h2>
            <p>
              <a href={`${base}/graph`}>Commit graph</a>
            </p>
            <CommitList base={base} commits={commits} />
            <Pager
              path={`${base}/commits/${kind}/${enc(ref.name)}${filePath ? `/${enc(filePath)}` : ''}`}
              page={pageNo}
              pageSize={size}
              total={total}
            />
          </>,
        ),
      );
    });

    app.get('/:owner/:repo/commit/:sha', async (request, reply) => {
      const t = await open(request);
      let sha = (request.params as Params)['sha'] ?? '';
      const format = sha.endsWith('.diff') ? 'diff' : sha.endsWith('.patch') ? 'patch' : undefined;
      if (format) sha = sha.slice(0, -(format.length + 1));
      const c = await svc.getCommit(t, sha, false);
      const text = await svc.diffText(t, c.oid, format === 'patch');
      if (format)
        return reply.type('text/plain; charset=utf-8').header('X-Content-Type-Options', 'nosniff').send(text);
      const base = baseOf(t);
      return web.send(
        reply,
        page(
          request,
          t,
          firstLine(c.message),
          'commits',
          <>
            <section class="card commit">
              <h2>{firstLine(c.message)}</h2>
              {body(c.message) ? <pre class="commit-body">{body(c.message)}</pre> : null}
              <p class="muted">
                {c.author.name} committed {c.committer.date.slice(0, 10)} · <code>{c.oid}</code>
                {c.parents.map((p) => (
                  <>
                    {' '}
                    · parent <a href={`${base}/commit/${p}`}>{short(p)}</a>
                  </>
                ))}
              </p>
              <p>
                <a href={`${base}/src/commit/${c.oid}`}>Browse files</a> ·{' '}
                <a href={`${base}/commit/${c.oid}.diff`}>.diff</a> ·{' '}
                <a href={`${base}/commit/${c.oid}.patch`}>.patch</a>
              </p>
            </section>
            <DiffModeSwitch path={`${base}/commit/${c.oid}`} mode={diffMode(request.query)} />
            <DiffView
              files={parseDiff(text)}
              opts={{
                mode: diffMode(request.query),
                limits: diffLimits(deps.diffLimits, request.query),
                fullHref: fullDiffHref(`${base}/commit/${c.oid}`, request.query),
              }}
            />
          </>,
          true,
        ),
      );
    });
  };
}
