// Actions (experimental, [actions] ENABLED): secrets and variables of owners and repositories,
// workflow runs started by pushes and dispatches, and the job tokens jobs act with as the actions
// bot. Runners, tasks and logs are in runners.ts (RunnerService, told of new jobs through
// onJobsWaiting).
//
// Secrets are encrypted at rest (SecretBox, purpose "actions-secrets") and never leave the server
// except in the task a runner fetches. Secrets and variables stay manageable when actions are
// disabled (so they can be prepared before switching actions on); everything else answers 404.
import type { Logger } from 'pino';
import type { Authenticator, Identity } from '../auth/identity.js';
import { SecretBox } from '../auth/secrets.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { badRequest, conflict, forbidden, invalidField, notFound } from '../errors.js';
import type { AnvilEvents, EventBus, RefUpdate } from '../events/bus.js';
import { git, getCommit, ZERO_OID } from '../git/git.js';
import { checkRefName, readBlobs, resolveRef } from '../git/data.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { parseScopes } from '../tokens/scopes.js';
import { ACTIONS_BOT_ID, botRow, isActionsBot } from './bot.js';
import { sameDigest, sha256 } from './digest.js';
import { expandCalls, workflowLoader } from './reusable.js';
import { withKnownInputs, type CreationBase } from './reusable-inputs.js';
import {
  creationBase,
  insertRuns,
  type CreatedRun,
  type RunEvent,
  type RunItem,
  type WorkflowFile,
} from './run-create.js';
import * as store from './store.js';
import type { JobRow, KvRow, RunFilter, RunRow, ScheduleRow, Scope } from './tables.js';
import {
  hasPathFilter,
  matchPaths,
  matchRef,
  MAX_WORKFLOW_BYTES,
  parseWorkflow,
  resolveInputs,
  WORKFLOW_DIRS,
  WorkflowError,
  type Workflow,
} from './workflow.js';

export type { CreatedRun, WorkflowFile } from './run-create.js';

/** What in a commit message (or a pull request's title) keeps its push from starting runs (Forgejo's). */
const SKIP_WORKFLOW_STRINGS = ['[skip ci]', '[ci skip]', '[no ci]', '[skip actions]', '[actions skip]'];
export const skipsWorkflows = (text: string): boolean => SKIP_WORKFLOW_STRINGS.some((s) => text.includes(s));

/** The pull request events of the bus and the `types` of `on.pull_request` they are. */
const PULL_EVENT_TYPES: Array<[keyof AnvilEvents & `pull.${string}`, string]> = [
  ['pull.opened', 'opened'],
  ['pull.synchronized', 'synchronize'],
  ['pull.reopened', 'reopened'],
  ['pull.closed', 'closed'],
  ['pull.edited', 'edited'],
  ['pull.labeled', 'labeled'],
];
/** What `on.pull_request` runs for when it names no types. */
const DEFAULT_PULL_TYPES = ['opened', 'synchronize', 'reopened'];

/** Largest secret or variable value. */
const MAX_VALUE_BYTES = 64 * 1024;
const NAME = /^[A-Z_][A-Z0-9_]*$/;
const RESERVED_PREFIXES = ['GITHUB_', 'GITEA_', 'FORGEJO_'];

/** What a job token may do: the repository and its issues (limited to its repository by access). */
const JOB_TOKEN_SCOPES = parseScopes('write:repository,write:issue,read:user');
const FORK_JOB_TOKEN_SCOPES = parseScopes('read:repository,read:issue,read:user');
const TOKEN_SHAPE = /^[0-9a-f]{40}$/;

/**
 * A secret or variable name in its stored form (upper case): letters, digits and `_`, not
 * starting with a digit nor with GITHUB_, GITEA_ or FORGEJO_; 400 otherwise, as Forgejo answers.
 */
export function checkKvName(raw: string, what: 'secret' | 'variable'): string {
  const name = raw.trim().toUpperCase();
  if (!name || name.length > 255 || !NAME.test(name)) {
    throw badRequest(
      `invalid ${what} name [name: ${raw}]: use letters, digits and '_', not starting with a digit`,
    );
  }
  const reserved = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (reserved) throw badRequest(`invalid ${what} name [name: ${raw}]: names cannot start with ${reserved}`);
  return name;
}

