// The web pages of issues (and the parts pull requests share): the lists with the API's filters
// (state, labels, milestone, poster, assignee, search), one issue with its timeline (comments and
// events) rendered, and the forms that write: new issue, comment, close and reopen, title, labels.
// Everything goes through the issues service with the repository's own access checks, so what is
// hidden or refused by the API is hidden or refused here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import type { AppContext } from '../app/context.js';
import { AppError, forbidden, notFound } from '../errors.js';
import { LabelPill, labelsFor } from '../labels/pages.js';
import type { LabelRow } from '../labels/tables.js';
import { renderMarkdown } from '../markup/render.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { UserRow } from '../users/tables.js';
import { downloadUrl } from '../attachments/schemas.js';
import type { AttachmentRow } from '../attachments/tables.js';

import { formList, formText, uploadsOf, type Web } from '../web/plugin.js';
import fs from 'node:fs';
import type { MilestoneRow } from '../milestones/tables.js';
import type { RepoRow } from '../repos/tables.js';
import { CsrfField, Layout, type PageContext } from '../web/layout.js';
import { Pager, When, pageNumber } from '../web/components.js';
import { canWriteIssues } from './service.js';
import type { IssueTemplate } from '../repometa/issue-templates.js';
import { TemplateChooser, TemplateFields, composeBody, missingFields } from './template-form.js';
import type { CommentRow, IssueRow } from './tables.js';
import { secondsToText } from './tracking-schemas.js';
import { CommentType } from './tables.js';

type Params = Record<string, string>;

export function Author(props: { users: Map<number, UserRow>; id: number | null }): VNode {
  const u = props.id !== null ? props.users.get(props.id) : undefined;
  return u ? <a href={`/${u.name}`}>{u.name}</a> : <span>Ghost</span>;
}

/** A repository page's starting point: the repository as the viewer may see it, and its owner. */
export async function openRepo(
  web: { ctx: Pick<AppContext, 'repos' | 'users'> },
  request: FastifyRequest,
  unit: string,
) {
  const p = request.params as Params;
  const view = await web.ctx.repos.requireRepo(
    p['owner'] ?? '',
    p['repo'] ?? '',
    request.web.viewer,
    'read',
    unit,
  );
  const owner = (await web.ctx.users.getById(view.repo.owner_id))!;
  return { view, owner, base: `/${owner.name}/${view.repo.name}` };
}

/** Everything the timeline of one issue shows: its events, the people and labels they name. */
export async function threadData(
  ctx: Pick<AppContext, 'issues' | 'users' | 'labels' | 'milestones' | 'attachments'>,
  issue: IssueRow,
) {
  const [events] = await ctx.issues.timeline(issue, {}, { page: 1, limit: 100_000, offset: 0 });
  const people = await ctx.users.getByIds(
    [issue.poster_id, ...events.map((c) => c.poster_id), ...events.map((c) => c.assignee_id)].filter(
      (id): id is number => id !== null && id !== undefined,
    ),
  );
  const labelIds = [...new Set(events.map((c) => c.label_id).filter((id): id is number => !!id))];
  const eventLabels = new Map((await ctx.labels.getByIds(labelIds)).map((l) => [l.id, l]));
  const commentIds = events.filter((c) => c.type === CommentType.comment).map((c) => c.id);
  const [labels, assigneeIds, milestones, reactions, issueFiles, commentFiles] = await Promise.all([
    ctx.labels.ofIssue(issue.id),
    ctx.issues.assigneesOf([issue.id]),
    ctx.milestones.getByIds(issue.milestone_id ? [issue.milestone_id] : []),
    ctx.issues.allReactions(issue),
    ctx.attachments.ofIssues([issue.id]),
    ctx.attachments.ofComments(commentIds),
  ]);
  const assignees = [...(await ctx.users.getByIds(assigneeIds.get(issue.id) ?? [])).values()];
  return {
    events,
    people,
    eventLabels,
    labels,
    assignees,
    milestone: issue.milestone_id ? milestones.get(issue.milestone_id) : undefined,
    reactions,
    files: { issue: issueFiles.get(issue.id) ?? [], comments: commentFiles },
  };
}
export type ThreadData = Awaited<ReturnType<typeof threadData>>;

