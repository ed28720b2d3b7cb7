// Commit statuses: created by CI and other tools for a commit given by its full SHA, listed, and
// combined into one state per commit (the newest status of each context counts). Statuses go
// with their repository through the ON DELETE CASCADE of commit_status.repo_id.
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import { invalidField, notFound } from '../errors.js';
import { git } from '../git/git.js';
import { isSafeRevision, revParseCommit } from '../git/revision.js';
import type { Page } from '../http/pagination.js';
import type { RepoService } from '../repos/service.js';
import * as store from './store.js';
import type { StatusSort } from './store.js';
import type { StatusRow } from './tables.js';

declare module '../events/bus.js' {
  interface AnvilEvents {
    /** A commit status was added (for scheduled merges waiting on checks). */
    'status.created': { repoId: number; sha: string; doerId: number };
  }
}

export const STATES = ['pending', 'success', 'error', 'failure', 'warning'] as const;
export type CommitState = (typeof STATES)[number];

/** Forgejo's priorities: the combined state is the worst one present. */
const PRIORITY: Record<CommitState, number> = { error: 0, failure: 1, warning: 2, pending: 3, success: 4 };

/** The worst of `states` (error, failure, warning, pending, success), or null when there are none. */
export function worstState(states: Iterable<string>): CommitState | null {
  let worst: CommitState | null = null;
  for (const s of states) {
    if (!(s in PRIORITY)) continue;
    const state = s as CommitState;
    if (worst === null || PRIORITY[state] < PRIORITY[worst]) worst = state;
  }
  return worst;
}

export interface CreateStatusInput {
  state: CommitState;
  target_url?: string | null | undefined;
  description?: string | null | undefined;
  context?: string | null | undefined;
}

const HEX = /^[0-9a-f]+$/i;

export interface StatusServiceDeps {
  db: Db;
  events: EventBus;
  repos: Pick<RepoService, 'pathOf'>;
}

export class StatusService {
  private readonly db: Db;

  constructor(private readonly deps: StatusServiceDeps) {
    this.db = deps.db;
  }

  /** Length of a full object name in `repo`: 40 (SHA-1) or 64 (SHA-256). */
  private shaLength(repo: RepoRow): number {
    return repo.object_format_name === 'sha256' ? 64 : 40;
  }

  /**
   * `sha` as the full (lower-case) SHA of a commit of `repo`: 422 when it is not a full SHA
   * (abbreviated ones included), 404 when no such commit exists.
   */
  async requireCommitSha(repo: RepoRow, sha: string): Promise<string> {
    const n = this.shaLength(repo);
    if (!HEX.test(sha) || sha.length !== n) {
      throw invalidField(
        'sha',
        `the full commit SHA (${n} hexadecimal characters) is required, abbreviated SHAs are not accepted [sha: ${sha}]`,
      );
    }
    const full = sha.toLowerCase();
    if (!(await this.isCommit(repo, full))) throw notFound(`commit does not exist [sha: ${full}]`);
    return full;
  }

  /**
   * The commit `ref` names, as Forgejo's ResolveRefOrSha finds it: a branch, else a tag, else any
   * revision git reads (a full or abbreviated SHA, `main~1`); undefined when it names nothing (the
   * routes then answer no statuses, as Forgejo does, rather than 404).
   */
  async resolveRef(repo: RepoRow, ref: string): Promise<string | undefined> {
    if (!isSafeRevision(ref)) return undefined;
    const dir = this.deps.repos.pathOf(repo);
    // Exact ref names first: show-ref --verify takes no revision syntax (no ~, ^, @{...}).
    for (const full of [`refs/heads/${ref}`, `refs/tags/${ref}`]) {
      const r = await git(['show-ref', '--verify', '--hash', full], { gitDir: dir, okCodes: [1, 128] });
      const oid = r.code === 0 ? r.stdout.toString().trim() : '';
      if (oid && HEX.test(oid)) {
        const commit = await this.peelToCommit(repo, oid);
        if (commit) return commit;
      }
    }
    return revParseCommit(dir, ref);
  }

  private async isCommit(repo: RepoRow, sha: string): Promise<boolean> {
    return (await this.peelToCommit(repo, sha)) === sha;
  }

  /** The commit `oid` is or (for an annotated tag) points to, or undefined. */
  private async peelToCommit(repo: RepoRow, oid: string): Promise<string | undefined> {
    const r = await git(['rev-parse', '--verify', '--quiet', `${oid}^{commit}`], {
      gitDir: this.deps.repos.pathOf(repo),
      okCodes: [1, 128],
    });
    const out = r.stdout.toString().trim();
    return r.code === 0 && HEX.test(out) ? out : undefined;
  }

  async create(repo: RepoRow, creator: UserRow, sha: string, input: CreateStatusInput): Promise<StatusRow> {
    const full = await this.requireCommitSha(repo, sha);
    const now = nowUnix();
    const row = await transaction(this.db, async (tx) =>
      store.insert(tx, {
        repo_id: repo.id,
        sha: full,
        status_index: await store.nextIndex(tx, repo.id, full),
        state: input.state,
        target_url: (input.target_url ?? '').trim(),
        description: (input.description ?? '').trim(),
        context: (input.context ?? '').trim(),
        creator_id: creator.id,
        created_unix: now,
        updated_unix: now,
      }),
    );
    await this.deps.events.emit('status.created', { repoId: repo.id, sha: full, doerId: creator.id });
    return row;
  }

  list(
    repo: RepoRow,
    sha: string,
    f: { sort?: StatusSort | undefined; state?: CommitState | undefined },
    page: Page,
  ) {
    return store.list(this.db, repo.id, sha, f, page.limit, page.offset);
  }

  /** One page of the newest status of each context, and the combined state of all contexts. */
  async combined(
    repo: RepoRow,
    sha: string,
    page: Page,
  ): Promise<{ rows: StatusRow[]; total: number; state: CommitState | null }> {
    const [[rows, total], { state }] = await Promise.all([
      store.latest(this.db, repo.id, sha, page.limit, page.offset),
      this.combinedState(repo, sha),
    ]);
    return { rows, total, state };
  }

  /**
   * The combined state of a commit (the worst of the newest status of each context; null when it
   * has no status) and the newest state of each context. For merges: required status checks.
   */
  async combinedState(
    repo: RepoRow,
    sha: string,
  ): Promise<{ state: CommitState | null; contexts: Map<string, CommitState> }> {
    const rows = await store.latestStates(this.db, repo.id, sha.toLowerCase());
    const contexts = new Map<string, CommitState>();
    for (const r of rows) if (r.state in PRIORITY) contexts.set(r.context, r.state as CommitState);
    return { state: worstState(contexts.values()), contexts };
  }
}
