// What the Actions pages do to runs and workflows besides reading them: the workflows of the
// default branch (with their dispatch inputs) and disabling or enabling one, cancelling a run, and
// re-running one job (with the jobs that need it), every job, or the failed ones only. The run's
// status is always its jobs' aggregate (runners.ts aggregateStatus), and every change is told to
// ActionsService.runChanged (commit statuses follow it).
import { nowUnix, transaction, type Db } from '../db/database.js';
import { conflict, notFound } from '../errors.js';
import { resolveRef } from '../git/data.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { parseLabels, type RunnerService } from './runners.js';
import type { ActionsService } from './service.js';
import { cancelRun } from './run-create.js';
import { noEffects, releaseGroupsOfRun, type GroupEffects } from './job-concurrency.js';
import { coversKey } from './reusable.js';
import * as store from './store.js';
import { aggregateStatus, isDone, type JobRow, type RunRow, type TaskRow } from './tables.js';
import { parseWorkflow, type DispatchInput } from './workflow.js';

/** A workflow file of the default branch, as the list's side shows it. */
export interface WorkflowInfo {
  /** The file's name: the workflow's id ("ci.yml"). */
  id: string;
  path: string;
  /** `name:`, or the path. */
  name: string;
  disabled: boolean;
  /** The `workflow_dispatch` inputs, when it has that trigger. */
  dispatch: Record<string, DispatchInput> | undefined;
  /** Why the file could not be read, when it could not. */
  error: string | undefined;
}

export type Rerun = { kind: 'all' } | { kind: 'failed' } | { kind: 'job'; job: JobRow };

export interface RunControlDeps {
  db: Db;
  actions: Pick<ActionsService, 'assertEnabled' | 'workflowsAt' | 'runChanged'>;
  runners: Pick<RunnerService, 'finish' | 'notifyNewJobs' | 'releaseGroup' | 'startHeld'>;
  repos: Pick<RepoService, 'pathOf'>;
}

export class RunControl {
  private readonly db: Db;

  constructor(private readonly deps: RunControlDeps) {
    this.db = deps.db;
  }

  /** The workflow files of the default branch (none for an empty repository), and those with runs. */
  async workflows(repo: RepoRow): Promise<WorkflowInfo[]> {
    const dir = this.deps.repos.pathOf(repo);
    const head = repo.is_empty ? undefined : await resolveRef(dir, repo.default_branch);
    const files = head && head.kind !== 'commit' ? await this.deps.actions.workflowsAt(dir, head.oid) : [];
    const disabled = await store.disabledWorkflows(this.db, repo.id);
    const out: WorkflowInfo[] = files.map((f) => {
      try {
        const wf = parseWorkflow(f.content, f.path);
        return {
          id: f.name,
          path: f.path,
          name: wf.name,
          disabled: disabled.has(f.name),
          dispatch: wf.triggers.workflow_dispatch?.inputs,
          error: undefined,
        };
      } catch (err) {
        return {
          id: f.name,
          path: f.path,
          name: f.name,
          disabled: disabled.has(f.name),
          dispatch: undefined,
          error: err instanceof Error ? err.message : String(err),
        };
      }
    });
    // Workflows that ran but are no longer on the default branch (another branch's, a removed one).
    for (const id of await store.runWorkflowIds(this.db, repo.id)) {
      if (out.some((w) => w.id === id)) continue;
      out.push({ id, path: id, name: id, disabled: disabled.has(id), dispatch: undefined, error: undefined });
    }
    return out;
  }

  /** Disables or enables a workflow (404 when the repository has no such workflow). */
  async setDisabled(repo: RepoRow, workflowId: string, disabled: boolean): Promise<void> {
    this.deps.actions.assertEnabled();
    const known = (await this.workflows(repo)).some((w) => w.id === workflowId);
    if (!known) throw notFound(`workflow does not exist [name: ${workflowId}]`);
    await store.setWorkflowDisabled(this.db, repo.id, workflowId, disabled);
  }

  isDisabled(repo: RepoRow, workflowId: string): Promise<boolean> {
    return store.disabledWorkflows(this.db, repo.id).then((s) => s.has(workflowId));
  }

  /** The run of `repo` with this run number (the pages' run index). */
  async requireRunByNumber(repo: RepoRow, runNumber: number): Promise<RunRow> {
    const [rows] =
      Number.isSafeInteger(runNumber) && runNumber > 0
        ? await store.listRuns(this.db, repo.id, { runNumber }, 1, 0)
        : [[]];
    const run = rows[0];
    if (!run) throw notFound(`run does not exist [index: ${runNumber}]`);
    return run;
  }

  jobsOf(run: RunRow): Promise<JobRow[]> {
    return store.jobsOfRun(this.db, run.id);
  }

  /** The latest task of a job (the one whose log the job page shows). */
  async taskOf(job: JobRow): Promise<TaskRow | undefined> {
    return job.task_id ? store.taskById(this.db, job.task_id) : undefined;
  }

  /** The rows of a task's log that start steps or report errors. */
  async logMarks(task: TaskRow) {
    return (await store.logMarks(this.db, task.id)).map((r) => ({
      idx: Number(r.idx),
      time_ms: Number(r.time_ms),
      content: r.content,
    }));
  }

  /** Up to `limit` rows of a task's log from row `from` on. */
  async logRows(task: TaskRow, from: number, limit: number) {
    if (limit <= 0) return [];
    return (await store.logsFrom(this.db, task.id, from, limit)).map((r) => ({
      idx: Number(r.idx),
      time_ms: Number(r.time_ms),
      content: r.content,
    }));
  }

  /** The newest run of a workflow on a branch (and of an event), for its status badge. */
  latestRun(repo: RepoRow, workflowId: string, branch: string, event: string | undefined) {
    return store.latestRunOf(this.db, repo.id, workflowId, `refs/heads/${branch}`, event || undefined);
  }

