// Runners and the tasks they run: registration tokens, registration, declaring labels, handing out
// the next waiting job whose runs-on labels a runner has (as a task with its workflow, secrets,
// job token and context), task states and outputs, and log rows. The protocol itself (connect-rpc)
// is in runner-protocol.ts; this is what it calls.
//
// States: a job is `blocked` while jobs it needs have not finished, then `waiting`; a runner takes
// it (`running`, with a new task) and reports `success`, `failure` or `cancelled`; a job whose
// needs did not all succeed is `skipped`. The run follows its jobs (Forgejo's aggregation).
import crypto from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Logger } from 'pino';
import { SecretBox } from '../auth/secrets.js';
import type { Cluster } from '../cluster/service.js';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { AppError, badRequest, conflict, invalidField, notFound, unauthorized } from '../errors.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { mintRuntimeToken } from './runtime-token.js';
import { Result } from './gen/runner/v1/messages_pb.js';
import { sameDigest, sha256 } from './digest.js';
import { coversKey } from './reusable.js';
import { enterJobGroup, noEffects, releaseJobGroup, type GroupEffects } from './job-concurrency.js';
import {
  calledJob,
  callFailFast,
  callHeld,
  CallOutcome,
  endCalledJob,
  resultOf,
  runJobViews,
  taskNeeds,
} from './task-calls.js';

export { resultOf } from './task-calls.js';
import type { ActionsService } from './service.js';
import * as store from './store.js';
import {
  aggregateStatus,
  isDone,
  type JobRow,
  type RunnerRow,
  type RunRow,
  type Scope,
  type TaskRow,
} from './tables.js';

/** A runner not heard of for this long is offline. */
export const RUNNER_OFFLINE_SECONDS = 60;
/** A running task not heard of for this long is given up (failure). */
const ZOMBIE_TASK_SECONDS = 10 * 60;
const SWEEP_MS = 60_000;
/** Waiting jobs looked at per FetchTask (oldest first). */
const PICK_BATCH = 50;
const PICK_PAGES = 10;
/** Largest log row kept (longer rows are cut) and most rows one task may have. */
const MAX_ROW_CHARS = 64 * 1024;
const MAX_LOG_ROWS = 1_000_000;
const MAX_LABELS = 100;

export interface RegisterInput {
  name: string;
  token: string;
  version: string;
  labels: string[];
}

export interface TaskNeedData {
  outputs: Record<string, string>;
  result: Result;
}

/** What a runner receives for a job. */
export interface TaskData {
  id: number;
  workflowPayload: Uint8Array;
  context: JsonObject;
  secrets: Record<string, string>;
  needs: Record<string, TaskNeedData>;
  vars: Record<string, string>;
}

export interface LogRowInput {
  timeMs: number;
  content: string;
}

const RESULT_STATUS: Record<number, string> = {
  [Result.SUCCESS]: 'success',
  [Result.FAILURE]: 'failure',
  [Result.CANCELLED]: 'cancelled',
  [Result.SKIPPED]: 'skipped',
};

/** The name part of a label ("ubuntu-latest:docker://node:20" → "ubuntu-latest"). */
export const labelName = (label: string): string => label.split(':', 1)[0]!.trim();

