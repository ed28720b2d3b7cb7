// The messages Forgejo sends to chat services for each event: Discord embeds, Telegram HTML text,
// Microsoft Teams MessageCards, DingTalk action cards, Feishu text and WeCom markdown, built from
// Forgejo's JSON payload as its services/webhook/{discord,telegram,msteams,dingtalk,feishu,
// wechatwork}.go build them. Pure.
import type SanitizeHtml from 'sanitize-html';
import { lazyModule } from '../lazy.js';
import {
  COLORS,
  REVIEW_ACTIONS,
  authorOf,
  commentInfo,
  commitDesc,
  converterOf,
  htmlLink,
  issueInfo,
  noneLink,
  obj,
  packageInfo,
  pathSegments,
  plainInfo,
  pullInfo,
  pushCommits,
  pushLink,
  releaseInfo,
  repoOf,
  shortRef,
  str,
  wikiInfo,
  wikiUrl,
  type Json,
} from './render-info.js';

type Meta = Record<string, unknown>;

const fullName = (p: Json) => str(repoOf(p)['full_name']);
const htmlUrl = (p: Json) => str(repoOf(p)['html_url']);
const srcUrl = (p: Json) => `${htmlUrl(p)}/src/${pathSegments(shortRef(str(p['ref'])))}`;
const refHeadline = (p: Json, verb: string) =>
  `[${fullName(p)}] ${str(p['ref_type'])} ${shortRef(str(p['ref']))} ${verb}`;
const forkHeadline = (p: Json) => `${str(obj(p['forkee'])['full_name'])} is forked to ${fullName(p)}`;
const reviewTitle = (p: Json, event: string, space = '') =>
  `[${fullName(p)}] Pull request review ${REVIEW_ACTIONS[event] ?? ''}${space}: #${str(p['number'])} ` +
  str(obj(p['pull_request'])['title']);
const runes = (s: string) => Array.from(s);
const trimEol = (s: string) => s.replace(/[\r\n]+$/, '');

// Discord

/** Forgejo's escapeMarkdown for commit messages in Discord embeds. */
function escapeMarkdown(input: string): string {
  let out = input.replace(/(\d+)\./g, '$1\\.');
  out = out
    .replace(/~(.*?)~/g, '\\~$1\\~')
    .replace(/\*(.*?)\*/g, '\\*$1\\*')
    .replace(/_(.*?)_/g, '\\_$1\\_');
  const pairs: Array<[string, string]> = [
    ['* ', '\\* '],
    ['`', '\\`'],
    ['[', '\\['],
    [']', '\\]'],
    ['(', '\\('],
    [')', '\\)'],
    ['#', '\\#'],
    ['+ ', '\\+ '],
    ['- ', '\\- '],
    ['---', '\\---'],
    ['!', '\\!'],
    ['|', '\\|'],
    ['<', '\\<'],
    ['>', '\\>'],
  ];
  let result = '';
  for (let i = 0; i < out.length;) {
    const hit = pairs.find(([from]) => out.startsWith(from, i));
    if (hit) {
      result += hit[1];
      i += hit[0].length;
    } else {
      result += out[i];
      i++;
    }
  }
  return result;
}

/** Forgejo's base.TruncateString. */
function truncate(s: string, limit: number): string {
  const r = runes(s);
  return r.length < limit ? s : `${r.slice(0, limit - 3).join('')}...`;
}

function discordEmbed(p: Json, meta: Meta, title: string, text: string, url: string, color: number): Json {
  const sender = obj(p['sender']);
  let t = title;
  if (runes(t).length > 256) t = `${runes(t).slice(0, 253).join('')}...`;
  let d = text;
  if (runes(d).length > 4096) d = `${runes(d).slice(0, 4093).join('')}...`;
  const body: Json = { username: str(meta['username']) };
  if (str(meta['icon_url'])) body['avatar_url'] = str(meta['icon_url']);
  body['embeds'] = [
    {
      title: t,
      description: truncate(d, 2000),
      url,
      color,
      footer: {},
      author: {
        name: str(sender['login']),
        url: str(sender['html_url']),
        icon_url: str(sender['avatar_url']),
      },
    },
  ];
  return body;
}

