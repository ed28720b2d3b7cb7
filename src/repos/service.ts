// Repositories: creation (with an initial commit when asked), access rules, editing, transfer,
// deletion, collaborators, and what happens after a push.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { MovedError, badRequest, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import * as userStore from '../users/store.js';
import * as orgStore from '../orgs/store.js';
import { AccessMode } from '../orgs/store.js';
import { UserType, Visibility } from '../users/tables.js';
import type { Viewer } from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import type { AfterCommit, OwnedResources } from '../users/owned.js';
import { measureRows, recordUsage, type UsageSource, type OwnerTotals } from '../quota/usage.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { REPO_UNITS } from '../orgs/service.js';
import { faultPoint } from '../faults.js';
import {
  git,
  initBare,
  listRefs,
  logCommits,
  objectsSize,
  ZERO_OID,
  getCommit,
  type CommitInfo,
} from '../git/git.js';
import * as store from './store.js';
import * as transferStore from './transfer-store.js';
import * as socialStore from '../social/store.js';
import type { RepoRow } from './tables.js';
import { GITIGNORES, LICENSES, READMES } from './templates.js';
import type { TeamRow } from '../orgs/tables.js';
import type { RepoTransferRow } from './tables.js';

export interface RepoAccess {
  /** Highest access mode over all units: 0 none, 1 read, 2 write, 3 admin, 4 owner. */
  mode: number;
  units: Map<string, number>;
}

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
}

const REPO_NAME = /^[\w.-]+$/;
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_SUFFIXES = ['.git', '.wiki', '.rss', '.atom'];

/** Throws a 422 naming the field when `name` cannot be a repository name. */
export function checkRepoName(name: string, field = 'name'): void {
  if (!name) throw invalidField(field, 'Required');
  if (name.length > 100) throw invalidField(field, 'must be at most 100 characters');
  const lower = name.toLowerCase();
  if (RESERVED_REPO_NAMES.has(lower) || RESERVED_REPO_SUFFIXES.some((s) => lower.endsWith(s))) {
    throw invalidField(field, `repository name is reserved [name: ${name}]`);
  }
  if (!REPO_NAME.test(name)) {
    throw invalidField(
      field,
      `repository name is invalid [name: ${name}]: use letters, digits, '-', '_' and '.'`,
    );
  }
}