export function parseLabels(json: string): string[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function checkLabels(labels: string[]): string[] {
  const clean = [...new Set(labels.map((l) => l.trim()).filter(Boolean))];
  if (clean.length > MAX_LABELS) throw badRequest(`a runner may have at most ${MAX_LABELS} labels`);
  for (const l of clean) {
    if (l.length > 255 || !labelName(l)) throw badRequest(`invalid runner label [label: ${l.slice(0, 100)}]`);
  }
  return clean;
}

export interface RunnerServiceDeps {
  db: Db;
  log: Logger;
  /** Waiting jobs announced to the other processes; stale tasks given up by one of them. */
  cluster: Pick<Cluster, 'on' | 'publish' | 'once'>;
  settings: Pick<Config['actions'], 'fetchTaskWait' | 'artifactRetentionDays' | 'defaultActionsUrl'>;
  /** [security] SECRET_KEY: registration tokens are sealed with it, runtime tokens signed. */
  secretKey: string;
  rootUrl: string;
  users: Pick<UserService, 'getById'>;
  repos: Pick<RepoService, 'getById'>;
  /** The jobs' side: whether actions are on, what a job gets, and news of jobs to run. */
  actions: Pick<
    ActionsService,
    | 'enabled'
    | 'assertEnabled'
    | 'secretsAndVars'
    | 'botUser'
    | 'onJobsWaiting'
    | 'onTasksCancelled'
    | 'runChanged'
  >;
}

export class RunnerService {
  private box: SecretBox | undefined;
  private readonly db: Db;
  private readonly actions: RunnerServiceDeps['actions'];
  /** Bumped whenever jobs become waiting; runners compare it with theirs (FetchTask). */
  private version = 1;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** Secret values of running tasks, to mask them in log rows (kept a few minutes). */
  private readonly masks = new Map<number, { values: string[]; until: number }>();
  /** FetchTask requests waiting for jobs (long polling), woken when jobs become waiting. */
  private readonly waiters = new Set<() => void>();
  private stopping = false;

  constructor(private readonly deps: RunnerServiceDeps) {
    this.db = deps.db;
    this.actions = deps.actions;
    // Runs created here: runners long-polling this process or another one wake up.
    deps.actions.onJobsWaiting(() => this.notifyNewJobs());
    // Runs a new run of their concurrency group cancelled: their running tasks end.
    deps.actions.onTasksCancelled(async (taskIds) => {
      for (const id of taskIds) await this.finish(id, 'cancelled');
    });
    // Jobs another process made waiting (a push it received): runners waiting here take them now.
    deps.cluster.on('actions.jobs', () => this.jobsWaiting());
  }

  private registrationBox(): SecretBox {
    return (this.box ??= new SecretBox(this.deps.secretKey, 'actions-runner-registration'));
  }

  get tasksVersion(): number {
    return this.version;
  }

  /** Jobs became waiting (committed): runners long-polling this process or another one wake up. */
  notifyNewJobs(): void {
    this.jobsWaiting();
    this.deps.cluster.publish('actions.jobs');
  }

  private jobsWaiting(): void {
    this.version++;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** Resolves when jobs become waiting, after `ms`, or when the service stops. */
  private jobsOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  // Registration tokens and runners (the API)

  /** The scope's registration token, made on first request; the same one until it is replaced. */
  async registrationToken(scope: Scope): Promise<string> {
    this.actions.assertEnabled();
    const existing = await store.latestRunnerToken(this.db, scope);
    if (existing) return this.registrationBox().decrypt(existing.token);
    const token = crypto.randomBytes(20).toString('hex');
    await store.insertRunnerToken(this.db, {
      owner_id: scope.ownerId,
      repo_id: scope.repoId,
      token_hash: sha256(token),
      token: this.registrationBox().encrypt(token),
      created_unix: nowUnix(),
    });
    return token;
  }

  async list(scope: Scope, limit: number, offset: number): Promise<[RunnerRow[], number, Set<number>]> {
    this.actions.assertEnabled();
    const [rows, total] = await store.listRunners(this.db, scope, limit, offset);
    const busy = await store.busyRunners(
      this.db,
      rows.map((r) => r.id),
    );
    return [rows, total, busy];
  }

  async require(scope: Scope, id: number): Promise<{ runner: RunnerRow; busy: boolean }> {
    this.actions.assertEnabled();
    const runner = Number.isSafeInteger(id) && id > 0 ? await store.runnerById(this.db, id) : undefined;
    if (!runner || runner.owner_id !== scope.ownerId || runner.repo_id !== scope.repoId) {
      throw notFound(`runner does not exist [id: ${id}]`);
    }
    return { runner, busy: (await store.busyRunners(this.db, [runner.id])).has(runner.id) };
  }

  /** Changes a runner's description (at most 255 characters, one line). */
  async describe(scope: Scope, id: number, description: string): Promise<void> {
    const { runner } = await this.require(scope, id);
    const text = description.trim();
    // eslint-disable-next-line no-control-regex -- one line of text
    if (text.length > 255 || /[\x00-\x1f]/.test(text)) {
      throw invalidField('description', 'must be one line of at most 255 characters');
    }
    await store.setRunnerDescription(this.db, runner.id, text);
  }

  async delete(scope: Scope, id: number): Promise<void> {
    const { runner } = await this.require(scope, id);
    await store.deleteRunner(this.db, runner.id);
  }

  /** Waiting jobs of a scope whose runs-on labels are all among `labels` (all when none given). */
  async waitingJobs(scope: Scope, labels: string[], limit: number): Promise<JobRow[]> {
    this.actions.assertEnabled();
    const want = new Set(labels.map(labelName).filter(Boolean));
    const jobs = await store.waitingJobs(this.db, scope, Math.max(limit, 1) * 4);
    return jobs
      .filter((j) => want.size === 0 || parseLabels(j.runs_on).every((l) => want.has(labelName(l))))
      .slice(0, limit);
  }

  // The runner protocol

  /** Register: a new runner in the scope of the registration token. */
  async register(input: RegisterInput): Promise<{ runner: RunnerRow; token: string }> {
    this.actions.assertEnabled();
    const name = input.name.trim().slice(0, 255);
    if (!input.token || !name) throw badRequest('missing runner token, name');
    const digest = sha256(input.token);
    const reg = await store.runnerTokenByHash(this.db, digest);
    if (!reg || !sameDigest(reg.token_hash, digest)) throw badRequest('runner registration token not found');
    if (!reg.is_active)
      throw badRequest('runner registration token has been invalidated, please use the latest one');
    const labels = checkLabels(input.labels);
    const token = crypto.randomBytes(20).toString('hex');
    const now = nowUnix();
    const id = await store.insertRunner(this.db, {
      uuid: crypto.randomUUID(),
      name,
      owner_id: reg.owner_id,
      repo_id: reg.repo_id,
      token_hash: sha256(token),
      version: input.version.slice(0, 64),
      labels: JSON.stringify(labels),
      last_online_unix: now,
      created_unix: now,
      updated_unix: now,
    });
    return { runner: (await store.runnerById(this.db, id))!, token };
  }

  /** The runner of the x-runner-uuid and x-runner-token headers; 401 (unauthenticated) otherwise. */
  async authenticate(
    uuid: string | undefined,
    token: string | undefined,
    active: boolean,
  ): Promise<RunnerRow> {
    this.actions.assertEnabled();
    const runner = uuid && token && uuid.length <= 64 ? await store.runnerByUuid(this.db, uuid) : undefined;
    if (!runner || !sameDigest(runner.token_hash, sha256(token ?? '')))
      throw unauthorized('unregistered runner');
    const now = nowUnix();
    if (now - runner.last_online_unix >= 5 || (active && now - runner.last_active_unix >= 5)) {
      await store.updateRunner(this.db, runner.id, {
        last_online_unix: now,
        ...(active ? { last_active_unix: now } : {}),
      });
    }
    return runner;
  }

  async declare(runner: RunnerRow, version: string, labels: string[]): Promise<RunnerRow> {
    const clean = checkLabels(labels);
    await store.updateRunner(this.db, runner.id, {
      version: version.slice(0, 64),
      labels: JSON.stringify(clean),
      updated_unix: nowUnix(),
    });
    return (await store.runnerById(this.db, runner.id))!;
  }

  /**
   * FetchTask: the oldest waiting job the runner may take, as a task. When there is none, the
   * request waits up to [actions] FETCH_TASK_WAIT for jobs to become waiting (on this process or,
   * through the cluster channel, on another) and looks again; undefined when none came, or when
   * the runner's connection is `gone`.
   */
  async fetchTask(runner: RunnerRow, gone: () => boolean = () => false): Promise<TaskData | undefined> {
    const deadline = Date.now() + this.deps.settings.fetchTaskWait * 1000;
    for (;;) {
      const seen = this.version;
      // A runner that hung up while waiting (stopped, killed) is given nothing: a job it took
      // would stay running until its task went stale.
      if (gone()) return undefined;
      const task = await this.pickTask(runner);
      if (task) return task;
      const left = deadline - Date.now();
      if (left <= 0 || this.stopping) return undefined;
      // Jobs that became waiting while looking are looked at again at once.
      if (this.version === seen) await this.jobsOrTimeout(left);
    }
  }

  private async pickTask(runner: RunnerRow): Promise<TaskData | undefined> {
    const have = new Set(parseLabels(runner.labels).map(labelName));
    const scope = { ownerId: runner.owner_id, repoId: runner.repo_id };
    let afterId = 0;
    for (let page = 0; page < PICK_PAGES; page++) {
      const jobs = await store.waitingJobs(this.db, scope, PICK_BATCH, afterId);
      if (!jobs.length) return undefined;
      afterId = jobs[jobs.length - 1]!.id;
      for (const job of jobs) {
        const labels = parseLabels(job.runs_on);
        if (!labels.length || !labels.every((l) => have.has(labelName(l)))) continue;
        const task = await this.claim(runner, job);
        if (task) return task;
      }
      if (jobs.length < PICK_BATCH) return undefined;
    }
    return undefined;
  }

  /** Gives `job` to `runner` unless another runner took it first. */
  private async claim(runner: RunnerRow, job: JobRow): Promise<TaskData | undefined> {
    const token = crypto.randomBytes(20).toString('hex');
    const claimed = await transaction(this.db, async (tx) => {
      const now = nowUnix();
      const attempt = job.attempt + 1;
      const moved = await store.moveJob(tx, job.id, 'waiting', {
        status: 'running',
        attempt,
        started_unix: now,
        updated_unix: now,
      });
      if (!moved) return undefined;
      const taskId = await store.insertTask(tx, {
        job_id: job.id,
        run_id: job.run_id,
        repo_id: job.repo_id,
        runner_id: runner.id,
        attempt,
        status: 'running',
        token_hash: sha256(token),
        token_last_eight: token.slice(-8),
        started_unix: now,
        created_unix: now,
        updated_unix: now,
      });
      await store.updateJob(tx, job.id, { task_id: taskId });
      const run = (await store.runById(tx, job.run_id))!;
      if (!isDone(run.status) && run.status !== 'running') {
        await store.updateRun(tx, run.id, {
          status: 'running',
          started_unix: run.started_unix || now,
          updated_unix: now,
        });
      }
      return { taskId, run, attempt };
    });
    if (!claimed) return undefined;
    this.actions.runChanged(job.run_id);
    try {
      return await this.taskData(claimed.taskId, { ...job, attempt: claimed.attempt }, claimed.run, token);
    } catch (err) {
      // A called job whose caller's `if` is false is skipped; one whose inputs or secrets cannot
      // be had fails, its log saying why; the runner is given another job.
      if (err instanceof CallOutcome) {
        await endCalledJob(this.db, claimed.taskId, err);
        await this.finish(claimed.taskId, err.skip ? 'skipped' : 'failure');
        return undefined;
      }
      // The task cannot be described (its repository went away): it fails rather than hangs.
      await this.finish(claimed.taskId, 'failure').catch(() => undefined);
      throw err;
    }
  }

  private async taskData(taskId: number, job: JobRow, run: RunRow, token: string): Promise<TaskData> {
    const repo = await this.deps.repos.getById(job.repo_id);
    if (!repo) throw notFound('the repository of the job no longer exists');
    const [owner, actor, sv, views] = await Promise.all([
      this.deps.users.getById(repo.owner_id),
      run.trigger_user_id === -2 ? this.actions.botUser() : this.deps.users.getById(run.trigger_user_id),
      // A fork's pull request runs its own code: it gets no secrets (variables are not secret).
      this.actions
        .secretsAndVars(repo)
        .then((sv) => (run.is_fork_pull_request ? { secrets: {}, vars: sv.vars } : sv)),
      runJobViews(this.db, job.run_id),
    ]);
    const { vars } = sv;
    const needs = taskNeeds(views, job);
    const root = this.deps.rootUrl;
    const serverUrl = root.replace(/\/+$/, '');
    const runtimeToken = mintRuntimeToken({
      secretKey: this.deps.secretKey,
      repoId: repo.id,
      runId: run.id,
      jobId: job.id,
    });
    const refName = run.ref.replace(/^refs\/(heads|tags)\//, '');
    let event: JsonObject = {};
    try {
      event = JSON.parse(run.event_payload) as JsonObject;
    } catch {
      // an unreadable payload leaves github.event empty
    }
    const fullName = `${owner?.name ?? ''}/${repo.name}`;
    const pull = run.event === 'pull_request' ? (event['pull_request'] as JsonObject | undefined) : undefined;
    const branchOf = (side: string) => {
      const v = pull?.[side];
      return v && typeof v === 'object' && !Array.isArray(v) && typeof v['ref'] === 'string' ? v['ref'] : '';
    };
    const context: JsonObject = {
      action: '',
      action_path: '',
      action_ref: '',
      action_repository: '',
      action_status: '',
      actor: actor?.name ?? '',
      api_url: `${serverUrl}/api/v1`,
      base_ref: branchOf('base'),
      env: '',
      event,
      event_name: run.event,
      event_path: '',
      graphql_url: '',
      head_ref: branchOf('head'),
      job: job.job_id.slice(job.job_id.lastIndexOf('/') + 1),
      ref: run.ref,
      ref_name: refName,
      ref_type: run.ref.startsWith('refs/tags/') ? 'tag' : 'branch',
      path: '',
      repository: fullName,
      repository_owner: owner?.name ?? '',
      repositoryUrl: `${root}${fullName}`,
      retention_days: String(this.deps.settings.artifactRetentionDays),
      run_id: String(run.id),
      run_number: String(run.run_number),
      run_attempt: String(job.attempt),
      secret_source: 'Actions',
      server_url: serverUrl,
      sha: run.commit_sha,
      token,
      triggering_actor: actor?.name ?? '',
      workflow: run.workflow_id,
      workspace: '',
      // The artifact service: its token and where it is (runners hand both to the steps).
      ACTIONS_RUNTIME_TOKEN: runtimeToken,
      ACTIONS_RESULTS_URL: root,
      gitea_runtime_token: runtimeToken,
      forgejo_runtime_token: runtimeToken,
      // Where runners fetch `uses: owner/repo@ref` actions from ([actions] DEFAULT_ACTIONS_URL).
      gitea_default_actions_url: this.deps.settings.defaultActionsUrl,
      forgejo_default_actions_url: this.deps.settings.defaultActionsUrl,
    };
    // A called job: its inputs and secrets from its callers (reusable-task.ts).
    const { payload, secrets } = calledJob(job, views, context, sv, event);
    const values = [...Object.values(sv.secrets), ...Object.values(secrets)];
    this.masks.set(taskId, { values: maskValues(values), until: nowUnix() + 3600 });
    for (const k of ['GITHUB_TOKEN', 'GITEA_TOKEN', 'FORGEJO_TOKEN']) secrets[k] = token;
    return { id: taskId, workflowPayload: Buffer.from(payload, 'utf8'), context, secrets, needs, vars };
  }

  private async requireTask(runner: RunnerRow, taskId: number): Promise<TaskRow> {
    const task =
      Number.isSafeInteger(taskId) && taskId > 0 ? await store.taskById(this.db, taskId) : undefined;
    if (!task || task.runner_id !== runner.id) throw notFound(`task does not exist [id: ${taskId}]`);
    return task;
  }

  /**
   * UpdateTask: records outputs (the first value of a key stays) and, with a result, ends the
   * task and its job. Answers the task's result as the server sees it (cancelled tells the runner
   * to stop) and every output key received so far.
   */
  async updateTask(
    runner: RunnerRow,
    taskId: number,
    result: Result,
    outputs: Record<string, string>,
  ): Promise<{ result: Result; sentOutputs: string[] }> {
    const task = await this.requireTask(runner, taskId);
    const accepted = Object.entries(outputs).filter(
      ([k, v]) => k.length > 0 && k.length <= 255 && Buffer.byteLength(v) <= 1024 * 1024,
    );
    await store.addOutputs(this.db, task.id, accepted);
    let status = task.status;
    if (status === 'running') {
      const next = RESULT_STATUS[result];
      if (next) status = await this.finish(task.id, next);
      else await store.updateTask(this.db, task.id, { updated_unix: nowUnix() });
    }
    return { result: resultOf(status), sentOutputs: await store.outputKeys(this.db, task.id) };
  }

  /**
   * Ends a running task with `status`: the task (its job token stops working), its job, the jobs
   * that were waiting for it, and the run. Returns the task's status afterwards.
   */
  async finish(taskId: number, status: string): Promise<string> {
    const fx = noEffects();
    const { final, released, runId, cancelled } = await transaction(this.db, async (tx) => {
      const task = (await store.taskById(tx, taskId))!;
      if (task.status !== 'running') return { final: task.status, released: false, runId: 0, cancelled: [] };
      const now = nowUnix();
      await store.updateTask(tx, task.id, { status, stopped_unix: now, updated_unix: now, token_hash: null });
      // A job run again meanwhile (its task_id cleared) is not the task's any more.
      const job = await store.jobById(tx, task.job_id);
      let cancelled: number[] = [];
      if (job && job.task_id === task.id) {
        await store.updateJob(tx, task.job_id, { status, stopped_unix: now, updated_unix: now });
        if (status === 'failure') cancelled = await this.failFast(tx, job, now);
      }
      // Its job-level concurrency group: the job held the longest may start.
      const next = job ? await releaseJobGroup(tx, job.repo_id, job.concurrency_group, now) : 0;
      if (next && next !== task.run_id) fx.changedRuns.push(next);
      return {
        final: status,
        released: (await this.advanceRun(tx, task.run_id, now, fx)) || next > 0,
        runId: task.run_id,
        cancelled,
      };
    });
    this.masks.delete(taskId);
    // The running siblings fail-fast cancelled end through their tasks (the runner stops them).
    for (const id of [...cancelled, ...fx.cancelTasks]) await this.finish(id, 'cancelled');
    for (const id of fx.changedRuns) this.actions.runChanged(id);
    if (runId) this.actions.runChanged(runId);
    if (released) this.notifyNewJobs();
    return final;
  }

  /**
   * `strategy.fail-fast`: a matrix job failed, so its siblings that have not ended are cancelled
   * (those not started at once); so are the other calls of a matrix of calls it is under. Returns the tasks of the running ones, to end once committed.
   */
  private async failFast(tx: Tx, failed: JobRow, now: number): Promise<number[]> {
    const tasks: number[] = [];
    for (const job of await store.jobsOfRun(tx, failed.run_id)) {
      const sibling = failed.fail_fast && job.job_id === failed.job_id;
      if (job.id === failed.id || !(sibling || callFailFast(failed, job))) continue;
      if (job.status === 'waiting' || job.status === 'blocked') {
        await store.moveJob(tx, job.id, job.status, {
          status: 'cancelled',
          stopped_unix: now,
          updated_unix: now,
        });
      } else if (job.status === 'running' && job.task_id) {
        tasks.push(job.task_id);
      }
    }
    return tasks;
  }

  /**
   * After a job ended: blocked jobs whose needs have all ended become waiting (all succeeded) or
   * skipped (otherwise), until nothing changes; then the run takes its jobs' aggregate status.
   * Returns whether jobs became waiting.
   */
  private async advanceRun(tx: Tx, runId: number, now: number, fx: GroupEffects): Promise<boolean> {
    let jobs = await store.jobsOfRun(tx, runId);
    // A job that needs a calling job waits for the jobs of the workflow it calls.
    const statusOf = (key: string) => jobs.filter((j) => coversKey(key, j.job_id)).map((j) => j.status);
    let released = false;
    let entered = false;
    for (let changed = true; changed;) {
      changed = false;
      for (const job of jobs) {
        // A job held by its concurrency group waits for releaseJobGroup.
        if (job.status !== 'blocked' || job.concurrency_held) continue;
        const needs = parseLabels(job.needs).flatMap(statusOf);
        if (!needs.every(isDone)) continue;
        const ok = needs.every((s) => s === 'success');
        // strategy.max-parallel: it waits while that many of its matrix run or wait.
        if (ok && job.max_parallel > 0) {
          const active = statusOf(job.job_id).filter((s) => s === 'waiting' || s === 'running').length;
          if (active >= job.max_parallel) continue;
        }
        if (ok && callHeld(job, jobs)) continue;
        changed = true;
        if (ok && job.concurrency_group) {
          entered = true;
          released = (await enterJobGroup(tx, job, now, fx)) || released;
          continue;
        }
        job.status = ok ? 'waiting' : 'skipped';
        await store.updateJob(tx, job.id, {
          status: job.status,
          updated_unix: now,
          ...(job.status === 'skipped' ? { stopped_unix: now } : {}),
        });
        if (job.status === 'waiting') released = true;
      }
    }
    // Entering a group may have cancelled jobs of this run: read them again.
    if (entered) jobs = await store.jobsOfRun(tx, runId);
    const status = aggregateStatus(jobs.map((j) => j.status));
    const allDone = jobs.every((j) => isDone(j.status));
    await store.updateRun(tx, runId, {
      status,
      updated_unix: now,
      ...(allDone ? { stopped_unix: now } : {}),
    });
    if (allDone) released = (await this.releaseGroup(tx, runId, now, fx)) || released;
    return released;
  }

  /**
   * After run `runId` ended: the oldest run its concurrency group holds starts, unless another of
   * the group is under way (or the held one still waits for approval). Returns whether jobs
   * became waiting.
   */
  async releaseGroup(tx: Tx, runId: number, now: number, fx = noEffects()): Promise<boolean> {
    const run = await store.runById(tx, runId);
    if (!run?.concurrency_group) return false;
    const others = await store.openRunsOfGroup(tx, run.repo_id, run.concurrency_group, run.id);
    if (others.some((o) => o.status !== 'blocked')) return false;
    const next = others.find((o) => !o.need_approval);
    return next ? this.startHeld(tx, next.id, now, fx) : false;
  }

  /** A held run starts: its jobs whose needs have ended become waiting. Returns whether any did. */
  async startHeld(tx: Tx, runId: number, now: number, fx = noEffects()): Promise<boolean> {
    return this.advanceRun(tx, runId, now, fx);
  }

  /**
   * UpdateLog: appends the rows the server does not have yet (`index` is the first row's number)
   * and answers how many rows it holds. Secret values are masked on the way in.
   */
  async updateLog(
    runner: RunnerRow,
    taskId: number,
    index: number,
    rows: LogRowInput[],
    noMore: boolean,
  ): Promise<number> {
    const task = await this.requireTask(runner, taskId);
    const ack = task.log_length;
    if (rows.length === 0 || index > ack || index + rows.length <= ack) {
      if (noMore && index + rows.length === ack && !task.log_complete) {
        await store.updateTask(this.db, task.id, { log_complete: 1, updated_unix: nowUnix() });
      }
      return ack;
    }
    if (task.log_complete) throw conflict('the log of the task is complete');
    const fresh = rows.slice(ack - index);
    if (ack + fresh.length > MAX_LOG_ROWS)
      throw new AppError('payload_too_large', 'the log of the task is too long');
    const mask = await this.maskFor(task);
    const clean = fresh.map((r) => ({
      timeMs: Number.isFinite(r.timeMs) ? Math.trunc(r.timeMs) : Date.now(),
      content: mask(r.content.length > MAX_ROW_CHARS ? r.content.slice(0, MAX_ROW_CHARS) : r.content),
    }));
    const bytes = clean.reduce((n, r) => n + Buffer.byteLength(r.content), 0);
    return transaction(this.db, async (tx) => {
      // Claims the rows first: of two requests with the same rows, one appends, one acknowledges.
      const r = await tx
        .updateTable('action_task')
        .set({
          log_length: ack + clean.length,
          log_size: task.log_size + bytes,
          log_complete: noMore ? 1 : 0,
          updated_unix: nowUnix(),
        })
        .where('id', '=', task.id)
        .where('log_length', '=', ack)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return (await store.taskById(tx, task.id))!.log_length;
      await store.appendLogs(tx, task.id, ack, clean);
      return ack + clean.length;
    });
  }

  /** Replaces the values of the task's secrets in a log row. */
  private async maskFor(task: TaskRow): Promise<(s: string) => string> {
    let entry = this.masks.get(task.id);
    if (!entry || entry.until < nowUnix()) {
      const repo = await this.deps.repos.getById(task.repo_id);
      const values = repo ? maskValues(Object.values((await this.actions.secretsAndVars(repo)).secrets)) : [];
      entry = { values, until: nowUnix() + 300 };
      this.masks.set(task.id, entry);
    }
    const values = entry.values;
    return (s) => {
      let out = s;
      for (const v of values) if (out.includes(v)) out = out.split(v).join('***');
      return out;
    };
  }

  // Background work

  /** Gives up tasks whose runner has not reported for ZOMBIE_TASK_SECONDS. */
  async sweep(now = nowUnix()): Promise<number> {
    const stale = await store.staleTasks(this.db, now - ZOMBIE_TASK_SECONDS, 100);
    for (const t of stale) await this.finish(t.id, 'failure');
    for (const [id, m] of this.masks) if (m.until < now) this.masks.delete(id);
    return stale.length;
  }

  start(): void {
    if (this.timer || !this.actions.enabled) return;
    this.stopping = false;
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      // One process gives up stale tasks per period.
      this.sweeping = this.deps.cluster
        .once('actions_stale_tasks', SWEEP_MS, () => this.sweep())
        .then(() => undefined)
        .catch((err: unknown) => this.deps.log.error({ err }, 'actions: sweeping stale tasks failed'))
        .finally(() => (this.sweeping = undefined));
    }, SWEEP_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }
}

/** The strings to mask for secret values: each value and each of its lines (short ones excepted). */
function maskValues(values: string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    for (const part of [v, ...v.split('\n')]) {
      const t = part.trim();
      if (t.length >= 4) out.add(t);
    }
  }
  // Longest first: a value containing another is masked whole.
  return [...out].sort((a, b) => b.length - a.length);
}
