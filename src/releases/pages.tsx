// The web pages of releases: the list (notes rendered, assets, source archives), one release by
// its tag, the latest release, and /releases/download/{tag}/{file} (an asset by name). Read
// through the releases service with the repository's own access check; drafts are not shown.
import type { FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
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

type Params = Record<string, string>;
const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/');

function Release(props: {
  base: string;
  rootUrl: string;
  release: ReleaseRow;
  assets: AttachmentRow[];
  publisher: UserRow | undefined;
}): VNode {
  const r = props.release;
  const tagUrl = `${props.base}/releases/tag/${enc(r.tag_name)}`;
  return (
    <article class="card release">
      <h2>
        <a href={tagUrl}>{r.title || r.tag_name}</a>
        {r.is_prerelease ? <span class="pill">Pre-release</span> : null}
      </h2>
      <p class="muted">
        <a href={`${props.base}/src/tag/${enc(r.tag_name)}`}>{r.tag_name}</a> ·{' '}
        {props.publisher?.name ?? 'Ghost'} released this <When unix={r.created_unix} />
      </p>
      {r.note ? <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(r.note) }} /> : null}
      <h3>Assets</h3>
      <ul class="assets">
        {props.assets.map((a) => (
          <li>
            <a href={`${props.base}/releases/download/${enc(r.tag_name)}/${encodeURIComponent(a.name)}`}>
              {a.name}
            </a>{' '}
            <span class="muted">({Number(a.size)} bytes)</span>
          </li>
        ))}
        <li>
          <a href={`${props.base}/archive/${enc(r.tag_name)}.zip`}>Source code (ZIP)</a>
        </li>
        <li>
          <a href={`${props.base}/archive/${enc(r.tag_name)}.tar.gz`}>Source code (TAR.GZ)</a>
        </li>
      </ul>
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

    async function open(request: FastifyRequest): Promise<{ repo: RepoRow; owner: UserRow; base: string }> {
      const p = request.params as Params;
      const { repo } = await repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        'read',
        'repo.releases',
      );
      const owner = (await users.getById(repo.owner_id))!;
      return { repo, owner, base: `/${owner.name}/${repo.name}` };
    }

    async function render(
      request: FastifyRequest,
      repo: RepoRow,
      owner: UserRow,
      base: string,
      rows: ReleaseRow[],
      title: string,
      pager?: VNode,
    ) {
      const [assets, publishers] = await Promise.all([
        attachments.ofReleases(rows.map((r) => r.id)),
        users.getByIds([...new Set(rows.map((r) => r.publisher_id))]),
      ]);
      return (
        <Layout page={web.page(request)} title={title}>
          <RepoHeader t={{ owner, repo }} active="releases" />
          {rows.length === 0 ? <p class="empty">No releases yet.</p> : null}
          {rows.map((r) => (
            <Release
              base={base}
              rootUrl={rootUrl}
              release={r}
              assets={assets.get(r.id) ?? []}
              publisher={publishers.get(r.publisher_id)}
            />
          ))}
          {pager}
        </Layout>
      );
    }

    app.get('/:owner/:repo/releases', async (request, reply) => {
      const { repo, owner, base } = await open(request);
      const pageNo = pageNumber((request.query as Params)['page']);
      const [rows, total] = await releases.list(
        repo,
        false,
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
        ),
      );
    });

    app.get('/:owner/:repo/releases/tag/*', async (request, reply) => {
      const { repo, owner, base } = await open(request);
      const r = await releases.getByTag(repo, (request.params as Params)['*'] ?? '', false);
      return web.send(
        reply,
        await render(
          request,
          repo,
          owner,
          base,
          [r],
          `${r.title || r.tag_name} · ${owner.name}/${repo.name}`,
        ),
      );
    });

    app.get('/:owner/:repo/releases/latest', async (request, reply) => {
      const { repo, base } = await open(request);
      const r = await releases.latest(repo);
      return web.redirect(reply, `${base}/releases/tag/${enc(r.tag_name)}`);
    });

    app.get('/:owner/:repo/releases/download/*', async (request, reply) => {
      const { repo } = await open(request);
      const rest = (request.params as Params)['*'] ?? '';
      const slash = rest.lastIndexOf('/');
      if (slash < 0) throw notFound('no such release asset');
      const r = await releases.getByTag(repo, rest.slice(0, slash), false);
      const name = rest.slice(slash + 1);
      const asset = (await attachments.ofReleases([r.id])).get(r.id)?.find((a) => a.name === name);
      if (!asset) throw notFound(`release asset does not exist [name: ${name}]`);
      return reply.code(302).header('Location', downloadUrl(asset, rootUrl)).send();
    });
  };
}
