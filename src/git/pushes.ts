// Pushes in flight: the git HTTP handler registers each receive-pack it starts; the pre-receive
// hook reports the ref updates here (where registered checks such as branch protection can refuse
// them); when receive-pack has finished, the handler takes the updates for post-push processing.
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { RefUpdate } from '../events/bus.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import type { RefChanges } from '../repos/ref-changes.js';
import { faultPoint } from '../faults.js';

export interface PushContext {
  repo: RepoRow;
  pusher: UserRow;
  updates: RefUpdate[];
  /** Environment that lets git see the pushed objects while they are still in quarantine. */
  gitEnv: NodeJS.ProcessEnv;
}

/** A check run before a push is accepted; returns a message to refuse it, or null to allow it. */
export type PushCheck = (push: PushContext) => Promise<string | null>;

interface Pending {
  repo: RepoRow;
  pusher: UserRow;
  updates: RefUpdate[];
  /** The intent written once the checks allowed the push (see RefChanges.beginIntent). */
  intent?: number;
}

const HOOK_SCRIPT = fileURLToPath(new URL('./hook.js', import.meta.url));

export interface PushRegistryDeps {
  /** Writes the intent of an allowed push before git moves any ref; returns its id. */
  intents: Pick<RefChanges, 'beginIntent'>;
}

export class PushRegistry {
  /** Shared with the hook through the environment of the git processes Anvil starts. */
  private readonly token = crypto.randomBytes(32).toString('hex');
  private readonly pending = new Map<string, Pending>();
  private readonly checks: PushCheck[] = [];

  constructor(private readonly deps: PushRegistryDeps) {}

  addCheck(check: PushCheck): void {
    this.checks.push(check);
  }

  /** Registers a push; returns the environment for `git receive-pack`. */
  begin(repo: RepoRow, pusher: UserRow, internalUrl: string): { id: string; env: NodeJS.ProcessEnv } {
    const id = crypto.randomBytes(16).toString('hex');
    this.pending.set(id, { repo, pusher, updates: [] });
    return {
      id,
      env: {
        ANVIL_HOOK: `"${process.execPath}" "${HOOK_SCRIPT}"`,
        ANVIL_PUSH_ID: id,
        ANVIL_INTERNAL_URL: internalUrl,
        ANVIL_INTERNAL_TOKEN: this.token,
      },
    };
  }

  /** Ends a push and returns the ref updates the hook reported (none when it never ran). */
  finish(id: string): Pending | undefined {
    const p = this.pending.get(id);
    this.pending.delete(id);
    return p;
  }

  validToken(presented: string): boolean {
    const a = Buffer.from(presented);
    const b = Buffer.from(this.token);
    return a.length === b.length && crypto.timingSafeEqual(a, b);
  }

  /** The hook's report: runs the checks; a refusal message, or null when the push may go on. */
  async preReceive(id: string, updates: RefUpdate[], gitEnv: NodeJS.ProcessEnv): Promise<string | null> {
    const p = this.pending.get(id);
    if (!p) return 'unknown push';
    for (const check of this.checks) {
      const refusal = await check({ repo: p.repo, pusher: p.pusher, updates, gitEnv });
      if (refusal) return refusal;
    }
    p.updates = updates;
    p.intent = await this.deps.intents.beginIntent(p.repo.id, p.pusher.id, updates);
    faultPoint('push:allowed');
    return null;
  }
}

/**
 * After receive-pack has exited, whatever the transport (HTTP, SSH): records what push `pushId`
 * did (branch rows, sizes), then calls `recorded` (the client may be answered: the API shows the
 * push), then announces it (events, webhooks, actions) and drops its intent. A failure to record
 * leaves the intent behind, and recovery records the push later.
 */
export async function completePush(
  pushes: PushRegistry,
  refChanges: Pick<RefChanges, 'recordPush' | 'announcePush' | 'dropIntent'>,
  pushId: string,
  log: { error(obj: object, msg: string): void },
  recorded: () => void,
): Promise<void> {
  const done = pushes.finish(pushId);
  faultPoint('push:refs-moved');
  let updates: RefUpdate[] | undefined;
  try {
    if (done?.updates.length) {
      updates = await refChanges
        .recordPush(done.repo.id, done.pusher.id, done.updates, done.intent)
        .catch((err: unknown) => {
          log.error({ err, repoId: done.repo.id }, 'post-push processing failed');
          return undefined;
        });
    }
  } finally {
    recorded();
  }
  if (done && updates) {
    faultPoint('push:recorded');
    if (updates.length) await refChanges.announcePush(done.repo.id, done.pusher.id, updates);
    if (done.intent !== undefined) await refChanges.dropIntent(done.intent);
  }
}