export function discord(event: string, p: Json, meta: Meta): Json | null {
  const embed = (title: string, text: string, url: string, color: number) =>
    discordEmbed(p, meta, title, text, url, color);
  switch (converterOf(event)) {
    case 'create':
      return embed(refHeadline(p, 'created'), '', srcUrl(p), COLORS.green);
    case 'delete':
      return embed(refHeadline(p, 'deleted'), '', srcUrl(p), COLORS.red);
    case 'fork':
      return embed(forkHeadline(p), '', htmlUrl(p), COLORS.green);
    case 'push': {
      const { commits, total } = pushCommits(p);
      const lines = commits.map((c) => {
        let message = escapeMarkdown(str(c['message']).replace(/\r+$/, ''));
        if (runes(message).length > 50) message = `${runes(message).slice(0, 47).join('')}...`;
        return `[${str(c['id']).slice(0, 7)}](${str(c['url'])}) ${message} - ${authorOf(c) ?? ''}`;
      });
      const title = `[${fullName(p)}:${shortRef(str(p['ref']))}] ${commitDesc(total)}`;
      return embed(title, lines.join('\n'), pushLink(p, commits, total), COLORS.green);
    }
    case 'issue': {
      const i = issueInfo(p, noneLink, false);
      return embed(i.text, i.attachment, str(obj(p['issue'])['html_url']), i.color);
    }
    case 'issue_comment': {
      const i = commentInfo(p, noneLink, false);
      const c = obj(p['comment']);
      return embed(i.text, str(c['body']), str(c['html_url']), i.color);
    }
    case 'pull_request': {
      const i = pullInfo(p, noneLink, false);
      return embed(i.text, i.attachment, str(obj(p['pull_request'])['html_url']), i.color);
    }
    case 'review': {
      const reviewed = str(p['action']) === 'reviewed';
      const color = !reviewed
        ? 0
        : event === 'pull_request_review_approved'
          ? COLORS.green
          : event === 'pull_request_review_rejected'
            ? COLORS.red
            : COLORS.grey;
      return embed(
        reviewed ? reviewTitle(p, event) : '',
        reviewed ? str(obj(p['review'])['content']) : '',
        str(obj(p['pull_request'])['html_url']),
        color,
      );
    }
    case 'repository':
      return str(p['action']) === 'created'
        ? embed(`[${fullName(p)}] Repository created`, '', htmlUrl(p), COLORS.green)
        : embed(`[${fullName(p)}] Repository deleted`, '', '', COLORS.red);
    case 'wiki': {
      const i = wikiInfo(p, noneLink, false);
      const text = str(p['action']) === 'deleted' ? '' : str(p['comment']);
      return embed(i.text, text, wikiUrl(p), i.color);
    }
    case 'release': {
      const i = releaseInfo(p, noneLink, false);
      const rel = obj(p['release']);
      return embed(i.text, str(rel['body']), str(rel['html_url']), i.color);
    }
    case 'package': {
      const i = packageInfo(p, noneLink, false);
      return embed(i.text, '', str(obj(p['package'])['html_url']), i.color);
    }
    default:
      return null;
  }
}

// Telegram

/** sanitize-html, loaded with the first Telegram message (not at start-up). */
const sanitizeLib = lazyModule<typeof SanitizeHtml>('sanitize-html');

function telegramBody(message: string): Json {
  const sanitizeHtml = sanitizeLib();
  const text = sanitizeHtml(message.trim(), {
    allowedTags: sanitizeHtml.defaults.allowedTags,
    allowedAttributes: { a: ['href'] },
  });
  return { text, parse_mode: 'HTML', disable_web_page_preview: true };
}