function checkValue(value: string, field: string): string {
  const normalized = value.replace(/\r\n/g, '\n');
  if (Buffer.byteLength(normalized) > MAX_VALUE_BYTES) {
    throw invalidField(field, `must be at most ${MAX_VALUE_BYTES} bytes`);
  }
  return normalized;
}

export interface ActionsServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  /** [actions] ENABLED. */
  enabled: boolean;
  /** [security] SECRET_KEY, which seals secrets. */
  secretKey: string;
  rootUrl: string;
  /** Job tokens are one more kind of credential. */
  auth: Pick<Authenticator, 'addTokenResolver'>;
  users: Pick<UserService, 'getById'>;
  /**
   * Workflows are read from repositories (called ones from others too); the bot creates none;
   * fork runs of non-writers wait.
   */
  repos: Pick<RepoService, 'getById' | 'pathOf' | 'addHooks' | 'access' | 'requireRepo'>;
}

export class ActionsService {
  private box: SecretBox | undefined;
  private readonly db: Db;
  /** Told whenever jobs became waiting (committed): the runners' side (RunnerService). */
  private readonly jobsWaiting: Array<() => void> = [];
  /** Told whenever a run or its jobs changed state (committed): commit statuses follow them. */
  private readonly runListeners: Array<(runId: number) => void> = [];
  /** Told of running tasks that must end as cancelled (a run replaced in its concurrency group). */
  private readonly cancelListeners: Array<(taskIds: number[]) => Promise<void>> = [];

  constructor(private readonly deps: ActionsServiceDeps) {
    this.db = deps.db;
    deps.auth.addTokenResolver((token) => this.resolveJobToken(token));
    deps.events.on('push', (e) => this.onPush(e));
    for (const [event, type] of PULL_EVENT_TYPES) {
      deps.events.on(event, (e) => this.onPull(type, e));
    }
    deps.repos.addHooks({
      beforeCreate: async (_tx, doer, owner) => {
        if (isActionsBot(doer.id) || isActionsBot(owner.id)) {
          throw forbidden('the actions bot cannot create repositories');
        }
      },
    });
  }

  get enabled(): boolean {
    return this.deps.enabled;
  }

  /** Registers what runs when runs were created and their jobs wait for runners. */
  onJobsWaiting(listener: () => void): void {
    this.jobsWaiting.push(listener);
  }

  /** Registers what ends running tasks as cancelled (RunnerService.finish). */
  onTasksCancelled(listener: (taskIds: number[]) => Promise<void>): void {
    this.cancelListeners.push(listener);
  }

  /** Registers what runs after a run or its jobs changed state (commit-status.ts). */
  onRunChanged(listener: (runId: number) => void): void {
    this.runListeners.push(listener);
  }

  /** A run or its jobs changed state (committed): tells the listeners, which must not throw. */
  runChanged(runId: number): void {
    for (const listener of this.runListeners) listener(runId);
  }

  /** 404 when [actions] ENABLED is false. */
  assertEnabled(): void {
    if (!this.enabled) throw notFound('Actions are disabled on this server ([actions] ENABLED = false)');
  }

  /** The SecretBox of actions secrets (made when first needed: SECRET_KEY may be unset otherwise). */
  secrets(): SecretBox {
    return (this.box ??= new SecretBox(this.deps.secretKey, 'actions-secrets'));
  }

  // Secrets

  listSecrets(scope: Scope, limit: number, offset: number): Promise<[KvRow[], number]> {
    return store.kvList(this.db, 'action_secret', scope, limit, offset);
  }

