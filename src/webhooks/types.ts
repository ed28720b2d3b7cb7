// The kinds of webhook Anvil delivers to, as Forgejo names them, and the settings each keeps: the
// JSON hooks (forgejo, gitea, gogs) get Forgejo's payload; the chat services (slack, discord,
// dingtalk, telegram, msteams, feishu, matrix, wechatwork) a message built from it; packagist a
// package update; sourcehut_builds a build job. What each keeps beside its URL is its `meta`
// (Forgejo's SlackMeta, DiscordMeta, TelegramMeta, PackagistMeta, BuildsMeta), read and checked
// here for the API (config keys) and the web forms (the same names).
import { badRequest, invalid } from '../errors.js';

/** Hook types Anvil delivers to, in the order of Forgejo's "Add webhook" menu. */
export const HOOK_TYPES = [
  'forgejo',
  'gitea',
  'gogs',
  'slack',
  'discord',
  'dingtalk',
  'telegram',
  'msteams',
  'feishu',
  'matrix',
  'wechatwork',
  'packagist',
  'sourcehut_builds',
] as const;
export type HookType = (typeof HOOK_TYPES)[number];

export const isHookType = (t: string): t is HookType => (HOOK_TYPES as readonly string[]).includes(t);

export const TYPE_LABELS: Record<HookType, string> = {
  forgejo: 'Forgejo',
  gitea: 'Gitea',
  gogs: 'Gogs',
  slack: 'Slack',
  discord: 'Discord',
  dingtalk: 'DingTalk',
  telegram: 'Telegram',
  msteams: 'Microsoft Teams',
  feishu: 'Feishu / Lark Suite',
  matrix: 'Matrix',
  wechatwork: 'WeCom (Wechat Work)',
  packagist: 'Packagist',
  sourcehut_builds: 'SourceHut Builds',
};

/**
 * Types whose requests are always a JSON POST without a secret, whatever content type or method
 * is asked for (Forgejo builds them so).
 */
export const FIXED_TYPES: ReadonlySet<string> = new Set([
  'discord',
  'dingtalk',
  'telegram',
  'msteams',
  'feishu',
  'wechatwork',
  'packagist',
  'sourcehut_builds',
]);

/** Types whose requests carry no X-Forgejo-* (X-Gitea-*, X-Hub-*, ...) headers nor signatures. */
export const PLAIN_TYPES: ReadonlySet<string> = new Set(['packagist', 'sourcehut_builds']);

/** The meta keys of each type that has settings, in Forgejo's order. */
export const META_KEYS: Partial<Record<HookType, readonly string[]>> = {
  slack: ['channel', 'username', 'icon_url', 'color'],
  discord: ['username', 'icon_url'],
  telegram: ['bot_token', 'chat_id', 'thread_id'],
  packagist: ['username', 'api_token', 'package_url'],
  sourcehut_builds: ['manifest_path', 'visibility', 'secrets'],
};

/** SourceHut's build visibilities. */
export const BUILD_VISIBILITIES = ['PUBLIC', 'UNLISTED', 'PRIVATE'] as const;

