// Leftovers of interrupted work, swept at start-up (`anvil web`) and hourly after:
//
//   temporary   each blob store's own leftovers of writes that never finished (the local backend's
//               `.tmp/` files and directories), and what is left in the temporary folders named
//               in `temporaryDirs` (the web's uploads under APP_DATA_PATH/tmp/uploads);
//   quarantine  git receive-pack's quarantine directories (`objects/tmp_objdir-incoming-*`, and
//               `objects/incoming-*` of older git) and index-pack's `objects/pack/tmp_*` files in
//               every bare repository under `[repository] ROOT`, and the repositories being
//               prepared in `ROOT/.tmp` (forks, templates, adoptions: repos/forks.ts scratchDir);
//   orphans     blobs no database row references. Each domain that keeps blobs contributes a
//               `BlobReferences` (through `ctx.contributions.blobReferences`): the store and key
//               prefix it owns, and which of a batch of keys its rows still reference (one query
//               per batch). Keys under no domain's prefix are never touched.
//
// Only what was last modified before the grace period is removed: a write in progress keeps
// touching its files, and a domain writes its row right after its blob. A process that starts
// with no other process on its data (cluster/datalock.ts, and no other node's presence) sweeps
// with no grace at all, up to the moment it knew that: everything older belonged to a process
// that died (`anvil web` at start-up, `anvil doctor`).
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { newestIn, type ListedBlob, type Storage } from './storage.js';

/** How long a leftover must have been left alone before a sweep removes it. */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;
/** How often `anvil web` sweeps (after its sweep at start-up). */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** Keys checked against the database in one query. */
const BATCH = 500;
/** How long `stop()` waits for a sweep under way. */
const STOP_WAIT_MS = 5_000;
/** Names listed per kind in the log line (the counts are always complete). */
const LOGGED_NAMES = 50;

/** What a domain's rows reference in one blob store. */
export interface BlobReferences {
  /** What the blobs are, for the log ("LFS objects"). */
  label: string;
  store: keyof Storage;
  /** The keys the domain owns there: a string prefix, '' for the whole store. */
  prefix: string;
  /** Which of `keys` (at most a few hundred, all under `prefix`) a row still references. */
  referenced(keys: string[]): Promise<Set<string>>;
}

export interface SweepReport {
  /** Leftovers of interrupted blob writes, per store (or temporary folder, by its name). */
  temporary: Array<{ store: keyof Storage | string; name: string; size: number }>;
  /** Git quarantine directories and temporary pack files, relative to `[repository] ROOT`. */
  quarantine: Array<{ name: string; size: number }>;
  /** Blobs no row referenced. */
  orphans: Array<{ store: keyof Storage; key: string; size: number }>;
}

export interface SweepOptions {
  /** The grace period (default `SWEEP_GRACE_MS`). */
  graceMs?: number;
  /** The time to measure it from (default now). */
  now?: number;
  /** Reports what would be removed and removes nothing (`anvil doctor` without --fix). */
  dryRun?: boolean;
  /** Looks for blobs no row references (default true): the part that lists every store. */
  orphans?: boolean;
}

