// Repository wikis: a bare git repository beside the repository's own (`<ROOT>/<id>.wiki.git`),
// created by the first page written (through the API or a push) and removed with the repository.
// Pages are Markdown files named as Forgejo names them (names.ts), on the branch the wiki's HEAD
// names (`main` for a wiki Anvil creates). Writes go through git plumbing with a temporary index
// (no work tree), one at a time per wiki in this process, and move the branch only from the commit
// they started from, so a push that lands in between is never lost (the write is tried again).
// The wiki's size is not tracked (`size:wiki` is always within quota) and its pushes run none of
// the repository's push pipeline (no branch records, no push events, no actions).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError, badRequest, conflict, forbidden, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoRow } from '../repos/tables.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { git } from '../git/git.js';
import { scratchDir } from '../repos/scratch.js';
import * as data from '../git/data.js';
import * as refLists from '../git/ref-lists.js';
import * as trees from '../git/trees.js';
import * as write from '../git/write.js';
import { KeyedLock } from '../locks.js';
import {
  gitPathToWebPath,
  isReserved,
  isSafeGitPath,
  titleToWebPath,
  unescape,
  webPathFromRequest,
  webPathToGitPath,
  webPathToTitle,
} from './names.js';

/** The branch of a wiki Anvil creates (Forgejo's default wiki branch is the default branch setting). */
export const WIKI_BRANCH = 'main';
/** Revisions per page of /wiki/revisions (Forgejo's [git] COMMITS_RANGE_SIZE). */
export const REVISIONS_PER_PAGE = 50;
/** Pages larger than this are listed without their content (Forgejo's DEFAULT_MAX_BLOB_SIZE). */
const MAX_CONTENT = 10 * 1024 * 1024;

export interface WikiPageFile {
  /** The page's web path (its API name and URL segment). */
  webPath: string;
  title: string;
  /** The file in the wiki repository. */
  file: string;
  oid: string;
  size: number;
}

export interface WikiPage extends WikiPageFile {
  /** null when the page is too large to return. */
  content: Buffer | null;
  lastCommit: data.CommitData;
  commitCount: number;
  sidebar: Buffer | null;
  footer: Buffer | null;
}

export interface WikiWrite {
  title?: string | undefined;
  content: Buffer;
  message?: string | undefined;
  /**
   * For an edit: the page's last commit the editor started from. When given and the page has
   * changed since, the edit is refused (409) instead of overwriting the other change.
   */
  base?: string | undefined;
}

export type WikiAction = 'created' | 'edited' | 'deleted';

export interface WikiServiceDeps {
  events: EventBus;
  repos: Pick<RepoService, 'addHooks' | 'pathOf' | 'requireRepo'>;
  rootUrl: string;
}

export class WikiService {
  /** The write in progress per wiki (repository id): the next waits for it. */
  private readonly writes = new KeyedLock<number>();

  constructor(private readonly deps: WikiServiceDeps) {
    deps.repos.addHooks({
      beforeDelete: async (_tx, repo) => async () => {
        fs.rmSync(this.pathOf(repo), { recursive: true, force: true });
      },
    });
  }

  /** The wiki's bare repository: by id, beside the repository's own. */
  pathOf(repo: { id: number }): string {
    return path.join(path.dirname(this.deps.repos.pathOf(repo)), `${repo.id}.wiki.git`);
  }

  exists(repo: { id: number }): boolean {
    return fs.existsSync(path.join(this.pathOf(repo), 'HEAD'));
  }

  /**
   * The repository `owner/name` for its wiki: 404 when the viewer may not read the wiki unit or
   * the wiki is turned off (as Forgejo's mustEnableWiki); for writing, 403 without write access to
   * the wiki unit and for an archived repository.
   */
  async requireWiki(
    ownerName: string,
    name: string,
    viewer: Viewer | null,
    need: 'read' | 'write' = 'read',
  ): Promise<{ repo: RepoRow; access: RepoAccess }> {
    let found;
    try {
      found = await this.deps.repos.requireRepo(ownerName, name, viewer, 'read', 'repo.wiki');
    } catch (err) {
      if (err instanceof AppError && err.kind === 'forbidden') throw notFound();
      throw err;
    }
    if (!found.repo.has_wiki) throw notFound('the wiki of this repository is turned off');
    if (need === 'write') {
      if ((found.access.units.get('repo.wiki') ?? 0) < AccessMode.write) {
        throw forbidden('you need write access to the wiki of this repository');
      }
      if (found.repo.is_archived) throw forbidden('repo is archived');
    }
    return found;
  }