/** The seconds of a time event ("|<seconds>", as Forgejo writes them) as text. */
const spent = (content: string) =>
  content.startsWith('|') ? secondsToText(Number(content.slice(1)) || 0) || '0 seconds' : content;

function Event(props: { c: CommentRow; d: ThreadData; base: string }): VNode | null {
  const { c, d } = props;
  const who = <Author users={d.people} id={c.poster_id} />;
  const when = <When unix={c.created_unix} />;
  const line = (children: ComponentChildren) => (
    <p class="event" id={`issuecomment-${c.id}`}>
      {who} {children} {when}
    </p>
  );
  switch (c.type) {
    case CommentType.close:
      return line(
        c.commit_sha ? (
          <>
            closed this in <a href={`${props.base}/commit/${c.commit_sha}`}>{c.commit_sha.slice(0, 10)}</a>
          </>
        ) : (
          'closed this'
        ),
      );
    case CommentType.reopen:
      return line('reopened this');
    case CommentType.label: {
      const l = c.label_id ? d.eventLabels.get(c.label_id) : undefined;
      return l
        ? line(
            <>
              {c.content === '1' ? 'added' : 'removed'} the <LabelPill label={l} /> label
            </>,
          )
        : null;
    }
    case CommentType.assignees:
      return line(
        c.removed_assignee ? (
          <>
            unassigned <Author users={d.people} id={c.assignee_id} />
          </>
        ) : (
          <>
            assigned <Author users={d.people} id={c.assignee_id} />
          </>
        ),
      );
    case CommentType.milestone:
      return line('changed the milestone');
    case CommentType.changeTitle:
      return line(
        <>
          changed the title from <del>{c.old_title}</del> to <ins>{c.new_title}</ins>
        </>,
      );
    case CommentType.commitRef:
      return line(
        <>
          referenced this from commit{' '}
          <a href={`${props.base}/commit/${c.commit_sha}`}>{c.commit_sha.slice(0, 10)}</a>
        </>,
      );
    case CommentType.deleteBranch:
      return line(
        <>
          deleted branch <code>{c.old_ref}</code>
        </>,
      );
    case CommentType.lock:
      return line('locked this conversation');
    case CommentType.unlock:
      return line('unlocked this conversation');
    case CommentType.addedDeadline:
    case CommentType.modifiedDeadline:
      return line('set the due date');
    case CommentType.pullScheduledMerge:
      return line('scheduled this pull request to merge when the checks succeed');
    case CommentType.pullCancelScheduledMerge:
      return line('cancelled the scheduled merge');
    case CommentType.removedDeadline:
      return line('removed the due date');
    case CommentType.issueRef:
    case CommentType.pullRef:
    case CommentType.commentRef:
      return line('referenced this');
    case CommentType.startTracking:
      return line('started working');
    case CommentType.stopTracking:
      return line(`stopped working, spent ${spent(c.content)}`);
    case CommentType.cancelTracking:
      return line('cancelled time tracking');
    case CommentType.addTimeManual:
      return line(`added spent time ${spent(c.content)}`);
    case CommentType.deleteTimeManual:
      return line(`deleted spent time ${spent(c.content)}`);
    case CommentType.addDependency:
      return line('added a new dependency');
    case CommentType.removeDependency:
      return line('removed a dependency');
    default:
      return null;
  }
}

const REACTION_ICONS: Record<string, string> = {
  '+1': '👍',
  '-1': '👎',
  laugh: '😄',
  hooray: '🎉',
  confused: '😕',
  heart: '❤️',
  rocket: '🚀',
  eyes: '👀',
};

