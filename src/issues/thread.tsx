// The conversation of one issue or pull request, as the web pages show it (pull requests share it):
// the heading with its title and state, the text and the timeline (comments as cards with their
// files and reactions, events as one line each), and the comment form. `threadData` loads
// everything the timeline names in a fixed number of queries.
import type { ComponentChildren, VNode } from 'preact';
import type { AttachmentService } from '../attachments/service.js';
import { downloadUrl } from '../attachments/schemas.js';
import type { AttachmentRow } from '../attachments/tables.js';
import type { LabelService } from '../labels/service.js';
import { LabelPill } from '../labels/pages.js';
import { renderMarkdown } from '../markup/render.js';
import type { MilestoneService } from '../milestones/service.js';
import type { UserService } from '../users/service.js';
import { avatarPath } from '../users/avatars.js';
import type { UserRow } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import { When } from '../web/components.js';
import { Icon, type IconName } from '../web/icons.js';
import type { CommentService } from './comments.js';
import type { IssueService } from './service.js';
import type { CommentRow, IssueRow } from './tables.js';
import { CommentType } from './tables.js';
import { secondsToText } from './tracking-schemas.js';

/** Who wrote or did something: their avatar and name, linked to their profile ("Ghost" once deleted). */
export function Author(props: { users: Map<number, UserRow>; id: number | null }): VNode {
  const u = props.id !== null ? props.users.get(props.id) : undefined;
  return u ? (
    <a class="author" href={`/${u.name}`}>
      <img class="avatar" src={`/${avatarPath(u)}`} alt="" width={20} height={20} loading="lazy" />
      {u.name}
    </a>
  ) : (
    <span class="author">Ghost</span>
  );
}

export interface ThreadDeps {
  issues: Pick<IssueService, 'assigneesOf'>;
  issueComments: Pick<CommentService, 'timeline' | 'allReactions'>;
  users: Pick<UserService, 'getByIds'>;
  labels: Pick<LabelService, 'getByIds' | 'ofIssue'>;
  milestones: Pick<MilestoneService, 'getByIds'>;
  attachments: Pick<AttachmentService, 'ofIssues' | 'ofComments'>;
}

/** Everything the timeline of one issue shows: its events, the people and labels they name. */
export async function threadData(deps: ThreadDeps, issue: IssueRow) {
  const [events] = await deps.issueComments.timeline(issue, {}, { page: 1, limit: 100_000, offset: 0 });
  const people = await deps.users.getByIds(
    [issue.poster_id, ...events.map((c) => c.poster_id), ...events.map((c) => c.assignee_id)].filter(
      (id): id is number => id !== null && id !== undefined,
    ),
  );
  const labelIds = [...new Set(events.map((c) => c.label_id).filter((id): id is number => !!id))];
  const eventLabels = new Map((await deps.labels.getByIds(labelIds)).map((l) => [l.id, l]));
  const commentIds = events.filter((c) => c.type === CommentType.comment).map((c) => c.id);
  const [labels, assigneeIds, milestones, reactions, issueFiles, commentFiles] = await Promise.all([
    deps.labels.ofIssue(issue.id),
    deps.issues.assigneesOf([issue.id]),
    deps.milestones.getByIds(issue.milestone_id ? [issue.milestone_id] : []),
    deps.issueComments.allReactions(issue),
    deps.attachments.ofIssues([issue.id]),
    deps.attachments.ofComments(commentIds),
  ]);
  const assignees = [...(await deps.users.getByIds(assigneeIds.get(issue.id) ?? [])).values()];

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

/** A pull request's merge in its timeline (Forgejo's comment type 28, pulls/tables.ts). */
const MERGE_PULL = 28;

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
    case MERGE_PULL:
      return line(
        <>
          merged commit <a href={`${props.base}/commit/${c.commit_sha}`}>{c.commit_sha.slice(0, 10)}</a>
        </>,
      );
    default:
      return null;
  }
}

