// Health (/api/healthz, in Forgejo's shape: database, cache and storage checks) and the metrics'
// database-backed gauges.
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { BlobStore, Storage } from '../storage/storage.js';
import * as store from './store.js';
import type { Gauges } from './metrics.js';

export type CheckStatus = 'pass' | 'fail' | 'warn';

export interface ComponentStatus {
  status: CheckStatus;
  time: string;
  output?: string;
}

export interface Health {
  status: CheckStatus;
  description: string;
  checks: Record<string, ComponentStatus[]>;
}

export interface OpsServiceDeps {
  db: Db;
  storage: Storage;
  log: Logger;
}

export class OpsService implements Gauges {
  private readonly db: Db;
  private readonly storage: Storage;
  private readonly log: Logger;

  constructor(deps: OpsServiceDeps) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.log = deps.log;
  }

  /** Each check passes or fails on its own; the whole fails when one does. */
  async health(): Promise<Health> {
    const check = async (name: string, fn: () => Promise<unknown>): Promise<[string, ComponentStatus]> => {
      try {
        await fn();
        return [name, { status: 'pass', time: new Date().toISOString() }];
      } catch (err) {
        this.log.error({ err, check: name }, 'health check failed');
        return [
          name,
          { status: 'fail', time: new Date().toISOString(), output: String((err as Error).message ?? err) },
        ];
      }
    };
    const results = await Promise.all([
      check('database:ping', () => store.ping(this.db)),
      // Caches are in the process (no external cache server to reach): always answering.
      check('cache:ping', async () => undefined),
      check('storage:ping', () => Promise.all(Object.values(this.storage).map((b: BlobStore) => b.ping()))),
    ]);
    return {
      status: results.every(([, s]) => s.status === 'pass') ? 'pass' : 'fail',
      description: 'Anvil: a Forgejo-compatible forge',
      checks: Object.fromEntries(results.map(([name, s]) => [name, [s]])),
    };
  }

  queues(): Promise<Record<string, number>> {
    return store.queueDepths(this.db);
  }

  counts(): Promise<Record<string, number>> {
    return store.counts(this.db);
  }

  /** Records a notice for the administrators (a failure of a background task, ...). */
  async addNotice(type: number, description: string): Promise<void> {
    await store.insertNotice(this.db, type, description.slice(0, 4000), Math.floor(Date.now() / 1000));
  }

  notices(limit: number, offset: number) {
    return store.listNotices(this.db, limit, offset);
  }

  /** Deletes the notices `ids`, or all of them. */
  deleteNotices(ids: number[] | 'all'): Promise<void> {
    return store.deleteNotices(this.db, ids);
  }
}
