// Project boards in the web interface, at Forgejo's addresses: a repository's
// (/{owner}/{repo}/projects, for readers of its projects unit, changed by its writers), a user's or
// organization's (/{owner}/-/projects, for whoever may see the account; changed by the user, or by
// an organization's owners and members of teams with write access to projects, as Forgejo's unit
// permission), and the issue and pull request sidebar's project picker
// (POST /{owner}/{repo}/issues/projects with issue_ids and id, as Forgejo's). The routes themselves
// are board-routes.tsx's. An owner's board shows only the cards of repositories the viewer may read.
import type { FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, forbidden, invalidField, notFound } from '../errors.js';
import { openRepo, type OpenRepoDeps } from '../issues/open-repo.js';
import { canWriteIssues, type IssueService } from '../issues/service.js';
import type { LabelService } from '../labels/service.js';
import { OrgTabs } from '../orgs/pages.js';
import type { OrgService } from '../orgs/service.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoService } from '../repos/service.js';
import { ProfileHeader, UserTabs } from '../users/pages.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow } from '../users/tables.js';
import { formText, type PageRoutes } from '../web/plugin.js';
import type { Form, ShownCard } from './board.js';
import { boardRoutes, type Boards } from './board-routes.js';
import type { ProjectService } from './service.js';

export interface ProjectPagesDeps extends OpenRepoDeps {
  repos: Pick<RepoService, 'requireRepo' | 'list' | 'getByIds' | 'accessMany'>;
  users: Pick<UserService, 'getById' | 'getByIds' | 'requireAccount' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee' | 'standing' | 'unitMode'>;
  issues: Pick<IssueService, 'requireIssue' | 'getById'>;
  labels: Pick<LabelService, 'ofIssues'>;
  projects: ProjectService;
}

type Params = Record<string, string>;
type Cards = Parameters<Boards['show']>[0];

