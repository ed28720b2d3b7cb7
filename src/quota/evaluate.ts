// Quota evaluation: pure functions over usage numbers, rules and groups.
//  - A rule stands when the summed usage of its subjects is within its limit (-1: unlimited).
//  - A group stands when all of its rules stand.
//  - A user's groups stand when any one of them stands; a user with no groups is unlimited.
//  - Checking one subject S, only rules covering S count (naming S, an ancestor or a descendant
//    of S); a group with no such rule does not limit S.
import { leavesOf, related, type LeafSubject, type Subject } from './subjects.js';

export type Usage = Partial<Record<LeafSubject, number>>;

export interface Rule {
  name: string;
  limit: number;
  subjects: Subject[];
}

export interface Group {
  name: string;
  rules: Rule[];
}

export const UNLIMITED = -1;

/** Usage of one subject: the sum of the stored subjects it covers (0 for size:wiki). */
export function usageOf(subject: Subject, usage: Usage): number {
  let sum = 0;
  for (const leaf of leavesOf(subject)) sum += usage[leaf] ?? 0;
  return sum;
}

export function ruleSum(rule: Rule, usage: Usage): number {
  return rule.subjects.reduce((sum, s) => sum + usageOf(s, usage), 0);
}

export function ruleStands(rule: Rule, usage: Usage): boolean {
  return rule.limit === UNLIMITED || ruleSum(rule, usage) <= rule.limit;
}

export function ruleCovers(rule: Rule, subject: Subject): boolean {
  return rule.subjects.some((s) => related(s, subject));
}

export function groupStands(group: Group, usage: Usage, subject?: Subject): boolean {
  return group.rules.every((r) => (subject !== undefined && !ruleCovers(r, subject)) || ruleStands(r, usage));
}

/** Whether usage is within quota for `subject` (or for everything) under a user's groups. */
export function withinQuota(groups: readonly Group[], usage: Usage, subject?: Subject): boolean {
  if (subject !== undefined && leavesOf(subject).size === 0) return true;
  if (groups.length === 0) return true;
  return groups.some((g) => groupStands(g, usage, subject));
}

/** A rule with the usage it counts and whether it stands. */
export interface RuleState {
  rule: Rule;
  used: number;
  stands: boolean;
}

/** A group with each of its rules' state, and whether the group stands. */
export interface GroupState {
  group: Group;
  rules: RuleState[];
  stands: boolean;
}

/** Every group's rules with what they count and whether they stand (for the storage overview). */
export function explain(groups: readonly Group[], usage: Usage): GroupState[] {
  return groups.map((group) => {
    const rules = group.rules.map((rule) => ({
      rule,
      used: ruleSum(rule, usage),
      stands: ruleStands(rule, usage),
    }));
    return { group, rules, stands: rules.every((r) => r.stands) };
  });
}

/**
 * Why more of `subject` would be refused: for each group, the rules covering it that are over their
 * limit (every group has one, or the subject would be accepted); null when it would be accepted.
 */
export function refusal(
  groups: readonly Group[],
  usage: Usage,
  subject: Subject,
): Array<{ group: string; rules: RuleState[] }> | null {
  if (withinQuota(groups, usage, subject)) return null;
  return groups.map((g) => ({
    group: g.name,
    rules: g.rules
      .filter((r) => ruleCovers(r, subject) && !ruleStands(r, usage))
      .map((rule) => ({ rule, used: ruleSum(rule, usage), stands: false })),
  }));
}