/** The reactions to the issue (commentId 0) or a comment: counts, and buttons that toggle. */
function Reactions(props: { t: ThreadCtx; commentId: number }): VNode {
  const { t } = props;
  const rows = t.d.reactions.filter((r) => r.comment_id === props.commentId);
  const counts = new Map<string, { n: number; mine: boolean }>();
  for (const r of rows) {
    const c = counts.get(r.type) ?? { n: 0, mine: false };
    c.n++;
    if (t.page.user && r.user_id === t.page.user.id) c.mine = true;
    counts.set(r.type, c);
  }
  const button = (type: string, label: string, pressed: boolean) => (
    <form method="post" action={`${t.base}/issues/${t.issue.index}/reactions`} class="inline">
      <CsrfField page={t.page} />
      <input type="hidden" name="content" value={type} />
      <input type="hidden" name="comment_id" value={String(props.commentId)} />
      <button
        type="submit"
        class="reaction"
        aria-pressed={pressed ? 'true' : 'false'}
        aria-label={`${type} reaction`}
      >
        {label}
      </button>
    </form>
  );
  return (
    <div class="reactions">
      {[...counts].map(([type, c]) =>
        t.page.user ? (
          button(type, `${REACTION_ICONS[type] ?? type} ${c.n}`, c.mine)
        ) : (
          <span class="reaction" aria-label={`${c.n} ${type}`}>
            {REACTION_ICONS[type] ?? type} {c.n}
          </span>
        ),
      )}
      {t.page.user ? (
        <details class="inline">
          <summary aria-label="Add a reaction">☺+</summary>
          {Object.entries(REACTION_ICONS).map(([type, icon]) =>
            button(type, icon, counts.get(type)?.mine ?? false),
          )}
        </details>
      ) : null}
    </div>
  );
}

function Files(props: { files: AttachmentRow[]; rootUrl: string }): VNode | null {
  if (!props.files.length) return null;
  return (
    <ul class="attachments" aria-label="Attachments">
      {props.files.map((a) => (
        <li>
          <a href={downloadUrl(a, props.rootUrl)}>{a.name}</a> <span class="muted">({a.size} bytes)</span>
        </li>
      ))}
    </ul>
  );
}

/** A markdown text box with a preview button (the page's script renders the preview). */
export function MarkdownField(props: {
  id: string;
  name: string;
  label: string;
  value?: string;
  placeholder?: string;
}): VNode {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <textarea id={props.id} name={props.name} placeholder={props.placeholder ?? 'Markdown'}>
        {props.value ?? ''}
      </textarea>
      <div class="actions">
        <button type="button" class="link" data-preview={props.id} hidden>
          Preview
        </button>
      </div>
      <div class="markdown preview" id={`${props.id}-preview`} hidden aria-live="polite" />
    </div>
  );
}

/** What each part of a thread needs: the viewer's page, the issue, where its repository is. */
export interface ThreadCtx {
  page: PageContext;
  issue: IssueRow;
  base: string;
  d: ThreadData;
  rootUrl: string;
  /** Whether the viewer writes issues (or pull requests) here. */
  writer: boolean;
}

function EditForm(props: { t: ThreadCtx; action: string; value: string; id: string }): VNode {
  return (
    <details class="edit">
      <summary>Edit</summary>
      <form method="post" action={props.action}>
        <CsrfField page={props.t.page} />
        <MarkdownField id={props.id} name="content" label="Text" value={props.value} />
        <button type="submit">Save</button>
      </form>
    </details>
  );
}

