// Notification mail: the event bus's issue, pull request, comment, review and release events
// become queued mails for the people concerned: an issue's followers (participants, subscribers,
// the mentioned) and the repository's watchers, less those who unsubscribed from the issue, less
// the doer, less those who cannot read it, each as their user.email_notifications_preference
// says (Forgejo's: `enabled` all, `onmention` only when mentioned, `disabled` none, `andyourown`
// all and their own actions too). Listeners run after the change has committed, in the request
// that made it; the mail is sent later by the queue's worker (queue.ts).
import type { Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import '../pulls/events.js';
import * as issueStore from '../issues/store.js';
import { unitOf, type IssueService } from '../issues/service.js';
import type { IssueRow } from '../issues/tables.js';
import { renderMarkdown } from '../markup/render.js';
import * as notificationStore from '../notifications/store.js';
import { AccessMode } from '../orgs/tables.js';
import { ReviewType } from '../pulls/tables.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow } from '../users/tables.js';
import { issueMail, releaseMail, type ThreadInfo } from './compose.js';
import type { MailQueue } from './queue.js';
import type { OutgoingMail } from './sender.js';

export interface MailNotifierDeps {
  db: Db;
  events: EventBus;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  repos: Pick<RepoService, 'getById' | 'access'>;
  issues: Pick<IssueService, 'getById' | 'watchers' | 'requireComment' | 'resolveMentions'>;
  queue: Pick<MailQueue, 'enqueue' | 'enabled'>;
  /** [server] ROOT_URL (ends in /). */
  rootUrl: string;
}

interface IssueAction {
  repoId: number;
  issueId: number;
  doerId: number;
  action: string;
  mentioned?: number[];
  commentId?: number;
  /** The text shown (a comment's or review's; the issue's body when opened). */
  text?: string;
}

const display = (u: UserRow) => u.full_name || u.name;

export class MailNotifier {
  private readonly domain: string;

  constructor(private readonly deps: MailNotifierDeps) {
    this.domain = new URL(deps.rootUrl).hostname.replace(/^\[|\]$/g, '');
    if (!deps.queue.enabled) return;
    const { events } = deps;
    const run = (a: IssueAction) => this.issueAction(a);
    events.on('issue.opened', (e) =>
      e.isPull ? undefined : run({ ...e, action: 'new', mentioned: e.mentionedIds }),
    );
    events.on('pull.opened', async (e) =>
      run({ ...e, action: 'new', mentioned: await issueStore.mentionedIds(deps.db, e.issueId) }),
    );
    events.on('issue.closed', (e) => run({ ...e, action: 'close' }));
    events.on('issue.reopened', (e) => run({ ...e, action: 'reopen' }));
    events.on('pull.merged', (e) => run({ ...e, action: 'merge' }));
    events.on('comment.created', (e) =>
      run({ ...e, action: 'comment', mentioned: e.mentionedIds, commentId: e.commentId }),
    );
    events.on('pull.reviewed', (e) =>
      run({
        ...e,
        action:
          e.reviewType === ReviewType.approve
            ? 'approve'
            : e.reviewType === ReviewType.reject
              ? 'reject'
              : 'review',
        text: e.content,
      }),
    );
    events.on('release.published', (e) => this.release(e.repoId, e.doerId, e.release));
  }

  /** Who gets the mail of an issue's action, and the mails. */
  async issueAction(a: IssueAction): Promise<void> {
    const { repos, issues, users } = this.deps;
    const [repo, issue, doer] = await Promise.all([
      repos.getById(a.repoId),
      issues.getById(a.issueId),
      users.getById(a.doerId),
    ]);
    if (!repo || !issue || !doer) return;
    if (!(issue.is_pull ? repo.has_pull_requests : repo.has_issues)) return;
    const owner = await users.getById(repo.owner_id);
    if (!owner) return;
    const [followers, watchers, explicit] = await Promise.all([
      issues.watchers(issue),
      notificationStore.watcherIds(this.deps.db, repo.id),
      issueStore.watchRows(this.deps.db, issue.id),
    ]);
    let text = a.text ?? '';
    if (a.commentId !== undefined) {
      text = (await issues.requireComment(repo, a.commentId)).comment.content;
    } else if (a.action === 'new') text = issue.content;
    // Everyone the text names (the event lists only those mentioned for the first time).
    const mentioned = new Set([
      ...(a.mentioned ?? []),
      ...(text ? await issues.resolveMentions(repo, text) : []),
    ]);
    const ids = new Set([...followers, ...watchers]);
    for (const w of explicit) if (!w.is_watching) ids.delete(w.user_id);
    for (const id of mentioned) ids.add(id);
    ids.add(doer.id); // only for `andyourown`
    const recipients = await this.recipients(repo, [...ids], unitOf(issue.is_pull), (u) => {
      const pref = u.email_notifications_preference;
      if (u.id === doer.id) return pref === 'andyourown';
      if (pref === 'disabled') return false;
      if (pref === 'onmention') return mentioned.has(u.id);
      return true;
    });
    if (recipients.length === 0) return;
    const thread = this.thread(owner, repo, issue);
    const bodyHtml = text
      ? renderMarkdown(text, {
          breaks: true,
          rootUrl: this.deps.rootUrl,
          repo: { owner: owner.name, name: repo.name },
        })
      : '';
    const stamp = Date.now();
    const mails: OutgoingMail[] = recipients.map((u) =>
      issueMail({
        thread,
        action: a.action,
        doer: { name: doer.name, display: display(doer) },
        commentId: a.commentId,
        text,
        bodyHtml,
        recipient: { name: u.name, display: display(u), email: u.email },
        reason: mentioned.has(u.id) ? 'mention' : u.id === doer.id ? 'own' : 'subscribed',
        stamp,
      }),
    );
    await this.deps.queue.enqueue(mails);
  }

  private thread(owner: UserRow, repo: RepoRow, issue: IssueRow): ThreadInfo {
    const repoUrl = `${this.deps.rootUrl}${owner.name}/${repo.name}`;
    return {
      owner: owner.name,
      repo: repo.name,
      repoUrl,
      index: issue.index,
      isPull: issue.is_pull === 1,
      title: issue.title,
      url: `${repoUrl}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`,
      domain: this.domain,
    };
  }

  /** A published release: mailed to the repository's watchers who want all mail. */
  async release(
    repoId: number,
    doerId: number,
    release: { tag_name: string; title: string; note: string; is_draft: number },
  ): Promise<void> {
    if (release.is_draft) return;
    const { repos, users } = this.deps;
    const [repo, doer] = await Promise.all([repos.getById(repoId), users.getById(doerId)]);
    if (!repo || !doer) return;
    const owner = await users.getById(repo.owner_id);
    if (!owner) return;
    const watchers = await notificationStore.watcherIds(this.deps.db, repo.id);
    const recipients = await this.recipients(repo, watchers, 'repo.releases', (u) =>
      u.id === doer.id
        ? u.email_notifications_preference === 'andyourown'
        : ['enabled', 'andyourown'].includes(u.email_notifications_preference),
    );
    if (recipients.length === 0) return;
    const url = `${this.deps.rootUrl}${owner.name}/${repo.name}/releases/tag/${encodeURIComponent(release.tag_name)}`;
    const noteHtml = release.note
      ? renderMarkdown(release.note, {
          rootUrl: this.deps.rootUrl,
          repo: { owner: owner.name, name: repo.name },
        })
      : '';
    await this.deps.queue.enqueue(
      recipients.map((u) =>
        releaseMail({
          owner: owner.name,
          repo: repo.name,
          tag: release.tag_name,
          title: release.title,
          url,
          note: release.note,
          noteHtml,
          doer: doer.name,
          to: u.email,
          domain: this.domain,
        }),
      ),
    );
  }

  /** Of `ids`, the active people with an address who may read `unit` of `repo` and `want` it. */
  private async recipients(
    repo: RepoRow,
    ids: number[],
    unit: string,
    want: (u: UserRow) => boolean,
  ): Promise<UserRow[]> {
    const users = await this.deps.users.getByIds(ids);
    const out: UserRow[] = [];
    for (const u of users.values()) {
      if (u.type !== UserType.Individual || !u.is_active || u.prohibit_login || !u.email) continue;
      if (!want(u)) continue;
      const access = await this.deps.repos.access(repo, { id: u.id, isAdmin: u.is_admin === 1 });
      if (access.mode < AccessMode.read || (access.units.get(unit) ?? 0) < AccessMode.read) continue;
      out.push(u);
    }
    return out.sort((a, b) => a.id - b.id);
  }
}
