// Pull request events on the bus (for webhooks and actions). Declared here, by augmenting the
// bus's event map, so the pulls domain owns them. What a pull request shares with issues (title,
// body, state, labels, assignees, milestone) is also announced by the issue.* events (isPull
// true), whichever endpoint changed it; webhooks follow those, and the pull.* events below for
// what only pull requests have.
import '../events/bus.js';
import type { Pull } from './tables.js';

/** Which pull request changed, and who changed it. */
export interface PullEvent {
  repoId: number;
  issueId: number;
  pullId: number;
  index: number;
  doerId: number;
}

/** The event about `pull` done by `doer`. */
export function pullEvent(pull: Pull, doer: { id: number }): PullEvent {
  return {
    repoId: pull.issue.repo_id,
    issueId: pull.issue.id,
    pullId: pull.pr.id,
    index: pull.issue.index,
    doerId: doer.id,
  };
}

declare module '../events/bus.js' {
  interface AnvilEvents {
    'pull.opened': PullEvent;
    /** Sent after every edit through PATCH /pulls/{index}; baseFrom: the old base branch, when it changed. */
    'pull.edited': PullEvent & { baseFrom?: string };
    'pull.closed': PullEvent;
    'pull.reopened': PullEvent;
    /** The head branch moved (doerId: the pusher). */
    'pull.synchronized': PullEvent;
    /** Mergeability was computed again and changed without the head moving (the base moved, say). */
    'pull.checked': PullEvent;
    'pull.merged': PullEvent & { mergeCommitId: string };
    'pull.labeled': PullEvent;
    /** A review was submitted (approve, request changes or comment; doerId: the reviewer). */
    'pull.reviewed': PullEvent & { reviewId: number; reviewType: number; content: string };
    /** A review of `reviewerId` was asked for (requested) or the request withdrawn. */
    'pull.review_requested': PullEvent & { reviewerId: number; requested: boolean };
  }
}
