// Forgejo's webhook payloads (modules/structs/hook.go): push, create, delete, fork, repository,
// issues, issue_comment, pull_request (every pull_request_* event) and release. Repositories are shown as their owner sees them and users
// as an anonymous caller does (e-mail addresses hidden unless public), as Forgejo does.
import type { AttachmentService } from '../attachments/service.js';
import type { Db } from '../db/database.js';
import { git, ZERO_OID } from '../git/git.js';
import type { IssuePresenter } from '../issues/present.js';
import { GHOST_USER } from '../issues/schemas.js';
import type { CommentRow, IssueRow } from '../issues/tables.js';
import type { PullPresenter } from '../pulls/present.js';
import type { PullRequestJson } from '../pulls/schemas.js';
import type { Pull } from '../pulls/tables.js';
import { AccessMode } from '../orgs/tables.js';
import { REPO_UNITS } from '../orgs/service.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { ForkService } from '../repos/forks.js';
import { toRepoJson, type RepositoryJson } from '../repos/schemas.js';
import type { RepoRow } from '../repos/tables.js';
import { toReleaseJson } from '../releases/schemas.js';
import type { ReleaseRow } from '../releases/tables.js';
import { toUserJson, type UserJson } from '../users/schemas.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';

/** Commits listed in a push payload at most (total_commits counts them all). */
export const MAX_PAYLOAD_COMMITS = 20;

const OWNER_ACCESS: RepoAccess = {
  mode: AccessMode.owner,
  units: new Map(REPO_UNITS.map((u) => [u, AccessMode.owner])),
};

/** A repository with what every payload about it carries. */
export interface Subject {
  repo: RepoRow;
  owner: UserRow;
  json: RepositoryJson;
}

export interface PayloadUser {
  name: string;
  email: string;
  username: string;
}

export interface PayloadCommit {
  id: string;
  message: string;
  url: string;
  author: PayloadUser;
  committer: PayloadUser;
  verification: {
    verified: boolean;
    reason: string;
    signature: string;
    signer: null;
    payload: string;
  };
  timestamp: string;
  added: string[];
  removed: string[];
  modified: string[];
}

interface RawCommit {
  id: string;
  authorName: string;
  authorEmail: string;
  authorDate: string;
  committerName: string;
  committerEmail: string;
  message: string;
}

const FORMAT = ['%H', '%an', '%ae', '%aI', '%cn', '%ce', '%B'].join('%x00') + '%x1e';

/** Commits by revision arguments, newest first (at most `limit`). */
async function readCommits(dir: string, revArgs: string[], limit: number): Promise<RawCommit[]> {
  const out = await git(['log', `--max-count=${limit}`, `--format=${FORMAT}`, ...revArgs, '--'], {
    gitDir: dir,
  });
  return out.stdout
    .toString('utf8')
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.length > 0)
    .map((r) => {
      const [id, an, ae, ad, cn, ce, ...msg] = r.split('\0');
      return {
        id: id!,
        authorName: an!,
        authorEmail: ae!,
        authorDate: ad!,
        committerName: cn!,
        committerEmail: ce!,
        message: msg.join('\0'),
      };
    });
}

async function countCommits(dir: string, revArgs: string[]): Promise<number> {
  const out = await git(['rev-list', '--count', ...revArgs, '--'], { gitDir: dir });
  return Number(out.stdout.toString('utf8').trim()) || 0;
}

interface FileChanges {
  added: string[];
  removed: string[];
  modified: string[];
}

/**
 * The files each commit added, removed and modified, by one `git diff-tree` for all of them (a
 * merge shows the files that differ from every parent, as `git log -c` does).
 */
async function fileChanges(dir: string, ids: string[]): Promise<Map<string, FileChanges>> {
  const out = new Map<string, FileChanges>();
  if (ids.length === 0) return out;
  const r = await git(['diff-tree', '--stdin', '-r', '-c', '--root', '--no-renames', '--name-status', '-z'], {
    gitDir: dir,
    input: ids.join('\n') + '\n',
  });
  const tokens = r.stdout.toString('utf8').split('\0');
  let current: FileChanges | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (/^[0-9a-f]{40,64}$/.test(t)) {
      current = { added: [], removed: [], modified: [] };
      out.set(t, current);
    } else if (/^[A-Z]+$/.test(t) && current) {
      const file = tokens[++i] ?? '';
      if (t[0] === 'A') current.added.push(file);
      else if (t[0] === 'D') current.removed.push(file);
      else current.modified.push(file);
    }
  }
  return out;
}