  /** Creates or replaces a secret; says which. */
  async putSecret(scope: Scope, rawName: string, data: string): Promise<'created' | 'updated'> {
    const name = checkKvName(rawName, 'secret');
    const sealed = this.secrets().encrypt(checkValue(data, 'data'));
    for (let attempt = 0; ; attempt++) {
      try {
        return await transaction(this.db, async (tx) => {
          const now = nowUnix();
          const existing = await store.kvGet(tx, 'action_secret', scope, name);
          if (existing) {
            await store.kvUpdate(tx, 'action_secret', existing.id, { data: sealed, updated_unix: now });
            return 'updated' as const;
          }
          await store.kvInsert(tx, 'action_secret', {
            owner_id: scope.ownerId,
            repo_id: scope.repoId,
            name,
            data: sealed,
            created_unix: now,
            updated_unix: now,
          });
          return 'created' as const;
        });
      } catch (err) {
        // The same name created at the same moment: the second one updates it.
        if (attempt === 0 && uniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  async deleteSecret(scope: Scope, rawName: string): Promise<void> {
    const name = checkKvName(rawName, 'secret');
    const row = await store.kvGet(this.db, 'action_secret', scope, name);
    if (!row) throw notFound(`secret does not exist [name: ${name}]`);
    await store.kvDelete(this.db, 'action_secret', row.id);
  }

  // Variables

  listVariables(scope: Scope, limit: number, offset: number): Promise<[KvRow[], number]> {
    return store.kvList(this.db, 'action_variable', scope, limit, offset);
  }

  async getVariable(scope: Scope, rawName: string): Promise<KvRow> {
    const name = checkKvName(rawName, 'variable');
    const row = await store.kvGet(this.db, 'action_variable', scope, name);
    if (!row) throw notFound(`variable does not exist [name: ${name}]`);
    return row;
  }

  async createVariable(scope: Scope, rawName: string, value: string): Promise<void> {
    const name = checkKvName(rawName, 'variable');
    const data = checkValue(value, 'value');
    const now = nowUnix();
    try {
      await transaction(this.db, async (tx) => {
        if (await store.kvGet(tx, 'action_variable', scope, name)) {
          throw conflict(`variable already exists [name: ${name}]`);
        }
        await store.kvInsert(tx, 'action_variable', {
          owner_id: scope.ownerId,
          repo_id: scope.repoId,
          name,
          data,
          created_unix: now,
          updated_unix: now,
        });
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict(`variable already exists [name: ${name}]`);
      throw err;
    }
  }

  async updateVariable(scope: Scope, rawName: string, input: { name?: string | undefined; value: string }) {
    const name = checkKvName(rawName, 'variable');
    const newName = input.name ? checkKvName(input.name, 'variable') : name;
    const data = checkValue(input.value, 'value');
    try {
      await transaction(this.db, async (tx) => {
        const row = await store.kvGet(tx, 'action_variable', scope, name);
        if (!row) throw notFound(`variable does not exist [name: ${name}]`);
        if (newName !== name && (await store.kvGet(tx, 'action_variable', scope, newName))) {
          throw conflict(`variable already exists [name: ${newName}]`);
        }
        await store.kvUpdate(tx, 'action_variable', row.id, { name: newName, data, updated_unix: nowUnix() });
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict(`variable already exists [name: ${newName}]`);
      throw err;
    }
  }

  async deleteVariable(scope: Scope, rawName: string): Promise<KvRow> {
    const row = await this.getVariable(scope, rawName);
    await store.kvDelete(this.db, 'action_variable', row.id);
    return row;
  }

  /**
   * The decrypted secrets and the variables a job of `repo` gets: its owner's, then its own
   * (a repository's value wins over its owner's of the same name).
   */
  async secretsAndVars(
    repo: RepoRow,
  ): Promise<{ secrets: Record<string, string>; vars: Record<string, string> }> {
    const [secretRows, varRows] = await Promise.all([
      store.kvForRepo(this.db, 'action_secret', repo),
      store.kvForRepo(this.db, 'action_variable', repo),
    ]);
    const ordered = (rows: KvRow[]) =>
      [...rows].sort((a, b) => Number(a.repo_id !== null) - Number(b.repo_id !== null));
    const secrets: Record<string, string> = {};
    for (const r of ordered(secretRows)) {
      try {
        secrets[r.name] = this.secrets().decrypt(r.data);
      } catch {
        this.deps.log.warn(
          { secretId: r.id },
          'an actions secret could not be decrypted (was SECRET_KEY changed?)',
        );
      }
    }
    const vars: Record<string, string> = {};
    for (const r of ordered(varRows)) vars[r.name] = r.data;
    return { secrets, vars };
  }

  // Job tokens

  /** A job token (GITEA_TOKEN) of a running task: the bot, limited to the task's repository. */
  private async resolveJobToken(token: string): Promise<Identity | undefined> {
    if (!this.enabled || !TOKEN_SHAPE.test(token)) return undefined;
    const digest = sha256(token);
    const task = await store.taskByTokenHash(this.db, digest);
    if (!task || !task.token_hash || task.status !== 'running' || !sameDigest(task.token_hash, digest)) {
      return undefined;
    }
    // A fork's pull request run reads its repository but changes nothing there.
    const run = await store.runById(this.db, task.run_id);
    const scopes = run?.is_fork_pull_request ? FORK_JOB_TOKEN_SCOPES : JOB_TOKEN_SCOPES;
    return { user: await this.botUser(), method: 'token', scopes, repoId: task.repo_id };
  }

  async botUser(): Promise<UserRow> {
    return (await this.deps.users.getById(ACTIONS_BOT_ID)) ?? botRow();
  }

  // Triggering runs

  private async onPush({ repoId, pusherId, updates }: AnvilEvents['push']): Promise<void> {
    if (!this.enabled || isActionsBot(pusherId)) return;
    const repo = await this.deps.repos.getById(repoId);
    if (!repo || !repo.has_actions || repo.is_mirror) return;
    for (const u of updates) {
      if (u.newOid === ZERO_OID) continue;
      if (!u.ref.startsWith('refs/heads/') && !u.ref.startsWith('refs/tags/')) continue;
      try {
        await this.triggerPush(repo, pusherId, u);
      } catch (err) {
        this.deps.log.error({ err, repoId, ref: u.ref }, 'actions: could not start the workflows of a push');
      }
    }
  }

  private async triggerPush(repo: RepoRow, pusherId: number, u: RefUpdate): Promise<CreatedRun[]> {
    const dir = this.deps.repos.pathOf(repo);
    const commit = (
      await git(['rev-parse', '--verify', '--quiet', `${u.newOid}^{commit}`], { gitDir: dir, okCodes: [1] })
    ).stdout
      .toString()
      .trim();
    if (!commit) return [];
    const files = await this.workflowsAt(dir, commit);
    if (!files.length) return [];
    let changed: string[] | undefined;
    const matching: RunItem[] = [];
    for (const file of files) {
      const wf = this.parse(file);
      if (!wf) {
        // A file this push made invalid gets a failed run that says why (as GitHub's "Invalid
        // workflow file"); later pushes leave it alone until it changes again.
        changed ??= await changedFiles(dir, u.oldOid, commit);
        if (changed.includes(file.path)) matching.push({ file, error: this.parseError(file) });
        continue;
      }
      const push = wf.triggers.push;
      if (!push || !matchRef(push, u.ref)) continue;
      if (u.ref.startsWith('refs/heads/') && hasPathFilter(push)) {
        changed ??= await changedFiles(dir, u.oldOid, commit);
        if (!matchPaths(push, changed)) continue;
      }
      matching.push({ file, wf });
    }
    if (!matching.length) return [];
    const [pusher, info] = await Promise.all([this.deps.users.getById(pusherId), getCommit(dir, commit)]);
    if (info && skipsWorkflows(info.message)) return [];
    const title = (info?.message ?? '').split('\n', 1)[0]!.trim() || commit.slice(0, 10);
    const payload = {
      ref: u.ref,
      before: u.oldOid,
      after: commit,
      repository: await this.repositoryPayload(repo),
      pusher: pusher ? this.userPayload(pusher) : null,
      sender: pusher ? this.userPayload(pusher) : null,
      head_commit: info
        ? {
            id: info.oid,
            message: info.message,
            timestamp: new Date(info.committerTime * 1000).toISOString(),
          }
        : null,
    };
    return this.createRuns(repo, matching, {
      event: 'push',
      ref: u.ref,
      sha: commit,
      triggerUserId: pusherId,
      title,
      payload,
    });
  }

  /**
   * A pull request event: runs of the workflows (read at the head commit) whose `pull_request`
   * trigger takes this type, base branch and changed files. A pull request from a fork gets runs
   * without secrets, which wait for a writer's approval unless its poster may write here.
   */
  private async onPull(type: string, e: AnvilEvents['pull.opened']): Promise<void> {
    if (!this.enabled || isActionsBot(e.doerId)) return;
    try {
      const pr = await this.db
        .selectFrom('pull_request')
        .selectAll()
        .where('id', '=', e.pullId)
        .executeTakeFirst();
      if (!pr || !pr.head_commit_id) return;
      const repo = await this.deps.repos.getById(pr.base_repo_id);
      if (!repo || !repo.has_actions || repo.is_mirror) return;
      const dir = this.deps.repos.pathOf(repo);
      const files = await this.workflowsAt(dir, pr.head_commit_id);
      let changed: string[] | undefined;
      const matching: Array<{ file: WorkflowFile; wf: Workflow }> = [];
      for (const file of files) {
        const wf = this.parse(file);
        const f = wf?.triggers.pull_request;
        if (!wf || !f || !(f.types ?? DEFAULT_PULL_TYPES).includes(type)) continue;
        if (
          !matchRef(
            { branches: f.branches, branchesIgnore: f.branchesIgnore },
            `refs/heads/${pr.base_branch}`,
          )
        )
          continue;
        if (hasPathFilter(f)) {
          changed ??= await changedFiles(dir, pr.merge_base || ZERO_OID, pr.head_commit_id);
          if (!matchPaths(f, changed)) continue;
        }
        matching.push({ file, wf });
      }
      if (!matching.length) return;
      const [issue, doer] = await Promise.all([
        this.db
          .selectFrom('issue')
          .select(['title', 'content', 'poster_id'])
          .where('id', '=', e.issueId)
          .executeTakeFirst(),
        this.deps.users.getById(e.doerId),
      ]);
      if (issue && skipsWorkflows(issue.title)) return;
      const fork = pr.head_repo_id !== pr.base_repo_id;
      let needApproval = false;
      if (fork) {
        const poster = issue?.poster_id ? await this.deps.users.getById(issue.poster_id) : undefined;
        const viewer = poster ? { id: poster.id, isAdmin: poster.is_admin === 1 } : null;
        needApproval = (await this.deps.repos.access(repo, viewer)).mode < AccessMode.write;
      }
      const repository = await this.repositoryPayload(repo);
      const payload = {
        action: type === 'synchronize' ? 'synchronized' : type,
        number: pr.index,
        pull_request: {
          id: pr.id,
          number: pr.index,
          title: issue?.title ?? '',
          body: issue?.content ?? '',
          merged: pr.has_merged === 1,
          head: { ref: pr.head_branch, sha: pr.head_commit_id, repo: repository },
          base: { ref: pr.base_branch, repo: repository },
        },
        repository,
        sender: doer ? this.userPayload(doer) : null,
      };
      await this.createRuns(repo, matching, {
        event: 'pull_request',
        ref: `refs/pull/${pr.index}/head`,
        sha: pr.head_commit_id,
        triggerUserId: e.doerId,
        title: issue?.title ?? `#${pr.index}`,
        payload,
        fork,
        needApproval,
      });
    } catch (err) {
      this.deps.log.error(
        { err, pullId: e.pullId },
        'actions: could not start the workflows of a pull request',
      );
    }
  }

  /** POST .../actions/workflows/{file}/dispatches: one run of the workflow at `ref`. */
  async dispatch(
    repo: RepoRow,
    doer: UserRow,
    workflowName: string,
    ref: string,
    inputs: Record<string, string>,
  ): Promise<CreatedRun> {
    this.assertEnabled();
    if (isActionsBot(doer.id)) throw forbidden('the actions bot cannot dispatch workflows');
    if (!repo.has_actions) throw notFound('actions are disabled for this repository');
    checkRefName(ref.trim() || ref, 'ref');
    const dir = this.deps.repos.pathOf(repo);
    const resolved = repo.is_empty ? undefined : await resolveRef(dir, ref.trim());
    if (!resolved || resolved.kind === 'commit') throw notFound(`ref does not exist [ref: ${ref}]`);
    const fullRef = resolved.kind === 'branch' ? `refs/heads/${resolved.name}` : `refs/tags/${resolved.name}`;
    const file = (await this.workflowsAt(dir, resolved.oid)).find((f) => f.name === workflowName);
    if (!file) throw notFound(`workflow does not exist [name: ${workflowName}, ref: ${ref}]`);
    let wf: Workflow;
    try {
      wf = parseWorkflow(file.content, file.path);
    } catch (err) {
      throw badRequest(err instanceof Error ? err.message : String(err));
    }
    const spec = wf.triggers.workflow_dispatch;
    if (!spec) throw badRequest(`workflow ${workflowName} has no workflow_dispatch trigger`);
    if ((await store.disabledWorkflows(this.db, repo.id)).has(file.name)) {
      throw badRequest(`workflow ${workflowName} is disabled`);
    }
    let resolvedInputs: Record<string, string>;
    try {
      resolvedInputs = resolveInputs(spec.inputs, inputs);
    } catch (err) {
      if (err instanceof WorkflowError) throw badRequest(err.message);
      throw err;
    }
    const repository = await this.repositoryPayload(repo);
    const payload = {
      inputs: resolvedInputs,
      ref: fullRef,
      repository,
      sender: this.userPayload(doer),
      workflow: file.path,
    };
    const ev: RunEvent = {
      event: 'workflow_dispatch',
      ref: fullRef,
      sha: resolved.oid,
      triggerUserId: doer.id,
      title: wf.name,
      payload,
    };
    // The inputs in its jobs' runs-on, strategy, name and concurrency, read now: as the runner
    // reads them (the event's inputs, text; an input not given and without a default is empty).
    const names = Object.keys(spec.inputs);
    const known = Object.fromEntries(names.map((n) => [n, resolvedInputs[n] ?? '']));
    try {
      wf = withKnownInputs(file.content, file.path, wf, names, known, creationBase(ev, repository.full_name));
    } catch (err) {
      if (err instanceof WorkflowError) throw badRequest(err.message);
      throw err;
    }
    const [created] = await this.createRuns(repo, [{ file, wf }], ev);
    // Disabled meanwhile: nothing was created.
    if (!created) throw badRequest(`workflow ${workflowName} is disabled`);
    return created;
  }

  /** Why a workflow file cannot be read. */
  private parseError(file: WorkflowFile): string {
    try {
      parseWorkflow(file.content, file.path);
      return '';
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  private parse(file: WorkflowFile): Workflow | undefined {
    try {
      return parseWorkflow(file.content, file.path);
    } catch (err) {
      this.deps.log.warn({ path: file.path, err: (err as Error).message }, 'actions: workflow ignored');
      return undefined;
    }
  }

  /** The workflow files at `commit`: those of the first workflow directory that exists. */
  async workflowsAt(dir: string, commit: string): Promise<WorkflowFile[]> {
    const out = await git(
      ['ls-tree', '-r', '-l', '-z', '--end-of-options', commit, '--', ...WORKFLOW_DIRS.map((d) => `${d}/`)],
      { gitDir: dir, env: { GIT_LITERAL_PATHSPECS: '1' } },
    );
    const entries: Array<{ oid: string; size: number; path: string; type: string }> = [];
    for (const rec of out.stdout.toString('utf8').split('\0')) {
      const tab = rec.indexOf('\t');
      if (tab < 0) continue;
      const [, type, oid, size] = rec.slice(0, tab).split(/ +/);
      entries.push({ type: type!, oid: oid!, size: Number(size) || 0, path: rec.slice(tab + 1) });
    }
    const dirName = WORKFLOW_DIRS.find((d) => entries.some((e) => e.path.startsWith(`${d}/`)));
    if (!dirName) return [];
    const chosen = entries.filter(
      (e) =>
        e.path.startsWith(`${dirName}/`) &&
        e.type === 'blob' &&
        /\.ya?ml$/i.test(e.path) &&
        e.size <= MAX_WORKFLOW_BYTES,
    );
    const blobs = await readBlobs(
      dir,
      chosen.map((e) => e.oid),
    );
    return chosen
      .sort((a, b) => a.path.localeCompare(b.path))
      .map((e) => ({
        path: e.path,
        name: e.path.slice(e.path.lastIndexOf('/') + 1),
        content: (blobs.get(e.oid) ?? Buffer.alloc(0)).toString('utf8'),
      }));
  }

  /** Creates one run per workflow with all its jobs, in one transaction. */
  private async createRuns(repo: RepoRow, items: RunItem[], ev: RunEvent): Promise<CreatedRun[]> {
    // A disabled workflow is not triggered (a dispatch of one was refused before).
    const disabled = await store.disabledWorkflows(this.db, repo.id);
    items = items.filter((i) => !disabled.has(i.file.name));
    if (!items.length) return [];
    const repository = await this.repositoryPayload(repo);
    items = await this.expandCalls(repo, items, creationBase(ev, repository.full_name), ev.sha);
    for (let attempt = 0; ; attempt++) {
      try {
        const done = await transaction(this.db, (tx) =>
          insertRuns(tx, repo, repository.full_name, items, ev),
        );
        for (const listener of this.cancelListeners) await listener(done.cancelTasks);
        for (const listener of this.jobsWaiting) listener();
        for (const c of done.created) this.runChanged(c.run.id);
        for (const id of done.changedRuns) this.runChanged(id);
        return done.created;
      } catch (err) {
        // Two triggers of one repository took the same run number: the later one tries again.
        if (attempt < 3 && uniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /** The jobs of each run with the workflows they call; a call that cannot be made fails its run. */
  private async expandCalls(
    repo: RepoRow,
    items: RunItem[],
    base: CreationBase,
    sha: string,
  ): Promise<RunItem[]> {
    const load = workflowLoader(this.deps, repo);
    const out: RunItem[] = [];
    for (const item of items) {
      if ('error' in item) {
        out.push(item);
        continue;
      }
      try {
        const site = { repoId: repo.id, commit: sha, path: item.file.path };
        const jobs = await expandCalls(item.wf, site, load, base);
        const unread = jobs.find((j) => j.maxParallelExpr !== undefined);
        if (unread) {
          throw new WorkflowError(
            `jobs.${unread.jobId}.strategy.max-parallel (${unread.maxParallelExpr}) may read only inputs: Anvil reads it when the run is created`,
          );
        }
        out.push({ ...item, jobs });
      } catch (err) {
        if (!(err instanceof WorkflowError)) throw err;
        out.push({ file: item.file, error: err.message });
      }
    }
    return out;
  }

  /**
   * A schedule's time came (schedules.ts claimed it): a run of its workflow as it is now on the
   * default branch's head. 'gone' when the workflow no longer has this schedule there (the row is
   * stale); 'skipped' when the repository runs no actions now or the workflow is disabled.
   */
  async startScheduled(row: ScheduleRow): Promise<'started' | 'skipped' | 'gone'> {
    if (!this.enabled) return 'skipped';
    const repo = await this.deps.repos.getById(row.repo_id);
    if (!repo) return 'gone';
    if (!repo.has_actions || repo.is_mirror || repo.is_archived || repo.is_empty) return 'skipped';
    const dir = this.deps.repos.pathOf(repo);
    const head = await resolveRef(dir, repo.default_branch);
    if (!head || head.kind !== 'branch') return 'skipped';
    const file = (await this.workflowsAt(dir, head.oid)).find((f) => f.name === row.workflow_id);
    const wf = file && this.parse(file);
    if (!file || !wf?.triggers.schedule?.includes(row.spec)) return 'gone';
    const [trigger, info] = await Promise.all([
      this.deps.users.getById(row.trigger_user_id),
      getCommit(dir, head.oid),
    ]);
    const payload = {
      schedule: row.spec,
      ref: `refs/heads/${head.name}`,
      repository: await this.repositoryPayload(repo),
      sender: trigger ? this.userPayload(trigger) : null,
      workflow: file.path,
    };
    const created = await this.createRuns(repo, [{ file, wf }], {
      event: 'schedule',
      ref: `refs/heads/${head.name}`,
      sha: head.oid,
      triggerUserId: trigger ? trigger.id : ACTIONS_BOT_ID,
      title: (info?.message ?? '').split('\n', 1)[0]!.trim() || wf.name,
      payload,
    });
    return created.length ? 'started' : 'skipped';
  }

  private async repositoryPayload(repo: RepoRow) {
    const owner = await this.deps.users.getById(repo.owner_id);
    const root = this.deps.rootUrl;
    const fullName = `${owner?.name ?? ''}/${repo.name}`;
    return {
      id: repo.id,
      name: repo.name,
      full_name: fullName,
      owner: owner ? this.userPayload(owner) : null,
      private: repo.is_private === 1,
      default_branch: repo.default_branch,
      html_url: `${root}${fullName}`,
      clone_url: `${root}${fullName}.git`,
    };
  }

  private userPayload(u: UserRow) {
    return { id: u.id, login: u.name, username: u.name, full_name: u.full_name };
  }

  // Reading runs

  async requireRun(repo: RepoRow, id: number): Promise<RunRow> {
    const run = Number.isSafeInteger(id) && id > 0 ? await store.runById(this.db, id) : undefined;
    if (!run || run.repo_id !== repo.id) throw notFound(`run does not exist [id: ${id}]`);
    return run;
  }

  listRuns(repo: RepoRow, filter: RunFilter, limit: number, offset: number) {
    return store.listRuns(this.db, repo.id, filter, limit, offset);
  }

  listJobs(run: RunRow, limit: number, offset: number): Promise<[JobRow[], number]> {
    return store.listJobsOfRun(this.db, run.id, limit, offset);
  }

  listTasks(repo: RepoRow, limit: number, offset: number) {
    return store.listTasks(this.db, repo.id, limit, offset);
  }

  async requireJob(repo: RepoRow, id: number): Promise<JobRow> {
    const job = Number.isSafeInteger(id) && id > 0 ? await store.jobById(this.db, id) : undefined;
    if (!job || job.repo_id !== repo.id) throw notFound(`job does not exist [id: ${id}]`);
    return job;
  }

  /** The log of a job's latest task, one line per row. */
  async jobLog(job: JobRow): Promise<string> {
    if (!job.task_id) return '';
    const rows = await store.logsOf(this.db, job.task_id);
    return rows.map((r) => `${new Date(Number(r.time_ms)).toISOString()} ${r.content}\n`).join('');
  }

  /** For the cache service: the run's repository and ref. */
  async runRef(id: number): Promise<{ repoId: number; ref: string } | undefined> {
    const run = await store.runById(this.db, id);
    return run && { repoId: run.repo_id, ref: run.ref };
  }

  /** For the artifact service (its RunSource): run numbers and head commits. */
  async runs(ids: number[]): Promise<Map<number, { index: number; headSha: string }>> {
    const runs = await store.runsByIds(this.db, ids);
    return new Map([...runs].map(([id, r]) => [id, { index: r.run_number, headSha: r.commit_sha }]));
  }
}

/** The files a push changed (for path filters): against the old tip, or the commit's own for a new ref. */
async function changedFiles(dir: string, oldOid: string, newOid: string): Promise<string[]> {
  const list = (out: Buffer) => out.toString('utf8').split('\0').filter(Boolean);
  if (oldOid !== ZERO_OID) {
    const r = await git(['diff', '--name-only', '-z', '--no-renames', oldOid, newOid, '--'], {
      gitDir: dir,
      okCodes: [128],
    });
    if (r.code === 0) return list(r.stdout);
  }
  const r = await git(['diff-tree', '--root', '--no-commit-id', '-r', '--name-only', '-z', newOid], {
    gitDir: dir,
  });
  return list(r.stdout);
}
