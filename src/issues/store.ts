// Queries on issues, their numbers, assignees, mentions and subscriptions, comments (and timeline
// events) and reactions. No HTTP here.
import { sql, type ExpressionBuilder, type Insertable, type Updateable } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { CommentTable, IssueTable, ReactionTable } from './tables.js';
import { CommentType } from './tables.js';
import { ReviewType } from '../pulls/tables.js';
import type { IssueRow, CommentRow, ReactionRow, WatchRow } from './tables.js';
import { PLAIN_COMMENT_COLUMNS, type IssueSort, type PlainCommentRow } from './tables.js';

// Row shapes and sorts live in tables.ts (routes and presenters read them); kept here for callers.

type Q = Db | Tx;

// Numbers

/**
 * The next number of an issue or pull request of the repository: one atomic upsert of the
 * repository's counter row, which stays locked until the caller's transaction ends, so two
 * concurrent creations never get the same number.
 */
export async function nextIndex(q: Q, repoId: number): Promise<number> {
  const r = await q
    .insertInto('issue_index')
    .values({ repo_id: repoId, max_index: 1 })
    .onConflict((oc) => oc.column('repo_id').doUpdateSet({ max_index: sql`issue_index.max_index + 1` }))
    .returning('max_index')
    .executeTakeFirstOrThrow();
  return Number(r.max_index);
}

/**
 * Reserves `count` consecutive numbers of the repository at once (imports, bulk loads); returns
 * the first.
 */
export async function reserveIndexes(q: Q, repoId: number, count: number): Promise<number> {
  const r = await q
    .insertInto('issue_index')
    .values({ repo_id: repoId, max_index: count })
    .onConflict((oc) =>
      oc.column('repo_id').doUpdateSet({ max_index: sql`issue_index.max_index + ${count}` }),
    )
    .returning('max_index')
    .executeTakeFirstOrThrow();
  return Number(r.max_index) - count + 1;
}

// Issues

/**
 * Takes the issue's row lock until the transaction ends (a no-op update: portable, where SELECT
 * ... FOR UPDATE is not), so that concurrent changes of one issue (labels under the exclusive
 * rule, state, milestone) happen one after the other. SQLite serializes writers anyway.
 */
