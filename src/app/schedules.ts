// The periodic tasks of `anvil web`, registered with the cron service (listed and started by
// administrators at /admin/cron, by Forgejo's names). Each runs under a lease (`task:<name>`), so
// of several processes on one database one runs it at a time.
import type { Config } from '../config/config.js';
import { nextRunIn } from '../config/config.js';
import { describeSchedule, type CronService } from '../cron/service.js';
import type { Cluster } from '../cluster/service.js';
import type { PackageCleanup } from '../packages/cleanup/service.js';
import type { MirrorService } from '../mirrors/service.js';
import type { ArtifactService } from '../artifacts/service.js';
import type { CacheService } from '../actions/cache-service.js';
import type { ScheduleService } from '../actions/schedules.js';
import { CHECK_MS as RECOVERY_CHECK_MS, STALE_INTENT_SECONDS, type RefRecovery } from '../repos/recovery.js';
import { SWEEP_INTERVAL_MS, type Sweeper } from '../storage/sweep.js';
import type { QuotaService } from '../quota/service.js';

export interface ScheduledWork {
  config: Config;
  cron: CronService;
  cluster: Cluster;
  packageCleanup: PackageCleanup;
  mirrors: MirrorService;
  artifacts: ArtifactService;
  actionsCache: Pick<CacheService, 'evict'>;
  workflowSchedules: Pick<ScheduleService, 'nextIn' | 'tick'>;
  recovery: RefRecovery;
  sweeper: Sweeper;
  quota: Pick<QuotaService, 'sampleUsage'>;
}

export function registerSchedules(work: ScheduledWork): void {
  const {
    config,
    cron,
    cluster,
    packageCleanup,
    mirrors,
    artifacts,
    actionsCache,
    workflowSchedules,
    recovery,
    sweeper,
    quota,
  } = work;
  const cleanup = config.cron.cleanupPackages;
  if (cleanup.enabled) {
    cron.register({
      name: 'cleanup_packages',
      schedule: describeSchedule(cleanup.schedule),
      nextIn: () => nextRunIn(cleanup.schedule),
      run: () => cluster.leases.run('task:cleanup_packages', () => packageCleanup.run()),
    });
  }
  if (config.mirror.enabled) {
    cron.register({
      name: 'update_mirrors',
      schedule: '@every 60s',
      nextIn: () => cron.nextOfEvery(60_000),
      run: () => mirrors.tick(),
    });
  }
  cron.register({
    name: 'cleanup_actions',
    schedule: '@every 3600s',
    nextIn: () => cron.nextOfEvery(3_600_000),
    // Expired artifacts, then the actions cache's eviction (age and size per repository).
    run: () =>
      cluster.leases.run(
        'task:cleanup_actions',
        async () => (await artifacts.sweep()) + (await actionsCache.evict()),
      ),
  });
  // Scheduled workflows (`on.schedule`), checked each minute by every process: each due time is
  // claimed by one (schedules.ts), so no lease is needed.
  if (config.actions.enabled) {
    cron.register({
      name: 'start_schedule_tasks',
      schedule: '@every 60s',
      nextIn: () => workflowSchedules.nextIn(),
      run: () => workflowSchedules.tick(),
    });
  }
  // Changes interrupted by a crash (git and database out of step), completed once they are stale.
  cron.register({
    name: 'recover_unfinished_changes',
    schedule: `@every ${RECOVERY_CHECK_MS / 1000}s`,
    nextIn: () => cron.nextOfEvery(RECOVERY_CHECK_MS),
    run: () =>
      cluster.leases.run('task:recover_unfinished_changes', () =>
        recovery.recover(Math.floor(Date.now() / 1000) - STALE_INTENT_SECONDS),
      ),
  });
  // Blobs and directories no row refers to any more (after their grace period).
  cron.register({
    name: 'sweep_leftovers',
    schedule: `@every ${SWEEP_INTERVAL_MS / 1000}s`,
    nextIn: () => cron.nextOfEvery(SWEEP_INTERVAL_MS),
    run: () => cluster.leases.run('task:sweep_leftovers', () => sweeper.sweep()),
  });
  // The storage overview's history: each owner's usage totals, sampled once a day (a second run the
  // same day replaces that day's sample).
  // A minute after start (today's sample, if the site was down at its time), then daily at 00:05 UTC.
  let started = false;
  cron.register({
    name: 'quota_usage_sample',
    schedule: 'daily at 00:05 UTC',
    nextIn: () => {
      if (!started) {
        started = true;
        return 60_000;
      }
      const day = 86_400_000;
      return day - ((Date.now() - 300_000) % day);
    },
    run: () => cluster.leases.run('task:quota_usage_sample', async () => void (await quota.sampleUsage())),
  });
}
