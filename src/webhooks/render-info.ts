// What Forgejo's chat renderers share (its services/webhook/general.go): the headline, title,
// attached text and colour of each event, read from Forgejo's JSON payload, with links made by
// the renderer's formatter (none, HTML or markdown). Pure.

export type Json = Record<string, unknown>;
/** Makes a link of `text` to `url` in the renderer's markup (or leaves the text alone). */
export type LinkFormatter = (url: string, text: string) => string;

export const str = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

export const COLORS = {
  green: 0x1ac600,
  greenLight: 0xbfe5bf,
  yellow: 0xffd930,
  grey: 0x4f545c,
  purple: 0x7289da,
  orange: 0xeb6420,
  orangeLight: 0xe68d60,
  red: 0xff3232,
};

export const noneLink: LinkFormatter = (_url, text) => text;

const escapeHtml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');

export const htmlLink: LinkFormatter = (url, text) => `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`;

/** Go's git.RefName(ref).ShortName(). */
export function shortRef(ref: string): string {
  for (const p of ['refs/heads/', 'refs/tags/', 'refs/remotes/', 'refs/pull/', 'refs/for/', 'refs/']) {
    if (ref.startsWith(p)) return ref.slice(p.length);
  }
  return ref;
}

/** Go's util.PathEscapeSegments: each segment of a path escaped, the slashes kept. */
export const pathSegments = (p: string): string => p.split('/').map(encodeURIComponent).join('/');

export const repoOf = (p: Json): Json => obj(p['repository']);
export const senderName = (p: Json): string => str(obj(p['sender'])['login']);

/** "Pull request review approved"-style words of the review event types (Forgejo's parseHookPullRequestEventType). */
export const REVIEW_ACTIONS: Record<string, string> = {
  pull_request_review_approved: 'approved',
  pull_request_review_rejected: 'requested changes',
  pull_request_review_comment: 'comment',
};

/** Which of Forgejo's payload converters an event type goes to. */
export type Converter =
  | 'create'
  | 'delete'
  | 'fork'
  | 'push'
  | 'issue'
  | 'issue_comment'
  | 'pull_request'
  | 'review'
  | 'repository'
  | 'release'
  | 'wiki'
  | 'package';

export function converterOf(eventType: string): Converter | undefined {
  switch (eventType) {
    case 'create':
    case 'delete':
    case 'fork':
    case 'push':
    case 'repository':
    case 'release':
    case 'wiki':
    case 'package':
      return eventType;
    case 'issues':
    case 'issue_assign':
    case 'issue_label':
    case 'issue_milestone':
      return 'issue';
    case 'issue_comment':
    case 'pull_request_comment':
      return 'issue_comment';
    case 'pull_request':
    case 'pull_request_assign':
    case 'pull_request_label':
    case 'pull_request_milestone':
    case 'pull_request_sync':
    case 'pull_request_review_request':
      return 'pull_request';
    case 'pull_request_review_approved':
    case 'pull_request_review_rejected':
    case 'pull_request_review_comment':
      return 'review';
    default:
      return undefined;
  }
}

export interface Info {
  text: string;
  title: string;
  attachment: string;
  color: number;
}

/** Forgejo's getIssuesPayloadInfo. */
export function issueInfo(p: Json, link: LinkFormatter, withSender: boolean): Info {
  const issue = obj(p['issue']);
  const repo = repoOf(p);
  const index = str(p['number']) || str(issue['number']);
  const title = `#${index} ${str(issue['title'])}`;
  const titleLink = link(`${str(repo['html_url'])}/issues/${index}`, title);
  const prefix = `[${str(repo['full_name'])}]`;
  let text = '';
  let color = COLORS.yellow;
  switch (str(p['action'])) {
    case 'opened':
      text = `${prefix} Issue opened: ${titleLink}`;
      color = COLORS.orange;
      break;
    case 'closed':
      text = `${prefix} Issue closed: ${titleLink}`;
      color = COLORS.red;
      break;
    case 'reopened':
      text = `${prefix} Issue re-opened: ${titleLink}`;
      break;
    case 'edited':
      text = `${prefix} Issue edited: ${titleLink}`;
      break;
    case 'assigned': {
      const names = list(issue['assignees']).map((u) => link(str(u['html_url']), str(u['login'])));
      text = `${prefix} Issue assigned to ${names.join(', ')}: ${titleLink}`;
      color = COLORS.green;
      break;
    }
    case 'unassigned':
      text = `${prefix} Issue unassigned: ${titleLink}`;
      break;
    case 'label_updated':
      text = `${prefix} Issue labels updated: ${titleLink}`;
      break;
    case 'label_cleared':
      text = `${prefix} Issue labels cleared: ${titleLink}`;
      break;
    case 'synchronized':
      text = `${prefix} Issue synchronized: ${titleLink}`;
      break;
    case 'milestoned':
      text = `${prefix} Issue milestoned to ${str(obj(issue['milestone'])['title'])}: ${titleLink}`;
      break;
    case 'demilestoned':
      text = `${prefix} Issue milestone cleared: ${titleLink}`;
      break;
  }
  if (withSender) text += ` by ${senderName(p)}`;
  const action = str(p['action']);
  const attachment = action === 'opened' || action === 'edited' ? str(issue['body']) : '';
  return { text, title, attachment, color };
}

