// The rules of the git data API for writing files: one or several files created, updated (moved) or
// deleted as one commit, or a diff applied, on a branch or a new one, without a work tree. Author
// and committer are picked as in Forgejo; the ref moves like a push (data-refs.ts), only if nobody
// moved the branch meanwhile.
import path from 'node:path';
import { badRequest, conflict, invalid, invalidField, notFound } from '../errors.js';
import { checkBranchName } from '../repos/names.js';
import type { UserRow } from '../users/tables.js';
import * as data from './data.js';
import * as trees from './trees.js';
import * as write from './write.js';
import type { CommitData, ResolvedRef } from './data.js';
import { contentsType, type ContentsEntry } from './data-schemas.js';
import { MAX_BLOB_SIZE, type GitDataService, type Target } from './data-service.js';
import type { GitRefService } from './data-refs.js';
import type { Ident, TreeChange } from './write.js';

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

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface GitFileServiceDeps {
  reader: Pick<GitDataService, 'isEmpty' | 'resolveBranch'>;
  refs: Pick<GitRefService, 'assertQuota' | 'move' | 'doerIdent'>;
}

export class GitFileService {
  private readonly reader: GitFileServiceDeps['reader'];
  private readonly refs: GitFileServiceDeps['refs'];

  constructor(deps: GitFileServiceDeps) {
    this.reader = deps.reader;
    this.refs = deps.refs;
  }

  /**
   * Author and committer as Forgejo picks them: each given one (its e-mail set) is used; when only
   * one is given it is both; when none, both are the doer.
   */
  private identities(doer: UserRow, input: CommitInput): { author: Ident; committer: Ident } {
    const me = this.refs.doerIdent(doer);
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
          const from = await trees.entryAt(t.dir, base.oid, fromPath);
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
          changes.push({ path: treePath, mode, oid: await write.hashBlob(t.dir, content!) });
        }
      }
      const verbs = { create: 'Add', update: 'Update', delete: 'Delete' } as const;
      const message = (['create', 'update', 'delete'] as const)
        .map((op) => ops.filter((o) => o.op === op).map((o) => o.treePath))
        .map((paths, i) => (paths.length ? `${Object.values(verbs)[i]} ${paths.join(', ')}` : ''))
        .filter(Boolean)
        .join('\n');
      return { tree: await write.writeTree(t.dir, base?.oid ?? null, changes), message };
    });

    const { oid, commit, branch } = done;
    const entries: (ContentsEntry | null)[] = [];
    for (const o of ops) {
      if (o.op === 'delete') {
        entries.push(null);
        continue;
      }
      const written = (await trees.entryAt(t.dir, oid, o.treePath))!;
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
      const r = await write.applyPatch(t.dir, base.oid, input.patch);
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
    if (!(await this.reader.isEmpty(t))) {
      base = await this.reader.resolveBranch(t, branch);
      if (newBranch !== branch && (await data.resolveRef(t.dir, `refs/heads/${newBranch}`))) {
        throw invalidField('new_branch', `branch already exists [name: ${newBranch}]`);
      }
    }
    const built = await build(base, branch);
    await this.refs.assertQuota(t);
    let message = input.message?.trim() || built.message;
    if (input.signoff) message += `\n\nSigned-off-by: ${committer.name} <${committer.email}>`;
    const oid = await write.commitTree(t.dir, built.tree, base ? [base.oid] : [], message, author, committer);

    const update = {
      ref: `refs/heads/${newBranch}`,
      oldOid: base && newBranch === branch ? base.oid : data.ZERO_OID,
      newOid: oid,
    };
    await this.refs.move(t, doer, update, `branch ${newBranch} was changed meanwhile; try again`);
    return { oid, commit: (await data.getCommit(t.dir, oid, false))!, branch: newBranch };
  }

  /** Forgejo's checks of the path a file is written to, against the tree it is written into. */
  private async checkTarget(t: Target, base: string, treePath: string, fromPath: string, op: string) {
    const along = await trees.entriesAlong(t.dir, base, treePath);
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