export function telegram(event: string, p: Json): Json | null {
  switch (converterOf(event)) {
    case 'create':
    case 'delete': {
      const ref = shortRef(str(p['ref']));
      const verb = event === 'create' ? 'created' : 'deleted';
      return telegramBody(
        `[${fullName(p)}] ${str(p['ref_type'])} <a href="${htmlUrl(p)}/src/${ref}">${ref}</a> ${verb}`,
      );
    }
    case 'fork':
      return telegramBody(
        `${str(obj(p['forkee'])['full_name'])} is forked to <a href="${htmlUrl(p)}">${fullName(p)}</a>`,
      );
    case 'push': {
      const { commits, total } = pushCommits(p);
      const title = `[${fullName(p)}:${shortRef(str(p['ref']))}] ${commitDesc(total)}`;
      const lines = commits.map((c) => {
        const author = authorOf(c);
        return (
          `[<a href="${str(c['url'])}">${str(c['id']).slice(0, 7)}</a>] ${trimEol(str(c['message']))}` +
          (author === undefined ? '' : ` - ${author}`)
        );
      });
      return telegramBody(`${title}\n${lines.join('\n')}`);
    }
    case 'issue': {
      const i = issueInfo(p, htmlLink, true);
      return telegramBody(`${i.text}\n\n${i.attachment}`);
    }
    case 'issue_comment':
      return telegramBody(`${commentInfo(p, htmlLink, true).text}\n${str(obj(p['comment'])['body'])}`);
    case 'pull_request': {
      const i = pullInfo(p, htmlLink, true);
      return telegramBody(`${i.text}\n${i.attachment}`);
    }
    case 'review': {
      const reviewed = str(p['action']) === 'reviewed';
      return telegramBody(reviewed ? `${reviewTitle(p, event)}\n${str(obj(p['review'])['content'])}` : '\n');
    }
    case 'repository':
      return str(p['action']) === 'created'
        ? telegramBody(`[<a href="${htmlUrl(p)}">${fullName(p)}</a>] Repository created`)
        : telegramBody(`[${fullName(p)}] Repository deleted`);
    case 'wiki':
      return telegramBody(wikiInfo(p, htmlLink, true).text);
    case 'release':
      return telegramBody(releaseInfo(p, htmlLink, true).text);
    case 'package':
      return telegramBody(packageInfo(p, htmlLink, true).text);
    default:
      return null;
  }
}

// Microsoft Teams

function teamsCard(
  p: Json,
  title: string,
  text: string,
  target: string,
  color: number,
  fact?: [string, string],
): Json {
  const repo = obj(p['repository']);
  const sender = obj(p['sender']);
  const facts: Array<{ name: string; value: string }> = [];
  if (p['repository']) facts.push({ name: 'Repository:', value: str(repo['full_name']) });
  if (fact) facts.push({ name: fact[0], value: fact[1] });
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    themeColor: color.toString(16),
    title,
    summary: title,
    sections: [
      {
        activityTitle: str(sender['full_name']),
        activitySubtitle: str(sender['login']),
        activityImage: str(sender['avatar_url']),
        facts,
        text,
      },
    ],
    potentialAction: [
      { '@type': 'OpenUri', name: 'View in Gitea', targets: [{ os: 'default', uri: target }] },
    ],
  };
}

