// The web pages of releases: the list (notes rendered, assets with sizes and download counts,
// source archives; draft, pre-release and latest badges), one release by its tag, the latest
// release, and /releases/download/{tag}/{file} (an asset by name). Read through the releases
// service with the repository's own access check; drafts are shown to its writers only.
import type { FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { notFound } from '../errors.js';
import { renderMarkdown } from '../markup/render.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { Layout } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import type { PageRoutes } from '../web/plugin.js';
import type { AttachmentService } from '../attachments/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { ReleaseService } from './service.js';
import { downloadUrl } from '../attachments/schemas.js';
import type { AttachmentRow } from '../attachments/tables.js';
import type { ReleaseRow } from './tables.js';
import { fileSize } from './forms.js';

type Params = Record<string, string>;
const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/');

function Release(props: {
  base: string;
  rootUrl: string;
  release: ReleaseRow;
  assets: AttachmentRow[];
  publisher: UserRow | undefined;
  latest: boolean;
  writer: boolean;
  children?: ComponentChildren;
}): VNode {
  const r = props.release;
  const tagUrl = `${props.base}/releases/tag/${enc(r.tag_name)}`;
  const archives = r.hide_archive_links ? 0 : 2;
  return (
    <article class="card release" id={`release-${r.id}`}>
      <div class="release-side">
        {r.is_draft ? (
          <span class="release-tag muted" title="The tag is created when the release is published">
            {r.tag_name}
          </span>
        ) : (
          <a class="release-tag" href={`${props.base}/src/tag/${enc(r.tag_name)}`}>
            {r.tag_name}
          </a>
        )}
        {r.sha1 ? (
          <a class="release-sha mono" href={`${props.base}/commit/${r.sha1}`}>
            {r.sha1.slice(0, 10)}
          </a>
        ) : null}
      </div>
      <div class="release-main">
        <header class="release-head">
          <h2>
            <a href={tagUrl}>{r.title || r.tag_name}</a>
          </h2>
          {r.is_draft ? <span class="pill release-draft">Draft</span> : null}
          {r.is_prerelease ? <span class="pill release-pre">Pre-release</span> : null}
          {props.latest ? <span class="pill release-latest">Latest</span> : null}
          {props.writer ? (
            <a class="button small release-edit" href={`${props.base}/releases/edit/${enc(r.tag_name)}`}>
              Edit
            </a>
          ) : null}
        </header>
        <p class="muted release-meta">
          <a href={`/${props.publisher?.name ?? 'ghost'}`}>{props.publisher?.name ?? 'Ghost'}</a>{' '}
          {r.is_draft ? 'drafted this' : 'released this'} <When unix={r.created_unix} />
        </p>
        {r.note ? (
          <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(r.note) }} />
        ) : null}
        <details class="release-assets" open>
          <summary>
            Assets <span class="count">{props.assets.length + archives}</span>
          </summary>
          <ul class="assets">
            {props.assets.map((a) => (
              <li>
                <a href={`${props.base}/releases/download/${enc(r.tag_name)}/${encodeURIComponent(a.name)}`}>
                  {a.name}
                </a>
                <span class="muted asset-info">
                  {a.external_url ? 'external link' : fileSize(Number(a.size))} · {a.download_count}{' '}
                  {a.download_count === 1 ? 'download' : 'downloads'}
                </span>
              </li>
            ))}
            {archives ? (
              <li>
                <a href={`${props.base}/archive/${enc(r.tag_name)}.zip`}>Source code (ZIP)</a>
              </li>
            ) : null}
            {archives ? (
              <li>
                <a href={`${props.base}/archive/${enc(r.tag_name)}.tar.gz`}>Source code (TAR.GZ)</a>
              </li>
            ) : null}
          </ul>
        </details>
        {props.children}
      </div>
    </article>
  );
}

export interface ReleasePagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  releases: Pick<ReleaseService, 'list' | 'getByTag' | 'latest'>;
  attachments: Pick<AttachmentService, 'ofReleases'>;
  rootUrl: string;
}

