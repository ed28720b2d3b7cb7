// Commits that refer to issues, as Forgejo reads them. A pushed commit whose message mentions `#N`
// or `owner/repo#N` adds a "referenced in commit" entry to that issue's timeline (once per commit
// and issue, whichever branches the commit is pushed to). On the repository's default branch, a
// closing keyword before the reference (`close[sd]`, `fix(es|ed)`, `resolve[sd]`) closes the issue
// and a reopening one (`reopen[s|ed]`) reopens it, with the commit as the cause (the `issues`
// webhook's commit_id), when the pusher may write the issue's repository. Pull requests are
// referenced, never closed or reopened this way. The parsing is pure; the push handling is
// idempotent (listeners hear of a push at least once).
import type { Logger } from 'pino';
import { git, ZERO_OID } from '../git/git.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { IssueService } from './service.js';

export type RefAction = 'close' | 'reopen';

export interface IssueReference {
  /** Absent: the repository the commit is in. */
  owner?: string;
  repo?: string;
  index: number;
  action?: RefAction;
}

const CLOSE = ['close', 'closes', 'closed', 'fix', 'fixes', 'fixed', 'resolve', 'resolves', 'resolved'];
const REOPEN = ['reopen', 'reopens', 'reopened'];

// A reference stands alone (start, space or an opening bracket before it), optionally after a
// keyword and a colon; `owner/repo` names are Forgejo's (letters, digits, '-', '_', '.').
const REFERENCE =
  /(?:^|[\s([{,;])(?:([A-Za-z]+):?\s+)?(?:([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*))?#(\d{1,10})(?![\w#/-])/g;

/** The issues a commit message refers to, each once, with the keyword before it if any. */
export function parseIssueReferences(message: string): IssueReference[] {
  const out = new Map<string, IssueReference>();
  for (const m of message.matchAll(REFERENCE)) {
    const [, keyword, owner, repo, index] = m;
    const word = keyword?.toLowerCase() ?? '';
    const action: RefAction | undefined = CLOSE.includes(word)
      ? 'close'
      : REOPEN.includes(word)
        ? 'reopen'
        : undefined;
    const key = `${owner?.toLowerCase() ?? ''}/${repo?.toLowerCase() ?? ''}#${index}`;
    const ref: IssueReference = { index: Number(index), ...(owner && repo ? { owner, repo } : {}) };
    if (action) ref.action = action;
    // A later keyword for the same issue wins, as the last word in a message usually does.
    const had = out.get(key);
    out.set(key, had && !action ? had : ref);
  }
  return [...out.values()];
}

/** Most commits of one push read for references (Forgejo caps what a push processes too). */
export const MAX_REFERENCING_COMMITS = 1000;

interface Commit {
  sha: string;
  message: string;
}

/** The commits a ref update brought, oldest first: one `git log` per updated branch. */
async function newCommits(dir: string, u: RefUpdate): Promise<Commit[]> {
  const range =
    u.oldOid === ZERO_OID
      ? [u.newOid, '--not', `--exclude=${u.ref.slice('refs/heads/'.length)}`, '--branches']
      : [`${u.oldOid}..${u.newOid}`];
  const out = await git(
    ['log', `--max-count=${MAX_REFERENCING_COMMITS}`, '--format=%H%x00%B%x1e', ...range, '--'],
    { gitDir: dir },
  );
  return out.stdout
    .toString('utf8')
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter(Boolean)
    .map((r) => {
      const i = r.indexOf('\0');
      return { sha: r.slice(0, i), message: r.slice(i + 1) };
    })
    .reverse();
}

export interface CommitReferencesDeps {
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'getById' | 'pathOf' | 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  issues: Pick<IssueService, 'findIssue' | 'addCommitReference' | 'closeByCommit'>;
}

/** Listens to pushes and applies the references of their new commits (see the top of this file). */
export class CommitReferences {
  constructor(private readonly deps: CommitReferencesDeps) {
    deps.events.on('push', (e) => this.handlePush(e));
  }

  /** Reads the references of a push's new commits and acts on them. */
  async handlePush(e: { repoId: number; pusherId: number; updates: RefUpdate[] }): Promise<void> {
    const { repos, users, log } = this.deps;
    const repo = await repos.getById(e.repoId);
    const pusher = await users.getById(e.pusherId);
    if (!repo || !pusher) return;
    const viewer = { id: pusher.id, isAdmin: pusher.is_admin === 1 };
    const owner = await users.getById(repo.owner_id);
    if (!owner) return;
    const dir = repos.pathOf(repo);
    for (const u of e.updates) {
      if (u.newOid === ZERO_OID || !u.ref.startsWith('refs/heads/')) continue;
      const onDefault = u.ref === `refs/heads/${repo.default_branch}`;
      let commits: Commit[];
      try {
        commits = await newCommits(dir, u);
      } catch (err) {
        log.warn({ err, repoId: repo.id, ref: u.ref }, 'reading pushed commits for references failed');
        continue;
      }
      for (const c of commits) {
        for (const ref of parseIssueReferences(c.message)) {
          await this.applyReference({ repo, owner, pusher, viewer, commit: c, ref, onDefault });
        }
      }
    }
  }

  private async applyReference(a: {
    repo: RepoRow;
    owner: UserRow;
    pusher: UserRow;
    viewer: { id: number; isAdmin: boolean };
    commit: Commit;
    ref: IssueReference;
    onDefault: boolean;
  }): Promise<void> {
    const { repos, issues } = this.deps;
    let target = a.repo;
    if (a.ref.owner && a.ref.repo) {
      // Another repository: only one the pusher may read (a private one stays unmentioned).
      try {
        target = (await repos.requireRepo(a.ref.owner, a.ref.repo, a.viewer, 'read', 'repo.issues')).repo;
      } catch {
        return;
      }
    }
    const issue = await issues.findIssue(target, a.ref.index);
    if (!issue) return;
    await issues.addCommitReference(
      issue,
      a.pusher,
      a.repo,
      a.owner,
      a.commit.sha,
      firstLine(a.commit.message),
    );
    if (!a.ref.action || !a.onDefault || issue.is_pull) return;
    try {
      await issues.closeByCommit(target, a.ref.index, a.pusher, a.commit.sha, a.ref.action === 'close');
    } catch {
      // The pusher may not write that repository's issues: the reference stays a reference.
    }
  }
}

const firstLine = (message: string) => message.split('\n', 1)[0]!.trim();
