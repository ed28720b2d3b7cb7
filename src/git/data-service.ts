// The rules of the git data API: who may read and write, how refs, paths and bodies are checked,
// what an empty repository answers, and how a write becomes a commit and a ref update that branch
// protection may refuse and that is recorded like a push (branch records, size, quota, events).
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../app/context.js';
import { AppError, badRequest, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import type { RefUpdate } from '../events/bus.js';
import type { Page } from '../http/pagination.js';
import type { RepoAccess } from '../repos/service.js';
import { checkBranchName } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { AccessMode } from '../orgs/store.js';
import type { Viewer } from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import * as data from './data.js';
import type { CommitData, Ident, ResolvedRef, TreeChange } from './data.js';
import { usersByEmails } from './data-store.js';
import { mergeBase } from './git.js';
import { resolveRevision } from './revision.js';
import { definitionFor, parseEditorConfig } from './editorconfig.js';
import { contentsType, type ContentsEntry, type RepoLinks } from './data-schemas.js';

/** Files larger than this are listed without their content (Forgejo's DEFAULT_MAX_BLOB_SIZE). */
export const MAX_BLOB_SIZE = 10 * 1024 * 1024;
/** Largest .editorconfig read (Forgejo's [ui] MAX_DISPLAY_FILE_SIZE). */
const MAX_EDITORCONFIG = 8 * 1024 * 1024;
/** Largest page of a tree listing (Forgejo's DEFAULT_GIT_TREES_PER_PAGE). */
export const MAX_TREE_PAGE = 1000;
/** Largest page of a commit listing (Forgejo's [git] COMMITS_RANGE_SIZE). */
export const MAX_COMMIT_PAGE = 50;

/** A repository opened for a request: the row, its owner, the caller's access and its directory. */
export interface Target {
  repo: RepoRow;
  owner: UserRow;
  access: RepoAccess;
  dir: string;
  links: Omit<RepoLinks, 'users'>;
}

export interface IdentityInput {
  name?: string | undefined;
  email?: string | undefined;
}

/** One file operation of a commit made through the contents API. */
export interface FileOperation {
  op: 'create' | 'update' | 'delete';
  path: string;
  /** Base64 content (create, update). */
  content?: string | undefined;
  sha?: string | undefined;
  fromPath?: string | undefined;
}

/** Where and how a commit made through the API is written: branch, message, identities. */
export interface CommitInput {
  message?: string | undefined;
  branch?: string | undefined;
  newBranch?: string | undefined;
  author?: IdentityInput | undefined;
  committer?: IdentityInput | undefined;
  dates?: { author?: string | undefined; committer?: string | undefined } | undefined;
  signoff?: boolean | undefined;
}

export type FileChangeInput = FileOperation & CommitInput;

export interface FilesChangeInput extends CommitInput {
  files: FileOperation[];
}

export interface FilesChangeResult {
  commit: CommitData;
  /** Each file as it now is, in the order of the operations (null for a deletion). */
  entries: (ContentsEntry | null)[];
}

export interface FileChangeResult {
  commit: CommitData;
  /** The file as it now is (create, update). */
  entry: ContentsEntry | null;
}

export interface CommitListQuery {
  sha?: string | undefined;
  path?: string | undefined;
  not?: string | undefined;
  diff: boolean;
  page: Page;
}

const EMPTY = 'Git Repository is empty.';
const LFS_POINTER =
  /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:([0-9a-f]{64})\nsize \d+\n?$/;

export type LfsObject = Awaited<ReturnType<AppContext['lfs']['object']>>;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class GitDataService {
  constructor(private readonly ctx: AppContext) {}

  // Opening a repository

  /**
   * The repository `owner/name` for `viewer`: 404 when it cannot be read; for 'write', 403 when
   * the caller may only read it, or when it is archived or a mirror.
   */
  async open(
    ownerName: string,
    name: string,
    viewer: Viewer | null,
    need: 'read' | 'write',
  ): Promise<Target> {
    const { repo, access } = await this.ctx.repos.requireRepo(ownerName, name, viewer, need, 'repo.code');
    if (need === 'write') {
      if (repo.is_archived) throw forbidden('repo is archived');
      if (repo.is_mirror) throw forbidden('Git Repository is a mirror.');
    }
    const owner = (await this.ctx.users.getById(repo.owner_id))!;
    const rootUrl = this.ctx.config.server.rootUrl;
    const full = `${owner.name}/${repo.name}`;
    return {
      repo,
      owner,
      access,
      dir: this.ctx.repos.pathOf(repo),
      links: { rootUrl, api: `${rootUrl}api/v1/repos/${full}`, html: `${rootUrl}${full}`, viewer },
    };
  }

  canPush(t: Target): boolean {
    return t.links.viewer !== null && (t.access.units.get('repo.code') ?? 0) >= AccessMode.write;
  }

  /** The links of `t` with the accounts behind the e-mail addresses of `commits`, in one query. */
  /** Links, the accounts behind `emails`, and the signature verification of the commits `verify`. */
  async linksFor(t: Target, emails: string[], verify: string[] = []): Promise<RepoLinks> {
    const [users, verifications] = await Promise.all([
      usersByEmails(this.ctx.db, emails),
      verify.length ? this.ctx.signing.verifyCommits(t.dir, verify) : undefined,
    ]);
    return { ...t.links, users, ...(verifications ? { verifications } : {}) };
  }

  /** Whether the repository has no branch (what git says, whatever the stored flag). */
  private async isEmpty(t: Target): Promise<boolean> {
    return !(await data.hasBranches(t.dir));
  }

  /** The commit `name` (branch, tag or commit id) names; the default branch when absent; 404 else. */
  private async resolve(t: Target, name: string | undefined, field = 'ref'): Promise<ResolvedRef> {
    const ref = name || t.repo.default_branch;
    data.checkRefName(ref, field);
    const r = await data.resolveRef(t.dir, ref);
    if (!r) throw notFound(`no commit found for the ref [ref: ${ref}]`);
    return r;
  }

  private async resolveBranch(t: Target, branch: string, message?: string): Promise<ResolvedRef> {
    const r = data.isValidRefName(branch) ? await data.resolveRef(t.dir, `refs/heads/${branch}`) : undefined;
    if (!r) throw notFound(message ?? `branch does not exist [name: ${branch}]`);
    return r;
  }

  private async assertQuota(t: Target): Promise<void> {
    if (!(await this.ctx.quota.check(t.repo.owner_id, 'size:git:all'))) {
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
    const refusal = await this.ctx.protection.refusalFor(t.repo, doer, updates);
    if (refusal) throw refuse(refusal);
  }

  /** Applies one ref update like a push: atomically from its old value, then recorded. */
  private async apply(t: Target, doer: UserRow, u: RefUpdate, lost: string): Promise<void> {
    const moved = await this.ctx.repos.changeRefs(t.repo.id, doer.id, [u], () =>
      data.updateRef(t.dir, u.ref, u.oldOid, u.newOid),
    );
    if (!moved) throw conflict(lost);
  }

  // Branches

  async listBranches(t: Target, page: Page): Promise<[data.RefCommit[], number]> {
    const all = await data.branches(t.dir);
    return [all.slice(page.offset, page.offset + page.limit), all.length];
  }

  async getBranch(t: Target, name: string): Promise<data.RefCommit> {
    const [b] = data.isValidRefName(name) ? await data.branches(t.dir, name) : [];
    if (!b) throw notFound(`branch does not exist [name: ${name}]`);
    return b;
  }

  async createBranch(
    t: Target,
    doer: UserRow,
    input: { name: string; oldBranch?: string | undefined; oldRef?: string | undefined },
  ): Promise<data.RefCommit> {
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    checkBranchName(input.name, 'new_branch_name');
    let from: ResolvedRef;
    if (input.oldRef) {
      data.checkRefName(input.oldRef, 'old_ref_name');
      const r = await data.resolveRef(t.dir, input.oldRef);
      if (!r) throw notFound(`The old ref does not exist [ref: ${input.oldRef}]`);
      from = r;
    } else {
      from = await this.resolveBranch(
        t,
        input.oldBranch || t.repo.default_branch,
        'The old branch does not exist',
      );
    }
    const ref = `refs/heads/${input.name}`;
    const names = await data.branchAndTagNames(t.dir);
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
    return this.getBranch(t, input.name);
  }

  async deleteBranch(t: Target, doer: UserRow, name: string): Promise<void> {
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    const b = await this.getBranch(t, name);
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
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    checkBranchName(name, 'name');
    const names = await data.branchAndTagNames(t.dir);
    const taken = 'Cannot rename a branch using the same name or rename to a branch that already exists.';
    if (from === name || names.has(`refs/heads/${name}`)) throw invalidField('name', taken);
    const b = await this.getBranch(t, from);
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
    const moved = await this.ctx.repos.changeRefs(t.repo.id, doer.id, updates, async () => {
      const ruleRenamed = await this.ctx.protection.followRename(t.repo, from, name);
      const ok = await data.renameBranchRef(t.dir, from, name, b.commit.oid);
      if (!ok) {
        if (ruleRenamed) await this.ctx.protection.followRename(t.repo, name, from);
        return false;
      }
      await this.ctx.pulls.followBranchRename(t.repo.id, from, name);
      return true;
    });
    if (!moved) throw conflict('the branch was changed meanwhile; try again');
  }

  // Tags

  async listTags(t: Target, page: Page): Promise<[data.TagData[], number]> {
    const all = await data.tags(t.dir);
    return [all.slice(page.offset, page.offset + page.limit), all.length];
  }

  async getTag(t: Target, name: string): Promise<data.TagData> {
    const [tag] = data.isValidRefName(name) ? await data.tags(t.dir, name) : [];
    if (!tag) throw notFound(`tag does not exist [name: ${name}]`);
    return tag;
  }

  async createTag(
    t: Target,
    doer: UserRow,
    input: { name: string; target?: string | undefined; message?: string | undefined },
  ): Promise<data.TagData> {
    if (!data.isValidRefName(input.name))
      throw invalidField('tag_name', `invalid tag name [name: ${input.name}]`);
    const target = input.target || t.repo.default_branch;
    data.checkRefName(target, 'target');
    const commit = await data.resolveRef(t.dir, target);
    if (!commit) throw notFound(`target not found [ref: ${target}]`);
    const ref = `refs/tags/${input.name}`;
    const names = await data.branchAndTagNames(t.dir);
    if (names.has(ref)) throw conflict(`tag already exists [name: ${input.name}]`);
    await this.assertQuota(t);
    const message = input.message?.trim();
    const oid = message
      ? await data.makeTag(t.dir, input.name, commit.oid, message, this.doerIdent(doer))
      : commit.oid;
    const update = { ref, oldOid: data.ZERO_OID, newOid: oid };
    await this.allow(t, doer, [update], invalid);
    await this.apply(t, doer, update, `tag already exists [name: ${input.name}]`);
    return this.getTag(t, input.name);
  }

  async deleteTag(t: Target, doer: UserRow, name: string): Promise<void> {
    const tag = await this.getTag(t, name);
    const update = { ref: `refs/tags/${name}`, oldOid: tag.id, newOid: data.ZERO_OID };
    await this.allow(t, doer, [update], invalid);
    await this.apply(t, doer, update, 'the tag was changed meanwhile; try again');
  }

  async annotatedTag(t: Target, sha: string): Promise<data.AnnotatedTagData> {
    if (!data.isHexOid(sha)) throw invalidField('sha', `not a valid object id [sha: ${sha}]`);
    const info = await data.objectInfo(t.dir, sha);
    if (!info) throw notFound(`tag does not exist [sha: ${sha}]`);
    const tag = await data.annotatedTag(t.dir, info.oid);
    if (!tag) throw badRequest(`object is not an annotated tag [sha: ${sha}]`);
    return tag;
  }

  // Notes

  /** The note of the commit `sha` names, with the notes commit that wrote it; 404 when none. */
  async getNote(t: Target, sha: string, diff: boolean): Promise<{ message: string; commit: CommitData }> {
    const c = await this.resolve(t, sha, 'sha');
    const note = await data.readNote(t.dir, c.oid);
    if (!note) throw notFound(`note does not exist [commit: ${c.oid}]`);
    const commit = (await data.getCommit(t.dir, note.commit, diff))!;
    return { message: note.message.toString('utf8'), commit };
  }

  /** Sets the note of the commit `sha` names (Forgejo's SetNote: the doer writes it); counts its size. */
  async setNote(t: Target, doer: UserRow, sha: string, message: string): Promise<void> {
    const c = await this.resolve(t, sha, 'sha');
    await this.assertQuota(t);
    await data.setNote(t.dir, c.oid, message, this.doerIdent(doer));
    await this.ctx.repos.refreshSize(t.repo.id);
  }

  async removeNote(t: Target, doer: UserRow, sha: string): Promise<void> {
    const c = await this.resolve(t, sha, 'sha');
    if (!(await data.removeNote(t.dir, c.oid, this.doerIdent(doer))))
      throw notFound(`note does not exist [commit: ${c.oid}]`);
  }

  // EditorConfig

  /**
   * The EditorConfig definitions the root `.editorconfig` at `ref` (the default branch when absent)
   * gives `filePath`; 404 when there is none (or it is too large to read, as in Forgejo).
   */
  async editorconfig(t: Target, filePath: string, ref?: string): Promise<Record<string, string>> {
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    const c = await this.resolve(t, ref);
    const p = data.cleanTreePath(filePath);
    const entry = await data.entryAt(t.dir, c.oid, '.editorconfig');
    if (!entry || entry.type !== 'blob' || entry.size > MAX_EDITORCONFIG) {
      throw notFound(`.editorconfig does not exist [ref: ${c.name}]`);
    }
    const text = (await data.readBlob(t.dir, entry.oid)).toString('utf8');
    return definitionFor(parseEditorConfig(text), p);
  }

  // Commits

  /** One page of history from `sha` (the default branch when absent), with the total. */
  async listCommits(t: Target, q: CommitListQuery): Promise<[CommitData[], number]> {
    if (await this.isEmpty(t)) throw conflict(EMPTY);
    const from = await this.resolve(t, q.sha, 'sha');
    let not: string | undefined;
    if (q.not) not = (await this.resolve(t, q.not, 'not')).oid;
    const p = q.path ? data.cleanTreePath(q.path, 'path') : '';
    const [commits, total] = await Promise.all([
      data.log(t.dir, {
        from: from.oid,
        not,
        path: p || undefined,
        skip: q.page.offset,
        limit: q.page.limit,
        diff: q.diff,
      }),
      data.countCommits(t.dir, { from: from.oid, not, path: p || undefined }),
    ]);
    if (p && total === 0) throw notFound(`no commit touches the path [path: ${p}]`);
    return [commits, total];
  }

  async getCommit(t: Target, sha: string, diff: boolean): Promise<CommitData> {
    if (!data.isValidRefName(sha)) throw invalid(`no valid ref or sha: ${sha}`);
    const r = await data.resolveRef(t.dir, sha);
    const c = r && (await data.getCommit(t.dir, r.oid, diff));
    if (!c) throw notFound(`commit does not exist [id: ${sha}]`);
    return c;
  }

  /**
   * What `head` adds to `base` (each a branch, tag, commit id or revision such as `main~1`): their merge base, the commits
   * of head not in base (newest first, at most `limit`; each with its files and line counts with
   * `files`) and the diff from the merge base to head (empty with `diff: false`).
   */
  async compare(
    t: Target,
    base: string,
    head: string,
    opts: { limit?: number; files?: boolean; diff?: boolean } = {},
  ): Promise<{
    base: ResolvedRef;
    head: ResolvedRef;
    mergeBase: string;
    commits: CommitData[];
    diff: string;
  }> {
    const b = await resolveRevision(t.dir, base, 'base');
    const h = await resolveRevision(t.dir, head, 'head');
    const common = await mergeBase(t.dir, b.oid, h.oid);
    const limit = opts.limit ?? MAX_COMMIT_PAGE * 5;
    const [commits, diff] = await Promise.all([
      data.log(t.dir, { from: h.oid, not: b.oid, limit, diff: opts.files === true }),
      opts.diff === false ? '' : data.rangeDiff(t.dir, common || b.oid, h.oid),
    ]);
    return { base: b, head: h, mergeBase: common, commits, diff };
  }

  /**
   * Forgejo's compare API: `base...head` or `base..head` (split at the first `...`, else the first
   * `..`; both list what head adds since the merge base, as in Forgejo), or only `head`, compared
   * with the default branch. Either side is a branch (with '/'), tag, commit id or revision.
   */
  async compareSpec(t: Target, spec: string): Promise<{ commits: CommitData[] }> {
    const sep = spec.includes('...') ? '...' : '..';
    const at = spec.indexOf(sep);
    const [base, head] =
      at >= 0 ? [spec.slice(0, at), spec.slice(at + sep.length)] : [t.repo.default_branch, spec];
    if (!base || !head) throw notFound(`nothing to compare [basehead: ${spec}]`);
    const { commits } = await this.compare(t, base, head, { files: true, diff: false });
    return { commits };
  }

  // Contents

  /** A commit's id and committer date. */
  private async stamp(t: Target, oid: string): Promise<{ oid: string; date: string }> {
    const c = await data.getCommit(t.dir, oid, false);
    return { oid, date: c?.committer.date ?? '' };
  }

  /** A file (with its content) or a directory (its entries, without content); [] when empty. */
  async contents(t: Target, rawPath: string, ref?: string): Promise<ContentsEntry | ContentsEntry[]> {
    const p = data.cleanTreePath(rawPath);
    if (await this.isEmpty(t)) return [];
    const origRef = ref || t.repo.default_branch;
    const r = await this.resolve(t, origRef);
    const entry = await data.entryAt(t.dir, r.oid, p);
    if (!entry) throw notFound(`file does not exist [path: ${p}]`);
    const base = { origRef, refKind: r.kind, refName: r.name };
    if (entry.type !== 'tree') {
      const name = path.posix.basename(p);
      const type = contentsType(entry.mode);
      const last = (await data.lastCommitOf(t.dir, r.oid, p)) ?? (await this.stamp(t, r.oid));
      const e: ContentsEntry = {
        ...base,
        name,
        path: p,
        oid: entry.oid,
        type,
        size: entry.size,
        lastCommit: last,
      };
      if (type === 'file')
        e.content = entry.size <= MAX_BLOB_SIZE ? await data.readBlob(t.dir, entry.oid) : null;
      if (type === 'symlink') e.target = (await data.readBlob(t.dir, entry.oid)).toString('utf8');
      if (type === 'submodule') {
        const url = (await data.submoduleUrls(t.dir, r.oid)).get(p);
        if (url) e.submoduleUrl = url;
      }
      return e;
    }
    const children = await data.listTree(t.dir, r.oid, p);
    const prefix = p ? `${p}/` : '';
    const names = children.map((c) => c.path.slice(prefix.length));
    const symlinks = children.filter((c) => c.mode === '120000').map((c) => c.oid);
    const [last, targets, submodules] = await Promise.all([
      data.lastCommits(t.dir, r.oid, p, names),
      data.readBlobs(t.dir, symlinks),
      children.some((c) => c.type === 'commit')
        ? data.submoduleUrls(t.dir, r.oid)
        : new Map<string, string>(),
    ]);
    const fallback = names.every((n) => last.has(n)) ? undefined : await this.stamp(t, r.oid);
    return children.map((c, i) => {
      const name = names[i]!;
      const type = contentsType(c.mode);
      const e: ContentsEntry = {
        ...base,
        name,
        path: c.path,
        oid: c.oid,
        type,
        size: c.size,
        lastCommit: last.get(name) ?? fallback!,
      };
      if (type === 'symlink') e.target = targets.get(c.oid)?.toString('utf8') ?? '';
      if (type === 'submodule') {
        const url = submodules.get(c.path);
        if (url) e.submoduleUrl = url;
      }
      return e;
    });
  }

  /** The blob at `rawPath` of `ref`, or (without a ref) of the ref the path starts with. */
  async rawEntry(t: Target, rawPath: string, ref?: string): Promise<{ entry: data.TreeEntry; name: string }> {
    let p = data.cleanTreePath(rawPath);
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    let commit: string;
    if (ref) {
      commit = (await this.resolve(t, ref)).oid;
    } else {
      const hit = p ? await data.resolveRefPrefix(t.dir, p) : undefined;
      if (hit) {
        commit = hit.ref.oid;
        p = hit.rest;
      } else {
        commit = (await this.resolve(t, undefined)).oid;
      }
    }
    const entry = p ? await data.entryAt(t.dir, commit, p) : undefined;
    if (!entry || entry.type !== 'blob') throw notFound(`file does not exist [path: ${p}]`);
    return { entry, name: path.posix.basename(p) };
  }

  // For the web pages

  /**
   * `{kind}/{ref}/{path}` of a web URL (`branch/feature/x/src/a.ts`): the ref (the leading part
   * that names a branch, tag or commit of that kind) and the path after it; 404 when none does.
   */
  async locate(t: Target, kind: string, rest: string): Promise<{ ref: ResolvedRef; path: string }> {
    if (kind !== 'branch' && kind !== 'tag' && kind !== 'commit')
      throw notFound(`unknown ref kind [kind: ${kind}]`);
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    const hit = rest ? await data.resolveRefPrefix(t.dir, rest) : undefined;
    if (!hit || hit.ref.kind !== kind) throw notFound(`no ${kind} in the path [path: ${rest}]`);
    return { ref: hit.ref, path: data.cleanTreePath(hit.rest, 'path') };
  }

  /** The names of the branches and tags (for the pages' ref switcher), in one git process. */
  async refNames(t: Target): Promise<{ branches: string[]; tags: string[] }> {
    const all = await data.refs(t.dir, 'refs/');
    const of = (prefix: string) =>
      all
        .filter((r) => r.ref.startsWith(prefix))
        .map((r) => r.ref.slice(prefix.length))
        .sort((a, b) => a.localeCompare(b));
    return { branches: of('refs/heads/'), tags: of('refs/tags/') };
  }

  /** `git blame` of a file at a commit: runs of lines with the commit that last changed them. */
  blame(t: Target, oid: string, p: string) {
    return data.blame(t.dir, oid, p);
  }

  /** What is at `p` in commit `oid` (undefined: nothing). */
  entry(t: Target, oid: string, p: string) {
    return data.entryAt(t.dir, oid, p);
  }

  /** A directory's entries, directories first, each with the last commit that changed it. */
  async directory(t: Target, ref: string, p: string) {
    // A commit id (not a ref name) keys the cache of last commits.
    const oid = /^[0-9a-f]{40,64}$/.test(ref) ? ref : ((await data.resolveRef(t.dir, ref))?.oid ?? ref);
    const entries = await data.listTree(t.dir, oid, p);
    const names = entries.map((e) => e.path.slice(p ? p.length + 1 : 0));
    const last = await data.lastCommits(t.dir, oid, p, names);
    const commits = await data.commitsByOids(
      t.dir,
      [...last.values()].map((l) => l.oid),
    );
    return entries
      .map((e, i) => ({ entry: e, name: names[i]!, last: commits.get(last.get(names[i]!)?.oid ?? '') }))
      .sort((a, b) =>
        a.entry.type === b.entry.type ? a.name.localeCompare(b.name) : a.entry.type === 'tree' ? -1 : 1,
      );
  }

  /** The bytes of a blob no larger than `max` (undefined when larger). */
  async readSmall(t: Target, entry: data.TreeEntry, max: number): Promise<Buffer | undefined> {
    if (entry.size > max) return undefined;
    return data.readBlob(t.dir, entry.oid);
  }

  /** A commit's diff (or format-patch text with `patch`) against its first parent. */
  async diffText(t: Target, oid: string, patch: boolean): Promise<string> {
    return data.diffText(t.dir, oid, patch);
  }

  /**
   * For /media: the LFS object a small pointer blob stands for, when this repository holds it;
   * undefined when the blob is not such a pointer (it is then served as it is).
   */
  async lfsObjectFor(t: Target, entry: data.TreeEntry): Promise<LfsObject | undefined> {
    if (entry.size > 1024 || entry.type !== 'blob') return undefined;
    const m = LFS_POINTER.exec((await data.readBlob(t.dir, entry.oid)).toString('utf8'));
    if (!m) return undefined;
    try {
      return await this.ctx.lfs.object(t.repo, m[1]!);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') return undefined;
      throw err;
    }
  }

  openLfs(o: LfsObject) {
    return this.ctx.lfs.open(o);
  }

  /** `<ref>.zip` or `<ref>.tar.gz`: the commit, the format and the download's file name. */
  async archive(
    t: Target,
    archive: string,
  ): Promise<{ oid: string; format: data.ArchiveFormat; filename: string; prefix: string }> {
    const format: data.ArchiveFormat | undefined = archive.endsWith('.zip')
      ? 'zip'
      : archive.endsWith('.tar.gz')
        ? 'tar.gz'
        : undefined;
    if (!format) throw badRequest(`unknown archive format [name: ${archive}]: use .zip or .tar.gz`);
    const refName = archive.slice(0, -(format.length + 1));
    data.checkRefName(refName, 'archive');
    if (await this.isEmpty(t)) throw notFound(EMPTY);
    const r = await data.resolveRef(t.dir, refName);
    if (!r) throw notFound(`unrecognized reference [ref: ${refName}]`);
    return {
      oid: r.oid,
      format,
      filename: `${t.repo.name}-${refName.replaceAll('/', '-')}.${format}`,
      prefix: t.repo.lower_name,
    };
  }

  // Git objects

  async refs(t: Target, filter?: string): Promise<{ refs: data.RefEntry[]; exact: boolean }> {
    const prefix = filter ? `refs/${filter}` : '';
    const list = await data.refs(t.dir, prefix);
    if (filter && list.length === 0) throw notFound(`reference does not exist [ref: ${prefix}]`);
    return { refs: list, exact: list.length === 1 && list[0]!.ref === prefix };
  }

  async tree(
    t: Target,
    sha: string,
    o: { recursive: boolean; page: number; perPage: number },
  ): Promise<{ sha: string; entries: data.TreeEntry[]; total: number; truncated: boolean; page: number }> {
    data.checkRefName(sha, 'sha');
    let oid: string | undefined;
    if (data.isHexOid(sha)) oid = await data.resolveTree(t.dir, sha);
    if (!oid) {
      const r = await data.resolveRef(t.dir, sha);
      if (r) oid = await data.resolveTree(t.dir, r.oid);
    }
    if (!oid) throw notFound(`sha not found [sha: ${sha}]`);
    const all = await data.listTree(t.dir, oid, '', o.recursive);
    const perPage = o.perPage > 0 && o.perPage <= MAX_TREE_PAGE ? o.perPage : MAX_TREE_PAGE;
    const page = o.page > 0 ? o.page : 1;
    const start = perPage * (page - 1);
    return {
      sha: oid,
      entries: all.slice(start, start + perPage),
      total: all.length,
      truncated: all.length > perPage,
      page,
    };
  }

  async blob(t: Target, sha: string): Promise<{ oid: string; size: number; content: Buffer | null }> {
    if (!data.isHexOid(sha)) throw invalidField('sha', `not a valid object id [sha: ${sha}]`);
    const info = await data.objectInfo(t.dir, sha);
    if (!info || info.type !== 'blob') throw notFound(`blob does not exist [sha: ${sha}]`);
    return {
      oid: info.oid,
      size: info.size,
      content: info.size <= MAX_BLOB_SIZE ? await data.readBlob(t.dir, info.oid) : null,
    };
  }

  // Writing files

  private doerIdent(doer: UserRow): Ident {
    const host = new URL(this.ctx.config.server.rootUrl).hostname || os.hostname();
    return {
      name: doer.full_name || doer.name,
      email: doer.keep_email_private ? `${doer.lower_name}@noreply.${host}` : doer.email,
    };
  }

  /**
   * Author and committer as Forgejo picks them: each given one (its e-mail set) is used; when only
   * one is given it is both; when none, both are the doer.
   */
  private identities(doer: UserRow, input: CommitInput): { author: Ident; committer: Ident } {
    const me = this.doerIdent(doer);
    const make = (o: IdentityInput | undefined, field: string): Ident | undefined => {
      if (!o?.email) return undefined;
      for (const v of [o.name ?? '', o.email]) {
        if (/[<>\n\r\0]/.test(v)) throw invalidField(field, `invalid identity [${v}]`);
      }
      if (o.email.toLowerCase() === doer.email.toLowerCase())
        return { name: o.name || me.name, email: me.email };
      return { name: o.name || o.email.split('@')[0] || o.email, email: o.email };
    };
    const committer0 = make(input.committer, 'committer');
    const author = make(input.author, 'author') ?? committer0 ?? me;
    const committer = committer0 ?? author;
    return {
      author: { ...author, date: gitDate(input.dates?.author, 'dates') },
      committer: { ...committer, date: gitDate(input.dates?.committer, 'dates') },
    };
  }

  /**
   * Creates, updates (and moves, with `fromPath`) or deletes one file as a commit on `branch` (or
   * on `newBranch`, created from `branch`), without a work tree; the ref moves only if nobody moved
   * it meanwhile. An empty repository gets its first commit.
   */
  async changeFile(t: Target, doer: UserRow, input: FileChangeInput): Promise<FileChangeResult> {
    const { op, path: p, content, sha, fromPath, ...commit } = input;
    const r = await this.changeFiles(t, doer, {
      ...commit,
      files: [{ op, path: p, content, sha, fromPath }],
    });
    return { commit: r.commit, entry: r.entries[0] ?? null };
  }

  /**
   * Several file operations as one commit, like `changeFile`: each is checked against the tree of
   * the branch; a path is written at most once.
   */
  async changeFiles(t: Target, doer: UserRow, input: FilesChangeInput): Promise<FilesChangeResult> {
    if (input.files.length === 0) throw invalidField('files', 'no file operations given');
    const ops = input.files.map((f) => {
      const treePath = data.cleanTreePath(f.path);
      if (!treePath) throw invalidField('filepath', 'path is required');
      const fromPath = f.fromPath ? data.cleanTreePath(f.fromPath, 'from_path') : treePath;
      if (!fromPath) throw invalidField('from_path', 'path is required');
      let content: Buffer | undefined;
      if (f.op !== 'delete') {
        const b64 = (f.content ?? '').replace(/[\r\n]/g, '');
        if (!BASE64.test(b64) || b64.length % 4 !== 0)
          throw invalidField('content', 'Invalid base64 content');
        content = Buffer.from(b64, 'base64');
      }
      return { op: f.op, sha: f.sha, treePath, fromPath, content };
    });

    const done = await this.commitChange(t, doer, input, async (base, branch) => {
      if (!base) {
        if (ops.some((o) => o.op === 'update')) throw invalid('repo is empty');
        if (ops.some((o) => o.op === 'delete')) throw notFound(`branch does not exist [name: ${branch}]`);
      }
      const changes: TreeChange[] = [];
      const written = new Set<string>();
      const claim = (p: string) => {
        if (written.has(p)) throw invalidField('filepath', `repository file already exists [path: ${p}]`);
        written.add(p);
      };
      for (const { op, sha, treePath, fromPath, content } of ops) {
        let mode = '100644';
        if (base && op !== 'create') {
          const from = await data.entryAt(t.dir, base.oid, fromPath);
          if (!from || from.type !== 'blob') throw notFound(`file does not exist [path: ${fromPath}]`);
          if (sha !== from.oid) {
            const message = `sha does not match [given: ${sha}, expected: ${from.oid}]`;
            throw op === 'delete' ? badRequest(message) : conflict(message);
          }
          if (from.mode === '100755') mode = '100755';
        }
        if (base && op !== 'delete') await this.checkTarget(t, base.oid, treePath, fromPath, op);
        claim(treePath);
        if (op === 'delete') {
          changes.push({ path: treePath, remove: true });
        } else {
          if (fromPath !== treePath) {
            claim(fromPath);
            changes.push({ path: fromPath, remove: true });
          }
          changes.push({ path: treePath, mode, oid: await data.hashBlob(t.dir, content!) });
        }
      }
      const verbs = { create: 'Add', update: 'Update', delete: 'Delete' } as const;
      const message = (['create', 'update', 'delete'] as const)
        .map((op) => ops.filter((o) => o.op === op).map((o) => o.treePath))
        .map((paths, i) => (paths.length ? `${Object.values(verbs)[i]} ${paths.join(', ')}` : ''))
        .filter(Boolean)
        .join('\n');
      return { tree: await data.writeTree(t.dir, base?.oid ?? null, changes), message };
    });

    const { oid, commit, branch } = done;
    const entries: (ContentsEntry | null)[] = [];
    for (const o of ops) {
      if (o.op === 'delete') {
        entries.push(null);
        continue;
      }
      const written = (await data.entryAt(t.dir, oid, o.treePath))!;
      entries.push({
        name: path.posix.basename(o.treePath),
        path: o.treePath,
        oid: written.oid,
        type: contentsType(written.mode),
        size: written.size,
        lastCommit: { oid, date: commit.committer.date },
        content: written.size <= MAX_BLOB_SIZE ? o.content! : null,
        origRef: branch,
        refKind: 'branch',
        refName: branch,
      });
    }
    return { commit, entries };
  }

  /**
   * Applies the unified diff `patch` to `branch` as one commit (on `newBranch` when given), without
   * a work tree; 422 when it does not apply. Forgejo's default message is "apply-patch".
   */
  async applyDiffPatch(
    t: Target,
    doer: UserRow,
    input: CommitInput & { patch: string },
  ): Promise<CommitData> {
    if (!input.patch.trim()) throw invalidField('content', 'patch is empty');
    const done = await this.commitChange(t, doer, input, async (base, branch) => {
      if (!base) throw notFound(`branch does not exist [name: ${branch}]`);
      const r = await data.applyPatch(t.dir, base.oid, input.patch);
      if ('error' in r) throw invalidField('content', `patch does not apply: ${r.error}`);
      return { tree: r.tree, message: 'apply-patch' };
    });
    return done.commit;
  }

  /**
   * Writes a commit on `input.branch` (or on `input.newBranch`, created from it) without a work
   * tree: `build` makes its tree from the branch's head (none in an empty repository) and the
   * default message; the ref moves like a push, only if nobody moved it meanwhile.
   */
  private async commitChange(
    t: Target,
    doer: UserRow,
    input: CommitInput,
    build: (base: ResolvedRef | undefined, branch: string) => Promise<{ tree: string; message: string }>,
  ): Promise<{ oid: string; commit: CommitData; branch: string }> {
    const branch = input.branch || t.repo.default_branch;
    checkBranchName(branch, 'branch');
    const newBranch = input.newBranch || branch;
    checkBranchName(newBranch, 'new_branch');
    const { author, committer } = this.identities(doer, input);

    let base: ResolvedRef | undefined;
    if (!(await this.isEmpty(t))) {
      base = await this.resolveBranch(t, branch);
      if (newBranch !== branch && (await data.resolveRef(t.dir, `refs/heads/${newBranch}`))) {
        throw invalidField('new_branch', `branch already exists [name: ${newBranch}]`);
      }
    }
    const built = await build(base, branch);
    await this.assertQuota(t);
    let message = input.message?.trim() || built.message;
    if (input.signoff) message += `\n\nSigned-off-by: ${committer.name} <${committer.email}>`;
    const oid = await data.commitTree(t.dir, built.tree, base ? [base.oid] : [], message, author, committer);

    const update = {
      ref: `refs/heads/${newBranch}`,
      oldOid: base && newBranch === branch ? base.oid : data.ZERO_OID,
      newOid: oid,
    };
    await this.allow(t, doer, [update]);
    await this.apply(t, doer, update, `branch ${newBranch} was changed meanwhile; try again`);
    return { oid, commit: (await data.getCommit(t.dir, oid, false))!, branch: newBranch };
  }

  /** Forgejo's checks of the path a file is written to, against the tree it is written into. */
  private async checkTarget(t: Target, base: string, treePath: string, fromPath: string, op: string) {
    const along = await data.entriesAlong(t.dir, base, treePath);
    const parts = treePath.split('/');
    for (let i = 0; i < parts.length; i++) {
      const prefix = parts.slice(0, i + 1).join('/');
      const e = along.get(prefix);
      if (!e) return;
      if (i < parts.length - 1) {
        if (e.type !== 'tree') {
          throw invalidField(
            'filepath',
            `a file exists where you're trying to create a subdirectory [path: ${prefix}]`,
          );
        }
      } else if (e.mode === '120000') {
        throw invalidField(
          'filepath',
          `a symbolic link exists where you're trying to create a file [path: ${treePath}]`,
        );
      } else if (e.type === 'tree') {
        throw invalidField(
          'filepath',
          `a directory exists where you're trying to create a file [path: ${treePath}]`,
        );
      } else if (fromPath !== treePath || op === 'create') {
        throw invalidField('filepath', `repository file already exists [path: ${treePath}]`);
      }
    }
  }
}

/** An RFC 3339 date as git takes it ("<unix seconds> <zone>"); undefined keeps "now". */
function gitDate(iso: string | undefined, field: string): string | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw invalidField(field, `invalid date [${iso}]`);
  const m = /([+-])(\d\d):?(\d\d)$/.exec(iso);
  const zone = m ? `${m[1]}${m[2]}${m[3]}` : '+0000';
  return `${Math.floor(ms / 1000)} ${zone}`;
}
