// RSS 2.0 and Atom 1.0 feeds as Forgejo serves them (`/{user}.rss`, `/{owner}/{repo}.atom`,
// `/{owner}/{repo}/releases.rss`, `/{owner}/{repo}/rss/branch/{branch}`...): the entries of an
// activity feed, of releases or of commits, turned into feed items (pure: no database, no HTTP).
// Titles are plain text; descriptions are sanitized HTML (comments and release notes through the
// one markdown renderer, with absolute links); the XML is written by the `feed` library.
import { Feed, type Item } from 'feed';
import { renderMarkdown } from '../markup/render.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import type { ActionRow } from './tables.js';

export type FeedFormat = 'rss' | 'atom';

/** Forgejo's wording of each action in a feed title. */
const VERBS: Record<string, string> = {
  create_repo: 'created repository',
  commit_repo: 'pushed to',
  push_tag: 'pushed tag',
  delete_tag: 'deleted tag',
  delete_branch: 'deleted branch',
  create_issue: 'opened issue',
  create_pull_request: 'created pull request',
  close_issue: 'closed issue',
  reopen_issue: 'reopened issue',
  close_pull_request: 'closed pull request',
  reopen_pull_request: 'reopened pull request',
  merge_pull_request: 'merged pull request',
  comment_issue: 'commented on issue',
  comment_pull: 'commented on pull request',
  publish_release: 'released',
  approve_pull_request: 'approved',
  reject_pull_request: 'suggested changes for',
};

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const path = (s: string) => s.split('/').map(encodeURIComponent).join('/');

export interface ActionEntry {
  row: ActionRow;
  actor: UserRow | undefined;
  repo: RepoRow;
  owner: UserRow;
}

/** One activity entry as a feed item, linked under `rootUrl` (ends in /). */
export function actionItem(e: ActionEntry, rootUrl: string): Item {
  const { row } = e;
  const full = `${e.owner.name}/${e.repo.name}`;
  const repoUrl = `${rootUrl}${path(full)}`;
  const ref = row.ref_name.replace(/^refs\/(heads|tags)\//, '');
  const [index = '', ...rest] = row.content.split('|');
  const text = rest.join('|');
  const numbered = /issue|pull/.test(row.op_type) && /^\d+$/.test(index);
  const pull = row.op_type.includes('pull');
  let target = full;
  let link = repoUrl;
  let description = '';
  if (numbered) {
    target = `${full}#${index}`;
    link = `${repoUrl}/${pull ? 'pulls' : 'issues'}/${index}`;
    if (row.comment_id) link += `#issuecomment-${row.comment_id}`;
    description = row.op_type.startsWith('comment')
      ? renderMarkdown(text, { breaks: true, rootUrl, repo: { owner: e.owner.name, name: e.repo.name } })
      : `<p>${escape(text)}</p>`;
  } else if (row.op_type === 'commit_repo') {
    target = `${ref} at ${full}`;
    link = `${repoUrl}/src/branch/${path(ref)}`;
    let head = '';
    try {
      head = String((JSON.parse(row.content) as { HeadCommit?: { Sha1?: string } }).HeadCommit?.Sha1 ?? '');
    } catch {
      // an entry written by an older version: the branch link stays
    }
    if (/^[0-9a-f]{40,64}$/.test(head)) {
      link = `${repoUrl}/commit/${head}`;
      description = `<a href="${escape(link)}">${head}</a>`;
    }
  } else if (row.op_type === 'push_tag') {
    target = `${ref} at ${full}`;
    link = `${repoUrl}/src/tag/${path(ref)}`;
  } else if (row.op_type === 'delete_tag' || row.op_type === 'delete_branch') {
    target = `${ref} at ${full}`;
  } else if (row.op_type === 'publish_release') {
    target = `${row.content || ref} of ${full}`;
    link = `${repoUrl}/releases/tag/${path(ref)}`;
  }
  const actor = e.actor?.full_name || e.actor?.name || 'Ghost';
  return {
    title: `${actor} ${VERBS[row.op_type] ?? row.op_type} ${target}`,
    // An Atom id is an IRI that never changes: a tag URI (RFC 4151) naming the entry.
    id: `tag:${new URL(rootUrl).hostname},2026:action/${row.id}`,
    link,
    date: new Date(row.created_unix * 1000),
    description,
    ...(e.actor ? { author: [{ name: actor, link: `${rootUrl}${path(e.actor.name)}` }] } : {}),
  };
}

export interface ReleaseEntry {
  id: number;
  tag: string;
  title: string;
  note: string;
  isTag: boolean;
  created: number;
  publisher: UserRow | undefined;
}

/** A release (or a bare tag) as a feed item, its notes rendered as the release page renders them. */
export function releaseItem(r: ReleaseEntry, repo: { owner: string; name: string }, rootUrl: string): Item {
  const link = `${rootUrl}${path(`${repo.owner}/${repo.name}`)}/releases/tag/${path(r.tag)}`;
  const who = r.publisher?.full_name || r.publisher?.name;
  return {
    title: r.isTag || !r.title ? r.tag : r.title,
    id: `tag:${new URL(rootUrl).hostname},2026:release/${r.id}`,
    link,
    date: new Date(r.created * 1000),
    content: renderMarkdown(r.note, { rootUrl, repo }),
    ...(who ? { author: [{ name: who }] } : {}),
  };
}

export interface CommitEntry {
  oid: string;
  message: string;
  authorName: string;
  authorEmail: string;
  /** Unix seconds. */
  when: number;
}

/** A commit as a feed item: its subject as the title, the whole message as the description. */
export function commitItem(c: CommitEntry, repo: { owner: string; name: string }, rootUrl: string): Item {
  const link = `${rootUrl}${path(`${repo.owner}/${repo.name}`)}/commit/${c.oid}`;
  const [subject = ''] = c.message.split('\n');
  return {
    title: subject,
    id: link,
    link,
    date: new Date(c.when * 1000),
    description: `<pre>${escape(c.message.trimEnd())}</pre>`,
    author: [{ name: c.authorName, email: c.authorEmail }],
  };
}

export interface FeedHead {
  title: string;
  /** The page the feed is about (absolute). */
  link: string;
  description: string;
  /** The feed's own addresses in both formats (absolute). */
  links: { rss: string; atom: string };
}

/** The feed as XML in `format`, with its content type. */
export function writeFeed(head: FeedHead, items: Item[], format: FeedFormat): { type: string; body: string } {
  const feed = new Feed({
    id: head.link,
    title: head.title,
    link: head.link,
    description: head.description,
    updated: items[0]?.date ?? new Date(0),
    generator: 'Anvil',
    feedLinks: head.links,
  });
  for (const item of items) feed.addItem(item);
  return format === 'atom'
    ? { type: 'application/atom+xml;charset=utf-8', body: feed.atom1() }
    : { type: 'application/rss+xml;charset=utf-8', body: feed.rss2() };
}