  /** Whether `access` writes the wiki (and the repository is not archived): the web's edit buttons. */
  canWrite(repo: RepoRow, access: RepoAccess): boolean {
    return (access.units.get('repo.wiki') ?? 0) >= AccessMode.write && !repo.is_archived;
  }

  /** Creates the wiki's repository when it does not exist yet (whole, or not at all). */
  async ensure(repo: { id: number }): Promise<string> {
    const dir = this.pathOf(repo);
    if (this.exists(repo)) return dir;
    const scratch = scratchDir(path.dirname(dir), 'wiki');
    try {
      await git(['init', '--bare', '--quiet', `--initial-branch=${WIKI_BRANCH}`, scratch]);
      await git(['config', 'receive.denyNonFastForwards', 'false'], { gitDir: scratch });
      await git(['config', 'uploadpack.allowFilter', 'true'], { gitDir: scratch });
      try {
        fs.renameSync(scratch, dir);
      } catch (err) {
        // Created meanwhile (another request): that one is the wiki.
        if (!this.exists(repo)) throw err;
      }
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
    return dir;
  }

  /** The branch the wiki's HEAD names and its commit (undefined before the first page). */
  async head(dir: string): Promise<{ branch: string; oid: string | undefined }> {
    const r = await git(['symbolic-ref', '--quiet', 'HEAD'], { gitDir: dir, okCodes: [1, 128] });
    const ref = r.code === 0 ? r.stdout.toString('utf8').trim() : `refs/heads/${WIKI_BRANCH}`;
    const branch = ref.replace(/^refs\/heads\//, '');
    const c = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      gitDir: dir,
      okCodes: [1, 128],
    });
    return { branch, oid: c.code === 0 ? c.stdout.toString('utf8').trim() : undefined };
  }

  /**
   * After a push to the wiki: when HEAD names a branch that does not exist and the wiki has
   * exactly one branch (a first push of another branch name), HEAD names that one.
   */
  async afterPush(repo: { id: number }): Promise<void> {
    const dir = this.pathOf(repo);
    if (!this.exists(repo)) return;
    const { oid } = await this.head(dir);
    if (oid) return;
    const heads = await refLists.refs(dir, 'refs/heads/');
    if (heads.length === 1) await git(['symbolic-ref', 'HEAD', heads[0]!.ref], { gitDir: dir });
  }

  /** The wiki's directory and head commit; 404 before the wiki has any page. */
  private async requireHead(repo: RepoRow): Promise<{ dir: string; oid: string; branch: string }> {
    const dir = this.pathOf(repo);
    if (!this.exists(repo)) throw notFound('the wiki does not exist yet');
    const { oid, branch } = await this.head(dir);
    if (!oid) throw notFound('the wiki has no pages yet');
    return { dir, oid, branch };
  }

  /**
   * The file of web path `web` in `commit`: the file named like the web path itself (older wikis)
   * first, then its proper file name, then that name unescaped (Forgejo's lookups).
   */
  private async findFile(
    dir: string,
    commit: string,
    web: string,
  ): Promise<{ file: string; oid: string; size: number } | undefined> {
    const proper = webPathToGitPath(web);
    const candidates = [proper, unescape(proper)].filter(
      (f, i, all): f is string => f !== undefined && isSafeGitPath(f) && all.indexOf(f) === i,
    );
    for (const file of candidates) {
      const e = await trees.entryAt(dir, commit, file);
      if (e && e.type === 'blob') return { file, oid: e.oid, size: e.size };
    }
    return undefined;
  }

  /** Forgejo's prepareGitPath: the file to write for `web`, and whether it exists. */
  private async fileFor(
    dir: string,
    commit: string | undefined,
    web: string,
  ): Promise<{ file: string; exists: boolean }> {
    const proper = webPathToGitPath(web);
    const literal = `${web}.md`;
    if (!commit) return { file: proper, exists: false };
    if (isSafeGitPath(literal) && (await trees.entryAt(dir, commit, literal))?.type === 'blob') {
      return { file: literal, exists: true };
    }
    return {
      file: proper,
      exists: isSafeGitPath(proper) && (await trees.entryAt(dir, commit, proper))?.type === 'blob',
    };
  }

