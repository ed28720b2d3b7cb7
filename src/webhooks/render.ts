// The body a hook of each type receives for an event: forgejo, gitea and gogs hooks get Forgejo's
// JSON payload (indented as Forgejo indents it); slack and matrix hooks get a message describing
// the event, built from that payload; the other chat services theirs (./render-chat.ts), packagist
// and SourceHut builds their requests (./render-builds.ts). As in Forgejo, a push without commits
// reaches only forgejo, gitea and gogs hooks, and a type that has nothing to say about an event
// (a build service about an issue) gets no delivery.
import { dingtalk, discord, feishu, msteams, telegram, wechatwork } from './render-chat.js';
import { packagist, sourcehutBuild, type ManifestRead } from './render-builds.js';

type Json = Record<string, unknown>;
type Meta = Record<string, unknown>;

interface Link {
  text: string;
  url: string;
}

/** An event as a short message: a headline made of text and links, and detail lines. */
interface Message {
  parts: Array<string | Link>;
  details: string[];
  color: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});

function repoLink(p: Json): Link {
  const r = obj(p['repository']);
  return { text: `[${str(r['full_name'])}]`, url: str(r['html_url']) };
}

function senderName(p: Json): string {
  return str(obj(p['sender'])['login']);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

const REVIEW_WORDS: Record<string, string> = {
  pull_request_review_approved: 'approved',
  pull_request_review_rejected: 'changes requested',
  pull_request_review_comment: 'comment',
};

function describe(type: string, p: Json): Message {
  const repo = repoLink(p);
  const by = ` by ${senderName(p)}`;
  switch (type) {
    case 'push': {
      const ref = str(p['ref']);
      const branch = ref.replace(/^refs\/(heads|tags)\//, '');
      const commits = Array.isArray(p['commits']) ? (p['commits'] as Json[]) : [];
      const total = Number(p['total_commits'] ?? commits.length) || commits.length;
      const compare = str(p['compare_url']);
      return {
        parts: [
          {
            text: `[${str(obj(p['repository'])['full_name'])}:${branch}]`,
            url: `${repo.url}/src/branch/${branch}`,
          },
          ' ',
          compare
            ? { text: `${total} new commit${total === 1 ? '' : 's'}`, url: compare }
            : `${total} new commit${total === 1 ? '' : 's'}`,
          ` pushed${by}`,
        ],
        details: commits.map(
          (c) =>
            `${str(c['id']).slice(0, 10)}: ${firstLine(str(c['message']))} - ${str(obj(c['author'])['name'])}`,
        ),
        color: '#4f8fd7',
      };
    }
    case 'create':
    case 'delete':
      return {
        parts: [
          repo,
          ` ${str(p['ref_type'])} ${str(p['ref'])} ${type === 'create' ? 'created' : 'deleted'}${by}`,
        ],
        details: [],
        color: type === 'create' ? '#2cbe4e' : '#cb2431',
      };
    case 'fork': {
      const fork = obj(p['repository']);
      return {
        parts: [
          `${senderName(p)} forked `,
          { text: str(obj(p['forkee'])['full_name']), url: str(obj(p['forkee'])['html_url']) },
          ' to ',
          { text: str(fork['full_name']), url: str(fork['html_url']) },
        ],
        details: [],
        color: '#2cbe4e',
      };
    }
    case 'repository':
      return { parts: [repo, ` Repository ${str(p['action'])}${by}`], details: [], color: '#4f8fd7' };
    case 'wiki': {
      const page = str(p['page']);
      const url = `${str(obj(p['repository'])['html_url'])}/wiki/${page}`;
      return {
        parts: [repo, ` Wiki page `, { text: page, url }, ` ${str(p['action'])}${by}`],
        details: [str(p['comment'])].filter(Boolean),
        color: str(p['action']) === 'deleted' ? '#cb2431' : '#4f8fd7',
      };
    }
    case 'release': {
      const rel = obj(p['release']);
      return {
        parts: [
          repo,
          ` Release ${str(p['action'])}: `,
          { text: str(rel['tag_name']), url: str(rel['html_url']) },
          by,
        ],
        details: [],
        color: '#2cbe4e',
      };
    }
    case 'issue_comment':
    case 'pull_request_comment': {
      const issue = obj(p['issue']);
      const comment = obj(p['comment']);
      const what = p['is_pull'] ? 'pull request' : 'issue';
      const verb = str(p['action']) === 'created' ? 'New comment' : `Comment ${str(p['action'])}`;
      return {
        parts: [
          repo,
          ` ${verb} on ${what} `,
          { text: `#${str(issue['number'])} ${str(issue['title'])}`, url: str(comment['html_url']) },
          by,
        ],
        details: str(p['action']) === 'deleted' ? [] : [str(comment['body'])],
        color: '#4f8fd7',
      };
    }
    case 'pull_request':
    case 'pull_request_assign':
    case 'pull_request_label':
    case 'pull_request_milestone':
    case 'pull_request_sync':
    case 'pull_request_review_request':
    case 'pull_request_review_approved':
    case 'pull_request_review_rejected':
    case 'pull_request_review_comment': {
      const pr = obj(p['pull_request']);
      const review = obj(p['review']);
      const merged = str(p['action']) === 'closed' && pr['merged'] === true;
      const action = REVIEW_WORDS[type]
        ? `review ${REVIEW_WORDS[type]}`
        : merged
          ? 'merged'
          : str(p['action']).replace(/_/g, ' ');
      const details =
        str(p['action']) === 'opened'
          ? [str(pr['body'])]
          : str(p['action']) === 'reviewed'
            ? [str(review['content'])]
            : [];
      return {
        parts: [
          repo,
          ` Pull request ${action}: `,
          { text: `#${str(pr['number'])} ${str(pr['title'])}`, url: str(pr['html_url']) },
          by,
        ],
        details: details.filter(Boolean),
        color: merged
          ? '#6f42c1'
          : str(p['action']) === 'closed' || type === 'pull_request_review_rejected'
            ? '#cb2431'
            : '#2cbe4e',
      };
    }
    default: {
      const issue = obj(p['issue']);
      const action = str(p['action']).replace(/_/g, ' ');
      return {
        parts: [
          repo,
          ` Issue ${action}: `,
          { text: `#${str(issue['number'])} ${str(issue['title'])}`, url: str(issue['html_url']) },
          by,
        ],
        details: str(p['action']) === 'opened' ? [str(issue['body'])].filter(Boolean) : [],
        color: str(p['action']) === 'closed' ? '#cb2431' : '#2cbe4e',
      };
    }
  }
}

const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const htmlEscape = (s: string) => slackEscape(s).replace(/"/g, '&quot;');

const metaText = (meta: Meta, key: string): string => {
  const v = meta[key];
  return typeof v === 'string' ? v : '';
};

function slack(type: string, p: Json, meta: Meta): Json {
  const m = describe(type, p);
  const text = m.parts
    .map((x) => (typeof x === 'string' ? slackEscape(x) : `<${x.url}|${slackEscape(x.text)}>`))
    .join('');
  return {
    channel: metaText(meta, 'channel'),
    text,
    username: metaText(meta, 'username'),
    icon_url: metaText(meta, 'icon_url'),
    unfurl_links: false,
    link_names: false,
    attachments: m.details.length
      ? [{ color: metaText(meta, 'color') || m.color, text: m.details.map(slackEscape).join('\n') }]
      : [],
  };
}

function matrix(type: string, p: Json, meta: Meta): Json {
  const m = describe(type, p);
  const plain = m.parts.map((x) => (typeof x === 'string' ? x : `${x.text}`)).join('');
  const html = m.parts
    .map((x) =>
      typeof x === 'string' ? htmlEscape(x) : `<a href="${htmlEscape(x.url)}">${htmlEscape(x.text)}</a>`,
    )
    .join('');
  const details = m.details.filter(Boolean);
  return {
    body: [plain, ...details].join('\n'),
    msgtype: metaText(meta, 'message_type') || 'm.notice',
    format: 'org.matrix.custom.html',
    formatted_body: details.length ? `${html}<br>${details.map(htmlEscape).join('<br>')}` : html,
  };
}

export interface RenderOptions {
  /** [server] ROOT_URL (a build's BUILD_SUBMITTER_URL). */
  rootUrl?: string | undefined;
  /** For sourcehut_builds hooks: the build manifest as read at the event's commit. */
  manifest?: ManifestRead | undefined;
}

const JSON_TYPES = new Set(['forgejo', 'gitea', 'gogs']);

/** The payload as the hook's type wants it, serialized; null when the hook gets no delivery. */
export function render(
  hookType: string,
  eventType: string,
  payload: Json,
  meta: Meta,
  opts: RenderOptions = {},
): string | null {
  if (JSON_TYPES.has(hookType)) return JSON.stringify(payload, null, 2);
  if (eventType === 'push' && !(Array.isArray(payload['commits']) && payload['commits'].length > 0)) {
    return null;
  }
  const indented = (body: Json | null) => (body === null ? null : JSON.stringify(body, null, 2));
  switch (hookType) {
    case 'slack':
      return JSON.stringify(slack(eventType, payload, meta));
    case 'matrix':
      return JSON.stringify(matrix(eventType, payload, meta));
    case 'discord':
      return indented(discord(eventType, payload, meta));
    case 'telegram':
      return indented(telegram(eventType, payload));
    case 'msteams':
      return indented(msteams(eventType, payload));
    case 'dingtalk':
      return indented(dingtalk(eventType, payload));
    case 'feishu':
      return indented(feishu(eventType, payload));
    case 'wechatwork':
      return indented(wechatwork(eventType, payload));
    case 'packagist':
      return indented(packagist(meta));
    case 'sourcehut_builds':
      return indented(sourcehutBuild(eventType, payload, meta, opts.manifest, opts.rootUrl ?? ''));
    default:
      return JSON.stringify(payload, null, 2);
  }
}
