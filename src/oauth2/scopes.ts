// What an OAuth2 grant's scope means, as in Forgejo: the OpenID Connect scopes (openid, profile,
// email, groups) say what the id_token and userinfo tell; the words that are access token scopes
// (`read:repository`, `write:issue`, `all`, `public-only`, ...) limit what its access tokens may
// do on the API. A grant naming none of the latter gives its tokens every scope, as Forgejo does.
// Words of neither kind are kept in the grant and ignored. Pure.
import { ALL_SCOPES, SCOPE_CATEGORIES, parseScopes, type ScopeSet } from '../tokens/scopes.js';

export const OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/** The words of a requested or granted scope (space-separated; commas tolerated). */
export function scopeWords(scope: string): string[] {
  return [...new Set(scope.split(/[\s,]+/).filter(Boolean))];
}

export const hasScopeWord = (scope: string, word: string): boolean => scopeWords(scope).includes(word);

/** The words of `scope` that are access token scopes. */
export function apiScopeWords(scope: string): string[] {
  return scopeWords(scope).filter((w) => {
    if ((OIDC_SCOPES as readonly string[]).includes(w)) return false;
    try {
      parseScopes([w]);
      return true;
    } catch {
      return false;
    }
  });
}

const cache = new Map<string, ScopeSet>();

/** The API scopes of the access tokens of a grant of `scope`. */
export function apiScopesOf(scope: string): ScopeSet {
  let set = cache.get(scope);
  if (set) return set;
  const words = apiScopeWords(scope);
  const parsed = parseScopes(words);
  // No category named (none at all, or only public-only): every category, public-only kept.
  const none = SCOPE_CATEGORIES.every((c) => parsed.levels[c] === 0);
  set = none ? { publicOnly: parsed.publicOnly, levels: { ...ALL_SCOPES.levels } } : parsed;
  if (cache.size < 1000) cache.set(scope, set);
  return set;
}

/** Whether every word of `wanted` is in `granted`. */
export function scopeCovers(granted: string, wanted: string): boolean {
  const have = new Set(scopeWords(granted));
  return scopeWords(wanted).every((w) => have.has(w));
}
