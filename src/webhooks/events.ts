// Which events a webhook receives, in Forgejo's terms: the event types (X-Forgejo-Event-Type), the
// event names they are announced under (X-Forgejo-Event), and a hook's selection, stored as
// Forgejo's HookEvent JSON: push_only, send_everything, or choose_events with the chosen events.
import picomatch from 'picomatch';
import { invalid, invalidField } from '../errors.js';

/** Forgejo's HookEventType values Anvil can send or record, in the order of its EventsArray (a Hook's `events`). */
export const EVENT_TYPES = [
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
  'pull_request_sync',
  'wiki',
  'repository',
  'release',
  'package',
  'pull_request_review_request',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The choices of a hook (Forgejo's HookEvents). */
export const CHOICES = [
  'create',
  'delete',
  'fork',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'push',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_sync',
  'pull_request_review_request',
  'wiki',
  'repository',
  'release',
  'package',
] as const;
export type Choice = (typeof CHOICES)[number];

/** Forgejo's HookEvent (without branch_filter, which has a column of its own). */
export interface HookEventSettings {
  push_only: boolean;
  send_everything: boolean;
  choose_events: boolean;
  events: Record<Choice, boolean>;
}

/** The choice that enables each event type (review comments follow reviews). */
const CHOICE_OF: Record<EventType, Choice> = {
  create: 'create',
  delete: 'delete',
  fork: 'fork',
  push: 'push',
  issues: 'issues',
  issue_assign: 'issue_assign',
  issue_label: 'issue_label',
  issue_milestone: 'issue_milestone',
  issue_comment: 'issue_comment',
  pull_request: 'pull_request',
  pull_request_assign: 'pull_request_assign',
  pull_request_label: 'pull_request_label',
  pull_request_milestone: 'pull_request_milestone',
  pull_request_comment: 'pull_request_comment',
  pull_request_review_approved: 'pull_request_review',
  pull_request_review_rejected: 'pull_request_review',
  pull_request_review_comment: 'pull_request_review',
  pull_request_sync: 'pull_request_sync',
  pull_request_review_request: 'pull_request_review_request',
  wiki: 'wiki',
  repository: 'repository',
  release: 'release',
  package: 'package',
};

/** X-Forgejo-Event for an event type (Forgejo's HookEventType.Event()). */
export function eventName(type: string): string {
  switch (type) {
    case 'issues':
    case 'issue_assign':
    case 'issue_label':
    case 'issue_milestone':
      return 'issues';
    case 'pull_request':
    case 'pull_request_assign':
    case 'pull_request_label':
    case 'pull_request_milestone':
    case 'pull_request_sync':
    case 'pull_request_review_request':
      return 'pull_request';
    case 'issue_comment':
    case 'pull_request_comment':
      return 'issue_comment';
    case 'pull_request_review_approved':
      return 'pull_request_approved';
    case 'pull_request_review_rejected':
      return 'pull_request_rejected';
    case 'pull_request_review_comment':
      return 'pull_request_comment';
    default:
      return type;
  }
}

/** Names accepted in a hook's `events` besides the choices, and what they turn on. */
const ISSUE_FAMILY: Choice[] = ['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment'];
const PULL_FAMILY: Choice[] = [
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_sync',
  'pull_request_review_request',
];
/** Names newer Forgejo versions know that Anvil accepts and does not send (yet). */
const IGNORED = new Set([
  'schedule',
  'workflow_dispatch',
  'action_run_failure',
  'action_run_recover',
  'action_run_success',
  'action_run_hook_event_failure',
  'action_run_success_after_failure',
  'action_run_hook_event_success',
]);

function none(): Record<Choice, boolean> {
  return Object.fromEntries(CHOICES.map((c) => [c, false])) as Record<Choice, boolean>;
}

/**
 * A hook's selection from the `events` of CreateHookOption or EditHookOption, as Forgejo reads
 * them (case-insensitively): an empty list means push only; "issues" turns on every issue event
 * and "pull_request" every pull request event ("issues_only" and "pull_request_only" just those);
 * the event types a Hook lists are accepted too. "*" (an Anvil extension) sends everything.
 * An unknown name is a 422.
 */
export function settingsFromList(list: readonly string[] | undefined): HookEventSettings {
  const names = (list ?? []).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (names.length === 0) {
    return { push_only: true, send_everything: false, choose_events: false, events: none() };
  }
  if (names.includes('*')) {
    return { push_only: false, send_everything: true, choose_events: false, events: none() };
  }
  const events = none();
  for (const name of names) {
    if (name === 'issues') for (const c of ISSUE_FAMILY) events[c] = true;
    else if (name === 'pull_request') for (const c of PULL_FAMILY) events[c] = true;
    else if (name === 'issues_only') events.issues = true;
    else if (name === 'pull_request_only') events.pull_request = true;
    else if ((CHOICES as readonly string[]).includes(name)) events[name as Choice] = true;
    else if ((EVENT_TYPES as readonly string[]).includes(name)) events[CHOICE_OF[name as EventType]] = true;
    else if (!IGNORED.has(name)) throw invalid(`Unknown event: ${name}`);
  }
  return { push_only: false, send_everything: false, choose_events: true, events };
}

export function parseSettings(json: string): HookEventSettings {
  try {
    const raw = JSON.parse(json) as Partial<HookEventSettings>;
    return {
      push_only: raw.push_only === true,
      send_everything: raw.send_everything === true,
      choose_events: raw.choose_events === true,
      events: { ...none(), ...(raw.events ?? {}) },
    };
  } catch {
    return { push_only: true, send_everything: false, choose_events: false, events: none() };
  }
}

/** Whether a hook with these settings receives events of `type` (Forgejo's Has...Event). */
export function wants(s: HookEventSettings, type: EventType): boolean {
  if (s.send_everything) return true;
  if (type === 'push' && s.push_only) return true;
  return s.choose_events && s.events[CHOICE_OF[type]];
}

/** The event types a hook receives, in Forgejo's order (the `events` of a Hook). */
export function eventsArray(s: HookEventSettings): string[] {
  return EVENT_TYPES.filter((t) => wants(s, t));
}

const filters = new Map<string, (branch: string) => boolean>();

/** Throws a 422 when `filter` is not a usable glob (Forgejo's GlobPattern binding). */
export function checkBranchFilter(filter: string): void {
  if (filter.length > 1024) throw invalidField('branch_filter', 'must be at most 1024 characters');
  if (filter === '' || filter === '*') return;
  try {
    picomatch.makeRe(filter, { bash: true, dot: true, strictBrackets: true });
  } catch {
    throw invalidField('branch_filter', `invalid glob pattern [pattern: ${filter}]`);
  }
}

/**
 * Whether `branch` passes a hook's branch filter: Forgejo's glob without separators (a `*`
 * matches '/' too), with {a,b} alternatives; empty or "*" lets every branch through.
 */
export function branchMatches(filter: string, branch: string): boolean {
  if (filter === '' || filter === '*') return true;
  let m = filters.get(filter);
  if (!m) {
    try {
      m = picomatch(filter, { bash: true, dot: true });
    } catch {
      m = () => false;
    }
    if (filters.size > 1000) filters.clear();
    filters.set(filter, m);
  }
  return m(branch);
}
