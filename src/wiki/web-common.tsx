// What the wiki's web pages share: the repository of the URL opened through the wiki service's
// own access check (the API's: 404 when the wiki is off or out of reach, 403 for writing without
// write access), the page frame (the repository's header, the wiki's own heading and buttons)
// and the addresses of a page's views at Forgejo's URLs.
import type { FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoAccess } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { Layout, type PageContext } from '../web/layout.js';
import { titleToWebPath } from './names.js';
import type { WikiService } from './service.js';

type Params = Record<string, string>;

export interface WikiWebDeps {
  wiki: WikiService;
  users: Pick<UserService, 'getById'>;
  rootUrl: string;
}

export interface OpenedWiki {
  repo: RepoRow;
  access: RepoAccess;
  owner: UserRow;
  /** `/{owner}/{repo}` */
  base: string;
  /** Whether the viewer may write pages (the edit buttons). */
  writer: boolean;
}

/** The page name as the request spelled it (the raw, still escaped last segment), as in the API. */
export function rawName(request: FastifyRequest): string {
  const p = (request.raw.url ?? '').split('?')[0]!;
  return p.slice(p.lastIndexOf('/') + 1);
}

/** `?action=` of the request ('' when absent). */
export function actionOf(request: FastifyRequest): string {
  const a = (request.query as Params | undefined)?.['action'];
  return typeof a === 'string' ? a : '';
}

export async function openWiki(
  deps: WikiWebDeps,
  request: FastifyRequest,
  need: 'read' | 'write' = 'read',
): Promise<OpenedWiki> {
  const p = request.params as Params;
  const { repo, access } = await deps.wiki.requireWiki(
    p['owner'] ?? '',
    p['repo'] ?? '',
    request.web.viewer,
    need,
  );
  const owner = (await deps.users.getById(repo.owner_id))!;
  return {
    repo,
    access,
    owner,
    base: `/${owner.name}/${repo.name}`,
    writer: request.web.user !== null && deps.wiki.canWrite(repo, access),
  };
}

/** The addresses of a page (by web path) and of the wiki. */
export const wikiHref = {
  page: (base: string, web: string) => `${base}/wiki/${web}`,
  edit: (base: string, web: string) => `${base}/wiki/${web}?action=_edit`,
  remove: (base: string, web: string) => `${base}/wiki/${web}?action=_delete`,
  history: (base: string, web: string) => `${base}/wiki/${web}?action=_revision`,
  create: (base: string, title?: string) =>
    `${base}/wiki/?action=_new${title ? `&title=${encodeURIComponent(title)}` : ''}`,
  pages: (base: string) => `${base}/wiki/?action=_pages`,
  commit: (base: string, oid: string) => `${base}/wiki/commit/${oid}`,
};

/** A wiki page's frame: the repository's header with the Wiki tab, then the page's own parts. */
export function WikiFrame(props: {
  page: PageContext;
  title: string;
  t: OpenedWiki;
  children: ComponentChildren;
}): VNode {
  const { t } = props;
  return (
    <Layout page={props.page} title={`${props.title} · Wiki · ${t.owner.name}/${t.repo.name}`}>
      <RepoHeader t={{ owner: t.owner, repo: t.repo, access: t.access }} active="wiki" />
      {props.children}
    </Layout>
  );
}

/**
 * The heading of a wiki view: the title, a line under it, and the wiki's buttons (the page list
 * for everyone; a new page for writers, and what `actions` adds).
 */
export function WikiHead(props: {
  t: OpenedWiki;
  title: string;
  sub?: ComponentChildren;
  actions?: ComponentChildren;
}): VNode {
  const { t } = props;
  return (
    <div class="wiki-head">
      <div class="wiki-head-text">
        <h2 class="wiki-title">{props.title}</h2>
        {props.sub ? <p class="muted">{props.sub}</p> : null}
      </div>
      <nav class="wiki-actions" aria-label="Wiki">
        <a class="button" href={wikiHref.pages(t.base)}>
          Pages
        </a>
        {props.actions}
        {t.writer ? (
          <a class="button primary" href={wikiHref.create(t.base)}>
            New page
          </a>
        ) : null}
      </nav>
    </div>
  );
}

/**
 * Forgejo's wiki links in a page's Markdown, as ordinary links to the pages: `[[Page Name]]` and
 * `[[Text|Page Name]]`; code (fenced blocks, inline spans) is left as it is.
 */
export function wikiLinks(markdown: string, base: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const open = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (open && open[1]!.startsWith(fence)) fence = undefined;
        return line;
      }
      if (open) {
        fence = open[1]!;
        return line;
      }
      return line
        .split(/(`+[^`]*`+)/)
        .map((part, i) =>
          i % 2
            ? part
            : part.replace(/\[\[([^[\]|\n]+)(?:\|([^[\]|\n]+))?\]\]/g, (_m, a: string, b?: string) => {
                const text = a.trim();
                const target = (b ?? a).trim();
                return `[${text}](${wikiHref.page(base, titleToWebPath(target))})`;
              }),
        )
        .join('');
    })
    .join('\n');
}
