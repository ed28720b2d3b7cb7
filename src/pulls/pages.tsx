// The web pages of pull requests: the conversation (timeline, reviews, the merge box with every
// merge style, its checks and the protection rules still unmet, force merge for administrators),
// the commits, the files changed (unified or split, review comments under their lines, the review
// form), the .diff and .patch of a pull request, and the compare page that opens one. They call
// the pulls and issues services, so merging and reviewing obey the same rules as the API.
import { ProjectBox, projectBoxData } from '../projects/sidebar.js';
import type { OrgService } from '../orgs/service.js';
import type { ProjectService } from '../projects/service.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import type { GitDataService } from '../git/data-service.js';
import type { CommitData } from '../git/data.js';
import {
  CommentForm,
  IssueHeading,
  Timeline,
  threadData,
  Author,
  type TimelineItem,
} from '../issues/thread.js';
import { LabelsBox, MetaBox, sidebarChoices } from '../issues/sidebar.js';
import { openRepo } from '../issues/open-repo.js';
import type { CommentService } from '../issues/comments.js';
import type { IssueService } from '../issues/service.js';
import { canWriteIssues } from '../issues/service.js';
import type { AttachmentService } from '../attachments/service.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { RepoService } from '../repos/service.js';
import type { StatusService } from '../statuses/service.js';
import type { UserService } from '../users/service.js';
import { labelsFor } from '../labels/pages.js';
import { renderMarkdown } from '../markup/render.js';
import { AccessMode } from '../orgs/tables.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import {
  type DiffLimits,
  DiffModeSwitch,
  DiffView,
  diffLimits,
  diffMode,
  fullDiffHref,
  parseDiff,
} from '../web/diff.js';
import { CsrfField, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes } from '../web/plugin.js';
import type { AutoMergeService } from './automerge.js';
import type { MergeabilityService } from './mergeability.js';
import { MERGE_STYLES, MergeService, mergeStyleAllowed, type MergeStyle } from './merging.js';
import type { PullReviewService } from './reviewing.js';
import type { PullService } from './service.js';
import type { Pull, ReviewCommentRow, ReviewRow } from './tables.js';
import { PullStatus, ReviewType } from './tables.js';

type Params = Record<string, string>;
const firstLine = (m: string) => m.split('\n')[0] ?? '';

const STYLE_LABELS: Record<string, string> = {
  merge: 'Create merge commit',
  rebase: 'Rebase then fast-forward',
  'rebase-merge': 'Rebase then create merge commit',
  squash: 'Create squash commit',
  'fast-forward-only': 'Fast-forward only',
  'manually-merged': 'Mark as manually merged',
};

const REVIEW_WORDS: Record<number, string> = {
  [ReviewType.approve]: 'approved these changes',
  [ReviewType.reject]: 'requested changes',
  [ReviewType.comment]: 'reviewed',
};

