// Which protection rule governs a branch. A rule name is either a plain branch name or a glob
// with '/' as the separator: `*` matches within one path segment, `**` across segments. A plain
// rule for the branch wins over every glob; among globs the first created wins (Forgejo's order).
// Plain names compare case-insensitively, as Forgejo's do. Glob matching is picomatch's.
import picomatch from 'picomatch';

/** The characters that make a rule name a glob (the specials of Forgejo's glob syntax). */
const GLOB_SPECIALS = /[*?[\]{}\\]/;

export function isGlobRule(ruleName: string): boolean {
  return GLOB_SPECIALS.test(ruleName);
}

type Matcher = (branch: string) => boolean;
const matchers = new Map<string, Matcher>();
const MAX_MATCHERS = 1000;

function matcherOf(glob: string): Matcher {
  let m = matchers.get(glob);
  if (!m) {
    try {
      // No negation (`!x`) or extended globs (`+(x)`): Forgejo's glob syntax has neither.
      m = picomatch(glob, { dot: true, nonegate: true, noextglob: true, windows: false });
    } catch {
      m = (branch) => branch === glob;
    }
    if (matchers.size >= MAX_MATCHERS) matchers.delete(matchers.keys().next().value!);
    matchers.set(glob, m);
  }
  return m;
}

/** Whether the rule named `ruleName` applies to `branch`. */
export function ruleMatches(ruleName: string, branch: string): boolean {
  if (!isGlobRule(ruleName)) return ruleName.toLowerCase() === branch.toLowerCase();
  return matcherOf(ruleName)(branch);
}

export interface NamedRule {
  id: number;
  rule_name: string;
}

/**
 * Rules in priority order: plain names first, then globs; each group in creation order (by id).
 * This is also the order the API lists them in.
 */
export function inPriorityOrder<R extends NamedRule>(rules: R[]): R[] {
  return [...rules].sort((a, b) => {
    const ga = isGlobRule(a.rule_name) ? 1 : 0;
    const gb = isGlobRule(b.rule_name) ? 1 : 0;
    return ga - gb || a.id - b.id;
  });
}

/** The rule that governs `branch`, or undefined when none matches. */
export function ruleForBranch<R extends NamedRule>(rules: R[], branch: string): R | undefined {
  // An exact plain name beats one that only matches ignoring case.
  const exact = rules.find((r) => r.rule_name === branch && !isGlobRule(r.rule_name));
  if (exact) return exact;
  return inPriorityOrder(rules).find((r) => ruleMatches(r.rule_name, branch));
}

/**
 * Protected and unprotected file patterns: globs separated by ';', compared in lower case
 * against lower-cased paths (as Forgejo does). Blank entries are ignored.
 */
export function filePatterns(spec: string): Matcher[] {
  return spec
    .toLowerCase()
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => matcherOf(p));
}

export function matchesAnyPattern(patterns: Matcher[], path: string): boolean {
  const p = path.trim().toLowerCase();
  return patterns.some((m) => m(p));
}

// Tag protection patterns, as Forgejo reads them: a pattern written between slashes (`/^v\d+$/`)
// is a regular expression that matches anywhere in the tag name unless anchored; anything else is
// a glob over the whole name in which `*` matches any run of characters, '/' included, `?` one
// character, `[...]` (`[!...]` negated) a character class and `{a,b}` either alternative; `\`
// escapes the character after it.

const tagMatchers = new Map<string, Matcher | null>();

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** The regular expression of a tag glob; throws on a glob that cannot be read. */
function tagGlobRegExp(glob: string): RegExp {
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      if (i + 1 >= glob.length) throw new Error('the pattern ends with an escape');
      re += escapeRegExp(glob[++i]!);
    } else if (c === '*') {
      re += '[^]*';
    } else if (c === '?') {
      re += '[^]';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) throw new Error('unclosed character class');
      let body = glob.slice(i + 1, end);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      if (!body) throw new Error('empty character class');
      const parts = body.split('-').map((s) => [...s].map(escapeRegExp).join(''));
      re += `[${negated ? '^' : ''}${parts.join('-')}]`;
      i = end;
    } else if (c === '{') {
      re += '(?:';
      depth++;
    } else if (c === '}' && depth > 0) {
      re += ')';
      depth--;
    } else if (c === ',' && depth > 0) {
      re += '|';
    } else {
      re += escapeRegExp(c);
    }
  }
  if (depth > 0) throw new Error('unclosed alternatives');
  return new RegExp(`^(?:${re})$`);
}

/** Whether a pattern is a regular expression (written between slashes). */
export function isTagRegExp(pattern: string): boolean {
  return pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/');
}

/** The matcher of a tag pattern; throws (with the reason) when it cannot be read. */
export function compileTagPattern(pattern: string): Matcher {
  const re = isTagRegExp(pattern) ? new RegExp(pattern.slice(1, -1), 'u') : tagGlobRegExp(pattern);
  return (tag) => re.test(tag);
}

/** Whether the tag pattern matches `tag`; a pattern that cannot be read matches nothing. */
export function tagPatternMatches(pattern: string, tag: string): boolean {
  let m = tagMatchers.get(pattern);
  if (m === undefined) {
    try {
      m = compileTagPattern(pattern);
    } catch {
      m = null;
    }
    if (tagMatchers.size >= MAX_MATCHERS) tagMatchers.delete(tagMatchers.keys().next().value!);
    tagMatchers.set(pattern, m);
  }
  return m !== null && m(tag);
}
