// Repository and branch names: what Anvil accepts before a name comes near the database or git.
import { invalidField } from '../errors.js';

const REPO_NAME = /^[\w.-]+$/;
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_SUFFIXES = ['.git', '.wiki', '.rss', '.atom'];

/** Throws a 422 naming the field when `name` cannot be a repository name. */
export function checkRepoName(name: string, field = 'name'): void {
  if (!name) throw invalidField(field, 'Required');
  if (name.length > 100) throw invalidField(field, 'must be at most 100 characters');
  const lower = name.toLowerCase();
  if (RESERVED_REPO_NAMES.has(lower) || RESERVED_REPO_SUFFIXES.some((s) => lower.endsWith(s))) {
    throw invalidField(field, `repository name is reserved [name: ${name}]`);
  }
  if (!REPO_NAME.test(name)) {
    throw invalidField(
      field,
      `repository name is invalid [name: ${name}]: use letters, digits, '-', '_' and '.'`,
    );
  }
}

/** A branch name git accepts (checked again by git itself). */
export function checkBranchName(name: string, field = 'default_branch'): void {
  if (
    !name ||
    name.length > 255 ||
    // eslint-disable-next-line no-control-regex -- control characters are exactly what git refuses
    /[\s~^:?*[\\\x00-\x1f\x7f]/.test(name) ||
    name.startsWith('-') ||
    name.startsWith('/') ||
    name.endsWith('/') ||
    name.endsWith('.') ||
    name.endsWith('.lock') ||
    name.includes('..') ||
    name.includes('//') ||
    name.includes('@{')
  ) {
    throw invalidField(field, `invalid branch name [name: ${name}]`);
  }
}
