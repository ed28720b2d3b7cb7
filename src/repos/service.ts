// Repositories: lookups and access rules, creation (with an initial commit when asked), editing,
// deletion, and the hooks through which other domains follow them. Transfers are transfers.ts,
// collaborators and team access collaborators.ts, ref changes after a push ref-changes.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Insertable } from 'kysely';
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { MovedError, badRequest, conflict, forbidden, invalidField, notFound } from '../errors.js';
import * as userStore from '../users/store.js';
import * as orgStore from '../orgs/store.js';
import { AccessMode } from '../orgs/tables.js';
import { UserType } from '../users/tables.js';
import type { Viewer, UserRow } from '../users/tables.js';
import type { AfterCommit, OwnedResources } from '../users/owned.js';
import { measureRows, recordUsage, type UsageSource, type OwnerTotals } from '../quota/usage.js';
import type { EventBus } from '../events/bus.js';
import { git, initBare, listRefs, objectsSize } from '../git/git.js';
import * as store from './store.js';
import type { ListFilter } from './list-filter.js';
import type { RepoRow, RepositoryTable } from './tables.js';
import { GITIGNORES, LICENSES, READMES } from './templates.js';
import type { TeamRow } from '../orgs/tables.js';
import { accessOf, type RepoAccess } from './access.js';
import { checkBranchName, checkRepoName } from './names.js';
import { commitsOf, recordBranch, recordBranches, sizeSubject } from './records.js';

export type { RepoAccess } from './access.js';

export interface CreateRepoInput {
  name: string;
  description?: string | undefined;
  private?: boolean | undefined;
  autoInit?: boolean | undefined;
  readme?: string | undefined;
  gitignores?: string | undefined;
  license?: string | undefined;
  defaultBranch?: string | undefined;
  template?: boolean | undefined;
  /** A label template (labels/templates.ts) whose labels the repository starts with. */
  issueLabels?: string | undefined;
}

export interface EditRepoInput {
  name?: string | undefined;
  description?: string | undefined;
  website?: string | undefined;
  private?: boolean | undefined;
  template?: boolean | undefined;
  archived?: boolean | undefined;
  defaultBranch?: string | undefined;
  hasIssues?: boolean | undefined;
  hasWiki?: boolean | undefined;
  hasPullRequests?: boolean | undefined;
  hasProjects?: boolean | undefined;
  hasReleases?: boolean | undefined;
  hasPackages?: boolean | undefined;
  hasActions?: boolean | undefined;
  /** The pull requests unit's options (Forgejo's EditRepoOption names). */
  allowMergeCommits?: boolean | undefined;
  allowRebase?: boolean | undefined;
  allowRebaseExplicit?: boolean | undefined;
  allowSquashMerge?: boolean | undefined;
  allowFastForwardOnlyMerge?: boolean | undefined;
  allowRebaseUpdate?: boolean | undefined;
  defaultDeleteBranchAfterMerge?: boolean | undefined;
  defaultAllowMaintainerEdit?: boolean | undefined;
  defaultMergeStyle?: string | undefined;
}

/** The merge styles a repository may allow and make its default. */
export const DEFAULT_MERGE_STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only'];

/**
 * What other domains keep per repository (LFS objects, statuses, mirrors, ...) and must follow
 * when a repository is deleted or changes owner, inside the same transaction.
 */
export interface RepoHooks {
  /** Before a repository row is inserted for `owner` (creation limits): throw to refuse. */
  beforeCreate?(tx: Tx, doer: UserRow, owner: UserRow): Promise<void>;
  /** The repository row was just inserted, in the same transaction: rows it starts with. */
  onCreate?(tx: Tx, repoId: number, input: CreateRepoInput): Promise<void>;
  /** Before the repository row is deleted: drop rows and usage; return work for after commit (files). */
  beforeDelete?(tx: Tx, repo: RepoRow): Promise<AfterCommit | void>;
  /** The repository moves from `repo.owner_id` to `newOwnerId` (usage moves with it). */
  onTransfer?(tx: Tx, repo: RepoRow, newOwnerId: number): Promise<void>;
}

