// The messages Anvil mails, as plain text and HTML (pure functions). Notification mail carries
// Forgejo's threading headers: the thread is `<owner/repo/issues/N@domain>` (pulls for pull
// requests), which the issue's first mail has as its Message-ID; every later mail of the thread has
// its own Message-ID (`.../comment/ID@domain`, `.../close/MS@domain`, ...) and points to the thread
// with In-Reply-To and References, so mail clients group them. List-ID and X-Gitea-* headers as
// Forgejo's (services/mailer/mail.go).
import type { OutgoingMail } from './sender.js';

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function html(
  title: string,
  paragraphs: string[],
  link?: { href: string; text: string },
  block = '',
): string {
  const body = paragraphs.map((p) => `<p>${p}</p>`).join('\n') + (block ? `\n<div>${block}</div>` : '');
  const a = link ? `<p><a href="${esc(link.href)}">${esc(link.text)}</a></p>` : '';
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
${body}
${a}
</body></html>`;
}

/** Minutes as words ("3 hours", "45 minutes"). */
function lives(minutes: number): string {
  if (minutes % 60 === 0) return `${minutes / 60} hour${minutes === 60 ? '' : 's'}`;
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

export function resetPasswordMail(p: {
  to: string;
  name: string;
  link: string;
  minutes: number;
  site: string;
}): OutgoingMail {
  const subject = 'Recover your account';
  const lead = `Hello ${p.name}, someone asked to set a new password for your account on ${p.site}.`;
  const valid = `Follow this link within ${lives(p.minutes)} to choose a new password (it works once):`;
  const ignore = 'If you did not ask for this, ignore this mail: your password stays as it is.';
  return {
    to: p.to,
    subject,
    headers: {},
    text: `${lead}\n\n${valid}\n${p.link}\n\n${ignore}\n`,
    html: html(subject, [esc(lead), esc(valid), esc(ignore)], {
      href: p.link,
      text: 'Choose a new password',
    }),
  };
}

export function activationMail(p: {
  to: string;
  name: string;
  link: string;
  minutes: number;
  site: string;
}): OutgoingMail {
  const subject = 'Please activate your account';
  const lead = `Hello ${p.name}, thank you for registering on ${p.site}.`;
  const valid = `Follow this link within ${lives(p.minutes)} to confirm your e-mail address and activate your account:`;
  return {
    to: p.to,
    subject,
    headers: {},
    text: `${lead}\n\n${valid}\n${p.link}\n`,
    html: html(subject, [esc(lead), esc(valid)], { href: p.link, text: 'Activate your account' }),
  };
}

/** What a notification mail is about. */
export interface ThreadInfo {
  owner: string;
  repo: string;
  repoUrl: string;
  index: number;
  isPull: boolean;
  title: string;
  /** The issue's page (the comment's anchor is added for a comment). */
  url: string;
  /** The host of ROOT_URL (Forgejo's setting.Domain). */
  domain: string;
}

/** The thread's reference: `<owner/repo/issues/N@domain>`. */
export function threadId(t: ThreadInfo, extra = ''): string {
  return `<${t.owner}/${t.repo}/${t.isPull ? 'pulls' : 'issues'}/${t.index}${extra}@${t.domain}>`;
}

export interface IssueMailInput {
  thread: ThreadInfo;
  /** new, comment, close, reopen, merge, review, approve, reject. */
  action: string;
  doer: { name: string; display: string };
  /** The comment's id, for a comment or review. */
  commentId?: number | undefined;
  /** The text (markdown source) and its HTML. */
  text: string;
  bodyHtml: string;
  recipient: { name: string; display: string; email: string };
  /** Why this recipient gets it (X-Gitea-Reason). */
  reason: string;
  /** A millisecond stamp for the Message-ID of close, reopen and merge mails. */
  stamp: number;
}

const ACTION_WORDS: Record<string, string> = {
  new: 'opened',
  comment: 'commented on',
  close: 'closed',
  reopen: 'reopened',
  merge: 'merged',
  review: 'reviewed',
  approve: 'approved',
  reject: 'requested changes on',
};

export function issueMail(m: IssueMailInput): OutgoingMail {
  const t = m.thread;
  const reference = threadId(t);
  const extra =
    m.commentId !== undefined
      ? `/comment/${m.commentId}`
      : ['close', 'reopen', 'merge'].includes(m.action)
        ? `/${m.action}/${m.stamp}`
        : '';
  const messageId = threadId(t, extra);
  const link = m.commentId !== undefined ? `${t.url}#issuecomment-${m.commentId}` : t.url;
  const kind = t.isPull ? 'pull request' : 'issue';
  const subject = `${m.action === 'new' ? '' : 'Re: '}[${t.owner}/${t.repo}] ${t.title} (${t.isPull ? 'PR ' : ''}#${t.index})`;
  const line = `@${m.doer.name} ${ACTION_WORDS[m.action] ?? 'updated'} ${kind} ${t.owner}/${t.repo}#${t.index}.`;
  const headers: Record<string, string> = {
    'Message-ID': messageId,
    'In-Reply-To': reference,
    References: reference,
    'List-ID': `${t.owner}/${t.repo} <${t.repo}.${t.owner}.${t.domain}>`,
    'List-Archive': `<${t.repoUrl}>`,
    'List-Unsubscribe': `<${t.url}>`,
    'X-Gitea-Reason': m.reason,
    'X-Gitea-Sender': m.doer.display,
    'X-Gitea-Recipient': m.recipient.display,
    'X-Gitea-Recipient-Address': m.recipient.email,
    'X-Gitea-Repository': t.repo,
    'X-Gitea-Repository-Path': `${t.owner}/${t.repo}`,
    'X-Gitea-Repository-Link': t.repoUrl,
    'X-Gitea-Issue-ID': String(t.index),
    'X-Gitea-Issue-Link': t.url,
    'X-GitHub-Reason': m.reason,
    'X-GitLab-NotificationReason': m.reason,
    'X-GitLab-Issue-IID': String(t.index),
  };
  const footer = `View it on the site: ${link}`;
  return {
    to: m.recipient.email,
    subject,
    headers,
    text: `${line}\n\n${m.text ? `${m.text}\n\n` : ''}---\n${footer}\n`,
    html: html(
      subject,
      [esc(line)],
      { href: link, text: `View it on ${t.owner}/${t.repo}#${t.index}` },
      m.bodyHtml,
    ),
  };
}

export function releaseMail(p: {
  owner: string;
  repo: string;
  tag: string;
  title: string;
  url: string;
  noteHtml: string;
  note: string;
  doer: string;
  to: string;
  domain: string;
}): OutgoingMail {
  const subject = `[${p.owner}/${p.repo}] ${p.title || p.tag} released`;
  const line = `@${p.doer} released ${p.tag} in ${p.owner}/${p.repo}.`;
  return {
    to: p.to,
    subject,
    headers: {
      'Message-ID': `<${p.owner}/${p.repo}/releases/${encodeURIComponent(p.tag)}@${p.domain}>`,
      'List-ID': `${p.owner}/${p.repo} <${p.repo}.${p.owner}.${p.domain}>`,
      'X-Gitea-Reason': 'release',
      'X-Gitea-Repository-Path': `${p.owner}/${p.repo}`,
    },
    text: `${line}\n\n${p.note ? `${p.note}\n\n` : ''}---\n${p.url}\n`,
    html: html(subject, [esc(line)], { href: p.url, text: `View ${p.tag}` }, p.noteHtml),
  };
}
