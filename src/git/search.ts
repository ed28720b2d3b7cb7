// Code search in one repository: `git grep` over a commit (the default branch's head), as Forgejo
// searches when [indexer] REPO_INDEXER_ENABLED is off: the words as typed (no pattern language),
// case-insensitive, text files only. Bounded so a common word in a large repository answers quickly:
// at most MAX_FILES files with at most MAX_LINES lines each, and git stopped once that is read (or
// after TIME_LIMIT_MS).
import { spawn } from 'node:child_process';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow, Viewer } from '../users/tables.js';
import { AccessMode } from '../orgs/tables.js';
import { resolveRef } from './data.js';
import type { GitDataService, Target } from './data-service.js';
import { gitEnv } from './git.js';

export interface CodeLine {
  /** 1-based line number. */
  number: number;
  text: string;
}

export interface CodeHit {
  path: string;
  lines: CodeLine[];
}

export interface CodeSearchResult {
  hits: CodeHit[];
  /** More files matched than are listed (or the search ran out of time). */
  truncated: boolean;
}

export const MAX_FILES = 50;
const MAX_LINES = 5;
const MAX_LINE_CHARS = 500;
const TIME_LIMIT_MS = 5000;

/** Files of `commit` in the bare repository `dir` with lines containing `query` (case-insensitive). */
export function grepCommit(dir: string, commit: string, query: string): Promise<CodeSearchResult> {
  return new Promise((resolve, reject) => {
    const args = [
      '--git-dir',
      dir,
      'grep',
      '-z',
      '-n',
      '-I',
      '-i',
      '-F',
      '--no-color',
      `--max-count=${MAX_LINES}`,
      '-e',
      query,
      commit,
      '--',
    ];
    const child = spawn('git', args, { env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    const hits: CodeHit[] = [];
    let truncated = false;
    let rest = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ hits, truncated });
    };
    const timer = setTimeout(() => {
      truncated = true;
      child.kill('SIGKILL');
      finish();
    }, TIME_LIMIT_MS);
    const prefix = `${commit}:`;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (done) return;
      rest += chunk;
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const record = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        // <commit>:<path> NUL <line> NUL <text>
        const [where = '', number = '', ...text] = record.split('\0');
        const path = where.startsWith(prefix) ? where.slice(prefix.length) : where;
        let hit = hits[hits.length - 1];
        if (hit?.path !== path) {
          if (hits.length === MAX_FILES) {
            truncated = true;
            child.kill('SIGKILL');
            return finish();
          }
          hit = { path, lines: [] };
          hits.push(hit);
        }
        hit.lines.push({ number: Number(number), text: text.join('\0').slice(0, MAX_LINE_CHARS) });
      }
    });
    child.on('error', (err) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    // 1: nothing matched; an unreadable repository (128) reads as no match.
    child.on('close', finish);
  });
}

/** One repository's matches in a site-wide search. */
export interface RepoCodeHits {
  repo: RepoRow;
  owner: UserRow;
  branch: string;
  hits: CodeHit[];
}

/** Repositories a site-wide search looks into: the most recently updated the viewer may read. */
export const SITE_REPOS = 100;
/** Repositories searched at a time. */
const SITE_PARALLEL = 4;

export interface CodeSearchDeps {
  gitData: Pick<GitDataService, 'open' | 'locate' | 'isEmpty'>;
  repos: Pick<RepoService, 'list' | 'accessMany' | 'pathOf'>;
  users: Pick<UserService, 'getByIds'>;
}

/** What the search pages ask: a repository's default branch, or those of the whole site, searched for the viewer. */
export class CodeSearchService {
  constructor(private readonly deps: CodeSearchDeps) {}

  /** The repository (read access checked, 404 otherwise) and, for a query, its matches. */
  async search(
    owner: string,
    name: string,
    viewer: Viewer | null,
    query: string,
  ): Promise<{ t: Target; branch: string; result: CodeSearchResult | undefined }> {
    const t = await this.deps.gitData.open(owner, name, viewer, 'read');
    const branch = t.repo.default_branch;
    if (!query || (await this.deps.gitData.isEmpty(t))) return { t, branch, result: undefined };
    const { ref } = await this.deps.gitData.locate(t, 'branch', branch);
    return { t, branch, result: await grepCommit(t.dir, ref.oid, query) };
  }

  /**
   * /explore/code: the default branches of the SITE_REPOS most recently updated repositories
   * whose code the viewer may read, searched SITE_PARALLEL at a time, until MAX_FILES files
   * matched. `truncated` when files or repositories were left out.
   */
  async searchSite(
    viewer: Viewer | null,
    query: string,
  ): Promise<{ repos: RepoCodeHits[]; truncated: boolean }> {
    const viewerId = viewer === null ? null : viewer.isAdmin ? undefined : viewer.id;
    const [rows, total] = await this.deps.repos.list({ viewerId, orderBy: 'recentupdate' }, SITE_REPOS, 0);
    const access = await this.deps.repos.accessMany(rows, viewer);
    const readable = rows.filter(
      (r) => !r.is_empty && (access.get(r.id)?.units.get('repo.code') ?? AccessMode.none) >= AccessMode.read,
    );
    const owners = await this.deps.users.getByIds([...new Set(readable.map((r) => r.owner_id))]);
    const found: RepoCodeHits[] = [];
    let files = 0;
    let truncated = total > rows.length;
    let next = 0;
    const worker = async () => {
      while (next < readable.length && files < MAX_FILES) {
        const repo = readable[next++]!;
        const owner = owners.get(repo.owner_id);
        if (!owner) continue;
        const dir = this.deps.repos.pathOf(repo);
        const head = await resolveRef(dir, repo.default_branch);
        if (!head || head.kind !== 'branch') continue;
        const result = await grepCommit(dir, head.oid, query);
        if (result.truncated) truncated = true;
        if (!result.hits.length) continue;
        const room = MAX_FILES - files;
        if (room <= 0) {
          truncated = true;
          break;
        }
        if (result.hits.length > room) truncated = true;
        const hits = result.hits.slice(0, room);
        files += hits.length;
        found.push({ repo, owner, branch: head.name, hits });
      }
      if (next < readable.length) truncated = true;
    };
    await Promise.all(Array.from({ length: SITE_PARALLEL }, worker));
    // The order of the repositories (most recently updated first), whatever finished first.
    const order = new Map(readable.map((r, i) => [r.id, i]));
    found.sort((a, b) => order.get(a.repo.id)! - order.get(b.repo.id)!);
    return { repos: found, truncated };
  }
}