const b = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);

export interface RepoServiceDeps {
  db: Db;
  /** [repository] ROOT: bare repositories live here, named by id. */
  root: string;
  events: EventBus;
  log: Logger;
}

export class RepoService {
  private readonly hooks: RepoHooks[] = [];
  private readonly db: Db;
  private readonly root: string;
  private readonly events: EventBus;
  private readonly log: Logger;

  constructor(deps: RepoServiceDeps) {
    this.db = deps.db;
    this.root = deps.root;
    this.events = deps.events;
    this.log = deps.log;
  }

  addHooks(hooks: RepoHooks): void {
    this.hooks.push(hooks);
  }

  /** The bare repository's directory: by id, so no name from a URL ever reaches the filesystem. */
  pathOf(repo: { id: number }): string {
    return path.join(this.root, `${repo.id}.git`);
  }

  // Access

  async access(repo: RepoRow, viewer: Viewer | null): Promise<RepoAccess> {
    return (await this.accessMany([repo], viewer)).get(repo.id)!;
  }

  /**
   * The viewer's access to each of `rows` (by repository id), in a fixed number of queries
   * whatever the number of rows: lists use it instead of a query per repository.
   */
  async accessMany(
    rows: RepoRow[],
    viewer: Viewer | null,
    owners?: Map<number, UserRow>,
  ): Promise<Map<number, RepoAccess>> {
    const out = new Map<number, RepoAccess>();
    if (rows.length === 0) return out;
    const ownerIds = [...new Set(rows.map((r) => r.owner_id))];
    const byId = owners ?? (await userStore.getByIds(this.db, ownerIds));
    let grants: store.Grants | undefined;
    let restricted = false;
    if (viewer && !viewer.publicOnly && !viewer.isAdmin) {
      const orgIds = ownerIds.filter((id) => byId.get(id)?.type === UserType.Organization);
      // Whether the viewer is restricted matters only for public repositories of others.
      const needsUser = rows.some((r) => !r.is_private && r.owner_id !== viewer.id);
      const [g, me] = await Promise.all([
        store.grants(
          this.db,
          viewer.id,
          orgIds,
          rows.map((r) => r.id),
        ),
        needsUser ? userStore.getById(this.db, viewer.id) : undefined,
      ]);
      grants = g;
      restricted = me?.restricted === 1;
    }
    for (const repo of rows) {
      out.set(repo.id, accessOf(repo, byId.get(repo.owner_id)!, viewer, grants, restricted));
    }
    return out;
  }

  /**
   * The repository `owner/name` when `viewer` may at least read it (404 otherwise, revealing
   * nothing), with the viewer's access. `need` asks for more: 403 when the viewer can read but
   * not write or administer.
   */
  async requireRepo(
    ownerName: string,
    name: string,
    viewer: Viewer | null,
    need: 'read' | 'write' | 'admin' = 'read',
    unit = 'repo.code',
  ): Promise<{ repo: RepoRow; access: RepoAccess }> {
    // Names are letters, digits, '-', '_' and '.': anything else (NUL bytes, slashes) names nothing.
    const plain = /^[\w.-]{1,255}$/;
    const repo =
      plain.test(ownerName) && plain.test(name)
        ? await store.getByOwnerAndName(this.db, ownerName, name.replace(/\.git$/i, ''))
        : undefined;
    if (!repo) {
      throw (
        (plain.test(ownerName) && plain.test(name) && (await this.moved(ownerName, name, viewer))) ||
        notFound(`repository does not exist [owner: ${ownerName}, name: ${name}]`)
      );
    }
    const access = await this.access(repo, viewer);
    if (access.mode < AccessMode.read)
      throw notFound(`repository does not exist [owner: ${ownerName}, name: ${name}]`);
    const needed =
      need === 'admin' ? AccessMode.admin : need === 'write' ? AccessMode.write : AccessMode.read;
    const have = need === 'admin' ? access.mode : (access.units.get(unit) ?? 0);
    if (have < needed) throw forbidden(`you need ${need} access to ${unit} of this repository`);
    return { repo, access };
  }

