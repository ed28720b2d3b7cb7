// The background tasks an administrator sees and starts (/admin/cron): each service that runs work
// on a schedule registers it here (name, schedule as configured, how long until the next run, and
// how to run it) and reports each run through `track`, whether its own timer started it or an
// administrator did; a task already running is joined, not started twice. Per process: on several
// nodes each lists its own runs.
import type { Logger } from 'pino';
import type { Schedule } from '../config/config.js';
import { notFound } from '../errors.js';

/** A schedule as Forgejo writes it: `@every 3600s`, `@hourly`, `@daily`, `@weekly`. */
export function describeSchedule(s: Schedule): string {
  if ('every' in s) return `@every ${s.every}s`;
  return { hour: '@hourly', day: '@daily', week: '@weekly' }[s.at];
}

export interface CronTask {
  /** Forgejo's name where Forgejo has the task (cleanup_packages, update_mirrors, ...). */
  name: string;
  /** The schedule as configured (`@midnight`, `@every 1h`). */
  schedule: string;
  /** Milliseconds until the next scheduled run. */
  nextIn(): number;
  run(): Promise<unknown>;
}

interface Entry {
  task: CronTask;
  prev: number | undefined;
  execTimes: number;
  running: Promise<unknown> | undefined;
  last: LastRun | undefined;
}

/** How the previous finished run of a task went. */
export interface LastRun {
  ok: boolean;
  /** The error's message when it failed. */
  message: string;
  finishedAt: number;
  seconds: number;
}

/** Told of every failed run (the site administration's notices record them). */
export type CronFailed = (name: string, err: unknown) => void;

/** Told of every finished run (ops/metrics.ts counts them). */
export interface JobRuns {
  jobRun(name: string, ok: boolean, seconds: number): void;
}

export interface CronServiceDeps {
  log: Logger;
  metrics: JobRuns;
}

export class CronService {
  private readonly tasks = new Map<string, Entry>();
  private startedAt = Date.now();
  private readonly log: Logger;
  private readonly metrics: JobRuns;
  private readonly failedListeners: CronFailed[] = [];

  constructor(deps: CronServiceDeps) {
    this.log = deps.log;
    this.metrics = deps.metrics;
  }

  /** When the schedulers started (`anvil web`): tasks run every N ms count from here. */
  start(): void {
    this.startedAt = Date.now();
  }

  /** Milliseconds until the next run of a task that runs every `everyMs` since the start. */
  nextOfEvery(everyMs: number): number {
    return everyMs - ((Date.now() - this.startedAt) % everyMs);
  }

  register(task: CronTask): void {
    this.tasks.set(task.name, { task, prev: undefined, execTimes: 0, running: undefined, last: undefined });
  }

  /** Listens to failed runs of every task. */
  onFailure(listener: CronFailed): void {
    this.failedListeners.push(listener);
  }

  /** Records a run of `name` that `work` is; returns it. */
  track<T>(name: string, work: Promise<T>): Promise<T> {
    const e = this.tasks.get(name);
    if (!e) return work;
    const started = Date.now();
    e.prev = started;
    e.execTimes++;
    const finished = (ok: boolean, message: string) => {
      const seconds = (Date.now() - started) / 1000;
      e.last = { ok, message, finishedAt: Date.now(), seconds };
      this.metrics.jobRun(name, ok, seconds);
    };
    work.then(
      () => finished(true, ''),
      (err: unknown) => {
        finished(false, err instanceof Error ? err.message : String(err));
        for (const listener of this.failedListeners) {
          try {
            listener(name, err);
          } catch (failure) {
            this.log.error({ err: failure, task: name }, 'recording a failed cron run failed');
          }
        }
      },
    );
    e.running = work.finally(() => {
      if (e.running === tracked) e.running = undefined;
    });
    const tracked = e.running;
    return work;
  }

  /** The tasks, by name: schedule, next and previous run, and how many runs this process made. */
  list() {
    const now = Date.now();
    return [...this.tasks.values()]
      .sort((a, b) => a.task.name.localeCompare(b.task.name))
      .map((e) => ({
        name: e.task.name,
        schedule: e.task.schedule,
        next: new Date(now + e.task.nextIn()).toISOString(),
        prev: new Date(e.prev ?? 0).toISOString(),
        exec_times: e.execTimes,
      }));
  }

  /** The tasks as list() has them, with how the previous finished run went and whether one runs now. */
  status() {
    return this.list().map((t) => {
      const e = this.tasks.get(t.name)!;
      return { ...t, ran: e.prev !== undefined, running: e.running !== undefined, last: e.last };
    });
  }

  /** Starts `name` now in the background (joins a run under way); 404 for an unknown task. */
  runNow(name: string): void {
    const e = this.tasks.get(name);
    if (!e) throw notFound(`cron task does not exist [name: ${name}]`);
    if (e.running) return;
    void this.track(name, e.task.run()).catch((err: unknown) =>
      this.log.error({ err, task: name }, 'cron task failed'),
    );
  }

  /** A run under way of `name`, if any (tests wait for it). */
  running(name: string): Promise<unknown> | undefined {
    return this.tasks.get(name)?.running;
  }
}