  /** Once committed: the tasks entering concurrency groups cancelled end, the runs changed say so. */
  private async afterGroups(fx: GroupEffects): Promise<void> {
    for (const taskId of fx.cancelTasks) await this.deps.runners.finish(taskId, 'cancelled');
    for (const id of fx.changedRuns) this.deps.actions.runChanged(id);
  }

  /**
   * Cancels what is left of a run: waiting and blocked jobs are cancelled at once, running ones
   * through their task (the runner hears of it at its next report and stops the step). 409 when the
   * run is already done.
   */
  async cancel(run: RunRow): Promise<void> {
    this.deps.actions.assertEnabled();
    if (isDone(run.status)) throw conflict('the run is already done');
    const fx = noEffects();
    const { running, released } = await transaction(this.db, async (tx) => {
      const now = nowUnix();
      const tasks = await cancelRun(tx, run.id, now);
      // Jobs held by the job-level groups of the jobs it cancelled may start.
      const others = await releaseGroupsOfRun(tx, run.id, now);
      fx.changedRuns.push(...others);
      // Ended without a running job: the next run its concurrency group holds may start.
      const ended = isDone((await store.runById(tx, run.id))!.status);
      const next = ended && (await this.deps.runners.releaseGroup(tx, run.id, now, fx));
      return { running: tasks, released: next || others.length > 0 };
    });
    for (const taskId of running) await this.deps.runners.finish(taskId, 'cancelled');
    await this.afterGroups(fx);
    if (released) this.deps.runners.notifyNewJobs();
    this.deps.actions.runChanged(run.id);
  }

  /**
   * A writer approves a fork's pull request run: it starts, or waits for its concurrency group
   * like any other run. 409 when it does not wait for approval.
   */
  async approve(run: RunRow, approverId: number): Promise<void> {
    this.deps.actions.assertEnabled();
    const fx = noEffects();
    const released = await transaction(this.db, async (tx) => {
      const now = nowUnix();
      const current = (await store.runById(tx, run.id))!;
      if (!current.need_approval || isDone(current.status)) {
        throw conflict('the run does not wait for approval');
      }
      await store.updateRun(tx, run.id, { need_approval: 0, approved_by: approverId, updated_unix: now });
      if (current.concurrency_group) {
        const others = await store.openRunsOfGroup(tx, run.repo_id, current.concurrency_group, run.id);
        if (others.some((o) => o.status !== 'blocked')) return false;
      }
      return this.deps.runners.startHeld(tx, run.id, now, fx);
    });
    await this.afterGroups(fx);
    if (released) this.deps.runners.notifyNewJobs();
    this.deps.actions.runChanged(run.id);
  }

  /**
   * Re-runs jobs of a finished run (409 while it runs): the chosen ones and every job that needs
   * them, directly or not, start again (a job whose needs are among them waits for them). Returns
   * how many jobs start again (0 when "failed only" finds none).
   */
  async rerun(run: RunRow, which: Rerun): Promise<number> {
    this.deps.actions.assertEnabled();
    if (!isDone(run.status)) throw conflict('the run is still running: cancel it or wait for it to end');
    const fx = noEffects();
    const count = await transaction(this.db, async (tx) => {
      const current = (await store.runById(tx, run.id))!;
      if (!isDone(current.status)) throw conflict('the run is still running');
      const jobs = await store.jobsOfRun(tx, run.id);
      const chosen = new Set<number>();
      for (const j of jobs) {
        if (
          which.kind === 'all' ||
          (which.kind === 'failed' && (j.status === 'failure' || j.status === 'cancelled')) ||
          (which.kind === 'job' && j.id === which.job.id)
        ) {
          chosen.add(j.id);
        }
      }
      // Every job that needs a chosen one (by key, through any number of steps) runs again too.
      for (let grew = true; grew;) {
        grew = false;
        const keys = new Set(jobs.filter((j) => chosen.has(j.id)).map((j) => j.job_id));
        for (const j of jobs) {
          // A need naming a calling job covers the jobs of the workflow it calls.
          if (!chosen.has(j.id) && parseLabels(j.needs).some((n) => [...keys].some((k) => coversKey(n, k)))) {
            chosen.add(j.id);
            grew = true;
          }
        }
      }
      if (chosen.size === 0) return 0;
      const again = new Set(jobs.filter((j) => chosen.has(j.id)).map((j) => j.job_id));
      const now = nowUnix();
      for (const j of jobs) {
        if (!chosen.has(j.id)) continue;
        // Blocked while a job it needs runs again; the runners' side releases it (advanceRun).
        const blocked = parseLabels(j.needs).some((n) => [...again].some((k) => coversKey(n, k)));
        // One of a job-level concurrency group enters it below, as it becomes ready (advanceRun).
        j.status = blocked || j.concurrency_group ? 'blocked' : 'waiting';
        await store.updateJob(tx, j.id, {
          status: j.status,
          concurrency_held: 0,
          task_id: null,
          started_unix: 0,
          stopped_unix: 0,
          updated_unix: now,
        });
      }
      await store.updateRun(tx, run.id, {
        status: aggregateStatus(jobs.map((j) => j.status)),
        started_unix: 0,
        stopped_unix: 0,
        updated_unix: now,
      });
      if (jobs.some((j) => chosen.has(j.id) && j.concurrency_group)) {
        await this.deps.runners.startHeld(tx, run.id, now, fx);
      }
      return chosen.size;
    });
    await this.afterGroups(fx);
    if (count > 0) {
      this.deps.runners.notifyNewJobs();
      this.deps.actions.runChanged(run.id);
    }
    return count;
  }
}