function PullTabs(props: {
  base: string;
  index: number;
  active: 'conversation' | 'commits' | 'files';
}): VNode {
  const root = `${props.base}/pulls/${props.index}`;
  const tabs = [
    ['conversation', 'Conversation', root],
    ['commits', 'Commits', `${root}/commits`],
    ['files', 'Files changed', `${root}/files`],
  ] as const;
  return (
    <nav class="tabs" aria-label="Pull request">
      {tabs.map(([key, label, href]) => (
        <a href={href} aria-current={props.active === key ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

function CommitRows(props: { base: string; commits: CommitData[] }): VNode {
  return (
    <ul class="list commits">
      {props.commits.map((c) => (
        <li>
          <div>
            <a class="title" href={`${props.base}/commit/${c.oid}`}>
              {firstLine(c.message)}
            </a>
            <p class="muted">
              {c.author.name} · {c.committer.date.slice(0, 10)} · <code>{c.oid.slice(0, 10)}</code>
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** The submitted reviews with their line comments, each placed in the timeline at its time. */
function reviewItems(props: {
  reviews: ReviewRow[];
  people: Map<number, UserRow>;
  lines: ReviewCommentRow[];
  files: string;
}): TimelineItem[] {
  return props.reviews
    .filter(
      (r) =>
        REVIEW_WORDS[r.type] ||
        props.lines.some((c) => c.review_id === r.id && r.type !== ReviewType.pending),
    )
    .map((r) => ({
      unix: r.created_unix,
      node: (
        <article class={`card comment review t${r.type}`} id={`issuecomment-r${r.id}`}>
          <p class="muted">
            <Author users={props.people} id={r.reviewer_id} /> {REVIEW_WORDS[r.type]}{' '}
            <When unix={r.created_unix} />
            {r.dismissed ? ' (dismissed)' : ''}
          </p>
          {r.content ? (
            <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(r.content) }} />
          ) : null}
          {props.lines
            .filter((c) => c.review_id === r.id)
            .map((c) => (
              <div class="line-note" id={`issuecomment-${c.id}`}>
                <p class="muted">
                  <a href={props.files}>
                    <code>
                      {c.tree_path}:{c.line < 0 ? `old ${-c.line}` : c.line}
                    </code>
                  </a>
                </p>
                <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(c.content) }} />
              </div>
            ))}
        </article>
      ),
    }));
}

export interface PullPagesDeps {
  pulls: PullService;
  reviews: PullReviewService;
  mergeability: Pick<MergeabilityService, 'unmetProtection' | 'blockedByDependencies'>;
  merging: Pick<MergeService, 'merge'>;
  autoMerge: Pick<AutoMergeService, 'get' | 'schedule' | 'cancel'>;
  statuses: Pick<StatusService, 'combinedState'>;
  /** Branches and comparisons of the compare page. */
  git: Pick<GitDataService, 'open' | 'compare' | 'listBranches'>;
  /** The conversation's timeline and sidebar are the issue pages' own (threadData, sidebarChoices, labelsFor). */
  issues: Pick<IssueService, 'requireVisibleIssue' | 'assigneesOf'>;
  issueComments: Pick<CommentService, 'timeline' | 'allReactions'>;
  repos: Pick<RepoService, 'requireRepo' | 'assignees'>;
  users: Pick<UserService, 'getById' | 'getByIds' | 'canSee'>;
  labels: Pick<LabelService, 'getByIds' | 'ofIssue' | 'list'>;
  milestones: Pick<MilestoneService, 'getByIds' | 'list'>;
  projects: Pick<ProjectService, 'projectsOf' | 'choicesFor'>;
  orgs: Pick<OrgService, 'canSee'>;
  attachments: Pick<AttachmentService, 'ofIssues' | 'ofComments'>;
  rootUrl: string;
  /** How much of a diff is shown ([git] MAX_GIT_DIFF_*). */
  diffLimits: DiffLimits;
}

export function pullPages(deps: PullPagesDeps): PageRoutes {
  const { pulls, mergeability, merging, autoMerge, statuses, git, issues, users } = deps;
  const reviewing = deps.reviews;
  return (app: FastifyInstance, web) => {
    const openPull = async (request: FastifyRequest) => {
      const t = await openRepo(deps, request, 'repo.pulls');
      if (!t.view.repo.has_pull_requests) throw notFound('Pull requests are turned off in this repository');
      const index = Number((request.params as Params)['index']);
      const issue = await issues.requireVisibleIssue(t.view, index);
      // An issue's number under /pulls goes to the issue.
      if (!issue.is_pull) return { ...t, pull: undefined, issue };
      return { ...t, pull: await pulls.requirePull(t.view.repo, index), issue };
    };

    const heading = (
      request: FastifyRequest,
      t: Awaited<ReturnType<typeof openPull>>,
      pull: Pull,
      active: 'conversation' | 'commits' | 'files' = 'conversation',
    ) => {
      const user = request.web.user;
      const canEdit = !!user && (canWriteIssues(t.view.access, true) || pull.issue.poster_id === user.id);
      return (
        <>
          <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="pulls" />
          <IssueHeading
            page={web.page(request)}
            base={t.base}
            issue={pull.issue}
            canEdit={canEdit}
            merged={!!pull.pr.has_merged}
          />
          <p class="muted">
            {pull.pr.has_merged ? 'Merged' : 'Wants to merge'} <code>{pull.pr.head_branch}</code> into{' '}
            <code>{pull.pr.base_branch}</code>
          </p>
          <PullTabs base={t.base} index={pull.issue.index} active={active} />
        </>
      );
    };

    app.get('/:owner/:repo/pulls/:index', async (request, reply) => {
      const raw = (request.params as Params)['index'] ?? '';
      const m = /^(\d+)\.(diff|patch)$/.exec(raw);
      if (m) {
        (request.params as Params)['index'] = m[1]!;
        const t = await openPull(request);
        if (!t.pull) throw notFound('pull request does not exist');
        const text = await pulls.diffText(t.pull, m[2] as 'diff' | 'patch');
        return reply.type('text/plain; charset=utf-8').header('X-Content-Type-Options', 'nosniff').send(text);
      }
      const t = await openPull(request);
      if (!t.pull) return web.redirect(reply, `${t.base}/issues/${t.issue.index}`);
      const pull = t.pull;
      const { view, owner, base } = t;
      const user = request.web.user;
      const page = web.page(request);
      const [d, reviews, lines] = await Promise.all([
        threadData(deps, pull.issue),
        reviewing.reviews(pull),
        reviewing.lineComments(pull, user),
      ]);
      const reviewers = await users.getByIds(
        reviews.map((r) => r.reviewer_id).filter((id): id is number => id !== null),
      );
      for (const [id, u] of reviewers) d.people.set(id, u);
      const writer = canWriteIssues(view.access, true);
      return web.send(
        reply,
        <Layout page={page} title={`${pull.issue.title} · Pull requests · ${owner.name}/${view.repo.name}`}>
          {heading(request, t, pull)}
          <div class="issue-layout">
            <div>
              <Timeline
                t={{ page, issue: pull.issue, base, d, rootUrl: deps.rootUrl, writer }}
                interleave={reviewItems({
                  reviews,
                  people: d.people,
                  lines,
                  files: `${base}/pulls/${pull.issue.index}/files`,
                })}
              />
              <MergeBox box={await mergeBoxData(t, pull, user)} t={t} pull={pull} user={user} page={page} />
              <CommentForm
                page={page}
                base={base}
                issue={pull.issue}
                canChangeState={!pull.pr.has_merged && !!user && (writer || pull.issue.poster_id === user.id)}
              />
            </div>
            <aside class="sidebar">
              <LabelsBox
                page={page}
                base={base}
                issue={pull.issue}
                current={d.labels}
                choices={user && writer ? await labelsFor(deps, view.repo, owner) : null}
              />
              <MetaBox
                page={page}
                base={base}
                issue={pull.issue}
                d={d}
                choices={await sidebarChoices(deps, view.repo, !!user && writer)}
              />
              <ProjectBox
                page={page}
                base={base}
                ownerName={owner.name}
                issue={pull.issue}
                data={await projectBoxData(
                  deps,
                  view.repo,
                  owner,
                  request.web.viewer,
                  pull.issue.id,
                  !!user && writer,
                )}
              />
            </aside>
          </div>
        </Layout>,
      );
    });

    /** What the merge box shows besides the pull request: who may merge, unmet rules, checks. */
    async function mergeBoxData(t: Awaited<ReturnType<typeof openPull>>, pull: Pull, user: UserRow | null) {
      const canMerge = !!user && (t.view.access.units.get('repo.code') ?? 0) >= AccessMode.write;
      const unmet = user && canMerge ? await mergeability.unmetProtection(t.view, pull, user) : [];
      const blocked = await mergeability.blockedByDependencies(pull);
      const [checks, scheduled] = await Promise.all([
        statuses.combinedState(t.view.repo, pull.pr.head_commit_id),
        autoMerge.get(pull),
      ]);
      return {
        canMerge,
        unmet,
        checks,
        scheduled,
        blocked,
        admin: !!user && MergeService.isAdmin(t.view, user),
      };
    }
    function MergeBox(props: {
      box: Awaited<ReturnType<typeof mergeBoxData>>;
      t: Awaited<ReturnType<typeof openPull>>;
      pull: Pull;
      user: UserRow | null;
      page: PageContext;
    }): VNode | null {
      const { pull, t } = props;
      if (pull.pr.has_merged)
        return (
          <section class="card merge-box ok" aria-label="Merge">
            <p>
              Merged in{' '}
              <a href={`${t.base}/commit/${pull.pr.merged_commit_id}`}>
                {pull.pr.merged_commit_id.slice(0, 10)}
              </a>{' '}
              {pull.pr.merged_unix ? <When unix={pull.pr.merged_unix} /> : null}
            </p>
          </section>
        );
      if (pull.issue.is_closed)
        return (
          <section class="card merge-box" aria-label="Merge">
            <p>This pull request is closed.</p>
          </section>
        );
      const box = props.box;
      const status = pull.pr.status;
      const statusText =
        status === PullStatus.mergeable
          ? 'This branch has no conflicts with the base branch.'
          : status === PullStatus.conflict
            ? `This branch has conflicts: ${(JSON.parse(pull.pr.conflicted_files) as string[]).join(', ')}`
            : status === PullStatus.checking
              ? 'Checking for conflicts…'
              : status === PullStatus.empty
                ? 'This branch is already included in the base branch.'
                : status === PullStatus.ancestorOf
                  ? 'The head is an ancestor of the base branch.'
                  : 'Mergeability could not be determined.';
      const checks = box ? [...box.checks.contexts] : [];
      return (
        <section
          class={`card merge-box${status === PullStatus.mergeable && !box?.unmet.length ? ' ok' : ''}`}
          aria-label="Merge"
        >
          <h3>Merge</h3>
          <p>{statusText}</p>
          {checks.length ? (
            <ul class="checklist" aria-label="Checks">
              {checks.map(([name, state]) => (
                <li>
                  <span class={`pill check ${state}`}>{state}</span> {name}
                </li>
              ))}
            </ul>
          ) : null}
          {box?.blocked ? (
            <p class="flash error">
              This pull request is blocked by an open dependency: close those issues first.
            </p>
          ) : null}
          {box?.unmet.length ? (
            <ul class="checklist" aria-label="Protection">
              {box.unmet.map((u) => (
                <li>✗ {u}</li>
              ))}
            </ul>
          ) : null}
          {box?.scheduled ? (
            <form method="post" action={`${t.base}/pulls/${pull.issue.index}/merge/cancel`} class="actions">
              <CsrfField page={props.page} />
              <p>This pull request will be merged ({box.scheduled.merge_style}) when the checks succeed.</p>
              {box.canMerge ? <button type="submit">Cancel the scheduled merge</button> : null}
            </form>
          ) : null}
          {box?.canMerge ? (
            <form method="post" action={`${t.base}/pulls/${pull.issue.index}/merge`}>
              <CsrfField page={props.page} />
              <input type="hidden" name="head_commit_id" value={pull.pr.head_commit_id} />
              <div class="field">
                <label for="merge-style">Merge style</label>
                <select id="merge-style" name="do">
                  {MERGE_STYLES.filter((s) => mergeStyleAllowed(t.view.repo, s)).map((s) => (
                    <option value={s} selected={s === t.view.repo.default_merge_style}>
                      {STYLE_LABELS[s] ?? s}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="merge-title">Commit title</label>
                <input id="merge-title" type="text" name="merge_title_field" placeholder="Default title" />
              </div>
              <div class="field">
                <label for="merge-message">Commit message</label>
                <textarea id="merge-message" name="merge_message_field" />
              </div>
              <details>
                <summary>Manually merged?</summary>
                <div class="field">
                  <label for="merge-commit">Merge commit (for “manually merged”)</label>
                  <input id="merge-commit" type="text" name="merge_commit_id" placeholder="Full commit id" />
                </div>
              </details>
              <div class="field check">
                <input id="merge-delete" type="checkbox" name="delete_branch_after_merge" value="true" />
                <label for="merge-delete">Delete branch {pull.pr.head_branch} after merging</label>
              </div>
              {box.unmet.length && box.admin ? (
                <div class="field check">
                  <input id="merge-force" type="checkbox" name="force_merge" value="true" />
                  <label for="merge-force">Merge anyway (administrator override of the rules above)</label>
                </div>
              ) : null}
              <div class="actions">
                <button type="submit" class="primary">
                  Merge
                </button>
                {box.unmet.length && !box.scheduled ? (
                  <button type="submit" name="merge_when_checks_succeed" value="true">
                    Merge when checks succeed
                  </button>
                ) : null}
              </div>
            </form>
          ) : props.user ? (
            <p class="muted">Only those with write access to the code can merge.</p>
          ) : null}
        </section>
      );
    }

    const back = (reply: FastifyReply, to: string, fn: () => Promise<string | void>) =>
      fn().then(
        (next) => web.redirect(reply, next ?? to),
        (err: unknown) => {
          if (err instanceof AppError && err.kind !== 'not_found')
            return web.redirect(reply, to, { kind: 'error', text: err.message });
          throw err;
        },
      );

    app.post('/:owner/:repo/pulls/:index/merge', async (request, reply) => {
      const user = web.requireUser(request);
      const t = await openPull(request);
      if (!t.pull) throw notFound('pull request does not exist');
      const b = request.body as Record<string, unknown>;
      const to = `${t.base}/pulls/${t.pull.issue.index}`;
      return back(reply, to, async () => {
        const input = {
          style: formText(b['do']) as MergeStyle,
          title: formText(b['merge_title_field']) || undefined,
          message: formText(b['merge_message_field']) || undefined,
          deleteBranch: formText(b['delete_branch_after_merge']) === 'true',
          headCommitId: formText(b['head_commit_id']) || undefined,
          mergeCommitId: formText(b['merge_commit_id']) || undefined,
          force: formText(b['force_merge']) === 'true',
        };
        if (formText(b['merge_when_checks_succeed']) === 'true')
          return autoMerge.schedule(t.view, t.pull!, user, input);
        await merging.merge(t.view, t.pull!, user, input);
      });
    });

    app.post('/:owner/:repo/pulls/:index/merge/cancel', async (request, reply) => {
      const user = web.requireUser(request);
      const t = await openPull(request);
      if (!t.pull) throw notFound('pull request does not exist');
      const to = `${t.base}/pulls/${t.pull.issue.index}`;
      return back(reply, to, () => autoMerge.cancel(t.view, t.pull!, user));
    });

    app.get('/:owner/:repo/pulls/:index/commits', async (request, reply) => {
      const t = await openPull(request);
      if (!t.pull) return web.redirect(reply, `${t.base}/issues/${t.issue.index}`);
      const [commits] = await pulls.commits(t.pull, { page: 1, limit: 250, offset: 0 });
      return web.send(
        reply,
        <Layout
          page={web.page(request)}
          title={`Commits · ${t.pull.issue.title} · ${t.owner.name}/${t.view.repo.name}`}
        >
          {heading(request, t, t.pull, 'commits')}
          <CommitRows base={t.base} commits={commits} />
        </Layout>,
      );
    });

    app.get('/:owner/:repo/pulls/:index/files', async (request, reply) => {
      const t = await openPull(request);
      if (!t.pull) return web.redirect(reply, `${t.base}/issues/${t.issue.index}`);
      const pull = t.pull;
      const mode = diffMode(request.query);
      const text = (await pulls.diffText(pull, 'diff')).toString('utf8');
      const files = parseDiff(text);
      const page = web.page(request);
      const user = request.web.user;
      const lineComments = await reviewing.lineComments(pull, user);
      const posters = await users.getByIds(
        lineComments.map((c) => c.poster_id).filter((id): id is number => id !== null),
      );
      const notes = new Map<string, Map<number, VNode[]>>();
      for (const c of lineComments) {
        const byLine = notes.get(c.tree_path) ?? new Map<number, VNode[]>();
        notes.set(c.tree_path, byLine);
        const list = byLine.get(c.line) ?? [];
        byLine.set(c.line, list);
        list.push(
          <article class="line-note" id={`issuecomment-${c.id}`}>
            <p class="muted">
              <Author users={posters} id={c.poster_id} /> <When unix={c.created_unix} />
            </p>
            <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(c.content) }} />
          </article>,
        );
      }
      const root = `${t.base}/pulls/${pull.issue.index}`;
      return web.send(
        reply,
        <Layout
          page={page}
          title={`Files changed · ${pull.issue.title} · ${t.owner.name}/${t.view.repo.name}`}
          wide
        >
          {heading(request, t, pull, 'files')}
          <div class="diff-bar">
            <DiffModeSwitch path={`${root}/files`} mode={mode} />
            <a href={`${root}.diff`}>.diff</a> · <a href={`${root}.patch`}>.patch</a>
          </div>
          <DiffView
            files={files}
            opts={{
              mode,
              notes,
              commentable: !!user && !pull.issue.is_closed,
              limits: diffLimits(deps.diffLimits, request.query),
              fullHref: fullDiffHref(`${root}/files`, request.query),
            }}
          />
          {user && !pull.issue.is_closed ? (
            <form method="post" action={`${root}/files/reviews/submit`} class="card review-form" id="review">
              <CsrfField page={page} />
              <h3>Review</h3>
              <fieldset>
                <legend>Comment on a line (optional)</legend>
                <div class="field">
                  <label for="review-path">File</label>
                  <select id="review-path" name="path">
                    <option value="">—</option>
                    {files.map((f) => (
                      <option value={f.name}>{f.name}</option>
                    ))}
                  </select>
                </div>
                <div class="field">
                  <label for="review-line">Line (negative: the old side)</label>
                  <input id="review-line" type="text" inputMode="numeric" name="line" />
                </div>
                <div class="field">
                  <label for="review-line-body">Line comment</label>
                  <textarea id="review-line-body" name="line_content" />
                </div>
              </fieldset>
              <div class="field">
                <label for="review-content">Summary</label>
                <textarea id="review-content" name="content" />
              </div>
              <fieldset class="label-choices">
                <legend>Verdict</legend>
                <label>
                  <input type="radio" name="type" value="comment" checked /> Comment
                </label>
                {pull.issue.poster_id !== user.id ? (
                  <>
                    <label>
                      <input type="radio" name="type" value="approve" /> Approve
                    </label>
                    <label>
                      <input type="radio" name="type" value="reject" /> Request changes
                    </label>
                  </>
                ) : null}
              </fieldset>
              <button type="submit" class="primary">
                Submit review
              </button>
            </form>
          ) : null}
        </Layout>,
      );
    });

    app.post('/:owner/:repo/pulls/:index/files/reviews/submit', async (request, reply) => {
      const user = web.requireUser(request);
      const t = await openPull(request);
      if (!t.pull) throw notFound('pull request does not exist');
      const b = request.body as Record<string, unknown>;
      const event = (
        { approve: 'APPROVED', reject: 'REQUEST_CHANGES', comment: 'COMMENT' } as Record<string, string>
      )[formText(b['type'])];
      const root = `${t.base}/pulls/${t.pull.issue.index}`;
      return back(reply, `${root}/files`, async () => {
        const path = formText(b['path']);
        const line = Number(formText(b['line']));
        const lineBody = formText(b['line_content']);
        const comments =
          path && lineBody.trim()
            ? [
                {
                  path,
                  body: lineBody,
                  new_position: line > 0 ? line : 0,
                  old_position: line < 0 ? -line : 0,
                },
              ]
            : [];
        await reviewing.createReview(t.view, t.pull!, user, {
          event: event ?? 'bad',
          body: formText(b['content']),
          comments,
        });
        return root;
      });
    });

    // Compare two refs and open a pull request from them.
    const compareParts = (request: FastifyRequest) => {
      // The router has decoded the path already.
      const spec = (request.params as Params)['*'] ?? '';
      const i = spec.indexOf('...');
      if (i < 0) throw notFound('compare needs base...head');
      return { baseRef: spec.slice(0, i), headRef: spec.slice(i + 3) };
    };

    const comparePage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      values: { title: string; content: string },
      error?: string,
    ) => {
      const t = await openRepo(deps, request, 'repo.code');
      const { baseRef, headRef } = compareParts(request);
      const target = await git.open(t.owner.name, t.view.repo.name, request.web.viewer, 'read');
      const cmp = await git.compare(target, baseRef, headRef);
      const page = web.page(request);
      const mode = diffMode(request.query);
      const user = request.web.user;
      const [refs] = await git.listBranches(target, { page: 1, limit: 1000, offset: 0 });
      const branches = refs.map((r) => ({ name: r.ref.replace(/^refs\/heads\//, '') }));
      const existing = cmp.commits.length
        ? (await pulls.list(t.view.repo, { state: 'open' }, { page: 1, limit: 50, offset: 0 }))[0].find(
            (p) =>
              p.pr.base_branch === baseRef &&
              p.pr.head_branch === headRef &&
              p.pr.head_repo_id === t.view.repo.id,
          )
        : undefined;
      const path = `${t.base}/compare/${encodeURIComponent(baseRef)}...${encodeURIComponent(headRef)}`;
      return web.send(
        reply,
        <Layout
          page={page}
          title={`Comparing ${baseRef}...${headRef} · ${t.owner.name}/${t.view.repo.name}`}
          wide
        >
          <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="pulls" />
          <h2>Compare changes</h2>
          <form method="get" action={`${t.base}/compare`} class="actions" aria-label="Branches to compare">
            <label for="cmp-base">base</label>
            <select id="cmp-base" name="base">
              {branches.map((b) => (
                <option value={b.name} selected={b.name === baseRef}>
                  {b.name}
                </option>
              ))}
            </select>
            <label for="cmp-head">compare</label>
            <select id="cmp-head" name="head">
              {branches.map((b) => (
                <option value={b.name} selected={b.name === headRef}>
                  {b.name}
                </option>
              ))}
            </select>
            <button type="submit">Compare</button>
          </form>
          {error ? (
            <p class="flash error" role="alert">
              {error}
            </p>
          ) : null}
          {cmp.commits.length === 0 ? (
            <p class="card">These branches are equal: there is nothing to compare.</p>
          ) : existing ? (
            <p class="card">
              A pull request for these branches is already open:{' '}
              <a href={`${t.base}/pulls/${existing.issue.index}`}>#{existing.issue.index}</a>
            </p>
          ) : user && t.view.repo.has_pull_requests ? (
            <form method="post" action={path} class="card">
              <CsrfField page={page} />
              <div class="field">
                <label for="f-title">Title</label>
                <input
                  id="f-title"
                  type="text"
                  name="title"
                  required
                  value={values.title || firstLine(cmp.commits[cmp.commits.length - 1]!.message)}
                />
              </div>
              <div class="field">
                <label for="f-content">Description</label>
                <textarea id="f-content" name="content">
                  {values.content}
                </textarea>
              </div>
              <button type="submit" class="primary">
                Create pull request
              </button>
            </form>
          ) : null}
          <h3>
            {cmp.commits.length} commit{cmp.commits.length === 1 ? '' : 's'}
          </h3>
          <CommitRows base={t.base} commits={cmp.commits} />
          <DiffModeSwitch path={path} mode={mode} />
          <DiffView
            files={parseDiff(cmp.diff)}
            opts={{
              mode,
              limits: diffLimits(deps.diffLimits, request.query),
              fullHref: fullDiffHref(path, request.query),
            }}
          />
        </Layout>,
        error ? 422 : 200,
      );
    };

    app.get('/:owner/:repo/compare', async (request, reply) => {
      const t = await openRepo(deps, request, 'repo.code');
      const q = request.query as Params;
      const b = formText(q['base']) || t.view.repo.default_branch;
      const h = formText(q['head']) || b;
      return web.redirect(reply, `${t.base}/compare/${encodeURIComponent(b)}...${encodeURIComponent(h)}`);
    });
    app.get('/:owner/:repo/compare/*', (request, reply) =>
      comparePage(request, reply, { title: '', content: '' }),
    );
    app.post('/:owner/:repo/compare/*', async (request, reply) => {
      const user = web.requireUser(request);
      const t = await openRepo(deps, request, 'repo.pulls');
      const { baseRef, headRef } = compareParts(request);
      const b = request.body as Record<string, unknown>;
      const values = { title: formText(b['title']), content: formText(b['content']) };
      try {
        const pull = await pulls.create(t.view, user, {
          base: baseRef,
          head: headRef,
          title: values.title,
          body: values.content,
        });
        return web.redirect(reply, `${t.base}/pulls/${pull.issue.index}`);
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'invalid' || err.kind === 'conflict'))
          return comparePage(request, reply, values, err.message);
        throw err;
      }
    });
  };
}
