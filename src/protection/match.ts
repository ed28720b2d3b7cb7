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

/**
 * Refuses regular expressions that JavaScript could take exponential time on, which Go's linear
 * engine (Forgejo's) never does: backreferences and lookarounds (Go has neither) and, as
 * safe-regex judges, a repeated group that repeats something itself (`(a+)+`). The pattern runs on
 * every push of a tag, so one slow pattern would stall the server.
 */
function checkTagRegExp(source: string): void {
  if (/\\[1-9]|\\k<|\(\?<?[=!]/.test(source)) {
    throw new Error('backreferences and lookarounds are not supported');
  }
  const repeats = (at: number) => {
    const c = source[at];
    if (c === '*' || c === '+') return true;
    if (c !== '{') return false;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
    return m !== null && m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1);
  };
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      groups.push(false);
      if (source[i + 1] === '?' && source[i + 2] === '<') {
        const end = source.indexOf('>', i);
        if (end < 0) throw new Error('unclosed group name');
        i = end;
      } else if (source[i + 1] === '?') {
        i += 2;
      }
    } else if (c === ')') {
      const inner = groups.pop() ?? false;
      const repeated = repeats(i + 1);
      if (inner && repeated) throw new Error('a repeated group must not repeat something itself');
      if ((inner || repeated) && groups.length) groups[groups.length - 1] = true;
    } else if (repeats(i) && groups.length) {
      groups[groups.length - 1] = true;
    }
  }
}

/** The matcher of a tag pattern; throws (with the reason) when it cannot be read. */
export function compileTagPattern(pattern: string): Matcher {
  let re: RegExp;
  if (isTagRegExp(pattern)) {
    const source = pattern.slice(1, -1);
    checkTagRegExp(source);
    re = new RegExp(source, 'u');
  } else {
    re = tagGlobRegExp(pattern);
  }
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