/** Forgejo's getPullRequestPayloadInfo. */
export function pullInfo(p: Json, link: LinkFormatter, withSender: boolean): Info {
  const pr = obj(p['pull_request']);
  const repo = repoOf(p);
  const index = str(p['number']) || str(pr['number']);
  const title = `#${index} ${str(pr['title'])}`;
  const titleLink = link(str(pr['url']) || str(pr['html_url']), title);
  const prefix = `[${str(repo['full_name'])}]`;
  let text = '';
  let attachment = '';
  let color = COLORS.yellow;
  switch (str(p['action'])) {
    case 'opened':
      text = `${prefix} Pull request opened: ${titleLink}`;
      attachment = str(pr['body']);
      color = COLORS.green;
      break;
    case 'closed':
      if (pr['merged'] === true) {
        text = `${prefix} Pull request merged: ${titleLink}`;
        color = COLORS.purple;
      } else {
        text = `${prefix} Pull request closed: ${titleLink}`;
        color = COLORS.red;
      }
      break;
    case 'reopened':
      text = `${prefix} Pull request re-opened: ${titleLink}`;
      break;
    case 'edited':
      text = `${prefix} Pull request edited: ${titleLink}`;
      attachment = str(pr['body']);
      break;
    case 'assigned': {
      const names = list(pr['assignees']).map((u) => link(str(u['html_url']), str(u['login'])));
      text = `${prefix} Pull request assigned to ${names.join(', ')}: ${titleLink}`;
      color = COLORS.green;
      break;
    }
    case 'unassigned':
      text = `${prefix} Pull request unassigned: ${titleLink}`;
      break;
    case 'label_updated':
      text = `${prefix} Pull request labels updated: ${titleLink}`;
      break;
    case 'label_cleared':
      text = `${prefix} Pull request labels cleared: ${titleLink}`;
      break;
    case 'synchronized':
      text = `${prefix} Pull request synchronized: ${titleLink}`;
      break;
    case 'milestoned':
      text = `${prefix} Pull request milestoned to ${str(obj(pr['milestone'])['title'])}: ${titleLink}`;
      break;
    case 'demilestoned':
      text = `${prefix} Pull request milestone cleared: ${titleLink}`;
      break;
    case 'reviewed':
      text = `${prefix} Pull request reviewed: ${titleLink}`;
      attachment = str(obj(p['review'])['content']);
      break;
    case 'review_requested':
      text = `${prefix} Pull request review requested: ${titleLink}`;
      break;
    case 'review_request_removed':
      text = `${prefix} Pull request review request removed: ${titleLink}`;
      break;
  }
  if (withSender) text += ` by ${senderName(p)}`;
  return { text, title, attachment, color };
}

/** Forgejo's getIssueCommentPayloadInfo (no attachment: the renderers add the comment's body). */
export function commentInfo(p: Json, link: LinkFormatter, withSender: boolean): Info {
  const issue = obj(p['issue']);
  const comment = obj(p['comment']);
  const repo = repoOf(p);
  const title = `#${str(issue['number'])} ${str(issue['title'])}`;
  const isPull = p['is_pull'] === true;
  const typ = isPull ? 'pull request' : 'issue';
  const titleLink = link(str(comment[isPull ? 'pull_request_url' : 'issue_url']), title);
  const prefix = `[${str(repo['full_name'])}]`;
  let text = '';
  let color = COLORS.yellow;
  switch (str(p['action'])) {
    case 'created':
      text = `${prefix} New comment on ${typ} ${titleLink}`;
      color = isPull ? COLORS.greenLight : COLORS.orangeLight;
      break;
    case 'edited':
      text = `${prefix} Comment edited on ${typ} ${titleLink}`;
      break;
    case 'deleted':
      text = `${prefix} Comment deleted on ${typ} ${titleLink}`;
      color = COLORS.red;
      break;
  }
  if (withSender) text += ` by ${senderName(p)}`;
  return { text, title, attachment: '', color };
}

