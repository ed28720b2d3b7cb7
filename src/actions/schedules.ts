// Scheduled workflows (`on.schedule`): a push to a repository's default branch records the cron
// specs of its workflows (action_schedule, with when each fires next; a spec kept across pushes
// keeps its time); every minute each process's scheduler (the `start_schedule_tasks` cron task)
// claims the due rows by moving their next time on, a compare-and-set, so that on several nodes
// each time fires once, and starts a run of the workflow as it is on the default branch then.
// Missed times (the site was down) are not made up, as GitHub does not. A claim whose run could
// not be created is lost rather than repeated (at most once).
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { AnvilEvents, EventBus } from '../events/bus.js';
import { ZERO_OID } from '../git/git.js';
import type { CronService } from '../cron/service.js';
import type { RepoService } from '../repos/service.js';
import { isActionsBot } from './bot.js';
import type { ActionsService } from './service.js';
import * as store from './store.js';
import { nextCronTime, parseWorkflow, WorkflowError } from './workflow.js';

/** Most schedules started by one tick (the rest wait for the next, a minute later). */
const PER_TICK = 500;

export interface ScheduleServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  actions: Pick<ActionsService, 'enabled' | 'workflowsAt' | 'startScheduled'>;
  repos: Pick<RepoService, 'getById' | 'pathOf'>;
  /** Each tick is a run of the `start_schedule_tasks` cron task. */
  cron: Pick<CronService, 'track'>;
}

export class ScheduleService {
  private readonly db: Db;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: ScheduleServiceDeps) {
    this.db = deps.db;
    deps.events.on('push', (e) => this.onPush(e));
  }

  /** Milliseconds until the next tick: a second past the next minute. */
  nextIn(): number {
    return 60_000 - ((Date.now() - 1000) % 60_000);
  }

  /** Ticks each minute (`anvil web`), until `stop()`. */
  start(): void {
    if (this.timer || !this.deps.actions.enabled) return;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.deps.cron
          .track('start_schedule_tasks', this.tick())
          .catch((err: unknown) =>
            this.deps.log.error({ err }, 'actions: the schedules could not be checked'),
          )
          .finally(schedule);
      }, this.nextIn());
      this.timer.unref();
    };
    schedule();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async onPush({ repoId, pusherId, updates }: AnvilEvents['push']): Promise<void> {
    if (!this.deps.actions.enabled || isActionsBot(pusherId)) return;
    try {
      const repo = await this.deps.repos.getById(repoId);
      if (!repo || repo.is_mirror) return;
      const head = updates.find((u) => u.ref === `refs/heads/${repo.default_branch}`);
      if (!head) return;
      await this.record(repoId, pusherId, head.newOid === ZERO_OID ? undefined : head.newOid);
    } catch (err) {
      this.deps.log.error({ err, repoId }, 'actions: could not record the schedules of a push');
    }
  }

  /** The schedules of the workflows at `commit` (none when the branch is gone) replace the repository's. */
  async record(repoId: number, pusherId: number, commit: string | undefined): Promise<void> {
    const repo = await this.deps.repos.getById(repoId);
    if (!repo) return;
    const files = commit ? await this.deps.actions.workflowsAt(this.deps.repos.pathOf(repo), commit) : [];
    const wanted = new Map<string, { workflowId: string; spec: string }>();
    for (const file of files) {
      let specs: string[] | undefined;
      try {
        specs = parseWorkflow(file.content, file.path).triggers.schedule;
      } catch (err) {
        if (!(err instanceof WorkflowError)) throw err;
        this.deps.log.warn({ path: file.path, err: err.message }, 'actions: workflow ignored');
      }
      for (const spec of specs ?? []) wanted.set(`${file.name}\n${spec}`, { workflowId: file.name, spec });
    }
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      const have = await store.schedulesOf(tx, repoId);
      const kept = new Set(have.map((r) => `${r.workflow_id}\n${r.spec}`));
      await store.deleteSchedules(
        tx,
        have.filter((r) => !wanted.has(`${r.workflow_id}\n${r.spec}`)).map((r) => r.id),
      );
      await store.insertSchedules(
        tx,
        [...wanted]
          .filter(([key]) => !kept.has(key))
          .map(([, w]) => ({
            repo_id: repoId,
            workflow_id: w.workflowId,
            spec: w.spec,
            next_unix: nextCronTime(w.spec, now),
            trigger_user_id: pusherId,
            created_unix: now,
          })),
      );
    });
  }

  /** One tick: starts the runs of every schedule whose time has come. Returns how many started. */
  async tick(now = nowUnix()): Promise<number> {
    if (!this.deps.actions.enabled) return 0;
    let started = 0;
    for (const row of await store.dueSchedules(this.db, now, PER_TICK)) {
      let next: number;
      try {
        next = nextCronTime(row.spec, now);
      } catch {
        await store.deleteSchedules(this.db, [row.id]);
        continue;
      }
      // Another process took this time first: it starts the run.
      if (!(await store.claimSchedule(this.db, row.id, row.next_unix, next))) continue;
      try {
        const outcome = await this.deps.actions.startScheduled(row);
        if (outcome === 'gone') await store.deleteSchedules(this.db, [row.id]);
        if (outcome === 'started') started++;
      } catch (err) {
        this.deps.log.error({ err, scheduleId: row.id }, 'actions: a scheduled run could not start');
      }
    }
    return started;
  }
}