/** Each reaction's icon (SVG: emoji would be empty boxes where no emoji font is installed). */
const REACTION_ICONS: Record<string, IconName> = {
  '+1': 'thumbs-up',
  '-1': 'thumbs-down',
  laugh: 'laugh',
  hooray: 'hooray',
  confused: 'confused',
  heart: 'heart',
  rocket: 'rocket',
  eyes: 'eyes',
};

/** A reaction's icon, or its name for one Anvil draws no icon for. */
function ReactionIcon(props: { type: string }): VNode {
  const icon = REACTION_ICONS[props.type];
  return icon ? <Icon name={icon} /> : <>{props.type}</>;
}

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
  /** A toggle; `count` (shown beside the icon) is also in its name, which holds what it shows. */
  const button = (type: string, pressed: boolean, count?: number) => (
    <form method="post" action={`${t.base}/issues/${t.issue.index}/reactions`} class="inline">
      <CsrfField page={t.page} />
      <input type="hidden" name="content" value={type} />
      <input type="hidden" name="comment_id" value={String(props.commentId)} />
      <button
        type="submit"
        class="reaction"
        aria-pressed={pressed ? 'true' : 'false'}
        aria-label={count === undefined ? `${type} reaction` : `${type} reaction: ${count}`}
      >
        <ReactionIcon type={type} />
        {count === undefined ? null : ` ${count}`}
      </button>
    </form>
  );
  return (
    <div class="reactions">
      {[...counts].map(([type, c]) =>
        t.page.user ? (
          button(type, c.mine, c.n)
        ) : (
          <span class="reaction" aria-label={`${c.n} ${type}`}>
            <ReactionIcon type={type} /> {c.n}
          </span>
        ),
      )}
      {t.page.user ? (
        <details class="inline">
          <summary aria-label="Add a reaction">
            <Icon name="laugh" />+
          </summary>
          {Object.keys(REACTION_ICONS).map((type) => button(type, counts.get(type)?.mine ?? false))}
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
/** Something shown in a timeline at its time besides the comments and events (a pull request's reviews). */
export interface TimelineItem {
  unix: number;
  node: VNode;
}

/**
 * The description, then comments and events in order with `interleave` placed among them by
 * time (an item before the events of its second: a review comes before the merge it allowed).
 */
export function Timeline(props: { t: ThreadCtx; interleave?: TimelineItem[] }): VNode {
  const { t } = props;
  const { issue, d } = t;
  const mayEdit = (posterId: number | null) => !!t.page.user && (t.writer || posterId === t.page.user.id);
  const extra = [...(props.interleave ?? [])].sort((a, b) => a.unix - b.unix);
  // A merge also closes the pull request: the merge says so, its close event is not repeated.
  const merges = new Set(
    d.events.filter((c) => c.type === MERGE_PULL).map((c) => `${c.poster_id}:${c.created_unix}`),
  );
  const events = d.events.filter(
    (c) => !(c.type === CommentType.close && merges.has(`${c.poster_id}:${c.created_unix}`)),
  );
  let next = 0;
  const before = (unix: number): VNode[] => {
    const due: VNode[] = [];
    while (next < extra.length && extra[next]!.unix <= unix) due.push(extra[next++]!.node);
    return due;
  };
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
      {events.map((c) => [
        ...before(c.created_unix),
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
      ])}
      {extra.slice(next).map((x) => x.node)}
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

/** Title, state (a merged pull request's is "Merged") and, for its poster and writers, a small form to rename. */
export function IssueHeading(props: {
  page: PageContext;
  base: string;
  issue: IssueRow;
  canEdit: boolean;
  merged?: boolean | undefined;
}): VNode {
  const { issue } = props;
  const state = props.merged ? 'merged' : issue.is_closed ? 'closed' : 'open';
  const icon: IconName = props.merged
    ? 'merged'
    : issue.is_pull
      ? 'pull'
      : issue.is_closed
        ? 'issue-closed'
        : 'issue-open';
  return (
    <>
      <h2 class="issue-title">
        {issue.title} <span class="muted">#{issue.index}</span>
      </h2>
      <p>
        <span class={`pill state ${state}`}>
          <Icon name={icon} />
          {props.merged ? 'Merged' : issue.is_closed ? 'Closed' : 'Open'}
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
