// Forks and the repository creation limit. A fork is a new bare repository cloned locally from
// its parent (objects hard-linked, nothing shared afterwards), recorded with fork_id/is_fork, the
// parent's num_forks counted in the same transaction. The creation limit ([repository]
// MAX_CREATION_LIMIT, overridden per account by max_repo_creation) is checked here for every
// creation path: RepoService.create calls it through its beforeCreate hook, forks directly.
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { AppError, badRequest, conflict, forbidden, invalidField, notFound } from '../errors.js';
import { git, gitText, isAncestor, objectsSize } from '../git/git.js';
import * as data from '../git/data.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import type { OrgService } from '../orgs/service.js';
import { recordUsage } from '../quota/usage.js';
import * as userStore from '../users/store.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import * as forkStore from './fork-store.js';
import { checkRepoName } from './names.js';
import type { RefChanges } from './ref-changes.js';
import type { SyncForkInfo } from './schemas.js';
import { adoptBareRepository, scratchDir } from './scratch.js';
import type { RepoService } from './service.js';
import * as store from './store.js';
import type { RepoRow } from './tables.js';

type Q = Db | Tx;

/** Branch protection's verdict on ref updates (the protection domain). */
export interface RefUpdateRules {
  refusalFor(repo: RepoRow, doer: UserRow, updates: RefUpdate[]): Promise<string | null>;
}

/** Whether an owner's quota allows more of `subject` (the quota domain). */
export interface QuotaCheck {
  check(ownerId: number, subject: string): Promise<boolean>;
}

export interface ForkServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'addHooks' | 'assertCanCreateIn' | 'insertRow' | 'pathOf'>;
  refChanges: Pick<RefChanges, 'changeRefs'>;
  orgs: Pick<OrgService, 'canSee'>;
  quota: QuotaCheck;
  protection: RefUpdateRules;
  repository: Pick<Config['repository'], 'root' | 'maxCreationLimit' | 'allowForkWithoutMaximumLimit'>;
}

export interface ForkInput {
  /** Organization to fork into; the doer's own account when absent. */
  organization?: string | undefined;
  /** Name of the fork; the parent's name when absent. */
  name?: string | undefined;
  /** Description of the fork; the parent's when absent (the web form's field; the API has none). */
  description?: string | undefined;
}

/** Forgejo's message (ErrReachLimitOfRepo). */
const limitMessage = (limit: number) =>
  `user has already reached maximum limit of repositories [limit: ${limit}]`;

interface BranchHead {
  name: string;
  oid: string;
  subject: string;
  time: number;
}

/** Every branch of a bare repository with its head commit's first line and time: one git call. */
async function readBranches(dir: string): Promise<BranchHead[]> {
  const out = await git(
    [
      'for-each-ref',
      '--format=%(objectname)%00%(committerdate:unix)%00%(refname)%00%(contents)%1e',
      'refs/heads/',
    ],
    { gitDir: dir },
  );
  return out.stdout
    .toString('utf8')
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.length > 0)
    .map((r) => {
      const [oid, time, ref, ...message] = r.split('\0');
      return {
        oid: oid!,
        time: Number(time) || 0,
        name: ref!.slice('refs/heads/'.length),
        subject: message.join('\0').split('\n')[0] ?? '',
      };
    });
}

export class ForkService {
  private readonly db: Db;

  constructor(private readonly deps: ForkServiceDeps) {
    this.db = deps.db;
    deps.repos.addHooks({
      beforeCreate: (tx, doer, owner) => this.assertCanCreate(tx, doer, owner),
      beforeDelete: async (tx, repo) => {
        if (repo.is_fork && repo.fork_id !== null) await forkStore.addFork(tx, repo.fork_id, -1);
        if (repo.num_forks > 0) await forkStore.detachForks(tx, repo.id);
      },
    });
  }

  // The creation limit

  /** Forgejo's MaxCreationLimit: the account's own max_repo_creation, else the global setting. */
  creationLimitOf(owner: UserRow): number {
    return owner.max_repo_creation <= -1 ? this.deps.repository.maxCreationLimit : owner.max_repo_creation;
  }

  /** Whether `owner` may own one more repository (site administrators always may). */
  async canCreate(q: Q, owner: UserRow): Promise<boolean> {
    if (owner.is_admin) return true;
    const limit = this.creationLimitOf(owner);
    if (limit <= -1) return true;
    return (await store.countOwned(q, owner.id)) < limit;
  }

  /** 403 when `owner` has reached its repository limit, unless `doer` is a site administrator. */
  async assertCanCreate(q: Q, doer: UserRow, owner: UserRow): Promise<void> {
    if (doer.is_admin) return;
    if (!(await this.canCreate(q, owner))) throw forbidden(limitMessage(this.creationLimitOf(owner)));
  }