/** The issue's text, then its timeline: comments as cards, events as one line each. */
export function Timeline(props: { t: ThreadCtx }): VNode {
  const { t } = props;
  const { issue, d } = t;
  const mayEdit = (posterId: number | null) => !!t.page.user && (t.writer || posterId === t.page.user.id);
  return (
    <section aria-label="Conversation">
      <article class="card comment">
        <p class="muted">
          <Author users={d.people} id={issue.poster_id} /> opened this <When unix={issue.created_unix} />
        </p>
        <div
          class="markdown"
          dangerouslySetInnerHTML={{ __html: renderMarkdown(issue.content || '*No description.*') }}
        />
        <Files files={d.files.issue} rootUrl={t.rootUrl} />
        <Reactions t={t} commentId={0} />
        {mayEdit(issue.poster_id) ? (
          <EditForm
            t={t}
            action={`${t.base}/issues/${issue.index}/content`}
            value={issue.content}
            id="edit-issue"
          />
        ) : null}
      </article>
      {d.events.map((c) =>
        c.type === CommentType.comment ? (
          <article class="card comment" id={`issuecomment-${c.id}`}>
            <p class="muted">
              <Author users={d.people} id={c.poster_id} /> commented <When unix={c.created_unix} />
            </p>
            <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(c.content) }} />
            <Files files={d.files.comments.get(c.id) ?? []} rootUrl={t.rootUrl} />
            <Reactions t={t} commentId={c.id} />
            {mayEdit(c.poster_id) ? (
              <EditForm t={t} action={`${t.base}/comments/${c.id}`} value={c.content} id={`edit-${c.id}`} />
            ) : null}
          </article>
        ) : (
          <Event c={c} d={d} base={t.base} />
        ),
      )}
    </section>
  );
}