/** A branch name git accepts (checked again by git itself). */
export function checkBranchName(name: string, field = 'default_branch'): void {
  if (
    !name ||
    name.length > 255 ||
    // eslint-disable-next-line no-control-regex -- control characters are exactly what git refuses
    /[\s~^:?*[\\\x00-\x1f\x7f]/.test(name) ||
    name.startsWith('-') ||
    name.startsWith('/') ||
    name.endsWith('/') ||
    name.endsWith('.') ||
    name.endsWith('.lock') ||
    name.includes('..') ||
    name.includes('//') ||
    name.includes('@{')
  ) {
    throw invalidField(field, `invalid branch name [name: ${name}]`);
  }
}

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
const sizeSubject = (isPrivate: number): 'size:repos:private' | 'size:repos:public' =>
  isPrivate ? 'size:repos:private' : 'size:repos:public';

export class RepoService {
  private readonly hooks: RepoHooks[] = [];

  constructor(
    private readonly db: Db,
    private readonly root: string,
    private readonly events: EventBus,
    private readonly log: Logger,
  ) {}

  /** This process in ref intents ([cluster] NODE_NAME; see recovery.ts). */
  node = '';

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
        const id = await store.insert(tx, {
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
          await this.recordBranches(tx, id, dir, doer.id);
        }
        return (await store.getById(tx, id))!;
      });
      await this.events.emit('repository.created', { repoId: repo.id, doerId: doer.id });
      return repo;
    } catch (err) {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      // Two creations of the same name at once: the unique index refuses the second.
      if (isUniqueViolation(err)) throw conflict('The repository with the same name already exists.');
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
        const id = await store.insert(tx, {
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
          await this.recordBranch(tx, id, h.name.slice(11), h.oid, doer.id, commits.get(h.oid));
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
      if (isUniqueViolation(err)) throw conflict('The repository with the same name already exists.');
      throw err;
    }
  }

  // Editing

  async edit(repo: RepoRow, input: EditRepoInput): Promise<RepoRow> {
    if (input.name !== undefined) checkRepoName(input.name);
    if (input.defaultBranch !== undefined) checkBranchName(input.defaultBranch);
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
   * Forgejo's StartRepositoryTransfer: moves the repository at once when the doer is a site
   * administrator, the new owner themself, or may create repositories in the new owner (an
   * organization); otherwise records a pending transfer the recipient accepts or rejects (the
   * recipient gets read access meanwhile, and is notified). `pending` tells which happened.
   */
  async startTransfer(
    repo: RepoRow,
    doer: UserRow,
    newOwner: UserRow,
    teamIds: number[] = [],
  ): Promise<{ repo: RepoRow; pending: boolean }> {
    await this.checkTransfer(repo, newOwner, teamIds);
    if (await transferStore.getPending(this.db, repo.id)) {
      throw conflict('repository is already being transferred');
    }
    if (doer.is_admin || doer.id === newOwner.id) {
      return { repo: await this.transferNow(repo, newOwner, teamIds), pending: false };
    }
    if (await socialStore.isBlocked(this.db, newOwner.id, doer.id)) {
      throw forbidden('the new owner has blocked you');
    }
    if (newOwner.type === UserType.Organization && (await this.canCreateIn(doer, newOwner))) {
      return { repo: await this.transferNow(repo, newOwner, teamIds), pending: false };
    }
    if (newOwner.type !== UserType.Individual && newOwner.type !== UserType.Organization) {
      throw forbidden(`${newOwner.name} cannot own repositories`);
    }
    const needsRead =
      newOwner.type === UserType.Individual &&
      (await this.access(repo, { id: newOwner.id, isAdmin: newOwner.is_admin === 1 })).mode < AccessMode.read;
    const now = nowUnix();
    try {
      await transaction(this.db, async (tx) => {
        if (await transferStore.getPending(tx, repo.id)) {
          throw conflict('repository is already being transferred');
        }
        if (await store.getByOwnerAndName(tx, newOwner.name, repo.name)) {
          throw invalidField('new_owner', 'The repository with the same name already exists.');
        }
        // The recipient must be able to see what they are asked to accept.
        if (needsRead) await store.setCollaborator(tx, repo.id, newOwner.id, AccessMode.read);
        await transferStore.insert(tx, {
          doer_id: doer.id,
          recipient_id: newOwner.id,
          repo_id: repo.id,
          team_ids: JSON.stringify([...new Set(teamIds)]),
          created_unix: now,
          updated_unix: now,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('repository is already being transferred');
      throw err;
    }
    await this.events.emit('repository.transfer_pending', {
      repoId: repo.id,
      doerId: doer.id,
      recipientId: newOwner.id,
    });
    return { repo: (await store.getById(this.db, repo.id))!, pending: true };
  }

  /** The repository's pending transfer; 404 when there is none. */
  async requirePendingTransfer(repo: RepoRow): Promise<RepoTransferRow> {
    const t = await transferStore.getPending(this.db, repo.id);
    if (!t) throw notFound('no pending repository transfer');
    return t;
  }

  /** The pending transfers of `repoIds`, by repository id. */
  pendingTransfers(repoIds: number[]) {
    return transferStore.pendingOf(this.db, repoIds);
  }

  /**
   * Forgejo's CanUserAcceptOrRejectTransfer: the recipient themself, or for an organization
   * whoever may create repositories in it.
   */
  private async assertCanAnswer(t: RepoTransferRow, user: UserRow): Promise<UserRow> {
    const recipient = await userStore.getById(this.db, t.recipient_id);
    const allowed =
      recipient !== undefined &&
      (recipient.type === UserType.Organization
        ? await this.canCreateIn(user, recipient)
        : recipient.id === user.id);
    if (!allowed) throw forbidden('you cannot accept or reject this repository transfer');
    return recipient;
  }

  /** The recipient accepts the pending transfer: the repository moves (as asked by its doer). */
  async acceptTransfer(repo: RepoRow, user: UserRow): Promise<RepoRow> {
    const t = await this.requirePendingTransfer(repo);
    const recipient = await this.assertCanAnswer(t, user);
    const teamIds = transferStore.teamIdsOf(t).filter(Boolean);
    // Teams deleted since the transfer was asked are left out.
    const teams = [];
    for (const id of teamIds) if (await orgStore.getTeam(this.db, id)) teams.push(id);
    return this.transferNow(repo, recipient, teams, t.id);
  }

  /** The recipient rejects the pending transfer: it is forgotten, the repository stays. */
  async rejectTransfer(repo: RepoRow, user: UserRow): Promise<RepoRow> {
    const t = await this.requirePendingTransfer(repo);
    await this.assertCanAnswer(t, user);
    if (!(await transferStore.remove(this.db, repo.id))) throw notFound('no pending repository transfer');
    return (await store.getById(this.db, repo.id))!;
  }

  /** The checks every transfer passes first: the teams (as Forgejo, before anything), the owner. */
  private async checkTransfer(repo: RepoRow, newOwner: UserRow, teamIds: number[]): Promise<void> {
    // The teams first, as Forgejo: only organizations have teams, and only their own.
    if (teamIds.length && newOwner.type !== UserType.Organization) {
      throw invalidField('team_ids', 'teams can only be added to organization-owned repositories');
    }
    for (const teamId of new Set(teamIds)) {
      const team = await orgStore.getTeam(this.db, teamId);
      if (!team) throw invalidField('team_ids', `team does not exist [id: ${teamId}]`);
      if (team.org_id !== newOwner.id) throw forbidden(`team ${teamId} does not belong to ${newOwner.name}`);
    }
    if (newOwner.id === repo.owner_id)
      throw invalidField('new_owner', 'the repository already belongs to this owner');
  }

  /**
   * Moves a repository to another owner; its usage moves with it. `pendingId`: the pending
   * transfer being accepted, which must still be there (and goes in the same transaction).
   */
  private async transferNow(
    repo: RepoRow,
    newOwner: UserRow,
    teamIds: number[],
    pendingId?: number,
  ): Promise<RepoRow> {
    return transaction(this.db, async (tx) => {
      if (pendingId !== undefined) {
        const t = await transferStore.getPending(tx, repo.id);
        if (!t || t.id !== pendingId) throw notFound('no pending repository transfer');
      }
      if (await store.getByOwnerAndName(tx, newOwner.name, repo.name)) {
        throw invalidField('new_owner', 'The repository with the same name already exists.');
      }
      await transferStore.remove(tx, repo.id);
      // The row as it is now: a push may have changed the size since the request began.
      const current = (await store.getById(tx, repo.id))!;
      if (current.owner_id === newOwner.id)
        throw invalidField('new_owner', 'the repository already belongs to this owner');
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), -current.size);
      await recordUsage(tx, newOwner.id, sizeSubject(current.is_private), current.size);
      for (const h of this.hooks) await h.onTransfer?.(tx, current, newOwner.id);
      await store.update(tx, repo.id, { owner_id: newOwner.id, updated_unix: nowUnix() });
      // The former owner and name keep leading here.
      await store.deleteRedirect(tx, newOwner.id, current.name);
      await store.setRedirect(tx, current.owner_id, current.name, repo.id);
      // The new owner needs no collaboration on its own repository.
      await tx
        .deleteFrom('collaboration')
        .where('repo_id', '=', repo.id)
        .where('user_id', '=', newOwner.id)
        .execute();
      await tx.deleteFrom('team_repo').where('repo_id', '=', repo.id).execute();
      for (const teamId of new Set(teamIds)) await store.addTeamRepo(tx, newOwner.id, teamId, repo.id);
      return (await store.getById(tx, repo.id))!;
    });
  }

  // Lists

  list(filter: store.ListFilter, limit: number, offset: number) {
    return store.list(this.db, filter, limit, offset);
  }

  // Collaborators

  listCollaborators(repo: RepoRow, limit: number, offset: number) {
    return store.listCollaborators(this.db, repo.id, limit, offset);
  }

  async setCollaborator(
    repo: RepoRow,
    user: UserRow,
    permission: 'read' | 'write' | 'admin' = 'write',
  ): Promise<void> {
    if (user.type !== UserType.Individual) throw invalid('only individual users can be collaborators');
    if (user.id === repo.owner_id)
      throw invalid('the owner cannot be a collaborator of their own repository');
    await store.setCollaborator(this.db, repo.id, user.id, AccessMode[permission]);
  }

  /** Removes a collaboration; removing someone who is not a collaborator is a no-op, as in Forgejo. */
  async removeCollaborator(repo: RepoRow, user: UserRow): Promise<void> {
    await store.removeCollaborator(this.db, repo.id, user.id);
  }

  isCollaborator(repo: RepoRow, user: UserRow) {
    return store.collaboratorMode(this.db, repo.id, user.id).then((m) => m > 0);
  }

  // Teams

  addTeamRepo(team: TeamRow, repo: RepoRow) {
    if (repo.owner_id !== team.org_id)
      throw invalid("the repository does not belong to the team's organization");
    return store.addTeamRepo(this.db, team.org_id, team.id, repo.id);
  }

  removeTeamRepo(team: TeamRow, repo: RepoRow) {
    return store.removeTeamRepo(this.db, team.id, repo.id);
  }

  /**
   * Gives a team access to its organization's repository or takes it away (Forgejo's AddTeam and
   * DeleteTeam of a repository): 422 when the team already has it, or has not; a team that
   * includes all repositories keeps every one of them.
   */
  async changeTeamAccess(team: TeamRow, repo: RepoRow, add: boolean): Promise<void> {
    const has = await this.teamHasRepo(team, repo);
    if (add) {
      if (has) throw invalid(`team '${team.name}' is already added to repo`);
      await this.addTeamRepo(team, repo);
      return;
    }
    if (!has) throw invalid(`team '${team.name}' was not added to repo`);
    if (team.includes_all_repositories) {
      throw invalid(`team '${team.name}' includes all repositories of the organization`);
    }
    await this.removeTeamRepo(team, repo);
  }

  /** The team's repositories: all of its organization's when it includes all repositories. */
  listTeamRepos(team: TeamRow, limit: number, offset: number) {
    if (team.includes_all_repositories) return store.list(this.db, { ownerId: team.org_id }, limit, offset);
    return store.listTeamRepos(this.db, team.id, limit, offset);
  }

  async teamHasRepo(team: TeamRow, repo: RepoRow): Promise<boolean> {
    if (repo.owner_id !== team.org_id) return false;
    if (team.includes_all_repositories) return true;
    return store.teamHasRepo(this.db, team.id, repo.id);
  }

  // After a push

  /**
   * Writes down a ref change before it is made. Every path that moves refs (a push, a merge, a
   * branch or tag made through the API, a mirror sync) does this first, and removes the intent
   * once the database and the listeners know what happened (`afterPush`), so a crash at any
   * point is completed at the next start (src/repos/recovery.ts). Returns the intent's id.
   */
  async beginIntent(
    repoId: number,
    doerId: number,
    updates: RefUpdate[],
    kind = 'push',
    data: Record<string, unknown> = {},
  ): Promise<number> {
    return store.insertIntent(this.db, {
      repo_id: repoId,
      kind,
      doer_id: doerId,
      updates: JSON.stringify(updates),
      data: JSON.stringify(data),
      created_unix: nowUnix(),
      node: this.node,
    });
  }

  /** Marks an intent recorded inside the transaction that recorded its change. */
  markIntentRecorded(tx: Tx, id: number): Promise<void> {
    return store.markIntentRecorded(tx, id);
  }

  /** Forgets an intent whose change was not made (or is complete). */
  async dropIntent(id: number): Promise<void> {
    await store.deleteIntent(this.db, id);
  }

  /**
   * Moves refs with `move` (true when it moved them) under an intent, then records and announces
   * the change; false when `move` changed nothing.
   */
  async changeRefs(
    repoId: number,
    doerId: number,
    updates: RefUpdate[],
    move: () => Promise<boolean>,
  ): Promise<boolean> {
    const intent = await this.beginIntent(repoId, doerId, updates);
    let moved = false;
    try {
      moved = await move();
    } finally {
      if (!moved) await this.dropIntent(intent);
    }
    if (moved) await this.afterPush(repoId, doerId, updates, intent);
    return moved;
  }

  /**
   * Brings the database up to date with what a push did: branch records, the first branch
   * becoming the default on a first push, the repository's size (and its quota usage); then
   * announces the push and removes its intent. `updates` come from the pre-receive hook; each is
   * checked against the refs as they are now, so an update git refused is not recorded.
   */
  async afterPush(repoId: number, pusherId: number, updates: RefUpdate[], intent?: number): Promise<void> {
    const applied = await this.recordPush(repoId, pusherId, updates, intent);
    faultPoint('push:recorded');
    if (applied.length) await this.announcePush(repoId, pusherId, applied);
    if (intent !== undefined) await this.dropIntent(intent);
  }

  /**
   * The database part of `afterPush` (branches, default branch, size and usage); returns the
   * updates that took effect, for `announcePush`, and marks the intent (if any) recorded in the
   * same transaction. Smart HTTP records a push before answering git and announces it
   * afterwards, so slow listeners never hold up the pushing client.
   */
  async recordPush(
    repoId: number,
    pusherId: number,
    updates: RefUpdate[],
    intent?: number,
  ): Promise<RefUpdate[]> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return [];
    const dir = this.pathOf(repo);
    const refs = new Map((await listRefs(dir)).map((r) => [r.name, r.oid]));
    const applied = updates.filter((u) =>
      u.newOid === ZERO_OID ? !refs.has(u.ref) : refs.get(u.ref) === u.newOid,
    );
    if (applied.length === 0) {
      if (intent !== undefined) await store.markIntentRecorded(this.db, intent);
      return [];
    }
    const branches = [...refs.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice(11));
    const defaultBranch = await this.settleDefaultBranch(dir, repo.default_branch, branches, applied);
    const size = objectsSize(dir);
    // One git process for the commits of all pushed branches, before the transaction starts.
    const pushedHeads = applied.filter((u) => u.ref.startsWith('refs/heads/') && u.newOid !== ZERO_OID);
    const commits = await commitsOf(
      dir,
      pushedHeads.map((u) => u.newOid),
    );
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      for (const u of applied) {
        if (!u.ref.startsWith('refs/heads/')) continue;
        const name = u.ref.slice(11);
        if (u.newOid === ZERO_OID) await store.deleteBranch(tx, repoId, name);
        else await this.recordBranch(tx, repoId, name, u.newOid, pusherId, commits.get(u.newOid));
      }
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, {
        size,
        is_empty: branches.length ? 0 : 1,
        default_branch: defaultBranch,
        updated_unix: nowUnix(),
      });
      if (intent !== undefined) await store.markIntentRecorded(tx, intent);
    });
    return applied;
  }

  /**
   * The default branch after refs changed: kept while it exists; otherwise the branch a push
   * just made, else `main`, else the first by name (and HEAD is pointed at it).
   */
  private async settleDefaultBranch(
    dir: string,
    current: string,
    branches: string[],
    applied: RefUpdate[],
  ): Promise<string> {
    if (!branches.length || branches.includes(current)) return current;
    const pushed = applied.find((u) => u.ref.startsWith('refs/heads/') && u.newOid !== ZERO_OID);
    const chosen = pushed
      ? pushed.ref.slice(11)
      : branches.includes('main')
        ? 'main'
        : [...branches].sort()[0]!;
    await git(['symbolic-ref', 'HEAD', `refs/heads/${chosen}`], { gitDir: dir });
    return chosen;
  }

  /**
   * Brings a repository's rows in line with its refs on disk: branch rows (added, moved or
   * removed), the default branch, `is_empty` and the size with its quota usage. Returns what it
   * corrected (empty when everything agreed). Used by start-up recovery and `anvil doctor`.
   */
  async reconcile(repoId: number, fix = true): Promise<string[]> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return [];
    const dir = this.pathOf(repo);
    if (!fs.existsSync(dir)) return [`repository directory is missing: ${dir}`];
    const heads = new Map(
      (await listRefs(dir, 'refs/heads/')).map((r) => [r.name.slice(11), r.oid] as const),
    );
    const rows = new Map((await store.allBranches(this.db, repoId)).map((b) => [b.name, b]));
    const found: string[] = [];
    const stale = [...heads].filter(([name, oid]) => rows.get(name)?.commit_id !== oid);
    const gone = [...rows.keys()].filter((name) => !heads.has(name));
    for (const [name] of stale)
      found.push(rows.has(name) ? `branch ${name} moved` : `branch ${name} unrecorded`);
    for (const name of gone) found.push(`branch ${name} no longer exists`);
    const branches = [...heads.keys()];
    const defaultBranch = fix
      ? await this.settleDefaultBranch(dir, repo.default_branch, branches, [])
      : repo.default_branch;
    if (defaultBranch !== repo.default_branch || (branches.length && !heads.has(repo.default_branch)))
      found.push(`default branch ${repo.default_branch} is not a branch`);
    const isEmpty = branches.length ? 0 : 1;
    if (isEmpty !== repo.is_empty) found.push(`is_empty was ${repo.is_empty}`);
    const size = objectsSize(dir);
    if (size !== repo.size) found.push(`size was ${repo.size}, is ${size}`);
    if (!found.length || !fix) return found;
    const commits = await commitsOf(
      dir,
      stale.map(([, oid]) => oid),
    );
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      for (const [name, oid] of stale)
        await this.recordBranch(
          tx,
          repoId,
          name,
          oid,
          rows.get(name)?.pusher_id ?? current.owner_id,
          commits.get(oid),
        );
      for (const name of gone) await store.deleteBranch(tx, repoId, name);
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, { size, is_empty: isEmpty, default_branch: defaultBranch });
    });
    return found;
  }

  /** Tells the listeners of the `push` event what a push changed. */
  announcePush(repoId: number, pusherId: number, updates: RefUpdate[]): Promise<void> {
    return this.events.emit('push', { repoId, pusherId, updates });
  }

  private async recordBranch(
    tx: Tx,
    repoId: number,
    name: string,
    oid: string,
    pusherId: number,
    c: CommitInfo | undefined,
  ) {
    await store.upsertBranch(tx, {
      repo_id: repoId,
      name,
      commit_id: oid,
      commit_message: c?.message.split('\n')[0] ?? '',
      commit_time: c?.committerTime ?? 0,
      pusher_id: pusherId,
      updated_unix: nowUnix(),
    });
  }

  private async recordBranches(tx: Tx, repoId: number, dir: string, pusherId: number) {
    const heads = await listRefs(dir, 'refs/heads/');
    const commits = await commitsOf(
      dir,
      heads.map((r) => r.oid),
    );
    for (const r of heads) {
      await this.recordBranch(tx, repoId, r.name.slice(11), r.oid, pusherId, commits.get(r.oid));
    }
  }

  /** Recomputes the stored size of a repository from disk (for example after LFS or a mirror sync). */
  async refreshSize(repoId: number): Promise<void> {
    const repo = await store.getById(this.db, repoId);
    if (!repo) return;
    const size = objectsSize(this.pathOf(repo));
    await transaction(this.db, async (tx) => {
      const current = (await store.getById(tx, repoId))!;
      await recordUsage(tx, current.owner_id, sizeSubject(current.is_private), size - current.size);
      await store.update(tx, repoId, { size });
    });
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

/**
 * Forgejo's permission rules for one repository: public repositories of visible owners are
 * readable by all but restricted users; owners and site administrators have everything; organization owners too;
 * teams give their units (admin teams all units) on their repositories; members of an
 * organization read its public repositories; collaborators get their mode on every unit.
 */
function accessOf(
  repo: RepoRow,
  owner: UserRow,
  viewer: Viewer | null,
  grants: store.Grants | undefined,
  restricted = false,
): RepoAccess {
  const all = (mode: number): RepoAccess => ({ mode, units: new Map(REPO_UNITS.map((u) => [u, mode])) });
  const signed = viewer !== null && !viewer.publicOnly;
  const ownerVisible =
    owner.visibility === Visibility.public || (owner.visibility === Visibility.limited && signed);
  // Restricted users read only what they were given, not every public repository.
  const publicRead = !repo.is_private && ownerVisible && !restricted ? AccessMode.read : AccessMode.none;
  if (!viewer || !signed) return all(publicRead);
  // An actions job token: write to its own repository, only what anyone may read elsewhere.
  if (viewer.repoId !== undefined) return all(viewer.repoId === repo.id ? AccessMode.write : publicRead);
  if (viewer.isAdmin || viewer.id === repo.owner_id) return all(AccessMode.owner);
  const units = new Map<string, number>(REPO_UNITS.map((u) => [u, publicRead]));
  const raise = (unit: string, mode: number) => {
    if ((units.get(unit) ?? 0) < mode) units.set(unit, mode);
  };
  if (grants && owner.type === UserType.Organization) {
    const orgTeams = grants.teams.filter((t) => t.org_id === owner.id);
    if (orgTeams.some((t) => t.authorize >= AccessMode.owner)) return all(AccessMode.owner);
    for (const t of orgTeams) {
      const holds =
        t.includes_all_repositories === 1 ||
        grants.teamRepos.some((tr) => tr.team_id === t.id && tr.repo_id === repo.id);
      if (!holds) continue;
      if (t.authorize >= AccessMode.admin) {
        for (const u of REPO_UNITS) raise(u, t.authorize);
      } else if (t.unit && t.mode !== null) {
        raise(t.unit, t.mode);
      }
    }
    // A private organization's members see its public repositories.
    if (!repo.is_private && !restricted && grants.memberOf.includes(owner.id)) {
      for (const u of REPO_UNITS) raise(u, AccessMode.read);
    }
  }
  const collab = grants?.collaborations.find((c) => c.repo_id === repo.id);
  if (collab) for (const u of REPO_UNITS) raise(u, collab.mode);
  return { mode: Math.max(AccessMode.none, ...units.values()), units };
}

/** The commits `oids` (branch tips) by id, read by one git process. */
async function commitsOf(dir: string, oids: string[]): Promise<Map<string, CommitInfo>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return new Map();
  try {
    const list = await logCommits(dir, ['--no-walk=unsorted', ...unique]);
    return new Map(list.map((c) => [c.oid, c]));
  } catch {
    // Something that is not a commit among them: one by one, skipping what git cannot read.
    const out = new Map<string, CommitInfo>();
    for (const oid of unique) {
      const c = await getCommit(dir, oid);
      if (c) out.set(oid, c);
    }
    return out;
  }
}

/** A unique index refused a row (on any database). */
const isUniqueViolation = uniqueViolation;

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
