// The rules of the git data API for writing refs: branches (created, deleted, renamed), tags and
// notes. Every ref move is asked of branch protection first and made like a push (RefChanges:
// an intent, the atomic update from the old value, the records and the `push` event); quota is
// checked before anything grows.
import os from 'node:os';
import { AppError, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import type { RefUpdate } from '../events/bus.js';
import { checkBranchName } from '../repos/names.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import * as data from './data.js';
import * as notes from './notes.js';
import * as refLists from './ref-lists.js';
import * as write from './write.js';
import type { Ident } from './write.js';
import type { ResolvedRef } from './data.js';
import type { GitDataService, Target } from './data-service.js';

const EMPTY = 'Git Repository is empty.';

/** Branch protection and the other push rules, asked about ref updates (the protection domain). */
export interface RefUpdateRules {
  refusalFor(repo: RepoRow, doer: UserRow, updates: RefUpdate[]): Promise<string | null>;
  /** A protection rule named after branch `from` follows its rename; whether one did. */
  followRename(repo: RepoRow, from: string, to: string): Promise<boolean>;
}

/** Whether an owner's quota allows more of `subject` (the quota domain). */
export interface QuotaCheck {
  check(ownerId: number, subject: string): Promise<boolean>;
}

/** Open pull requests follow a renamed branch (the pulls domain). */
export interface BranchRenameFollowers {
  followBranchRename(repoId: number, from: string, to: string): Promise<void>;
}

export interface GitRefServiceDeps {
  reader: Pick<GitDataService, 'isEmpty' | 'resolve' | 'resolveBranch' | 'getBranch' | 'getTag'>;
  repos: Pick<RefChanges, 'changeRefs' | 'refreshSize'>;
  protection: RefUpdateRules;
  quota: QuotaCheck;
  pulls: BranchRenameFollowers;
  rootUrl: string;
}

export class GitRefService {
  private readonly reader: GitRefServiceDeps['reader'];

  constructor(private readonly deps: GitRefServiceDeps) {
    this.reader = deps.reader;
  }

  /** 413 when the owner's quota has no room for more git data. */
  async assertQuota(t: Target): Promise<void> {
    if (!(await this.deps.quota.check(t.repo.owner_id, 'size:git:all'))) {
      throw new AppError('payload_too_large', 'quota exceeded');
    }
  }

  /** Asks branch protection (and any other push rule) about `updates`; a refusal is `refuse(message)`. */
  private async allow(
    t: Target,
    doer: UserRow,
    updates: RefUpdate[],
    refuse: (message: string) => AppError = forbidden,
  ): Promise<void> {
    const refusal = await this.deps.protection.refusalFor(t.repo, doer, updates);
    if (refusal) throw refuse(refusal);
  }

  /**
   * One ref update asked of the rules (a refusal is `refuse(message)`), then made like a push;
   * `lost` is the 409's message when the ref moved meanwhile.
   */
  async move(
    t: Target,
    doer: UserRow,
    u: RefUpdate,
    lost: string,
    refuse: (message: string) => AppError = forbidden,
  ): Promise<void> {
    await this.allow(t, doer, [u], refuse);
    await this.apply(t, doer, u, lost);
  }

  /** Applies one ref update like a push: atomically from its old value, then recorded. */
  private async apply(t: Target, doer: UserRow, u: RefUpdate, lost: string): Promise<void> {
    const moved = await this.deps.repos.changeRefs(t.repo.id, doer.id, [u], () =>
      data.updateRef(t.dir, u.ref, u.oldOid, u.newOid),
    );
    if (!moved) throw conflict(lost);
  }

  // Branches

  async createBranch(
    t: Target,
    doer: UserRow,
    input: { name: string; oldBranch?: string | undefined; oldRef?: string | undefined },
  ): Promise<refLists.RefCommit> {
    if (await this.reader.isEmpty(t)) throw notFound(EMPTY);
    checkBranchName(input.name, 'new_branch_name');
    let from: ResolvedRef;
    if (input.oldRef) {
      data.checkRefName(input.oldRef, 'old_ref_name');
      const r = await data.resolveRef(t.dir, input.oldRef);
      if (!r) throw notFound(`The old ref does not exist [ref: ${input.oldRef}]`);
      from = r;
    } else {
      from = await this.reader.resolveBranch(
        t,
        input.oldBranch || t.repo.default_branch,
        'The old branch does not exist',
      );
    }
    const ref = `refs/heads/${input.name}`;
    const names = await refLists.branchAndTagNames(t.dir);
    if (names.has(ref)) throw conflict('The branch already exists.');
    if (names.has(`refs/tags/${input.name}`)) throw conflict('The branch with the same tag already exists.');
    const parts = input.name.split('/');
    const clash =
      parts.slice(0, -1).some((_, i) => names.has(`refs/heads/${parts.slice(0, i + 1).join('/')}`)) ||
      [...names].some((n) => n.startsWith(`${ref}/`));
    if (clash) throw conflict('The branch with the same name already exists.');
    await this.assertQuota(t);
    const update = { ref, oldOid: data.ZERO_OID, newOid: from.oid };
    await this.allow(t, doer, [update]);
    await this.apply(t, doer, update, 'The branch already exists.');
    return this.reader.getBranch(t, input.name);
  }

  async deleteBranch(t: Target, doer: UserRow, name: string): Promise<void> {
    if (await this.reader.isEmpty(t)) throw notFound(EMPTY);
    const b = await this.reader.getBranch(t, name);
    if (name === t.repo.default_branch) throw forbidden('can not delete default branch');
    const update = { ref: b.ref, oldOid: b.commit.oid, newOid: data.ZERO_OID };
    await this.allow(t, doer, [update]);
    await this.apply(t, doer, update, 'the branch was changed meanwhile; try again');
  }

  /**
   * Renames branch `from` to `name` as Forgejo does: recorded like a push deleting one and creating
   * the other; the default branch, a protection rule named after it and open pull requests follow.
   * 404 when it does not exist (or the repository is empty), 422 when `name` is taken or the same,
   * 403 when a glob protection rule covers it, 409 when it moved meanwhile.
   */
  async renameBranch(t: Target, doer: UserRow, from: string, name: string): Promise<void> {
    if (await this.reader.isEmpty(t)) throw notFound(EMPTY);
    checkBranchName(name, 'name');
    const names = await refLists.branchAndTagNames(t.dir);
    const taken = 'Cannot rename a branch using the same name or rename to a branch that already exists.';
    if (from === name || names.has(`refs/heads/${name}`)) throw invalidField('name', taken);
    const b = await this.reader.getBranch(t, from);
    const to = `refs/heads/${name}`;
    if (names.has(`refs/tags/${name}`)) throw conflict('The branch with the same tag already exists.');
    const others = new Set([...names].filter((n) => n !== b.ref));
    const parts = name.split('/');
    const clash =
      parts.slice(0, -1).some((_, i) => others.has(`refs/heads/${parts.slice(0, i + 1).join('/')}`)) ||
      [...others].some((n) => n.startsWith(`${to}/`));
    if (clash) throw conflict('The branch with the same name already exists.');
    await this.assertQuota(t);
    const updates = [
      { ref: b.ref, oldOid: b.commit.oid, newOid: data.ZERO_OID },
      { ref: to, oldOid: data.ZERO_OID, newOid: b.commit.oid },
    ];
    const moved = await this.deps.repos.changeRefs(t.repo.id, doer.id, updates, async () => {
      const ruleRenamed = await this.deps.protection.followRename(t.repo, from, name);
      const ok = await data.renameBranchRef(t.dir, from, name, b.commit.oid);
      if (!ok) {
        if (ruleRenamed) await this.deps.protection.followRename(t.repo, name, from);
        return false;
      }
      await this.deps.pulls.followBranchRename(t.repo.id, from, name);
      return true;
    });
    if (!moved) throw conflict('the branch was changed meanwhile; try again');
  }

  // Tags

  async createTag(
    t: Target,
    doer: UserRow,
    input: { name: string; target?: string | undefined; message?: string | undefined },
  ): Promise<refLists.TagData> {
    if (!data.isValidRefName(input.name))
      throw invalidField('tag_name', `invalid tag name [name: ${input.name}]`);
    const target = input.target || t.repo.default_branch;
    data.checkRefName(target, 'target');
    const commit = await data.resolveRef(t.dir, target);
    if (!commit) throw notFound(`target not found [ref: ${target}]`);
    const ref = `refs/tags/${input.name}`;
    const names = await refLists.branchAndTagNames(t.dir);
    if (names.has(ref)) throw conflict(`tag already exists [name: ${input.name}]`);
    await this.assertQuota(t);
    const message = input.message?.trim();
    const oid = message
      ? await write.makeTag(t.dir, input.name, commit.oid, message, this.doerIdent(doer))
      : commit.oid;
    const update = { ref, oldOid: data.ZERO_OID, newOid: oid };
    await this.allow(t, doer, [update], invalid);
    await this.apply(t, doer, update, `tag already exists [name: ${input.name}]`);
    return this.reader.getTag(t, input.name);
  }

  async deleteTag(t: Target, doer: UserRow, name: string): Promise<void> {
    const tag = await this.reader.getTag(t, name);
    const update = { ref: `refs/tags/${name}`, oldOid: tag.id, newOid: data.ZERO_OID };
    await this.allow(t, doer, [update], invalid);
    await this.apply(t, doer, update, 'the tag was changed meanwhile; try again');
  }

  // Notes

  /** Sets the note of the commit `sha` names (Forgejo's SetNote: the doer writes it); counts its size. */
  async setNote(t: Target, doer: UserRow, sha: string, message: string): Promise<void> {
    const c = await this.reader.resolve(t, sha, 'sha');
    await this.assertQuota(t);
    await notes.setNote(t.dir, c.oid, message, this.doerIdent(doer));
    await this.deps.repos.refreshSize(t.repo.id);
  }

  async removeNote(t: Target, doer: UserRow, sha: string): Promise<void> {
    const c = await this.reader.resolve(t, sha, 'sha');
    if (!(await notes.removeNote(t.dir, c.oid, this.doerIdent(doer))))
      throw notFound(`note does not exist [commit: ${c.oid}]`);
  }

  /** The doer as the author of what Anvil writes for them (their no-reply address when private). */
  doerIdent(doer: UserRow): Ident {
    const host = new URL(this.deps.rootUrl).hostname || os.hostname();
    return {
      name: doer.full_name || doer.name,
      email: doer.keep_email_private ? `${doer.lower_name}@noreply.${host}` : doer.email,
    };
  }
}