  /**
   * When `owner/name` is a former name of a repository the viewer may read (its owner renamed,
   * the repository renamed or transferred): the redirect to its current name, as Forgejo answers.
   */
  private async moved(
    ownerName: string,
    name: string,
    viewer: Viewer | null,
  ): Promise<MovedError | undefined> {
    const bare = name.replace(/\.git$/i, '');
    let owner = await userStore.getByName(this.db, ownerName);
    if (!owner) {
      const id = await userStore.redirectOf(this.db, ownerName);
      owner = id === undefined ? undefined : await userStore.getById(this.db, id);
    }
    if (!owner) return undefined;
    let repo = await store.getByOwnerAndName(this.db, owner.name, bare);
    if (!repo) {
      const id = await store.redirectOf(this.db, owner.id, bare);
      repo = id === undefined ? undefined : await store.getById(this.db, id);
    }
    if (!repo || (await this.access(repo, viewer)).mode < AccessMode.read) return undefined;
    const now = repo.owner_id === owner.id ? owner : await userStore.getById(this.db, repo.owner_id);
    return now && new MovedError([ownerName, bare], [now.name, repo.name]);
  }

  /** The repository's deleted branches, the 50 most recently deleted (the branches page offers them back). */
  deletedBranches(repo: RepoRow) {
    return store.deletedBranches(this.db, repo.id, 50);
  }

  deletedBranch(repo: RepoRow, id: number) {
    return store.deletedBranch(this.db, repo.id, id);
  }

  getById(id: number) {
    return store.getById(this.db, id);
  }

  /** Who may be assigned to the repository's issues: people who may write them (Forgejo's list). */
  assignees(repo: RepoRow): Promise<UserRow[]> {
    return store.peopleWithAccess(this.db, repo, 'repo.issues', AccessMode.write);
  }

  /**
   * Who may be asked to review its pull requests, the asker aside: in a private repository everyone
   * who may read them; in a public one those who may write them, and the watchers (as Forgejo).
   */
  reviewers(repo: RepoRow, askerId: number): Promise<UserRow[]> {
    return repo.is_private
      ? store.peopleWithAccess(this.db, repo, 'repo.pulls', AccessMode.read, { excludeId: askerId })
      : store.peopleWithAccess(this.db, repo, 'repo.pulls', AccessMode.write, {
          excludeId: askerId,
          alsoWatchers: true,
        });
  }

  getByIds(ids: number[]) {
    return store.getByIds(this.db, ids);
  }

  // Creation

  /** Whether `doer` may create repositories owned by `owner` (themself, or an organization). */
  async assertCanCreateIn(doer: UserRow, owner: UserRow): Promise<void> {
    if (doer.is_admin || doer.id === owner.id) return;
    if (owner.type === UserType.Organization) {
      if (await orgStore.isOwner(this.db, owner.id, doer.id)) return;
      const teams = await this.db
        .selectFrom('team')
        .innerJoin('team_user', 'team_user.team_id', 'team.id')
        .select('team.id')
        .where('team.org_id', '=', owner.id)
        .where('team_user.uid', '=', doer.id)
        .where('team.can_create_org_repo', '=', 1)
        .executeTakeFirst();
      if (teams) return;
    }
    throw forbidden(`you cannot create repositories for ${owner.name}`);
  }