export async function lockIssue(q: Q, id: number): Promise<IssueRow | undefined> {
  return q
    .updateTable('issue')
    .set({ updated_unix: sql`updated_unix` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Takes the lock of the repository's issue counter (pins, which are counted per repository). */
export async function lockRepoIssues(q: Q, repoId: number): Promise<void> {
  await q
    .updateTable('issue_index')
    .set({ max_index: sql`max_index` })
    .where('repo_id', '=', repoId)
    .execute();
}

/** Inserts many issues in one statement (bulk loads); returns their ids, ascending (insertion order). */
export async function insertMany(q: Q, rows: Insertable<IssueTable>[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const out = await q.insertInto('issue').values(rows).returning('id').execute();
  return out.map((r) => r.id).sort((a, b) => a - b);
}

export async function insert(q: Q, row: Insertable<IssueTable>): Promise<IssueRow> {
  return q.insertInto('issue').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function update(q: Q, id: number, patch: Updateable<IssueTable>): Promise<IssueRow> {
  return q.updateTable('issue').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('issue').where('id', '=', id).execute();
}

export function getByIndex(q: Q, repoId: number, index: number): Promise<IssueRow | undefined> {
  return q
    .selectFrom('issue')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('index', '=', index)
    .executeTakeFirst();
}

export function getById(q: Q, id: number): Promise<IssueRow | undefined> {
  return q.selectFrom('issue').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getByIds(q: Q, ids: number[]): Promise<Map<number, IssueRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('issue').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export interface IssueFilter {
  /**
   * The repositories whose issues are listed and those whose pull requests are (a repository with
   * its issues or pull requests turned off is left out of one list).
   */
  repos: { issues: number[]; pulls: number[] };
  isClosed?: boolean | undefined;
  isPull?: boolean | undefined;
  /** Each group: the issue has at least one of these labels; every group must hold. */
  labelGroups?: number[][] | undefined;
  milestoneIds?: number[] | undefined;
  /** Case-insensitive substring of the title or the body. */
  keyword?: string | undefined;
  posterId?: number | undefined;
  assigneeId?: number | undefined;
  mentionedId?: number | undefined;
  /** Pull requests whose review is requested from this user (and not yet given). */
  reviewRequestedId?: number | undefined;
  /**
   * Issues this user follows: subscribed explicitly, or took part in (posted, commented, assigned)
   * and did not unsubscribe (Forgejo's SubscriberID).
   */
  subscriberId?: number | undefined;
  updatedAfter?: number | undefined;
  updatedBefore?: number | undefined;
  priorityRepoId?: number | undefined;
  sort?: IssueSort | undefined;
}

function repoCondition(f: IssueFilter) {
  const { issues, pulls } = f.repos;
  const same = issues.length === pulls.length && issues.every((id, i) => pulls[i] === id);
  return (s: ReturnType<typeof base>) => {
    if (same)
      return issues.length === 1
        ? s.where('issue.repo_id', '=', issues[0]!)
        : s.where('issue.repo_id', 'in', issues);
    if (pulls.length === 0) return s.where('issue.repo_id', 'in', issues).where('issue.is_pull', '=', 0);
    if (issues.length === 0) return s.where('issue.repo_id', 'in', pulls).where('issue.is_pull', '=', 1);
    return s.where((eb) =>
      eb.or([
        eb.and([eb('issue.is_pull', '=', 0), eb('issue.repo_id', 'in', issues)]),
        eb.and([eb('issue.is_pull', '=', 1), eb('issue.repo_id', 'in', pulls)]),
      ]),
    );
  };
}

const base = (q: Q) => q.selectFrom('issue');

/** Filters on the issue's own columns (and its assignees and mentions); none of repository, state or labels. */
function otherFilters<S extends ReturnType<typeof base>>(s: S, f: IssueFilter): S {
  let o = s as ReturnType<typeof base>;
  if (f.milestoneIds) o = o.where('issue.milestone_id', 'in', f.milestoneIds.length ? f.milestoneIds : [-1]);
  if (f.keyword) {
    const like = `%${f.keyword.toLowerCase().replace(/\\/g, '')}%`;
    o = o.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['issue.title']), 'like', like),
        eb(eb.fn('lower', ['issue.content']), 'like', like),
      ]),
    );
  }
  if (f.posterId !== undefined) o = o.where('issue.poster_id', '=', f.posterId);
  if (f.assigneeId !== undefined) {
    const uid = f.assigneeId;
    o = o.where('issue.id', 'in', (eb) =>
      eb
        .selectFrom('issue_assignees')
        .select('issue_assignees.issue_id')
        .where('issue_assignees.assignee_id', '=', uid),
    );
  }
  if (f.mentionedId !== undefined) {
    const uid = f.mentionedId;
    o = o.where('issue.id', 'in', (eb) =>
      eb
        .selectFrom('issue_mention')
        .select('issue_mention.issue_id')
        .where('issue_mention.user_id', '=', uid),
    );
  }
  if (f.reviewRequestedId !== undefined) {
    const uid = f.reviewRequestedId;
    o = o.where('issue.id', 'in', (eb) =>
      eb
        .selectFrom('pull_review')
        .select('pull_review.issue_id')
        .where('pull_review.reviewer_id', '=', uid)
        .where('pull_review.type', '=', ReviewType.request),
    );
  }
  if (f.subscriberId !== undefined) {
    const uid = f.subscriberId;
    const watch = (watching: number) => (eb: ExpressionBuilder<DB, 'issue'>) =>
      eb
        .selectFrom('issue_watch')
        .select('issue_watch.issue_id')
        .where('issue_watch.user_id', '=', uid)
        .where('issue_watch.is_watching', '=', watching);
    o = o.where((eb) =>
      eb.or([
        eb('issue.id', 'in', watch(1)(eb)),
        eb.and([
          eb.or([
            eb('issue.poster_id', '=', uid),
            eb(
              'issue.id',
              'in',
              eb
                .selectFrom('comment')
                .select('comment.issue_id')
                .where('comment.poster_id', '=', uid)
                .where('comment.type', '=', CommentType.comment),
            ),
            eb(
              'issue.id',
              'in',
              eb
                .selectFrom('issue_assignees')
                .select('issue_assignees.issue_id')
                .where('issue_assignees.assignee_id', '=', uid),
            ),
          ]),
          eb('issue.id', 'not in', watch(0)(eb)),
        ]),
      ]),
    );
  }
  if (f.updatedAfter !== undefined) o = o.where('issue.updated_unix', '>=', f.updatedAfter);
  if (f.updatedBefore !== undefined) o = o.where('issue.updated_unix', '<=', f.updatedBefore);
  return o as S;
}

function hasOtherFilters(f: IssueFilter): boolean {
  return (
    f.milestoneIds !== undefined ||
    !!f.keyword ||
    f.posterId !== undefined ||
    f.assigneeId !== undefined ||
    f.mentionedId !== undefined ||
    f.reviewRequestedId !== undefined ||
    f.subscriberId !== undefined ||
    f.updatedAfter !== undefined ||
    f.updatedBefore !== undefined
  );
}

function labelCondition(group: number[]) {
  return (eb: ExpressionBuilder<DB, 'issue'>) =>
    group.length === 1
      ? eb
          .selectFrom('issue_label')
          .select('issue_label.issue_id')
          .where('issue_label.label_id', '=', group[0]!)
      : eb
          .selectFrom('issue_label')
          .select('issue_label.issue_id')
          .where('issue_label.label_id', 'in', group);
}

/**
 * The common case "issues of one repository in one state with label X, newest (or oldest) first"
 * (more filters allowed): when it applies, the label, repository, kind and state to walk the
 * issue_label index with, in order.
 */
function byLabelIndex(f: IssueFilter) {
  const { issues, pulls } = f.repos;
  const repoId = issues[0] ?? pulls[0];
  const group = f.labelGroups?.[0];
  const sort = f.sort ?? 'latest';
  if (
    repoId === undefined ||
    issues.some((id) => id !== repoId) ||
    pulls.some((id) => id !== repoId) ||
    issues.length > 1 ||
    pulls.length > 1 ||
    group?.length !== 1 ||
    f.isClosed === undefined ||
    !['latest', 'relevance', 'oldest'].includes(sort)
  ) {
    return undefined;
  }
  // One repository: its issues, its pull requests, or both (one kind may be turned off).
  if ((issues.length === 0 && f.isPull === false) || (pulls.length === 0 && f.isPull === true)) return 'none';
  const isPull = issues.length === 0 ? true : pulls.length === 0 ? false : f.isPull;
  return {
    repoId,
    labelId: group[0]!,
    isClosed: f.isClosed,
    isPull,
    direction: sort === 'oldest' ? 'asc' : 'desc',
  } as const;
}

/** One page of the issues `f` selects, in the order it asks for, and how many there are in all. */
export async function list(
  q: Q,
  f: IssueFilter,
  limit: number,
  offset: number,
): Promise<[IssueRow[], number]> {
  if (f.repos.issues.length === 0 && f.repos.pulls.length === 0) return [[], 0];
  const fast = byLabelIndex(f);
  if (fast === 'none') return [[], 0];
  if (fast) {
    let il = q
      .selectFrom('issue_label as il')
      .where('il.label_id', '=', fast.labelId)
      .where('il.repo_id', '=', fast.repoId)
      .where('il.is_closed', '=', fast.isClosed ? 1 : 0);
    if (fast.isPull !== undefined) il = il.where('il.is_pull', '=', fast.isPull ? 1 : 0);
    let joined = il.innerJoin('issue', 'issue.id', 'il.issue_id');
    joined = otherFilters(joined as unknown as ReturnType<typeof base>, f) as unknown as typeof joined;
    for (const group of f.labelGroups!.slice(1))
      joined = joined.where('issue.id', 'in', labelCondition(group));
    const [rows, total] = await Promise.all([
      joined
        .selectAll('issue')
        .orderBy('il.created_unix', fast.direction)
        .orderBy('il.issue_id', fast.direction)
        .limit(limit)
        .offset(offset)
        .execute(),
      // Without other filters, the count is a range of the index alone.
      (f.labelGroups!.length > 1 || hasOtherFilters(f) ? joined : il)
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return [rows, Number(total.n)];
  }

  let s = repoCondition(f)(base(q));
  if (f.isClosed !== undefined) s = s.where('issue.is_closed', '=', f.isClosed ? 1 : 0);
  if (f.isPull !== undefined) s = s.where('issue.is_pull', '=', f.isPull ? 1 : 0);
  for (const group of f.labelGroups ?? []) s = s.where('issue.id', 'in', labelCondition(group));
  s = otherFilters(s, f);

  let o = s.selectAll('issue');
  switch (f.sort ?? 'latest') {
    case 'oldest':
      o = o.orderBy('issue.created_unix', 'asc').orderBy('issue.id', 'asc');
      break;
    case 'recentupdate':
      o = o.orderBy('issue.updated_unix', 'desc').orderBy('issue.id', 'desc');
      break;
    case 'leastupdate':
      o = o.orderBy('issue.updated_unix', 'asc').orderBy('issue.id', 'asc');
      break;
    case 'mostcomment':
      o = o
        .orderBy('issue.num_comments', 'desc')
        .orderBy('issue.created_unix', 'desc')
        .orderBy('issue.id', 'desc');
      break;
    case 'leastcomment':
      o = o
        .orderBy('issue.num_comments', 'asc')
        .orderBy('issue.created_unix', 'desc')
        .orderBy('issue.id', 'desc');
      break;
    case 'nearduedate':
      // Issues without a due date last.
      o = o
        .orderBy(sql`case when issue.deadline_unix = 0 then 1 else 0 end`)
        .orderBy('issue.deadline_unix', 'asc')
        .orderBy('issue.id', 'desc');
      break;
    case 'farduedate':
      o = o.orderBy('issue.deadline_unix', 'desc').orderBy('issue.id', 'desc');
      break;
    case 'priorityrepo':
      if (f.priorityRepoId) {
        o = o.orderBy(sql`case when issue.repo_id = ${f.priorityRepoId} then 0 else 1 end`);
      }
      o = o.orderBy('issue.created_unix', 'desc').orderBy('issue.id', 'desc');
      break;
    default:
      o = o.orderBy('issue.created_unix', 'desc').orderBy('issue.id', 'desc');
  }
  return paged(o, limit, offset);
}

/** The pinned issues (or pull requests) of a repository, in pin order. */
export function pinned(q: Q, repoId: number, isPull: boolean): Promise<IssueRow[]> {
  return q
    .selectFrom('issue')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('is_pull', '=', isPull ? 1 : 0)
    .where('pin_order', '>', 0)
    .orderBy('pin_order')
    .execute();
}

/** Moves the pins in positions from..to (to the end without `to`) by `delta`, keeping them consecutive. */
export async function shiftPins(
  q: Q,
  repoId: number,
  isPull: boolean,
  delta: number,
  from: number,
  to?: number,
): Promise<void> {
  let s = q
    .updateTable('issue')
    .set({ pin_order: sql`pin_order + ${delta}` })
    .where('repo_id', '=', repoId)
    .where('is_pull', '=', isPull ? 1 : 0)
    .where('pin_order', '>=', from);
  if (to !== undefined) s = s.where('pin_order', '<=', to);
  await s.execute();
}

/** Open issues and open pull requests of each repository. */
export async function openCounts(
  q: Q,
  repoIds: number[],
): Promise<Map<number, { issues: number; pulls: number }>> {
  const out = new Map<number, { issues: number; pulls: number }>();
  if (repoIds.length === 0) return out;
  const rows = await q
    .selectFrom('issue')
    .select(['repo_id', 'is_pull', (eb) => eb.fn.countAll<number>().as('n')])
    .where('repo_id', 'in', repoIds)
    .where('is_closed', '=', 0)
    .groupBy(['repo_id', 'is_pull'])
    .execute();
  for (const r of rows) {
    const c = out.get(r.repo_id) ?? { issues: 0, pulls: 0 };
    if (r.is_pull) c.pulls = Number(r.n);
    else c.issues = Number(r.n);
    out.set(r.repo_id, c);
  }
  return out;
}

// Assignees and mentions

export async function assigneesOf(q: Q, issueIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (issueIds.length === 0) return out;
  const rows = await q
    .selectFrom('issue_assignees')
    .select(['issue_id', 'assignee_id'])
    .where('issue_id', 'in', issueIds)
    .orderBy('id')
    .execute();
  for (const r of rows) out.set(r.issue_id, [...(out.get(r.issue_id) ?? []), r.assignee_id]);
  return out;
}

export async function addAssignees(q: Q, issueId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await q
    .insertInto('issue_assignees')
    .values(userIds.map((assignee_id) => ({ issue_id: issueId, assignee_id })))
    .onConflict((oc) => oc.columns(['issue_id', 'assignee_id']).doNothing())
    .execute();
}

export async function removeAssignees(q: Q, issueId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await q
    .deleteFrom('issue_assignees')
    .where('issue_id', '=', issueId)
    .where('assignee_id', 'in', userIds)
    .execute();
}

/** Records mentions; returns the users not mentioned in the issue before. */
export async function addMentions(q: Q, issueId: number, userIds: number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  const before = new Set(
    (
      await q
        .selectFrom('issue_mention')
        .select('user_id')
        .where('issue_id', '=', issueId)
        .where('user_id', 'in', userIds)
        .execute()
    ).map((r) => r.user_id),
  );
  const fresh = userIds.filter((id) => !before.has(id));
  if (fresh.length) {
    await q
      .insertInto('issue_mention')
      .values(fresh.map((user_id) => ({ issue_id: issueId, user_id })))
      .onConflict((oc) => oc.columns(['issue_id', 'user_id']).doNothing())
      .execute();
  }
  return fresh;
}

/** Users mentioned in an issue or its comments. */
export async function mentionedIds(q: Q, issueId: number): Promise<number[]> {
  const rows = await q
    .selectFrom('issue_mention')
    .select('user_id')
    .where('issue_id', '=', issueId)
    .execute();
  return rows.map((r) => r.user_id);
}

// Subscriptions

export function getWatch(q: Q, issueId: number, userId: number): Promise<WatchRow | undefined> {
  return q
    .selectFrom('issue_watch')
    .selectAll()
    .where('issue_id', '=', issueId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function setWatch(
  q: Q,
  issueId: number,
  userId: number,
  watching: boolean,
  now: number,
): Promise<void> {
  await q
    .insertInto('issue_watch')
    .values({
      issue_id: issueId,
      user_id: userId,
      is_watching: watching ? 1 : 0,
      created_unix: now,
      updated_unix: now,
    })
    .onConflict((oc) =>
      oc.columns(['issue_id', 'user_id']).doUpdateSet({ is_watching: watching ? 1 : 0, updated_unix: now }),
    )
    .execute();
}

/** Every explicit subscription and unsubscription of an issue. */
export function watchRows(q: Q, issueId: number): Promise<WatchRow[]> {
  return q.selectFrom('issue_watch').selectAll().where('issue_id', '=', issueId).execute();
}

/** One page of the users subscribed to an issue, in the order they subscribed. */
export function subscribers(q: Q, issueId: number, limit: number, offset: number) {
  return paged(
    q
      .selectFrom('issue_watch')
      .innerJoin('user', 'user.id', 'issue_watch.user_id')
      .selectAll('user')
      .where('issue_watch.issue_id', '=', issueId)
      .where('issue_watch.is_watching', '=', 1)
      .orderBy('issue_watch.id'),
    limit,
    offset,
  );
}

// Comments and timeline events

export async function insertComment(q: Q, row: Insertable<CommentTable>): Promise<CommentRow> {
  return q.insertInto('comment').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Inserts many comments in one statement (bulk loads). */
export async function insertComments(q: Q, rows: Insertable<CommentTable>[]): Promise<void> {
  if (rows.length) await q.insertInto('comment').values(rows).execute();
}

export async function updateComment(q: Q, id: number, patch: Updateable<CommentTable>): Promise<CommentRow> {
  return q.updateTable('comment').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function removeComment(q: Q, id: number): Promise<void> {
  await q.deleteFrom('comment').where('id', '=', id).execute();
}

export function getComment(q: Q, id: number): Promise<CommentRow | undefined> {
  return q.selectFrom('comment').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The plain comments among `ids` (a page of activities names them), in one query. */
export function plainCommentsByIds(q: Q, ids: number[]): Promise<PlainCommentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return q
    .selectFrom('comment')
    .select(PLAIN_COMMENT_COLUMNS)
    .where('id', 'in', ids)
    .where('type', '=', CommentType.comment)
    .execute();
}

export interface CommentFilter {
  since?: number | undefined;
  before?: number | undefined;
}

function filtered<S extends ReturnType<typeof commentBase>>(s: S, f: CommentFilter): S {
  let o = s as ReturnType<typeof commentBase>;
  if (f.since !== undefined) o = o.where('updated_unix', '>=', f.since);
  if (f.before !== undefined) o = o.where('updated_unix', '<=', f.before);
  return o as S;
}

const commentBase = (q: Q) => q.selectFrom('comment');

/** The plain comments of an issue, oldest first; every one without a page. */
export function issueComments(
  q: Q,
  issueId: number,
  f: CommentFilter,
  page?: { limit: number; offset: number },
): Promise<[PlainCommentRow[], number]> {
  const s = filtered(commentBase(q), f)
    .select(PLAIN_COMMENT_COLUMNS)
    .where('issue_id', '=', issueId)
    .where('type', '=', CommentType.comment)
    .orderBy('created_unix')
    .orderBy('id');
  if (page) return paged(s, page.limit, page.offset);
  return s.execute().then((rows) => [rows, rows.length]);
}

/** One page of the timeline of an issue (every comment and event), oldest first. */
export function issueTimeline(
  q: Q,
  issueId: number,
  f: CommentFilter,
  page: { limit: number; offset: number },
): Promise<[CommentRow[], number]> {
  const s = filtered(commentBase(q), f)
    .selectAll()
    .where('issue_id', '=', issueId)
    .orderBy('created_unix')
    .orderBy('id');
  return paged(s, page.limit, page.offset);
}

/** One page of the plain comments of a repository, oldest first. */
export function repoComments(q: Q, repoId: number, f: CommentFilter, limit: number, offset: number) {
  return paged(
    filtered(commentBase(q), f)
      .select(PLAIN_COMMENT_COLUMNS)
      .where('repo_id', '=', repoId)
      .where('type', '=', CommentType.comment)
      .orderBy('created_unix')
      .orderBy('id'),
    limit,
    offset,
  );
}

/** Users who wrote plain comments on an issue. */
export async function commenterIds(q: Q, issueId: number): Promise<number[]> {
  const rows = await q
    .selectFrom('comment')
    .select('poster_id')
    .distinct()
    .where('issue_id', '=', issueId)
    .where('type', '=', CommentType.comment)
    .where('poster_id', 'is not', null)
    .execute();
  return rows.map((r) => r.poster_id!);
}

export async function adjustCommentCount(q: Q, issueId: number, delta: number): Promise<void> {
  await q
    .updateTable('issue')
    .set({ num_comments: sql`num_comments + ${delta}` })
    .where('id', '=', issueId)
    .execute();
}

// Reactions

/** Reactions to an issue (commentId 0) or to one of its comments, oldest first. */
/** Every reaction of an issue and of its comments, oldest first (one query for a whole page). */
export function allReactions(q: Q, issueId: number): Promise<ReactionRow[]> {
  return q.selectFrom('reaction').selectAll().where('issue_id', '=', issueId).orderBy('id').execute();
}

export function reactions(
  q: Q,
  issueId: number,
  commentId: number,
  page?: { limit: number; offset: number },
): Promise<[ReactionRow[], number]> {
  const s = q
    .selectFrom('reaction')
    .selectAll()
    .where('issue_id', '=', issueId)
    .where('comment_id', '=', commentId)
    .orderBy('id');
  if (page) return paged(s, page.limit, page.offset);
  return s.execute().then((rows) => [rows, rows.length]);
}

export function findReaction(q: Q, issueId: number, commentId: number, userId: number, type: string) {
  return q
    .selectFrom('reaction')
    .selectAll()
    .where('issue_id', '=', issueId)
    .where('comment_id', '=', commentId)
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .executeTakeFirst();
}

/** Adds a reaction unless the user already reacted so; returns it and whether it is new. */
export async function addReaction(
  q: Q,
  row: Insertable<ReactionTable>,
): Promise<{ reaction: ReactionRow; created: boolean }> {
  const inserted = await q
    .insertInto('reaction')
    .values(row)
    .onConflict((oc) => oc.columns(['issue_id', 'comment_id', 'user_id', 'type']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { reaction: inserted, created: true };
  const existing = await findReaction(q, row.issue_id, row.comment_id ?? 0, row.user_id, row.type);
  return { reaction: existing!, created: false };
}

export async function removeReaction(
  q: Q,
  issueId: number,
  commentId: number,
  userId: number,
  type: string,
): Promise<void> {
  await q
    .deleteFrom('reaction')
    .where('issue_id', '=', issueId)
    .where('comment_id', '=', commentId)
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .execute();
}

export async function removeCommentReactions(q: Q, issueId: number, commentId: number): Promise<void> {
  await q
    .deleteFrom('reaction')
    .where('issue_id', '=', issueId)
    .where('comment_id', '=', commentId)
    .execute();
}

/** Site-wide counts for /nodeinfo: issues and pull requests, and their comments. */
export async function siteCounts(q: Q): Promise<{ posts: number; comments: number }> {
  const [posts, comments] = await Promise.all([
    q
      .selectFrom('issue')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
    q
      .selectFrom('comment')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('type', '=', 0)
      .executeTakeFirstOrThrow(),
  ]);
  return { posts: Number(posts.n), comments: Number(comments.n) };
}

/** Whether the issue's timeline already has a reference from `commitSha`. */
export async function hasCommitReference(q: Q, issueId: number, commitSha: string): Promise<boolean> {
  const r = await q
    .selectFrom('comment')
    .select('id')
    .where('issue_id', '=', issueId)
    .where('type', '=', CommentType.commitRef)
    .where('commit_sha', '=', commitSha)
    .executeTakeFirst();
  return r !== undefined;
}
