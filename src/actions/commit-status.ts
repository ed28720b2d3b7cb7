// Commit statuses of actions jobs, as Forgejo sets them: one context per job,
// "<workflow name> / <job name> (<event>)", pending while it waits or runs, success when it
// succeeded or was skipped, failure when it failed or was cancelled, with Forgejo's descriptions and
// the job's page as target URL. ActionsService.runChanged tells of every change; the statuses of a
// run are brought up to date one run at a time, and a status equal to the newest of its context is
// not written again.
import type { Logger } from 'pino';
import { parse } from 'yaml';
import type { Db } from '../db/database.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { StatusRow } from '../statuses/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { ActionsService } from './service.js';
import * as store from './store.js';
import type { JobRow, RunRow } from './tables.js';

type CommitState = 'pending' | 'success' | 'failure' | 'error';

/** The part of the statuses domain this needs (StatusService). */
export interface CommitStatusWriter {
  create(
    repo: RepoRow,
    creator: UserRow,
    sha: string,
    input: { state: CommitState; target_url: string; description: string; context: string },
  ): Promise<unknown>;
  combined(
    repo: RepoRow,
    sha: string,
    page: { page: number; limit: number; offset: number },
  ): Promise<{ rows: StatusRow[] }>;
}

export interface JobStatusesDeps {
  db: Db;
  log: Logger;
  rootUrl: string;
  statuses: CommitStatusWriter;
  repos: Pick<RepoService, 'getById'>;
  users: Pick<UserService, 'getById'>;
  actions: Pick<ActionsService, 'onRunChanged' | 'botUser'>;
}

/** Forgejo's toCommitStatus. */
export function commitStateOf(status: string): CommitState {
  switch (status) {
    case 'success':
    case 'skipped':
      return 'success';
    case 'failure':
    case 'cancelled':
      return 'failure';
    case 'waiting':
    case 'blocked':
    case 'running':
      return 'pending';
    default:
      return 'error';
  }
}

/** A duration as Go prints one, to the second ("45s", "1m5s", "2h0m3s"). */
export function goDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h}h${m}m${r}s`;
  if (m) return `${m}m${r}s`;
  return `${r}s`;
}

export function jobDuration(job: Pick<JobRow, 'started_unix' | 'stopped_unix'>, now: number): number {
  if (!job.started_unix) return 0;
  return (job.stopped_unix || now) - job.started_unix;
}

/** Forgejo's descriptions of a job's state. */
export function describeJob(job: JobRow, now: number): string {
  switch (job.status) {
    case 'success':
      return `Successful in ${goDuration(jobDuration(job, now))}`;
    case 'failure':
      return `Failing after ${goDuration(jobDuration(job, now))}`;
    case 'cancelled':
      return 'Has been cancelled';
    case 'skipped':
      return 'Has been skipped';
    case 'running':
      return 'Has started running';
    case 'waiting':
      return 'Waiting to run';
    case 'blocked':
      return 'Blocked by required conditions';
    default:
      return '';
  }
}

/** The workflow's `name:` from a job's payload, else the file's name (Forgejo's runName). */
export function workflowNameOf(
  job: Pick<JobRow, 'workflow_payload'>,
  run: Pick<RunRow, 'workflow_id'>,
): string {
  try {
    const doc = parse(job.workflow_payload) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
      const name = (doc as Record<string, unknown>)['name'];
      if (typeof name === 'string' && name.trim()) return name.trim();
    }
  } catch {
    // the file's name
  }
  return run.workflow_id;
}

export class JobStatuses {
  /** The sync of each run in progress (syncs of one run run one after the other). */
  private readonly pending = new Map<number, Promise<void>>();

  constructor(private readonly deps: JobStatusesDeps) {
    deps.actions.onRunChanged((runId) => this.schedule(runId));
  }

  /** Brings the run's statuses up to date after whatever is being done for it now. */
  schedule(runId: number): Promise<void> {
    const prev = this.pending.get(runId) ?? Promise.resolve();
    const next = prev
      .then(() => this.sync(runId))
      .catch((err: unknown) => this.deps.log.error({ err, runId }, 'actions: commit statuses not written'));
    this.pending.set(runId, next);
    void next.finally(() => {
      if (this.pending.get(runId) === next) this.pending.delete(runId);
    });
    return next;
  }

  /** Resolves when every sync started so far has ended (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending.values()]);
  }

  private async sync(runId: number): Promise<void> {
    const run = await store.runById(this.deps.db, runId);
    if (!run) return;
    const repo = await this.deps.repos.getById(run.repo_id);
    if (!repo) return;
    const owner = await this.deps.users.getById(repo.owner_id);
    const jobs = await store.jobsOfRun(this.deps.db, run.id);
    const { rows } = await this.deps.statuses.combined(repo, run.commit_sha, {
      page: 1,
      limit: 1000,
      offset: 0,
    });
    const newest = new Map(rows.map((r) => [r.context, r]));
    const bot = await this.deps.actions.botUser();
    const now = Math.floor(Date.now() / 1000);
    const base = `${this.deps.rootUrl}${encodeURIComponent(owner?.name ?? '')}/${encodeURIComponent(repo.name)}`;
    for (const [index, job] of jobs.entries()) {
      const context = `${workflowNameOf(job, run)} / ${job.name} (${run.event})`;
      const state = commitStateOf(job.status);
      const description = describeJob(job, now);
      const last = newest.get(context);
      if (last && last.state === state && last.description === description) continue;
      await this.deps.statuses.create(repo, bot, run.commit_sha, {
        state,
        description,
        context,
        target_url: `${base}/actions/runs/${run.run_number}/jobs/${index}`,
      });
    }
  }
}
