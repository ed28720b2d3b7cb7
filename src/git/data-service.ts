// The rules of the git data API for reading: who may read (opening a repository for a request), how
// refs and paths are checked, what an empty repository answers, and what branches, tags, commits,
// contents, trees, blobs, notes and archives are shown. Writing refs is data-refs.ts, writing files
// data-files.ts.
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Db } from '../db/database.js';
import { AppError, badRequest, conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import type { MetaRow as LfsMetaRow } from '../lfs/tables.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoService, RepoAccess } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { Viewer, UserRow } from '../users/tables.js';
import * as data from './data.js';
import * as notes from './notes.js';
import * as refLists from './ref-lists.js';
import * as trees from './trees.js';
import type { CommitData, ResolvedRef } from './data.js';
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

export type LfsObject = LfsMetaRow;

/** LFS objects a repository holds (the lfs domain), for /media. */
export interface LfsObjects {
  object(repo: RepoRow, oid: string): Promise<LfsMetaRow>;
  open(meta: LfsMetaRow): Promise<Readable>;
}

/** The signature verification of commits (the signing domain). */
export interface CommitVerifier {
  verifyCommits(dir: string, oids: string[]): Promise<NonNullable<RepoLinks['verifications']>>;
}

export interface GitDataServiceDeps {
  db: Db;
  repos: Pick<RepoService, 'requireRepo' | 'pathOf'>;
  users: Pick<UserService, 'getById'>;
  signing: CommitVerifier;
  lfs: LfsObjects;
  rootUrl: string;
}

export class GitDataService {
  constructor(private readonly deps: GitDataServiceDeps) {}

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
    const { repo, access } = await this.deps.repos.requireRepo(ownerName, name, viewer, need, 'repo.code');
    if (need === 'write') {
      if (repo.is_archived) throw forbidden('repo is archived');
      if (repo.is_mirror) throw forbidden('Git Repository is a mirror.');
    }
    const owner = (await this.deps.users.getById(repo.owner_id))!;
    const rootUrl = this.deps.rootUrl;
    const full = `${owner.name}/${repo.name}`;
    return {
      repo,
      owner,
      access,
      dir: this.deps.repos.pathOf(repo),
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
      usersByEmails(this.deps.db, emails),
      verify.length ? this.deps.signing.verifyCommits(t.dir, verify) : undefined,
    ]);
    return { ...t.links, users, ...(verifications ? { verifications } : {}) };
  }

  /** Whether the repository has no branch (what git says, whatever the stored flag). */
  async isEmpty(t: Target): Promise<boolean> {
    return !(await refLists.hasBranches(t.dir));
  }

  /** The commit `name` (branch, tag or commit id) names; the default branch when absent; 404 else. */
  async resolve(t: Target, name: string | undefined, field = 'ref'): Promise<ResolvedRef> {
    const ref = name || t.repo.default_branch;
    data.checkRefName(ref, field);
    const r = await data.resolveRef(t.dir, ref);
    if (!r) throw notFound(`no commit found for the ref [ref: ${ref}]`);
    return r;
  }

  async resolveBranch(t: Target, branch: string, message?: string): Promise<ResolvedRef> {
    const r = data.isValidRefName(branch) ? await data.resolveRef(t.dir, `refs/heads/${branch}`) : undefined;
    if (!r) throw notFound(message ?? `branch does not exist [name: ${branch}]`);
    return r;
  }

  // Branches

  async listBranches(t: Target, page: Page): Promise<[refLists.RefCommit[], number]> {
    const all = await refLists.branches(t.dir);
    return [all.slice(page.offset, page.offset + page.limit), all.length];
  }

  async getBranch(t: Target, name: string): Promise<refLists.RefCommit> {
    const [b] = data.isValidRefName(name) ? await refLists.branches(t.dir, name) : [];
    if (!b) throw notFound(`branch does not exist [name: ${name}]`);
    return b;
  }

  // Tags

  async listTags(t: Target, page: Page): Promise<[refLists.TagData[], number]> {
    const all = await refLists.tags(t.dir);
    return [all.slice(page.offset, page.offset + page.limit), all.length];
  }

  async getTag(t: Target, name: string): Promise<refLists.TagData> {
    const [tag] = data.isValidRefName(name) ? await refLists.tags(t.dir, name) : [];
    if (!tag) throw notFound(`tag does not exist [name: ${name}]`);
    return tag;
  }

  async annotatedTag(t: Target, sha: string): Promise<refLists.AnnotatedTagData> {
    if (!data.isHexOid(sha)) throw invalidField('sha', `not a valid object id [sha: ${sha}]`);
    const info = await data.objectInfo(t.dir, sha);
    if (!info) throw notFound(`tag does not exist [sha: ${sha}]`);
    const tag = await refLists.annotatedTag(t.dir, info.oid);
    if (!tag) throw badRequest(`object is not an annotated tag [sha: ${sha}]`);
    return tag;
  }

  // Notes

  /** The note of the commit `sha` names, with the notes commit that wrote it; 404 when none. */
  async getNote(t: Target, sha: string, diff: boolean): Promise<{ message: string; commit: CommitData }> {
    const c = await this.resolve(t, sha, 'sha');
    const note = await notes.readNote(t.dir, c.oid);
    if (!note) throw notFound(`note does not exist [commit: ${c.oid}]`);
    const commit = (await data.getCommit(t.dir, note.commit, diff))!;
    return { message: note.message.toString('utf8'), commit };
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
    const entry = await trees.entryAt(t.dir, c.oid, '.editorconfig');
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
    const entry = await trees.entryAt(t.dir, r.oid, p);
    if (!entry) throw notFound(`file does not exist [path: ${p}]`);
    const base = { origRef, refKind: r.kind, refName: r.name };
    if (entry.type !== 'tree') {
      const name = path.posix.basename(p);
      const type = contentsType(entry.mode);
      const last = (await trees.lastCommitOf(t.dir, r.oid, p)) ?? (await this.stamp(t, r.oid));
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
        const url = (await trees.submoduleUrls(t.dir, r.oid)).get(p);
        if (url) e.submoduleUrl = url;
      }
      return e;
    }
    const children = await trees.listTree(t.dir, r.oid, p);
    const prefix = p ? `${p}/` : '';
    const names = children.map((c) => c.path.slice(prefix.length));
    const symlinks = children.filter((c) => c.mode === '120000').map((c) => c.oid);
    const [last, targets, submodules] = await Promise.all([
      trees.lastCommits(t.dir, r.oid, p, names),
      data.readBlobs(t.dir, symlinks),
      children.some((c) => c.type === 'commit')
        ? trees.submoduleUrls(t.dir, r.oid)
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
  async rawEntry(
    t: Target,
    rawPath: string,
    ref?: string,
  ): Promise<{ entry: trees.TreeEntry; name: string }> {
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
    const entry = p ? await trees.entryAt(t.dir, commit, p) : undefined;
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
    const all = await refLists.refs(t.dir, 'refs/');
    const of = (prefix: string) =>
      all
        .filter((r) => r.ref.startsWith(prefix))
        .map((r) => r.ref.slice(prefix.length))
        .sort((a, b) => a.localeCompare(b));
    return { branches: of('refs/heads/'), tags: of('refs/tags/') };
  }

  /** `git blame` of a file at a commit: runs of lines with the commit that last changed them. */
  blame(t: Target, oid: string, p: string) {
    return trees.blame(t.dir, oid, p);
  }

  /** What is at `p` in commit `oid` (undefined: nothing). */
  entry(t: Target, oid: string, p: string) {
    return trees.entryAt(t.dir, oid, p);
  }

  /** A directory's entries, directories first, each with the last commit that changed it. */
  async directory(t: Target, ref: string, p: string) {
    // A commit id (not a ref name) keys the cache of last commits.
    const oid = /^[0-9a-f]{40,64}$/.test(ref) ? ref : ((await data.resolveRef(t.dir, ref))?.oid ?? ref);
    const entries = await trees.listTree(t.dir, oid, p);
    const names = entries.map((e) => e.path.slice(p ? p.length + 1 : 0));
    const last = await trees.lastCommits(t.dir, oid, p, names);
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
  async readSmall(t: Target, entry: trees.TreeEntry, max: number): Promise<Buffer | undefined> {
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
  async lfsObjectFor(t: Target, entry: trees.TreeEntry): Promise<LfsObject | undefined> {
    if (entry.size > 1024 || entry.type !== 'blob') return undefined;
    const m = LFS_POINTER.exec((await data.readBlob(t.dir, entry.oid)).toString('utf8'));
    if (!m) return undefined;
    try {
      return await this.deps.lfs.object(t.repo, m[1]!);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') return undefined;
      throw err;
    }
  }

  openLfs(o: LfsObject) {
    return this.deps.lfs.open(o);
  }

  /** `<ref>.zip` or `<ref>.tar.gz`: the commit, the format and the download's file name. */
  async archive(
    t: Target,
    archive: string,
  ): Promise<{ oid: string; format: trees.ArchiveFormat; filename: string; prefix: string }> {
    const format: trees.ArchiveFormat | undefined = archive.endsWith('.zip')
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

  async refs(t: Target, filter?: string): Promise<{ refs: refLists.RefEntry[]; exact: boolean }> {
    const prefix = filter ? `refs/${filter}` : '';
    const list = await refLists.refs(t.dir, prefix);
    if (filter && list.length === 0) throw notFound(`reference does not exist [ref: ${prefix}]`);
    return { refs: list, exact: list.length === 1 && list[0]!.ref === prefix };
  }

  async tree(
    t: Target,
    sha: string,
    o: { recursive: boolean; page: number; perPage: number },
  ): Promise<{ sha: string; entries: trees.TreeEntry[]; total: number; truncated: boolean; page: number }> {
    data.checkRefName(sha, 'sha');
    let oid: string | undefined;
    if (data.isHexOid(sha)) oid = await trees.resolveTree(t.dir, sha);
    if (!oid) {
      const r = await data.resolveRef(t.dir, sha);
      if (r) oid = await trees.resolveTree(t.dir, r.oid);
    }
    if (!oid) throw notFound(`sha not found [sha: ${sha}]`);
    const all = await trees.listTree(t.dir, oid, '', o.recursive);
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
}