/** Go's url.PathEscape: everything but unreserved characters and $&+:=@ escaped. */
function pathEscape(s: string): string {
  return Array.from(new TextEncoder().encode(s), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9\-_.~$&+:=@]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

/** Go's url.QueryEscape: unreserved characters kept, spaces as +. */
function queryEscape(s: string): string {
  return Array.from(new TextEncoder().encode(s), (b) => {
    const c = String.fromCharCode(b);
    if (c === ' ') return '+';
    return /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

/** Where a telegram hook posts (Forgejo keeps the bot token in the URL). */
export const telegramUrl = (botToken: string, chatId: string, threadId: string): string =>
  `https://api.telegram.org/bot${pathEscape(botToken)}/sendMessage?chat_id=${queryEscape(chatId)}` +
  `&message_thread_id=${queryEscape(threadId)}`;

/** Where a packagist hook posts: its update-package API with the user's credentials. */
export const packagistUrl = (username: string, apiToken: string): string =>
  `https://packagist.org/api/update-package?username=${queryEscape(username)}&apiToken=${queryEscape(apiToken)}`;

/** An absolute http(s) URL of at most 2048 characters. */
export function isWebUrl(url: string): boolean {
  if (url.length > 2048) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Go's fs.ValidPath: a relative, slash-separated path without empty, '.' or '..' elements. */
export function isValidManifestPath(p: string): boolean {
  if (p === '.') return true;
  if (p === '' || p.includes('\\') || p.includes('\0')) return false;
  return p.split('/').every((e) => e !== '' && e !== '.' && e !== '..');
}

const TRUE = ['true', '1', 't', 'on'];
const FALSE = ['false', '0', 'f', 'off', ''];

/** What a hook of one type keeps besides its URL: its meta (JSON, '' for none) and derived URL. */
export interface TypeSettings {
  /** Forgejo's meta JSON; '' when the type keeps none. */
  meta: string;
  /** The URL the settings make (telegram, packagist), when the caller gave none. */
  url?: string | undefined;
}

const missing = (key: string) => invalid(`Missing config option: ${key}`);

/**
 * The settings of a hook of `type` from `config` (API config keys; the web forms post the same
 * names), on top of `previous` (the stored meta, when editing). Throws a 422 naming the key.
 */
export function typeSettings(
  type: HookType,
  config: Record<string, string>,
  previous: Record<string, unknown> = {},
  hasUrl = false,
): TypeSettings {
  const keys = META_KEYS[type];
  if (!keys) return { meta: '' };
  const v: Record<string, string> = {};
  for (const k of keys) {
    const given = config[k];
    const old = previous[k];
    v[k] = given ?? (typeof old === 'boolean' ? String(old) : typeof old === 'string' ? old : '');
  }
  switch (type) {
    case 'slack': {
      if (!('channel' in config) && !('channel' in previous)) throw missing('channel');
      v['channel'] = v['channel']!.trim();
      if (v['channel'] === '' || v['channel'] === '#') throw badRequest('Invalid slack channel name');
      return { meta: JSON.stringify(v) };
    }
    case 'discord': {
      if (v['username']!.length > 80) throw invalid('Invalid username: at most 80 characters');
      if (v['icon_url'] && !isWebUrl(v['icon_url'])) throw invalid('Invalid icon_url');
      return { meta: JSON.stringify(v) };
    }
    case 'telegram': {
      const meta = JSON.stringify(v);
      if (hasUrl) return { meta };
      if (!v['bot_token']) throw missing('bot_token');
      if (!v['chat_id']) throw missing('chat_id');
      return { meta, url: telegramUrl(v['bot_token'], v['chat_id'], v['thread_id']!) };
    }
    case 'packagist': {
      if (v['package_url'] && !isWebUrl(v['package_url'])) throw invalid('Invalid package_url');
      const meta = JSON.stringify(v);
      if (hasUrl) return { meta };
      if (!v['username']) throw missing('username');
      if (!v['api_token']) throw missing('api_token');
      return { meta, url: packagistUrl(v['username'], v['api_token']) };
    }
    case 'sourcehut_builds': {
      const path = v['manifest_path']!.trim() || '.build.yml';
      if (!isValidManifestPath(path)) throw invalid('Invalid manifest_path');
      const visibility = (v['visibility']!.trim() || 'PRIVATE').toUpperCase();
      if (!(BUILD_VISIBILITIES as readonly string[]).includes(visibility)) {
        throw invalid('Invalid visibility: PUBLIC, UNLISTED or PRIVATE');
      }
      const flag = v['secrets']!.trim().toLowerCase();
      if (!TRUE.includes(flag) && !FALSE.includes(flag)) throw invalid('Invalid secrets value');
      return {
        meta: JSON.stringify({ manifest_path: path, visibility, secrets: TRUE.includes(flag) }),
      };
    }
    default:
      return { meta: '' };
  }
}