/** Forgejo's getReleasePayloadInfo. */
export function releaseInfo(
  p: Json,
  link: LinkFormatter,
  withSender: boolean,
): { text: string; color: number } {
  const rel = obj(p['release']);
  const repo = repoOf(p);
  const tag = str(rel['tag_name']);
  const refLink = link(`${str(repo['html_url'])}/releases/tag/${pathSegments(tag)}`, tag);
  const prefix = `[${str(repo['full_name'])}]`;
  let text = '';
  let color = 0;
  switch (str(p['action'])) {
    case 'published':
      text = `${prefix} Release created: ${refLink}`;
      color = COLORS.green;
      break;
    case 'updated':
      text = `${prefix} Release updated: ${refLink}`;
      color = COLORS.yellow;
      break;
    case 'deleted':
      text = `${prefix} Release deleted: ${refLink}`;
      color = COLORS.red;
      break;
  }
  if (withSender) text += ` by ${senderName(p)}`;
  return { text, color };
}

/** The address of a wiki page (Forgejo's url.PathEscape of the page name). */
export const wikiUrl = (p: Json): string =>
  `${str(repoOf(p)['html_url'])}/wiki/${encodeURIComponent(str(p['page']))}`;

/** Forgejo's getWikiPayloadInfo. */
export function wikiInfo(p: Json, link: LinkFormatter, withSender: boolean): { text: string; color: number } {
  const repo = repoOf(p);
  const pageLink = link(wikiUrl(p), str(p['page']));
  const prefix = `[${str(repo['full_name'])}]`;
  const action = str(p['action']);
  let text = '';
  let color = COLORS.green;
  switch (action) {
    case 'created':
      text = `${prefix} New wiki page '${pageLink}'`;
      break;
    case 'edited':
      text = `${prefix} Wiki page '${pageLink}' edited`;
      color = COLORS.yellow;
      break;
    case 'deleted':
      text = `${prefix} Wiki page '${pageLink}' deleted`;
      color = COLORS.red;
      break;
  }
  const comment = str(p['comment']);
  if (action !== 'deleted' && comment !== '') text += ` (${comment})`;
  if (withSender) text += ` by ${senderName(p)}`;
  return { text, color };
}

/** Forgejo's getPackagePayloadInfo. */
export function packageInfo(
  p: Json,
  link: LinkFormatter,
  withSender: boolean,
): { text: string; color: number } {
  const pkg = obj(p['package']);
  const refLink = link(str(pkg['html_url']), `${str(pkg['name'])}:${str(pkg['version'])}`);
  let text = '';
  let color = 0;
  switch (str(p['action'])) {
    case 'created':
      text = `Package created: ${refLink}`;
      color = COLORS.green;
      break;
    case 'deleted':
      text = `Package deleted: ${refLink}`;
      color = COLORS.red;
      break;
  }
  if (withSender) text += ` by ${senderName(p)}`;
  return { text, color };
}

/** Forgejo's getIssuesInfo and getPullRequestInfo (feishu's plain text). */
export function plainInfo(
  p: Json,
  isPull: boolean,
): { title: string; link: string; by: string; operator: string; result: string; assignees: string } {
  const item = obj(p[isPull ? 'pull_request' : 'issue']);
  const repo = repoOf(p);
  const action = str(p['action']);
  const title = `[${isPull ? 'PullRequest' : 'Issue'}-${str(repo['full_name'])} #${str(item['number'])}]: ${action}\n${str(item['title'])}`;
  const assignees = list(item['assignees']).map((u) => str(u['login']));
  let result = '';
  if (action === 'assigned')
    result = `${senderName(p)} assign this to ${assignees[assignees.length - 1] ?? ''}`;
  else if (action === 'unassigned') result = `${senderName(p)} unassigned this for someone`;
  else if (action === 'milestoned') {
    result = `${str(repo['html_url'])}/milestone/${str(obj(item['milestone'])['id'])}`;
  }
  return {
    title,
    link: str(item['html_url']),
    by: `${isPull ? 'PullRequest' : 'Issue'} by ${str(obj(item['user'])['login'])}`,
    operator: `Operator: ${senderName(p)}`,
    result,
    assignees: assignees.length ? `Assignees: ${assignees.join(', ')}` : '',
  };
}

/** The push's commits (the payload's own list) and their count. */
export function pushCommits(p: Json): { commits: Json[]; total: number } {
  const commits = list(p['commits']);
  const total = Number(p['total_commits'] ?? commits.length);
  return { commits, total: Number.isFinite(total) ? total : commits.length };
}

/** "1 new commit" / "N new commits". */
export const commitDesc = (total: number): string => (total === 1 ? '1 new commit' : `${total} new commits`);

/** Where a push's headline links: the single commit, else the comparison, else the branch. */
export function pushLink(p: Json, commits: Json[], total: number): string {
  const url = total === 1 ? str(commits[0]?.['url']) : str(p['compare_url']);
  return url || `${str(repoOf(p)['html_url'])}/src/${pathSegments(shortRef(str(p['ref'])))}`;
}

/** A commit's author name, when it has an author. */
export const authorOf = (c: Json): string | undefined => {
  const a = c['author'];
  return a && typeof a === 'object' ? str((a as Json)['name']) : undefined;
};
