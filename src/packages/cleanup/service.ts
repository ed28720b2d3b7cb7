// Package cleanup: per-owner rules (Forgejo's: keep the newest N versions, keep those matching a
// pattern, remove only those older than N days and/or matching a pattern) with a preview of what a
// rule removes now, and the background job ([cron.cleanup_packages]) that applies every enabled
// rule and removes what interrupted work left: blobs no file names, packages with no version, and
// unfinished uploads, once older than OLDER_THAN.
import { deleteStaleUploads } from '../container/store.js';
import type { Logger } from 'pino';
import type { Cluster } from '../../cluster/service.js';
import { nextRunIn, type Config, type Schedule } from '../../config/config.js';
import type { CronService } from '../../cron/service.js';
import { nowUnix, transaction, type Db } from '../../db/database.js';
import { uniqueViolation } from '../../db/retry.js';
import { conflict, forbidden, invalidField, notFound } from '../../errors.js';
import type { OrgService } from '../../orgs/service.js';
import type { BlobStore } from '../../storage/storage.js';
import type { UserService } from '../../users/service.js';
import type { Viewer } from '../../users/tables.js';
import type { UserRow } from '../../users/tables.js';
import { UserType } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import { PACKAGE_TYPES, type VersionWithPackage } from '../tables.js';
import * as store from './store.js';
import type { RuleRow } from './tables.js';

/** Versions one rule removes per run at most (the next run continues), as Forgejo. */
const PER_RUN = 200;
const PATTERN_MAX = 255;

export interface RuleInput {
  type?: string | undefined;
  enabled?: boolean | undefined;
  keepCount?: number | undefined;
  keepPattern?: string | undefined;
  removeDays?: number | undefined;
  removePattern?: string | undefined;
  matchFullName?: boolean | undefined;
}

export interface CleanupReport {
  versions: number;
  blobs: number;
  packages: number;
  uploads: number;
}

/** A rule's pattern as Forgejo compiles it: the whole text, case-insensitive. */
export function compilePattern(pattern: string, field: string): RegExp | null {
  if (!pattern) return null;
  if (pattern.length > PATTERN_MAX) throw invalidField(field, `must be at most ${PATTERN_MAX} characters`);
  try {
    return new RegExp(`^(?:${pattern})$`, 'i');
  } catch (err) {
    throw invalidField(field, `is not a valid regular expression: ${(err as Error).message}`);
  }
}

/** The versions among `versions` (by package, newest first) that `rule` removes at `now`. */
export function selectForRemoval(
  rule: RuleRow,
  versions: VersionWithPackage[],
  now: number,
): VersionWithPackage[] {
  const keep = compilePattern(rule.keep_pattern, 'keep_pattern');
  const remove = compilePattern(rule.remove_pattern, 'remove_pattern');
  const olderThan = now - rule.remove_days * 86400;
  const out: VersionWithPackage[] = [];
  let packageId = -1;
  let seen = 0;
  for (const v of versions) {
    if (v.package_id !== packageId) {
      packageId = v.package_id;
      seen = 0;
    }
    // A container image's `latest` tag and its digest-named (untagged, or named by an index)
    // manifests are never removed by a rule, as in Forgejo.
    if (v.type === 'container' && (v.lower_version === 'latest' || v.lower_version.startsWith('sha256:'))) {
      continue;
    }
    seen++;
    if (seen <= rule.keep_count) continue;
    const subject = rule.match_full_name ? `${v.name.toLowerCase()}/${v.lower_version}` : v.lower_version;
    if (keep?.test(subject)) continue;
    if (v.created_unix > olderThan) continue;
    if (remove && !remove.test(subject)) continue;
    out.push(v);
  }
  return out;
}