  /** Forgejo's CanForkRepo: at the limit only when ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT is false. */
  async canFork(q: Q, owner: UserRow): Promise<boolean> {
    if (this.deps.repository.allowForkWithoutMaximumLimit) return true;
    return this.canCreate(q, owner);
  }

  // Forking

  /** The forks of `base` that `owners` already have, by owner id (an account holds one fork of a repository). */
  async existingForks(base: RepoRow, owners: UserRow[]): Promise<Map<number, RepoRow>> {
    const rows = await forkStore.forksOwnedBy(
      this.db,
      base.id,
      owners.map((o) => o.id),
    );
    return new Map(rows.map((r) => [r.owner_id, r]));
  }

  /** Forks `base` for `doer` (into an organization when asked); the caller checked read access. */
  async fork(doer: UserRow, viewer: Viewer, base: RepoRow, input: ForkInput): Promise<RepoRow> {
    const { db, repos } = this.deps;
    let owner = doer;
    if (input.organization) {
      const org = await userStore.getByName(db, input.organization);
      if (!org || org.type !== UserType.Organization || !(await this.deps.orgs.canSee(viewer, org))) {
        throw invalidField('organization', `organization does not exist [name: ${input.organization}]`);
      }
      await repos.assertCanCreateIn(doer, org);
      owner = org;
    }
    // Accounts that are neither people nor organizations (the actions bot) own no repositories.
    if (owner.type !== UserType.Individual && owner.type !== UserType.Organization) {
      throw forbidden(`${owner.name} cannot own repositories`);
    }
    const name = input.name ?? base.name;
    checkRepoName(name);
    if ((input.description?.length ?? 0) > 2048) {
      throw invalidField('description', 'must be at most 2048 characters');
    }
    const baseOwner = (await userStore.getById(db, base.owner_id))!;
    await this.assertForkable(db, base, baseOwner, owner, name);

    // The clone happens before the transaction: it may take a while and needs no database.
    const scratch = scratchDir(this.deps.repository.root, 'fork');
    let dir: string | undefined;
    try {
      await git(['clone', '--bare', '--local', '--quiet', '--', repos.pathOf(base), scratch]);
      await adoptBareRepository(scratch);
      // A clone of an empty repository points HEAD at git's own default: follow the parent's.
      await git(['symbolic-ref', 'HEAD', `refs/heads/${base.default_branch}`], { gitDir: scratch });
      const branches = await readBranches(scratch);
      const size = objectsSize(scratch);
      const now = nowUnix();
      const fork = await transaction(db, async (tx) => {
        await this.assertForkable(tx, base, baseOwner, owner, name);
        await store.deleteRedirect(tx, owner.id, name);
        const id = await repos.insertRow(tx, doer, owner, {
          owner_id: owner.id,
          name,
          lower_name: name.toLowerCase(),
          description: input.description ?? base.description,
          website: base.website,
          default_branch: base.default_branch,
          is_private: base.is_private,
          is_empty: branches.length ? 0 : 1,
          is_fork: 1,
          fork_id: base.id,
          size,
          object_format_name: base.object_format_name,
          has_issues: base.has_issues,
          has_wiki: base.has_wiki,
          has_pull_requests: base.has_pull_requests,
          has_projects: base.has_projects,
          has_releases: base.has_releases,
          has_packages: base.has_packages,
          has_actions: base.has_actions,
          created_unix: now,
          updated_unix: now,
        });
        for (const b of branches) {
          await store.upsertBranch(tx, {
            repo_id: id,
            name: b.name,
            commit_id: b.oid,
            commit_message: b.subject,
            commit_time: b.time,
            pusher_id: doer.id,
            updated_unix: now,
          });
        }
        await recordUsage(tx, owner.id, base.is_private ? 'size:repos:private' : 'size:repos:public', size);
        await forkStore.addFork(tx, base.id, 1);
        dir = repos.pathOf({ id });
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(scratch, dir);
        return (await store.getById(tx, id))!;
      });
      await this.deps.events.emit('repository.created', { repoId: fork.id, doerId: doer.id });
      return fork;
    } catch (err) {
      fs.rmSync(scratch, { recursive: true, force: true });
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      if (err instanceof AppError) throw err;
      this.deps.log.error({ err, repoId: base.id }, 'forking a repository failed');
      throw new AppError('internal', 'forking the repository failed');
    }
  }