/** What some pull_request events add to the payload. */
export interface PullExtra {
  changes?: Record<string, { from: string }> | undefined;
  commitId?: string | undefined;
  review?: { type: string; content: string } | undefined;
  requestedReviewer?: UserJson | undefined;
}

export interface PayloadsDeps {
  /** The accounts behind commits' e-mail addresses (the webhooks store's query). */
  db: Db;
  repos: Pick<RepoService, 'pathOf'>;
  users: Pick<UserService, 'getById'>;
  forks: Pick<ForkService, 'parentsJson'>;
  attachments: Pick<AttachmentService, 'ofReleases'>;
  /** Issues and comments as the API shows them to an anonymous caller. */
  issues: Pick<IssuePresenter, 'issue' | 'comments'>;
  pulls: Pick<PullPresenter, 'pull'>;
  rootUrl: string;
}

export class Payloads {
  private readonly rootUrl: string;

  constructor(private readonly deps: PayloadsDeps) {
    this.rootUrl = deps.rootUrl;
  }

  /** A user as an anonymous caller sees them; the Ghost user when the account is gone. */
  user(u: UserRow | undefined): UserJson {
    return toUserJson(u ?? GHOST_USER, { rootUrl: this.rootUrl, viewer: null });
  }

  async userById(id: number): Promise<UserJson> {
    return this.user(await this.deps.users.getById(id));
  }

  /** The repository as its owner sees it (Forgejo's payloads use owner access). */
  async subject(repo: RepoRow, owner?: UserRow): Promise<Subject | undefined> {
    const o = owner ?? (await this.deps.users.getById(repo.owner_id));
    if (!o) return undefined;
    const parent = repo.is_fork
      ? ((await this.deps.forks.parentsJson([repo], null)).get(repo.id) ?? null)
      : null;
    const json = toRepoJson(repo, o, OWNER_ACCESS, { rootUrl: this.rootUrl, viewer: null }, parent);
    return { repo, owner: o, json };
  }

  // Git events

  /**
   * The commits of a ref update for a push payload: for a branch that existed, those between the
   * old and the new head; for a new branch, those no other branch has; none for tags.
   */
  async pushCommits(
    s: Subject,
    ref: string,
    oldOid: string,
    newOid: string,
  ): Promise<{ commits: PayloadCommit[]; total: number; head: PayloadCommit | null }> {
    const dir = this.deps.repos.pathOf(s.repo);
    if (newOid === ZERO_OID) return { commits: [], total: 0, head: null };
    if (!ref.startsWith('refs/heads/')) {
      const [head] = await this.commitsJson(s, await readCommits(dir, [`${newOid}^{commit}`], 1));
      return { commits: [], total: 0, head: head ?? null };
    }
    const branch = ref.slice('refs/heads/'.length);
    const range =
      oldOid === ZERO_OID ? [newOid, '--not', `--exclude=${branch}`, '--branches'] : [`${oldOid}..${newOid}`];
    const [raw, total] = await Promise.all([
      readCommits(dir, range, MAX_PAYLOAD_COMMITS),
      countCommits(dir, range),
    ]);
    const commits = await this.commitsJson(s, raw);
    let head = commits.find((c) => c.id === newOid) ?? null;
    if (!head) head = (await this.commitsJson(s, await readCommits(dir, [newOid], 1)))[0] ?? null;
    return { commits, total, head };
  }

  /** One commit as a PayloadCommit (the test delivery's). */
  async commit(s: Subject, oid: string): Promise<PayloadCommit | null> {
    const raw = await readCommits(this.deps.repos.pathOf(s.repo), [oid], 1);
    return (await this.commitsJson(s, raw))[0] ?? null;
  }

  private async commitsJson(s: Subject, raw: RawCommit[]): Promise<PayloadCommit[]> {
    if (raw.length === 0) return [];
    const dir = this.deps.repos.pathOf(s.repo);
    const [files, names] = await Promise.all([
      fileChanges(
        dir,
        raw.map((c) => c.id),
      ),
      store.usersByEmails(
        this.deps.db,
        raw.flatMap((c) => [c.authorEmail, c.committerEmail]),
      ),
    ]);
    return raw.map((c) => {
      const f = files.get(c.id) ?? { added: [], removed: [], modified: [] };
      return {
        id: c.id,
        message: c.message,
        url: `${s.json.html_url}/commit/${c.id}`,
        author: {
          name: c.authorName,
          email: c.authorEmail,
          username: names.get(c.authorEmail.toLowerCase()) ?? '',
        },
        committer: {
          name: c.committerName,
          email: c.committerEmail,
          username: names.get(c.committerEmail.toLowerCase()) ?? '',
        },
        verification: {
          verified: false,
          reason: 'gpg.error.not_signed_commit',
          signature: '',
          signer: null,
          payload: '',
        },
        timestamp: c.authorDate,
        added: f.added,
        removed: f.removed,
        modified: f.modified,
      };
    });
  }

