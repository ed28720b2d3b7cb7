// The web pages of issues: the lists of issues and pull requests with the API's filters (state,
// labels, milestone, poster, assignee, search), the new issue form (with the repository's issue
// templates) and one issue with its timeline and sidebar. Everything goes through the issues
// services with the repository's own access checks, so what is hidden or refused by the API is
// hidden or refused here. The forms that change an issue are in form-pages.tsx; the parts pull
// requests share in thread.tsx and sidebar.tsx.
import { ProjectBox, projectBoxData } from '../projects/sidebar.js';
import type { OrgService } from '../orgs/service.js';
import type { ProjectService } from '../projects/service.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import { LabelPill, labelsFor } from '../labels/pages.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { AttachmentService } from '../attachments/service.js';
import type { RepoService } from '../repos/service.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoMetaService } from '../repometa/service.js';
import type { IssueTemplate } from '../repometa/issue-templates.js';
import type { UserService } from '../users/service.js';
import { formList, formText, type PageRoutes } from '../web/plugin.js';
import { CsrfField, Layout } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { Icon } from '../web/icons.js';
import { canWriteIssues, type IssueService } from './service.js';
import type { IssueListService } from './lists.js';
import type { CommentService } from './comments.js';
import { openRepo, type OpenedRepo } from './open-repo.js';
import { Author, CommentForm, IssueHeading, MarkdownField, Timeline, threadData } from './thread.js';
import { LabelsBox, MetaBox, sidebarChoices } from './sidebar.js';
import { TemplateChooser, TemplateFields, composeBody, missingFields } from './template-form.js';
import type { IssueRow } from './tables.js';

type Params = Record<string, string>;

/**
 * A filter of the list as a choice among what there is (labels, milestones, people), "All" first;
 * a value from the address that is not among them (a name typed into it) is kept as a choice.
 */
