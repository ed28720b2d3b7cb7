// The RSS and Atom feeds at Forgejo's addresses ([other] ENABLE_FEED): a user's or an
// organization's activity (`/{name}.rss`, `.atom`), a repository's (`/{owner}/{repo}.rss`), its
// releases and tags (`/releases.rss`, `/tags.atom`) and a branch's or a file's commits
// (`/rss/branch/{branch}[/{path}]`, `/atom/branch/...`). Each answers what the viewer may read,
// as the page it belongs to does (404 otherwise); a private repository's feed needs a signed-in
// reader or a token, as its page does.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { GitDataService } from '../git/data-service.js';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import type { OrgService } from '../orgs/service.js';
import type { ReleaseService } from '../releases/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import type { PageRoutes } from '../web/plugin.js';
import { actionItem, commitItem, releaseItem, writeFeed, type FeedFormat, type FeedHead } from './feeds.js';
import type { ActivityService } from './service.js';
import { withPeople } from './pages.js';
import type { ActionRow } from './tables.js';
import type { Item } from 'feed';

export interface FeedPagesDeps extends OpenRepoDeps {
  activities: Pick<ActivityService, 'userFeed' | 'orgFeed' | 'repoFeed'>;
  repos: OpenRepoDeps['repos'] & Pick<RepoService, 'getByIds'>;
  users: OpenRepoDeps['users'] & Pick<UserService, 'getByIds' | 'requireAccount' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee' | 'isMember'>;
  releases: Pick<ReleaseService, 'list'>;
  gitData: Pick<GitDataService, 'open' | 'locate' | 'listCommits'>;
  /** [server] ROOT_URL, ending in /. */
  rootUrl: string;
}

/** Entries per feed, as Forgejo's (its feeds are one page of the activity list). */
const ITEMS = 20;
const PAGE = { page: { page: 1, limit: ITEMS, offset: 0 } };

type Params = Record<string, string>;

export function feedPages(deps: FeedPagesDeps): PageRoutes {
  const { rootUrl } = deps;
  const abs = (p: string) => `${rootUrl}${p.replace(/^\//, '')}`;
  const both = (p: string) => ({ rss: abs(`${p}.rss`), atom: abs(`${p}.atom`) });

  const send = (reply: FastifyReply, head: FeedHead, items: Item[], format: FeedFormat) => {
    const { type, body } = writeFeed(head, items, format);
    return reply.type(type).header('cache-control', 'private, max-age=0').send(body);
  };

  const entries = (rows: ActionRow[]) => withPeople(deps, rows);

  return (app) => {
    const account = (format: FeedFormat) => async (request: FastifyRequest, reply: FastifyReply) => {
      const viewer = request.web.viewer;
      const name = (request.params as Params)['owner'] ?? '';
      const user = await deps.users.requireAccount(name);
      const org = user.type === UserType.Organization;
      const visible = org ? await deps.orgs.canSee(viewer, user) : deps.users.canSee(viewer, user);
      if (!visible) throw new AppError('not_found', `The account ${name} does not exist.`);
      let rows: ActionRow[];
      if (org) {
        const member =
          viewer !== null &&
          !viewer.publicOnly &&
          (viewer.isAdmin || (await deps.orgs.isMember(user, viewer.id)));
        [rows] = await deps.activities.orgFeed(user, viewer, member, PAGE);
      } else {
        // A user's feed is what they did, as Forgejo's (only-performed-by).
        [rows] = await deps.activities.userFeed(user, viewer, true, PAGE);
      }
      const items = (await entries(rows)).map((e) => actionItem(e, rootUrl));
      return send(
        reply,
        {
          title: `Feed of "${user.full_name || user.name}"`,
          link: abs(encodeURIComponent(user.name)),
          description: user.description ?? '',
          links: both(encodeURIComponent(user.name)),
        },
        items,
        format,
      );
    };
    app.get('/:owner.rss', account('rss'));
    app.get('/:owner.atom', account('atom'));

    const repository = (format: FeedFormat) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { view, owner, base } = await openRepo(deps, request, 'repo.code');
      const [rows] = await deps.activities.repoFeed(view.repo, PAGE);
      const items = (await entries(rows)).map((e) => actionItem(e, rootUrl));
      return send(
        reply,
        {
          title: `Feed of "${owner.name}/${view.repo.name}"`,
          link: abs(base),
          description: view.repo.description,
          links: both(base),
        },
        items,
        format,
      );
    };
    app.get('/:owner/:repo.rss', repository('rss'));
    app.get('/:owner/:repo.atom', repository('atom'));

    const releases =
      (format: FeedFormat, tagsOnly: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
        const { view, owner, base } = await openRepo(deps, request, 'repo.releases');
        // Drafts never: a feed is read by whoever has its address.
        const [rows] = await deps.releases.list(view.repo, false, { draft: false }, PAGE.page);
        const shown = tagsOnly ? rows.filter((r) => r.is_tag) : rows.filter((r) => !r.is_tag);
        const people = await deps.users.getByIds([...new Set(shown.map((r) => r.publisher_id))]);
        const repo = { owner: owner.name, name: view.repo.name };
        const items = shown.map((r) =>
          releaseItem(
            {
              id: r.id,
              tag: r.tag_name,
              title: r.title,
              note: r.note,
              isTag: !!r.is_tag,
              created: r.created_unix,
              publisher: people.get(r.publisher_id),
            },
            repo,
            rootUrl,
          ),
        );
        const what = tagsOnly ? 'tags' : 'releases';
        return send(
          reply,
          {
            title: `${what === 'tags' ? 'Tags' : 'Releases'} of ${owner.name}/${view.repo.name}`,
            link: abs(`${base}/${what}`),
            description: view.repo.description,
            links: both(`${base}/${what}`),
          },
          items,
          format,
        );
      };
    app.get('/:owner/:repo/releases.rss', releases('rss', false));
    app.get('/:owner/:repo/releases.atom', releases('atom', false));
    app.get('/:owner/:repo/tags.rss', releases('rss', true));
    app.get('/:owner/:repo/tags.atom', releases('atom', true));

    const branch = (format: FeedFormat) => async (request: FastifyRequest, reply: FastifyReply) => {
      const p = request.params as Params;
      const t = await deps.gitData.open(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
      const { ref, path: filePath } = await deps.gitData.locate(t, 'branch', p['*'] ?? '');
      const [commits] = await deps.gitData.listCommits(t, {
        sha: ref.oid,
        path: filePath || undefined,
        page: PAGE.page,
        diff: false,
      });
      const repo = { owner: t.owner.name, name: t.repo.name };
      const base = `/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;
      const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/');
      const where = `${enc(ref.name)}${filePath ? `/${enc(filePath)}` : ''}`;
      const items = commits.map((c) =>
        commitItem(
          {
            oid: c.oid,
            message: c.message,
            authorName: c.author.name,
            authorEmail: c.author.email,
            when: c.committer.unix,
          },
          repo,
          rootUrl,
        ),
      );
      return send(
        reply,
        {
          title: filePath ? `${filePath} on ${ref.name}` : `${repo.owner}/${repo.name}: ${ref.name}`,
          link: abs(`${base}/${filePath ? 'src' : 'commits'}/branch/${where}`),
          description: t.repo.description,
          links: { rss: abs(`${base}/rss/branch/${where}`), atom: abs(`${base}/atom/branch/${where}`) },
        },
        items,
        format,
      );
    };
    app.get('/:owner/:repo/rss/branch/*', branch('rss'));
    app.get('/:owner/:repo/atom/branch/*', branch('atom'));
  };
}
