// The web pages of repositories as lists and forms: the home page (explore for visitors, a
// dashboard for the signed-in), /explore/repos, creating a repository (and forking one,
// fork-pages.tsx), and owner profiles with their repositories. The pages inside a repository are
// in repos/code-pages.tsx.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { ExploreTabs, ProfileHeader, UserTabs } from '../users/pages.js';
import { OrgTabs } from '../orgs/pages.js';
import type { OrgService, OrgStanding } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { forkPages, type ForkPagesDeps } from './fork-pages.js';
import type { ListFilter } from './list-filter.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';
import { ActivityFeed, type FeedItem } from '../activities/pages.js';

type Form = Record<string, string | undefined>;

interface Listed {
  repo: RepoRow;
  owner: UserRow;
}

export function RepoList(props: { items: Listed[] }): VNode {
  if (!props.items.length) return <p class="empty">No repositories yet.</p>;
  return (
    <ul class="list repos">
      {props.items.map(({ repo, owner }) => (
        <li>
          <div>
            <a class="title" href={`/${owner.name}/${repo.name}`}>
              {owner.name}/{repo.name}
            </a>
            {repo.is_private ? <span class="pill">Private</span> : null}
            {repo.is_fork ? <span class="pill">Fork</span> : null}
            {repo.is_archived ? <span class="pill">Archived</span> : null}
            {repo.description ? <p>{repo.description}</p> : null}
            <p class="muted">
              ★ {repo.num_stars} · Updated <When unix={repo.updated_unix} />
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

function ExplorePage(props: {
  page: PageContext;
  items: Listed[];
  total: number;
  pageNo: number;
  pageSize: number;
  q: string;
}): VNode {
  return (
    <Layout page={props.page} title="Explore">
      <ExploreTabs active="repos" page={props.page} />
      <form method="get" action="/explore/repos" class="search" role="search">
        <input
          type="search"
          name="q"
          value={props.q}
          aria-label="Search repositories"
          placeholder="Search…"
        />
        <button type="submit">Search</button>
      </form>
      <RepoList items={props.items} />
      <Pager
        path="/explore/repos"
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
        query={props.q ? `q=${encodeURIComponent(props.q)}` : ''}
      />
    </Layout>
  );
}

function Dashboard(props: {
  page: PageContext;
  user: UserRow;
  items: Listed[];
  total: number;
  feed: FeedItem[];
}): VNode {
  return (
    <Layout page={props.page} title="Dashboard">
      <div class="columns">
        <section>
          <h1>Welcome back, {props.user.full_name || props.user.name}</h1>
          <p class="muted">
            <a href="/explore/repos">Explore</a> what others are building, or{' '}
            <a href="/repo/create">create a repository</a>.
          </p>
          <h2>Recent activity</h2>
          <ActivityFeed items={props.feed} />
        </section>
        <section class="card">
          <h2>
            Your repositories <span class="count">{props.total}</span>
          </h2>
          <RepoList items={props.items} />
          {props.total > props.items.length ? (
            <p>
              <a href={`/${props.user.name}`}>All your repositories</a>
            </p>
          ) : null}
        </section>
      </div>
    </Layout>
  );
}

function CreateRepoPage(props: { page: PageContext; owners: UserRow[]; values: Form; errors: Form }): VNode {
  const { values, errors } = props;
  return (
    <Layout page={props.page} title="New repository">
      <section class="narrow card">
        <h1>New repository</h1>
        <form method="post" action="/repo/create">
          <CsrfField page={props.page} />
          <div class="field">
            <label for="f-uid">Owner</label>
            <select
              id="f-uid"
              name="uid"
              aria-invalid={errors['uid'] ? 'true' : undefined}
              aria-describedby={errors['uid'] ? 'f-uid-error' : undefined}
            >
              {props.owners.map((o) => (
                <option value={String(o.id)} selected={values['uid'] === String(o.id)}>
                  {o.name}
                </option>
              ))}
            </select>
            {errors['uid'] ? (
              <p id="f-uid-error" class="field-error" role="alert">
                {errors['uid']}
              </p>
            ) : null}
          </div>
          <Field
            label="Repository name"
            name="repo_name"
            value={values['repo_name'] ?? ''}
            required
            autofocus
            error={errors['repo_name']}
          />
          <Field label="Description" name="description" value={values['description'] ?? ''} />
          <div class="field check">
            <input
              id="f-private"
              type="checkbox"
              name="private"
              value="on"
              checked={values['private'] === 'on'}
            />
            <label for="f-private">Make repository private</label>
          </div>
          <div class="field check">
            <input
              id="f-init"
              type="checkbox"
              name="auto_init"
              value="on"
              checked={values['auto_init'] === 'on'}
            />
            <label for="f-init">Initialize repository (adds a README)</label>
          </div>
          <Field
            label="Default branch"
            name="default_branch"
            value={values['default_branch'] ?? 'main'}
            error={errors['default_branch']}
          />
          {errors['form'] ? (
            <p class="flash error" role="alert">
              {errors['form']}
            </p>
          ) : null}
          <button type="submit" class="primary">
            Create repository
          </button>
        </form>
      </section>
    </Layout>
  );
}

function ProfilePage(props: {
  page: PageContext;
  account: UserRow;
  /** For an organization: the viewer's standing in it (its tabs). */
  standing?: OrgStanding | undefined;
  items: Listed[];
  total: number;
  pageNo: number;
  pageSize: number;
}): VNode {
  return (
    <Layout
      page={props.page}
      title={props.account.full_name || props.account.name}
      feed={`/${encodeURIComponent(props.account.name)}`}
    >
      <ProfileHeader account={props.account} />
      {props.standing ? (
        <OrgTabs org={props.account} active="repos" standing={props.standing} repos={props.total} />
      ) : (
        <UserTabs user={props.account} active="repos" repos={props.total} />
      )}
      <h2>
        Repositories <span class="count">{props.total}</span>
      </h2>
      <RepoList items={props.items} />
      <Pager
        path={`/${props.account.name}`}
        page={props.pageNo}
        pageSize={props.pageSize}
        total={props.total}
      />
    </Layout>
  );
}

export interface RepoListPagesDeps {
  repos: Pick<RepoService, 'list' | 'create' | 'creatableOwners'> & ForkPagesDeps['repos'];
  forks: ForkPagesDeps['forks'];
  users: Pick<UserService, 'getByIds' | 'requireAccount' | 'canSee'> & ForkPagesDeps['users'];
  orgs: Pick<OrgService, 'canSee' | 'standing'>;
  /** The signed-in user's activity feed on the dashboard (the activities domain). */
  feed(user: UserRow, viewer: Viewer | null): Promise<FeedItem[]>;
  /** Repositories per page ([api] DEFAULT_PAGING_NUM). */
  pageSize: number;
}

export function repoListPages(deps: RepoListPagesDeps): PageRoutes {
  return (app, web) => {
    const { repos, forks, users, orgs, pageSize } = deps;

    /** Repositories the viewer may read, as the API's search filters them. */
    const visibleTo = (viewer: Viewer | null): Pick<ListFilter, 'viewerId'> => ({
      viewerId: viewer === null ? null : viewer.isAdmin ? undefined : viewer.id,
    });

    async function withOwners(rows: RepoRow[]): Promise<Listed[]> {
      const owners = await users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
      return rows.flatMap((repo) => {
        const owner = owners.get(repo.owner_id);
        return owner ? [{ repo, owner }] : [];
      });
    }

    async function explore(request: FastifyRequest) {
      const q = request.query as Form;
      const pageNo = pageNumber(q['page']);
      const keyword = (q['q'] ?? '').trim();
      const [rows, total] = await repos.list(
        {
          ...visibleTo(request.web.viewer),
          keywords: keyword ? keyword.split(/[\s,]+/).filter(Boolean) : undefined,
          includeDescription: true,
          orderBy: 'recentupdate',
        },
        pageSize,
        (pageNo - 1) * pageSize,
      );
      return { items: await withOwners(rows), total, pageNo, keyword };
    }

    async function explorePage(request: FastifyRequest, reply: FastifyReply) {
      const r = await explore(request);
      return web.send(
        reply,
        <ExplorePage
          page={web.page(request)}
          items={r.items}
          total={r.total}
          pageNo={r.pageNo}
          pageSize={pageSize}
          q={r.keyword}
        />,
      );
    }

    app.get('/', async (request, reply) => {
      const user = request.web.user;
      if (user) {
        const [rows, total] = await repos.list(
          { ...visibleTo(request.web.viewer), memberOf: user.id, orderBy: 'recentupdate' },
          pageSize,
          0,
        );
        return web.send(
          reply,
          <Dashboard
            page={web.page(request)}
            user={user}
            items={await withOwners(rows)}
            total={total}
            feed={await deps.feed(user, request.web.viewer)}
          />,
        );
      }
      return explorePage(request, reply);
    });

    app.get('/explore/repos', async (request, reply) => {
      return explorePage(request, reply);
    });

    const ownersFor = (user: UserRow) => repos.creatableOwners(user);

    app.get('/repo/create', async (request, reply) => {
      const user = web.requireUser(request);
      return web.send(
        reply,
        <CreateRepoPage
          page={web.page(request)}
          owners={await ownersFor(user)}
          values={{ uid: String(user.id) }}
          errors={{}}
        />,
      );
    });

    app.post('/repo/create', async (request, reply) => {
      const user = web.requireUser(request);
      const body = (request.body ?? {}) as Form;
      const values: Form = {
        uid: body['uid'],
        repo_name: (body['repo_name'] ?? '').trim(),
        description: body['description'] ?? '',
        private: body['private'],
        auto_init: body['auto_init'],
        default_branch: (body['default_branch'] ?? '').trim(),
      };
      const owners = await ownersFor(user);
      const owner = owners.find((o) => String(o.id) === values['uid']) ?? user;
      const errors: Form = {};
      try {
        const repo = await repos.create(user, owner, {
          name: values['repo_name']!,
          description: values['description'],
          private: values['private'] === 'on',
          autoInit: values['auto_init'] === 'on',
          defaultBranch: values['default_branch'] || undefined,
        });
        return web.redirect(reply, `/${owner.name}/${repo.name}`);
      } catch (err) {
        if (
          !(err instanceof AppError) ||
          !['invalid', 'conflict', 'forbidden', 'bad_request'].includes(err.kind)
        ) {
          throw err;
        }
        const m = /^\[(\w+)\]: (.*)$/.exec(err.message);
        if (m?.[1] === 'DefaultBranch') errors['default_branch'] = m[2];
        else if (m) errors['repo_name'] = m[2];
        else if (err.kind === 'conflict') errors['repo_name'] = err.message;
        // The owner's repository limit (a user's or an organization's) is told beside the owner.
        else if (/maximum limit of repositories/.test(err.message)) errors['uid'] = err.message;
        else errors['form'] = err.message;
      }
      return web.send(
        reply,
        <CreateRepoPage page={web.page(request)} owners={owners} values={values} errors={errors} />,
        422,
      );
    });

    forkPages({ repos, forks, users })(app, web);

    app.get<{ Params: { owner: string } }>('/:owner', async (request, reply) => {
      const viewer = request.web.viewer;
      const name = request.params.owner;
      const account = await users.requireAccount(name);
      const visible =
        account.type === UserType.Organization
          ? await orgs.canSee(viewer, account)
          : users.canSee(viewer, account);
      if (!visible) throw new AppError('not_found', `The account ${name} does not exist.`);
      const pageNo = pageNumber((request.query as Form)['page']);
      const [rows, total] = await repos.list(
        { ...visibleTo(viewer), ownerId: account.id, orderBy: 'recentupdate' },
        pageSize,
        (pageNo - 1) * pageSize,
      );
      return web.send(
        reply,
        <ProfilePage
          page={web.page(request)}
          account={account}
          standing={account.type === UserType.Organization ? await orgs.standing(account, viewer) : undefined}
          items={await withOwners(rows)}
          total={total}
          pageNo={pageNo}
          pageSize={pageSize}
        />,
      );
    });
  };
}
