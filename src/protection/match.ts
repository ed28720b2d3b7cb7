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