  /** Forgejo's PushPayload. */
  async push(s: Subject, pusher: UserJson, ref: string, before: string, after: string) {
    const { commits, total, head } = await this.pushCommits(s, ref, before, after);
    const compare =
      before !== ZERO_OID && after !== ZERO_OID ? `${s.json.html_url}/compare/${before}...${after}` : '';
    return {
      ref,
      before,
      after,
      compare_url: compare,
      commits,
      total_commits: total,
      head_commit: head,
      repository: s.json,
      pusher,
      sender: pusher,
    };
  }

  /** Forgejo's CreatePayload (ref is the short name). */
  create(s: Subject, sender: UserJson, ref: string, refType: 'branch' | 'tag', sha: string) {
    return { sha, ref, ref_type: refType, repository: s.json, sender };
  }

  /** Forgejo's DeletePayload. */
  delete(s: Subject, sender: UserJson, ref: string, refType: 'branch' | 'tag') {
    return { ref, ref_type: refType, pusher_type: 'user', repository: s.json, sender };
  }

  /** Forgejo's ForkPayload: `forkee` is the repository forked, `repository` the new fork. */
  fork(base: Subject, fork: Subject, sender: UserJson) {
    return { forkee: base.json, repository: fork.json, sender };
  }

  /** Forgejo's RepositoryPayload. */
  repository(s: Subject, action: 'created' | 'deleted', sender: UserJson) {
    return { action, repository: s.json, organization: this.user(s.owner), sender };
  }

  // Issues

  async issue(
    s: Subject,
    issue: IssueRow,
    action: string,
    sender: UserJson,
    extra: { changes?: Record<string, { from: string }>; commitId?: string } = {},
  ) {
    const json = await this.deps.issues.issue(issue, null, s.repo);
    return {
      action,
      number: issue.index,
      ...(extra.changes && Object.keys(extra.changes).length ? { changes: extra.changes } : {}),
      issue: json,
      repository: s.json,
      sender,
      commit_id: extra.commitId ?? '',
    };
  }

  async comment(
    s: Subject,
    issue: IssueRow,
    comment: CommentRow,
    action: 'created' | 'edited' | 'deleted',
    sender: UserJson,
    changes?: Record<string, { from: string }>,
  ) {
    const [issueJson, [commentJson]] = await Promise.all([
      this.deps.issues.issue(issue, null, s.repo),
      this.deps.issues.comments(issue, [comment], null, s.repo),
    ]);
    return {
      action,
      issue: issueJson,
      comment: commentJson,
      ...(changes ? { changes } : {}),
      repository: s.json,
      sender,
      is_pull: issue.is_pull === 1,
    };
  }

  // Pull requests

  /** The pull request as GET /repos/{owner}/{repo}/pulls/{index} shows it to an anonymous caller. */
  pullJson(s: Subject, pull: Pull): Promise<PullRequestJson> {
    return this.deps.pulls.pull(pull, s.repo, null);
  }

  /** Forgejo's PullRequestPayload (requested_reviewer and review are null unless the event has them). */
  pullRequest(s: Subject, pr: PullRequestJson, action: string, sender: UserJson, extra: PullExtra = {}) {
    return {
      action,
      number: pr.number,
      ...(extra.changes && Object.keys(extra.changes).length ? { changes: extra.changes } : {}),
      pull_request: pr,
      requested_reviewer: extra.requestedReviewer ?? null,
      repository: s.json,
      sender,
      commit_id: extra.commitId ?? '',
      review: extra.review ?? null,
    };
  }

  // Releases

  async release(
    s: Subject,
    release: ReleaseRow,
    action: 'published' | 'updated' | 'deleted',
    sender: UserJson,
  ) {
    const [publisher, assets] = await Promise.all([
      this.deps.users.getById(release.publisher_id),
      this.deps.attachments.ofReleases([release.id]),
    ]);
    const links = {
      rootUrl: this.rootUrl,
      fullName: `${encodeURIComponent(s.owner.name)}/${encodeURIComponent(s.repo.name)}`,
      viewer: null,
    };
    return {
      action,
      release: toReleaseJson(release, publisher, assets.get(release.id) ?? [], links),
      repository: s.json,
      sender,
    };
  }
}
