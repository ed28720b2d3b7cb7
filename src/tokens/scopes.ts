// Forgejo's access token scopes: `all`, `public-only`, and read:/write: for each category.
// Pure logic: parsing, normalizing (write implies read) and checking.
import { badRequest } from '../errors.js';

export const SCOPE_CATEGORIES = [
  'activitypub',
  'admin',
  'misc',
  'notification',
  'organization',
  'package',
  'issue',
  'repository',
  'user',
] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];
export type ScopeLevel = 'read' | 'write';

const LEVEL_NONE = 0;
const LEVEL_READ = 1;
const LEVEL_WRITE = 2;

/** A parsed scope: the level granted for each category, and whether it is limited to public resources. */
export interface ScopeSet {
  publicOnly: boolean;
  levels: Record<ScopeCategory, number>;
}

function emptyLevels(): Record<ScopeCategory, number> {
  return Object.fromEntries(SCOPE_CATEGORIES.map((c) => [c, LEVEL_NONE])) as Record<ScopeCategory, number>;
}

/** Parses a list of scope names or a comma-separated string. Unknown names are a 422 naming them. */
export function parseScopes(input: string | readonly string[]): ScopeSet {
  const names = (typeof input === 'string' ? input.split(',') : input).map((s) => s.trim()).filter(Boolean);
  const set: ScopeSet = { publicOnly: false, levels: emptyLevels() };
  for (const name of names) {
    if (name === 'all') {
      for (const c of SCOPE_CATEGORIES) set.levels[c] = LEVEL_WRITE;
      continue;
    }
    if (name === 'public-only') {
      set.publicOnly = true;
      continue;
    }
    const m = /^(read|write):([a-z]+)$/.exec(name);
    const category = m?.[2] as ScopeCategory | undefined;
    if (!m || !category || !SCOPE_CATEGORIES.includes(category)) {
      throw badRequest(`invalid access token scope provided: ${name}`);
    }
    const level = m[1] === 'write' ? LEVEL_WRITE : LEVEL_READ;
    if (set.levels[category] < level) set.levels[category] = level;
  }
  return set;
}

/** The stored, normalized form: public-only first, then `all` or each category's highest level. */
export function formatScopes(set: ScopeSet): string {
  const parts: string[] = [];
  if (set.publicOnly) parts.push('public-only');
  if (SCOPE_CATEGORIES.every((c) => set.levels[c] === LEVEL_WRITE)) {
    parts.push('all');
  } else {
    for (const c of SCOPE_CATEGORIES) {
      if (set.levels[c] === LEVEL_WRITE) parts.push(`write:${c}`);
      else if (set.levels[c] === LEVEL_READ) parts.push(`read:${c}`);
    }
  }
  return parts.join(',');
}

/**
 * The stored form of a token's scopes. A list that grants nothing is a 400: its stored form would
 * be '', which `storedScopes` reads as all.
 */
export function normalizeScopes(input: string | readonly string[]): string {
  const scope = formatScopes(parseScopes(input));
  if (scope === '') throw badRequest('access token must have a scope');
  return scope;
}

const storedCache = new Map<string, ScopeSet>();

/** A stored scope string; '' (a token from before scopes existed) means all. Parsed once per string. */
export function storedScopes(scope: string): ScopeSet {
  let set = storedCache.get(scope);
  if (!set) {
    set = parseScopes(scope === '' ? 'all' : scope);
    if (storedCache.size < 1000) storedCache.set(scope, set);
  }
  return set;
}

export const ALL_SCOPES: ScopeSet = parseScopes('all');

export function hasScope(set: ScopeSet, category: ScopeCategory, level: ScopeLevel): boolean {
  return set.levels[category] >= (level === 'write' ? LEVEL_WRITE : LEVEL_READ);
}
