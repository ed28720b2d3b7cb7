// Notification threads as Forgejo's NotificationThread JSON: the repositories, issues, owners,
// access and merge states of a page of threads are loaded in a fixed number of queries. Threads
// whose repository (or issue) their user can no longer read are dropped from the answer and removed.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { AccessMode } from '../orgs/tables.js';
import { unitOf, type IssueService } from '../issues/service.js';
import { Repository, toRepoJson, type SshCloneAddress } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { NotificationService } from './service.js';
import type { Viewer } from '../users/tables.js';
import type { NotificationRow } from './tables.js';
import { NotificationSource, NotificationStatus } from './tables.js';

export const NotificationSubject = Type.Object(
  {
    title: Type.String(),
    url: Type.String(),
    latest_comment_url: Type.String(),
    html_url: Type.String(),
    latest_comment_html_url: Type.String(),
    type: Type.String({ description: 'Issue, Pull, Commit or Repository' }),
    state: Type.String({ description: 'open, closed or merged' }),
  },
  { title: 'NotificationSubject' },
);

export const NotificationThread = Type.Object(
  {
    id: Type.Integer(),
    repository: Repository,
    subject: NotificationSubject,
    unread: Type.Boolean(),
    pinned: Type.Boolean(),
    updated_at: Type.String({ format: 'date-time' }),
    url: Type.String(),
  },
  { title: 'NotificationThread' },
);
export type NotificationThreadJson = Static<typeof NotificationThread>;

export const NotificationCount = Type.Object({ new: Type.Integer() }, { title: 'NotificationCount' });

const SUBJECT_TYPES: Record<number, string> = {
  [NotificationSource.issue]: 'Issue',
  [NotificationSource.pull]: 'Pull',
  [NotificationSource.commit]: 'Commit',
  [NotificationSource.repository]: 'Repository',
};

export interface ThreadsJsonDeps {
  rootUrl: string;
  /** Where SSH clone URLs point (the threads' repositories). */
  ssh: SshCloneAddress;
  repos: Pick<RepoService, 'getByIds' | 'accessMany'>;
  users: Pick<UserService, 'getByIds'>;
  issues: Pick<IssueService, 'getByIds'>;
  notifications: Pick<NotificationService, 'mergedIssueIds' | 'forget'>;
}

export async function threadsJson(
  deps: ThreadsJsonDeps,
  rows: NotificationRow[],
  viewer: Viewer,
): Promise<NotificationThreadJson[]> {
  if (rows.length === 0) return [];
  const { rootUrl, ssh } = deps;
  const issueIds = [...new Set(rows.map((r) => r.issue_id).filter((id): id is number => id !== null))];
  const [repos, issues, mergedIds] = await Promise.all([
    deps.repos.getByIds([...new Set(rows.map((r) => r.repo_id))]),
    deps.issues.getByIds(issueIds),
    deps.notifications.mergedIssueIds(issueIds),
  ]);
  const repoList = [...repos.values()];
  const owners = await deps.users.getByIds([...new Set(repoList.map((r) => r.owner_id))]);
  const access = await deps.repos.accessMany(repoList, viewer, owners);

  const out: NotificationThreadJson[] = [];
  const gone: number[] = [];
  for (const n of rows) {
    const repo = repos.get(n.repo_id);
    const owner = repo && owners.get(repo.owner_id);
    const a = repo && access.get(repo.id);
    const issue = n.issue_id !== null ? issues.get(n.issue_id) : undefined;
    const unit = issue ? unitOf(issue.is_pull) : 'repo.code';
    if (!repo || !owner || !a || a.mode < AccessMode.read || (a.units.get(unit) ?? 0) < AccessMode.read) {
      gone.push(n.id);
      continue;
    }
    const full = `${owner.name}/${repo.name}`;
    const subject = {
      title: '',
      url: '',
      latest_comment_url: '',
      html_url: '',
      latest_comment_html_url: '',
      type: SUBJECT_TYPES[n.source] ?? 'Issue',
      state: '',
    };
    if (issue) {
      const kind = issue.is_pull ? 'pulls' : 'issues';
      subject.title = issue.title;
      subject.url = `${rootUrl}api/v1/repos/${full}/${kind}/${issue.index}`;
      subject.html_url = `${rootUrl}${full}/${kind}/${issue.index}`;
      subject.state = mergedIds.has(issue.id) ? 'merged' : issue.is_closed ? 'closed' : 'open';
      if (n.comment_id !== null) {
        subject.latest_comment_url = `${rootUrl}api/v1/repos/${full}/issues/comments/${n.comment_id}`;
        subject.latest_comment_html_url = `${subject.html_url}#issuecomment-${n.comment_id}`;
      }
    } else if (n.source === NotificationSource.repository) {
      // A pending transfer (Forgejo's repository notification): the repository is the subject.
      subject.title = full;
      subject.url = `${rootUrl}api/v1/repos/${full}`;
      subject.html_url = `${rootUrl}${full}`;
    }
    out.push({
      id: n.id,
      repository: toRepoJson(repo, owner, a, { rootUrl, ssh, viewer }),
      subject,
      unread: n.status === NotificationStatus.unread,
      pinned: n.status === NotificationStatus.pinned,
      updated_at: isoTime(n.updated_unix),
      url: `${rootUrl}api/v1/notifications/threads/${n.id}`,
    });
  }
  if (gone.length) await deps.notifications.forget(gone);
  return out;
}