export function msteams(event: string, p: Json): Json | null {
  const ref = shortRef(str(p['ref']));
  const issueId = () => str(obj(p['issue'])['id']);
  const pullId = () => str(obj(p['pull_request'])['id']);
  switch (converterOf(event)) {
    case 'create':
      return teamsCard(p, refHeadline(p, 'created'), '', srcUrl(p), COLORS.green, [
        `${str(p['ref_type'])}:`,
        ref,
      ]);
    case 'delete':
      return teamsCard(p, refHeadline(p, 'deleted'), '', srcUrl(p), COLORS.yellow, [
        `${str(p['ref_type'])}:`,
        ref,
      ]);
    case 'fork':
      return teamsCard(p, forkHeadline(p), '', htmlUrl(p), COLORS.green, [
        'Forkee:',
        str(obj(p['forkee'])['full_name']),
      ]);
    case 'push': {
      const { commits, total } = pushCommits(p);
      const title = `[${fullName(p)}:${ref}] ${commitDesc(total)}`;
      const text = commits
        .map(
          (c) =>
            `[${str(c['id']).slice(0, 7)}](${str(c['url'])}) ${trimEol(str(c['message']))} - ${authorOf(c) ?? ''}`,
        )
        .join('\n\n');
      return teamsCard(p, title, text, pushLink(p, commits, total), COLORS.green, [
        'Commit count:',
        String(total),
      ]);
    }
    case 'issue': {
      const i = issueInfo(p, noneLink, false);
      return teamsCard(p, i.text, i.attachment, str(obj(p['issue'])['html_url']), i.color, [
        'Issue #:',
        issueId(),
      ]);
    }
    case 'issue_comment': {
      const i = commentInfo(p, noneLink, false);
      const c = obj(p['comment']);
      return teamsCard(p, i.text, str(c['body']), str(c['html_url']), i.color, ['Issue #:', issueId()]);
    }
    case 'pull_request': {
      const i = pullInfo(p, noneLink, false);
      return teamsCard(p, i.text, i.attachment, str(obj(p['pull_request'])['html_url']), i.color, [
        'Pull request #:',
        pullId(),
      ]);
    }
    case 'review': {
      const reviewed = str(p['action']) === 'reviewed';
      const color = !reviewed
        ? 0
        : event === 'pull_request_review_approved'
          ? COLORS.green
          : event === 'pull_request_review_rejected'
            ? COLORS.red
            : COLORS.grey;
      return teamsCard(
        p,
        reviewed ? reviewTitle(p, event) : '',
        reviewed ? str(obj(p['review'])['content']) : '',
        str(obj(p['pull_request'])['html_url']),
        color,
        ['Pull request #:', pullId()],
      );
    }
    case 'repository':
      return str(p['action']) === 'created'
        ? teamsCard(p, `[${fullName(p)}] Repository created`, '', htmlUrl(p), COLORS.green)
        : teamsCard(p, `[${fullName(p)}] Repository deleted`, '', '', COLORS.yellow);
    case 'wiki': {
      const i = wikiInfo(p, noneLink, false);
      return teamsCard(p, i.text, '', wikiUrl(p), i.color, ['Repository:', fullName(p)]);
    }
    case 'release': {
      const i = releaseInfo(p, noneLink, false);
      const rel = obj(p['release']);
      return teamsCard(p, i.text, '', str(rel['html_url']), i.color, ['Tag:', str(rel['tag_name'])]);
    }
    case 'package': {
      const i = packageInfo(p, noneLink, false);
      const pkg = obj(p['package']);
      return teamsCard(p, i.text, '', str(pkg['html_url']), i.color, ['Package:', str(pkg['name'])]);
    }
    default:
      return null;
  }
}

// DingTalk

/** Go's url.QueryEscape. */
const queryEscape = (s: string) =>
  encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');

function actionCard(title: string, text: string, singleTitle: string, singleUrl: string): Json {
  return {
    msgtype: 'actionCard',
    text: { content: '' },
    actionCard: {
      text: text.trim(),
      title: title.trim(),
      hideAvatar: '0',
      singleTitle,
      singleURL: `dingtalk://dingtalkclient/page/link?pc_slide=false&url=${queryEscape(singleUrl)}`,
    },
  };
}

