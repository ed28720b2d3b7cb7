// Quota subjects: the 11 strings of the spec plus size:git:all and size:git:lfs. The hierarchy is
// declared once here; everything else (parsing, usage sums, which rules cover a subject) derives
// from it.
import { invalid } from '../errors.js';

/** Subjects whose usage is stored per owner; every other subject is a sum of some of these. */
export const LEAF_SUBJECTS = [
  'size:repos:public',
  'size:repos:private',
  'size:git:lfs',
  'size:assets:attachments:issues',
  'size:assets:attachments:releases',
  'size:assets:artifacts',
  'size:assets:packages:all',
] as const;
export type LeafSubject = (typeof LEAF_SUBJECTS)[number];

/** Each composite subject and the subjects it is the sum of. */
const CHILDREN = {
  'size:all': ['size:repos:all', 'size:git:lfs', 'size:assets:all'],
  'size:git:all': ['size:repos:all', 'size:git:lfs'],
  'size:repos:all': ['size:repos:public', 'size:repos:private'],
  'size:assets:all': ['size:assets:attachments:all', 'size:assets:artifacts', 'size:assets:packages:all'],
  'size:assets:attachments:all': ['size:assets:attachments:issues', 'size:assets:attachments:releases'],
} as const;

/** The wiki's size is not tracked: it is always within quota. */
export const UNTRACKED_SUBJECTS = ['size:wiki'] as const;

export type Subject = LeafSubject | keyof typeof CHILDREN | (typeof UNTRACKED_SUBJECTS)[number];

export const ALL_SUBJECTS: readonly Subject[] = [
  'size:all',
  'size:repos:all',
  'size:repos:public',
  'size:repos:private',
  'size:git:all',
  'size:git:lfs',
  'size:assets:all',
  'size:assets:attachments:all',
  'size:assets:attachments:issues',
  'size:assets:attachments:releases',
  'size:assets:artifacts',
  'size:assets:packages:all',
  'size:wiki',
];

const leafCache = new Map<Subject, ReadonlySet<LeafSubject>>();

/** The stored subjects a subject sums up (empty for size:wiki). */
export function leavesOf(subject: Subject): ReadonlySet<LeafSubject> {
  let leaves = leafCache.get(subject);
  if (!leaves) {
    const out = new Set<LeafSubject>();
    const walk = (s: Subject) => {
      const children = (CHILDREN as Record<string, readonly Subject[]>)[s];
      if (children) children.forEach(walk);
      else if ((LEAF_SUBJECTS as readonly string[]).includes(s)) out.add(s as LeafSubject);
    };
    walk(subject);
    leaves = out;
    leafCache.set(subject, leaves);
  }
  return leaves;
}

export function isSubject(s: string): s is Subject {
  return (ALL_SUBJECTS as readonly string[]).includes(s);
}

/** Parses a subject string; anything else is a 422 naming it. */
export function parseSubject(s: string, field = 'subjects'): Subject {
  if (!isSubject(s))
    throw invalid(`[${field.charAt(0).toUpperCase()}${field.slice(1)}]: invalid quota subject: ${s}`);
  return s;
}

export function parseSubjects(list: readonly string[], field = 'subjects'): Subject[] {
  return list.map((s) => parseSubject(s, field));
}

/** Whether `a` is `b`, an ancestor of `b` or a descendant of `b` in the hierarchy. */
export function related(a: Subject, b: Subject): boolean {
  if (a === b) return true;
  const la = leavesOf(a);
  const lb = leavesOf(b);
  if (la.size === 0 || lb.size === 0) return false;
  const subset = (x: ReadonlySet<LeafSubject>, y: ReadonlySet<LeafSubject>) => [...x].every((l) => y.has(l));
  return subset(la, lb) || subset(lb, la);
}