function Picker(props: { name: string; label: string; value: string; options: string[] }): VNode {
  const options =
    props.value && !props.options.includes(props.value) ? [props.value, ...props.options] : props.options;
  return (
    <label class="picker">
      <span>{props.label}</span>
      <select name={props.name}>
        <option value="">All</option>
        {options.map((o) => (
          <option value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

export interface IssuePagesDeps {
  repos: RepoService;
  users: UserService;
  issues: IssueService;
  issueLists: IssueListService;
  issueComments: CommentService;
  labels: LabelService;
  milestones: MilestoneService;
  projects: Pick<ProjectService, 'projectsOf' | 'choicesFor'>;
  orgs: Pick<OrgService, 'canSee'>;
  attachments: AttachmentService;
  repoMeta: Pick<RepoMetaService, 'issueTemplates' | 'issueConfig'>;
  /** Issues per page of a list. */
  pageSize: number;
  rootUrl: string;
}

export function issuePages(deps: IssuePagesDeps): PageRoutes {
  return (app, web) => {
    const { issues, issueLists, users, repoMeta, pageSize } = deps;
    for (const pulls of [false, true]) {
      const kind = pulls ? 'pulls' : 'issues';
      const noun = pulls ? 'Pull requests' : 'Issues';

      app.get(`/:owner/:repo/${kind}`, async (request, reply) => {
        const { view, owner, base } = await openRepo(deps, request, pulls ? 'repo.pulls' : 'repo.issues');
        const enabled = pulls ? view.repo.has_pull_requests : view.repo.has_issues;
        if (!enabled) throw notFound(`${noun} are turned off in this repository`);
        const q = request.query as Record<string, unknown>;
        const state = formText(q['state']) === 'closed' ? 'closed' : 'open';
        const filters = {
          q: formText(q['q']).trim(),
          labels: formText(q['labels']).trim(),
          milestone: formText(q['milestone']).trim(),
          poster: formText(q['poster']).trim(),
          assignee: formText(q['assignee']).trim(),
        };
        const pageNo = pageNumber(q['page']);
        let rows: IssueRow[] = [];
        let total = 0;
        // Both states' counts for the switch: this page's total, and one row of the other state.
        let otherTotal = 0;
        const criteria = {
          type: pulls ? ('pulls' as const) : ('issues' as const),
          q: filters.q || undefined,
          labels: filters.labels || undefined,
          milestones: filters.milestone || undefined,
          createdBy: filters.poster || undefined,
          assignedBy: filters.assignee || undefined,
        };
        try {
          [[rows, total], [, otherTotal]] = await Promise.all([
            issueLists.list(
              view.repo,
              { ...criteria, state },
              {
                page: pageNo,
                limit: pageSize,
                offset: (pageNo - 1) * pageSize,
              },
            ),
            issueLists.list(
              view.repo,
              { ...criteria, state: state === 'open' ? 'closed' : 'open' },
              { page: 1, limit: 1, offset: 0 },
            ),
          ]);
        } catch (err) {
          // An unknown user in a filter matches nothing, as an empty list (not an error page).
          if (!(err instanceof AppError)) throw err;
        }
        const counts =
          state === 'open' ? { open: total, closed: otherTotal } : { open: otherTotal, closed: total };
        const [labelChoices, [milestoneChoices], people] = await Promise.all([
          labelsFor(deps, view.repo, owner),
          deps.milestones.list(view.repo, { state: 'all' }, { page: 1, limit: 1000, offset: 0 }),
          deps.repos.assignees(view.repo),
        ]);
        const posters = await users.getByIds([
          ...new Set(rows.map((r) => r.poster_id).filter((id): id is number => id !== null)),
        ]);
        const labels = await deps.labels.ofIssues(rows.map((r) => r.id));
        const kept = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
        const query = new URLSearchParams({ state, ...kept }).toString();
        const stateLink = (s: string) =>
          `${base}/${kind}?${new URLSearchParams({ ...kept, state: s }).toString()}`;
        return web.send(
          reply,
          <Layout page={web.page(request)} title={`${noun} · ${owner.name}/${view.repo.name}`}>
            <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active={kind} />
            <div class="actions">
              <nav class="tabs" aria-label="State">
                <a href={stateLink('open')} aria-current={state === 'open' ? 'page' : undefined}>
                  <Icon name={pulls ? 'pull' : 'issue-open'} /> {counts.open} Open
                </a>
                <a href={stateLink('closed')} aria-current={state === 'closed' ? 'page' : undefined}>
                  <Icon name={pulls ? 'merged' : 'issue-closed'} /> {counts.closed} Closed
                </a>
              </nav>
              {!pulls ? (
                <>
                  <a href={`${base}/labels`}>Labels</a> <a href={`${base}/milestones`}>Milestones</a>
                </>
              ) : null}
              {request.web.user && !view.repo.is_archived ? (
                <a
                  class="button primary"
                  href={
                    pulls
                      ? `${base}/compare/${encodeURIComponent(view.repo.default_branch)}...${encodeURIComponent(view.repo.default_branch)}`
                      : `${base}/issues/new`
                  }
                >
                  {pulls ? 'New pull request' : 'New issue'}
                </a>
              ) : null}
            </div>
            <form method="get" class="search filters" role="search">
              <input type="hidden" name="state" value={state} />
              <input
                type="search"
                name="q"
                value={filters.q}
                aria-label={`Search ${noun.toLowerCase()}`}
                placeholder="Search…"
              />
              <Picker
                name="labels"
                label="Label"
                value={filters.labels}
                options={labelChoices.map((l) => l.name)}
              />
              <Picker
                name="milestone"
                label="Milestone"
                value={filters.milestone}
                options={milestoneChoices.map((m) => m.name)}
              />
              <Picker
                name="poster"
                label="Author"
                value={filters.poster}
                options={people.map((u) => u.name)}
              />
              <Picker
                name="assignee"
                label="Assignee"
                value={filters.assignee}
                options={people.map((u) => u.name)}
              />
              <button type="submit">Filter</button>
            </form>
            {rows.length === 0 ? <p class="empty">Nothing here.</p> : null}
            <ul class="list">
              {rows.map((i) => (
                <li>
                  <div>
                    <a class="title" href={`${base}/${kind}/${i.index}`}>
                      {i.title}
                    </a>
                    {(labels.get(i.id) ?? []).map((l) => (
                      <LabelPill label={l} href={`${base}/${kind}?labels=${encodeURIComponent(l.name)}`} />
                    ))}
                    <p class="muted">
                      #{i.index} opened <When unix={i.created_unix} /> by{' '}
                      <Author users={posters} id={i.poster_id} /> · {i.num_comments}{' '}
                      {i.num_comments === 1 ? 'comment' : 'comments'}
                    </p>
                  </div>
                </li>
              ))}
            </ul>
            <Pager path={`${base}/${kind}`} page={pageNo} pageSize={pageSize} total={total} query={query} />
          </Layout>,
        );
      });
    }

    const newIssueForm = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: OpenedRepo,
      values: { title: string; content: string; labels: string[]; form?: Record<string, unknown> },
      error?: string,
      template?: IssueTemplate,
    ) => {
      const { view, owner, base } = t;
      const choices = canWriteIssues(view.access) ? await labelsFor(deps, view.repo, owner) : [];
      const page = web.page(request);
      return web.send(
        reply,
        <Layout page={page} title={`New issue · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <h2>New issue</h2>
          {error ? (
            <p class="flash error" role="alert">
              {error}
            </p>
          ) : null}
          <form method="post" action={`${base}/issues/new`} class="card">
            <CsrfField page={page} />
            <div class="field">
              <label for="f-title">Title</label>
              <input id="f-title" name="title" type="text" required value={values.title} autoFocus />
            </div>
            {template ? <input type="hidden" name="template" value={template.file_name} /> : null}
            {template?.body ? (
              <TemplateFields fields={template.body} values={values.form ?? {}} />
            ) : (
              <MarkdownField id="f-content" name="content" label="Description" value={values.content} />
            )}
            {choices.length ? (
              <fieldset class="label-choices">
                <legend>Labels</legend>
                {choices.map((l) => (
                  <label>
                    <input
                      type="checkbox"
                      name="label"
                      value={String(l.id)}
                      checked={values.labels.includes(String(l.id))}
                    />{' '}
                    <LabelPill label={l} />
                  </label>
                ))}
              </fieldset>
            ) : null}
            <button type="submit" class="primary">
              Create issue
            </button>
          </form>
        </Layout>,
        error ? 422 : 200,
      );
    };

    /** The label ids of a template's label names (those the repository has). */
    const templateLabels = async (t: OpenedRepo, template: IssueTemplate) => {
      const names = new Set(template.labels.map((l) => l.toLowerCase()));
      return (await labelsFor(deps, t.view.repo, t.owner))
        .filter((l) => names.has(l.name.toLowerCase()))
        .map((l) => String(l.id));
    };

    app.get('/:owner/:repo/issues/new/choose', async (request, reply) => {
      web.requireUser(request);
      const t = await openRepo(deps, request, 'repo.issues');
      if (!t.view.repo.has_issues) throw notFound('Issues are turned off in this repository');
      const [{ templates }, { config }] = await Promise.all([
        repoMeta.issueTemplates(t.view.repo),
        repoMeta.issueConfig(t.view.repo),
      ]);
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`New issue · ${t.owner.name}/${t.view.repo.name}`}>
          <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="issues" />
          <h2>New issue: choose a template</h2>
          <TemplateChooser base={t.base} templates={templates} config={config} />
        </Layout>,
      );
    });

    app.get('/:owner/:repo/issues/new', async (request, reply) => {
      web.requireUser(request);
      const t = await openRepo(deps, request, 'repo.issues');
      if (!t.view.repo.has_issues) throw notFound('Issues are turned off in this repository');
      const q = request.query as Record<string, unknown>;
      const wanted = q['template'];
      const { templates } = await repoMeta.issueTemplates(t.view.repo);
      // With templates, "New issue" first offers them (a blank issue is `?blank=1`).
      if (templates.length && wanted === undefined && q['blank'] === undefined)
        return web.redirect(reply, `${t.base}/issues/new/choose`);
      const template = templates.find((x) => x.file_name === wanted);
      if (!template) return newIssueForm(request, reply, t, { title: '', content: '', labels: [] });
      return newIssueForm(
        request,
        reply,
        t,
        { title: template.title, content: template.content, labels: await templateLabels(t, template) },
        undefined,
        template,
      );
    });

    app.post('/:owner/:repo/issues/new', async (request, reply) => {
      const user = web.requireUser(request);
      const t = await openRepo(deps, request, 'repo.issues');
      const body = request.body as Record<string, unknown>;
      const values = {
        title: formText(body['title']),
        content: formText(body['content']),
        labels: formList(body['label']),
        form: body,
      };
      const wanted = formText(body['template']);
      const template = wanted
        ? (await repoMeta.issueTemplates(t.view.repo)).templates.find((x) => x.file_name === wanted)
        : undefined;
      if (template?.body) {
        const missing = missingFields(template.body, body);
        if (missing.length)
          return newIssueForm(request, reply, t, values, `Required: ${missing.join(', ')}`, template);
        values.content = composeBody(template.body, body);
        if (!values.labels.length) values.labels = await templateLabels(t, template);
      }
      try {
        const issue = await issues.create(t.view, user, {
          title: values.title,
          body: values.content,
          labels: values.labels.map(Number).filter((n) => Number.isSafeInteger(n) && n > 0),
          ...(template?.ref && template.ref !== 'refs/heads/' ? { ref: template.ref } : {}),
        });
        return web.redirect(reply, `${t.base}/issues/${issue.index}`);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'invalid')
          return newIssueForm(request, reply, t, values, err.message, template);
        throw err;
      }
    });

    app.get('/:owner/:repo/issues/:index', async (request, reply) => {
      const t = await openRepo(deps, request, 'repo.issues');
      const { view, owner, base } = t;
      const issue = await issues.requireVisibleIssue(view, Number((request.params as Params)['index']));
      // A pull request's number under /issues goes to where it lives, as Forgejo does.
      if (issue.is_pull) return web.redirect(reply, `${base}/pulls/${issue.index}`);
      const d = await threadData(deps, issue);
      const page = web.page(request);
      const user = request.web.user;
      const writer = canWriteIssues(view.access);
      return web.send(
        reply,
        <Layout page={page} title={`${issue.title} · Issues · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo, access: view.access }} active="issues" />
          <IssueHeading
            page={page}
            base={base}
            issue={issue}
            canEdit={!!user && (writer || issue.poster_id === user.id)}
          />
          <div class="issue-layout">
            <div>
              <Timeline t={{ page, issue, base, d, rootUrl: deps.rootUrl, writer }} />
              <CommentForm
                page={page}
                base={base}
                issue={issue}
                canChangeState={!!user && (writer || issue.poster_id === user.id)}
              />
            </div>
            <aside class="sidebar">
              <LabelsBox
                page={page}
                base={base}
                issue={issue}
                current={d.labels}
                choices={user && writer ? await labelsFor(deps, view.repo, owner) : null}
              />
              <MetaBox
                page={page}
                base={base}
                issue={issue}
                d={d}
                choices={await sidebarChoices(deps, view.repo, !!user && writer)}
              />
              <ProjectBox
                page={page}
                base={base}
                ownerName={owner.name}
                issue={issue}
                data={await projectBoxData(
                  deps,
                  view.repo,
                  owner,
                  request.web.viewer,
                  issue.id,
                  !!user && writer,
                )}
              />
            </aside>
          </div>
        </Layout>,
      );
    });
  };
}