export function dingtalk(event: string, p: Json): Json | null {
  const ref = shortRef(str(p['ref']));
  switch (converterOf(event)) {
    case 'create':
    case 'delete': {
      const title = refHeadline(p, event === 'create' ? 'created' : 'deleted');
      return actionCard(title, title, `view ref ${ref}`, srcUrl(p));
    }
    case 'fork': {
      const title = forkHeadline(p);
      return actionCard(title, title, `view forked repo ${fullName(p)}`, htmlUrl(p));
    }
    case 'push': {
      const { commits, total } = pushCommits(p);
      const title = `[${fullName(p)}:${ref}] ${commitDesc(total)}`;
      const text = commits
        .map((c) => {
          const author = authorOf(c);
          return (
            `[${str(c['id']).slice(0, 7)}](${str(c['url'])}) ${trimEol(str(c['message']))}` +
            (author === undefined ? '' : ` - ${author}`)
          );
        })
        .join('\r\n');
      const linkText = total === 1 ? 'view commit' : 'view commits';
      return actionCard(title, text, linkText, pushLink(p, commits, total));
    }
    case 'issue': {
      const i = issueInfo(p, noneLink, true);
      return actionCard(
        i.title,
        `${i.text}\r\n\r\n${i.attachment}`,
        'view issue',
        str(obj(p['issue'])['html_url']),
      );
    }
    case 'issue_comment': {
      const i = commentInfo(p, noneLink, true);
      const c = obj(p['comment']);
      return actionCard(
        i.title,
        `${i.text}\r\n\r\n${str(c['body'])}`,
        'view issue comment',
        str(c['html_url']),
      );
    }
    case 'pull_request': {
      const i = pullInfo(p, noneLink, true);
      return actionCard(
        i.title,
        `${i.text}\r\n\r\n${i.attachment}`,
        'view pull request',
        str(obj(p['pull_request'])['html_url']),
      );
    }
    case 'review': {
      const reviewed = str(p['action']) === 'reviewed';
      const title = reviewed ? reviewTitle(p, event, ' ') : '';
      const text = reviewed ? str(obj(p['review'])['content']) : '';
      return actionCard(
        title,
        `${title}\r\n\r\n${text}`,
        'view pull request',
        str(obj(p['pull_request'])['html_url']),
      );
    }
    case 'repository': {
      if (str(p['action']) === 'created') {
        const title = `[${fullName(p)}] Repository created`;
        return actionCard(title, title, 'view repository', htmlUrl(p));
      }
      return {
        msgtype: 'text',
        text: { content: `[${fullName(p)}] Repository deleted` },
        actionCard: { text: '', title: '', hideAvatar: '', singleTitle: '', singleURL: '' },
      };
    }
    case 'wiki': {
      const { text } = wikiInfo(p, noneLink, true);
      return actionCard(text, text, 'view wiki', wikiUrl(p));
    }
    case 'release': {
      const { text } = releaseInfo(p, noneLink, true);
      return actionCard(text, text, 'view release', str(obj(p['release'])['html_url']));
    }
    case 'package': {
      const { text } = packageInfo(p, noneLink, true);
      return actionCard(text, text, 'view package', str(obj(p['package'])['html_url']));
    }
    default:
      return null;
  }
}

// Feishu

const feishuText = (text: string): Json => ({ msg_type: 'text', content: { text: text.trim() } });

function feishuItem(p: Json, isPull: boolean): Json {
  const i = plainInfo(p, isPull);
  const body = str(obj(p[isPull ? 'pull_request' : 'issue'])['body']);
  const head = `${i.title}\n${i.link}\n${i.by}\n${i.operator}`;
  if (!i.assignees) return feishuText(`${head}\n\n${body}`);
  const action = str(p['action']);
  if (action === 'assigned' || action === 'unassigned' || action === 'milestoned') {
    return feishuText(`${head}\n${i.result}\n${i.assignees}\n\n${body}`);
  }
  return feishuText(`${head}\n${i.assignees}\n\n${body}`);
}

export function feishu(event: string, p: Json): Json | null {
  const ref = shortRef(str(p['ref']));
  switch (converterOf(event)) {
    case 'create':
      return feishuText(refHeadline(p, 'created'));
    case 'delete':
      return feishuText(refHeadline(p, 'deleted'));
    case 'fork':
      return feishuText(forkHeadline(p));
    case 'push': {
      // Forgejo leaves the commit count out of the headline here.
      const lines = pushCommits(p).commits.map((c) => {
        const author = authorOf(c);
        return (
          `[${str(c['id']).slice(0, 7)}](${str(c['url'])}) ${trimEol(str(c['message']))}` +
          (author === undefined ? '' : ` - ${author}`)
        );
      });
      return feishuText(`[${fullName(p)}:${ref}] \r\n${lines.join('\r\n')}`);
    }
    case 'issue':
      return feishuItem(p, false);
    case 'issue_comment': {
      const issue = obj(p['issue']);
      const isPull = p['is_pull'] === true;
      const title = `[Comment-${fullName(p)} #${str(issue['number'])}]: ${str(p['action'])}\n${str(issue['title'])}`;
      const by = `${isPull ? 'PullRequest' : 'Issue'} by ${str(obj(issue['user'])['login'])}`;
      const operator = `Operator: ${str(obj(p['sender'])['login'])}`;
      return feishuText(
        `${title}\n${str(issue['html_url'])}\n${by}\n${operator}\n\n${str(obj(p['comment'])['body'])}`,
      );
    }
    case 'pull_request':
      return feishuItem(p, true);
    case 'review':
      return feishuText(`${reviewTitle(p, event, ' ')}\r\n\r\n${str(obj(p['review'])['content'])}`);
    case 'repository':
      return feishuText(
        `[${fullName(p)}] Repository ${str(p['action']) === 'created' ? 'created' : 'deleted'}`,
      );
    case 'wiki':
      return feishuText(wikiInfo(p, noneLink, true).text);
    case 'release':
      return feishuText(releaseInfo(p, noneLink, true).text);
    case 'package':
      return feishuText(packageInfo(p, noneLink, true).text);
    default:
      return null;
  }
}