  /** One page by the name a request gives (raw URL segment); 404 when there is none. */
  async page(repo: RepoRow, rawName: string): Promise<WikiPage> {
    const { dir, oid } = await this.requireHead(repo);
    const web = webPathFromRequest(rawName);
    const found = web ? await this.findFile(dir, oid, web) : undefined;
    if (!found) throw notFound(`wiki page does not exist [name: ${webPathToTitle(web)}]`);
    const side = async (title: string) => {
      const f = await this.findFile(dir, oid, titleToWebPath(title));
      return f && f.size <= MAX_CONTENT ? data.readBlob(dir, f.oid) : null;
    };
    const [content, history, count, sidebar, footer] = await Promise.all([
      found.size <= MAX_CONTENT ? data.readBlob(dir, found.oid) : null,
      data.log(dir, { from: oid, path: found.file, limit: 1 }),
      data.countCommits(dir, { from: oid, path: found.file }),
      side('_Sidebar'),
      side('_Footer'),
    ]);
    // The page's own name, however the request escaped it.
    const canonical = gitPathToWebPath(found.file) ?? web;
    return {
      webPath: canonical,
      title: webPathToTitle(canonical),
      ...found,
      content,
      lastCommit: history[0]!,
      commitCount: count,
      sidebar,
      footer,
    };
  }

  /** The pages at the top of the wiki (Markdown files), in tree order, with their last commits. */
  async pages(
    repo: RepoRow,
    limit: number,
    offset: number,
  ): Promise<[Array<WikiPageFile & { lastCommit: data.CommitData | undefined }>, number]> {
    const { dir, oid } = await this.requireHead(repo);
    const all: WikiPageFile[] = [];
    for (const e of await trees.listTree(dir, oid)) {
      if (e.type !== 'blob' || e.mode !== '100644') continue;
      const web = gitPathToWebPath(e.path);
      if (web === undefined) continue;
      all.push({ webPath: web, title: webPathToTitle(web), file: e.path, oid: e.oid, size: e.size });
    }
    const slice = all.slice(offset, offset + limit);
    const last = await trees.lastCommits(
      dir,
      oid,
      '',
      slice.map((p) => p.file),
    );
    const commits = await data.commitsByOids(
      dir,
      [...last.values()].map((c) => c.oid),
    );
    return [slice.map((p) => ({ ...p, lastCommit: commits.get(last.get(p.file)?.oid ?? '') })), all.length];
  }

  /** The commits that changed a page, newest first, a page of REVISIONS_PER_PAGE at a time. */
  async revisions(repo: RepoRow, rawName: string, page: number): Promise<[data.CommitData[], number]> {
    const { dir, oid } = await this.requireHead(repo);
    const web = webPathFromRequest(rawName) || 'Home';
    const found = await this.findFile(dir, oid, web);
    if (!found) throw notFound(`wiki page does not exist [name: ${webPathToTitle(web)}]`);
    const skip = (Math.max(page, 1) - 1) * REVISIONS_PER_PAGE;
    return Promise.all([
      data.log(dir, { from: oid, path: found.file, skip, limit: REVISIONS_PER_PAGE }),
      data.countCommits(dir, { from: oid, path: found.file }),
    ]);
  }

  /** A commit of the wiki (full or abbreviated hex id) with its unified diff; 404 when there is none. */
  async commit(repo: RepoRow, sha: string): Promise<{ commit: data.CommitData; diff: string }> {
    const { dir } = await this.requireHead(repo);
    if (!/^[0-9a-f]{7,64}$/.test(sha)) throw notFound('commit does not exist');
    const r = await git(['rev-parse', '--verify', '--quiet', `${sha}^{commit}`], {
      gitDir: dir,
      okCodes: [1, 128],
    });
    const oid = r.code === 0 ? r.stdout.toString('utf8').trim() : '';
    const commit = oid ? await data.getCommit(dir, oid, false) : undefined;
    if (!commit) throw notFound('commit does not exist');
    return { commit, diff: await data.diffText(dir, commit.oid, false) };
  }

  /** POST /wiki/new: a new page; 400 when its name is reserved or taken. Returns its web path. */
  async create(doer: UserRow, repo: RepoRow, input: WikiWrite): Promise<string> {
    const title = input.title ?? '';
    if (title.trim() === '') throw badRequest('[Title]: the title of the page is empty');
    const web = titleToWebPath(title);
    const message = input.message || `Add ${JSON.stringify(title)}`;
    await this.write(doer, repo, 'created', undefined, web, input.content, message);
    return web;
  }