  async create(doer: UserRow, owner: UserRow, input: CreateRepoInput): Promise<RepoRow> {
    checkRepoName(input.name);
    const branch = input.defaultBranch?.trim() || 'main';
    checkBranchName(branch);
    await this.assertCanCreateIn(doer, owner);
    let readme: string | undefined;
    if (input.autoInit) {
      readme = input.readme || 'Default';
      if (!READMES[readme]) {
        throw badRequest(
          `readme template does not exist, available templates: ${Object.keys(READMES).join(', ')}`,
        );
      }
    }
    const gitignores = (input.gitignores ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const g of gitignores)
      if (!GITIGNORES[g]) throw invalidField('gitignores', `gitignore template does not exist [name: ${g}]`);
    if (input.license && !LICENSES[input.license]) {
      throw invalidField('license', `license template does not exist [name: ${input.license}]`);
    }

    const now = nowUnix();
    let dir: string | undefined;
    try {
      const repo = await transaction(this.db, async (tx) => {
        if (await store.getByOwnerAndName(tx, owner.name, input.name)) {
          throw conflict('The repository with the same name already exists.');
        }
        // A former name of a renamed repository is free to take; it then leads here.
        await store.deleteRedirect(tx, owner.id, input.name);
        for (const h of this.hooks) await h.beforeCreate?.(tx, doer, owner);
        const id = await this.insertRow(tx, doer, owner, {
          owner_id: owner.id,
          name: input.name,
          lower_name: input.name.toLowerCase(),
          description: input.description ?? '',
          default_branch: branch,
          is_private: input.private ? 1 : 0,
          is_template: input.template ? 1 : 0,
          fork_id: null,
          created_unix: now,
          updated_unix: now,
        });
        for (const h of this.hooks) await h.onCreate?.(tx, id, input);
        dir = this.pathOf({ id });
        if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true });
        await initBare(dir, branch);
        if (input.autoInit) {
          const files: Record<string, string> = {
            'README.md': READMES[readme!]!({ name: input.name, description: input.description ?? '' }),
          };
          if (gitignores.length) files['.gitignore'] = gitignores.map((g) => GITIGNORES[g]).join('\n');
          if (input.license) files['LICENSE'] = LICENSES[input.license]!(owner.full_name || owner.name);
          await commitFiles(dir, branch, files, doer, 'Initial commit');
          const size = objectsSize(dir);
          await store.update(tx, id, { is_empty: 0, size });
          await recordUsage(tx, owner.id, sizeSubject(input.private ? 1 : 0), size);
          await recordBranches(tx, id, dir, doer.id);
        }
        return (await store.getById(tx, id))!;
      });
      await this.events.emit('repository.created', { repoId: repo.id, doerId: doer.id });
      return repo;
    } catch (err) {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      // Two creations of the same name at once: the unique index refuses the second.
      if (uniqueViolation(err)) throw conflict('The repository with the same name already exists.');
      throw err;
    }
  }

  /**
   * Creates a repository from a git directory prepared beforehand in `scratch` (a repository
   * generated from a template), or an empty one when there is none: the row, the hooks' rows,
   * `fill`'s rows (copies of labels, topics, ...), the branch records and the usage in one
   * transaction, the directory moved into place just before it commits. A crash leaves at most
   * a directory no row owns (removed by `anvil doctor`), never a row without its directory.
   */
  async createPrepared(
    doer: UserRow,
    owner: UserRow,
    input: { name: string; description: string; private: boolean; defaultBranch: string },
    scratch: string | undefined,
    fill: (tx: Tx, id: number) => Promise<void>,
  ): Promise<RepoRow> {
    let dir: string | undefined;
    try {
      const heads = scratch ? await listRefs(scratch, 'refs/heads/') : [];
      const size = scratch ? objectsSize(scratch) : 0;
      const commits = await commitsOf(
        scratch ?? '',
        heads.map((h) => h.oid),
      );
      const now = nowUnix();
      const repo = await transaction(this.db, async (tx) => {
        if (await store.getByOwnerAndName(tx, owner.name, input.name)) {
          throw conflict('The repository with the same name already exists.');
        }
        await store.deleteRedirect(tx, owner.id, input.name);
        for (const h of this.hooks) await h.beforeCreate?.(tx, doer, owner);
        const id = await this.insertRow(tx, doer, owner, {
          owner_id: owner.id,
          name: input.name,
          lower_name: input.name.toLowerCase(),
          description: input.description,
          default_branch: input.defaultBranch,
          is_private: input.private ? 1 : 0,
          is_empty: heads.length ? 0 : 1,
          fork_id: null,
          size,
          created_unix: now,
          updated_unix: now,
        });
        for (const h of this.hooks) await h.onCreate?.(tx, id, { name: input.name });
        await fill(tx, id);
        for (const h of heads) {
          await recordBranch(tx, id, h.name.slice(11), h.oid, doer.id, commits.get(h.oid));
        }
        await recordUsage(tx, owner.id, sizeSubject(input.private ? 1 : 0), size);
        dir = this.pathOf({ id });
        fs.rmSync(dir, { recursive: true, force: true });
        if (scratch) fs.renameSync(scratch, dir);
        else await initBare(dir, input.defaultBranch);
        return (await store.getById(tx, id))!;
      });
      await this.events.emit('repository.created', { repoId: repo.id, doerId: doer.id });
      return repo;
    } catch (err) {
      if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      if (uniqueViolation(err)) throw conflict('The repository with the same name already exists.');
      throw err;
    }
  }

  /**
   * Inserts a new repository's row for `owner`, made by `doer`, inside the transaction that creates
   * it: every creation path (create, createPrepared, forks) goes through here. In an organization,
   * a creator who is not an administrator of the new repository through the organization's teams
   * (a member of a team that may create repositories but holds none of them) becomes its
   * collaborator with admin access, so that they can read what they made (Forgejo's
   * CreateRepositoryByExample). Site administrators, owners and members of an admin team that
   * includes all repositories get nothing more.
   */
  async insertRow(tx: Tx, doer: UserRow, owner: UserRow, row: Insertable<RepositoryTable>): Promise<number> {
    const id = await store.insert(tx, row);
    if (owner.type === UserType.Organization && !doer.is_admin && doer.id !== owner.id) {
      const teams = await store.teamAccess(tx, owner.id, id, doer.id);
      const admin =
        teams.some((t) => t.authorize >= AccessMode.admin) || (await orgStore.isOwner(tx, owner.id, doer.id));
      if (!admin) await store.setCollaborator(tx, id, doer.id, AccessMode.admin);
    }
    return id;
  }

  // Editing

  async edit(repo: RepoRow, input: EditRepoInput): Promise<RepoRow> {
    if (input.name !== undefined) checkRepoName(input.name);
    if (input.defaultBranch !== undefined) checkBranchName(input.defaultBranch);
    if (input.defaultMergeStyle !== undefined && !DEFAULT_MERGE_STYLES.includes(input.defaultMergeStyle)) {
      throw invalidField('default_merge_style', `unknown merge style: ${input.defaultMergeStyle}`);
    }
    const dir = this.pathOf(repo);
    if (input.defaultBranch !== undefined && !repo.is_empty) {
      const refs = await listRefs(dir, `refs/heads/${input.defaultBranch}`);
      if (!refs.some((r) => r.name === `refs/heads/${input.defaultBranch}`)) {
        throw invalidField('default_branch', `branch does not exist [name: ${input.defaultBranch}]`);
      }
    }
    return transaction(this.db, async (tx) => {
      if (input.name !== undefined && input.name.toLowerCase() !== repo.lower_name) {
        const owner = (await userStore.getById(tx, repo.owner_id))!;
        if (await store.getByOwnerAndName(tx, owner.name, input.name)) {
          throw invalidField('name', 'The repository with the same name already exists.');
        }
        // The former name keeps leading here (until another repository takes it).
        await store.deleteRedirect(tx, repo.owner_id, input.name);
        await store.setRedirect(tx, repo.owner_id, repo.name, repo.id);
      }
      const isPrivate = b(input.private);
      if (isPrivate !== undefined && isPrivate !== repo.is_private && repo.size) {
        await recordUsage(tx, repo.owner_id, sizeSubject(repo.is_private), -repo.size);
        await recordUsage(tx, repo.owner_id, sizeSubject(isPrivate), repo.size);
      }
      const now = nowUnix();
      await store.update(tx, repo.id, {
        name: input.name,
        lower_name: input.name?.toLowerCase(),
        description: input.description,
        website: input.website,
        is_private: isPrivate,
        is_template: b(input.template),
        is_archived: b(input.archived),
        archived_unix: input.archived === undefined ? undefined : input.archived ? now : 0,
        default_branch: input.defaultBranch,
        has_issues: b(input.hasIssues),
        has_wiki: b(input.hasWiki),
        has_pull_requests: b(input.hasPullRequests),
        has_projects: b(input.hasProjects),
        has_releases: b(input.hasReleases),
        has_packages: b(input.hasPackages),
        has_actions: b(input.hasActions),
        allow_merge_commits: b(input.allowMergeCommits),
        allow_rebase: b(input.allowRebase),
        allow_rebase_explicit: b(input.allowRebaseExplicit),
        allow_squash_merge: b(input.allowSquashMerge),
        allow_fast_forward_only_merge: b(input.allowFastForwardOnlyMerge),
        allow_rebase_update: b(input.allowRebaseUpdate),
        default_delete_branch_after_merge: b(input.defaultDeleteBranchAfterMerge),
        default_allow_maintainer_edit: b(input.defaultAllowMaintainerEdit),
        default_merge_style: input.defaultMergeStyle,
        updated_unix: now,
      });
      if (input.defaultBranch !== undefined) {
        await git(['symbolic-ref', 'HEAD', `refs/heads/${input.defaultBranch}`], { gitDir: dir });
      }
      return (await store.getById(tx, repo.id))!;
    });
  }

  /** Deletes the repository row (and everything hanging off it) and then its directory. */
  async delete(repo: RepoRow, doerId: number): Promise<void> {
    const after = await transaction(this.db, (tx) => this.deleteInTx(tx, repo));
    await this.runAfterCommit(after);
    await this.events.emit('repository.deleted', {
      repoId: repo.id,
      ownerId: repo.owner_id,
      name: repo.name,
      doerId,
    });
  }

  /** Deletes the repository's rows; returns what to do once committed (its directory and files). */
  private async deleteInTx(tx: Tx, repo: RepoRow): Promise<AfterCommit[]> {
    const after: AfterCommit[] = [];
    for (const h of this.hooks) {
      const done = await h.beforeDelete?.(tx, repo);
      if (done) after.push(done);
    }
    await recordUsage(tx, repo.owner_id, sizeSubject(repo.is_private), -repo.size);
    await store.remove(tx, repo.id);
    after.push(async () => this.removeDir(repo));
    return after;
  }

  private async runAfterCommit(work: AfterCommit[]): Promise<void> {
    for (const w of work) {
      try {
        await w();
      } catch (err) {
        this.log.error({ err }, 'cleanup after repository deletion failed');
      }
    }
  }

  private removeDir(repo: { id: number }): void {
    try {
      fs.rmSync(this.pathOf(repo), { recursive: true, force: true });
    } catch (err) {
      this.log.error({ err, repoId: repo.id }, 'removing a repository directory failed');
    }
  }

  /**
   * The accounts `user` may create repositories for (assertCanCreateIn's rule): themself first, then
   * the organizations where a team of theirs owns it or may create repositories, by name.
   */
  async creatableOwners(user: UserRow): Promise<UserRow[]> {
    return [user, ...(await orgStore.orgsCreatableBy(this.db, user.id))];
  }

  /** The repository `repo` was forked from, with its owner, when `viewer` may read it. */
  async forkParent(
    repo: RepoRow,
    viewer: Viewer | null,
  ): Promise<{ repo: RepoRow; owner: UserRow } | undefined> {
    if (!repo.is_fork || repo.fork_id === null) return undefined;
    const parent = await store.getById(this.db, repo.fork_id);
    if (!parent || (await this.access(parent, viewer)).mode < AccessMode.read) return undefined;
    const owner = await userStore.getById(this.db, parent.owner_id);
    return owner ? { repo: parent, owner } : undefined;
  }

  /** Whether `doer` may create repositories owned by `owner` (assertCanCreateIn without throwing). */
  async canCreateIn(doer: UserRow, owner: UserRow): Promise<boolean> {
    try {
      await this.assertCanCreateIn(doer, owner);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Inside a transfer's transaction (transfers.ts): the repository, as it is now, moves to
   * `newOwnerId` with its usage; the hooks follow; the former owner and name keep leading here.
   */
  async moveOwner(tx: Tx, current: RepoRow, newOwnerId: number): Promise<void> {
    await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), -current.size);
    await recordUsage(tx, newOwnerId, sizeSubject(current.is_private), current.size);
    for (const h of this.hooks) await h.onTransfer?.(tx, current, newOwnerId);
    await store.update(tx, current.id, { owner_id: newOwnerId, updated_unix: nowUnix() });
    await store.deleteRedirect(tx, newOwnerId, current.name);
    await store.setRedirect(tx, current.owner_id, current.name, current.id);
  }

  // Lists

  list(filter: ListFilter, limit: number, offset: number) {
    return store.list(this.db, filter, limit, offset);
  }

  /** The team's repositories: all of its organization's when it includes all repositories. */
  listTeamRepos(team: TeamRow, limit: number, offset: number) {
    if (team.includes_all_repositories) return store.list(this.db, { ownerId: team.org_id }, limit, offset);
    return store.listTeamRepos(this.db, team.id, limit, offset);
  }

  // What other domains need from repositories

  /** Repositories as things an account owns: counted for deletion, purged with the account. */
  ownedResources(): OwnedResources {
    return {
      label: 'repositories',
      count: (tx, ownerId) => store.countOwned(tx, ownerId),
      purge: async (tx, ownerId) => {
        const after: AfterCommit[] = [];
        for (const id of await store.idsOwnedBy(tx, ownerId)) {
          after.push(...(await this.deleteInTx(tx, (await store.getById(tx, id))!)));
        }
        return () => this.runAfterCommit(after);
      },
    };
  }

  /**
   * Repository sizes for quota recalculation: each bare repository is measured on disk (as after
   * a push) and its size column corrected; one whose directory is missing is left alone.
   */
  usageSource(): UsageSource {
    return {
      subjects: ['size:repos:public', 'size:repos:private'],
      measure: (db, ownerId) =>
        measureRows({
          kind: 'repository',
          db,
          table: 'repository',
          page: (after, limit) => store.sizePage(db, after, limit, ownerId),
          measure: async (r) => {
            const dir = this.pathOf(r);
            return fs.existsSync(dir) ? objectsSize(dir) : undefined;
          },
          name: (r) => `${r.owner_name}/${r.name}`,
        }),
      totals: async (q, ownerId) => {
        const out: OwnerTotals = new Map();
        for (const r of await store.sizeTotals(q, ownerId)) {
          const t = out.get(r.owner_id) ?? {};
          t[sizeSubject(r.is_private)] = Number(r.total);
          out.set(r.owner_id, t);
        }
        return out;
      },
    };
  }
}

/** Writes `files` as one commit on `branch` of a bare repository, without a work tree. */
export async function commitFiles(
  dir: string,
  branch: string,
  files: Record<string, string>,
  author: { name: string; full_name: string; email: string },
  message: string,
): Promise<string> {
  const entries: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const oid = (await git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: content })).stdout
      .toString()
      .trim();
    entries.push(`100644 blob ${oid}\t${name}`);
  }
  const tree = (await git(['mktree'], { gitDir: dir, input: entries.join('\n') + '\n' })).stdout
    .toString()
    .trim();
  const who = {
    GIT_AUTHOR_NAME: author.full_name || author.name,
    GIT_AUTHOR_EMAIL: author.email || `${author.name}@${os.hostname()}`,
    GIT_COMMITTER_NAME: author.full_name || author.name,
    GIT_COMMITTER_EMAIL: author.email || `${author.name}@${os.hostname()}`,
  };
  const commit = (await git(['commit-tree', tree, '-m', message], { gitDir: dir, env: who })).stdout
    .toString()
    .trim();
  await git(['update-ref', `refs/heads/${branch}`, commit], { gitDir: dir });
  return commit;
}