const issueIndex = (form: Form): number => {
  const index = (form['index'] ?? '').trim().replace(/^#/, '');
  if (!/^\d{1,15}$/.test(index)) throw invalidField('index', 'must be an issue number');
  return Number(index);
};

export function projectPages(deps: ProjectPagesDeps): PageRoutes {
  return (app, web) => {
    const { projects, repos, users, orgs, issues } = deps;
    /** The issue cards with their labels. */
    const labelled = async (cards: ShownCard[]): Promise<ShownCard[]> => {
      const ids = cards.flatMap((c) => (c.issueId === null ? [] : [c.issueId]));
      if (ids.length === 0) return cards;
      const byIssue = await deps.labels.ofIssues(ids);
      return cards.map((c) => (c.issueId === null ? c : { ...c, labels: byIssue.get(c.issueId) ?? [] }));
    };

    // A repository's boards.
    const repoBoards = async (request: FastifyRequest, need: 'read' | 'write'): Promise<Boards> => {
      const t = await openRepo(deps, request, 'repo.projects', need);
      if (!t.view.repo.has_projects)
        throw new AppError('not_found', 'the projects of this repository are turned off');
      const repo = t.view.repo;
      return {
        scope: { repoId: repo.id },
        base: `${t.base}/projects`,
        name: `${t.owner.name}/${repo.name}`,
        writer: t.view.access.mode >= 2 && (t.view.access.units.get('repo.projects') ?? 0) >= 2,
        header: <RepoHeader t={{ owner: t.owner, repo, access: t.view.access }} active="projects" />,
        repos: () => Promise.resolve(null),
        findIssue: async (form) => {
          const index = issueIndex(form);
          const issue = await issues.requireIssue(repo, index).catch(() => {
            throw invalidField('index', `#${index} does not exist`);
          });
          return { id: issue.id, repo };
        },
        show: (cards) =>
          labelled(
            cards.map((c) =>
              shown(c, `${t.base}/${c.is_pull ? 'pulls' : 'issues'}/${c.index}`, `#${c.index}`),
            ),
          ),
      };
    };

    // A user's or organization's boards.
    const ownerBoards = async (request: FastifyRequest, need: 'read' | 'write'): Promise<Boards> => {
      const viewer = request.web.viewer;
      const name = (request.params as Params)['owner'] ?? '';
      const owner = await users.requireAccount(name);
      const isOrg = owner.type === UserType.Organization;
      if (!(isOrg ? await orgs.canSee(viewer, owner) : users.canSee(viewer, owner)))
        throw notFound(`The account ${name} does not exist.`);
      const writer =
        viewer !== null &&
        (isOrg
          ? (await orgs.unitMode(owner, viewer, 'repo.projects')) >= 2
          : viewer.isAdmin || viewer.id === owner.id);
      if (need === 'write' && !writer) {
        web.requireUser(request);
        throw forbidden(
          isOrg ? 'must be allowed to change the projects of the organization' : 'must be the user',
        );
      }
      const header = await ownerHeader(request, owner);
      /** The owner's repositories the viewer may read, by id. */
      const readable = async () => {
        const [rows] = await repos.list(
          { ownerId: owner.id, viewerId: viewer === null ? null : viewer.isAdmin ? undefined : viewer.id },
          1000,
          0,
        );
        return rows;
      };
      return {
        scope: { ownerId: owner.id },
        base: `/${owner.name}/-/projects`,
        name: owner.name,
        writer,
        header,
        repos: async () => (await readable()).map((r) => r.name),
        findIssue: async (form) => {
          const repo = (await readable()).find((r) => r.name === (form['repo'] ?? ''));
          if (!repo) throw invalidField('repo', 'is not a repository of this owner');
          const index = issueIndex(form);
          const issue = await issues.requireIssue(repo, index).catch(() => {
            throw invalidField('index', `${repo.name}#${index} does not exist`);
          });
          return { id: issue.id, repo };
        },
        show: async (cards) => {
          const ids = [...new Set(cards.flatMap((c) => (c.repo_id === null ? [] : [c.repo_id])))];
          const rows = [...(await repos.getByIds(ids)).values()];
          const access = await repos.accessMany(rows, viewer, new Map([[owner.id, owner]]));
          const byId = new Map(rows.map((r) => [r.id, r]));
          return labelled(
            cards.flatMap((c) => {
              if (c.issue_id === null) return [shown(c, '', '')];
              const repo = byId.get(c.repo_id ?? 0);
              const unit = c.is_pull ? 'repo.pulls' : 'repo.issues';
              if (!repo || (access.get(repo.id)?.units.get(unit) ?? 0) < 1) return [];
              const href = `/${owner.name}/${repo.name}/${c.is_pull ? 'pulls' : 'issues'}/${c.index}`;
              return [shown(c, href, `${repo.name}#${c.index}`)];
            }),
          );
        },
      };
    };

    const ownerHeader = async (request: FastifyRequest, owner: UserRow): Promise<VNode> => (
      <>
        <ProfileHeader account={owner} />
        {owner.type === UserType.Organization ? (
          <OrgTabs org={owner} active="projects" standing={await orgs.standing(owner, request.web.viewer)} />
        ) : (
          <UserTabs user={owner} active="projects" />
        )}
      </>
    );

    boardRoutes(app, web, '/:owner/:repo/projects', projects, repoBoards);
    boardRoutes(app, web, '/:owner/-/projects', projects, ownerBoards);

    // The sidebar's picker: issue_ids (comma-separated issue ids of this repository) go to project
    // `id` (its default column), or off every project with id 0, as Forgejo's.
    app.post('/:owner/:repo/issues/projects', async (request, reply) => {
      web.requireUser(request);
      const p = request.params as Params;
      const view = await repos.requireRepo(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
      const owner = (await users.getById(view.repo.owner_id))!;
      const body = request.body as Record<string, unknown> | undefined;
      const ids = formText(body?.['issue_ids'])
        .split(',')
        .map((x) => Number(x.trim()))
        .filter((n) => Number.isSafeInteger(n) && n > 0);
      const projectId = Number(formText(body?.['id']) || '0');
      const found = await Promise.all(ids.map((id) => issues.getById(id)));
      const list = found.flatMap((i) => (i !== undefined && i.repo_id === view.repo.id ? [i] : []));
      if (list.length === 0) throw notFound('issue does not exist');
      const json = (request.headers.accept ?? '').includes('application/json');
      const first = list[0]!;
      const back = `/${owner.name}/${view.repo.name}/${first.is_pull ? 'pulls' : 'issues'}/${first.index}`;
      for (const issue of list) {
        if (!canWriteIssues(view.access, issue.is_pull)) throw forbidden('only writers may set the project');
      }
      try {
        if (!Number.isSafeInteger(projectId) || projectId < 0) throw invalidField('id', 'must be a project');
        for (const issue of list) await projects.assign(issue, view.repo, projectId);
      } catch (err) {
        if (json || !(err instanceof AppError) || err.kind !== 'invalid') throw err;
        return web.redirect(reply, back, { kind: 'error', text: err.message });
      }
      if (json) return reply.send({ ok: true });
      return web.redirect(reply, back);
    });
  };
}

function shown(c: Cards[number], href: string, ref: string): ShownCard {
  return {
    id: c.id,
    columnId: c.project_board_id,
    issueId: c.issue_id,
    note: c.note,
    title: c.title ?? '',
    href,
    ref,
    isPull: !!c.is_pull,
    isClosed: !!c.is_closed,
    isMerged: !!c.has_merged,
    labels: [],
  };
}