export interface PackageCleanupDeps {
  db: Db;
  log: Logger;
  /** Where package blobs and unfinished uploads are (storage.packages). */
  blobs: BlobStore;
  /** [cron.cleanup_packages]. */
  settings: Config['cron']['cleanupPackages'];
  users: Pick<UserService, 'getById'>;
  /** An organization's owners manage its rules. */
  orgs: Pick<OrgService, 'isOwner'>;
  /** Versions, blobs and packages go through the packages' own removal. */
  packages: Pick<PackageService, 'packageById' | 'deleteVersion' | 'removeOrphanBlob' | 'removeIfEmpty'>;
  /** The job runs under a lease, reported as the cleanup_packages task. */
  cron: Pick<CronService, 'track'>;
  cluster: Pick<Cluster, 'once'>;
}

export class PackageCleanup {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<CleanupReport> | undefined;
  private readonly db: Db;
  private readonly log: Logger;

  constructor(private readonly deps: PackageCleanupDeps) {
    this.db = deps.db;
    this.log = deps.log;
  }

  // Rules

  /** Rules are the owner's settings: the user, an organization's owners, site administrators. */
  async assertMayManage(owner: UserRow, viewer: Viewer): Promise<void> {
    if (viewer.isAdmin || viewer.id === owner.id) return;
    if (owner.type === UserType.Organization && (await this.deps.orgs.isOwner(owner, viewer))) return;
    throw forbidden(`only the owner of ${owner.name} may manage its package cleanup rules`);
  }

  list(owner: UserRow) {
    return store.rulesOf(this.db, owner.id);
  }

  async require(owner: UserRow, id: number): Promise<RuleRow> {
    const rule = Number.isSafeInteger(id) ? await store.getRule(this.db, owner.id, id) : undefined;
    if (!rule) throw notFound(`package cleanup rule does not exist [id: ${id}]`);
    return rule;
  }

  private check(input: RuleInput): void {
    if (input.type !== undefined && !(PACKAGE_TYPES as readonly string[]).includes(input.type)) {
      throw invalidField('type', `must be one of ${PACKAGE_TYPES.join(', ')}`);
    }
    if (input.keepCount !== undefined && input.keepCount < 0)
      throw invalidField('keep_count', 'must not be negative');
    if (input.removeDays !== undefined && input.removeDays < 0)
      throw invalidField('remove_days', 'must not be negative');
    if (input.keepPattern !== undefined) compilePattern(input.keepPattern, 'keep_pattern');
    if (input.removePattern !== undefined) compilePattern(input.removePattern, 'remove_pattern');
  }