// WeCom (Wechat Work)

const wecomMarkdown = (content: string): Json => ({
  msgtype: 'markdown',
  text: { content: '', mentioned_list: null, mentioned_mobile_list: null },
  markdown: { content },
});

export function wechatwork(event: string, p: Json): Json | null {
  const ref = shortRef(str(p['ref']));
  switch (converterOf(event)) {
    case 'create':
      return wecomMarkdown(refHeadline(p, 'created'));
    case 'delete':
      return wecomMarkdown(refHeadline(p, 'deleted'));
    case 'fork':
      return wecomMarkdown(forkHeadline(p));
    case 'push': {
      // Forgejo leaves the commit count out of the headline here too.
      const title = `# ${fullName(p)}:${ref} <font color="warning">    </font>`;
      const text = pushCommits(p)
        .commits.map((c) => {
          const author = authorOf(c);
          const message = str(c['message']).replace(/\n\n/g, '\r\n');
          return (
            ` > [${str(c['id']).slice(0, 7)}](${str(c['url'])}) \r\n ><font color="info">${message}</font> \n ` +
            `><font color="warning">${author === undefined ? '' : `Author: ${author}`}</font>`
          );
        })
        .join('\n');
      return wecomMarkdown(`${title}\r\n\r\n${text}`);
    }
    case 'issue': {
      const i = issueInfo(p, noneLink, true);
      const url = str(obj(p['issue'])['html_url']);
      return wecomMarkdown(
        ` ><font color="info">${i.text}</font>\n >${i.attachment} \n ><font color="warning"> ${i.title}</font> \n [${url}](${url})`,
      );
    }
    case 'issue_comment': {
      const i = commentInfo(p, noneLink, true);
      const c = obj(p['comment']);
      const url = str(c['html_url']);
      return wecomMarkdown(
        ` ><font color="info">${i.text}</font>\n >${str(c['body'])} \n ><font color="warning">${i.title}</font> \n [${url}](${url})`,
      );
    }
    case 'pull_request': {
      const i = pullInfo(p, noneLink, true);
      return wecomMarkdown(
        `> <font color="info"> ${i.text} </font> \r\n > <font color="comment">${i.title} </font> \r\n > <font color="comment">${i.attachment} </font> \r\n`,
      );
    }
    case 'review': {
      const reviewed = str(p['action']) === 'reviewed';
      const title = reviewed ? reviewTitle(p, event, ' ') : '';
      const text = reviewed ? str(obj(p['review'])['content']) : '';
      return wecomMarkdown(`# ${title}\r\n\r\n >${text}`);
    }
    case 'repository':
      return wecomMarkdown(
        `[${fullName(p)}] Repository ${str(p['action']) === 'created' ? 'created' : 'deleted'}`,
      );
    case 'wiki':
      return wecomMarkdown(wikiInfo(p, noneLink, true).text);
    case 'release':
      return wecomMarkdown(releaseInfo(p, noneLink, true).text);
    case 'package':
      return wecomMarkdown(packageInfo(p, noneLink, true).text);
    default:
      return null;
  }
}