export interface SweeperDeps {
  storage: Storage;
  /** [repository] ROOT: the bare repositories whose git quarantines are swept. */
  repoRoot: string;
  /** What each domain's rows reference (the registry domains add to). */
  blobReferences: readonly BlobReferences[];
  log: Logger;
  /** The grace period of every sweep that names none (default `SWEEP_GRACE_MS`; tests shorten it). */
  graceMs?: number | undefined;
  /**
   * Folders, by name (for the report), whose every entry is a temporary file or directory of work
   * under way (touched while it lasts), such as the web's uploads: what is left alone past the grace
   * period is removed by every sweep.
   */
  temporaryDirs?: Readonly<Record<string, string>> | undefined;
}

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepReport> | undefined;
  private stopped = false;
  /** Folders whose every entry is temporary, by name (for the report). */
  private readonly temporaryDirs: ReadonlyMap<string, string>;

  private readonly storage: Storage;
  private readonly repoRoot: string;
  private readonly references: readonly BlobReferences[];
  private readonly log: Logger;
  /** The grace period of every sweep that names none (tests shorten it). */
  readonly graceMs: number;

  constructor(deps: SweeperDeps) {
    this.storage = deps.storage;
    this.repoRoot = deps.repoRoot;
    this.references = deps.blobReferences;
    this.log = deps.log;
    this.graceMs = deps.graceMs ?? SWEEP_GRACE_MS;
    this.temporaryDirs = new Map(Object.entries(deps.temporaryDirs ?? {}));
  }

  /** Sweeps now (in the background) and every `SWEEP_INTERVAL_MS` after, until `stop()`. */
  start(): void {
    if (this.timer) return;
    this.stopped = false;
    const tick = () => void this.sweep().catch((err: unknown) => this.log.error({ err }, 'sweep failed'));
    this.timer = setInterval(tick, SWEEP_INTERVAL_MS);
    this.timer.unref();
    tick();
  }

  /** Stops the periodic sweep and waits (a bounded time) for a sweep under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    if (!this.running) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.running.catch(() => undefined),
      new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Removes the leftovers last modified before the grace period and logs them (info); what it
   * removed. A sweep already under way is joined rather than started twice. A dry run only
   * reports (and is never joined).
   */
  sweep(options: SweepOptions = {}): Promise<SweepReport> {
    if (options.dryRun) return this.collect(options, true);
    this.running ??= (async () => {
      try {
        const report = await this.collect(options, false);
        this.logReport(report);
        return report;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async collect(options: SweepOptions, dryRun: boolean): Promise<SweepReport> {
    const before = (options.now ?? Date.now()) - (options.graceMs ?? this.graceMs);
    return {
      temporary: await this.sweepTemporary(before, dryRun),
      quarantine: await this.sweepQuarantine(before, dryRun),
      orphans: options.orphans === false ? [] : await this.sweepOrphans(before, dryRun),
    };
  }

  private async sweepTemporary(before: number, dryRun: boolean): Promise<SweepReport['temporary']> {
    const out: SweepReport['temporary'] = [];
    for (const name of Object.keys(this.storage) as Array<keyof Storage>) {
      try {
        for (const r of await this.storage[name].sweepTemporary(new Date(before), { dryRun })) {
          out.push({ store: name, ...r });
        }
      } catch (err) {
        this.log.error({ err, store: name }, 'sweeping temporary files failed');
      }
    }
    for (const [name, dir] of this.temporaryDirs) {
      for (const entry of await readDir(dir)) {
        const full = path.join(dir, entry);
        const seen = newestIn(full);
        if (!seen || seen.mtimeMs >= before) continue;
        try {
          if (!dryRun) fs.rmSync(full, { recursive: true, force: true });
          out.push({ store: name, name: entry, size: seen.size });
        } catch (err) {
          this.log.error({ err, path: full }, 'removing a temporary file failed');
        }
      }
    }
    return out;
  }

  /** Quarantine directories and temporary pack files of every bare repository, and scratch repositories. */
  private async sweepQuarantine(before: number, dryRun: boolean): Promise<SweepReport['quarantine']> {
    const out: SweepReport['quarantine'] = [];
    const remove = (rel: string) => {
      const full = path.join(this.repoRoot, rel);
      const seen = newestIn(full);
      if (!seen || seen.mtimeMs >= before) return;
      try {
        if (!dryRun) fs.rmSync(full, { recursive: true, force: true });
        out.push({ name: rel, size: seen.size });
      } catch (err) {
        this.log.error({ err, path: full }, 'removing a git quarantine leftover failed');
      }
    };
    for (const name of await readDir(path.join(this.repoRoot, '.tmp'))) remove(`.tmp/${name}`);
    for (const repo of await readDir(this.repoRoot)) {
      if (!repo.endsWith('.git')) continue;
      for (const name of await readDir(path.join(this.repoRoot, repo, 'objects'))) {
        if (name.startsWith('tmp_objdir-') || name.startsWith('incoming-')) remove(`${repo}/objects/${name}`);
      }
      for (const name of await readDir(path.join(this.repoRoot, repo, 'objects', 'pack'))) {
        if (name.startsWith('tmp_')) remove(`${repo}/objects/pack/${name}`);
      }
      if (this.stopped) break;
    }
    return out;
  }

  /** Blobs under each contribution's prefix that no row references, in batches of keys. */
  private async sweepOrphans(before: number, dryRun: boolean): Promise<SweepReport['orphans']> {
    const out: SweepReport['orphans'] = [];
    for (const refs of this.references) {
      try {
        await this.sweepOrphansOf(refs, before, dryRun, out);
      } catch (err) {
        // One domain failing leaves the others to be swept.
        this.log.error(
          { err, store: refs.store, prefix: refs.prefix },
          `sweeping orphaned ${refs.label} failed`,
        );
      }
      if (this.stopped) break;
    }
    return out;
  }

  /** One domain's orphans: its keys listed, checked a batch at a time, the unreferenced removed. */
  private async sweepOrphansOf(
    refs: BlobReferences,
    before: number,
    dryRun: boolean,
    out: SweepReport['orphans'],
  ): Promise<void> {
    const store = this.storage[refs.store];
    const flush = async (batch: ListedBlob[]) => {
      if (batch.length === 0) return;
      const kept = await refs.referenced(batch.map((b) => b.key));
      for (const b of batch) {
        if (kept.has(b.key)) continue;
        // Not when written since the listing (an LFS object uploaded again, its row coming).
        if (dryRun || (await store.delete(b.key, { ifUnmodifiedSince: new Date(before) }))) {
          out.push({ store: refs.store, key: b.key, size: b.size });
        }
      }
    };
    let batch: ListedBlob[] = [];
    for await (const b of store.list(refs.prefix)) {
      if (b.mtime.getTime() >= before) continue;
      batch.push(b);
      if (batch.length >= BATCH) {
        await flush(batch);
        batch = [];
        if (this.stopped) return;
      }
    }
    await flush(batch);
  }

  private logReport(r: SweepReport): void {
    const kinds: Array<[string, Array<{ name: string; size: number }>]> = [
      ['temporary files', r.temporary.map((x) => ({ name: `${x.store}/${x.name}`, size: x.size }))],
      ['git quarantine and scratch leftovers', r.quarantine],
      ['orphaned blobs', r.orphans.map((x) => ({ name: `${x.store}/${x.key}`, size: x.size }))],
    ];
    for (const [what, list] of kinds) {
      if (list.length === 0) continue;
      const bytes = list.reduce((n, x) => n + x.size, 0);
      const names = list.slice(0, LOGGED_NAMES).map((x) => x.name);
      this.log.info({ removed: list.length, bytes, names }, `sweep removed ${list.length} ${what}`);
    }
  }
}

async function readDir(dir: string): Promise<string[]> {
  try {
    return await fs.promises.readdir(dir);
  } catch {
    return [];
  }
}
