// Pull request events on the bus (for webhooks and actions). Declared here, by augmenting the
// bus's event map, so the pulls domain owns them.
import '../events/bus.js';

/** Which pull request changed, and who changed it. */
export interface PullEvent {
  repoId: number;
  issueId: number;
  pullId: number;
  index: number;
  doerId: number;
}

declare module '../events/bus.js' {
  interface AnvilEvents {
    'pull.opened': PullEvent;
    'pull.edited': PullEvent;
    'pull.closed': PullEvent;
    'pull.reopened': PullEvent;
    /** The head branch moved (doerId: the pusher). */
    'pull.synchronized': PullEvent;
    'pull.merged': PullEvent & { mergeCommitId: string };
    'pull.labeled': PullEvent;
  }
}