  /**
   * PATCH /wiki/page/{name}: new content, and a new name when a title is given. As in Forgejo, a
   * page that does not exist is created. Returns the page's (new) web path.
   */
  async edit(doer: UserRow, repo: RepoRow, rawName: string, input: WikiWrite): Promise<string> {
    const old = webPathFromRequest(rawName);
    if (!old) throw notFound();
    const web = input.title?.trim() ? titleToWebPath(input.title) : old;
    const message = input.message || `Update ${JSON.stringify(web)}`;
    await this.write(doer, repo, 'edited', old, web, input.content, message, input.base);
    return web;
  }

  /** DELETE /wiki/page/{name}; 404 when there is no such page. */
  async remove(doer: UserRow, repo: RepoRow, rawName: string): Promise<void> {
    const web = webPathFromRequest(rawName);
    if (!web || !this.exists(repo)) throw notFound('wiki page does not exist');
    await this.serialized(repo.id, async () => {
      const dir = this.pathOf(repo);
      await this.commitChange(doer, dir, `Delete page ${JSON.stringify(web)}`, async (parent) => {
        const target = parent ? await this.fileFor(dir, parent, web) : undefined;
        if (!target?.exists) throw notFound('wiki page does not exist');
        return [{ path: target.file, remove: true }];
      });
    });
    await this.announce(repo, doer, 'deleted', web, '');
  }

  private async write(
    doer: UserRow,
    repo: RepoRow,
    action: WikiAction,
    oldWeb: string | undefined,
    web: string,
    content: Buffer,
    message: string,
    base?: string,
  ): Promise<void> {
    if (isReserved(web)) throw badRequest(`[Title]: wiki title is reserved [title: ${webPathToTitle(web)}]`);
    await this.serialized(repo.id, async () => {
      const dir = await this.ensure(repo);
      await this.commitChange(doer, dir, message, async (parent) => {
        const target = await this.fileFor(dir, parent, web);
        if (!isSafeGitPath(target.file)) throw badRequest('[Title]: invalid wiki page name');
        const changes: write.TreeChange[] = [];
        if (oldWeb === undefined) {
          if (target.exists) {
            throw badRequest(`wiki page already exists [title: ${webPathToTitle(web)}]`);
          }
        } else if (parent) {
          const old = await this.fileFor(dir, parent, oldWeb);
          if (base) {
            const [last] = old.exists ? await data.log(dir, { from: parent, path: old.file, limit: 1 }) : [];
            if (last?.oid !== base) {
              throw conflict('[Content]: the page was changed by someone else since you started editing it');
            }
          }
          if (oldWeb !== web && old.exists) changes.push({ path: old.file, remove: true });
        }
        const oid = await write.hashBlob(dir, content);
        changes.push({ path: target.file, mode: '100644', oid });
        return changes;
      });
    });
    await this.announce(repo, doer, action, web, message);
  }

  /**
   * One commit on the wiki's branch: `changes` computes the tree changes from the current head
   * (undefined for the first page); the branch moves only from that head, and the whole is tried
   * again when a push moved it meanwhile.
   */
  private async commitChange(
    doer: UserRow,
    dir: string,
    message: string,
    changes: (parent: string | undefined) => Promise<write.TreeChange[]>,
  ): Promise<string> {
    const who = this.identOf(doer);
    for (let attempt = 0; attempt < 5; attempt++) {
      const { branch, oid: parent } = await this.head(dir);
      const tree = await write.writeTree(dir, parent ?? null, await changes(parent));
      const commit = await write.commitTree(dir, tree, parent ? [parent] : [], message, who, who);
      if (await data.updateRef(dir, `refs/heads/${branch}`, parent ?? data.ZERO_OID, commit)) return commit;
    }
    throw conflict('the wiki changed while the page was written: try again');
  }

  /** Runs `fn` after the writes to the same wiki queued before it. */
  private serialized<T>(repoId: number, fn: () => Promise<T>): Promise<T> {
    return this.writes.run(repoId, fn);
  }

  /** The doer as author and committer (the no-reply address when they keep theirs private). */
  private identOf(doer: UserRow): write.Ident {
    const host = new URL(this.deps.rootUrl).hostname || os.hostname();
    return {
      name: doer.full_name || doer.name,
      email: doer.keep_email_private ? `${doer.lower_name}@noreply.${host}` : doer.email,
    };
  }

  private async announce(
    repo: RepoRow,
    doer: UserRow,
    action: WikiAction,
    page: string,
    comment: string,
  ): Promise<void> {
    await this.deps.events.emit('wiki.changed', { repoId: repo.id, doerId: doer.id, action, page, comment });
  }
}
