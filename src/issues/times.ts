// Time tracking and stopwatches, as Forgejo has them. Writers of an issue's repository, and the
// issue's poster, track time on it (Forgejo's default "only contributors track time"); stopwatches
// are for writers. Each change writes its timeline event: add_time_manual and delete_time_manual
// with the seconds as "|<seconds>", start_tracking, stop_tracking (with the time it recorded) and
// cancel_tracking. A user runs one stopwatch at a time: starting another stops the running one.
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { conflict, forbidden, invalidField, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import { AccessMode } from '../orgs/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { canWriteIssues, type RepoView } from './service.js';
import * as store from './store.js';
import type { IssueRow } from './tables.js';
import * as tracking from './tracking-store.js';
import type { TimeFilter } from './tracking-store.js';
import type { StopwatchRow, TrackedTimeRow } from './tables.js';
import { CommentType } from './tables.js';
import { parseTime } from './input.js';

export interface AddTimeInput {
  /** Seconds. */
  time: number;
  /** RFC 3339; now when absent. */
  created?: string | undefined;
  /** Whose time it is: honoured for site administrators and repository administrators. */
  userName?: string | undefined;
}

export interface TimeListInput {
  user?: string | undefined;
  since?: string | undefined;
  before?: string | undefined;
}

const MAX_SECONDS = 2 ** 31 - 1;

export interface TimeServiceDeps {
  db: Db;
  /** Whose time it is, by name. */
  users: Pick<UserService, 'getByName'>;
}

export class TimeService {
  private readonly db: Db;

  constructor(private readonly deps: TimeServiceDeps) {
    this.db = deps.db;
  }

  /** Forgejo's CanUseTimetracker with only contributors tracking time: writers and the poster. */
  private static assertCanTrack(view: RepoView, issue: IssueRow, doer: UserRow): void {
    if (!canWriteIssues(view.access, issue.is_pull) && issue.poster_id !== doer.id) {
      throw forbidden('only writers and the poster may track time on this issue');
    }
  }

  private static assertWritable(view: RepoView): void {
    if (view.repo.is_archived) throw forbidden(`repository is archived [id: ${view.repo.id}]`);
  }

  private static timeFilter(input: TimeListInput): Pick<TimeFilter, 'since' | 'before'> {
    return {
      since: input.since ? parseTime(input.since, 'since') : undefined,
      before: input.before ? parseTime(input.before, 'before') : undefined,
    };
  }

  private async userNamed(name: string): Promise<UserRow> {
    const u = name.includes('\0') ? undefined : await this.deps.users.getByName(name);
    if (!u || u.type !== UserType.Individual) throw notFound(`user does not exist [name: ${name}]`);
    return u;
  }

  private static event(
    tx: Tx,
    issue: IssueRow,
    posterId: number,
    type: number,
    now: number,
    extra: { content?: string; time_id?: number } = {},
  ) {
    return store.insertComment(tx, {
      type,
      repo_id: issue.repo_id,
      issue_id: issue.id,
      poster_id: posterId,
      created_unix: now,
      updated_unix: now,
      ...extra,
    });
  }

  // Tracked times

  /** Adds time to the issue (for `userName` when the doer administers the repository or the site). */
  async add(view: RepoView, issue: IssueRow, doer: UserRow, input: AddTimeInput): Promise<TrackedTimeRow> {
    TimeService.assertCanTrack(view, issue, doer);
    TimeService.assertWritable(view);
    if (!Number.isSafeInteger(input.time) || input.time <= 0 || input.time > MAX_SECONDS) {
      throw invalidField('time', 'must be a positive number of seconds');
    }
    let user = doer;
    if (input.userName && input.userName !== doer.name) {
      if (doer.is_admin || view.access.mode >= AccessMode.admin) {
        const u = input.userName.includes('\0') ? undefined : await this.deps.users.getByName(input.userName);
        if (!u || u.type !== UserType.Individual) {
          throw invalidField('user_name', `user does not exist [name: ${input.userName}]`);
        }
        user = u;
      }
    }
    const now = nowUnix();
    const created = input.created ? parseTime(input.created, 'created') : now;
    return transaction(this.db, async (tx) => {
      const row = await tracking.insertTime(tx, {
        issue_id: issue.id,
        user_id: user.id,
        created_unix: created,
        time: input.time,
      });
      await TimeService.event(tx, issue, user.id, CommentType.addTimeManual, now, {
        content: `|${input.time}`,
        time_id: row.id,
      });
      return row;
    });
  }

  /** Deletes every time the doer tracked on the issue; 404 when there was none. */
  async reset(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    TimeService.assertCanTrack(view, issue, doer);
    TimeService.assertWritable(view);
    await transaction(this.db, async (tx) => {
      const removed = await tracking.deleteUserTimes(tx, issue.id, doer.id);
      if (removed === 0) throw notFound(`no tracked time of ${doer.name} on this issue`);
      await TimeService.event(tx, issue, doer.id, CommentType.deleteTimeManual, nowUnix(), {
        content: `|${removed}`,
      });
    });
  }

  /** Deletes one tracked time: its user's own, or anyone's by a site administrator (403). */
  async delete(view: RepoView, issue: IssueRow, doer: UserRow, id: number): Promise<void> {
    TimeService.assertCanTrack(view, issue, doer);
    TimeService.assertWritable(view);
    const t = Number.isSafeInteger(id) ? await tracking.getTime(this.db, id) : undefined;
    if (!t || t.issue_id !== issue.id) throw notFound(`tracked time does not exist [id: ${id}]`);
    if (t.deleted) throw notFound(`tracked time [${t.id}] already deleted`);
    if (!doer.is_admin && t.user_id !== doer.id) {
      throw forbidden('only its user and site administrators may delete a tracked time');
    }
    await transaction(this.db, async (tx) => {
      await tracking.markTimeDeleted(tx, t.id);
      await TimeService.event(tx, issue, t.user_id, CommentType.deleteTimeManual, nowUnix(), {
        content: `|${t.time}`,
      });
    });
  }

  /**
   * Tracked times of a repository (or of one of its issues). Writers, site administrators and
   * the user in question see anyone's; others see only their own (403 when asking for another's).
   */
  async list(
    view: RepoView,
    issue: IssueRow | null,
    doer: UserRow,
    input: TimeListInput,
    page: Page,
  ): Promise<[TrackedTimeRow[], number]> {
    if (!view.repo.has_issues) throw notFound('the issues of this repository are turned off');
    let userId = input.user ? (await this.userNamed(input.user)).id : undefined;
    const times = TimeService.timeFilter(input);
    const writer = (view.access.units.get('repo.issues') ?? 0) >= AccessMode.write;
    if (!doer.is_admin && userId !== doer.id && !writer) {
      if (userId !== undefined) throw forbidden('query by user not allowed; not enough rights');
      userId = doer.id;
    }
    return tracking.listTimes(this.db, { repoId: view.repo.id, issueId: issue?.id, userId, ...times }, page);
  }

  /** Every tracked time of `userName` in the repository (its administrators or that user only). */
  async ofUser(view: RepoView, doer: UserRow, userName: string): Promise<TrackedTimeRow[]> {
    if (!view.repo.has_issues) throw notFound('the issues of this repository are turned off');
    const user = await this.userNamed(userName);
    if (view.access.mode < AccessMode.admin && !doer.is_admin && doer.id !== user.id) {
      throw forbidden('query by user not allowed; not enough rights');
    }
    const [rows] = await tracking.listTimes(this.db, { repoId: view.repo.id, userId: user.id });
    return rows;
  }

  /** Tracked times by id, deleted ones included (for the timeline). */
  getByIds(ids: number[]): Promise<TrackedTimeRow[]> {
    return tracking.getTimes(this.db, [...new Set(ids)]);
  }

  /** The doer's own tracked times, everywhere. */
  mine(doer: UserRow, input: TimeListInput, page: Page): Promise<[TrackedTimeRow[], number]> {
    return tracking.listTimes(this.db, { userId: doer.id, ...TimeService.timeFilter(input) }, page);
  }

  // Stopwatches

  private static assertCanClock(view: RepoView, issue: IssueRow, doer: UserRow): void {
    if (!canWriteIssues(view.access, issue.is_pull)) {
      throw forbidden('you need write access to the issues of this repository to use a stopwatch');
    }
    TimeService.assertCanTrack(view, issue, doer);
    TimeService.assertWritable(view);
  }

  /** Stops `sw` inside `tx`: its time becomes a tracked time, with a stop_tracking event. */
  private async finish(tx: Tx, sw: StopwatchRow): Promise<void> {
    if (!(await tracking.removeStopwatch(tx, sw.id))) return;
    const issue = await store.getById(tx, sw.issue_id);
    if (!issue) return;
    const now = nowUnix();
    const seconds = Math.max(0, now - sw.created_unix);
    const row = await tracking.insertTime(tx, {
      issue_id: issue.id,
      user_id: sw.user_id,
      created_unix: now,
      time: seconds,
    });
    await TimeService.event(tx, issue, sw.user_id, CommentType.stopTracking, now, {
      content: `|${seconds}`,
      time_id: row.id,
    });
  }

  /** Inside `tx`: stops `userId`'s stopwatch on the issue, if one runs (the issue is being closed). */
  async finishOnClose(tx: Tx, issueId: number, userId: number): Promise<void> {
    const sw = await tracking.getStopwatch(tx, issueId, userId);
    if (sw) await this.finish(tx, sw);
  }

  /** Starts the doer's stopwatch on the issue (stopping any other of theirs); 409 when running. */
  async start(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    TimeService.assertCanClock(view, issue, doer);
    await transaction(this.db, async (tx) => {
      await store.lockIssue(tx, issue.id);
      if (await tracking.getStopwatch(tx, issue.id, doer.id)) {
        throw conflict('cannot start a stopwatch again if it already exists');
      }
      for (const other of await tracking.stopwatchesOf(tx, doer.id)) await this.finish(tx, other);
      const now = nowUnix();
      await tracking.insertStopwatch(tx, { issue_id: issue.id, user_id: doer.id, created_unix: now });
      await TimeService.event(tx, issue, doer.id, CommentType.startTracking, now);
    });
  }

  /** Stops the doer's stopwatch on the issue, adding its time; 409 when none is running. */
  async stop(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    TimeService.assertCanClock(view, issue, doer);
    await transaction(this.db, async (tx) => {
      const sw = await tracking.getStopwatch(tx, issue.id, doer.id);
      if (!sw) throw conflict('cannot stop/cancel a non existent stopwatch');
      await this.finish(tx, sw);
    });
  }

  /** Cancels the doer's stopwatch on the issue without tracking time; 409 when none is running. */
  async cancel(view: RepoView, issue: IssueRow, doer: UserRow): Promise<void> {
    TimeService.assertCanClock(view, issue, doer);
    await transaction(this.db, async (tx) => {
      const sw = await tracking.getStopwatch(tx, issue.id, doer.id);
      if (!sw || !(await tracking.removeStopwatch(tx, sw.id))) {
        throw conflict('cannot stop/cancel a non existent stopwatch');
      }
      await TimeService.event(tx, issue, doer.id, CommentType.cancelTracking, nowUnix());
    });
  }

  /** One page of the doer's running stopwatches. */
  stopwatches(doer: UserRow, page: Page): Promise<[StopwatchRow[], number]> {
    return tracking.userStopwatches(this.db, doer.id, page.limit, page.offset);
  }
}