  async create(owner: UserRow, input: RuleInput & { type: string }): Promise<RuleRow> {
    this.check(input);
    const now = nowUnix();
    try {
      return await transaction(this.db, async (tx) => {
        if (await store.ruleOfType(tx, owner.id, input.type)) {
          throw conflict(`a cleanup rule for ${input.type} packages exists already`);
        }
        const id = await store.insertRule(tx, {
          owner_id: owner.id,
          type: input.type,
          enabled: input.enabled === false ? 0 : 1,
          keep_count: input.keepCount ?? 0,
          keep_pattern: input.keepPattern ?? '',
          remove_days: input.removeDays ?? 0,
          remove_pattern: input.removePattern ?? '',
          match_full_name: input.matchFullName ? 1 : 0,
          created_unix: now,
          updated_unix: now,
        });
        return (await store.getRule(tx, owner.id, id))!;
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict(`a cleanup rule for ${input.type} packages exists already`);
      throw err;
    }
  }

  async edit(owner: UserRow, rule: RuleRow, input: RuleInput): Promise<RuleRow> {
    this.check(input);
    try {
      return await transaction(this.db, async (tx) => {
        if (
          input.type !== undefined &&
          input.type !== rule.type &&
          (await store.ruleOfType(tx, owner.id, input.type))
        ) {
          throw conflict(`a cleanup rule for ${input.type} packages exists already`);
        }
        const b = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);
        await store.updateRule(tx, rule.id, {
          type: input.type,
          enabled: b(input.enabled),
          keep_count: input.keepCount,
          keep_pattern: input.keepPattern,
          remove_days: input.removeDays,
          remove_pattern: input.removePattern,
          match_full_name: b(input.matchFullName),
          updated_unix: nowUnix(),
        });
        return (await store.getRule(tx, owner.id, rule.id))!;
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict(`a cleanup rule for ${input.type} packages exists already`);
      throw err;
    }
  }

  async delete(rule: RuleRow): Promise<void> {
    await store.deleteRule(this.db, rule.id);
  }

  /** The versions the rule would remove if it ran now (whether or not it is enabled). */
  async preview(rule: RuleRow): Promise<VersionWithPackage[]> {
    const versions = await store.versionsOfType(this.db, rule.owner_id, rule.type);
    return selectForRemoval(rule, versions, nowUnix());
  }

  /** Applies one rule now: removes up to PER_RUN versions through the packages' own deletion. */
  async apply(rule: RuleRow): Promise<number> {
    const owner = await this.deps.users.getById(rule.owner_id);
    if (!owner) return 0;
    const doomed = (await this.preview(rule)).slice(0, PER_RUN);
    let removed = 0;
    for (const v of doomed) {
      const pkg = await this.deps.packages.packageById(v.package_id);
      if (!pkg) continue;
      await this.deps.packages.deleteVersion(pkg, v, owner);
      removed++;
    }
    return removed;
  }

  // The job

  /** Runs the job at start (RUN_AT_START) and on its schedule, until `stop()`. */
  start(): void {
    const task = this.deps.settings;
    if (!task.enabled || this.timer) return;
    // One process of several runs it per period (cluster/service.ts); the others skip it.
    const period = periodMs(task.schedule);
    const once = () => this.deps.cluster.once('cleanup_packages', period, () => this.run());
    const schedule = () => {
      this.timer = setTimeout(() => {
        void this.deps.cron
          .track('cleanup_packages', once())
          .catch((err: unknown) => this.log.error({ err }, 'package cleanup failed'))
          .finally(schedule);
      }, nextRunIn(task.schedule));
      this.timer.unref();
    };
    if (task.runAtStart) {
      void this.deps.cron
        .track('cleanup_packages', once())
        .catch((err: unknown) => this.log.error({ err }, 'package cleanup failed'));
    }
    schedule();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One run of the job (a run under way is joined). */
  run(): Promise<CleanupReport> {
    this.running ??= this.runOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runOnce(): Promise<CleanupReport> {
    const report: CleanupReport = { versions: 0, blobs: 0, packages: 0, uploads: 0 };
    for (const rule of await store.enabledRules(this.db)) {
      try {
        report.versions += await this.apply(rule);
      } catch (err) {
        this.log.error({ err, rule: rule.id }, 'a package cleanup rule failed');
      }
    }
    const before = nowUnix() - this.deps.settings.olderThan;
    for (;;) {
      const blobs = await store.unreferencedBlobs(this.db, before, 500);
      let removed = 0;
      for (const b of blobs) if (await this.deps.packages.removeOrphanBlob(b.id, b.hash_sha256)) removed++;
      report.blobs += removed;
      if (blobs.length < 500 || removed === 0) break;
    }
    for (const p of await store.emptyPackages(this.db, before)) {
      if (await this.deps.packages.removeIfEmpty(p.id)) report.packages++;
    }
    const blobs = this.deps.blobs;
    const cutoff = new Date(before * 1000);
    for await (const entry of blobs.list('tmp/')) {
      if (entry.mtime >= cutoff) continue;
      // Kept if written again since the listing.
      if (await blobs.delete(entry.key, { ifUnmodifiedSince: cutoff }).catch(() => false)) report.uploads++;
    }
    // Container upload sessions left unfinished (their parts were under tmp/).
    report.uploads += await deleteStaleUploads(this.db, before);
    if (report.versions || report.blobs || report.packages || report.uploads) {
      this.log.info(report, 'package cleanup removed versions, blobs, empty packages and unfinished uploads');
    }
    return report;
  }
}

/** How far apart scheduled runs are. */
function periodMs(s: Schedule): number {
  if ('every' in s) return s.every * 1000;
  return { hour: 3_600_000, day: 86_400_000, week: 604_800_000 }[s.at];
}
