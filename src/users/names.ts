// Which names a user or organization may take. Shared by accounts, organizations and (later) repositories.
import { invalidField } from '../errors.js';

/** The actions bot: reserved, never a real account that signs in. */
export const ACTIONS_BOT_NAME = 'anvil-actions';

const RESERVED = new Set([
  '.',
  '..',
  '.well-known',
  'admin',
  'api',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'captcha',
  'commits',
  'debug',
  'devtest',
  'error',
  'explore',
  'favicon.ico',
  'ghost',
  'issues',
  'login',
  'manifest.json',
  'metrics',
  'milestones',
  'new',
  'notifications',
  'org',
  'pulls',
  'raw',
  'repo',
  'repo-avatars',
  'robots.txt',
  'search',
  'serviceworker.js',
  'ssh_info',
  'swagger.v1.json',
  'user',
  'v2',
  'twirp',
  'gitea-actions',
  'forgejo-actions',
  ACTIONS_BOT_NAME,
]);
const RESERVED_SUFFIXES = ['.keys', '.gpg', '.rss', '.atom', '.png', '.git', '.wiki'];

const VALID = /^[\da-zA-Z](?:[\w.-]*[\da-zA-Z])?$/;
const DOUBLE_SPECIAL = /[-._]{2,}/;

export function isReservedName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || RESERVED_SUFFIXES.some((s) => lower.endsWith(s));
}

/** Throws a 422 naming the field when `name` cannot be a user or organization name. */
export function checkOwnerName(name: string, field = 'username'): void {
  if (name.length === 0) throw invalidField(field, 'Required');
  if (name.length > 40) throw invalidField(field, 'must be at most 40 characters');
  if (isReservedName(name)) throw invalidField(field, `name is reserved [name: ${name}]`);
  if (!VALID.test(name) || DOUBLE_SPECIAL.test(name)) {
    throw invalidField(
      field,
      `name is invalid [name: ${name}]: use letters, digits, '-', '_' and '.', starting and ending with a letter or digit`,
    );
  }
}