/** The comment form, with close/reopen for those who may change the state. */
export function CommentForm(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  canChangeState: boolean;
}): VNode {
  const { page, issue } = props;
  if (!page.user)
    return (
      <p class="card">
        <a href={`/user/login?redirect_to=${encodeURIComponent(page.path)}`}>Sign in</a> to join this
        conversation.
      </p>
    );
  return (
    <form
      method="post"
      action={`${props.base}/issues/${issue.index}/comments`}
      class="card comment-form"
      enctype="multipart/form-data"
    >
      <CsrfField page={page} />
      <MarkdownField
        id="comment-content"
        name="content"
        label="Add a comment"
        placeholder="Leave a comment (Markdown)"
      />
      <div class="field">
        <label for="comment-files">Attach files</label>
        <input id="comment-files" type="file" name="files" multiple />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Comment
        </button>
        {props.canChangeState ? (
          <button type="submit" name="status" value={issue.is_closed ? 'reopen' : 'close'}>
            {issue.is_closed ? 'Reopen' : 'Close'}
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** The labels box of the sidebar: pills, and for writers a form of checkboxes. */
export function LabelsBox(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  current: LabelRow[];
  choices: LabelRow[] | null;
}): VNode {
  const { current, choices } = props;
  const on = new Set(current.map((l) => l.id));
  return (
    <section class="card" aria-label="Labels">
      <h3>Labels</h3>
      {current.length ? (
        <p>
          {current.map((l) => (
            <LabelPill
              label={l}
              href={`${props.base}/${props.issue.is_pull ? 'pulls' : 'issues'}?labels=${encodeURIComponent(l.name)}`}
            />
          ))}
        </p>
      ) : (
        <p class="muted">None yet</p>
      )}
      {choices && choices.length ? (
        <form method="post" action={`${props.base}/issues/${props.issue.index}/labels`}>
          <CsrfField page={props.page} />
          <fieldset class="label-choices">
            <legend class="muted">Set labels</legend>
            {choices.map((l) => (
              <label>
                <input type="checkbox" name="label" value={String(l.id)} checked={on.has(l.id)} />{' '}
                <LabelPill label={l} />
              </label>
            ))}
          </fieldset>
          <button type="submit">Apply labels</button>
        </form>
      ) : null}
    </section>
  );
}

/** Milestone and assignees of the sidebar; writers get a form to change them. */
export function MetaBox(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  d: ThreadData;
  choices: { milestones: MilestoneRow[]; people: UserRow[] } | null;
}): VNode {
  const { d, choices, issue } = props;
  const chosen = new Set(d.assignees.map((u) => u.id));
  return (
    <>
      <section class="card" aria-label="Milestone">
        <h3>Milestone</h3>
        {d.milestone ? (
          <p>
            <a href={`${props.base}/milestone/${d.milestone.id}`}>{d.milestone.name}</a>
          </p>
        ) : (
          <p class="muted">No milestone</p>
        )}
        {choices && choices.milestones.length ? (
          <form method="post" action={`${props.base}/issues/${issue.index}/milestone`} class="actions">
            <CsrfField page={props.page} />
            <select name="milestone" aria-label="Set the milestone">
              <option value="0">No milestone</option>
              {choices.milestones.map((m) => (
                <option value={String(m.id)} selected={m.id === issue.milestone_id}>
                  {m.name}
                </option>
              ))}
            </select>
            <button type="submit">Set</button>
          </form>
        ) : null}
      </section>
      <section class="card" aria-label="Assignees">
        <h3>Assignees</h3>
        {d.assignees.length ? (
          <p>
            {d.assignees.map((u) => (
              <>
                <a href={`/${u.name}`}>{u.name}</a>{' '}
              </>
            ))}
          </p>
        ) : (
          <p class="muted">No one</p>
        )}
        {choices && choices.people.length ? (
          <form method="post" action={`${props.base}/issues/${issue.index}/assignees`}>
            <CsrfField page={props.page} />
            <fieldset class="label-choices">
              <legend class="muted">Assign</legend>
              {choices.people.map((u) => (
                <label>
                  <input type="checkbox" name="assignee" value={u.name} checked={chosen.has(u.id)} /> {u.name}
                </label>
              ))}
            </fieldset>
            <button type="submit">Apply assignees</button>
          </form>
        ) : null}
      </section>
    </>
  );
}

/** What writers may choose from in the sidebar (null for others). */
export async function sidebarChoices(
  ctx: Pick<AppContext, 'milestones' | 'repos'>,
  repo: RepoRow,
  writer: boolean,
) {
  if (!writer) return null;
  const [[milestones], people] = await Promise.all([
    ctx.milestones.list(repo, { state: 'open' }, { page: 1, limit: 1000, offset: 0 }),
    ctx.repos.assignees(repo),
  ]);
  return { milestones, people };
}

export function issuePages(app: FastifyInstance, web: Web): void {
  const { ctx } = web;
  const { issues, users } = ctx;
  const pageSize = ctx.config.api.defaultPagingNum;

  for (const pulls of [false, true]) {
    const kind = pulls ? 'pulls' : 'issues';
    const noun = pulls ? 'Pull requests' : 'Issues';

    app.get(`/:owner/:repo/${kind}`, async (request, reply) => {
      const { view, owner, base } = await openRepo(web, request, pulls ? 'repo.pulls' : 'repo.issues');
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
      try {
        [rows, total] = await issues.list(
          view.repo,
          {
            state,
            type: pulls ? 'pulls' : 'issues',
            q: filters.q || undefined,
            labels: filters.labels || undefined,
            milestones: filters.milestone || undefined,
            createdBy: filters.poster || undefined,
            assignedBy: filters.assignee || undefined,
          },
          { page: pageNo, limit: pageSize, offset: (pageNo - 1) * pageSize },
        );
      } catch (err) {
        // An unknown user in a filter matches nothing, as an empty list (not an error page).
        if (!(err instanceof AppError)) throw err;
      }
      const posters = await users.getByIds([
        ...new Set(rows.map((r) => r.poster_id).filter((id): id is number => id !== null)),
      ]);
      const labels = await ctx.labels.ofIssues(rows.map((r) => r.id));
      const kept = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
      const query = new URLSearchParams({ state, ...kept }).toString();
      const stateLink = (s: string) =>
        `${base}/${kind}?${new URLSearchParams({ ...kept, state: s }).toString()}`;
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`${noun} · ${owner.name}/${view.repo.name}`}>
          <RepoHeader t={{ owner, repo: view.repo }} active={kind} />
          <div class="actions">
            <nav class="tabs" aria-label="State">
              <a href={stateLink('open')} aria-current={state === 'open' ? 'page' : undefined}>
                Open
              </a>
              <a href={stateLink('closed')} aria-current={state === 'closed' ? 'page' : undefined}>
                Closed
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
            <input
              type="text"
              name="labels"
              value={filters.labels}
              aria-label="Labels (comma-separated)"
              placeholder="Labels"
            />
            <input
              type="text"
              name="milestone"
              value={filters.milestone}
              aria-label="Milestone"
              placeholder="Milestone"
            />
            <input
              type="text"
              name="poster"
              value={filters.poster}
              aria-label="Poster"
              placeholder="Poster"
            />
            <input
              type="text"
              name="assignee"
              value={filters.assignee}
              aria-label="Assignee"
              placeholder="Assignee"
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
                    <Author users={posters} id={i.poster_id} /> · {i.num_comments} comments
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
    t: Awaited<ReturnType<typeof openRepo>>,
    values: { title: string; content: string; labels: string[]; form?: Record<string, unknown> },
    error?: string,
    template?: IssueTemplate,
  ) => {
    const { view, owner, base } = t;
    const choices = canWriteIssues(view.access) ? await labelsFor(ctx, view.repo, owner) : [];
    const page = web.page(request);
    return web.send(
      reply,
      <Layout page={page} title={`New issue · ${owner.name}/${view.repo.name}`}>
        <RepoHeader t={{ owner, repo: view.repo }} active="issues" />
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
  const templateLabels = async (t: Awaited<ReturnType<typeof openRepo>>, template: IssueTemplate) => {
    const names = new Set(template.labels.map((l) => l.toLowerCase()));
    return (await labelsFor(ctx, t.view.repo, t.owner))
      .filter((l) => names.has(l.name.toLowerCase()))
      .map((l) => String(l.id));
  };

  app.get('/:owner/:repo/issues/new/choose', async (request, reply) => {
    web.requireUser(request);
    const t = await openRepo(web, request, 'repo.issues');
    if (!t.view.repo.has_issues) throw notFound('Issues are turned off in this repository');
    const [{ templates }, { config }] = await Promise.all([
      ctx.repoMeta.issueTemplates(t.view.repo),
      ctx.repoMeta.issueConfig(t.view.repo),
    ]);
    return web.send(
      reply,
      <Layout page={web.page(request)} title={`New issue · ${t.owner.name}/${t.view.repo.name}`}>
        <RepoHeader t={{ owner: t.owner, repo: t.view.repo }} active="issues" />
        <h2>New issue: choose a template</h2>
        <TemplateChooser base={t.base} templates={templates} config={config} />
      </Layout>,
    );
  });

  app.get('/:owner/:repo/issues/new', async (request, reply) => {
    web.requireUser(request);
    const t = await openRepo(web, request, 'repo.issues');
    if (!t.view.repo.has_issues) throw notFound('Issues are turned off in this repository');
    const q = request.query as Record<string, unknown>;
    const wanted = q['template'];
    const { templates } = await ctx.repoMeta.issueTemplates(t.view.repo);
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
    const t = await openRepo(web, request, 'repo.issues');
    const body = request.body as Record<string, unknown>;
    const values = {
      title: formText(body['title']),
      content: formText(body['content']),
      labels: formList(body['label']),
      form: body,
    };
    const wanted = formText(body['template']);
    const template = wanted
      ? (await ctx.repoMeta.issueTemplates(t.view.repo)).templates.find((x) => x.file_name === wanted)
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
    const t = await openRepo(web, request, 'repo.issues');
    const { view, owner, base } = t;
    const issue = await issues.requireVisibleIssue(view, Number((request.params as Params)['index']));
    // A pull request's number under /issues goes to where it lives, as Forgejo does.
    if (issue.is_pull) return web.redirect(reply, `${base}/pulls/${issue.index}`);
    const d = await threadData(ctx, issue);
    const page = web.page(request);
    const user = request.web.user;
    const writer = canWriteIssues(view.access);
    return web.send(
      reply,
      <Layout page={page} title={`${issue.title} · Issues · ${owner.name}/${view.repo.name}`}>
        <RepoHeader t={{ owner, repo: view.repo }} active="issues" />
        <IssueHeading
          page={page}
          base={base}
          issue={issue}
          canEdit={!!user && (writer || issue.poster_id === user.id)}
        />
        <div class="issue-layout">
          <div>
            <Timeline t={{ page, issue, base, d, rootUrl: ctx.config.server.rootUrl, writer }} />
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
              choices={user && writer ? await labelsFor(ctx, view.repo, owner) : null}
            />
            <MetaBox
              page={page}
              base={base}
              issue={issue}
              d={d}
              choices={await sidebarChoices(ctx, view.repo, !!user && writer)}
            />
          </aside>
        </div>
      </Layout>,
    );
  });

  /** The issue (or pull request) a form posts to, and the page to go back to. */
  const target = async (request: FastifyRequest) => {
    const user = web.requireUser(request);
    const p = request.params as Params;
    const view = await ctx.repos.requireRepo(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
    const issue = await issues.requireVisibleIssue(view, Number(p['index']));
    const owner = (await users.getById(view.repo.owner_id))!;
    const back = `/${owner.name}/${view.repo.name}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`;
    return { user, view, issue, back };
  };
  /** Runs a change; a refusal (bad input, no permission) comes back as a message on the page. */
  const change = async (reply: FastifyReply, back: string, fn: () => Promise<string | void>) => {
    try {
      const to = await fn();
      return web.redirect(reply, to ?? back);
    } catch (err) {
      if (err instanceof AppError && (err.kind === 'invalid' || err.kind === 'forbidden'))
        return web.redirect(reply, back, { kind: 'error', text: err.message });
      throw err;
    }
  };

  app.post('/:owner/:repo/issues/:index/comments', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const body = request.body as Record<string, unknown>;
    const files = uploadsOf(body['files']);
    // A comment of files only gets a line naming them (a comment needs a text).
    const content =
      formText(body['content']) || (files.length ? files.map((f) => f.filename).join(', ') : '');
    const status = formText(body['status']);
    return change(reply, back, async () => {
      let anchor = '';
      if (content.trim() || !status) {
        if (files.length)
          await ctx.attachments.assertCanUpload({ kind: 'issue', repo: view.repo, issueId: issue.id });
        const c = await issues.createComment(view, issue, user, content);
        anchor = `#issuecomment-${c.id}`;
        for (const f of files)
          await ctx.attachments.upload(
            { kind: 'comment', repo: view.repo, issueId: issue.id, commentId: c.id },
            user,
            f.filename,
            fs.createReadStream(f.path),
          );
      }
      if (status === 'close' || status === 'reopen')
        await issues.edit(view, issue, user, { state: status === 'close' ? 'closed' : 'open' });
      return back + anchor;
    });
  });

  app.post('/:owner/:repo/issues/:index/content', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const content = formText((request.body as Record<string, unknown>)['content']);
    return change(reply, back, async () => {
      await issues.edit(view, issue, user, { body: content });
    });
  });

  app.post('/:owner/:repo/comments/:id', async (request, reply) => {
    const user = web.requireUser(request);
    const p = request.params as Params;
    const view = await ctx.repos.requireRepo(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
    const { comment, issue } = await issues.requireComment(view.repo, Number(p['id']));
    await issues.requireVisibleIssue(view, issue.index);
    const owner = (await users.getById(view.repo.owner_id))!;
    const back = `/${owner.name}/${view.repo.name}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`;
    const content = formText((request.body as Record<string, unknown>)['content']);
    return change(reply, back, async () => {
      await issues.editComment(view, issue, comment, user, content);
      return `${back}#issuecomment-${comment.id}`;
    });
  });

  app.post('/:owner/:repo/issues/:index/reactions', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const body = request.body as Record<string, unknown>;
    const content = formText(body['content']);
    const rawId = formText(body['comment_id']) || '0';
    if (!/^\d{1,15}$/.test(rawId)) throw notFound('comment does not exist');
    const commentId = Number(rawId);
    return change(reply, back, async () => {
      if (commentId) {
        const found = await issues.requireComment(view.repo, commentId);
        if (found.issue.id !== issue.id) throw notFound('comment does not exist');
      }
      const mine = (await issues.allReactions(issue)).some(
        (r) => r.comment_id === commentId && r.user_id === user.id && r.type === content,
      );
      if (mine) await issues.unreact(view, issue, commentId, user, content);
      else await issues.react(view, issue, commentId, user, content);
      return commentId ? `${back}#issuecomment-${commentId}` : back;
    });
  });

  // The preview of a markdown text box: the one sanitizing renderer the pages use.
  app.post('/-/markup', async (request, reply) => {
    const text = formText((request.body as Record<string, unknown> | undefined)?.['text']);
    if (text.length > 1 << 20) return reply.code(413).type('text/plain').send('too long');
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .send(renderMarkdown(text));
  });

  app.post('/:owner/:repo/issues/:index/title', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const title = formText((request.body as Record<string, unknown>)['title']);
    return change(reply, back, async () => {
      await issues.edit(view, issue, user, { title });
    });
  });

  app.post('/:owner/:repo/issues/:index/milestone', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const id = Number(formText((request.body as Record<string, unknown>)['milestone']));
    return change(reply, back, async () => {
      if (!canWriteIssues(view.access, issue.is_pull)) throw forbidden('only writers may set the milestone');
      await issues.edit(view, issue, user, { milestone: Number.isSafeInteger(id) && id > 0 ? id : 0 });
    });
  });

  app.post('/:owner/:repo/issues/:index/assignees', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const names = formList((request.body as Record<string, unknown>)['assignee']);
    return change(reply, back, async () => {
      if (!canWriteIssues(view.access, issue.is_pull)) throw forbidden('only writers may assign');
      await issues.edit(view, issue, user, { assignees: names });
    });
  });

  app.post('/:owner/:repo/issues/:index/labels', async (request, reply) => {
    const { user, view, issue, back } = await target(request);
    const ids = formList((request.body as Record<string, unknown>)['label'])
      .map(Number)
      .filter((n) => Number.isSafeInteger(n) && n > 0);
    return change(reply, back, async () => {
      await issues.replaceLabels(view, issue, user, ids);
    });
  });
}

/** Title, state and (for its poster and writers) a small form to rename. */
export function IssueHeading(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  canEdit: boolean;
}): VNode {
  const { issue } = props;
  return (
    <>
      <h2 class="issue-title">
        {issue.title} <span class="muted">#{issue.index}</span>
      </h2>
      <p>
        <span class={`pill state ${issue.is_closed ? 'closed' : 'open'}`}>
          {issue.is_closed ? 'Closed' : 'Open'}
        </span>
      </p>
      {props.canEdit ? (
        <details>
          <summary>Edit title</summary>
          <form method="post" action={`${props.base}/issues/${issue.index}/title`} class="actions">
            <CsrfField page={props.page} />
            <input type="text" name="title" value={issue.title} aria-label="Title" required />
            <button type="submit">Save</button>
          </form>
        </details>
      ) : null}
    </>
  );
}