export function releasePages(deps: ReleasePagesDeps): PageRoutes {
  return (app, web) => {
    const { repos, releases, attachments, users, rootUrl } = deps;
    const pageSize = 10;

    async function open(
      request: FastifyRequest,
    ): Promise<{ repo: RepoRow; owner: UserRow; base: string; writer: boolean }> {
      const p = request.params as Params;
      const { repo, access } = await repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        'read',
        'repo.releases',
      );
      const owner = (await users.getById(repo.owner_id))!;
      const writer = !!request.web.user && !repo.is_archived && (access.units.get('repo.releases') ?? 0) >= 2;
      return { repo, owner, base: `/${owner.name}/${repo.name}`, writer };
    }

    async function render(
      request: FastifyRequest,
      repo: RepoRow,
      owner: UserRow,
      base: string,
      rows: ReleaseRow[],
      title: string,
      pager?: VNode,
      writer = false,
    ) {
      const [assets, publishers, latest] = await Promise.all([
        attachments.ofReleases(rows.map((r) => r.id)),
        users.getByIds([...new Set(rows.map((r) => r.publisher_id))]),
        releases.latest(repo).catch(() => undefined),
      ]);
      return (
        <Layout page={web.page(request)} title={title}>
          <RepoHeader t={{ owner, repo }} active="releases" />
          {writer ? (
            <p class="actions release-list-actions">
              <a class="button primary" href={`${base}/releases/new`}>
                New release
              </a>
            </p>
          ) : null}
          {rows.length === 0 ? <p class="empty">No releases yet.</p> : null}
          {rows.map((r) => (
            <Release
              base={base}
              rootUrl={rootUrl}
              release={r}
              assets={assets.get(r.id) ?? []}
              publisher={publishers.get(r.publisher_id)}
              latest={r.id === latest?.id}
              writer={writer}
            />
          ))}
          {pager}
        </Layout>
      );
    }

    app.get('/:owner/:repo/releases', async (request, reply) => {
      const { repo, owner, base, writer } = await open(request);
      const pageNo = pageNumber((request.query as Params)['page']);
      const [rows, total] = await releases.list(
        repo,
        writer,
        {},
        { page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize },
      );
      return web.send(
        reply,
        await render(
          request,
          repo,
          owner,
          base,
          rows,
          `Releases · ${owner.name}/${repo.name}`,
          <Pager path={`${base}/releases`} page={pageNo} pageSize={pageSize} total={total} />,
          writer,
        ),
      );
    });

    app.get('/:owner/:repo/releases/tag/*', async (request, reply) => {
      const { repo, owner, base, writer } = await open(request);
      const r = await releases.getByTag(repo, (request.params as Params)['*'] ?? '', writer);
      return web.send(
        reply,
        await render(
          request,
          repo,
          owner,
          base,
          [r],
          `${r.title || r.tag_name} · ${owner.name}/${repo.name}`,
          undefined,
          writer,
        ),
      );
    });

    app.get('/:owner/:repo/releases/latest', async (request, reply) => {
      const { repo, base } = await open(request);
      const r = await releases.latest(repo);
      return web.redirect(reply, `${base}/releases/tag/${enc(r.tag_name)}`);
    });

    app.get('/:owner/:repo/releases/download/*', { config: { compress: false } }, async (request, reply) => {
      const { repo, writer } = await open(request);
      const rest = (request.params as Params)['*'] ?? '';
      const slash = rest.lastIndexOf('/');
      if (slash < 0) throw notFound('no such release asset');
      const r = await releases.getByTag(repo, rest.slice(0, slash), writer);
      const name = rest.slice(slash + 1);
      const asset = (await attachments.ofReleases([r.id])).get(r.id)?.find((a) => a.name === name);
      if (!asset) throw notFound(`release asset does not exist [name: ${name}]`);
      return reply.code(302).header('Location', downloadUrl(asset, rootUrl)).send();
    });
  };
}
