// In-process events for later consumers (webhooks, actions, push mirrors). Listeners run after
// the change has committed; a failing listener is logged and never undoes or blocks the change.
// An event reaches the listeners of the process where it happened (work is done once); those
// registered with `onAnyNode` (caches) hear other processes' events too, over the cluster channel.
import type { Logger } from 'pino';
import type { ReleaseRow } from '../releases/tables.js';

export interface RefUpdate {
  ref: string;
  oldOid: string;
  newOid: string;
}

export interface AnvilEvents {
  push: { repoId: number; pusherId: number; updates: RefUpdate[] };
  'repository.created': { repoId: number; doerId: number };
  'repository.deleted': { repoId: number; ownerId: number; name: string; doerId: number };
  /** A transfer now waits for `recipientId` (a user or an organization) to accept it. */
  'repository.transfer_pending': { repoId: number; doerId: number; recipientId: number };
  // Issues and pull requests (isPull tells them apart), their labels, assignees and comments.
  'issue.opened': IssueEvent & { mentionedIds: number[] };
  'issue.edited': IssueEvent & { changes: IssueChanges };
  /** commitId: the commit whose message closed it, '' when closed by hand (the webhook's commit_id). */
  'issue.closed': IssueEvent & { commitId: string };
  'issue.reopened': IssueEvent & { commitId: string };
  'issue.labelled': IssueEvent & { added: number[]; removed: number[] };
  'issue.assigned': IssueEvent & { added: number[]; removed: number[] };
  'issue.milestoned': IssueEvent & { milestoneId: number | null; oldMilestoneId: number | null };
  'issue.deleted': IssueEvent;
  'comment.created': CommentEvent & { mentionedIds: number[] };
  'comment.edited': CommentEvent & { oldBody: string };
  'comment.deleted': CommentEvent;
  // Releases; drafts are not announced. `release` is the row after the change (before, for deleted).
  'release.published': ReleaseEvent;
  'release.updated': ReleaseEvent;
  'release.deleted': ReleaseEvent;
  // Package versions: created with their first file, deleted with their last (or by hand).
  'package.created': PackageEvent;
  'package.deleted': PackageEvent;
  /** A wiki page written or deleted through the API (`page`: its web path; `comment`: the commit message). */
  'wiki.changed': {
    repoId: number;
    doerId: number;
    action: 'created' | 'edited' | 'deleted';
    page: string;
    comment: string;
  };
}

/** A version as package events carry it (the row may be gone by the time a listener runs). */
export interface PackageEventInfo {
  versionId: number;
  ownerId: number;
  repoId: number | null;
  creatorId: number | null;
  type: string;
  name: string;
  version: string;
  createdUnix: number;
}

export interface PackageEvent {
  package: PackageEventInfo;
  doerId: number;
}

export interface ReleaseEvent {
  repoId: number;
  doerId: number;
  release: ReleaseRow;
}

/** Which issue (or pull request) changed, and who changed it. */
export interface IssueEvent {
  repoId: number;
  issueId: number;
  index: number;
  isPull: boolean;
  doerId: number;
}

/** The previous values of what an edit changed. */
export interface IssueChanges {
  title?: { from: string };
  body?: { from: string };
  ref?: { from: string };
  dueDate?: { from: number };
}

export interface CommentEvent extends IssueEvent {
  commentId: number;
}

type Listener<K extends keyof AnvilEvents> = (payload: AnvilEvents[K]) => void | Promise<void>;

/** The channel between the processes on one database (cluster/service.ts). */
export interface EventChannel {
  publish(topic: string, data?: unknown): void;
  /** `data` is undefined on a reset of the channel (messages may have been lost). */
  on(topic: string, handler: (data: unknown) => void): void;
}

export interface EventBusDeps {
  log: Logger;
  /** Carries the events that have every-node listeners to the other processes, and theirs here. */
  cluster: EventChannel;
}

export class EventBus {
  private readonly listeners = new Map<keyof AnvilEvents, Array<Listener<keyof AnvilEvents>>>();
  /** Listeners that also hear the events of other processes (cluster/): what they keep in memory. */
  private readonly everyNode = new Map<keyof AnvilEvents, Array<Listener<keyof AnvilEvents>>>();
  private readonly log: Logger;
  private readonly cluster: EventChannel;

  constructor(deps: EventBusDeps) {
    this.log = deps.log;
    this.cluster = deps.cluster;
    this.cluster.on('event', (d) => {
      if (!d) return; // a reset of the channel: nothing to replay
      const { event, payload } = d as { event: keyof AnvilEvents; payload: unknown };
      void this.fromOtherNode(event, payload);
    });
  }

  /**
   * Listens to `event` on this process and, through the cluster channel, on every other process
   * on the same database: for what a process keeps in memory (caches), never for work that must
   * be done once (that is `on`, which only this process's events reach).
   */
  onAnyNode<K extends keyof AnvilEvents>(event: K, listener: Listener<K>): void {
    const list = this.everyNode.get(event) ?? [];
    list.push(listener as Listener<keyof AnvilEvents>);
    this.everyNode.set(event, list);
    this.on(event, listener);
  }

  /** An event relayed from another process: only its every-node listeners run. */
  async fromOtherNode(event: keyof AnvilEvents, payload: unknown): Promise<void> {
    await this.run(this.everyNode.get(event) ?? [], event, payload as AnvilEvents[typeof event]);
  }

  on<K extends keyof AnvilEvents>(event: K, listener: Listener<K>): void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as Listener<keyof AnvilEvents>);
    this.listeners.set(event, list);
  }

  /** Calls every listener; returns when all have finished (tests can await it). */
  async emit<K extends keyof AnvilEvents>(event: K, payload: AnvilEvents[K]): Promise<void> {
    // Tells the other processes of an event that has every-node listeners.
    if (this.everyNode.has(event)) this.cluster.publish('event', { event, payload });
    await this.run(this.listeners.get(event) ?? [], event, payload);
  }

  private async run<K extends keyof AnvilEvents>(
    listeners: Array<Listener<keyof AnvilEvents>>,
    event: K,
    payload: AnvilEvents[K],
  ): Promise<void> {
    await Promise.all(
      listeners.map(async (l) => {
        try {
          await l(payload);
        } catch (err) {
          this.log.error({ err, event }, 'event listener failed');
        }
      }),
    );
  }
}