  /** The conflicts Forgejo reports with 409: the limit, an existing fork, a taken name. */
  private async assertForkable(q: Q, base: RepoRow, baseOwner: UserRow, owner: UserRow, name: string) {
    if (!(await this.canFork(q, owner))) throw conflict(limitMessage(this.creationLimitOf(owner)));
    const existing = await forkStore.userFork(q, base.id, owner.id);
    if (existing) {
      throw conflict(
        `repository is already forked by user [uname: ${owner.name}, repo path: ${baseOwner.name}/${base.name}, fork path: ${owner.name}/${existing.name}]`,
      );
    }
    if (await store.getByOwnerAndName(q, owner.name, name)) {
      throw conflict('The repository with the same name already exists.');
    }
  }

  // Syncing a fork with its base

  /**
   * Forgejo's GetSyncForkInfo for the fork's `branch`: the commits at both ends, and whether the
   * fork's branch may be fast-forwarded to the base's (its commit is one of the base branch's, and
   * not the same): 400 when the repository is not a fork (or its base is gone), 404 when the fork
   * has no such branch; a base without that branch is simply not allowed.
   */
  async syncForkInfo(fork: RepoRow, branch: string): Promise<SyncForkInfo> {
    const { base } = await this.syncTarget(fork);
    const forkDir = this.deps.repos.pathOf(fork);
    const forkHead = data.isValidRefName(branch)
      ? await data.resolveRef(forkDir, `refs/heads/${branch}`)
      : undefined;
    if (!forkHead) throw notFound(`branch does not exist [name: ${branch}]`);
    const info: SyncForkInfo = {
      allowed: false,
      fork_commit: forkHead.oid,
      base_commit: '',
      commits_behind: 0,
    };
    const baseDir = this.deps.repos.pathOf(base);
    const baseHead = await data.resolveRef(baseDir, `refs/heads/${branch}`);
    if (!baseHead) return info;
    info.base_commit = baseHead.oid;
    if (baseHead.oid === forkHead.oid) return info;
    // The fork's commit must be in the base, behind its branch: then it is a fast-forward.
    const known = await git(['cat-file', '-e', `${forkHead.oid}^{commit}`], {
      gitDir: baseDir,
      okCodes: [1, 128],
    });
    if (known.code !== 0 || !(await isAncestor(baseDir, forkHead.oid, baseHead.oid))) return info;
    info.allowed = true;
    info.commits_behind = Number(
      await gitText(['rev-list', '--count', `${forkHead.oid}..${baseHead.oid}`], { gitDir: baseDir }),
    );
    return info;
  }

  /**
   * Forgejo's SyncFork: fast-forwards the fork's `branch` to the base's (never anything else):
   * 400 when that is not possible, 403 when the fork is archived or branch protection refuses,
   * 409 when the branch moved meanwhile. The move is recorded like a push (under an intent).
   */
  async syncFork(fork: RepoRow, doer: UserRow, branch: string): Promise<void> {
    if (fork.is_archived) throw forbidden('repo is archived');
    const info = await this.syncForkInfo(fork, branch);
    if (!info.allowed) throw badRequest("You can't sync this branch");
    const { base } = await this.syncTarget(fork);
    if (!(await this.deps.quota.check(fork.owner_id, 'size:git:all'))) {
      throw new AppError('payload_too_large', 'quota exceeded');
    }
    const ref = `refs/heads/${branch}`;
    const update: RefUpdate = { ref, oldOid: info.fork_commit, newOid: info.base_commit };
    const refusal = await this.deps.protection.refusalFor(fork, doer, [update]);
    if (refusal) throw forbidden(refusal);
    const dir = this.deps.repos.pathOf(fork);
    // The objects first (no ref changes, harmless if interrupted), then the branch, like a push.
    await git(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        this.deps.repos.pathOf(base),
        info.base_commit,
      ],
      {
        gitDir: dir,
      },
    );
    const moved = await this.deps.refChanges.changeRefs(fork.id, doer.id, [update], () =>
      data.updateRef(dir, ref, update.oldOid, update.newOid),
    );
    if (!moved) throw conflict(`branch ${branch} changed while it was being synced`);
  }

  private async syncTarget(fork: RepoRow): Promise<{ base: RepoRow }> {
    if (!fork.is_fork) throw badRequest('The Repo must be a fork');
    const base = fork.fork_id !== null ? await store.getById(this.db, fork.fork_id) : undefined;
    if (!base) throw badRequest('the base repository of this fork no longer exists');
    return { base };
  }

  /** The forks of `base` that `viewer` may see, oldest first. */
  listForks(base: RepoRow, viewer: Viewer | null, limit: number, offset: number) {
    return store.list(
      this.db,
      {
        forkOf: base.id,
        viewerId: viewer?.isAdmin && !viewer.publicOnly ? undefined : (viewer?.id ?? null),
        publicOnly: viewer?.publicOnly,
        orderBy: 'id',
      },
      limit,
      offset,
    );
  }
}
